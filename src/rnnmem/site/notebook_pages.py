"""The pages rendered from notebooks (``docs/notebooks/<name>.py``, by mkdocs-jupyter): finished, and their cache kept.

mkdocs-jupyter executes a notebook page and caches the result; this module
does the rest, without MkDocs (the plugin, :mod:`rnnmem.site.plugin`, passes
the plugin's ``config`` of mkdocs-jupyter, a mapping, and the page's HTML):

* :func:`key_cache`: the executed-notebook cache is keyed on the package and
  the numeric libraries too (mkdocs-jupyter keys it on the notebook's own
  source only), in a folder of its own; older folders are removed;
* :class:`KeptCaches`: while serving, a dirty rebuild reads no cache for the
  notebook pages it skips, and mkdocs-jupyter evicts what it did not read;
  the files are noted before its eviction and put back after it;
* :func:`finish_page`: a page as the site serves it: nothing loaded from
  elsewhere, reproducible cell ids, every plot described
  (:func:`clean_notebook_html`), and the download and Colab links under its
  title (:func:`add_notebook_links`).
"""

from __future__ import annotations

import html
import re
import shutil
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

from .sources import environment_key

__all__ = [
    "NOTEBOOK_CACHE",
    "NO_ALT",
    "KeptCaches",
    "NotebookAltError",
    "add_notebook_links",
    "clean_notebook_html",
    "finish_page",
    "is_notebook_page",
    "key_cache",
]

#: The folder of mkdocs-jupyter's executed-notebook cache, under the cache folder.
NOTEBOOK_CACHE = "mkdocs-jupyter"
#: Where the notebook pages' sources are, under ``docs/``.
NOTEBOOK_PAGES = "notebooks/"


def is_notebook_page(src_uri: str) -> bool:
    """Whether the page is rendered from a notebook (``docs/notebooks/<name>.py``)."""
    return src_uri.startswith(NOTEBOOK_PAGES)


def _caching(jupyter: Mapping[str, Any] | None) -> bool:
    return jupyter is not None and bool(jupyter.get("cache"))


def key_cache(jupyter: MutableMapping[str, Any] | None, root: Path | None) -> None:
    """Key mkdocs-jupyter's cache folder on the package and the numeric libraries.

    ``jupyter``: mkdocs-jupyter's options (nothing to do without it, or without
    its cache); ``root``: the cache folder chosen for the book (None: the folder
    mkdocs-jupyter's options name). mkdocs-jupyter caches executed notebooks by
    their own source only; a notebook's output also depends on rnnmem and the
    numeric libraries. The folder of earlier package versions is removed: it can
    never be hit again.
    """
    if jupyter is None or not _caching(jupyter):
        return
    base = root / NOTEBOOK_CACHE if root is not None else Path(jupyter["cache_dir"])
    if base.name.startswith("rnnmem-"):
        base = base.parent
    current = base / f"rnnmem-{environment_key()[:16]}"
    jupyter["cache_dir"] = str(current)
    if base.is_dir():
        for old in base.glob("rnnmem-*"):
            if old != current and old.is_dir():
                shutil.rmtree(old, ignore_errors=True)


class KeptCaches:
    """Serving: mkdocs-jupyter's cache files, noted before it evicts those a dirty rebuild did not read, put back after.

    A dirty rebuild reads no cache for the notebook pages it skips; without
    this, the next full build would run those notebooks again.
    """

    def __init__(self) -> None:
        self.files: dict[Path, bytes] = {}

    def note(self, jupyter: Mapping[str, Any] | None) -> None:
        """Before mkdocs-jupyter's eviction: remember every cache file and its bytes."""
        self.files = {}
        if jupyter is not None and _caching(jupyter):
            for path in Path(jupyter["cache_dir"]).glob("*.json"):
                self.files[path] = path.read_bytes()

    def put_back(self) -> None:
        """After the eviction: write back the files it removed."""
        for path, data in self.files.items():
            if not path.exists():
                path.write_bytes(data)
        self.files = {}


def finish_page(output: str, source: str, src_uri: str, links: str) -> str:
    """A notebook page's HTML as the site serves it: cleaned, its plots described from the cells' ``alt``
    metadata (read from ``source``, the Jupytext file), the links under its title.

    Raises :class:`NotebookAltError` naming the page and the cell of a plot without a description.
    """
    import jupytext

    alts = [cell.metadata.get("alt") for cell in jupytext.read(source).cells]
    output = clean_notebook_html(output, alts, where=f"docs/{src_uri}")
    return add_notebook_links(output, links)


_EMPTY_SCRIPT = re.compile(r'<script src="">\s*</script>\s*')
_MATHJAX2_CONFIG = re.compile(r'<script type="text/x-mathjax-config">.*?</script>\s*', re.DOTALL)
_MERMAID_LOADER = re.compile(
    r'<script type="module">(?:(?!</script>).)*?mermaid(?:(?!</script>).)*</script>\s*', re.DOTALL
)
_CELL_ID = re.compile(r'id="cell-id=[0-9a-f-]+"')
#: The alt text nbconvert gives an image whose notebook does not describe it.
NO_ALT = 'alt="No description has been provided for this image"'


class NotebookAltError(ValueError):
    """A plot in a notebook page has no description (alt text)."""


def add_notebook_links(html_text: str, links: str) -> str:
    """Put the download and Colab links right after a notebook page's title (its first <h1>).

    >>> add_notebook_links('<div><h1 id="t">T</h1><p>x</p></div>', '<p>L</p>')
    '<div><h1 id="t">T</h1><p>L</p><p>x</p></div>'
    """
    end = html_text.find("</h1>")
    if end < 0:
        raise NotebookAltError(
            "a notebook page needs a title (a first Markdown cell starting with '# '), "
            "under which its download links go"
        )
    return html_text[: end + 5] + links + html_text[end + 5 :]


def clean_notebook_html(html_text: str, alts: list[str | None] | None = None, *, where: str = "notebook") -> str:
    """Tidy a page rendered by mkdocs-jupyter so it loads nothing from elsewhere and is reproducible.

    nbconvert's template adds an empty MathJax ``<script src="">``, a MathJax 2
    configuration that this site's MathJax 3 ignores, and a loader that imports
    mermaid from a CDN when a notebook holds a diagram; all three are removed
    (the site typesets notebook math with its own MathJax). Cell anchors carry
    random ids drawn when the notebook is read; they are renumbered in order.

    ``alts`` gives, cell by cell, the ``alt`` metadata of the notebook's cells
    (``# %% alt="..."`` in a Jupytext percent file): it becomes the alt text of
    the images that cell outputs. An image left without one raises
    :class:`NotebookAltError` naming the cell, so no plot ships undescribed.

    >>> page = '<script src=""> </script><div id="cell-id=9f2c"></div><div id="cell-id=01ab"></div>'
    >>> clean_notebook_html(page)
    '<div id="cell-id=1"></div><div id="cell-id=2"></div>'
    """
    html_text = _EMPTY_SCRIPT.sub("", html_text)
    html_text = _MATHJAX2_CONFIG.sub("", html_text)
    html_text = _MERMAID_LOADER.sub("", html_text)
    starts = [m.start() for m in _CELL_ID.finditer(html_text)] + [len(html_text)]
    pieces = [html_text[: starts[0]]]
    for index, (a, b) in enumerate(zip(starts, starts[1:])):
        cell = _CELL_ID.sub(f'id="cell-id={index + 1}"', html_text[a:b], count=1)
        if NO_ALT in cell:
            alt = alts[index] if alts is not None and index < len(alts) else None
            if not alt:
                raise NotebookAltError(
                    f"{where}: cell {index + 1} shows an image without a description; give the cell one "
                    'with `# %% alt="what the plot shows"`'
                )
            cell = cell.replace(NO_ALT, f'alt="{html.escape(alt)}"')
        pieces.append(cell)
    return "".join(pieces)

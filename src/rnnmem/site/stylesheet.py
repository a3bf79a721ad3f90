"""One stylesheet for the book, so a page waits for one request of ours before it is drawn.

The site's own stylesheets (``extra_css`` in ``mkdocs.yml``: the math stylesheet
written by :mod:`rnnmem.site.mathjax`, the book's, mkdocstrings') each block the
first paint of every page while they load. The MkDocs plugin replaces the list by
:data:`BUNDLE` in ``on_config`` and, in ``on_post_build``, writes the bundle: the
files of the list in their order, each ``url(...)`` rewritten to stay right from
the bundle's folder. The single files stay in the site as they were.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

__all__ = ["BUNDLE", "bundle", "rebase_urls", "take_stylesheets"]

#: Where the bundle is written, relative to the site.
BUNDLE = "assets/stylesheets/book.css"

_URL = re.compile(r"""url\(\s*(?:"(?P<d>[^"]*)"|'(?P<s>[^']*)'|(?P<u>[^)"'\s]*))\s*\)""")
_ABSOLUTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|/|#)", re.I)


def rebase_urls(css: str, source: str, target: str = BUNDLE) -> str:
    r"""The stylesheet ``css`` of the site file ``source`` with its relative URLs rewritten for ``target``.

    A relative ``url(...)`` names a file from the folder of its stylesheet; moved
    into ``target``, it must name the same file from there. Absolute URLs,
    ``data:`` URLs and fragments are left as they are.

    >>> rebase_urls('p{background:url("img/x.png")}', "assets/mathjax/svg.css")
    'p{background:url("../mathjax/img/x.png")}'
    >>> rebase_urls("a{background:url(data:image/png;base64,AA)}", "stylesheets/book.css")
    'a{background:url(data:image/png;base64,AA)}'
    >>> rebase_urls('a{mask:url(\'data:<svg xmlns="x"/>\')}', "assets/_mkdocstrings.css")
    'a{mask:url(\'data:<svg xmlns="x"/>\')}'
    >>> rebase_urls("b{background:url(img/x.png)}", "stylesheets/book.css")
    'b{background:url(../../stylesheets/img/x.png)}'
    """

    def rebase(m: re.Match) -> str:
        quote = '"' if m.group("d") is not None else "'" if m.group("s") is not None else ""
        url = next(g for g in m.group("d", "s", "u") if g is not None).strip()
        if _ABSOLUTE.match(url):
            return m.group(0)
        path = posixpath.normpath(posixpath.join(posixpath.dirname(source), url))
        return f"url({quote}{posixpath.relpath(path, posixpath.dirname(target))}{quote})"

    return _URL.sub(rebase, css)


def take_stylesheets(extra_css: list[str]) -> list[str]:
    """Replace the site's own stylesheets in ``extra_css`` by :data:`BUNDLE`; return the ones replaced.

    Stylesheets from another host (none in this book) would stay in the list.

    >>> css = ["assets/_mkdocstrings.css", "stylesheets/book.css"]
    >>> take_stylesheets(css), css
    (['assets/_mkdocstrings.css', 'stylesheets/book.css'], ['assets/stylesheets/book.css'])
    """
    own = [path for path in extra_css if not _ABSOLUTE.match(path)]
    if own:
        extra_css[:] = [BUNDLE] + [path for path in extra_css if path not in own]
    return own


def bundle(site_dir: Path, sources: list[str], target: str = BUNDLE) -> str:
    """Write the files ``sources`` of ``site_dir``, in order, into ``target``; return the bundle's text.

    A source the build did not write (a stylesheet named in ``mkdocs.yml`` but not
    in ``docs/``) raises ``ValueError`` naming it.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "a.css").write_text("p{color:red}")
    ...     bundle(Path(tmp), ["a.css"], "b/all.css")
    '/* a.css */\\np{color:red}\\n'
    """
    site_dir = Path(site_dir)
    parts = []
    for source in sources:
        path = site_dir / source
        if not path.is_file():
            raise ValueError(
                f"extra_css names {source!r}, which the build did not write into the site; "
                "allowed: a stylesheet under docs/ or one a plugin writes"
            )
        css = path.read_text(encoding="utf-8")
        parts.append(f"/* {source} */\n{rebase_urls(css, source, target).rstrip()}\n")
    text = "".join(parts)
    out = site_dir / target
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return text

"""``mkdocs.yml`` read without MkDocs, and what the site takes from it: settings, the chapters and their order.

Every part of the site that needs the book's configuration outside a MkDocs
build (the command line, the chapter check, the scaffold, the numbering) reads
it here, so its rules stand in one place:

* :func:`read` loads ``mkdocs.yml`` as plain YAML; MkDocs' and Python's tags
  (``!!python/name:...``, ``!ENV``) are read as None, since nothing here needs them;
* :func:`settings` gives ``docs_dir``, ``repo_url`` and ``site_url``;
* the chapters are the pages of the nav section :data:`CHAPTERS_SECTION`, in
  order (:func:`chapter_entries`, :func:`chapter_order`, :func:`chapters`):
  moving a chapter in the nav renumbers it (:mod:`rnnmem.site.numbering`).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "CHAPTERS_SECTION",
    "CONFIG_FILE",
    "HOME_SECTION",
    "chapter_entries",
    "chapter_order",
    "chapters",
    "nav_pages",
    "read",
    "settings",
]

#: The configuration file, at the repository's root.
CONFIG_FILE = "mkdocs.yml"
#: The title of the nav section that lists the chapters, in reading order.
CHAPTERS_SECTION = "Chapters"
#: The heading of the home page's list of the chapters (``docs/index.md``), held equal to the nav's section.
HOME_SECTION = "The chapters, in reading order"


@functools.lru_cache(maxsize=8)
def _load(path: Path, mtime_ns: int, size: int) -> dict[str, Any]:
    """Parsed once per file version (path, mtime and size are the memo's key)."""
    import yaml

    class _Loader(yaml.SafeLoader):
        pass

    _Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    _Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the configuration must be a mapping of settings, got {type(data).__name__}")
    return data


def read(config_file: Path | str) -> dict[str, Any]:
    """The settings of ``config_file`` as plain YAML (a copy: the caller may change it).

    Raises FileNotFoundError naming the file when there is none.
    """
    path = Path(config_file).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"config file {config_file} not found")
    st = path.stat()
    return copy.deepcopy(_load(path, st.st_mtime_ns, st.st_size))


def settings(config_file: Path | str) -> dict[str, Any]:
    """``docs_dir`` (a Path, relative to the file's folder), ``repo_url`` and ``site_url`` of ``config_file``."""
    data = read(config_file)
    return {
        "docs_dir": Path(config_file).parent / data.get("docs_dir", "docs"),
        "repo_url": data.get("repo_url", "") or "",
        "site_url": data.get("site_url", "") or "",
    }


def _entries(nav: Iterable | None) -> list[tuple[str, str]]:
    """(title, page) of every Markdown page of a nav, nested sections flattened; a bare page's title is ""."""
    found: list[tuple[str, str]] = []
    for entry in nav or []:
        if isinstance(entry, str):
            found.append(("", entry))
        elif isinstance(entry, dict):
            for title, value in entry.items():
                found += [(str(title), value)] if isinstance(value, str) else _entries(value)
    return [(t, p) for t, p in found if p.endswith(".md") and "://" not in p]


def nav_pages(nav: Iterable | None) -> list[str]:
    """Every Markdown page a nav lists, in order (links to other sites left out).

    >>> nav_pages([{"Home": "index.md"}, {"Chapters": ["chapters/a.md"]}, {"Repo": "https://x.org"}])
    ['index.md', 'chapters/a.md']
    """
    return [page for _, page in _entries(nav)]


def chapter_entries(nav: Iterable | None) -> list[tuple[str, str]]:
    """(title, page) of each entry of the nav's :data:`CHAPTERS_SECTION` section, in order.

    >>> chapter_entries([{"Home": "index.md"}, {"Chapters": [{"One": "chapters/one.md"}, "chapters/two.md"]}])
    [('One', 'chapters/one.md'), ('', 'chapters/two.md')]
    """
    for entry in nav or []:
        if isinstance(entry, dict) and CHAPTERS_SECTION in entry:
            return _entries(entry[CHAPTERS_SECTION])
    return []


def chapter_order(nav: Iterable | None) -> list[str]:
    """The pages of the nav's :data:`CHAPTERS_SECTION` section, in order (MkDocs' raw ``nav`` setting).

    >>> chapter_order([{"Home": "index.md"}, {"Chapters": [{"One": "chapters/one.md"}, "chapters/two.md"]}])
    ['chapters/one.md', 'chapters/two.md']
    """
    return [page for _, page in chapter_entries(nav)]


def chapters(config_file: Path | str) -> list[str]:
    """:func:`chapter_order` of the nav in ``config_file``; [] when there is no such file."""
    if not Path(config_file).is_file():
        return []
    return chapter_order(read(config_file).get("nav"))

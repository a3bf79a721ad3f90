"""The API reference, generated from the package's modules when the site is built.

Nobody keeps a list of modules: every module of ``rnnmem`` whose name does not
start with an underscore gets a page ``api/<name>.md`` holding ``::: rnnmem.<name>``
(rendered by mkdocstrings), the index ``api/index.md`` gets one table row per
module with the first line of its docstring, and the navigation's
``API reference`` section lists the same pages. The site builder
(``rnnmem.site``) gets one page with every public submodule. A module added,
renamed or removed appears, moves or disappears at the next build.

Modules are read with :mod:`ast`, never imported, so a module that fails to
import still gets its page (and mkdocstrings reports the failure).

The MkDocs plugin calls :func:`set_nav` from ``on_config`` and :func:`add_files`
from ``on_files``; nothing is written into ``docs/``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ApiPage", "NAV_TITLE", "PACKAGE", "api_pages", "nav_entries", "set_nav", "add_files"]

PACKAGE = "rnnmem"
PACKAGE_DIR = Path(__file__).resolve().parent.parent
API_DIR = "api"
#: The title of the navigation section that lists the API pages.
NAV_TITLE = "API reference"
#: Submodules of ``rnnmem.site`` left off its page, each with the reason.
SITE_LEFT_OUT = {
    "builders": "the chapters' figures and tables, shown on the chapters themselves",
}

#: The search weight of a module's page (Material's ``search: boost`` front matter): the API's text is
#: nearly half of the search index, and a reader who searches for "forget bias" wants the chapter first.
API_SEARCH_BOOST = 0.25

INTRO = """\
`rnnmem` is the package that computes every number on this site. Its core
needs numpy only; `rnnmem.site` alone imports matplotlib and reads MkDocs
configuration. Each module holds one idea, and its docstrings say which
equation and which convention each function follows; every example in them is
run by the tests.

This page and the module pages are generated from the package when the site
is built: a new module appears here without anyone editing a list.
"""


@dataclass(frozen=True)
class ApiPage:
    """One generated page: the module it documents, its summary line and its Markdown."""

    module: str
    path: str
    summary: str
    source: Path
    markdown: str


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def _summary(path: Path) -> str:
    """The docstring's first sentence-line, with reST roles turned into Markdown code."""
    text = _docstring(path).strip().split("\n\n")[0].replace("\n", " ")
    for role in (":mod:", ":class:", ":func:", ":meth:"):
        text = text.replace(role, "")
    text = text.replace("``", "`")
    return text or "(no docstring)"


def _modules(package_dir: Path) -> list[tuple[str, Path]]:
    """(name, file) of every public module or subpackage directly under ``package_dir``, sorted by name."""
    found = []
    for path in sorted(package_dir.iterdir()):
        name = path.stem if path.suffix == ".py" else path.name
        if name.startswith("_"):
            continue
        if path.suffix == ".py":
            found.append((name, path))
        elif path.is_dir() and (path / "__init__.py").is_file():
            found.append((name, path / "__init__.py"))
    return found


def _site_page(module: str, init: Path) -> str:
    body = [f"# `{module}`", "", _docstring(init).strip().split("\n\n")[0].replace("``", "`"), ""]
    left_out = []
    for name, _path in _modules(init.parent):
        if name in SITE_LEFT_OUT:
            left_out.append(f"`{module}.{name}` ({SITE_LEFT_OUT[name]})")
            continue
        # The site's machinery is documented by its docstrings; its source stays in the repository (one page
        # of every module's source would weigh more than a chapter).
        body += [f"::: {module}.{name}", "    options:", "      show_source: false", ""]
    if left_out:
        body += ["Not documented here: " + "; ".join(left_out) + ".", ""]
    return "\n".join(body)


def api_pages(package_dir: Path = PACKAGE_DIR) -> list[ApiPage]:
    """The generated pages, in navigation order: the index first, then one per module by name.

    >>> pages = api_pages()
    >>> pages[0].path, pages[1].path < pages[2].path
    ('api/index.md', True)
    >>> page = next(p for p in pages if p.module == "rnnmem.memory")
    >>> page.markdown.splitlines()[-1]
    '::: rnnmem.memory'
    """
    modules = []
    for name, path in _modules(package_dir):
        module = f"{PACKAGE}.{name}"
        if name == "site":
            markdown = _site_page(module, path)
        else:
            markdown = f"# `{module}`\n\n::: {module}"
        front = f"---\nsearch:\n  boost: {API_SEARCH_BOOST}\n---\n\n"
        modules.append(ApiPage(module, f"{API_DIR}/{name}.md", _summary(path), path, front + markdown + "\n"))
    rows = ["| module | what it holds |", "|---|---|"]
    rows += [f"| [`{p.module}`]({p.path.split('/', 1)[1]}) | {p.summary} |" for p in modules]
    index = ApiPage(
        PACKAGE,
        f"{API_DIR}/index.md",
        "",
        package_dir / "__init__.py",
        "# API reference\n\n" + INTRO + "\n" + "\n".join(rows) + "\n",
    )
    return [index] + modules


def nav_entries(pages: list[ApiPage] | None = None) -> list:
    """The navigation items of the API section: the index, then ``{module: path}`` per module.

    >>> nav_entries()[:2]
    ['api/index.md', {'rnnmem.bilm': 'api/bilm.md'}]
    """
    pages = api_pages() if pages is None else pages
    return [pages[0].path] + [{p.module: p.path} for p in pages[1:]]


def set_nav(config) -> None:
    """Fill the nav section titled :data:`NAV_TITLE` with the generated pages (from ``on_config``).

    The section may be written in ``mkdocs.yml`` as ``- API reference: api/index.md``
    or with any list: its contents are replaced. A nav without that section is left alone.
    """
    nav = config.get("nav")
    if not nav:
        return
    for i, entry in enumerate(nav):
        if isinstance(entry, dict) and NAV_TITLE in entry:
            nav[i] = {NAV_TITLE: nav_entries()}


def add_files(files, config) -> None:
    """Add the generated pages to MkDocs' files (from ``on_files``); their edit link opens the module.

    A page written by hand at the same path is refused (ValueError): the page is the module's docstrings.
    """
    from mkdocs.structure.files import File

    root = Path(config["config_file_path"]).resolve().parent
    for page in api_pages():
        existing = files.get_file_from_path(page.path)
        if existing is not None:
            raise ValueError(
                f"docs/{page.path} exists, but the API pages are generated from the package: "
                "delete it (the module's docstring is what the page shows)"
            )
        file = File.generated(config, page.path, content=page.markdown)
        # edit_uri is relative to the site's edit link (…/edit/main/docs/): point it at the module.
        source = page.source.resolve()
        file.edit_uri = f"../{source.relative_to(root).as_posix()}" if source.is_relative_to(root) else None
        files.append(file)

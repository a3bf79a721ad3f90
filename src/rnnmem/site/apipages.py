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

The reference comes after the book: the navigation shows it as one section of
four collapsed groups (:data:`GROUPS`: models, the mathematics of memory,
training and the lab, tools), the index lists the modules by the same groups, and
each module's page opens with links to the chapters whose code uses it
(:func:`chapter_uses`). The module of a model registered in :mod:`rnnmem.cells`
is one of the models without a group naming it; any other module no group
names is listed under :data:`OTHER_GROUP`, so it still appears, and the build
warns, naming the module and the groups it could join (:func:`group_problems`):
the strict build and the tests fail until it is placed.

The MkDocs plugin calls :func:`set_nav` from ``on_config`` and :func:`add_files`
from ``on_files``; nothing is written into ``docs/``.
"""

from __future__ import annotations

import ast
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import config as site_config
from .markdown import lex

__all__ = [
    "GROUPS",
    "MODELS_GROUP",
    "OTHER_GROUP",
    "group_problems",
    "SEARCH_EXCLUDED",
    "ApiPage",
    "NAV_TITLE",
    "PACKAGE",
    "add_files",
    "api_pages",
    "chapter_uses",
    "group_of",
    "nav_entries",
    "set_nav",
]

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
#: Module pages left out of the search index (Material's ``search: exclude``), each with the reason.
SEARCH_EXCLUDED = {
    "site": "the machinery that builds the site, for contributors: a quarter of the index, and no reader's answer",
}

#: The navigation's groups of modules, in order, each module by its name under ``rnnmem``.
GROUPS: dict[str, tuple[str, ...]] = {
    "Models": ("rnn", "lstm", "gru", "cells", "mingru", "lru", "selective", "scan", "attention", "charlm", "bilm"),
    "Mathematics of memory": (
        "memory",
        "leaky",
        "jacobians",
        "bptt",
        "carry",
        "cell_bound",
        "cell_paths",
        "growth_cell",
        "gate_arithmetic",
        "init",
        "inside",
        "dropout",
        "clipping",
        "params",
        "scaling",
    ),
    "Training and the lab": (
        "train",
        "tasks",
        "lab",
        "engine",
        "grid",
        "ensemble",
        "linear_ensemble",
        "experiments",
        "by_design",
        "attention_lab",
        "planted",
        "ngram",
        "clip_lab",
        "diagnostics",
        "stats",
        "verdicts",
        "corpus",
        "probe",
    ),
    "Tools": ("checks", "gradcheck", "data", "cli", "site"),
}
#: Where a module that no group names is listed.
OTHER_GROUP = "Other modules"
#: The group of the models, where the module of a model registered in :mod:`rnnmem.cells` goes unnamed.
MODELS_GROUP = "Models"


def _grouped(modules: Sequence[ApiPage]) -> list[tuple[str, list[ApiPage]]]:
    """(group, its modules in the group's order) for every group with a module, in :data:`GROUPS`' order."""
    order = {name: k for names in GROUPS.values() for k, name in enumerate(names)}
    out = []
    for group in [*GROUPS, OTHER_GROUP]:
        members = sorted(
            (p for p in modules if group_of(p.name) == group), key=lambda p: (order.get(p.name, len(order)), p.name)
        )
        if members:
            out.append((group, members))
    return out


def group_of(name: str) -> str:
    """The group that lists module ``name`` (:data:`GROUPS`); else :data:`MODELS_GROUP` for the module of a
    model registered in :mod:`rnnmem.cells` (a new cell is placed by its registration); else :data:`OTHER_GROUP`.

    >>> group_of("lstm"), group_of("memory"), group_of("new_module")
    ('Models', 'Mathematics of memory', 'Other modules')
    """
    named = next((group for group, names in GROUPS.items() if name in names), None)
    if named is not None:
        return named
    return MODELS_GROUP if name in _model_modules() else OTHER_GROUP


def group_problems(pages: Sequence[ApiPage] | None = None) -> list[str]:
    """One message for each module of ``pages`` (default: the package's) that no group places.

    A module that no group of :data:`GROUPS` names (and that defines no registered model) would be listed
    under :data:`OTHER_GROUP`: the message names it, the groups it could join, and where to add it. The
    strict build warns with it (:func:`add_files`), so it fails, and so does the test of the groups.

    >>> group_problems()
    []
    """
    pages = api_pages() if pages is None else pages
    groups = ", ".join(repr(g) for g in GROUPS)
    return [
        f"the module {p.module} is in no group of the API reference: add {p.name!r} to one of the groups "
        f"{groups} in rnnmem.site.apipages.GROUPS (src/rnnmem/site/apipages.py), or it is listed under "
        f"{OTHER_GROUP!r}"
        for p in pages
        if p.name and group_of(p.name) == OTHER_GROUP
    ]


def _model_modules() -> frozenset[str]:
    """The modules (names under ``rnnmem``) that define a model of the registry, :mod:`rnnmem.cells`."""
    from .. import cells

    names = [model.__module__ for model in cells.CLASSIC.values()] + [m.__name__ for m in cells.LINEAR.values()]
    return frozenset(n.partition(".")[2] for n in names if n.partition(".")[0] == PACKAGE)


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

    @property
    def name(self) -> str:
        """The module's name under the package (``memory``); ``""`` for the index."""
        return self.module.partition(".")[2]


@dataclass(frozen=True)
class Chapter:
    """A chapter as the back-links name it: its page (``chapters/horizon.md``), number, title and Markdown."""

    path: str
    number: int
    title: str
    markdown: str


_FROM_PACKAGE = re.compile(r"^\s*from\s+rnnmem\s+import\s+\(?([\w\s,]+?)\)?\s*(?:#.*)?$", re.MULTILINE)
_SUBMODULE = re.compile(r"\brnnmem\.([a-z_][a-z0-9_]*)")


def _exported(package_dir: Path) -> dict[str, str]:
    """Names ``rnnmem`` exports from a submodule (``from .lstm import LSTM``): name -> module name."""
    tree = ast.parse((package_dir / "__init__.py").read_text(encoding="utf-8"))
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                out[alias.asname or alias.name] = node.module.split(".")[0]
    return out


def chapter_uses(chapters: Sequence[Chapter], package_dir: Path = PACKAGE_DIR) -> dict[str, list[Chapter]]:
    """Module name -> the chapters whose ```python blocks use it, in the chapters' order.

    A block uses a module when it imports it (``from rnnmem import memory``, ``import rnnmem.lstm``,
    ``from rnnmem.init import chrono_biases``), imports a name the package exports from it
    (``from rnnmem import LSTM``), or names it as ``rnnmem.memory``.

    >>> ch = Chapter("chapters/h.md", 4, "Horizons", "```python\\n>>> from rnnmem import memory, LSTM\\n```\\n")
    >>> sorted(chapter_uses([ch]))
    ['lstm', 'memory']
    """
    modules = {name for name, _ in _modules(package_dir)}
    exported = _exported(package_dir)
    uses: dict[str, list[Chapter]] = {}
    for chapter in chapters:
        code = "\n".join(
            "\n".join(line.lstrip()[4:] if line.lstrip().startswith((">>> ", "... ")) else line for line in f.body)
            for f in lex(chapter.markdown).fences
            if f.info == "python"
        )
        found = {m for m in _SUBMODULE.findall(code) if m in modules}
        for group in _FROM_PACKAGE.findall(code):
            for item in group.split(","):
                name = item.split(" as ")[0].strip()
                if name in modules:
                    found.add(name)
                elif name in exported and exported[name] in modules:
                    found.add(exported[name])
        for name in sorted(found):
            uses.setdefault(name, []).append(chapter)
    return uses


def _used_in(page_path: str, chapters: list[Chapter]) -> str:
    """The line under a module page's title that links the chapters using it."""
    links = [f"[{c.number}. {c.title}](../{c.path})" for c in chapters]
    # A class of the book's own: the page's description (rnnmem.site.pagemeta) is its module's docstring.
    return "Used in " + ("; ".join(links) if links else "no chapter's code") + ".\n{ .rnnmem-used-in }"


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


def api_pages(package_dir: Path = PACKAGE_DIR, chapters: Sequence[Chapter] = ()) -> list[ApiPage]:
    """The generated pages, in navigation order: the index first, then one per module by name.

    With ``chapters`` (:func:`book_chapters`), each module's page opens with links to the chapters
    that use it (:func:`chapter_uses`).

    >>> pages = api_pages()
    >>> pages[0].path, pages[1].path < pages[2].path
    ('api/index.md', True)
    >>> page = next(p for p in pages if p.module == "rnnmem.memory")
    >>> page.markdown.splitlines()[-1]
    '::: rnnmem.memory'
    """
    uses = chapter_uses(chapters, package_dir) if chapters else {}
    modules = []
    for name, path in _modules(package_dir):
        module = f"{PACKAGE}.{name}"
        page_path = f"{API_DIR}/{name}.md"
        if name == "site":
            markdown = _site_page(module, path)
        else:
            markdown = f"# `{module}`\n\n::: {module}"
        if chapters:
            title, _, rest = markdown.partition("\n\n")
            markdown = f"{title}\n\n{_used_in(page_path, uses.get(name, []))}\n\n{rest}"
        search = "exclude: true" if name in SEARCH_EXCLUDED else f"boost: {API_SEARCH_BOOST}"
        front = f"---\nsearch:\n  {search}\n---\n\n"
        modules.append(ApiPage(module, page_path, _summary(path), path, front + markdown + "\n"))
    sections = []
    for group, members in _grouped(modules):
        rows = ["| module | what it holds |", "|---|---|"]
        rows += [f"| [`{p.module}`]({p.path.split('/', 1)[1]}) | {p.summary} |" for p in members]
        sections.append(f"## {group}\n\n" + "\n".join(rows) + "\n")
    index = ApiPage(
        PACKAGE,
        f"{API_DIR}/index.md",
        "",
        package_dir / "__init__.py",
        "# API reference\n\n" + INTRO + "\n" + "\n".join(sections),
    )
    return [index] + modules


def book_chapters(docs_dir: Path, nav) -> list[Chapter]:
    """The chapters of the nav's Chapters section, numbered in its order, read from ``docs_dir``."""
    out = []
    for number, path in enumerate(site_config.chapter_order(nav), 1):
        source = Path(docs_dir) / path
        if not source.is_file():
            continue
        markdown = source.read_text(encoding="utf-8")
        heading = next((h.text for h in lex(markdown).headings if h.level == 1), path)
        out.append(Chapter(path, number, heading, markdown))
    return out


def nav_entries(pages: list[ApiPage] | None = None) -> list:
    """The navigation items of the API section: the index, then one section per group (:data:`GROUPS`)
    of ``{module: path}``.

    >>> entries = nav_entries()
    >>> entries[0], list(entries[1]), entries[1]["Models"][:2]
    ('api/index.md', ['Models'], [{'rnnmem.rnn': 'api/rnn.md'}, {'rnnmem.lstm': 'api/lstm.md'}])
    """
    pages = api_pages() if pages is None else pages
    return [pages[0].path] + [{group: [{p.module: p.path} for p in members]} for group, members in _grouped(pages[1:])]


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
    pages = api_pages(chapters=book_chapters(Path(config["docs_dir"]), config.get("nav")))
    for message in group_problems(pages):
        logging.getLogger("mkdocs.plugins.rnnmem").warning(message)  # the strict build fails on it
    for page in pages:
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

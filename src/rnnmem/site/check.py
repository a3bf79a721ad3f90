"""Check one chapter end to end, in seconds, without building the site.

``make test-chapter CH=<slug>`` runs the chapter's snippets with Sybil (through
pytest), then ``python -m rnnmem.site check <slug>``, which calls
:func:`check_chapter`:

* every figure and table directive on the page renders (through the render
  cache, so an unchanged figure costs nothing);
* the committed notebook ``docs/downloads/<slug>.ipynb`` matches the page;
* every internal link resolves to a page of the site (including the generated
  API pages), and every ``#anchor`` to a heading or an ``id`` on that page;
* every reference (``@fig:decay``, :mod:`rnnmem.site.numbering`) names a target
  of the book, and the chapter's ids are unique in it.
* every author-year citation matches an entry of ``docs/references.md``
  (:func:`citation_problems`, the check the build makes).

Only ``docs/chapters/`` is searched: a slug names a chapter, never an API page
or a notebook of the same name. :func:`chapter_path` raises ``ValueError``
listing the chapters when the slug is unknown.

:func:`home_chapters` and :func:`nav_chapters` read the home page's chapter
list and the navigation's ``Chapters`` section, so a test can hold them equal.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import apipages, config
from .book import CHAPTER_DIR, Book, load_mkdocs_settings
from .directives import DirectiveError
from .numbering import heading_anchor

__all__ = [
    "ChapterReport",
    "chapters",
    "chapter_path",
    "check_chapter",
    "citation_problems",
    "page_anchors",
    "page_links",
    "nav_chapters",
    "home_chapters",
    "HOME_SECTION",
    "run_check",
]

#: The heading of the home page's chapter list.
HOME_SECTION = "The chapters, in reading order"

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_ATTR_ID = re.compile(r"\{[^}]*#([\w-]+)[^}]*\}\s*$")
_HTML_ID = re.compile(r"""\bid=["']([^"']+)["']""")


@dataclass
class ChapterReport:
    """What :func:`check_chapter` found: problems (each naming page and line) and what it checked."""

    slug: str
    problems: list[str] = field(default_factory=list)
    directives: int = 0
    rendered: int = 0
    links: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def chapters(docs_dir: Path) -> list[str]:
    """The chapter slugs: the names of ``docs/chapters/*.md`` without ``.md``, sorted.

    >>> "horizon" in chapters(Path("docs"))
    True
    """
    return sorted(p.stem for p in (Path(docs_dir) / CHAPTER_DIR).glob("*.md"))


def chapter_path(docs_dir: Path, slug: str) -> Path:
    """``docs/chapters/<slug>.md``; ValueError naming the slug and listing the chapters if there is none.

    >>> chapter_path(Path("docs"), "dropout").as_posix()
    'docs/chapters/dropout.md'
    """
    path = Path(docs_dir) / CHAPTER_DIR / f"{slug}.md"
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", str(slug)) or not path.is_file():
        raise ValueError(
            f"CH must name a chapter of {Path(docs_dir) / CHAPTER_DIR}, got {slug!r}; "
            f"the chapters are: {', '.join(chapters(docs_dir))}"
        )
    return path


def _outside_fences(markdown: str):
    """(line number, line) of every line outside fenced code blocks (CommonMark's closing rule)."""
    fence = None
    for number, line in enumerate(markdown.split("\n"), 1):
        m = _FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                continue
            yield number, line
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)) :]:
            fence = None


def page_anchors(markdown: str) -> set[str]:
    """Every anchor a page defines: its headings' (made unique as ``toc`` does) and explicit ids.

    >>> sorted(page_anchors("# A b\\n\\n## Exercises\\n\\n## Exercises\\n\\n<a id='x1'></a>\\n"))
    ['a-b', 'exercises', 'exercises_1', 'x1']
    """
    anchors: set[str] = set()
    for _, line in _outside_fences(markdown):
        m = _HEADING.match(line)
        if m:
            explicit = _ATTR_ID.search(m.group(2))
            if explicit:
                anchors.add(explicit.group(1))
                continue
            slug, base, k = heading_anchor(m.group(2)), heading_anchor(m.group(2)), 0
            while slug in anchors:
                k += 1
                slug = f"{base}_{k}"
            anchors.add(slug)
        anchors.update(_HTML_ID.findall(line))
        explicit = _ATTR_ID.search(line)
        if explicit:
            anchors.add(explicit.group(1))
    return anchors


def page_links(markdown: str) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link outside code, images left out.

    >>> page_links("See [a](x.md#y) and `[b](z.md)`.\\n```\\n[c](w.md)\\n```\\n")
    [(1, 'x.md#y')]
    """
    found = []
    for number, line in _outside_fences(markdown):
        line = re.sub(r"`[^`]*`", "", line)
        found += [(number, m.group(1)) for m in _LINK.finditer(line)]
    return found


def _site_pages(docs_dir: Path) -> dict[str, str | None]:
    """Site path -> Markdown (None where the anchors cannot be read, e.g. notebooks and API pages)."""
    pages: dict[str, str | None] = {}
    for path in sorted(docs_dir.rglob("*")):
        if path.is_file():
            rel = path.relative_to(docs_dir).as_posix()
            pages[rel] = path.read_text(encoding="utf-8") if path.suffix == ".md" else None
    for page in apipages.api_pages():
        pages.setdefault(page.path, None)
    return pages


def _check_links(src_uri: str, markdown: str, docs_dir: Path, report: ChapterReport) -> None:
    pages = _site_pages(docs_dir)
    where = f"docs/{src_uri}"
    for line, target in page_links(markdown):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("//"):
            continue  # another site (the build's own validation covers absolute links)
        report.links += 1
        path, _, anchor = target.partition("#")
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(src_uri), path)) if path else src_uri
        if path and resolved not in pages:
            report.problems.append(f"{where}:{line}: link to {target!r}: docs/{resolved} does not exist")
            continue
        text = markdown if resolved == src_uri else pages.get(resolved)
        if anchor and text is not None and anchor not in page_anchors(text):
            report.problems.append(
                f"{where}:{line}: link to {target!r}: docs/{resolved} has no heading or id {anchor!r}"
            )


def check_chapter(slug: str, config_file: Path = Path("mkdocs.yml")) -> ChapterReport:
    """Check ``docs/chapters/<slug>.md``: directives render, notebook fresh, links and anchors resolve.

    The snippets are Sybil's job (``make test-chapter`` runs both).
    """
    settings = load_mkdocs_settings(Path(config_file))
    docs_dir = Path(settings["docs_dir"])
    path = chapter_path(docs_dir, slug)
    src_uri = path.relative_to(docs_dir).as_posix()
    markdown = path.read_text(encoding="utf-8")
    report = ChapterReport(slug)
    book = Book(docs_dir, repo_url=settings["repo_url"], site_url=settings["site_url"])
    try:
        page = book.add_page(src_uri, markdown)
        report.directives = len(page.directives)
        book.render()
        report.rendered = len(book.renderer.rendered)
    except DirectiveError as exc:
        report.problems.append(str(exc))
    for other in sorted(docs_dir.rglob("*.md")):  # the numbers and the references read the whole book
        rel = other.relative_to(docs_dir).as_posix()
        if rel != src_uri:
            book.add_page(rel, other.read_text(encoding="utf-8"))
    try:
        book.numbering().edits(src_uri, markdown)
        for stale in book.stale_notebooks(only=src_uri):
            report.problems.append(f"notebook out of date: {stale}; run `make notebooks` and commit it")
    except DirectiveError as exc:
        report.problems.append(str(exc))
    _check_links(src_uri, markdown, docs_dir, report)
    report.problems.extend(citation_problems(src_uri, markdown, docs_dir))
    return report


def citation_problems(src_uri: str, markdown: str, docs_dir: Path) -> list[str]:
    """The citations of a page that match no entry of ``references.md``, with page and line.

    >>> citation_problems("chapters/x.md", "As Elman (1990) showed, and Nobody (1901).", Path("docs"))
    ['docs/chapters/x.md:1: "Nobody (1901)" matches no entry of docs/references.md (expected a key nobody1901)']
    """
    import markdown as md

    from .citations import CitationError, link_citations, parse_references

    references = Path(docs_dir) / "references.md"
    if not references.is_file():
        return []
    entries = parse_references(references.read_text(encoding="utf-8"))
    html = md.markdown(
        markdown,
        extensions=["fenced_code", "attr_list", "md_in_html", "admonition", "pymdownx.arithmatex"],
        extension_configs={"pymdownx.arithmatex": {"generic": True}},
    )
    try:
        link_citations(html, entries, references_url="../references/", page=f"docs/{src_uri}", source=markdown)
    except CitationError as exc:
        return str(exc).splitlines()
    return []


def nav_chapters(config_file: Path = Path("mkdocs.yml")) -> list[tuple[str, str]]:
    """(title, path) of each entry of the navigation's chapters section, in order (:mod:`rnnmem.site.config`)."""
    return config.chapter_entries(config.read(config_file).get("nav"))


def home_chapters(index_markdown: str) -> list[tuple[str, str]]:
    """(title, path) of each numbered link in the home page's section :data:`HOME_SECTION`.

    >>> home_chapters("## The chapters, in reading order\\n\\n1. [A](chapters/a.md). Text.\\n\\n## Next\\n")
    [('A', 'chapters/a.md')]
    """
    m = re.search(rf"^##\s+{re.escape(HOME_SECTION)}\s*$(.*?)(?=^##\s|\Z)", index_markdown, re.M | re.S)
    if not m:
        return []
    return re.findall(r"^\d+\.\s+\[([^\]]+)\]\(([^)]+)\)", m.group(1), re.M)


def run_check(args, parser) -> int:
    """``python -m rnnmem.site check CHAPTER``: 0 when the chapter passes, 1 on problems, 2 on a bad name."""
    import sys
    import time

    start = time.perf_counter()
    try:
        report = check_chapter(args.chapter, args.config)
    except ValueError as exc:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog} check: error: {exc}", file=sys.stderr)
        return 2
    for problem in report.problems:
        print(problem, file=sys.stderr)
    status = "FAILED" if report.problems else "ok"
    print(
        f"docs/chapters/{report.slug}.md: {status}: {report.directives} directives "
        f"({report.rendered} rendered, the rest from the cache), notebook compared, "
        f"{report.links} internal links and anchors; {time.perf_counter() - start:.1f} s"
    )
    return 1 if report.problems else 0

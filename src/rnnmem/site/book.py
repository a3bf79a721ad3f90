"""The book's build steps, independent of MkDocs.

:class:`Book` reads the chapters' Markdown, renders every figure and table
directive (through the cache of :mod:`rnnmem.site.render`), and rewrites each
page's Markdown so the directives become figures and tables. The MkDocs plugin
(:mod:`rnnmem.site.plugin`) only passes pages in and generated files out; the command
line (``python -m rnnmem.site``) drives the same class without MkDocs.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import config, exercises, kinds, notebook, numbering, placeholders
from .directives import Directive, DirectiveError, find_directives
from .edition import Edition
from .edition import edition as current_edition
from .kinds import FIGURE_DIR, WIDE_SCREEN, Place, plain_text, unwrap_nested_blocks
from .markdown import inline_code_spans, lex, prose_spans
from .numbering import Numbering, NumberingError, Target
from .registry import Registry
from .render import Item, Renderer
from .sources import package_digest

NOTEBOOK_DIR = "downloads"
#: The heading of a chapter's exercises, as the page shows it (numbered or not).
_EXERCISES = re.compile(r"(?:<span[^>]*>[\d.]+</span>\s*|[\d.]+\s+)?Exercises\b")
CHAPTER_DIR = "chapters"


@dataclass
class Page:
    src_uri: str
    markdown: str
    directives: list[Directive] = field(default_factory=list)
    items: list[Item | DirectiveError] = field(default_factory=list)
    #: Serving: what makes the whole page unreadable (an unclosed comment, a malformed directive).
    page_error: DirectiveError | None = None

    @property
    def is_chapter(self) -> bool:
        return self.src_uri.startswith(CHAPTER_DIR + "/")

    @property
    def slug(self) -> str:
        return posixpath.splitext(posixpath.basename(self.src_uri))[0]

    @property
    def title(self) -> str:
        titles = [h.text for h in lex(self.markdown).headings if h.level == 1]
        return titles[0] if titles else self.slug


def _indent(block: str, indent: str) -> str:
    """Indent every non-blank line of ``block`` but the first (which takes the directive's place)."""
    first, *rest = block.split("\n")
    return "\n".join([first] + [indent + line if line.strip() else line for line in rest])


def error_admonition(error: Exception, indent: str) -> str:
    """A build error shown where it happened (``mkdocs serve`` only; a strict build stops instead)."""
    body = "\n".join("    " + line for line in str(error).splitlines())
    block = f'!!! failure "Build error: fix it and save; the page reloads"\n    ```text\n{body}\n    ```'
    return _indent(block, indent)


class Book:
    """One build of the book: pages in, rendered items and rewritten pages out."""

    def __init__(
        self,
        docs_dir: Path,
        *,
        repo_url: str,
        site_url: str = "",
        cache_dir: Path | None = None,
        fresh_process: bool = False,
        keep_going: bool = False,
        chapters: list[str] | None = None,
        builders: Registry | None = None,
        edition: Edition | None = None,
    ) -> None:
        self.docs_dir = Path(docs_dir)
        #: What ``{{edition.version}}``, ``{{edition.date}}`` and ``{{edition.year}}`` read on every page.
        self.edition = edition if edition is not None else current_edition()
        #: The chapter pages in reading order (numbered 1..N): the nav's chapters section (rnnmem.site.config).
        self.chapters = (
            list(chapters) if chapters is not None else config.chapters(self.docs_dir.parent / config.CONFIG_FILE)
        )
        self._numbering: Numbering | None = None
        self.repo_url = repo_url
        self.site_url = site_url
        self.renderer = Renderer(cache_dir, builders=builders)
        self.fresh_process = fresh_process
        #: Serving: a failing directive (or page) is shown as an error on its page instead of stopping the build.
        self.keep_going = keep_going
        self.pages: dict[str, Page] = {}
        self.errors: list[DirectiveError] = []
        #: Site path (``downloads/<name>.ipynb``) -> notebook text, made by :meth:`render`.
        self.notebooks: dict[str, str] = {}
        #: The error that stopped :meth:`render` (not keep_going): reported once, by whoever called it.
        self.stopped: DirectiveError | None = None

    # -- reading and rendering -------------------------------------------------
    def add_page(self, src_uri: str, markdown: str) -> Page:
        try:
            page = Page(src_uri, markdown, find_directives(markdown, f"docs/{src_uri}"))
        except DirectiveError as exc:
            if not self.keep_going:
                raise
            self.errors.append(exc)
            page = Page(src_uri, markdown, page_error=exc)
        self.pages[src_uri] = page
        self._numbering = None
        return page

    def numbering(self) -> Numbering:
        """The book's chapter, figure, table and equation numbers (:mod:`rnnmem.site.numbering`)."""
        if self._numbering is None:
            index = Numbering(self.chapters)
            for page in self.pages.values():
                index.add_page(page.src_uri, page.markdown, page.directives)
            self._numbering = index
        return self._numbering

    def add_docs_dir(self) -> None:
        for path in sorted(self.docs_dir.rglob("*.md")):
            self.add_page(path.relative_to(self.docs_dir).as_posix(), path.read_text(encoding="utf-8"))

    def render(self, *, notebooks: bool = True) -> None:
        """Render every page's figures and tables (through the cache); then, with ``notebooks``, make the
        notebooks the site offers (:meth:`make_notebooks`, which needs every page: the references)."""
        directives = [d for p in self.pages.values() for d in p.directives]
        try:
            items = self.renderer.render_all(directives, fresh_process=self.fresh_process, keep_going=self.keep_going)
        except DirectiveError as exc:
            self.stopped = exc
            raise
        self.errors.extend(i for i in items if isinstance(i, DirectiveError))
        it = iter(items)
        for page in self.pages.values():
            page.items = [next(it) for _ in page.directives]
        if notebooks:
            self.notebooks = self.make_notebooks()

    def keys(self, src_uri: str) -> tuple[str, ...]:
        """What a page's rendering depends on: its items' keys, and the numbers its references show
        (an error counts as its message)."""
        page = self.pages[src_uri]
        out = [str(page.page_error)] if page.page_error else []
        try:
            refs = self.numbering().referenced(src_uri, page.markdown)
        except NumberingError as exc:
            refs = [str(exc)]
        return tuple(out + [i.key if isinstance(i, Item) else str(i) for i in page.items] + refs)

    def generated_files(self) -> dict[str, bytes]:
        """Site path -> content of every rendered figure, and of every notebook :meth:`render` made.

        The notebooks are ``downloads/<name>.ipynb``: one per chapter, and one
        per notebook page (``docs/notebooks/<name>.py``), at the addresses the
        pages' download links name.
        """
        out: dict[str, bytes] = {}
        for page in self.pages.values():
            for item in page.items:
                if isinstance(item, Item) and kinds.get(item.kind).published:
                    out[f"{FIGURE_DIR}/{item.filename}"] = item.content
                    if item.wide is not None:
                        out[f"{FIGURE_DIR}/{item.wide_filename}"] = item.wide
        for path, text in self.notebooks.items():
            out[path] = text.encode("utf-8")
        return out

    # -- rewriting pages ---------------------------------------------------------
    def page_markdown(self, src_uri: str, markdown: str) -> str:
        page = self.pages.get(src_uri)
        if page is None or page.markdown != markdown:
            page = self.add_page(src_uri, markdown)
            page.items = self.renderer.render_all(page.directives, keep_going=self.keep_going)
        if page.page_error is not None:
            return error_admonition(page.page_error, "") + "\n\n" + markdown
        try:
            index = self.numbering()
            edits = index.edits(src_uri, markdown)  # chapter number, equation numbers, references
        except NumberingError as exc:
            if not self.keep_going:
                raise
            return error_admonition(exc, "") + "\n\n" + markdown
        for n, (directive, item) in enumerate(zip(page.directives, page.items)):
            if isinstance(item, DirectiveError):
                edits.append((directive.start, directive.end, error_admonition(item, directive.indent)))
                continue
            try:
                block = self._expand(page, directive, item, index.item(src_uri, n))
                edits.append((directive.start, directive.end, block))
            except DirectiveError as exc:
                if not self.keep_going:
                    raise
                edits.append((directive.start, directive.end, error_admonition(exc, directive.indent)))
        try:
            edits.extend(self.prose_placeholders(page))
        except DirectiveError as exc:
            if not self.keep_going:
                raise
            edits.append((0, 0, error_admonition(exc, "") + "\n\n"))
        text = numbering.apply_edits(markdown, edits)
        text = self._console_fences(text)
        if page.is_chapter:
            text = self._notebook_links(page, text)
            text = self._student_links(page, text)
        return text

    # -- placeholders: numbers from the builders' values ------------------------
    def page_values(self, page: Page) -> dict[str, tuple[Directive, Item]]:
        """The page's items that have an ``id``, by id (their values are the prose's placeholders)."""
        out: dict[str, tuple[Directive, Item]] = {}
        for directive, item in zip(page.directives, page.items):
            ident = directive.args.get("id")
            if ident is None:
                continue
            if ident in out:
                raise directive.error(
                    f"id {ident!r} is already used on this page, by the directive at line "
                    f"{out[ident][0].line}; an id names one item"
                )
            if isinstance(item, Item):
                out[ident] = (directive, item)
        return out

    def fill_directive_text(self, page: Page, directive: Directive, item: Item, text: str, what: str) -> str:
        """A directive's caption or alt text with its placeholders filled.

        A name is one of the builder's values first, else the id of another item on the page.
        """
        ids = self.page_values(page)

        def namespace(name: str):
            if name in item.values:
                return item.values[name], name
            if name in ids:
                return ids[name][1].values, name
            return None

        known = (
            f"the {directive.kind} builder {directive.name!r} returns: "
            f"{', '.join(sorted(item.values)) or 'no values'}"
            + (f"; ids on this page: {', '.join(sorted(ids))}" if ids else "")
        )
        try:
            return placeholders.fill(text, namespace, known)
        except placeholders.PlaceholderError as exc:
            raise directive.error(f"in {what}: {exc}") from None

    def prose_placeholders(self, page: Page) -> list[tuple[int, int, str]]:
        """(start, end, text) for every ``{{id.value}}`` in the page's prose (code and comments left alone),
        with the escapes that keep a value at the start of a line from opening a block."""
        for start, end in inline_code_spans(page.markdown):
            for p in placeholders.find(page.markdown[start:end]):
                line = lex(page.markdown).line_of(start + p.start)
                raise DirectiveError(
                    f"docs/{page.src_uri}:{line}: placeholder {p.text} sits in inline code, which shows it as "
                    "written and never fills it; take it out of the backticks"
                )
        found = [
            (start, p) for start, end in prose_spans(page.markdown) for p in placeholders.find(page.markdown[start:end])
        ]
        if not found:
            return []
        ids = self.page_values(page)
        doc = lex(page.markdown)
        known = (
            f"ids on this page: {', '.join(sorted(ids))}"
            if ids
            else 'no figure or table on this page has an id (give one id="name")'
        ) + "; on every page, edition (version, date, year)"
        edition = self.edition.values()

        def namespace(name: str):
            if name in ids:
                return ids[name][1].values, name
            return (edition, name) if name == "edition" else None

        edits = []
        for start, p in found:
            where = f"docs/{page.src_uri}:{doc.line_of(start + p.start)}"
            if not p.steps or not isinstance(p.steps[0], str):
                raise DirectiveError(
                    f"{where}: placeholder {p.text} in prose must name an item and a value, "
                    f"as {{{{ID.value}}}}; {known}"
                )
            try:
                text = placeholders.fill(
                    p.text,
                    namespace,
                    known
                    + (
                        f" (the item {p.name!r} returns: {', '.join(sorted(ids[p.name][1].values))})"
                        if p.name in ids
                        else ""
                    ),
                )
            except placeholders.PlaceholderError as exc:
                raise DirectiveError(f"{where}: {exc}") from None
            edits.append((start + p.start, start + p.end, text))
        try:  # a value that begins a line never opens a list item, a heading, ... (placeholders.guard_line_starts)
            return placeholders.guard_line_starts(page.markdown, edits, f"docs/{page.src_uri}")
        except placeholders.PlaceholderError as exc:
            raise DirectiveError(str(exc)) from None

    def _expand(self, page: Page, directive: Directive, item: Item, target: Target | None = None) -> str:
        """The figure or table, every line after the first indented as the directive was.

        So a directive inside an exercise answer, an admonition or a list item
        gives a figure that stays inside that block, and the text after it
        stays text. ``target`` gives its anchor and number (:mod:`rnnmem.site.numbering`).
        """
        block = self._block(page, directive, item)
        if target is not None:
            block = numbering.label_block(block, target)
        block = self.numbering().block_references(page.src_uri, block, directive.line)
        return _indent(block, directive.indent)

    def _place(self, page: Page, directive: Directive, item: Item) -> Place:
        """Where the item stands: its page, its files, its caption and alt text with their placeholders filled."""
        caption, alt = directive.args.get("caption"), directive.args.get("alt")
        if caption is not None:
            caption = self.fill_directive_text(page, directive, item, caption, "the caption")
        if alt is not None:
            alt = self.fill_directive_text(page, directive, item, alt, "the alt text")
        same = [d for d, i in zip(page.directives, page.items) if getattr(i, "kind", "") == item.kind]
        return Place(
            page.src_uri,
            item.content,
            item.filename,
            item.wide,
            item.wide_filename,
            caption,
            alt,
            same[:1] == [directive],
        )

    def _block(self, page: Page, directive: Directive, item: Item) -> str:
        """The item as the page shows it, written by its kind (:meth:`rnnmem.site.kinds.Kind.block`)."""
        return kinds.get(item.kind).block(self._place(page, directive, item))

    @staticmethod
    def _console_fences(text: str) -> str:
        """Show doctest-style ```python blocks with the console lexer (prompts and output marked).

        Sybil reads the source files, where the fence stays ```python; only the
        rendered page changes, so prompts and output can be left out of copies.
        """
        lines = text.split("\n")
        for fence in lex(text).fences:
            if fence.info == "python" and any(b.lstrip().startswith(">>>") for b in fence.body):
                lines[fence.line - 1] = f"{fence.indent}{fence.marker}pycon"
        return "\n".join(lines)

    # -- chapter notebooks -------------------------------------------------------
    def notebook_path(self, page: Page) -> str:
        return f"{NOTEBOOK_DIR}/{page.slug}.ipynb"

    def notebook_text(self, page: Page) -> str:
        """The chapter's notebook: its prose with figures, tables and placeholders in place, and its code
        (:func:`rnnmem.site.notebook.chapter_notebook`)."""
        url = posixpath.splitext(page.src_uri)[0] + "/"
        page_url = (self.site_url.rstrip("/") + "/" + url) if self.site_url else url
        site_url = self.site_url.rstrip("/") + "/" if self.site_url else ""
        return notebook.chapter_notebook(
            self.notebook_markdown(page, site_url),
            slug=page.slug,
            title=page.title,
            page_url=page_url,
            repo_url=self.repo_url,
            site_url=site_url,
        )

    def notebook_markdown(self, page: Page, site_url: str) -> str:
        """The page's Markdown with each figure as an image on the published site and each table in place."""
        if len(page.items) != len(page.directives):
            page.items = self.renderer.render_all(page.directives)
        edits = list(self.prose_placeholders(page))
        try:  # references as text: "Figure 4.2"
            edits += self.numbering().reference_edits(page.src_uri, page.markdown, plain=True)
        except NumberingError:
            if not self.keep_going:  # serving: the page shows the error; the notebook waits for the fix
                raise
        for directive, item in zip(page.directives, page.items):
            if isinstance(item, DirectiveError):
                raise item
            kind, place = kinds.get(item.kind), self._place(page, directive, item)
            block = kind.notebook_block(place, kind.block(place), site_url)
            block = self.numbering().block_references(page.src_uri, block, directive.line, plain=True)
            edits.append((directive.start, directive.end, _indent(block.strip("\n"), directive.indent)))
        out, pos = [], 0
        for start, end, text in sorted(edits):
            out += [page.markdown[pos:start], text]
            pos = end
        return "".join(out) + page.markdown[pos:]

    def student_notebook_path(self, page: Page) -> str:
        return f"{NOTEBOOK_DIR}/{page.slug}-student.ipynb"

    def has_exercises(self, page: Page) -> bool:
        return bool(exercises.exercises(page.markdown))

    def student_notebook_text(self, page: Page) -> str:
        """The chapter's notebook for a student: the same, without the exercises' answers
        (:func:`rnnmem.site.exercises.student_markdown`); a coding exercise's check meets the student's code."""
        url = posixpath.splitext(page.src_uri)[0] + "/"
        page_url = (self.site_url.rstrip("/") + "/" + url) if self.site_url else url
        site_url = self.site_url.rstrip("/") + "/" if self.site_url else ""
        return notebook.chapter_notebook(
            exercises.student_markdown(self.notebook_markdown(page, site_url)),
            slug=f"{page.slug}-student",
            title=page.title,
            page_url=page_url,
            repo_url=self.repo_url,
            site_url=site_url,
            intro=notebook.STUDENT_INTRO,
        )

    def make_notebooks(self) -> dict[str, str]:
        """Site path (``downloads/<name>.ipynb``) -> text of every notebook the site offers.

        One per chapter (:meth:`notebook_text`) and one per notebook page
        (``docs/notebooks/<name>.py``, :func:`rnnmem.site.notebook.jupytext_notebook`).
        A chapter's notebook fails as its page would, with a
        :class:`~rnnmem.site.directives.DirectiveError` naming page and line;
        while serving (``keep_going``) a chapter whose page shows an error gets
        no notebook until it is fixed, and an error of the notebook's own is
        added to :attr:`errors`.
        """
        out: dict[str, str] = {}
        for page in self.pages.values():
            if not page.is_chapter or self._unfinished(page):
                continue  # the page's error was reported (serving: it shows it; a strict build stopped)
            try:
                out[self.notebook_path(page)] = self.notebook_text(page)
                if self.has_exercises(page):
                    out[self.student_notebook_path(page)] = self.student_notebook_text(page)
            except DirectiveError as exc:
                if not self.keep_going:
                    raise
                self.errors.append(exc)
        for source in sorted((self.docs_dir / "notebooks").glob("*.py")):
            out[f"{NOTEBOOK_DIR}/{source.stem}.ipynb"] = notebook.jupytext_notebook(source)
        return dict(sorted(out.items()))

    def _unfinished(self, page: Page) -> bool:
        """A page whose items did not all render: its notebook is made once they do.

        While serving, a page whose figure failed shows the error; after a render
        stopped by an error, the pages it did not reach have no items. Either way
        the error has been reported once already, and is not raised again here.
        """
        if page.page_error is not None or any(isinstance(i, DirectiveError) for i in page.items):
            return True
        return self.stopped is not None and len(page.items) != len(page.directives)

    def stale_notebooks(self) -> list[str]:
        """Notebook files in ``docs/downloads/``: none belongs there any more.

        The build makes every notebook (:meth:`make_notebooks`) and adds it to
        the site in place of such a file, which can only be one left from when
        notebooks were committed, or one copied in by hand; each is named (as
        ``docs/downloads/<name>.ipynb``) so that it is deleted rather than
        mistaken for the one the site serves.
        """
        folder = self.docs_dir / NOTEBOOK_DIR
        return [
            f"docs/{NOTEBOOK_DIR}/{p.name} (the build makes it: delete this file)"
            for p in sorted(folder.glob("*.ipynb"))
        ]

    def notebook_page_links(self, src_uri: str) -> str:
        """The download and Colab links of a notebook page (docs/notebooks/NAME.py), as HTML."""
        stem = posixpath.splitext(posixpath.basename(src_uri))[0]
        target = f"{NOTEBOOK_DIR}/{stem}.ipynb"
        # The page is served at notebooks/NAME/, two levels below the site's root.
        rel = posixpath.relpath(target, posixpath.splitext(src_uri)[0])
        colab = notebook.colab_url(self.repo_url, f"{stem}.ipynb")
        return (
            f'<p class="rnnmem-notebook"><a href="{rel}" download="{stem}.ipynb">Download this notebook</a>'
            f' · <a href="{colab}">Open in Colab</a></p>'
        )

    def _student_links(self, page: Page, text: str) -> str:
        """Under the chapter's ``## Exercises`` heading: the student's notebook (no answers) and its Colab link."""
        if not self.has_exercises(page):
            return text
        doc = lex(text)
        heading = next((h for h in doc.headings if h.level == 2 and _EXERCISES.match(h.text)), None)
        if heading is None:
            return text
        name = posixpath.basename(self.student_notebook_path(page))
        rel = posixpath.relpath(self.student_notebook_path(page), posixpath.dirname(page.src_uri))
        colab = notebook.colab_url(self.repo_url, name)
        links = (
            f'\n<p class="rnnmem-notebook" markdown="span">'
            f'[:material-school: The exercises without their answers, as a notebook]({rel}){{ download="{name}" }}'
            f" · [:material-rocket-launch: Open in Colab]({colab})</p>\n"
        )
        end = doc.line_starts[heading.line - 1] + len(text.splitlines()[heading.line - 1])
        return text[:end] + "\n" + links + text[end:]

    def _notebook_links(self, page: Page, text: str) -> str:
        rel = posixpath.relpath(self.notebook_path(page), posixpath.dirname(page.src_uri))
        colab = notebook.colab_url(self.repo_url, f"{page.slug}.ipynb")
        links = (
            f'\n<p class="rnnmem-notebook" markdown="span">'
            f'[:material-download: This chapter as a notebook]({rel}){{ download="{page.slug}.ipynb" }}'
            f" · [:material-rocket-launch: Open in Colab]({colab})</p>\n"
        )
        doc = lex(text)
        titles = [h for h in doc.headings if h.level == 1]
        if not titles:
            return links + text
        end = doc.line_starts[titles[0].line - 1] + len(text.splitlines()[titles[0].line - 1])
        return text[:end] + "\n" + links + text[end:]


def load_mkdocs_settings(config_file: Path) -> dict:
    """docs_dir, repo_url and site_url from mkdocs.yml, without MkDocs (:func:`rnnmem.site.config.settings`)."""
    return config.settings(config_file)


__all__ = [
    "FIGURE_DIR",
    "WIDE_SCREEN",
    "Book",
    "DirectiveError",
    "load_mkdocs_settings",
    "package_digest",
    "plain_text",
    "unwrap_nested_blocks",
]

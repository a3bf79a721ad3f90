"""Chapters, figures, tables and display equations numbered; references to them in prose.

The numbers are computed, never typed: the chapters are numbered 1..N in the
order of the navigation's ``Chapters`` section (``mkdocs.yml``), so moving a
chapter in the nav renumbers it and everything in it. Within a chapter,

* figures (``<!-- figure: ... -->`` directives, the diagrams included) are
  numbered in page order: "Figure 4.1", "Figure 4.2", ...;
* tables (``<!-- table: ... -->``) likewise: "Table 4.1", ...;
* display equations (a ``$$ ... $$`` block) likewise: "(4.1)", shown at the
  right of the equation. ``\\notag`` (or ``\\nonumber``) in the block leaves it
  unnumbered.

The sections of a chapter (its ``##`` headings) are numbered too: "4.1",
"4.2", ..., shown before the heading's text, its anchor unchanged. A link to a
numbered section (``[the gate](horizon.md#the-gate)``, or ``#the-gate`` on
the same page) is followed by the section's number, "(§4.2)", so that a
cross-reference reads by number wherever it points.

Items inside collapsible answers and other indented blocks count where they
stand on the page. Widgets (``<!-- widget: ... -->``, interactive) are not numbered. Pages outside the ``Chapters`` section (Home, Conventions)
number nothing; there an item has an anchor only if it has an id.

Labels and anchors. A directive's reserved argument ``id="decay"`` (or
``\\label{decay}`` inside an equation) names the item: its anchor is
``#fig-decay``, ``#tab-decay`` or ``#eq-decay``. An item without one gets the
anchor of its number (``#fig-4-2``). An id is
lower-case letters, digits and hyphens, starting with a letter, and unique in
the whole book among items of its kind (a figure and a table may share one).

References. In prose, ``@fig:decay``, ``@tab:decay``, ``@eq:decay`` and
``@ch:horizon`` (a chapter, by its file name) become links reading
"Figure 4.2", "Table 4.1", "(4.3)" and "Chapter 4", to an item on the same page
or on any other. Code (fences, indented blocks, inline code spans) and HTML
comments are left alone; ``\\@fig:x`` writes the text literally. A reference to
a missing target, to an item on an unnumbered page, or a duplicate id fails the
build naming page and line (:class:`NumberingError`, a
:class:`~rnnmem.site.directives.DirectiveError`). In a chapter notebook, the
references are plain text ("Figure 4.2").

>>> book = Numbering(["chapters/a.md"])
>>> book.add_page("chapters/a.md", "# A\\n\\n$$\\nx = 1 \\\\label{one}\\n$$\\n\\nBy @eq:one, and @ch:a.\\n")
>>> print(book.rewrite("chapters/a.md", "# A\\n\\n$$\\nx = 1 \\\\label{one}\\n$$\\n\\nBy @eq:one, and @ch:a.\\n"))
# <span class="rnnmem-chapter-number">Chapter 1</span> A { #a }
<BLANKLINE>
$$
%rnnmem-eq eq-one 1.1
x = 1
$$
<BLANKLINE>
By [(1.1)](#eq-one), and [Chapter 1](a.md).
<BLANKLINE>
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from markdown.extensions.toc import slugify as toc_slugify

from .config import chapter_order
from .config import chapters as chapters_from_config
from .directives import Directive, DirectiveError
from .kinds import KINDS
from .markdown import LINK as _LINK
from .markdown import Document, lex
from .suggest import did_you_mean

__all__ = [
    "Equation",
    "Numbering",
    "NumberingError",
    "Target",
    "ID_PATTERN",
    "chapter_order",
    "chapters_from_config",
    "heading_anchor",
    "id_problem",
    "apply_edits",
    "display_equations",
    "equation_html",
    "label_block",
    "KIND_NAMES",
]

#: The reference kinds and the words they are shown with.
KIND_NAMES = {"fig": "Figure", "tab": "Table", "eq": "Equation", "ch": "Chapter"}
_NOUN = {"fig": "figure", "tab": "table", "eq": "equation", "ch": "chapter"}

#: An item's id (a directive's ``id=``, an equation's ``\\label``): lower-case words of letters and digits,
#: joined by single hyphens, the first starting with a letter. The one rule, for the numbering and the cache.
ID_PATTERN = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
ID_RULE = (
    "lower-case letters, digits and single hyphens, starting with a letter and not ending with a hyphen "
    '(like "decay" or "gru-2")'
)
_REFERENCE = re.compile(r"(?<![\w@\\])(\\?)@(fig|tab|eq|ch):([A-Za-z0-9_-]*[A-Za-z0-9])")
_LABEL = re.compile(r"\\label\{([^}]*)\}")
_NOTAG = re.compile(r"\\(?:notag|nonumber)\b")
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
_H1 = re.compile(r"^# +(?P<text>.+?)[ \t]*#*[ \t]*$")
_H2 = re.compile(r"^## +(?P<text>.+?)[ \t]*#*[ \t]*$")
_EXPLICIT_ID = re.compile(r"\{[^}]*#([\w-]+)[^}]*\}\s*$")
_ATTRS_END = re.compile(r"\{[^}]*\}\s*$")
MARKER = "%rnnmem-eq"


class NumberingError(DirectiveError):
    """A duplicate or malformed id, or a reference to no target; the message names page and line."""


@dataclass(frozen=True)
class Target:
    """Something a reference can point at: a chapter, or a numbered item of a page."""

    kind: str  # "fig", "tab", "eq" or "ch"
    id: str | None  # the id given in the source (a chapter's: its file name)
    anchor: str  # the HTML id ("fig-decay", "fig-4-2"); "" for a chapter, or an unnumbered item without id
    number: str  # "4.2" ("4" for a chapter); "" on a page outside the Chapters section
    page: str  # src_uri of the page that holds it
    line: int

    @property
    def label(self) -> str:
        """How a reference shows it: "Figure 4.2", "Table 4.1", "(4.3)", "Chapter 4"."""
        return f"({self.number})" if self.kind == "eq" else f"{KIND_NAMES[self.kind]} {self.number}"

    @property
    def where(self) -> str:
        return f"docs/{self.page}:{self.line}"


@dataclass(frozen=True)
class Equation:
    """A display equation (``$$`` block) outside code: its lines, offsets, TeX, and label."""

    line: int
    end_line: int
    start: int  # offset of the opening line
    end: int  # offset just after the closing ``$$`` (its line's end excluded)
    indent: str
    tex: str  # between the delimiters, as written
    label: str | None
    numbered: bool


def id_problem(ident: object) -> str | None:
    """Why ``ident`` cannot be an item's id (:data:`ID_PATTERN`), or None when it can (or is None: no id).

    >>> [id_problem(i) is None for i in ("decay", "gru-2", "a1-b2-c3", "decay-", "-decay", "de--cay", "Decay", "2d")]
    [True, True, True, False, False, False, False, False]
    """
    if ident is None:
        return None
    if not isinstance(ident, str):
        return f"id must be a string, got {ident!r}"
    if not ID_PATTERN.fullmatch(ident):
        return f"id must be {ID_RULE}, got {ident!r}"
    return None


def _comment_spans(doc: Document) -> list[tuple[int, int]]:
    return [(c.start, c.end) for c in doc.comments]


def display_equations(markdown: str, page: str = "page") -> list[Equation]:
    r"""Every ``$$ ... $$`` display block of a page outside code and comments, in order.

    A block opens on a line starting with ``$$`` (after its indentation) and
    closes on the first line ending with ``$$``, as ``pymdownx.arithmatex``
    reads it. Two ``\label`` in one block fail.

    >>> [(e.line, e.label) for e in display_equations("a\n\n$$\nx \\label{x}\n$$\n\n```\n$$\n```\n")]
    [(3, 'x')]
    """
    doc = lex(markdown)
    comments = _comment_spans(doc)
    lines = markdown.split("\n")
    found: list[Equation] = []
    n = 0
    while n < len(lines):
        number, text = n + 1, lines[n]
        stripped = text.strip()
        start = doc.line_starts[n] if n < len(doc.line_starts) else len(markdown)
        if (
            not stripped.startswith("$$")
            or doc.in_code(number)
            or any(a <= start + len(text) - len(text.lstrip()) < b for a, b in comments)
        ):
            n += 1
            continue
        indent = text[: len(text) - len(text.lstrip())]
        rest = stripped[2:]
        if rest.rstrip().endswith("$$") and len(rest.rstrip()) >= 2:
            last, tex = n, rest.rstrip()[:-2]
        else:
            last = n + 1
            while last < len(lines) and not lines[last].rstrip().endswith("$$"):
                last += 1
            if last >= len(lines):
                raise NumberingError(f"{page}:{number}: a $$ display equation opened here is never closed with $$")
            body = lines[n + 1 : last] + [lines[last].rstrip()[:-2]]
            tex = "\n".join([rest] + body) if rest.strip() else "\n".join(body)
        labels = _LABEL.findall(tex)
        if len(labels) > 1:
            raise NumberingError(
                f"{page}:{number}: an equation has one \\label, this one has {len(labels)}: {', '.join(labels)}"
            )
        end = doc.line_starts[last] + len(lines[last].rstrip()) if last < len(doc.line_starts) else len(markdown)
        found.append(
            Equation(number, last + 1, start, end, indent, tex, labels[0] if labels else None, not _NOTAG.search(tex))
        )
        n = last + 1
    return found


def heading_anchor(title: str) -> str:
    """The anchor Python-Markdown's ``toc`` gives a heading of this Markdown text (the slugify Material uses).

    The text is reduced to what the heading shows (a link's text, no attribute
    list, code and emphasis marks, or HTML tags), then given to
    :func:`markdown.extensions.toc.slugify` with "-" between words.

    >>> heading_anchor("The [GRU](gru.md)'s `two` *choices* { #x }")
    'the-grus-two-choices'
    """
    title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # links: their text
    title = _ATTRS_END.sub("", title)  # an attribute list
    title = title.replace("`", "").replace("*", "")
    title = re.sub(r"<[^>]+>", "", title)
    return toc_slugify(html.unescape(title), "-")


def _sections(markdown: str, doc: Document | None = None) -> list[tuple[int, str, str]]:
    """(line, anchor, title) of each ``##`` heading of a page outside code and comments, in order.

    >>> _sections("# T\\n\\n## One\\n\\n```\\n## not\\n```\\n\\n## Two { #b }\\n")
    [(3, 'one', 'One'), (9, 'b', 'Two { #b }')]
    """
    doc = doc if doc is not None else lex(markdown)
    found = []
    for h in doc.headings:
        if h.level != 2:
            continue
        explicit = _EXPLICIT_ID.search(h.text)
        found.append((h.line, explicit.group(1) if explicit else heading_anchor(h.text), h.text))
    return found


def _outside_code(pattern: re.Pattern, markdown: str) -> Iterable[re.Match]:
    """The matches of ``pattern`` in ``markdown`` that start outside code and comments (:func:`_excluded`)."""
    excluded = _excluded(lex(markdown), markdown)
    return (m for m in pattern.finditer(markdown) if not any(a <= m.start() < b for a, b in excluded))


def _excluded(doc: Document, markdown: str) -> list[tuple[int, int]]:
    """Offset spans where a reference is text, not a reference: code, comments, inline code spans."""
    spans = [(f.start, f.end) for f in doc.fences] + _comment_spans(doc)
    for first, last in doc.indented_code:
        spans.append(
            (doc.line_starts[first - 1], doc.line_starts[last] if last < len(doc.line_starts) else len(markdown))
        )
    for start, line in zip(doc.line_starts, markdown.split("\n")):
        spans += [(start + m.start(), start + m.end()) for m in _CODE_SPAN.finditer(line)]
    return sorted(spans)


class Numbering:
    """The numbers, anchors and ids of a whole book, and the rewriting of its pages.

    ``chapters`` lists the chapter pages (src_uri) in reading order; add every
    page with :meth:`add_page`, then ask :meth:`rewrite` for a page's Markdown.
    """

    def __init__(self, chapters: Sequence[str]) -> None:
        self.chapters = list(chapters)
        self.pages: dict[str, list[Target]] = {}
        self.equations: dict[str, list[tuple[Equation, Target | None]]] = {}
        self.items: dict[str, list[Target | None]] = {}  # page -> each directive's target (None: a widget)
        self.by_id: dict[tuple[str, str], Target] = {}
        self.sections: dict[str, dict[str, tuple[int, str]]] = {}  # page -> anchor -> (line, "4.2")

    def chapter_number(self, src_uri: str) -> int | None:
        """1..N for a page of the Chapters section, None for any other page."""
        return self.chapters.index(src_uri) + 1 if src_uri in self.chapters else None

    # -- collecting --------------------------------------------------------------
    def add_page(self, src_uri: str, markdown: str, directives: Sequence[Directive] = ()) -> None:
        """Number a page's items. Raises :class:`NumberingError` on a bad or duplicate id."""
        self.remove_page(src_uri)
        where = f"docs/{src_uri}"
        chapter = self.chapter_number(src_uri)
        counts = {"fig": 0, "tab": 0, "eq": 0}
        events: list[tuple[int, str, Directive | Equation]] = []
        for d in directives:
            events.append((d.start, KINDS[d.kind].label or "", d))
        equations = display_equations(markdown, where)
        for e in equations:
            events.append((e.start, "eq", e))
        targets: list[Target] = []
        items: list[Target | None] = []
        numbered_eqs: list[tuple[Equation, Target | None]] = []

        def error_at(line: int) -> Callable[[str], DirectiveError]:
            return lambda msg: NumberingError(f"{where}:{line}: {msg}")

        error: Callable[[str], DirectiveError]  # the item's error, with its page and line
        for _, kind, thing in sorted(events, key=lambda ev: ev[0]):
            if isinstance(thing, Equation):
                ident, line = thing.label, thing.line
                if not thing.numbered:
                    if ident is not None:
                        raise NumberingError(
                            f"{where}:{line}: an equation with \\notag has no number, so it "
                            f"cannot take \\label{{{ident}}}"
                        )
                    numbered_eqs.append((thing, None))
                    continue
                error = error_at(line)
            elif not kind:  # a widget: interactive, captioned by its own text, not numbered
                items.append(None)
                continue
            else:
                ident, line = thing.args.get("id"), thing.line
                error = thing.error
            problem = id_problem(ident)
            if problem is not None:
                raise NumberingError(str(error(problem)))
            counts[kind] += 1
            number = f"{chapter}.{counts[kind]}" if chapter else ""
            anchor = f"{kind}-{ident}" if ident else f"{kind}-{number.replace('.', '-')}" if number else ""
            target = Target(kind, ident, anchor, number, src_uri, line)
            if ident:
                other = self.by_id.get((kind, ident))
                if other is not None:
                    also = (
                        f"already used on this page, by the {_NOUN[kind]} at line {other.line}"
                        if other.page == src_uri
                        else f"used twice: also at {other.where}"
                    )
                    raise NumberingError(
                        str(error(f"the {_NOUN[kind]} id {ident!r} is {also}; ids are unique in the whole book"))
                    )
                self.by_id[(kind, ident)] = target
            targets.append(target)
            if isinstance(thing, Equation):  # kind "eq"
                numbered_eqs.append((thing, target))
            else:
                items.append(target)
        self.pages[src_uri] = targets
        self.items[src_uri] = items
        self.equations[src_uri] = numbered_eqs
        self.sections[src_uri] = {
            anchor: (line, f"{chapter}.{k}")
            for k, (line, anchor, _) in enumerate(_sections(markdown), 1)
            if chapter is not None
        }

    def remove_page(self, src_uri: str) -> None:
        for t in self.pages.pop(src_uri, []):
            if t.id is not None and self.by_id.get((t.kind, t.id)) == t:
                del self.by_id[(t.kind, t.id)]
        self.items.pop(src_uri, None)
        self.equations.pop(src_uri, None)
        self.sections.pop(src_uri, None)

    def section_number(self, src_uri: str, anchor: str) -> str | None:
        """The number ("4.2") of the section of a chapter with that anchor; None for anything else."""
        found = self.sections.get(src_uri, {}).get(anchor)
        return found[1] if found else None

    def section_link_edits(self, src_uri: str, markdown: str) -> list[tuple[int, int, str]]:
        """Insertions of " (§4.2)" after each link, outside code and comments, to a numbered section."""
        out = []
        for m in _outside_code(_LINK, markdown):
            path, _, anchor = m.group(1).partition("#")
            if not anchor or re.match(r"^[a-z][a-z0-9+.-]*:", path, re.IGNORECASE):
                continue
            page = posixpath.normpath(posixpath.join(posixpath.dirname(src_uri), path)) if path else src_uri
            number = self.section_number(page, anchor)
            if number is not None:
                out.append((m.end(), m.end(), f" (§{number})"))
        return out

    # -- resolving ---------------------------------------------------------------
    def resolve(self, kind: str, ident: str, where: str) -> Target:
        """The target of ``@kind:ident``; :class:`NumberingError` naming ``where`` and the known ids."""
        if kind == "ch":
            slugs = {posixpath.splitext(posixpath.basename(c))[0]: c for c in self.chapters}
            if ident not in slugs:
                raise NumberingError(
                    f"{where}: @ch:{ident}: no chapter is named {ident!r}{did_you_mean(ident, slugs)}; the "
                    f"chapters are: {', '.join(slugs) or 'none'}"
                )
            page = slugs[ident]
            return Target("ch", ident, "", str(self.chapter_number(page)), page, 1)
        target = self.by_id.get((kind, ident))
        if target is None:
            known = sorted(i for k, i in self.by_id if k == kind)
            how = {
                "fig": 'id="..." on a figure directive',
                "tab": 'id="..." on a table directive',
                "eq": "\\label{...} in a $$ equation",
            }[kind]
            raise NumberingError(
                f"{where}: @{kind}:{ident}: no {_NOUN[kind]} has the id {ident!r}{did_you_mean(ident, known)} "
                f"(give one with {how}); the {_NOUN[kind]} ids are: {', '.join(known) or 'none'}"
            )
        if not target.number:
            raise NumberingError(
                f"{where}: @{kind}:{ident}: the {_NOUN[kind]} at {target.where} is on a page "
                f"outside the Chapters section, where nothing is numbered"
            )
        return target

    def references(self, markdown: str) -> list[tuple[int, int, str, str, bool]]:
        """``(start, end, kind, id, escaped)`` of every reference outside code and comments."""
        found = []
        for m in _outside_code(_REFERENCE, markdown):
            found.append((m.start(), m.end(), m.group(2), m.group(3), bool(m.group(1))))
        return found

    def referenced(self, src_uri: str, markdown: str) -> list[str]:
        """What the page's references show, as ``"fig:decay=4.2"`` (serving: a page to rebuild when it changes)."""
        return [
            f"{kind}:{ident}={self.resolve(kind, ident, f'docs/{src_uri}').number}"
            for _, _, kind, ident, escaped in self.references(markdown)
            if not escaped
        ]

    def _link(self, src_uri: str, target: Target) -> str:
        if target.page == src_uri:
            href = f"#{target.anchor}" if target.anchor else posixpath.basename(src_uri)
        else:
            href = posixpath.relpath(target.page, posixpath.dirname(src_uri) or ".")
            href += f"#{target.anchor}" if target.anchor else ""
        return f"[{target.label}]({href})"

    def reference_edits(self, src_uri: str, markdown: str, *, plain: bool = False) -> list[tuple[int, int, str]]:
        """The replacements of a page's references: links (or, ``plain``, their text)."""
        doc = lex(markdown)
        edits = []
        for start, end, kind, ident, escaped in self.references(markdown):
            if escaped:
                edits.append((start, end, markdown[start + 1 : end]))
                continue
            target = self.resolve(kind, ident, f"docs/{src_uri}:{doc.line_of(start)}")
            edits.append((start, end, target.label if plain else self._link(src_uri, target)))
        return edits

    # -- rewriting -----------------------------------------------------------------
    def edits(self, src_uri: str, markdown: str) -> list[tuple[int, int, str]]:
        """Every change to a page's Markdown as ``(start, end, replacement)``, in order, none overlapping.

        The chapter number in the title (H1), equation markers, and references.
        Figures and tables are labelled where their directives are expanded
        (:func:`label_block`).
        """
        out = self.reference_edits(src_uri, markdown)
        # Insertions and deletions only, never a rewritten line: other edits (placeholders) may fall in between.
        chapter = self.chapter_number(src_uri)
        if chapter is not None:
            doc = lex(markdown)
            h1 = [h for h in doc.headings if h.level == 1]
            if h1:
                start = doc.line_starts[h1[0].line - 1]
                m = _H1.match(markdown.split("\n")[h1[0].line - 1])
                if m:
                    out.append(
                        (
                            start + m.start("text"),
                            start + m.start("text"),
                            f'<span class="rnnmem-chapter-number">Chapter {chapter}</span> ',
                        )
                    )
                    if not _ATTRS_END.search(m.group("text")):  # the title's anchor stays what it was
                        out.append(
                            (start + m.end("text"), start + m.end("text"), f" {{ #{heading_anchor(m.group('text'))} }}")
                        )
        if chapter is not None:
            doc = lex(markdown)
            lines = markdown.split("\n")
            for k, (line, anchor, _) in enumerate(_sections(markdown, doc), 1):
                number = f"{chapter}.{k}"
                start = doc.line_starts[line - 1]
                m = _H2.match(lines[line - 1])
                if m is None:
                    continue
                out.append(
                    (
                        start + m.start("text"),
                        start + m.start("text"),
                        f'<span class="rnnmem-section-number">{number}</span> ',
                    )
                )
                if not _ATTRS_END.search(m.group("text")):  # the section's anchor stays what it was
                    out.append((start + m.end("text"), start + m.end("text"), f" {{ #{anchor} }}"))
        out += self.section_link_edits(src_uri, markdown)
        for eq, target in self.equations.get(src_uri, []):
            block = markdown[eq.start : eq.end]
            for m in (_LABEL if target is not None else _NOTAG).finditer(block):
                a, b = eq.start + m.start(), eq.start + m.end()
                # A label alone on its line goes with its line: a blank line would end the $$ block.
                line_start = markdown.rfind("\n", 0, a) + 1
                line_end = markdown.find("\n", b)
                if not markdown[line_start:a].strip() and not markdown[b:line_end].strip() and line_end >= 0:
                    a, b = line_start, line_end + 1
                out.append((a, b, ""))
            if target is not None and target.anchor:
                opening = eq.start + len(eq.indent) + 2
                rest = markdown[opening : markdown.find("\n", opening) if "\n" in markdown[opening:] else len(markdown)]
                marker = f"\n{eq.indent}{MARKER} {target.anchor} {target.number or '-'}"
                out.append((opening, opening, marker + (f"\n{eq.indent}" if rest.strip() else "")))
        return sorted(out)

    def rewrite(self, src_uri: str, markdown: str) -> str:
        """The page's Markdown with :meth:`edits` applied (figures and tables left to the caller)."""
        return apply_edits(markdown, self.edits(src_uri, markdown))

    def plain(self, src_uri: str, markdown: str) -> str:
        """The page's Markdown with each reference replaced by its text ("Figure 4.2"), for the notebooks."""
        return apply_edits(markdown, self.reference_edits(src_uri, markdown, plain=True))

    def item(self, src_uri: str, index: int) -> Target | None:
        """The figure or table of the page's ``index``-th directive (None for a widget)."""
        items = self.items.get(src_uri, [])
        return items[index] if index < len(items) else None

    def block_references(self, src_uri: str, block: str, line: int, *, plain: bool = False) -> str:
        """References in an expanded figure or table (its caption): links, plain text in alt text (or all)."""

        def sub(text: str, plain: bool) -> str:
            def one(m: re.Match) -> str:
                if m.group(1):
                    return m.group(0)[1:]
                target = self.resolve(m.group(2), m.group(3), f"docs/{src_uri}:{line}")
                return target.label if plain else self._link(src_uri, target)

            return _REFERENCE.sub(one, text)

        pieces, pos = [], 0
        for m in _ALT.finditer(block):
            pieces += [sub(block[pos : m.start()], plain), sub(m.group(0), True)]
            pos = m.end()
        pieces.append(sub(block[pos:], plain))
        return "".join(pieces)


_ALT = re.compile(r'!\[(?:\\.|[^\]\\])*\]|\balt="[^"]*"')


def apply_edits(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, replacement)`` applied (sorted, not overlapping)."""
    out, pos = [], 0
    for start, end, replacement in sorted(edits):
        if start < pos:
            raise ValueError(f"overlapping edits at offset {start}")
        out += [text[pos:start], replacement]
        pos = end
    out.append(text[pos:])
    return "".join(out)


_FIGURE_OPEN = re.compile(r'<figure class="rnnmem-figure[^"]*"')
_FIGCAPTION = re.compile(r"<figcaption[^>]*>")
_TABLE_OPEN = re.compile(r'<div class="rnnmem-table"')
_TABLE_CAPTION = re.compile(r'<p class="rnnmem-table-caption"[^>]*>')


def label_block(block: str, target: Target) -> str:
    """An expanded figure or table with its anchor and its number before the caption.

    >>> t = Target("fig", "decay", "fig-decay", "4.2", "chapters/h.md", 9)
    >>> label_block('<figure class="rnnmem-figure" markdown="span">\\n  <figcaption>f^n.</figcaption>\\n</figure>', t)
    '<figure class="rnnmem-figure" id="fig-decay" markdown="span">\\n  <figcaption><span class="rnnmem-label">Figure 4.2.</span> f^n.</figcaption>\\n</figure>'
    """
    label = f'<span class="rnnmem-label">{html.escape(target.label)}.</span> ' if target.number else ""
    anchor = f' id="{target.anchor}"' if target.anchor else ""
    if target.kind == "fig":
        block = _FIGURE_OPEN.sub(lambda m: m.group(0) + anchor, block, count=1)
        return _FIGCAPTION.sub(lambda m: m.group(0) + label, block, count=1)
    block = _TABLE_OPEN.sub(lambda m: m.group(0) + anchor, block, count=1)
    if _TABLE_CAPTION.search(block):
        return _TABLE_CAPTION.sub(lambda m: m.group(0) + label, block, count=1)
    if not label:
        return block
    head, sep, rest = block.partition("\n\n")
    return f'{head}{sep}<p class="rnnmem-table-caption" markdown="span">{label.rstrip()}</p>\n\n{rest}'


_EQUATION_DIV = re.compile(
    r'<div class="arithmatex">(?P<open>\\\[|\$\$)?\s*'
    + re.escape(MARKER)
    + r" (?P<anchor>[\w-]+) (?P<number>[\d.]+|-)\n"
    r"(?P<rest>.*?)</div>",
    re.S,
)


def equation_html(page_html: str, anchors: set[str] | None = None) -> str:
    """Display equations as rendered by arithmatex: marker out, an anchor on a wrapper, the number at the right.

    Runs on a page's HTML before the math is typeset. The number is text after
    the formula (a screen reader reads the formula, then "(4.3)"). The anchors
    made are added to ``anchors`` when given.

    >>> equation_html('<div class="arithmatex">\\\\[\\n%rnnmem-eq eq-one 1.1\\nx = 1\\n\\\\]</div>')
    '<div class="rnnmem-equation" id="eq-one"><div class="arithmatex">\\\\[\\nx = 1\\n\\\\]</div><span class="rnnmem-equation-number">(1.1)</span></div>'
    """

    def one(m: re.Match) -> str:
        math = f'<div class="arithmatex">{m.group("open") or ""}\n{m.group("rest")}</div>'
        number = m.group("number")
        tag = f'<span class="rnnmem-equation-number">({number})</span>' if number != "-" else ""
        if anchors is not None:
            anchors.add(m.group("anchor"))
        return f'<div class="rnnmem-equation" id="{m.group("anchor")}">{math}{tag}</div>'

    return _EQUATION_DIV.sub(one, page_html)

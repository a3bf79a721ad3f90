"""One Markdown lexer for the whole site: fenced code, HTML comments and indentation.

Everything in the site that needs to know where code is in a page asks this
module: the directives (a directive inside code is an example, not a
directive), the page rewriting (console fences, the notebook links), the
chapter notebooks (the ```` ```python ```` blocks), the docstring fences of the
API pages and the test that no page hides Python from Sybil. One set of rules,
so the notebook, the tests and the rendered page never disagree about where a
block ends.

The rules are CommonMark's where the site's Markdown follows them:

* A fence is a line of at least three backticks or tildes. It is closed by a
  line of the *same* character, *at least as long*, with only whitespace after
  it, indented at most three spaces beyond the fence's container. A ````` ```` `````
  fence is not closed by ```` ``` ````; a five-backtick line closes a four-backtick fence.
* An HTML comment runs from ``<!--`` to the next ``-->``, across lines; inside
  a fence it is code, and inside a comment a fence is text. Comments do not
  nest: a ``<!--`` inside a comment (an unclosed ``<!-- TODO`` above a
  directive, say) is reported, since it swallows everything up to the next
  comment's end.
* Indentation: admonitions (``!!!``, ``???``, ``???+``), content tabs
  (``===``) and list items open a container whose content is indented; a line
  indented four or more spaces beyond its container after a blank line is an
  indented code block.

>>> doc = lex("text\\n\\n````markdown\\n```python\\n<!-- figure: x -->\\n```\\n````\\n<!-- note -->\\n")
>>> [(f.line, f.info, f.closed) for f in doc.fences], [c.line for c in doc.comments]
([(3, 'markdown', True)], [8])
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from dataclasses import dataclass, field

__all__ = ["Comment", "Document", "Fence", "Heading", "LINK", "inline_code_spans", "lex", "prose_spans"]

_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>`{3,}|~{3,})(?P<info>.*)$")
_FENCE_CLOSE = re.compile(r"^(?P<indent> *)(?P<marker>`{3,}|~{3,})[ \t]*$")
_CONTAINER = re.compile(
    r"^(?P<indent> *)(?:"
    r"(?P<admonition>(?:!!!|\?\?\?\+?)[ \t]+\S)"  # !!! note, ??? success "Answer"
    r"|(?P<tab>===[+!]?[ \t]+\S)"  # === "Tab"
    r"|(?P<bullet>(?:[-*+]|\d{1,9}[.)])(?P<gap>[ \t]{1,4})(?=\S))"  # list item
    r")"
)
_HEADING = re.compile(r"^(?P<hashes>#{1,6})[ \t]+(?P<text>.+?)[ \t]*#*[ \t]*$")
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
#: A Markdown link (not an image): group 1 is its target, ``page.md#anchor``. The one pattern for the page
#: rules (:mod:`rnnmem.site.check`) and the section numbers after links (:mod:`rnnmem.site.numbering`).
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _width(ws: str) -> int:
    return len(ws.expandtabs(4))


@dataclass(frozen=True)
class Fence:
    """A fenced code block. Lines are 1-based; ``body`` is dedented by the fence's indentation."""

    line: int  # the opening fence
    end_line: int  # the closing fence (the last line of the block when unclosed)
    indent: str  # the whitespace before the opening fence
    marker: str  # the opening run of backticks or tildes
    info: str  # the text after the marker, stripped
    body: tuple[str, ...]
    start: int  # offset of the opening line
    end: int  # offset just after the closing line
    closed: bool


@dataclass(frozen=True)
class Comment:
    """An HTML comment outside code: ``text`` is the whole ``<!-- ... -->``."""

    line: int
    start: int
    end: int
    text: str
    prefix: str  # what stands before ``<!--`` on its line
    suffix: str  # what follows ``-->`` on its line
    indent: int  # the content indentation of the container it stands in
    closed: bool


@dataclass(frozen=True)
class Heading:
    line: int
    level: int
    text: str


@dataclass
class Document:
    """A lexed page: its fences, comments, headings and indented code, and what is wrong with it."""

    text: str
    fences: list[Fence] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    indented_code: list[tuple[int, int]] = field(default_factory=list)  # (first line, last line)
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, message)
    line_starts: list[int] = field(default_factory=list)

    def line_of(self, offset: int) -> int:
        """The 1-based line holding a character offset."""
        return bisect_right(self.line_starts, offset)

    def in_fence(self, line: int) -> bool:
        return any(f.line <= line <= f.end_line for f in self.fences)

    def in_code(self, line: int) -> bool:
        """True on a line of a fenced or an indented code block (the fence lines included)."""
        return self.in_fence(line) or any(a <= line <= b for a, b in self.indented_code)

    def loose_prompts(self) -> list[int]:
        """Lines outside fences that start with a ``>>>`` prompt (shown, but never run)."""
        return [
            n
            for n, line in enumerate(self.text.splitlines(), 1)
            if line.lstrip().startswith(">>>") and not self.in_fence(n)
        ]


def _mask_code_spans(line: str) -> str:
    """The line with inline code spans blanked, so ``<!--`` written as code is not a comment."""
    return _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def lex(markdown: str) -> Document:
    """Lex a page (or a docstring). Never raises: problems are listed in ``Document.problems``.

    The result is shared between callers that lex the same text (a rebuild
    while serving lexes every page again): treat it as read-only.
    """
    return _lex(markdown)


@functools.lru_cache(maxsize=512)
def _lex(markdown: str) -> Document:
    doc = Document(markdown)
    lines = markdown.splitlines(keepends=True)
    offsets, pos = [], 0
    for line in lines:
        offsets.append(pos)
        pos += len(line)
    doc.line_starts = offsets or [0]
    end_of_text = pos

    containers: list[int] = []  # content indentation of the open containers, innermost last
    fence: dict | None = None  # the open fence
    comment: dict | None = None  # the open comment
    code_start: int | None = None  # first line of the open indented code block
    code_end = 0
    prev_blank = True
    in_paragraph = False

    def close_code() -> None:
        nonlocal code_start
        if code_start is not None:
            doc.indented_code.append((code_start, code_end))
            code_start = None

    def finish_fence(end_line: int, end: int, closed: bool) -> None:
        nonlocal fence
        assert fence is not None
        doc.fences.append(
            Fence(
                fence["line"],
                end_line,
                fence["indent"],
                fence["marker"],
                fence["info"],
                tuple(fence["body"]),
                fence["start"],
                end,
                closed,
            )
        )
        fence = None

    def scan_comments(n: int, text: str, col: int, indent: int) -> None:
        """Find comment openings and closings on line n from column col (comment state carried across lines)."""
        nonlocal comment
        masked = _mask_code_spans(text) if comment is None else text
        while True:
            if comment is not None:
                close = text.find("-->", col)
                nested = text.find("<!--", col)
                if nested != -1 and (close == -1 or nested < close) and not comment["nested"]:
                    comment["nested"] = n
                if close == -1:
                    return
                end = offsets[n - 1] + close + 3
                doc.comments.append(
                    Comment(
                        comment["line"],
                        comment["start"],
                        end,
                        markdown[comment["start"] : end],
                        comment["prefix"],
                        text[close + 3 :].rstrip("\r\n"),
                        comment["indent"],
                        True,
                    )
                )
                if comment["nested"]:
                    doc.problems.append(
                        (
                            comment["line"],
                            (
                                f"an HTML comment opened here is still open at line {comment['nested']}, where another "
                                f"<!-- starts: comments do not nest, so everything in between (directives included) "
                                f"would vanish; close this one with -->"
                            ),
                        )
                    )
                comment = None
                col = close + 3
                masked = " " * col + _mask_code_spans(text[col:])
            opening = masked.find("<!--", col)
            if opening == -1:
                return
            comment = {
                "line": n,
                "start": offsets[n - 1] + opening,
                "prefix": text[:opening],
                "indent": indent,
                "nested": 0,
            }
            col = opening + 4

    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        blank = not line.strip()
        if comment is not None:
            scan_comments(n, line, 0, comment["indent"])
            prev_blank = blank
            continue
        ws = line[: len(line) - len(line.lstrip(" \t"))]
        ind = _width(ws)
        if fence is not None:
            container = fence["container"]
            if not blank and ind < container:
                # The fence's container ended (a dedented line): so does the fence, unclosed.
                finish_fence(n - 1, offsets[n - 1], False)
            else:
                m = _FENCE_CLOSE.match(line.expandtabs(4))
                if (
                    m
                    and m.group("marker")[0] == fence["marker"][0]
                    and len(m.group("marker")) >= len(fence["marker"])
                    and container <= len(m.group("indent")) <= container + 3
                ):
                    finish_fence(n, offsets[n - 1] + len(raw), True)
                else:
                    fence["body"].append(
                        line[len(fence["indent"]) :] if line.startswith(fence["indent"]) else line.lstrip(" \t")
                    )
                prev_blank = blank
                continue
        if blank:
            prev_blank = True
            in_paragraph = False
            continue
        while containers and ind < containers[-1]:
            containers.pop()
        container = containers[-1] if containers else 0
        if code_start is not None:
            if ind >= container + 4:
                code_end = n
                continue
            close_code()
        if ind >= container + 4 and prev_blank and not in_paragraph:
            code_start = code_end = n
            prev_blank = False
            continue
        m = _FENCE_OPEN.match(line)
        if m and not (m.group("marker")[0] == "`" and "`" in m.group("info")):
            fence = {
                "line": n,
                "indent": ws,
                "marker": m.group("marker"),
                "info": m.group("info").strip(),
                "body": [],
                "start": offsets[n - 1],
                "container": container,
            }
            prev_blank = False
            in_paragraph = False
            continue
        c = _CONTAINER.match(line.expandtabs(4))
        if c:
            if c.group("bullet"):
                containers.append(len(c.group("indent")) + len(c.group("bullet")))
            else:
                containers.append(len(c.group("indent")) + 4)
        h = _HEADING.match(line) if not containers else None
        if h:
            doc.headings.append(Heading(n, len(h.group("hashes")), h.group("text")))
        scan_comments(n, line, 0, container)
        in_paragraph = not (c or h) or bool(c and c.group("bullet"))
        prev_blank = False

    if fence is not None:
        finish_fence(len(lines), end_of_text, False)
        last = doc.fences[-1]
        doc.problems.append(
            (
                last.line,
                f"a {last.marker} fence opened here is never closed (close it with a line "
                f"of at least {len(last.marker)} {'backticks' if last.marker[0] == '`' else 'tildes'})",
            )
        )
    if comment is not None:
        doc.problems.append((comment["line"], "an HTML comment opened here is never closed with -->"))
    close_code()
    doc.problems.sort()
    return doc


def inline_code_spans(markdown: str) -> list[tuple[int, int]]:
    """(start, end) offsets of every inline code span on a line outside code blocks, backticks included.

    >>> page = "Text `a` and ``b``.\\n\\n```python\\nx = `c`\\n```\\n"
    >>> [page[a:b] for a, b in inline_code_spans(page)]
    ['`a`', '``b``']
    """
    doc = lex(markdown)
    spans = []
    for number, line in enumerate(markdown.split("\n"), 1):
        if doc.in_code(number) or "`" not in line:
            continue
        base = doc.line_starts[number - 1]
        spans += [(base + m.start(), base + m.end()) for m in _CODE_SPAN.finditer(line)]
    return spans


def prose_spans(markdown: str) -> list[tuple[int, int]]:
    """(start, end) offsets of a page's prose: every line outside code, less comments and inline code.

    What the reader sees as text (headings, paragraphs, lists, tables, math),
    and what a placeholder or a number check may look at.

    >>> page = "Text `code` end.\\n\\n```python\\nx = 1\\n```\\n<!-- c -->after\\n"
    >>> [page[a:b] for a, b in prose_spans(page)]
    ['Text ', ' end.', 'after']
    """
    doc = lex(markdown)
    comments = [(c.start, c.end) for c in doc.comments]
    spans: list[tuple[int, int]] = []
    for number, line in enumerate(markdown.split("\n"), 1):
        if doc.in_code(number) or not line.strip():
            continue
        base = doc.line_starts[number - 1]
        cuts = [(base + m.start(), base + m.end()) for m in _CODE_SPAN.finditer(line)]
        cuts += [(max(a, base), min(b, base + len(line))) for a, b in comments if a < base + len(line) and b > base]
        pos = base
        for a, b in sorted(cuts):
            if a > pos:
                spans.append((pos, a))
            pos = max(pos, b)
        if pos < base + len(line):
            spans.append((pos, base + len(line)))
    return spans

"""Find and parse the figure and table directives in a chapter's Markdown.

A directive is an HTML comment, invisible where the Markdown is shown raw (on
GitHub, say), of the form::

    <!-- figure: decay_curves factors=[0.9, 0.99, 0.999] steps=1000 caption="..." -->
    <!-- table: horizon_table gates=[0.5, 0.95] caption="..." -->

* the *kind* (``figure`` or ``table``) comes first, then a colon;
* then the *name* of a registered builder;
* then ``key=value`` arguments separated by spaces, each value a Python literal
  (number, string, list, tuple, dict, ``True``/``False``/``None``).

A comment may span several lines. Any HTML comment whose text starts with a
lower-case word and a colon is taken as a directive, so a misspelt kind
(``<!-- figures: ... -->``) fails loudly instead of vanishing. Comments inside
fenced code blocks are left alone, so a page can show directive syntax.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

KINDS = ("figure", "table")
#: Directives that belong to Sybil (the test runner), left in the page for it and ignored here.
SYBIL_KINDS = ("skip",)

_COMMENT = re.compile(r"<!--(.*?)-->", re.DOTALL)
_DIRECTIVE_HEAD = re.compile(r"\s*([a-z][a-z0-9_-]*)\s*:(?!//)(.*)\Z", re.DOTALL)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})")


class DirectiveError(ValueError):
    """A directive that cannot be parsed or rendered; the message names page and line."""


@dataclass(frozen=True)
class Directive:
    """One parsed directive: where it is, what it asks for, and its exact text."""

    kind: str
    name: str
    args: dict[str, Any] = field(hash=False)
    page: str
    line: int
    start: int
    end: int
    text: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def error(self, message: str) -> DirectiveError:
        return DirectiveError(f"{self.where}: {self.text.strip()}\n  {message}")


def _fenced_spans(markdown: str) -> list[tuple[int, int]]:
    """Character spans of fenced code blocks (``` or ~~~), which directives skip."""
    spans: list[tuple[int, int]] = []
    pos = 0
    open_fence: tuple[str, int] | None = None
    for line in markdown.splitlines(keepends=True):
        stripped = line.lstrip(" ")
        m = _FENCE.match(line) if len(line) - len(stripped) <= 3 else None
        if open_fence is None:
            if m:
                open_fence = (m.group("fence"), pos)
        else:
            fence, start = open_fence
            if m and m.group("fence")[0] == fence[0] and len(m.group("fence")) >= len(fence) \
                    and line.strip() == m.group("fence"):
                spans.append((start, pos + len(line)))
                open_fence = None
        pos += len(line)
    if open_fence is not None:
        spans.append((open_fence[1], pos))
    return spans


def _split_args(text: str) -> list[tuple[str, str]]:
    """Split ``a=1 b=[1, 2] c="x y"`` into (key, value-source) pairs.

    Splits at whitespace that is outside brackets and strings.
    """
    pairs: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        m = _NAME.match(text, i)
        if not m or m.end() >= n or text[m.end()] != "=":
            token = text[i:].split(None, 1)[0]
            raise ValueError(f"expected key=value, got {token!r}")
        key = m.group(0)
        i = m.end() + 1
        start = i
        depth = 0
        quote: str | None = None
        while i < n:
            ch = text[i]
            if quote:
                if ch == "\\":
                    i += 2
                    continue
                if ch == quote:
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
                if depth < 0:
                    raise ValueError(f"unbalanced {ch!r} in the value of {key}")
            elif ch.isspace() and depth == 0:
                break
            i += 1
        if quote:
            raise ValueError(f"unterminated string in the value of {key}")
        if depth:
            raise ValueError(f"unclosed bracket in the value of {key}")
        value = text[start:i]
        if not value:
            raise ValueError(f"{key}= has no value")
        pairs.append((key, value))
    return pairs


def parse_arguments(text: str) -> dict[str, Any]:
    """Parse the ``key=value`` part of a directive into a dict of Python literals.

    >>> parse_arguments('factors=[0.9, 0.99] steps=1000 caption="f to the n"')
    {'factors': [0.9, 0.99], 'steps': 1000, 'caption': 'f to the n'}
    """
    args: dict[str, Any] = {}
    for key, source in _split_args(text):
        if key in args:
            raise ValueError(f"argument {key} is given twice")
        try:
            args[key] = ast.literal_eval(source)
        except (ValueError, SyntaxError):
            raise ValueError(
                f"the value of {key} must be a Python literal (number, string, list, ...), got {source!r}"
            ) from None
    return args


def find_directives(markdown: str, page: str) -> list[Directive]:
    """Every directive of a page, in order. Raises DirectiveError on a malformed one."""
    fenced = _fenced_spans(markdown)
    found: list[Directive] = []
    for m in _COMMENT.finditer(markdown):
        if any(a <= m.start() < b for a, b in fenced):
            continue
        head = _DIRECTIVE_HEAD.match(m.group(1))
        if not head:
            continue
        line = markdown.count("\n", 0, m.start()) + 1
        kind, rest = head.group(1), head.group(2).strip()
        where = f"{page}:{line}: {m.group(0).strip()}\n  "
        if kind in SYBIL_KINDS:
            continue
        if kind not in KINDS:
            raise DirectiveError(
                where + f"unknown directive kind {kind!r}; the kinds are: {', '.join(KINDS + SYBIL_KINDS)}"
            )
        name_m = _NAME.match(rest)
        if not name_m:
            raise DirectiveError(where + f"a {kind} directive needs a builder name after '{kind}:'")
        name = name_m.group(0)
        try:
            args = parse_arguments(rest[name_m.end():])
        except ValueError as exc:
            raise DirectiveError(where + f"malformed arguments: {exc}") from None
        found.append(Directive(kind, name, args, page, line, m.start(), m.end(), m.group(0)))
    return found


def unclosed_comment(markdown: str, page: str) -> None:
    """Fail on a directive-looking comment that is never closed (it would hide the rest of the page)."""
    fenced = _fenced_spans(markdown)
    for m in re.finditer(r"<!--", markdown):
        if any(a <= m.start() < b for a, b in fenced):
            continue
        if markdown.find("-->", m.end()) == -1:
            line = markdown.count("\n", 0, m.start()) + 1
            raise DirectiveError(f"{page}:{line}: an HTML comment opened here is never closed with -->")

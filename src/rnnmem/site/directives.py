"""Find and parse the figure and table directives in a chapter's Markdown.

A directive is an HTML comment, invisible where the Markdown is shown raw (on
GitHub, say), of the form::

    <!-- figure: decay_curves factors=[0.9, 0.99, 0.999] steps=1000 caption="..." -->
    <!-- table: horizon_table gates=[0.5, 0.95] caption="..." -->
    <!-- widget: forget_bias_explorer low=-2 high=6 -->

* the *kind* (``figure``, ``table`` or ``widget``: :data:`rnnmem.site.kinds.KINDS`) comes first, then a colon;
* then the *name* of a registered builder;
* then ``key=value`` arguments separated by spaces, each value a Python literal
  (number, string, list, tuple, dict, ``True``/``False``/``None``).

A comment may span several lines. Any HTML comment whose text starts with a
lower-case word and a colon is taken as a directive, so a misspelt kind
(``<!-- figures: ... -->``) fails loudly instead of vanishing. Comments inside
code (fenced or indented, see :mod:`rnnmem.site.markdown`) are left alone, so a
page can show directive syntax. A directive stands on its own line; inside an
indented block (an exercise answer, an admonition, a list item) it is indented
as that block's text, and its figure or table stays inside the block.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

from .kinds import KINDS
from .markdown import lex
from .suggest import did_you_mean

#: Directives that belong to Sybil (the test runner), left in the page for it and ignored here.
SYBIL_KINDS = ("skip",)

_DIRECTIVE_HEAD = re.compile(r"\s*([a-z][a-z0-9_-]*)\s*:(?!//)(.*)\Z", re.DOTALL)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
    #: The whitespace before the directive on its line; its figure or table is indented the same.
    indent: str = ""

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def error(self, message: str) -> DirectiveError:
        return DirectiveError(f"{self.where}: {self.text.strip()}\n  {message}")


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
            with warnings.catch_warnings():
                # "\o" in a string is an invalid escape that Python keeps, with a warning, for now;
                # raised as an error here, it is a SyntaxError.
                warnings.simplefilter("error", category=SyntaxWarning)
                warnings.simplefilter("error", category=DeprecationWarning)
                args[key] = ast.literal_eval(source)
        except (ValueError, SyntaxError, SyntaxWarning, DeprecationWarning) as exc:
            if "escape sequence" in str(exc):
                raise ValueError(
                    f"the value of {key} has an {str(exc).split(' (')[0]}: write a backslash "
                    f'in a string as two, as in "$\\\\sigma$"'
                ) from None
            raise ValueError(
                f"the value of {key} must be a Python literal (number, string, list, ...), got {source!r}"
            ) from None
    return args


def find_directives(markdown: str, page: str) -> list[Directive]:
    """Every directive of a page, in order. Raises DirectiveError on a malformed one.

    The page is read by :func:`rnnmem.site.markdown.lex`: comments in code
    (fenced or indented) are examples and left alone; a comment left open, or
    one that would swallow a later comment, fails with its line. A directive
    must stand on its own line(s), so that it can be replaced by a block
    indented as it is (inside an exercise answer, an admonition or a list).
    """
    doc = lex(markdown)
    for line, message in doc.problems:
        raise DirectiveError(f"{page}:{line}: {message}")
    found: list[Directive] = []
    for c in doc.comments:
        head = _DIRECTIVE_HEAD.match(c.text[4:-3])
        if not head:
            continue
        kind, rest = head.group(1), head.group(2).strip()
        where = f"{page}:{c.line}: {c.text.strip()}\n  "
        if kind in SYBIL_KINDS:
            continue
        if kind not in KINDS:
            raise DirectiveError(
                where
                + f"unknown directive kind {kind!r}; the kinds are: {', '.join((*KINDS, *SYBIL_KINDS))}"
                + did_you_mean(kind, (*KINDS, *SYBIL_KINDS))
            )
        if c.prefix.strip() or c.suffix.strip():
            raise DirectiveError(
                where
                + (
                    f"a {kind} directive must stand on a line of its own (indented as the block it belongs to), "
                    f"found {(c.prefix.strip() or c.suffix.strip())!r} on its line; put it on its own line, "
                    "after a blank line"
                )
            )
        name_m = _NAME.match(rest)
        if not name_m:
            raise DirectiveError(where + f"a {kind} directive needs a builder name after '{kind}:'")
        name = name_m.group(0)
        try:
            args = parse_arguments(rest[name_m.end() :])
        except ValueError as exc:
            raise DirectiveError(where + f"malformed arguments: {exc}") from exc
        found.append(Directive(kind, name, args, page, c.line, c.start, c.end, c.text, c.prefix))
    return found


def unclosed_comment(markdown: str, page: str) -> None:
    """Fail on a comment never closed, or one that swallows another (it would hide part of the page)."""
    for line, message in lex(markdown).problems:
        if "comment" in message:
            raise DirectiveError(f"{page}:{line}: {message}")

"""Placeholders: numbers in captions and prose filled from the values a builder computed.

A figure or table builder may return ``(figure_or_table, values)``, where
``values`` is a dict of JSON data. A caption or alt text then states a number
only through a placeholder::

    caption="The 1% level is crossed at step {{crossing["0.99"]:.0f}}."

and a page's prose uses the values of the directive with ``id="decay"``::

    The slowest signal reaches the floor at step {{decay.crossing[0.99]:.0f}}.

The syntax is Python's format-field syntax inside double braces (TeX keeps its
single braces): a name, then ``.attr`` or ``[key]`` steps (a key is a string
unless it is all digits and the container is a list, as in ``str.format``;
quotes around a key are optional), then an optional format spec after a colon.
One extra spec, ``sci`` or ``sci.N``, prints a value with N decimals of
mantissa and a power of ten in Unicode (``4.3 × 10⁻⁵``), readable in text, alt
text and search results alike.

A placeholder naming a value that is not there raises :class:`PlaceholderError`
with the names that are.

A filled value never opens a block by accident (:func:`guard_line_starts`): a
placeholder that begins a line of prose, as in ``...with\n{{lab.count}}. The
four versions``, would otherwise put ``0. The four`` at the start of a line,
which Markdown reads as an ordered-list item (inside a list, a new item that
eats the 0). The character that would open the block is escaped, so the text
reads as written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .markdown import prose_spans

__all__ = [
    "BLOCK_STARTS",
    "PLACEHOLDER",
    "Placeholder",
    "PlaceholderError",
    "fill",
    "find",
    "format_value",
    "guard_line_starts",
    "jsonable",
    "sci",
]

#: ``{{ name.step[key]... :spec }}``; the name may hold hyphens (directive ids do).
PLACEHOLDER = re.compile(
    r"\{\{\s*(?P<name>[A-Za-z_][A-Za-z0-9_-]*)"
    r"(?P<steps>(?:\.[A-Za-z_][A-Za-z0-9_]*|\[[^\[\]{}]*\])*)"
    r"\s*(?::(?P<spec>[^{}]*?))?\s*\}\}"
)
_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[([^\[\]]*)\]")
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


class PlaceholderError(ValueError):
    """A placeholder that names a value that does not exist, or that cannot be formatted."""


@dataclass(frozen=True)
class Placeholder:
    """One ``{{...}}`` in a text: where it is and what it asks for."""

    start: int
    end: int
    text: str
    name: str
    steps: tuple[str | tuple[str], ...]  # "attr" for .attr, ("key",) for [key]
    spec: str


def find(text: str) -> Iterator[Placeholder]:
    """Every placeholder in ``text``, in order.

    >>> [(p.name, p.steps, p.spec) for p in find('at {{crossing[0.99]:.0f}} and {{decay.peak}}')]
    [('crossing', (('0.99',),), '.0f'), ('decay', ('peak',), '')]
    """
    for m in PLACEHOLDER.finditer(text):
        steps: list[str | tuple[str]] = []
        for s in _STEP.finditer(m.group("steps")):
            if s.group(1) is not None:
                steps.append(s.group(1))
            else:
                steps.append((s.group(2).strip().strip("\"'"),))
        yield Placeholder(
            m.start(), m.end(), m.group(0), m.group("name"), tuple(steps), (m.group("spec") or "").strip()
        )


def _names(container: Any) -> str:
    if isinstance(container, Mapping):
        return ", ".join(sorted(map(str, container))) or "none"
    if isinstance(container, (list, tuple)):
        return f"indices 0 to {len(container) - 1}" if container else "none (an empty list)"
    return f"none (it is a {type(container).__name__}, {container!r})"


def _step(value: Any, step: str | tuple[str], path: str) -> Any:
    key = step if isinstance(step, str) else step[0]
    if isinstance(value, Mapping):
        if key in value:
            return value[key]
        if key.lstrip("-").isdigit() and int(key) in value:
            return value[int(key)]
    elif isinstance(value, (list, tuple)) and isinstance(step, tuple) and key.lstrip("-").isdigit():
        index = int(key)
        if -len(value) <= index < len(value):
            return value[index]
    raise PlaceholderError(f"{path} has no {key!r}; it has: {_names(value)}")


def sci(value: float, decimals: int = 1) -> str:
    """``value`` as a mantissa with ``decimals`` decimals times a power of ten, in Unicode.

    >>> sci(4.317e-05), sci(7.888609e-31, 2), sci(1470.0), sci(0.0)
    ('4.3 × 10⁻⁵', '7.89 × 10⁻³¹', '1.5 × 10³', '0')
    """
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    mantissa, exponent = f"{value:.{decimals}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def significant(value: float, digits: int = 3) -> str:
    """``value`` with at most ``digits`` significant digits and no padding zeros; below 0.001 or from a
    million up, as a mantissa times a power of ten in Unicode (never e-notation).

    >>> significant(0.739738), significant(1000.0), significant(1.5258789e-05), significant(0.185302, 2)
    ('0.74', '1000', '1.53 × 10⁻⁵', '0.19')
    """
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    if 1e-3 <= abs(value) < 1e6:
        text = f"{value:.{digits}g}"
        return f"{value:.0f}" if "e" in text else text
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def format_value(value: Any, spec: str) -> str:
    """Format one value with a Python format spec, or ``sci``/``sci.N`` (see :func:`sci`), or
    ``sig``/``sig.N`` (at most N significant digits, default 3: see :func:`significant`).

    >>> format_value(915.6, ".0f"), format_value(0.573, ".1%"), format_value(4.3e-5, "sci.1"), format_value(3, "")
    ('916', '57.3%', '4.3 × 10⁻⁵', '3')
    >>> format_value(0.250000, "sig.4"), format_value(1.53e-05, "sig")
    ('0.25', '1.53 × 10⁻⁵')
    """
    for name, default, make in (("sci", "1", sci), ("sig", "3", significant)):
        if spec == name or spec.startswith(name + "."):
            digits = spec[len(name) + 1 :] or default
            if not digits.isdigit() or (name == "sig" and int(digits) < 1):
                raise PlaceholderError(
                    f"format spec {spec!r}: write {name} or {name}.N with N a whole number"
                    + (" of decimals" if name == "sci" else " of significant digits, at least 1")
                )
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise PlaceholderError(f"format spec {spec!r} needs a number, got {value!r}")
            return make(float(value), int(digits))
    try:
        return format(value, spec)
    except (ValueError, TypeError) as exc:
        raise PlaceholderError(f"cannot format {value!r} with {spec!r}: {exc}") from None


def resolve(p: Placeholder, namespaces: Callable[[str], tuple[Any, str] | None], known: str) -> Any:
    """The value ``p`` names. ``namespaces(name)`` gives (value, description) for a first name, or None."""
    found = namespaces(p.name)
    if found is None:
        raise PlaceholderError(f"placeholder {p.text} names {p.name!r}, which is not here; {known}")
    value, path = found
    for step in p.steps:
        value = _step(value, step, path)
        path += f".{step}" if isinstance(step, str) else f"[{step[0]}]"
    return value


def fill(text: str, namespaces: Callable[[str], tuple[Any, str] | None], known: str) -> str:
    """``text`` with every placeholder replaced by its formatted value.

    ``namespaces(name)`` returns ``(value, description)`` for a placeholder's
    first name, or None; ``known`` says what names exist (for the error).

    >>> vals = {"crossing": {"0.99": 915.6}}
    >>> fill("step {{crossing[0.99]:.0f}}", lambda n: (vals[n], n) if n in vals else None, "")
    'step 916'
    """
    out, pos = [], 0
    for p in find(text):
        out.append(text[pos : p.start])
        try:
            out.append(format_value(resolve(p, namespaces, known), p.spec))
        except PlaceholderError as exc:
            raise PlaceholderError(
                f"placeholder {p.text}: {exc}" if not str(exc).startswith("placeholder") else str(exc)
            ) from None
        pos = p.end
    out.append(text[pos:])
    return "".join(out)


def jsonable(value: Any, where: str = "values") -> Any:
    """``value`` with numpy scalars and arrays made plain, checked to be JSON data with string keys.

    >>> import numpy as np
    >>> jsonable({"a": np.float64(0.5), "b": np.arange(2), 3: (1, 2)})
    {'a': 0.5, 'b': [0, 1], '3': [1, 2]}
    """
    if hasattr(value, "tolist") and type(value).__module__ == "numpy":
        value = value.tolist()
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, (str, int, float)) or isinstance(k, bool):
                raise ValueError(f"{where}: key {k!r} must be a string or a number")
            out[str(k)] = jsonable(v, f"{where}[{k!r}]")
        return out
    if isinstance(value, (list, tuple)):
        return [jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ValueError(f"{where} must be JSON data (numbers, strings, lists, dicts), got {type(value).__name__}")


# -- a filled value never opens a block ----------------------------------------------------------------------

#: What the content of a line (after its indentation and any list or quote markers) may open in the site's
#: Markdown (Python-Markdown with the extensions of mkdocs.yml) or in CommonMark (the notebooks), each with
#: the character (group ``mark``) whose escape makes the line plain text. Python-Markdown reads ``#5`` as
#: a heading (CommonMark wants a space after the hashes), so any leading ``#`` counts.
BLOCK_STARTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("an ordered list item", re.compile(r"\d+(?P<mark>[.)])(?=[ \t]|$)")),
    ("a bullet list item", re.compile(r"(?P<mark>[-+*])(?=[ \t]|$)")),
    ("a heading", re.compile(r"(?P<mark>#)")),
    ("a block quote", re.compile(r"(?P<mark>>)")),
    ("a table row", re.compile(r"(?P<mark>\|)")),
    ("a heading underline", re.compile(r"(?P<mark>[=-])(?P=mark)*[ \t]*$")),
    ("a thematic break", re.compile(r"(?P<mark>[-*_])(?:[ \t]*(?P=mark)){2,}[ \t]*$")),
    ("a code fence", re.compile(r"(?P<mark>`)`{2,}[^`]*$")),  # CommonMark: no backtick after a ``` fence
    ("a code fence", re.compile(r"(?P<mark>~)~{2,}")),
    ("an admonition, a collapsible block or a content tab", re.compile(r"(?P<mark>[!?=])(?P=mark){2}")),
    ("a definition", re.compile(r"(?P<mark>:)(?=[ \t]|$)")),
    ("a link or footnote definition", re.compile(r"(?P<mark>\[)[^\]\n]*\]:")),
    ("an abbreviation definition", re.compile(r"(?P<mark>\*)\[[^\]\n]*\]:")),
)

#: What may stand before a placeholder on its line and still leave it at the start of the line's content:
#: indentation, block-quote markers and list markers (``- {{x.n}}. text`` would open a list inside the item).
_LINE_PREFIX = re.compile(r"[ \t]*(?:(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t]))[ \t]*)*")
#: The characters a backslash escapes in Python-Markdown without any extension (CommonMark escapes them
#: all too); any other is written as a numeric character reference, which both read as the character.
_BACKSLASH = set("\\`*_{}[]()>#+-.!")
#: Math as pymdownx.arithmatex finds it: $$...$$, \[...\], \(...\) and $...$ (no blank line inside).
_MATH = re.compile(
    r"\$\$.+?\$\$|\\\[.+?\\\]|\\\(.+?\\\)|(?<![\\$])\$(?![\s$])(?:\\.|(?!\n[ \t]*\n)[^\\$])+?(?<![\s\\])\$",
    re.DOTALL,
)


def _escape(char: str) -> str:
    """``char`` escaped so that Markdown shows it literally: a backslash, or a numeric character reference.

    >>> _escape("."), _escape("=")
    ('\\\\.', '&#61;')
    """
    return "\\" + char if char in _BACKSLASH else f"&#{ord(char)};"


def _masked(text: str) -> str:
    """``text`` with everything outside its prose (code, comments) blanked, newlines kept: math is found in it."""
    out = ["\n" if c == "\n" else " " for c in text]
    for a, b in prose_spans(text):
        out[a:b] = text[a:b]
    return "".join(out)


def guard_line_starts(text: str, fills: Sequence[tuple[int, int, str]], page: str = "") -> list[tuple[int, int, str]]:
    """The edits ``fills`` (placeholders in ``text`` and their values), escaped where a value would open a block.

    A placeholder *begins a line* when only indentation, ``>`` and list
    markers stand before it on its line (or it follows a line break inside
    another value). Its value, with what follows on the line (typed text and
    other values), is matched against :data:`BLOCK_STARTS`: if it would open a
    list item, a heading, a block quote, a table row, a heading underline, a
    thematic break, a fence, an admonition or a definition, the character that
    opens it gets a backslash (``0\\. The four``), or, if Markdown has no
    backslash escape for it (``=``, ``~``, ``?``, ``|``, ``:``), is written as a
    numeric character reference (``&#61;``). Both render the text as written,
    in the site and in a notebook. A placeholder in the middle of a line is
    left alone.

    The escape goes into a value, or into the typed text right after it (as
    an edit of that one character). Where that character is inside math (a
    backslash would change the TeX) or inside code, it cannot be escaped:
    :class:`PlaceholderError` names ``page`` and the line, and asks for the
    line to be rewritten.

    >>> text = "- with\\n  {{lab.n}}. The four"
    >>> start = text.index("{{")
    >>> guard_line_starts(text, [(start, start + len("{{lab.n}}"), "0")])
    [(9, 18, '0'), (18, 19, '\\\\.')]
    >>> guard_line_starts("At {{lab.n}}. The four", [(3, 12, "0")])
    [(3, 12, '0')]
    """
    fills = sorted(fills)
    values = [list(value) for _, _, value in fills]  # characters, so escapes can go in at any place
    inserts: dict[int, list[int]] = {}  # fill index -> offsets in its value that get an escape
    edits: list[tuple[int, int, str]] = []
    math: list[tuple[int, int]] | None = None
    prose: list[tuple[int, int]] | None = None

    def content(i: int, offset: int) -> tuple[str, list[tuple[int, int, int]]]:
        """The filled text from value ``i`` at ``offset`` to the end of its line, and where each character
        comes from: (position in the content, fill index or -1 for typed text, offset in the value or text)."""
        chars: list[str] = []
        origin: list[tuple[int, int, int]] = []
        j, k = i, offset
        while j < len(fills):
            value = fills[j][2]
            stop = value.find("\n", k)
            for n in range(k, len(value) if stop < 0 else stop):
                origin.append((len(chars), j, n))
                chars.append(value[n])
            if stop >= 0:
                break
            pos = fills[j][1]
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            following = fills[j + 1][0] if j + 1 < len(fills) else len(text)
            for n in range(pos, min(end, following)):
                origin.append((len(chars), -1, n))
                chars.append(text[n])
            if following >= end:
                break
            j, k = j + 1, 0
        return "".join(chars), origin

    def fail(i: int, what: str, where: str) -> PlaceholderError:
        start, end, value = fills[i]
        line = text.count("\n", 0, start) + 1
        return PlaceholderError(
            f"{page}:{line}: the placeholder {text[start:end]} begins a line, and its value {value!r} with what "
            f"follows would open {what}; it cannot be escaped {where}: rewrite the line so that the placeholder "
            "does not begin it"
        )

    def in_math(pos: int) -> bool:
        nonlocal math
        if math is None:
            math = [(m.start(), m.end()) for m in _MATH.finditer(_masked(text))]
        return any(a <= pos < b for a, b in math)

    starts: list[tuple[int, int]] = []
    previous_end = -1
    for i, (start, _end, value) in enumerate(fills):
        line_start = text.rfind("\n", 0, start) + 1
        if previous_end < line_start and _LINE_PREFIX.fullmatch(text, line_start, start):
            starts.append((i, 0))
        starts += [(i, n + 1) for n, c in enumerate(value) if c == "\n"]
        previous_end = _end
    for i, offset in starts:
        line, origin = content(i, offset)
        lead = len(line) - len(line.lstrip(" \t"))
        for what, pattern in BLOCK_STARTS:
            m = pattern.match(line, lead)
            if m is None:
                continue
            _, j, n = origin[m.start("mark")]
            if j >= 0:
                if in_math(fills[j][0]):
                    raise fail(i, what, "inside math")
                inserts.setdefault(j, []).append(n)
            else:
                if prose is None:
                    prose = prose_spans(text)
                if not any(a <= n < b for a, b in prose):
                    raise fail(i, what, "inside code or a comment")
                if in_math(n):
                    raise fail(i, what, "inside math")
                edits.append((n, n + 1, _escape(text[n])))
            break
    for j, offsets in inserts.items():
        for n in sorted(set(offsets), reverse=True):
            values[j][n] = _escape(values[j][n])
    return [(start, end, "".join(values[j])) for j, (start, end, _) in enumerate(fills)] + edits

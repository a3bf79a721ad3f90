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
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["PLACEHOLDER", "Placeholder", "PlaceholderError", "fill", "find", "format_value", "jsonable", "sci"]

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


def format_value(value: Any, spec: str) -> str:
    """Format one value with a Python format spec, or ``sci``/``sci.N`` (see :func:`sci`).

    >>> format_value(915.6, ".0f"), format_value(0.573, ".1%"), format_value(4.3e-5, "sci.1"), format_value(3, "")
    ('916', '57.3%', '4.3 × 10⁻⁵', '3')
    """
    if spec == "sci" or spec.startswith("sci."):
        digits = spec[4:] or "1"
        if not digits.isdigit():
            raise PlaceholderError(f"format spec {spec!r}: write sci or sci.N with N a whole number of decimals")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise PlaceholderError(f"format spec {spec!r} needs a number, got {value!r}")
        return sci(float(value), int(digits))
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

"""Tables of live values, rendered as Markdown tables.

A table builder returns a :class:`Table`: column headings, rows of cells, and
per-column alignment. Cells are strings, already formatted by the builder (so
the chapter's text and the table agree digit for digit); numbers are turned
into strings with ``str`` if a builder leaves them as numbers. A number a cell
writes in e-notation is shown as a power of ten, ``2.52e-05`` as ``2.52 × 10⁻⁵``
(:func:`powers_of_ten`): the value is the same, and reads as a reader writes it.
A number of three or more decimals loses its padding zeros, ``0.500000`` as
``0.5`` and ``1000.000`` as ``1000`` (:func:`unpadded`); two decimals stay, so
an interval such as ``[0.30, 0.47]`` keeps one precision.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

_E_NOTATION = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)e([-+]?)0*(\d+)(?![\w.])")
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def powers_of_ten(text: str) -> str:
    """Each number of ``text`` written in e-notation, written as a power of ten instead.

    >>> powers_of_ten("1.3e-10 [8e-12, 1e-08]; 2.5e+03; x1e5 and 0.25 stay")
    '1.3 × 10⁻¹⁰ [8 × 10⁻¹², 1 × 10⁻⁸]; 2.5 × 10³; x1e5 and 0.25 stay'
    """
    return _E_NOTATION.sub(
        lambda m: f"{m.group(1)} × 10{(m.group(2).replace('+', '') + m.group(3)).translate(_SUPERSCRIPT)}", text
    )


_PADDED = re.compile(r"(?<![\w.])(\d+)\.(\d{3,})(?![\w.])")
_CODE_OR_MATH = re.compile(r"(`[^`]*`|\\\(.*?\\\))")


def unpadded(text: str) -> str:
    r"""``text`` with the padding zeros of each number of three or more decimals dropped, outside code
    spans and ``\( \)`` mathematics.

    >>> unpadded("0.500000, 1000.000, 0.7290 and 0.30; `0.500` \\(0.250\\) stay")
    '0.5, 1000, 0.729 and 0.30; `0.500` \\(0.250\\) stay'
    """

    def trim(m: re.Match[str]) -> str:
        decimals = m.group(2).rstrip("0")
        return f"{m.group(1)}.{decimals}" if decimals else m.group(1)

    parts = _CODE_OR_MATH.split(text)
    return "".join(part if k % 2 else _PADDED.sub(trim, part) for k, part in enumerate(parts))


_POWER = re.compile(r"^\s*(-?\d+(?:\.\d+)?) × 10([⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)\s*$")


def cell_value(text: str) -> float:
    """The number a table cell shows, in either notation: the inverse of :func:`powers_of_ten` for one number.

    >>> cell_value(" 6.8 × 10⁻¹⁰"), cell_value("0.25"), cell_value("2.5 × 10³")
    (6.8e-10, 0.25, 2500.0)
    """
    m = _POWER.match(text)
    if m is None:
        return float(text)
    exponent = int(m.group(2).translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
    return float(f"{m.group(1)}e{exponent}")


@dataclass
class Table:
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    align: Sequence[str] | None = None  # "left", "right" or "center" per column
    notes: str | None = None
    _marks: dict = field(default_factory=lambda: {"left": ":---", "right": "---:", "center": ":---:"}, repr=False)

    def __post_init__(self) -> None:
        if not self.columns:
            raise ValueError("columns must name at least one column, got none")
        width = len(self.columns)
        for i, row in enumerate(self.rows):
            if len(row) != width:
                raise ValueError(f"rows[{i}] must have {width} cells (one per column), got {len(row)}")
        if not self.rows:
            raise ValueError("rows must hold at least one row, got none")
        if self.align is not None:
            if len(self.align) != width:
                raise ValueError(f"align must give one alignment per column ({width}), got {len(self.align)}")
            for a in self.align:
                if a not in self._marks:
                    raise ValueError(f"align entries must be 'left', 'right' or 'center', got {a!r}")

    @staticmethod
    def _cell(value: Any) -> str:
        text = unpadded(powers_of_ten(value if isinstance(value, str) else str(value)))
        return text.replace("|", r"\|").replace("\n", " ")

    def to_markdown(self, caption: str | None = None) -> str:
        align = self.align or ["right"] * len(self.columns)
        lines = []
        if caption:
            lines += [f'<p class="rnnmem-table-caption" markdown="span">{caption}</p>', ""]
        lines.append("| " + " | ".join(self._cell(c) for c in self.columns) + " |")
        lines.append("|" + "|".join(self._marks[a] for a in align) + "|")
        for row in self.rows:
            lines.append("| " + " | ".join(self._cell(c) for c in row) + " |")
        if self.notes:
            lines += ["", f'<p class="rnnmem-table-notes" markdown="span">{self.notes}</p>']
        return "\n".join(lines) + "\n"


def gradcheck_table(result: Any) -> Table:
    """A :class:`rnnmem.gradcheck.GradcheckResult` as a page's table: one row per block, errors to two digits.

    >>> from rnnmem.gradcheck import GradcheckResult
    >>> print(gradcheck_table(GradcheckResult([("h0", 3e-11)])).to_markdown(), end="")
    | block | worst relative error |
    |:---|---:|
    | `h0` | 3.0 × 10⁻¹¹ |
    """
    return Table(
        columns=["block", "worst relative error"],
        rows=[[f"`{name}`", f"{err:.1e}"] for name, err in result.rows],
        align=["left", "right"],
    )

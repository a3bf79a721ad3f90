"""Plain-text tables for the command line: the pages' cells, aligned in columns."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["text_table"]


def text_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """``title``, a rule, then the columns aligned (first column left, the others right).

    >>> print(text_table("T", ["a", "b"], [["x", "1.5"], ["yy", "10"]]))
    T
    -
    a     b
    x   1.5
    yy   10
    """
    cells = [list(map(str, columns))] + [list(map(str, r)) for r in rows]
    widths = [max(len(r[k]) for r in cells) for k in range(len(columns))]
    lines = [title, "-" * len(title)]
    for r in cells:
        parts = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)

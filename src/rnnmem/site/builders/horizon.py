"""Figures and tables of the chapter "How far back memory reaches"."""

from __future__ import annotations

import numpy as np

from rnnmem import memory
from rnnmem.checks import check_list, check_open_unit, check_positive_int

from ..registry import figure, table
from ..style import new_figure
from ..tables import Table


def _gates(name: str, values) -> list[float]:
    return check_list(name, values, check_open_unit, "gate values")


@figure()
def decay_curves(factors=(0.9, 0.99, 0.999), steps=1000, level=None):
    """f^n against n on a logarithmic axis, one line per factor; optional level line."""
    factors = _gates("factors", factors)
    steps = check_positive_int("steps", steps)
    n = np.arange(steps + 1)
    fig, ax = new_figure()
    for f in factors:
        ax.semilogy(n, memory.decay(f, n), label=f"$f = {f}$")
    if level is not None:
        level = check_open_unit("level", level)
        ax.axhline(level, color="#777777", linestyle="--", linewidth=1.0)
        ax.annotate(f"level {level:g}", (steps, level), textcoords="offset points", xytext=(-4, 4),
                    ha="right", va="bottom", color="#555555")
    ax.set_xlim(0, steps)
    smallest = min(memory.decay(f, steps) for f in factors)
    floor = level / 100 if level is not None else 1e-6
    ax.set_ylim(bottom=max(floor, smallest / 2), top=1.5)
    ax.set_xlabel("steps back, $n$")
    ax.set_ylabel("factor left, $f^n$")
    ax.legend(loc="lower left")
    return fig


@figure()
def horizon_vs_gate(level=0.01, low=0.5, high=0.999):
    """Level and e-fold horizons, with the e-fold bounds, against the gate value (log axes)."""
    level = check_open_unit("level", level)
    low, high = check_open_unit("low", low), check_open_unit("high", high)
    if not low < high:
        raise ValueError(f"low must be below high, got low={low}, high={high}")
    one_minus = np.geomspace(1 - low, 1 - high, 400)
    f = 1 - one_minus
    lower, upper = memory.efold_bounds(f)
    fig, ax = new_figure()
    ax.loglog(one_minus, memory.horizon(f, level), label=f"{level:g}-level horizon  $\\ln {level:g} / \\ln f$")
    ax.loglog(one_minus, memory.efold_horizon(f), label="e-fold horizon  $-1/\\ln f$")
    ax.fill_between(one_minus, lower, upper, color="#999999", alpha=0.3, linewidth=0,
                    label="bounds  $f/(1-f)$ to $1/(1-f)$")
    ax.invert_xaxis()
    ax.set_xlabel("distance of the gate from one, $1 - f$")
    ax.set_ylabel("steps")
    ax.legend(loc="upper left")
    return fig


@table()
def horizon_table(factors=(0.5, 0.9, 0.95, 0.99, 0.999), level=0.01, steps=100):
    """For each factor: f^steps, the level horizon, the e-fold horizon and its bounds."""
    factors = _gates("factors", factors)
    level = check_open_unit("level", level)
    steps = check_positive_int("steps", steps)
    rows = []
    for f in factors:
        lo, hi = memory.efold_bounds(f)
        rows.append([f"{f:g}", f"{memory.decay(f, steps):.6f}", f"{memory.horizon(f, level):.1f}",
                     f"{lo:.3f}", f"{memory.efold_horizon(f):.3f}", f"{hi:.3f}"])
    pct = f"{level:.0%}" if level >= 0.01 else f"{level:g}"
    return Table(
        columns=["gate \\(f\\)", f"\\(f^{{{steps}}}\\)", f"{pct} horizon", "\\(f/(1-f)\\)",
                 "e-fold horizon \\(-1/\\ln f\\)", "\\(1/(1-f)\\)"],
        rows=rows,
    )


@table()
def bias_table(gates=(0.5, 0.731059, 0.8808, 0.95, 0.9848), level=0.01):
    """For each target gate value: the bias that starts the gate there, and its horizons."""
    gates = _gates("gates", gates)
    level = check_open_unit("level", level)
    rows = []
    for f in gates:
        rows.append([f"{f:g}", f"{memory.bias_for_gate(f):.2f}", f"{memory.horizon(f, level):.1f}",
                     f"{memory.efold_horizon(f):.2f}", f"{memory.mean_lifetime(f):.2f}"])
    pct = f"{level:.0%}" if level >= 0.01 else f"{level:g}"
    return Table(columns=["gate \\(f\\)", "bias \\(b = \\ln\\frac{f}{1-f}\\)", f"{pct} horizon",
                          "e-fold horizon", "\\(1/(1-f)\\)"], rows=rows)

"""Figures and tables of the chapter "How far back memory reaches"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import numpy as np

from rnnmem import leaky, memory
from rnnmem.checks import Check, OpenUnit, PositiveInt, check_positive

from ..registry import figure, table
from ..style import PALETTE, new_figure
from ..tables import Table


def _time_constant(name: str, value) -> float:
    t = float(check_positive(name, value))
    if t <= 1 or t != int(t):
        raise ValueError(f"{name} must be a whole number of steps greater than 1, got {value!r}")
    return t


#: A leaky unit's time constant as :func:`leaky_pulse` draws it: a whole number of steps above 1.
TimeConstant = Annotated[float, Check(_time_constant, "time constants (whole numbers of steps greater than 1)")]


def _key(f: float) -> str:
    """A factor as the key of a builder value: ``0.99`` -> ``"0.99"``."""
    return f"{f:g}"


@figure()
def decay_curves(
    factors: Sequence[OpenUnit] = (0.9, 0.99, 0.999), steps: PositiveInt = 1000, level: OpenUnit | None = None
):
    """f^n against n on a logarithmic axis, one line per factor; optional level line.

    Values: ``steps``; ``left[f]``, what is left after ``steps``; with a
    level, ``level``, ``crossing[f]``, the step where f^n falls to it (None
    when beyond ``steps``), and ``crossed`` / ``above``, the factors that do
    and do not cross it within ``steps``.
    """
    n = np.arange(steps + 1)
    fig, ax = new_figure()
    for f in factors:
        ax.semilogy(n, memory.decay(f, n), label=f"$f = {f}$")
    values = {"steps": steps, "left": {_key(f): memory.decay(f, steps) for f in factors}}
    if level is not None:
        ax.axhline(level, color="#777777", linestyle="--", linewidth=1.0)
        ax.annotate(
            f"level {level:g}",
            (steps, level),
            textcoords="offset points",
            xytext=(-4, 4),
            ha="right",
            va="bottom",
            color="#555555",
        )
        crossing = {_key(f): memory.horizon(f, level) for f in factors}
        values.update(
            level=level,
            crossing={k: (v if v <= steps else None) for k, v in crossing.items()},
            crossed=[k for k, v in crossing.items() if v <= steps],
            above=[k for k, v in crossing.items() if v > steps],
        )
    ax.set_xlim(0, steps)
    smallest = min(memory.decay(f, steps) for f in factors)
    floor = level / 100 if level is not None else 1e-6
    ax.set_ylim(bottom=max(floor, smallest / 2), top=1.5)
    ax.set_xlabel("steps back, $n$")
    ax.set_ylabel("factor left, $f^n$")
    ax.legend(loc="lower left")
    return fig, values


@figure()
def horizon_vs_gate(level: OpenUnit = 0.01, low: OpenUnit = 0.5, high: OpenUnit = 0.999):
    """Level and e-fold horizons, with the e-fold bounds, against the gate value (log axes).

    Values: ``factor``, the level horizon over the e-fold one (-ln level, the
    same at every gate, checked on the curve drawn); ``inside``, whether the
    e-fold horizon lies between its bounds at every point drawn.
    """
    if not low < high:
        raise ValueError(f"low must be below high, got low={low}, high={high}")
    one_minus = np.geomspace(1 - low, 1 - high, 400)
    f = 1 - one_minus
    lower, upper = memory.efold_bounds(f)
    fig, ax = new_figure()
    ax.loglog(one_minus, memory.horizon(f, level), label=f"{level:g}-level horizon  $\\ln {level:g} / \\ln f$")
    ax.loglog(one_minus, memory.efold_horizon(f), label="e-fold horizon  $\\tau = -1/\\ln f$")
    ax.fill_between(
        one_minus, lower, upper, color="#999999", alpha=0.3, linewidth=0, label="bounds  $f/(1-f)$ to $1/(1-f)$"
    )
    ax.invert_xaxis()
    ax.set_xlabel("distance of the gate from one, $1 - f$")
    ax.set_ylabel("steps")
    ax.legend(loc="upper left")
    ratio = memory.horizon(f, level) / memory.efold_horizon(f)
    tau = memory.efold_horizon(f)
    return fig, {
        "level": level,
        "factor": float(np.median(ratio)),
        "factor_spread": float(ratio.max() - ratio.min()),
        "inside": bool(np.all((lower < tau) & (tau < upper))),
    }


_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def readable(x: float, digits: int = 2) -> str:
    """A fraction for a table cell: 0.366 as it is, 7.9e-31 as ``7.9 × 10⁻³¹``.

    Values from 0.01 up are printed with three decimals; smaller ones with
    ``digits`` significant digits times a power of ten, so that no cell shows
    a row of zeros.
    """
    if x >= 0.01 or x == 0:
        return f"{x:.3f}"
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


@table()
def horizon_table(
    factors: Sequence[OpenUnit] = (0.5, 0.9, 0.95, 0.99, 0.999), level: OpenUnit = 0.01, steps: PositiveInt = 100
):
    """For each factor: f^steps, the level horizon, the e-fold horizon and its bounds."""
    rows = []
    for f in factors:
        lo, hi = memory.efold_bounds(f)
        rows.append(
            [
                f"{f:g}",
                readable(memory.decay(f, steps)),
                f"{memory.horizon(f, level):.1f}",
                f"{lo:.3f}",
                f"{memory.efold_horizon(f):.3f}",
                f"{hi:.3f}",
            ]
        )
    pct = f"{level:.0%}" if level >= 0.01 else f"{level:g}"
    return Table(
        columns=[
            "gate \\(f\\)",
            f"\\(f^{{{steps}}}\\)",
            f"{pct} horizon",
            "\\(f/(1-f)\\)",
            "e-fold horizon \\(\\tau = -1/\\ln f\\)",
            "\\(1/(1-f)\\)",
        ],
        rows=rows,
    )


@table()
def bias_table(gates: Sequence[OpenUnit] = (0.5, 0.731059, 0.8808, 0.95, 0.9848), level: OpenUnit = 0.01):
    """For each target gate value: the bias that starts the gate there, and its horizons."""
    rows = []
    for f in gates:
        rows.append(
            [
                f"{f:g}",
                f"{memory.bias_for_gate(f):.2f}",
                f"{memory.horizon(f, level):.1f}",
                f"{memory.efold_horizon(f):.2f}",
                f"{memory.mean_lifetime(f):.2f}",
            ]
        )
    pct = f"{level:.0%}" if level >= 0.01 else f"{level:g}"
    return Table(
        columns=[
            "gate \\(f\\)",
            "bias \\(b = \\ln\\frac{f}{1-f}\\)",
            f"{pct} horizon",
            "e-fold horizon",
            "\\(1/(1-f)\\)",
        ],
        rows=rows,
    )


@figure()
def leaky_pulse(taus: Sequence[TimeConstant] = (2, 10, 50), steps: PositiveInt = 150):
    """What leaky units keep of a pulse, exact leak e^(-1/tau) (solid) against Euler's 1 - 1/tau (dashed).

    Values: ``exact[tau]`` and ``euler[tau]``, the share of the pulse left
    ``tau`` steps after it (whole ``tau`` only); ``e``, the share 1/e.
    """
    pulse = np.zeros(steps + 1)
    pulse[0] = 1.0
    n = np.arange(steps + 1)
    fig, ax = new_figure()
    values: dict[str, Any] = {"e": float(np.exp(-1.0)), "exact": {}, "euler": {}}
    for k, tau in enumerate(taus):
        colour = PALETTE[k % len(PALETTE)]
        for scheme, style in (("exact", "-"), ("euler", "--")):
            h = leaky.run(pulse, tau, discretization=scheme)
            kept = h / h[0]
            ax.semilogy(
                n, kept, color=colour, linestyle=style, label=f"$\\tau = {tau:g}$" if scheme == "exact" else None
            )
            if tau <= steps:
                values[scheme][f"{tau:g}"] = float(kept[int(tau)])
        if tau <= steps:
            ax.plot([tau], [np.exp(-1.0)], "o", color=colour, markersize=4)
    ax.axhline(np.exp(-1.0), color="#777777", linestyle=":", linewidth=1.0)
    ax.annotate("$1/e$", (steps, np.exp(-1.0)), textcoords="offset points", xytext=(-4, 4), ha="right", color="#555555")
    ax.set_xlim(0, steps)
    ax.set_ylim(1e-4, 1.5)
    ax.set_xlabel("steps after the pulse, $n$")
    ax.set_ylabel("share of the pulse kept")
    ax.legend(loc="lower right", title="solid: exact; dashed: Euler", fontsize=9, title_fontsize=9)
    return fig, values

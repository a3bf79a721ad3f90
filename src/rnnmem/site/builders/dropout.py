"""Figures and tables of the chapter "Regularizing without forgetting"."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Any

import numpy as np

from rnnmem import dropout
from rnnmem.checks import Check, NonNegativeInt, PositiveInt

from ..registry import figure, table
from ..style import PALETTE, new_figure
from ..tables import Table

#: How the chapter names the three schemes of :data:`rnnmem.dropout.SCHEMES`.
LABELS = {
    "recurrent": "a fresh mask every step",
    "vertical": "between layers only",
    "variational": "one mask per sequence",
}
SHORT = {"recurrent": "per step", "vertical": "between layers", "variational": "per sequence"}


def _keep(name: str, value) -> float:
    if isinstance(value, str):  # numpy would read "0.9" as a number; a directive should not
        raise ValueError(f"{name} must be a keep probability in (0, 1], a number, got {value!r}")
    return dropout.check_keep(name, value)


#: A keep probability, :func:`rnnmem.dropout.check_keep`: a number in (0, 1].
Keep = Annotated[float, Check(_keep, "keep probabilities in (0, 1]")]


def _big(value: float) -> str:
    """A variance or probability for a table: plain with separators when modest, a power of ten otherwise."""
    if value == 0:
        return "0"
    if 1e-3 <= abs(value) < 1e6:
        digits = max(0, 3 - int(math.floor(math.log10(abs(value)))))
        return f"{value:,.{digits}f}"
    exponent = int(math.floor(math.log10(abs(value))))
    mantissa = value / 10**exponent
    return f"\\({mantissa:.2f} \\times 10^{{{exponent}}}\\)"


@figure()
def dropout_spread(
    keep: Keep = 0.9,
    steps: PositiveInt = 100,
    depth: PositiveInt = 2,
    runs: PositiveInt = 100_000,
    min_runs: PositiveInt = 100,
    seed: NonNegativeInt = 0,
):
    """Variance and untouched chance of a carried value against steps, simulated and analytic, per scheme."""
    if min_runs > runs:
        raise ValueError(f"min_runs must be at most runs ({runs}), got {min_runs}")
    fig, (left, right) = new_figure(ncols=2, height=4.6)
    values: dict[str, Any] = {
        "runs": runs,
        "min_runs": min_runs,
        "steps": steps,
        "first_variance": {},
        "last_variance": {},
        "last_untouched": {},
        "last_seen": {},
    }
    for colour, scheme in zip(PALETTE, dropout.SCHEMES):
        sim = dropout.simulate_carried_state(scheme, steps, keep, runs=runs, depth=depth, seed=seed)
        seen = np.rint(sim.untouched * runs) >= min_runs
        values["first_variance"][scheme] = float(sim.analytic_variance[0])
        values["last_variance"][scheme] = float(sim.analytic_variance[-1])
        values["last_untouched"][scheme] = float(sim.analytic_untouched[-1])
        values["last_seen"][scheme] = int(sim.steps[seen].max()) if seen.any() else 0
        left.semilogy(sim.steps, sim.analytic_variance, color=colour, label=LABELS[scheme])
        left.plot(sim.steps[seen], sim.variance[seen], "o", color=colour, markersize=2.2, alpha=0.7)
        right.semilogy(sim.steps, sim.analytic_untouched, color=colour, label=LABELS[scheme])
        right.plot(sim.steps[seen], sim.untouched[seen], "o", color=colour, markersize=2.2, alpha=0.7)
    left.set_ylabel("variance of the carried value")
    left.set_title("spread: $(1/p)^n - 1$", fontsize=10)
    right.set_ylabel("chance it arrives untouched")
    right.set_title("survival: $p^n$", fontsize=10)
    right.set_ylim(top=1.5)
    for ax in (left, right):
        ax.set_xlim(0, steps)
    fig.supxlabel("step at which the value is read, $t$")
    from matplotlib.lines import Line2D

    key = [
        Line2D([], [], color="#777777", label="formula"),
        Line2D([], [], marker="o", linestyle="none", color="#777777", markersize=3, label=f"simulated, {runs:,} runs"),
    ]
    fig.legend(handles=right.get_legend_handles_labels()[0] + key, loc="outside upper center", frameon=False)
    return fig, values


@table()
def dropout_survival_table(
    keep: Keep = 0.9, steps: Sequence[NonNegativeInt] = (1, 10, 50, 100, 1000), depth: PositiveInt = 2
):
    """For each length: the masks a carried value meets and its chance to arrive untouched, per scheme."""
    rows = []
    for scheme in dropout.SCHEMES:
        counts = [dropout.perturbation_count(scheme, t, depth) for t in steps]
        rows.append([f"{SHORT[scheme]}: masks met", *(f"{n:,}" for n in counts)])
        rows.append([f"{SHORT[scheme]}: untouched", *(_big(dropout.untouched_probability(keep, n)) for n in counts)])
    return Table(
        columns=["scheme", *(f"\\(t\\) = {t:,}" for t in steps)],
        rows=rows,
        align=["left", *(["right"] * len(steps))],
        notes=f"Keep probability \\(p = {keep:g}\\); {depth} vertical connections for the between-layers scheme.",
    )


@table()
def mask_variance_table(
    keeps: Sequence[Keep] = (0.5, 0.8, 0.9, 0.95, 0.99), masks: Sequence[NonNegativeInt] = (1, 2, 3, 10, 100)
):
    """The variance (1/p)^n - 1 of a product of n inverted masks, for each keep probability p."""
    rows = [[f"{p:g}", *(_big(dropout.mask_product_variance(p, n)) for n in masks)] for p in keeps]
    return Table(columns=["keep \\(p\\)", *(f"\\(n\\) = {n:,}" for n in masks)], rows=rows)

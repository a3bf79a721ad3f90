"""Figures and tables of the chapter "Counting and scaling"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from rnnmem import cells, params, scaling
from rnnmem.checks import Bool, OpenUnit, Positive, PositiveInt

from ..registry import figure, table
from ..style import PALETTE, new_figure
from ..tables import Table


def _n(value: int) -> str:
    """A count for a formula: separators from five digits up, so that widths stay short."""
    return f"{value:,}" if value >= 10_000 else str(value)


def _layer_formula(cell: str, d_in: int, d_h: int, convention: str, reset_after: bool) -> str:
    g, nb = cells.GATES[cell], params.bias_vectors(cell, convention, reset_after)
    return f"{g} × {_n(d_h)} × ({_n(d_in)} + {_n(d_h)} + {nb})"


@table()
def model_tally_table(
    vocab: PositiveInt = 10_000,
    d_emb: PositiveInt = 1500,
    d_h: PositiveInt = 1500,
    layers: PositiveInt = 2,
    cell: Literal["rnn", "gru", "lstm"] = "lstm",
    convention: Literal["textbook", "pytorch", "keras"] = "textbook",
    reset_after: Bool = True,
    tied: Bool = False,
    output_bias: Bool = True,
):
    """A recurrent language model's parameters, part by part, with the formula and share of each.

    The cells are those the book teaches, :data:`rnnmem.cells.TAUGHT`, the conventions those of
    :data:`rnnmem.params.CONVENTIONS` (a test holds the two lists to them).
    """
    tally = params.model_parameters(
        vocab,
        d_emb,
        d_h,
        layers,
        cell=cell,
        convention=convention,
        reset_after=reset_after,
        tied=tied,
        output_bias=output_bias,
    )
    formulas = [f"{_n(vocab)} × {_n(d_emb)}"]
    formulas += [_layer_formula(cell, d_emb if k == 0 else d_h, d_h, convention, reset_after) for k in range(layers)]
    if tied:
        formulas.append(f"{_n(vocab)} (bias; weights shared with the embedding)" if output_bias else "shared")
    else:
        formulas.append(f"{_n(d_h)} × {_n(vocab)}" + (f" + {_n(vocab)}" if output_bias else ""))
    rows = [[part, formula, f"{n:,}", f"{n / tally.total:.2%}"] for (part, n), formula in zip(tally.rows, formulas)]
    rows.append(["vocabulary tables", "embedding + readout", f"{tally.vocabulary:,}", f"{tally.vocabulary_share:.2%}"])
    rows.append(
        ["non-embedding", "the recurrent stack", f"{tally.non_embedding:,}", f"{tally.non_embedding_share:.2%}"]
    )
    rows.append(["**total**", "", f"**{tally.total:,}**", "100.00%"])
    return Table(
        columns=["part", "formula", "parameters", "share"], rows=rows, align=["left", "left", "right", "right"]
    )


@table()
def cell_convention_table(d_in: PositiveInt = 100, d_h: PositiveInt = 500):
    """One layer of each cell under the three bias conventions, with the GRU's saving and ratio."""
    conventions = [("textbook", True), ("pytorch", True), ("keras", True)]
    counts = {c: {conv: params.layer_count(c, d_in, d_h, conv, ra) for conv, ra in conventions} for c in cells.TAUGHT}
    rows = [
        [f"{cells.LABELS[c]} (\\(G = {cells.GATES[c]}\\))", *(f"{counts[c][conv]:,}" for conv, _ in conventions)]
        for c in cells.TAUGHT
    ]
    rows.append(["LSTM − GRU", *(f"{counts['lstm'][conv] - counts['gru'][conv]:,}" for conv, _ in conventions)])
    rows.append(["GRU / LSTM", *(f"{counts['gru'][conv] / counts['lstm'][conv]:.4f}" for conv, _ in conventions)])
    one_bias_gru = params.layer_count("gru", d_in, d_h, "keras", reset_after=False)
    return Table(
        columns=["one layer", "one bias per gate", "PyTorch (two biases)", "Keras (defaults)"],
        rows=rows,
        align=["left", "right", "right", "right"],
        notes=f"Input width \\(d = {d_in:,}\\), hidden width \\(H = {d_h:,}\\). Keras: one bias for "
        f"<code>SimpleRNN</code> and <code>LSTM</code>, two for <code>GRU</code> with its default "
        f"<code>reset_after=True</code>; with <code>reset_after=False</code> its GRU holds {one_bias_gru:,}.",
    )


@figure()
def error_vs_data(
    improvements: Sequence[OpenUnit] = (0.3, 0.4),
    data0: Positive = 12_000,
    error0: Positive = 0.10,
    decades: Positive = 2.5,
    target: OpenUnit = 0.5,
):
    """Error against data on log-log axes, one power law per improvement, with the target points marked."""
    for gamma in improvements:
        needed = scaling.decades_for(target, scaling.exponent_per_tenfold(gamma))
        if needed > decades:
            raise ValueError(
                f"decades must reach every marked point: an improvement of {gamma:g} needs "
                f"{needed:.2f} decades to multiply the error by {target:g}, got decades={decades:g}"
            )
    curves = scaling.error_curves(improvements, data0, error0, decades=decades, points=200)
    fig, ax = new_figure(height=3.8)
    goal = error0 * target
    values: dict[str, Any] = {"goal": goal, "slope": {}, "hours": {}, "multiple": {}, "percent": {}}
    bottom, top = goal / 2.5, error0 * 1.4
    ax.axhline(goal, color="#777777", linestyle="--", linewidth=1.0)
    ax.annotate(
        f"{goal:g} = {error0:g} × {target:g}",
        (data0, goal),
        textcoords="offset points",
        xytext=(0, 4),
        ha="left",
        va="bottom",
        color="#555555",
    )
    for colour, gamma in zip(PALETTE, improvements):
        beta = scaling.exponent_per_tenfold(gamma)
        ax.loglog(
            curves["data"],
            curves["curves"][gamma],
            color=colour,
            label=f"$\\gamma$ = {gamma:.0%} per tenfold, $\\beta = {beta:.3f}$",
        )
        d = scaling.data_needed(data0, error0, goal, beta)
        key = f"{gamma:g}"
        values["slope"][key], values["hours"][key] = beta, d
        values["multiple"][key], values["percent"][key] = scaling.data_multiple(target, beta), 100 * gamma
        ax.plot([d], [goal], "o", color=colour, markersize=6)
        ax.vlines(d, bottom, goal, colors=colour, linestyles=":", linewidth=1.2)
        ax.annotate(
            f"{d:,.0f}\n× {scaling.data_multiple(target, beta):.1f}",
            (d, 0.0),
            xycoords=("data", "axes fraction"),
            textcoords="offset points",
            xytext=(-4, 4),
            ha="right",
            va="bottom",
            color=colour,
            fontsize=9,
        )
    ax.plot([data0], [error0], "o", color="#555555", markersize=5)
    ax.annotate(
        f"start: {error0:g} at {data0:,.0f}",
        (data0, error0),
        textcoords="offset points",
        xytext=(6, 4),
        ha="left",
        va="bottom",
        color="#555555",
        fontsize=9,
    )
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ax.set_ylim(bottom, top)
    grid = np.ravel(np.array([1, 2, 3, 5, 7])[:, None] * 10.0 ** np.arange(-9, 10))
    ticks = sorted(float(v) for v in grid if bottom <= v <= top)
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlim(data0 / 1.3, curves["data"][-1])
    ax.set_xlabel("training data (hours), $D$")
    ax.set_ylabel("error, $E(D)$")
    fig.legend(loc="outside lower center", frameon=False)
    return fig, values

"""Figures and tables of the chapter "Gates: the LSTM and the GRU"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from rnnmem import cells, gate_arithmetic, memory, params
from rnnmem.checks import Finite, OpenUnit, PositiveInt

from ..placeholders import significant
from ..registry import figure, table
from ..style import PALETTE, new_figure
from ..tables import Table


def _pair(v) -> str:
    return "(" + ", ".join(f"{float(a):.6f}" for a in v) + ")"


@figure()
def gradient_highway(
    gates: Sequence[OpenUnit] = (0.99, 0.5),
    steps: PositiveInt = 500,
    level: OpenUnit = 0.01,
    mark: PositiveInt = 50,
    floor: OpenUnit = 1e-18,
):
    """f^n along the cell for each forget value, log axis, with the level line.

    Each line is marked at the last step, or at ``mark`` if it has fallen below
    ``floor`` (the bottom of the plot) by then.
    """
    if mark > steps:
        raise ValueError(f"mark must be a step within the plot (at most steps={steps}), got {mark}")
    n = np.arange(steps + 1)
    fig, ax = new_figure(height=3.6)
    values: dict[str, Any] = {"left": {}, "at": {}, "horizon": {}, "level": level}
    for k, f in enumerate(gates):
        color = PALETTE[k % len(PALETTE)]
        curve = memory.decay(f, n)
        shown = curve >= floor / 10
        ax.semilogy(n[shown], curve[shown], color=color, label=f"forget gate $f = {f:g}$")
        at = steps if memory.decay(f, steps) >= floor else mark
        left = memory.decay(f, at)
        values["left"][f"{f:g}"], values["at"][f"{f:g}"] = left, at
        values["horizon"][f"{f:g}"] = memory.horizon(f, level=level)
        if left < floor:
            continue
        text = f"{left:.2%}" if left >= 1e-3 else significant(left, 2)
        ax.plot([at], [left], "o", color=color, markersize=4, clip_on=False)
        if at == steps:
            ax.annotate(
                f"{text} at step {at}",
                (at, left),
                textcoords="offset points",
                xytext=(-6, -6),
                ha="right",
                va="top",
                color=color,
            )
        else:
            ax.annotate(
                f"{text} at step {at}",
                (at, left),
                textcoords="offset points",
                xytext=(8, 0),
                ha="left",
                va="center",
                color=color,
            )
    ax.axhline(level, color="#777777", linestyle="--", linewidth=1.0)
    ax.annotate(
        f"{level:.0%} level" if level >= 0.01 else f"level {level:g}",
        (steps * 0.45, level),
        textcoords="offset points",
        xytext=(0, -4),
        ha="center",
        va="top",
        color="#555555",
    )
    ax.set_xlim(0, steps)
    ax.set_ylim(floor, 3)
    # Every third power of ten from 10^0 down: the curves start at 1, so 1 is labelled.
    ax.set_yticks([10.0**k for k in range(0, int(np.floor(np.log10(floor))) - 1, -3)])
    ax.set_xlabel("steps back along the cell, $n$")
    ax.set_ylabel("gradient left, $f^n$")
    ax.legend(loc="center right")
    return fig, values


@figure()
def gru_update_conventions(h_prev: Finite = 0.8, r: OpenUnit = 0.25, mark: OpenUnit = 0.9):
    """The new GRU state against the update gate z, under both update conventions (one unit, no input)."""
    z = np.linspace(0.0, 1.0, 201)
    fig, ax = new_figure(height=3.8)
    labels = {
        "z_keeps": "$h_t = z\\,h_{t-1} + (1-z)\\,n_t$  (PyTorch, Keras, Cho et al.)",
        "z_writes": "$h_t = (1-z)\\,h_{t-1} + z\\,n_t$  (Chung et al., Olah)",
    }
    for k, update in enumerate(("z_keeps", "z_writes")):
        color = PALETTE[k]
        h = gate_arithmetic.gru_update(h_prev, z=z, r=r, update=update).h
        ax.plot(z, h, color=color, label=labels[update])
        at = gate_arithmetic.gru_update(h_prev, z=mark, r=r, update=update).h
        ax.plot([mark], [at], "o", color=color, markersize=5)
        ax.annotate(
            significant(at, 4),
            (mark, at),
            textcoords="offset points",
            xytext=(-8, 0),
            ha="right",
            va="center",
            color=color,
        )
    n = gate_arithmetic.gru_update(h_prev, z=mark, r=r).n
    ax.axhline(h_prev, color="#777777", linestyle=":", linewidth=1.0)
    ax.axhline(n, color="#777777", linestyle=":", linewidth=1.0)
    ax.annotate(
        f"old state {h_prev:g}",
        (0.0, h_prev),
        textcoords="offset points",
        xytext=(4, 4),
        ha="left",
        va="bottom",
        color="#555555",
    )
    ax.annotate(
        f"candidate {significant(n, 4)}",
        (0.0, n),
        textcoords="offset points",
        xytext=(4, -4),
        ha="left",
        va="top",
        color="#555555",
    )
    ax.axvline(mark, color="#999999", linewidth=0.8)
    ax.set_xlim(0, 1)
    low, high = min(h_prev, n), max(h_prev, n)
    pad = 0.15 * (high - low or 1.0)
    ax.set_ylim(low - pad, high + 2.2 * pad)
    ax.set_xlabel("update gate $z$")
    ax.set_ylabel("new state $h_t$")
    fig.legend(loc="outside lower center")
    values = {
        "candidate": n,
        "mark": mark,
        **{
            update: gate_arithmetic.gru_update(h_prev, z=mark, r=r, update=update).h
            for update in ("z_keeps", "z_writes")
        },
    }
    return fig, values


@table()
def gru_conventions(h_prev: Finite = 0.8, z: OpenUnit = 0.9, r: OpenUnit = 0.25):
    """Both update conventions and both reset placements: who uses each, and one scalar and one two-unit step.

    The rows are :func:`rnnmem.gate_arithmetic.gru_conventions`.
    """
    rows = [
        [f"`{c.update}`", f"`{c.reset}`", c.used_by, f"{c.one.h:.6f}", _pair(c.two.n), _pair(c.two.h)]
        for c in gate_arithmetic.gru_conventions(h_prev, z=z, r=r)
    ]
    values = {"candidate": gate_arithmetic.gru_update(h_prev, z=z, r=r).n}
    return Table(
        columns=[
            "`update=`",
            "`reset=`",
            "used by",
            "one unit: \\(h_t\\)",
            "two units: \\(n_t\\)",
            "two units: \\(h_t\\)",
        ],
        rows=rows,
        align=["left", "left", "left", "right", "right", "right"],
    ), values


@table()
def mechanisms(d: PositiveInt = 100, H: PositiveInt = 500):
    """The tanh RNN, the LSTM and the GRU side by side, with their parameter counts for widths d and H."""
    count = {cell: params.layer_count(cell, d, H) for cell in cells.TAUGHT}
    rows = [
        [
            "tanh RNN, no gates",
            "\\(h_t\\)",
            "\\(W_{hh}\\), then tanh",
            "in the same sum, through the same tanh",
            f"{count['rnn']:,}",
            "\\(\\operatorname{diag}(1 - h_t^2)\\, W_{hh}\\)",
        ],
        [
            "LSTM, gates \\(i, f, o\\)",
            "\\(c_t\\) and \\(h_t\\)",
            "\\(f_t\\) scales \\(c_{t-1}\\)",
            "\\(i_t\\) scales \\(g_t\\); \\(o_t\\) exposes \\(\\tanh c_t\\)",
            f"{count['lstm']:,}",
            "\\(\\operatorname{diag}(f_t)\\) along \\(c\\)",
        ],
        [
            "GRU, gates \\(r, z\\) (\\(z\\) keeps)",
            "\\(h_t\\)",
            "\\(z_t\\) scales \\(h_{t-1}\\)",
            "\\(1 - z_t\\) scales \\(n_t\\); \\(r_t\\) sets what \\(n_t\\) sees",
            f"{count['gru']:,}",
            "\\(\\operatorname{diag}(z_t)\\) plus paths through the gates and \\(n_t\\)",
        ],
    ]
    return Table(
        columns=[
            "cell",
            "carries",
            "keeps the old by",
            "lets the new in by",
            f"parameters, \\(d = {d}\\), \\(H = {H}\\)",
            "one-step derivative along the state",
        ],
        rows=rows,
        align=["left", "left", "left", "left", "right", "left"],
    )


@table()
def gate_costs(d: PositiveInt = 100, H: PositiveInt = 500):
    """Parameters of one layer of each cell under the three bias conventions, and the share of the LSTM."""
    lstm_count = params.layer_count("lstm", d, H)
    rows = []
    for cell in cells.TAUGHT:
        G = cells.GATES[cell]
        one = params.layer_count(cell, d, H)
        rows.append(
            [
                cells.LABELS[cell],
                str(G),
                f"{one:,}",
                f"{params.layer_count(cell, d, H, 'pytorch'):,}",
                f"{params.layer_count(cell, d, H, 'keras'):,}",
                f"{one / lstm_count:.2f}",
            ]
        )
    return Table(
        columns=[
            "cell",
            "blocks \\(G\\)",
            "one bias per block",
            "PyTorch (two biases)",
            "Keras (default)",
            "share of the LSTM",
        ],
        rows=rows,
        align=["left", "right", "right", "right", "right", "right"],
    )


@table()
def cell_weights(cell: Literal["lstm", "gru"] = "lstm"):
    """Every weight row of the chapter's two-unit cell (columns x1, x2, h1, h2), its bias and its activation."""
    two = gate_arithmetic.two_unit_rows(cell)
    rows = [
        [
            f"\\({r.gate}\\), unit {r.unit}",
            *(f"{w:.6f}" for w in r.weights),
            f"{r.bias:g}",
            "depends on the reset" if r.value is None else f"{r.value:.6f}",
        ]
        for r in two
    ]
    values: dict[str, dict[str, list[float]]] = {"gates": {}}
    for r in two:
        if r.value is not None:
            values["gates"].setdefault(str(r.gate), []).append(r.value)
    return Table(
        columns=["row", "\\(x_1\\)", "\\(x_2\\)", "\\(h_1\\)", "\\(h_2\\)", "bias", "value"],
        rows=rows,
        align=["left", "right", "right", "right", "right", "right", "right"],
    ), values

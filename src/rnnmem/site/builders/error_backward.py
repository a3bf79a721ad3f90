"""Figures and tables of the chapter "Following an error backward"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import numpy as np

from rnnmem import bptt, clipping
from rnnmem.checks import (
    Check,
    Finite,
    NonNegativeInt,
    Positive,
    PositiveInt,
    Real,
    check_finite,
    check_list,
    check_positive_int,
)

from ..placeholders import significant
from ..registry import figure, table
from ..style import INK, PALETTE, new_figure
from ..tables import Table


def _num(value: float) -> str:
    """The shortest decimal that reads back as ``value``, never in exponent form (0.0000152587890625)."""
    text = np.format_float_positional(float(value), trim="-")
    return "0" if text in ("-0", "0") else text


def _grads(name: str, value) -> dict[str, np.ndarray]:
    if not isinstance(value, dict) or not value:
        raise ValueError(f"{name} must be a non-empty dict of parameter name to nested lists, got {value!r}")
    return {k: np.asarray(check_finite(f"{name}[{k!r}]", v), dtype=np.float64) for k, v in value.items()}


def _k_pair(name: str, pair) -> tuple[int, int]:
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        raise ValueError(f"{name} must be a pair [k1, k2], got {pair!r}")
    return check_positive_int(f"{name}[0] (k1)", pair[0]), check_positive_int(f"{name}[1] (k2)", pair[1])


def _loss_steps(name: str, value) -> Any:
    if value is None or value == "all":
        return value
    if isinstance(value, str):
        raise ValueError(f"{name} must be None, 'all' or a list of steps, got {value!r}")
    return check_list(name, value, check_positive_int, "steps (whole numbers >= 1)")


#: Gradients to clip: parameter name -> nested lists of finite numbers.
Gradients = Annotated[dict, Check(_grads, "dicts of parameter name to nested lists")]
#: The two lengths of BPTT(k1, k2), each a whole number >= 1.
KPair = Annotated[tuple, Check(_k_pair, "[k1, k2] pairs")]
#: The steps whose loss counts, as :func:`rnnmem.bptt.truncation_plan` takes them: None, "all" or a list of steps.
LossSteps = Annotated[Any, Check(_loss_steps, "None, 'all' or lists of steps")]


@table()
def bptt_table(
    inputs: Sequence[Real] = (1, 0, 0), target: Finite = 1.0, w: Finite = 0.5, h0: Finite = 0.0, u: Finite = 1.0
):
    """The scalar example read by read: previous and new state, loss rate, and the credit of each use of w.

    ``target`` is one number or one per input (:func:`rnnmem.bptt.scalar_bptt`).
    """
    r = bptt.scalar_bptt(inputs, target, w, h0=h0, u=u)
    rows = []
    for t, prev, new, rate, contribution in r.rows:
        rows.append(
            [str(t), _num(prev), _num(new), _num(rate), f"{_num(rate)} \u00d7 {_num(prev)} = {_num(contribution)}"]
        )
    return Table(
        columns=[
            "reading \\(t\\)",
            "previous state \\(h_{t-1}\\)",
            "new state \\(h_t\\)",
            "loss rate \\(\\delta_t = \\partial L / \\partial h_t\\)",
            "credit of this use, \\(\\delta_t\\,h_{t-1}\\)",
        ],
        rows=rows,
        notes=f"All uses belong to one weight, so their credits add: \\(\\partial L/\\partial w\\) = {_num(r.gradient)}.",
    )


@table()
def distance_table(factors: Sequence[Real] = (0.5, 1.5), distances: Sequence[NonNegativeInt] = (0, 1, 2, 4, 8, 16)):
    """The multiplier a^n after n edges of local rate a, one column per factor."""
    rows = bptt.distance_multipliers(factors, distances)
    return Table(
        columns=["edges crossed \\(n\\)"] + [f"factor {_num(a)} per edge" for a in factors],
        rows=[[str(n)] + [_num(v) for v in values] for n, *values in rows],
    )


@figure()
def distance_curves(
    factors: Sequence[Positive] = (0.5, 0.9, 1.1, 1.5), distances: Sequence[NonNegativeInt] = (0, 1, 2, 4, 8, 16)
):
    """a^n against the number of edges n, on a logarithmic axis, with markers at the table's distances."""
    factors, marked = [float(a) for a in factors], list(distances)
    top = max(marked)
    if top < 1:
        raise ValueError(f"distances must reach at least one edge, got {distances!r}")
    n = np.arange(top + 1)
    m = np.array(sorted(set(marked)))
    fig, ax = new_figure()
    for colour, a in zip(PALETTE, factors):
        ax.semilogy(n, a ** n.astype(float), color=colour, linewidth=1.2, label=f"factor {a:g}")
        ax.semilogy(m, a ** m.astype(float), color=colour, linestyle="none", marker="o", markersize=4.5)
        ax.annotate(
            significant(a**top),
            (top, a**top),
            textcoords="offset points",
            xytext=(6, 0),
            va="center",
            ha="left",
            color=colour,
            fontsize=9,
        )
    ax.axhline(1.0, color=INK, linewidth=0.6)
    ax.set_xlim(0, top * 1.12)
    ax.set_xticks(m)
    ax.set_xlabel("edges crossed, $n$")
    ax.set_ylabel("multiplier $a^n$")
    ax.legend(loc="lower left")

    def key(a: float) -> str:  # never all digits, so a placeholder reads it as a string
        text = f"{a:g}"
        return text if any(c in text for c in ".e") else text + ".0"

    return fig, {"end": {key(a): float(a**top) for a in factors}, "edges": top}


@table()
def clipping_table(grads: Gradients | None = None, max_norm: Positive = 1.0, clip_value: Positive = 1.0):
    """Both clipping rules on one gradient: the norm before and after, and the cosine with the original."""
    arrays = _grads("grads", {"W_hh": [[8.0, 0.5], [0.2, -6.0]], "b": [0.1, 0.3]}) if grads is None else grads
    by_norm = clipping.clip_by_global_norm(arrays, max_norm)
    by_value = clipping.clip_by_value(arrays, clip_value)
    rows = []
    for result in (by_norm, by_value):
        flat = np.concatenate([np.ravel(result.grads[k]) for k in arrays])
        rows.append(
            [
                result.method,
                f"{result.threshold:g}",
                f"{result.norm_before:.3f}",
                f"{result.norm_after:.3f}",
                f"{result.cosine:.3f}",
                ", ".join(f"{v:.3f}" for v in flat),
            ]
        )
    original = np.concatenate([np.ravel(a) for a in arrays.values()])
    return Table(
        columns=[
            "rule",
            "threshold",
            "norm before",
            "norm after",
            "cosine with the original",
            "entries after clipping",
        ],
        rows=rows,
        align=["left", "right", "right", "right", "right", "left"],
        notes="Original entries: " + ", ".join(f"{v:g}" for v in original) + ".",
    )


@figure()
def truncation_grid(
    length: PositiveInt = 12, settings: Sequence[KPair] = ((4, 4), (2, 6)), loss_steps: LossSteps = "all"
):
    """For each BPTT(k1, k2): a grid of use step against loss step, each pair coloured kept or cut."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    pairs = list(settings)
    fig, axes = new_figure(ncols=len(pairs), height=4.0 if len(pairs) > 1 else 4.6)
    axes = np.atleast_1d(axes)
    counts = {}
    cmap = ListedColormap([PALETTE[0], PALETTE[1]])
    for ax, (k1, k2) in zip(axes, pairs):
        plan = bptt.truncation_plan(length, k1, k2, loss_steps=loss_steps)
        counts[f"{k1},{k2}"] = {"kept": len(plan.kept), "cut": len(plan.cut), "boundaries": list(plan.boundaries)}
        grid = np.full((length, length), np.nan)
        for s, tau in plan.kept:
            grid[tau - 1, s - 1] = 0
        for s, tau in plan.cut:
            grid[tau - 1, s - 1] = 1
        ax.imshow(
            np.ma.masked_invalid(grid),
            cmap=cmap,
            vmin=0,
            vmax=1,
            origin="lower",
            extent=(0.5, length + 0.5, 0.5, length + 0.5),
            interpolation="nearest",
        )
        for b in plan.boundaries:
            ax.plot([b + 0.5, b + 0.5], [b + 0.5, length + 0.5], color=INK, linewidth=1.5, linestyle="--", zorder=4)
            ax.plot([0.5, b + 0.5], [b + 0.5, b + 0.5], color=INK, linewidth=1.5, linestyle="--", zorder=4)
        ax.grid(False)
        edges = np.arange(0.5, length + 1.5)
        for e in edges:  # thin separators between the cells
            ax.plot([e, e], [max(e, 0.5), length + 0.5], color="white", linewidth=0.6)
            ax.plot([0.5, min(e, length + 0.5)], [e, e], color="white", linewidth=0.6)
        ax.set_xlim(0.5, length + 0.5)
        ax.set_ylim(0.5, length + 0.5)
        ticks = [t for t in range(1, length + 1) if t == 1 or t % 2 == 0 or t == length]
        ax.set_xticks(ticks)
        ax.set_yticks(ticks)
        ax.set_xlabel("use of $w$ at step $s$")
        kind = "chunks, detached" if k1 == k2 else "overlapping windows"
        ax.set_title(f"BPTT({k1}, {k2})\n{kind}\n{len(plan.kept)} kept, {len(plan.cut)} cut")
    axes[0].set_ylabel(r"loss at step $t'$")
    fig.legend(
        handles=[Patch(color=PALETTE[0], label="credit kept"), Patch(color=PALETTE[1], label="credit cut")],
        loc="outside lower center",
        ncols=2,
    )
    return fig, {"pairs": counts, "length": length}


@table()
def truncation_table(
    inputs: Sequence[Real] = (1, 0, 0, 0, 0, 0),
    target: Finite = 1.0,
    w: Finite = 0.5,
    k1: PositiveInt = 3,
    k2: PositiveInt = 3,
):
    """Every term of the scalar gradient, (use, loss, value), marked kept or cut by BPTT(k1, k2)."""
    g = bptt.truncated_gradient(inputs, target, w, k1, k2)
    terms = sorted([(c, "kept") for c in g.kept] + [(c, "cut") for c in g.cut], key=lambda p: (p[0].loss, p[0].use))
    rows = [
        [str(c.use), str(c.loss), _num(g.states[c.use - 2]) if c.use > 1 else "0", _num(c.value), status]
        for c, status in terms
    ]
    return Table(
        columns=[
            "use \\(s\\)",
            "loss at \\(t'\\)",
            "\\(h_{s-1}\\)",
            "term \\((h_{t'} - y_{t'})\\,w^{t' - s}\\,h_{s-1}\\)",
            f"BPTT({g.plan.k1}, {g.plan.k2})",
        ],
        rows=rows,
        notes=(f"Full gradient {_num(g.full)}; truncated {_num(g.truncated)}; missing {_num(g.missing)}."),
    )

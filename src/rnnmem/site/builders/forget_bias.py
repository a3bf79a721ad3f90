"""Figures and tables of the chapter "Where training starts: the forget bias"."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import numpy as np

from rnnmem import carry, init, memory
from rnnmem.checks import Check, Finite, NonNegativeInt, OpenUnit, PositiveInt, check_positive

from ..registry import figure, table
from ..style import PALETTE, new_figure
from ..tables import Table

#: How each scheme is named in the chapter's figures and tables.
SCHEME_LABELS = {
    "zero": "zero, \\(b_f = 0\\)",
    "keras": "Keras, \\(b_f = 1\\)",
    "pytorch": "PyTorch default",
    "chrono": "chrono",
}
_PLAIN_LABELS = {
    "zero": "zero, $b_f = 0$",
    "keras": "Keras, $b_f = 1$",
    "pytorch": "PyTorch default",
    "chrono": "chrono",
}
_MEASURE_LABELS = {
    "efold": "e-fold horizon $-1/\\ln f$",
    "level": "1% horizon $\\ln 0.01/\\ln f$",
    "mean_lifetime": "$1/(1-f)$",
}


def _t_max(name: str, value) -> float:
    t = float(check_positive(name, value))
    if t <= 2.0:
        raise ValueError(f"{name} must be greater than 2 (chrono draws u from [1, t_max - 1]), got {value!r}")
    return t


#: Chrono's longest lifetime: a number greater than 2.
TMax = Annotated[float, Check(_t_max, "numbers greater than 2")]


def _bias_label(b: float) -> str:
    if math.isclose(b, math.log(19.0), rel_tol=0, abs_tol=1e-12):
        return "\\(\\ln 19\\) = 2.94"
    return f"{b:g}"


@table()
def forget_bias_rows(biases: list[Finite] | None = None, steps: NonNegativeInt = 47, level: OpenUnit = 0.01):
    """For each forget bias (by default 0, 1, 2 and ln 19): the starting gate, its three horizons and what the
    carry line keeps after ``steps``."""
    if biases is None:
        biases = [r.bias for r in init.forget_bias_table()]
    rows = []
    for r in init.forget_bias_table(biases, level):
        rows.append(
            [
                _bias_label(r.bias),
                f"{r.gate:.6f}",
                f"{r.efold_horizon:.2f}",
                f"{r.horizon:.1f}",
                f"{r.mean_lifetime:.2f}",
                f"{init.retained_gradient(r.bias, steps):.2e}",
            ]
        )
    pct = f"{level:.0%}" if level >= 0.01 else f"{level:g}"
    table_ = Table(
        columns=[
            "bias \\(b_f\\)",
            "gate \\(f = \\sigma(b_f)\\)",
            "e-fold horizon",
            f"{pct} horizon",
            "\\(1/(1-f)\\)",
            f"kept after {steps} steps, \\(f^{{{steps}}}\\)",
        ],
        rows=rows,
    )
    return table_, {"steps": steps, "level": level}


@figure()
def pytorch_bias_density(
    hidden: PositiveInt = 256, size: PositiveInt = 200_000, seed: NonNegativeInt = 0, bins: PositiveInt = 60
):
    """Histogram of PyTorch's effective forget bias b_ih,f + b_hh,f, with the triangular density."""
    samples = init.pytorch_forget_bias_samples(hidden, size, seed=seed)
    a = 1.0 / math.sqrt(hidden)
    fig, ax = new_figure(height=4.0)
    ax.hist(
        samples,
        bins=bins,
        range=(-2 * a, 2 * a),
        density=True,
        color=PALETTE[0],
        alpha=0.45,
        label=f"{size:,} draws of $b_{{if}} + b_{{hf}}$",
    )
    b = np.linspace(-2.3 * a, 2.3 * a, 401)
    ax.plot(b, init.pytorch_forget_bias_density(b, hidden), color=PALETTE[1], label="triangle $(2a - |b|)/(4a^2)$")
    ax.plot(
        [-a, -a, a, a],
        [0, 1 / (2 * a), 1 / (2 * a), 0],
        color="#777777",
        linestyle="--",
        linewidth=1.0,
        label="one draw $U(-a, a)$",
    )
    ax.set_xlim(-2.3 * a, 2.3 * a)
    ax.set_ylim(0, 1.5 * math.sqrt(hidden) / 2)
    ax.set_xlabel(f"effective forget bias $b_f$  ($H = {hidden}$, $a = 1/\\sqrt{{H}} = {a:.4g}$)")
    ax.set_ylabel("density")
    fig.legend(loc="outside lower center")
    return fig, {
        "hidden": hidden,
        "size": size,
        "a": a,
        "low": float(samples.min()),
        "high": float(samples.max()),
        "peak": float(init.pytorch_forget_bias_density(0.0, hidden)),
        "box_low": -a,
        "box_high": a,
    }


def _ecdf(values: np.ndarray, left: float, right: float) -> tuple[np.ndarray, np.ndarray]:
    """x and y of the empirical CDF as a post-step curve, from ``left`` (y = 0) to ``right`` (y = 1)."""
    v = np.sort(np.asarray(values, dtype=np.float64))
    x = np.concatenate([[left], v, [right]])
    y = np.concatenate([[0.0], np.arange(1, v.size + 1) / v.size, [1.0]])
    return x, y


@figure()
def initial_horizon_cdf(
    hidden: PositiveInt = 256,
    t_max: TMax = 1000,
    seed: NonNegativeInt = 0,
    measure: Literal["efold", "level", "mean_lifetime"] = "efold",
):
    """The distribution (CDF, log axis) of the starting horizons of ``hidden`` units under each scheme."""
    hs = init.sample_initial_horizons(hidden, t_max, seed, measure)
    left, right = 1.0, 1.6 * t_max
    fig, ax = new_figure(height=3.8)
    styles = {
        "zero": dict(color=PALETTE[0], linestyle="--"),
        "keras": dict(color=PALETTE[2]),
        "pytorch": dict(color=PALETTE[3]),
        "chrono": dict(color=PALETTE[1]),
    }
    for scheme in init.SCHEMES:
        x, y = _ecdf(hs[scheme], left, right)
        ax.step(
            x,
            y,
            where="post",
            label=_PLAIN_LABELS[scheme] + ("" if scheme != "chrono" else f", $T_{{\\max}} = {t_max:g}$"),
            **styles[scheme],
        )
    ax.axvline(t_max, color="#777777", linestyle=":", linewidth=1.0)
    ax.annotate("$T_{\\max}$", (t_max, 0.02), textcoords="offset points", xytext=(-4, 0), ha="right", color="#555555")
    ax.set_xscale("log")
    ax.set_xlim(left, right)
    ax.set_ylim(0, 1.04)
    ax.set_xlabel(f"starting {_MEASURE_LABELS[measure]}, steps")
    ax.set_ylabel(f"share of the {hidden} units\nwith a shorter horizon")
    fig.legend(loc="outside lower center", ncols=2)
    # The zero and PyTorch curves nearly coincide: enlarge the neighbourhood of 1/ln 2.
    centre = float(np.median(hs["zero"]))
    lo = min(float(hs["pytorch"].min()), centre) * 0.97
    hi = max(float(hs["pytorch"].max()), centre) * 1.03
    inset = ax.inset_axes([0.42, 0.2, 0.24, 0.34])
    for scheme in ("zero", "pytorch"):
        x, y = _ecdf(hs[scheme], lo, hi)
        inset.step(x, y, where="post", **styles[scheme])
    inset.set_xlim(lo, hi)
    inset.set_ylim(0, 1.04)
    inset.set_title("zero and PyTorch,\nenlarged")
    inset.tick_params(labelsize=7)
    values: dict[str, Any] = {"hidden": hidden, "t_max": t_max, "measure": measure}
    for name, stat in (("min", np.min), ("median", np.median), ("max", np.max)):
        values[name] = {k: float(stat(v)) for k, v in hs.items()}
    values["beyond_100"] = {k: float(np.mean(v > 100)) for k, v in hs.items()}
    return fig, values


@table()
def init_scheme_table(hidden: PositiveInt = 256, t_max: TMax = 1000, seed: NonNegativeInt = 0):
    """Per scheme: the range of the starting forget bias, gate and e-fold horizon over ``hidden`` units."""
    efold = init.sample_initial_horizons(hidden, t_max, seed, "efold")
    lifetime = init.sample_initial_horizons(hidden, t_max, seed, "mean_lifetime")

    def span(values: np.ndarray, fmt: str) -> str:
        lo, hi = float(values.min()), float(values.max())
        if math.isclose(lo, hi, rel_tol=1e-12, abs_tol=1e-12):
            return format(lo, fmt)
        return f"{format(lo, fmt)} to {format(hi, fmt)}"

    rows = []
    for scheme in init.SCHEMES:
        bias = np.log(lifetime[scheme] - 1.0)  # 1/(1 - sigma(b)) = 1 + e^b
        gate = memory.sigmoid(bias)
        rows.append(
            [
                SCHEME_LABELS[scheme],
                span(bias, ".3f"),
                span(gate, ".4f"),
                span(efold[scheme], ".2f"),
                f"{float(np.median(efold[scheme])):.2f}",
                span(lifetime[scheme], ".2f"),
            ]
        )
    table_ = Table(
        columns=[
            "scheme",
            "forget bias \\(b_f\\)",
            "gate \\(f\\) at zero input",
            "e-fold horizon",
            "median e-fold horizon",
            "\\(1/(1-f)\\)",
        ],
        rows=rows,
        align=["left", "right", "right", "right", "right", "right"],
        notes=f"{hidden} units; chrono with \\(T_{{\\max}} = {t_max:g}\\); random draws from seed {seed}.",
    )
    return table_, {"hidden": hidden, "t_max": t_max, "seed": seed}


@figure()
def forget_gates_on_data(
    hidden: PositiveInt = 256,
    steps: PositiveInt = 50,
    batch: PositiveInt = 16,
    seeds: Sequence[NonNegativeInt] = (0, 1, 2),
    data_seed: NonNegativeInt = 1,
):
    """Forget gates of default PyTorch LSTMs fed unit-variance noise, at step ``steps``, against their zero-input gates.

    The gates are :func:`rnnmem.carry.default_forget_gates` (one default
    LSTM of ``hidden`` units per seed, fed ``batch`` sequences of noise from
    ``data_seed``). Values: its :meth:`~rnnmem.carry.ForgetGates.summary`
    (``min``, ``max``, ``sd``, ``median`` of the gates on data, ``zero_min``,
    ``zero_max`` of the zero-input gates :math:`\\sigma(b_f)`, ``tau_data``
    and ``tau_zero``), and ``seeds``, ``hidden``, ``steps``.
    """
    gates = carry.default_forget_gates(hidden, steps, batch, seeds, data_seed)
    data, zero = gates.on_data, gates.zero_input
    fig, ax = new_figure()
    bins = np.linspace(0.0, 1.0, 101)
    ax.hist(data, bins=bins, density=True, color=PALETTE[0], alpha=0.6, label=f"fed data, step {steps}")
    ax.hist(zero, bins=bins, density=True, color=PALETTE[1], alpha=0.6, label="at zero input, $\\sigma(b_f)$")
    ax.set_xlim(0, 1)
    ax.set_yscale("log")
    ax.set_xlabel("forget gate $f$")
    ax.set_ylabel("density (log scale)")
    ax.legend(loc="upper left", fontsize=9)
    return fig, {"hidden": hidden, "steps": steps, "seeds": len(seeds), **gates.summary()}

"""Figures and tables of the chapter "What gating does not fix"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import numpy as np

from rnnmem import cell_bound, cells, gradcheck
from rnnmem.cell_paths import REGIMES, keep_bias_paths, random_lstm_paths
from rnnmem.checks import Check, Finite, NonNegativeInt, Positive, PositiveInt, check_finite, check_positive
from rnnmem.experiments import Model, ModelSpec, start_rates
from rnnmem.lstm import LSTM

from ..placeholders import sci
from ..registry import figure, table
from ..style import GRID, PALETTE, new_figure
from ..tables import Table

_REGIME_KEYS = ("scale", "forget_bias", "input_bias", "candidate_bias")


def _regime(name: str, value) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be a dict of random_lstm settings ({', '.join(_REGIME_KEYS)}), got {value!r}")
    unknown = sorted(set(value) - set(_REGIME_KEYS))
    if unknown:
        raise ValueError(
            f"{name} has unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(_REGIME_KEYS)}"
        )
    out = {}
    for key, v in value.items():
        out[key] = float(
            check_positive(f"{name}[{key!r}]", v) if key == "scale" else check_finite(f"{name}[{key!r}]", v)
        )
    return out


#: Settings of :func:`rnnmem.jacobians.random_lstm` (a dict with some of ``scale``, ``forget_bias``, ``input_bias``,
#: ``candidate_bias``), such as one of :data:`rnnmem.cell_paths.REGIMES`.
Regime = Annotated[dict, Check(_regime, "dicts of random_lstm settings")]


@figure()
def carry_vs_other_paths(
    steps: PositiveInt = 30,
    hidden: PositiveInt = 8,
    input_size: PositiveInt = 2,
    seed: NonNegativeInt = 0,
    input_seed: NonNegativeInt = 1,
    saturated: Regime | None = None,
    strong: Regime | None = None,
):
    """Norms of dc_k/dc_0, of its carry line and of the other paths against k, one panel per regime.

    The regimes default to :data:`rnnmem.cell_paths.REGIMES`; the paths are
    :func:`rnnmem.cell_paths.random_lstm_paths`.
    """
    sat = REGIMES["saturated"] if saturated is None else saturated
    strg = REGIMES["strong"] if strong is None else strong
    fig, axes = new_figure(ncols=2, sharey=True, height=4.2)
    k = np.arange(steps + 1)
    values: dict[str, Any] = {"steps": steps}
    for ax, regime, title, key in (
        (axes[0], sat, "saturated\ngates", "saturated"),
        (axes[1], strg, "strong recurrent\nweights", "strong"),
    ):
        p = random_lstm_paths(steps, hidden, input_size, seed, input_seed, **regime)
        values[key] = {
            "total": p.total_norm[steps],
            "carry": p.carry_norm[steps],
            "other": p.other_norm[steps],
            "ratio": p.other_norm[steps] / p.carry_norm[steps],
        }
        ax.semilogy(k, p.total_norm, color=PALETTE[0], label="all paths  $\\|\\partial c_k/\\partial c_0\\|$")
        ax.semilogy(
            k,
            p.carry_norm,
            color=PALETTE[1],
            linestyle="--",
            label="carry line  $\\|\\mathrm{diag}(f_1 \\odot \\cdots \\odot f_k)\\|$",
        )
        nonzero = p.other_norm > 0  # at k = 1 the carry line is the only path
        ax.semilogy(k[nonzero], p.other_norm[nonzero], color=PALETTE[2], label="every other path")
        ax.set_title(title)
        ax.set_xlim(0, steps)
        ax.set_xlabel("steps back, $k$")
    axes[0].set_ylabel("spectral norm")
    axes[0].set_ylim(1e-3, 30)
    fig.legend(*axes[1].get_legend_handles_labels(), loc="outside lower center")
    return fig, values


@table()
def cell_paths_table(
    distances: Sequence[PositiveInt] = (1, 5, 10, 20, 30),
    hidden: PositiveInt = 8,
    input_size: PositiveInt = 2,
    seed: NonNegativeInt = 0,
    input_seed: NonNegativeInt = 1,
    saturated: Regime | None = None,
    strong: Regime | None = None,
):
    """At each distance k: the carry line, the other paths and their ratio in both regimes."""
    sat = REGIMES["saturated"] if saturated is None else saturated
    strg = REGIMES["strong"] if strong is None else strong
    steps = max(distances)
    a = random_lstm_paths(steps, hidden, input_size, seed, input_seed, **sat)
    b = random_lstm_paths(steps, hidden, input_size, seed, input_seed, **strg)
    rows = []
    for k in distances:
        rows.append(
            [
                str(k),
                f"{a.carry_norm[k]:.3f}",
                f"{a.other_norm[k]:.3f}",
                f"{b.carry_norm[k]:.3f}",
                f"{b.other_norm[k]:.3f}",
                f"{b.other_norm[k] / b.carry_norm[k]:.2f}",
            ]
        )
    return Table(
        columns=[
            "\\(k\\)",
            "saturated: carry line",
            "saturated: other paths",
            "strong: carry line",
            "strong: other paths",
            "strong: other / carry",
        ],
        rows=rows,
        notes=f"Spectral norms, \\(H = {hidden}\\) units, inputs of width {input_size}, from the zero "
        f"state; weights from seed {seed}, inputs from seed {input_seed}.",
    )


@figure()
def cell_bound_check(
    hidden: PositiveInt = 16,
    steps: PositiveInt = 200,
    seed: NonNegativeInt = 0,
    forget_bias: Finite = 3.0,
    scale: Positive = 1.0,
    c0_scale: Positive = 5.0,
    show: PositiveInt = 3,
):
    """Simulated |c_t| of a few coordinates against their bound; and |c_t|/bound for every coordinate."""
    if show > hidden:
        raise ValueError(f"show must be at most hidden = {hidden} coordinates, got {show}")
    chk = cell_bound.simulate_cell_bound(
        hidden, steps, seed, scale=float(scale), forget_bias=float(forget_bias), c0_scale=float(c0_scale)
    )
    t = np.arange(steps + 1)
    ratio = chk.cells[1:] / chk.bounds[1:]
    order = np.argsort(-ratio.max(axis=0))  # the tightest coordinates first
    fig, (left, right) = new_figure(ncols=2, height=4.6)
    for n, j in enumerate(order[:show]):
        colour = PALETTE[n % len(PALETTE)]
        left.semilogy(t, chk.cells[:, j], color=colour, label=f"$|c_t|$, coordinate {j}")
        left.semilogy(t, chk.bounds[:, j], color=colour, linestyle="--")
    left.plot([], [], color="#777777", linestyle="--", label="bound (dashed)")
    left.set_xlim(0, steps)
    left.set_xlabel("step $t$")
    left.set_ylabel("$|c_t|$ and its bound")
    left.set_title(f"{show} coordinates")
    for j in range(hidden):
        right.plot(t[1:], ratio[:, j], color=PALETTE[0], alpha=0.45, linewidth=0.9)
    right.axhline(1.0, color="#777777", linestyle="--", linewidth=1.0)
    right.set_xlim(0, steps)
    right.set_ylim(0, 1.1)
    right.set_xlabel("step $t$")
    right.set_ylabel("$|c_t|$ / bound")
    right.set_title(f"all {hidden} coordinates")
    right.grid(True, color=GRID)
    handles, labels = left.get_legend_handles_labels()
    right.plot([], [], color=PALETTE[0], alpha=0.45, label="right: $|c_t|$ / bound, each coordinate")
    h2, l2 = right.get_legend_handles_labels()
    fig.legend(
        handles + h2,
        ["left: " + lab if k == 0 else lab for k, lab in enumerate(labels)] + l2,
        loc="outside lower center",
    )
    return fig, {"tightness": chk.tightness, "holds": bool(chk.holds), "shown": show}


def _sci(value: float) -> str:
    """``1e-06`` as ``10^{-6}``, ``2e-05`` as ``2 \\times 10^{-5}`` (LaTeX)."""
    mantissa, exponent = f"{value:.0e}".split("e")
    power = f"10^{{{int(exponent)}}}"
    return power if mantissa == "1" else f"{mantissa} \\times {power}"


_BLOCK_NAMES = {"i": "input gate", "f": "forget gate", "g": "candidate", "o": "output gate"}


def _label(name: str) -> tuple[str, str]:
    """The book's symbol and a description for a gradcheck row named in the equations view."""
    if name in ("h0", "c0"):
        return f"\\({name[0]}_0\\)", "initial " + ("hidden state" if name == "h0" else "cell")
    kind, sub = name.split("_")
    if kind == "W":
        source, gate = sub[0], sub[1]
        what = "input weights" if source == "i" else "recurrent weights"
        return f"\\(W_{{{sub}}}\\)", f"{what}, {_BLOCK_NAMES[gate]}"
    return f"\\(b_{{i{sub}}} + b_{{h{sub}}}\\)", f"bias, {_BLOCK_NAMES[sub]}"


def run_gradcheck(
    hidden: int = 2, input_size: int = 2, steps: int = 5, batch: int = 1, seed: int = 0, eps: float = 1e-6
) -> gradcheck.GradcheckResult:
    """Finite-difference check of a float64 LSTM from ``seed``, random input and random initial state.

    Rows in the equations' view (twelve parameter blocks), then ``h0`` and ``c0``.
    """
    model = LSTM(input_size, hidden, seed=seed)
    rng = np.random.default_rng(seed + 1)
    x = rng.standard_normal((steps, batch, input_size))
    state = (0.5 * rng.standard_normal((batch, hidden)), rng.standard_normal((batch, hidden)))
    return gradcheck.gradcheck(model, x, state, eps=eps, blocks="equations", include_x=False)


@table()
def lstm_gradcheck_table(
    hidden: PositiveInt = 2,
    input_size: PositiveInt = 2,
    steps: PositiveInt = 5,
    batch: PositiveInt = 1,
    seed: NonNegativeInt = 0,
    eps: Positive = 1e-6,
):
    """Worst relative error of backpropagation against central differences, per parameter block and initial state."""
    result = run_gradcheck(hidden, input_size, steps, batch, seed, eps)
    rows = []
    for name, err in result.rows:
        symbol, what = _label(name)
        rows.append([symbol, what, f"{err:.1e}"])
    return Table(
        columns=["block", "what it is", "worst relative error"],
        rows=rows,
        align=["left", "left", "right"],
        notes=f"A float64 LSTM with \\(H = {hidden}\\) units and inputs of width {input_size}, "
        f"{steps} steps, batch {batch}, weights from seed {seed}, random initial state; "
        f"central differences with \\(\\varepsilon = {_sci(eps)}\\). Worst over all blocks: "
        f"{sci(result.worst)}.",
    )


# --------------------------------------------------------------------------- the GRU's counterpart


@table()
def keep_bias_paths_table(
    biases: Sequence[Finite] = (0, 2, 4, 6, 8),
    distance: PositiveInt = 30,
    hidden: PositiveInt = 8,
    input_size: PositiveInt = 2,
    scale: Positive = 5.0,
    seed: NonNegativeInt = 0,
    input_seed: NonNegativeInt = 1,
):
    """Carry line and other paths at one distance, LSTM by forget bias against GRU by update bias
    (:func:`rnnmem.cell_paths.keep_bias_paths`)."""
    bs, k, scale = biases, distance, float(scale)
    rows = []
    values: dict[str, list[float]] = {
        "biases": [],
        "lstm_carry": [],
        "lstm_other": [],
        "gru_carry": [],
        "gru_other": [],
    }
    for b in bs:
        lp, gp = keep_bias_paths(float(b), k, hidden, input_size, scale, seed, input_seed)
        rows.append(
            [
                f"{float(b):g}",
                f"{lp.carry_norm[k]:.3f}",
                f"{lp.other_norm[k]:.3f}",
                f"{gp.carry_norm[k]:.3f}",
                f"{gp.other_norm[k]:.3f}",
            ]
        )
        values["biases"].append(float(b))
        for name, v in (
            ("lstm_carry", lp.carry_norm[k]),
            ("lstm_other", lp.other_norm[k]),
            ("gru_carry", gp.carry_norm[k]),
            ("gru_other", gp.other_norm[k]),
        ):
            values[name].append(round(float(v), 3))
    return Table(
        columns=["bias that keeps", "LSTM: carry line", "LSTM: other paths", "GRU: carry line", "GRU: other paths"],
        rows=rows,
        notes=f"Spectral norms at distance \\(k = {k}\\) from the zero state; \\(H = {hidden}\\) "
        f"units, inputs of width {input_size}, weights drawn at {scale:g} times PyTorch's "
        f"range from seed {seed}, inputs from seed {input_seed}. The bias is the LSTM's "
        "forget bias and the GRU's update-gate bias.",
    ), values


@table()
def default_start_table(
    models: Sequence[Model] = ("rnn", "gru", "lstm", "lstm:1", "lstm:2"),
    lag: PositiveInt = 20,
    alphabet: PositiveInt = 8,
    hidden: PositiveInt = 32,
    seeds: PositiveInt = 8,
    sequences: PositiveInt = 256,
):
    """Per model at initialization: the per-step factor of the gradient (:func:`rnnmem.experiments.start_rates`),
    median and range over seeds.

    ``models`` are model specs (:meth:`rnnmem.experiments.ModelSpec.parse`): ``"rnn"``, ``"gru"``,
    ``"lstm"`` (PyTorch's draw), ``"lstm:B"`` (forget bias ``B``) or ``"lstm:chrono"``.
    """
    parsed = [ModelSpec.parse(m, f"models[{j}]") for j, m in enumerate(models)]
    rows = []
    values: dict[str, Any] = {"median": {}, "low": {}, "high": {}, "reach": {}, "steps": lag + 1, "seeds": seeds}
    for name, spec in zip(models, parsed):
        kind, bias = spec.cell, spec.forget_bias
        rate = start_rates(name, lag, range(seeds), hidden, sequences=sequences, alphabet=alphabet)
        label = cells.LABELS[kind] + (
            ""
            if kind != "lstm"
            else ", chrono"
            if spec.init == "chrono"
            else ", default draw"
            if bias is None
            else f", \\(b_f = {bias:g}\\)"
        )
        median = float(np.median(rate))
        reach = median ** (lag + 1)
        rows.append([label, f"{median:.2f}", f"{rate.min():.2f} to {rate.max():.2f}", f"{reach:.0e}"])
        values["median"][name] = round(median, 2)
        values["low"][name] = round(float(rate.min()), 2)
        values["high"][name] = round(float(rate.max()), 2)
        values["reach"][name] = float(f"{reach:.0e}")
    return Table(
        columns=[
            "model",
            "per-step factor, median",
            f"range over {seeds} seeds",
            f"median factor over {lag + 1} steps",
        ],
        rows=rows,
        align=["left", "right", "right", "right"],
        notes=f"Untrained models, \\(H = {hidden}\\), PyTorch's default draw (the LSTM's forget "
        f"bias replaced where given); the gradient of the loss at the query with respect to "
        f"each hidden state, averaged over {sequences} recall sequences at lag {lag} "
        f"(alphabet {alphabet}); the factor is \\((\\|g_1\\|/\\|g_T\\|)^{{1/(T-1)}}\\).",
    ), values

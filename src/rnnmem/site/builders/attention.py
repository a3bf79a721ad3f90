"""Figures and tables of the chapter "Looking back: attention".

What is trained and how is :mod:`rnnmem.attention_lab` (the design's
constants, the three readouts, the runs); the counts of the last section are
:mod:`rnnmem.attention`'s. The runs are trained, shared between the figures
and kept on disk by :func:`rnnmem.site.labruns.runs`. Every comparison worded
here carries Fisher's exact test (:func:`rnnmem.site.comparisons.compare`);
:math:`p \\ge 0.05` reads as none detected.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

import numpy as np

from rnnmem import attention, cells
from rnnmem.attention_lab import (
    ARMS,
    BUDGET,
    DESIGN,
    LAGS,
    LAGS_DESIGNED,
    MODEL,
    REACH_SEQUENCES,
    AttentionRun,
    attention_profile,
    clue_share,
)
from rnnmem.by_design import ModelText, Spec
from rnnmem.checks import PositiveInt
from rnnmem.experiments import ALPHABET, Lags, Outcome, Threshold

from ..arithmetic import arithmetic
from ..comparisons import compare
from ..labruns import runs
from ..registry import figure, table
from ..style import PALETTE, new_figure
from ..tables import Table

LABELS = {"last": "last state", "attention": "attention", "uniform": "uniform"}
"""The readouts as a legend names them."""

TABLE_LABELS = {"last": "last state", "attention": "attention", "uniform": "uniform weights (control)"}
"""The readouts as a table's rows name them."""

PAIRS = (("attention", "last"), ("uniform", "last"), ("attention", "uniform"))
"""The pairs of readouts compared at every lag, by Fisher's exact test."""

ARTICLES = {"rnn": "A", "gru": "A", "lstm": "An"}

STYLES = {"last": ("--", "s"), "attention": ("-", "o"), "uniform": (":", "^")}


def _rate_text(o: Outcome) -> str:
    lo, hi = o.interval()
    return f"{o.successes} ({100 * lo:.0f}–{100 * hi:.0f}%)"


def _trained(lags: Sequence[int], seeds: int, hidden: int, steps: int, threshold: float) -> dict:
    """Every arm at every lag, trained (or read from the run cache): ``{(arm, lag): RunResult}``."""
    design = dataclasses.replace(DESIGN, hidden=hidden, steps=steps, threshold=threshold)
    keys = [AttentionRun(arm, lag, tuple(range(seeds)), design) for lag in lags for arm in ARMS]
    return {(k.arm, k.lag): result for k, result in zip(keys, runs(keys))}


def _lab_values(trained: dict, lags: Sequence[int], seeds: int, steps: int) -> dict:
    """Per arm and lag: the count, its interval and the median final accuracy; per pair and lag: Fisher's test."""
    outcomes = {key: result.outcome(steps) for key, result in trained.items()}
    arms: dict = {}
    for arm in ARMS:
        arms[arm] = {}
        for lag in lags:
            o = outcomes[(arm, lag)]
            lo, hi = o.interval()
            arms[arm][str(lag)] = {
                "k": o.successes,
                "lo": lo,
                "hi": hi,
                "text": _rate_text(o),
                "median": o.accuracy()[1],
            }
    pairs = {f"{a}-{b}": {str(lag): compare(outcomes[(a, lag)], outcomes[(b, lag)]) for lag in lags} for a, b in PAIRS}
    return {
        "seeds": seeds,
        "steps": steps,
        "lags": list(lags),
        "longest": max(lags),
        "chance": 1 / ALPHABET,
        "arithmetic": arithmetic(),
        "arms": arms,
        "pairs": pairs,
    }


@figure()
def attention_success(
    lags: Lags = LAGS,
    seeds: PositiveInt = 20,
    hidden: PositiveInt = 16,
    steps: PositiveInt = BUDGET,
    threshold: Threshold = 0.9,
):
    """The share of seeds that succeed against the lag, one line per readout, with 95% Wilson intervals."""
    trained = _trained(lags, seeds, hidden, steps, threshold)
    values = _lab_values(trained, lags, seeds, steps)
    fig, ax = new_figure(height=3.2)
    offsets = np.linspace(-0.04, 0.04, len(ARMS))
    for k, arm in enumerate(ARMS):
        cells_ = [values["arms"][arm][str(lag)] for lag in lags]
        rates = np.array([c["k"] / seeds for c in cells_])
        lo = rates - np.array([c["lo"] for c in cells_])
        hi = np.array([c["hi"] for c in cells_]) - rates
        linestyle, marker = STYLES[arm]
        ax.errorbar(
            [lag * 10 ** offsets[k] for lag in lags],
            rates,
            yerr=[lo, hi],
            color=PALETTE[k],
            linestyle=linestyle,
            marker=marker,
            markersize=4,
            capsize=2,
            label=LABELS[arm],
        )
    ax.set_xscale("log")
    ax.set_xticks(list(lags), [str(lag) for lag in lags])
    ax.minorticks_off()
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("lag (random tokens between the token and the query)")
    ax.set_ylabel("share of seeds")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside upper center", ncols=3)
    return fig, values


@table()
def attention_success_table(
    lags: Lags = LAGS,
    seeds: PositiveInt = 20,
    hidden: PositiveInt = 16,
    steps: PositiveInt = BUDGET,
    threshold: Threshold = 0.9,
):
    """Successes of ``seeds`` per readout (rows) and lag (columns) with their Wilson intervals, then Fisher's p
    for each pair of readouts at each lag."""
    trained = _trained(lags, seeds, hidden, steps, threshold)
    values = _lab_values(trained, lags, seeds, steps)
    rows = [[TABLE_LABELS[arm], *[values["arms"][arm][str(lag)]["text"] for lag in lags]] for arm in ARMS]
    for a, b in PAIRS:
        tests = values["pairs"][f"{a}-{b}"]
        rows.append([f"Fisher's *p*, {a} against {b}", *[tests[str(lag)]["p"] for lag in lags]])
    table = Table(
        columns=["readout", *[f"lag {lag}" for lag in lags]],
        rows=rows,
        align=["left", *["right"] * len(lags)],
        notes=(
            f"Seeds of {seeds} whose held-out accuracy reached {threshold:g} within {steps} updates, with the "
            f"95% Wilson interval of the rate; chance is 1/{ALPHABET}. The last rows give Fisher's exact test, "
            "two-sided, for each pair of readouts; a difference is stated where p < 0.05."
        ),
    )
    return table, values


@figure()
def clue_share_figure(
    lags: Lags = LAGS_DESIGNED,
    seeds: PositiveInt = 20,
    hidden: PositiveInt = 16,
    sequences: PositiveInt = REACH_SEQUENCES,
    reference: ModelText = "lstm:1",
):
    """At initialization, the share of the readout's gradient that reaches the clue's step, against the lag:
    the last-state readout of the ``reference`` LSTM and of the chrono LSTM, the chrono LSTM's attention
    readout (zero query), and :math:`1/T`."""
    spec = Spec.parse(reference, "reference").classic
    if spec is None or spec.cell != "lstm":
        raise ValueError(f"reference must be an LSTM of the lab ('lstm', 'lstm:B', 'lstm:chrono'), got {reference!r}")
    lines = {"reference": ("last", reference), "last": ("last", MODEL), "attention": ("attention", MODEL)}
    share: dict = {key: {} for key in lines}
    for key, (arm, model) in lines.items():
        for lag in lags:
            share[key][str(lag)] = clue_share(arm, lag, range(seeds), hidden, sequences=sequences, model=model)
    ratio = {str(lag): share["attention"][str(lag)] / share["last"][str(lag)] for lag in lags}
    inverse = {str(lag): 1.0 / (lag + 2) for lag in lags}
    over_inverse = {str(lag): share["attention"][str(lag)] * (lag + 2) for lag in lags}
    start = (
        "chrono"
        if spec.init == "chrono"
        else "PyTorch's draw"
        if spec.forget_bias is None
        else f"$b_f = {spec.forget_bias:g}$"
    )
    fig, ax = new_figure(height=3.4)
    labels = {"reference": f"last state, {start}", "last": "last state, chrono", "attention": "attention, chrono"}
    colours = {"reference": PALETTE[3], "last": PALETTE[0], "attention": PALETTE[1]}
    for key, (arm, _) in lines.items():
        linestyle, marker = STYLES[arm]
        ax.loglog(
            list(lags),
            [share[key][str(lag)] for lag in lags],
            color=colours[key],
            linestyle="-." if key == "reference" else linestyle,
            marker="v" if key == "reference" else marker,
            label=labels[key],
        )
    ax.loglog(list(lags), list(inverse.values()), color="#777777", linestyle=":", linewidth=1.2, label="$1/T$")
    ax.set_xticks(list(lags), [str(lag) for lag in lags])
    ax.minorticks_off()
    ax.set_xlabel("lag")
    ax.set_ylabel("share at the clue's step")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside upper center", ncols=2)
    return fig, {
        "lags": list(lags),
        "longest": max(lags),
        "seeds": seeds,
        "sequences": sequences,
        "share": share,
        "ratio": ratio,
        "ratio_min": min(ratio.values()),
        "ratio_max": max(ratio.values()),
        "inverse": inverse,
        "over_inverse": over_inverse,
        "over_inverse_min": min(over_inverse.values()),
        "over_inverse_max": max(over_inverse.values()),
    }


@figure()
def attention_profile_figure(
    lags: Lags = LAGS,
    seeds: PositiveInt = 20,
    hidden: PositiveInt = 16,
    steps: PositiveInt = BUDGET,
    threshold: Threshold = 0.9,
    sequences: PositiveInt = 256,
):
    """Where the trained attention readouts look: :math:`T` times the mean weight of each step on held-out
    sequences, median over the seeds, one line per lag (1 everywhere is the uniform average)."""
    trained = _trained(lags, seeds, hidden, steps, threshold)
    fig, ax = new_figure(height=3.2)
    clue, spread, effective = {}, {}, {}
    top = 1.0
    for k, lag in enumerate(lags):
        profile = attention_profile(lag, range(seeds), hidden, trained[("attention", lag)].params, sequences=sequences)
        T = lag + 2
        scaled = np.median(profile.weights, axis=0) * T
        top = max(top, float(scaled.max()))
        ax.plot(np.arange(1, T + 1) / T, scaled, color=PALETTE[k], label=f"lag {lag}")
        clue[str(lag)] = float(np.median(profile.weights[:, 0]) * T)
        effective[str(lag)] = float(np.median(profile.effective))
        spread[str(lag)] = effective[str(lag)] / T
    ax.axhline(1.0, color="#777777", linestyle=":", linewidth=1.2)
    ax.set_ylim(0.0, max(2.0, 1.1 * top))
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel("position in the sequence, $t/T$ (the token is at $t = 1$)")
    ax.set_ylabel(r"$T\,\bar\alpha_t$, median over seeds")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside upper center", ncols=3)
    return fig, {
        "lags": list(lags),
        "seeds": seeds,
        "clue": clue,
        "clue_min": min(clue.values()),
        "clue_max": max(clue.values()),
        "effective": effective,
        "spread": spread,
        "spread_min": min(spread.values()),
    }


@table()
def attention_cost_table(
    lengths: Lags = (10, 100, 1000, 10000),
    hidden: PositiveInt = 16,
    input_size: PositiveInt = 10,
    cell: Literal["rnn", "gru", "lstm"] = "lstm",
):
    """What a recurrence and a causal attention readout keep and compute to go on from step :math:`T`, in
    numbers and multiply-adds (:mod:`rnnmem.attention`)."""
    state = attention.state_numbers(cell, hidden)
    step = attention.step_work(cell, input_size, hidden)
    rows, values = [], {}
    for T in lengths:
        kept = attention.cache_numbers(T, hidden)
        at_step = attention.attention_work(T, hidden)
        total = attention.total_attention_work(T, hidden)
        rows.append([f"{T:,}", f"{state:,}", f"{kept:,}", f"{step:,}", f"{at_step:,}", f"{T * step:,}", f"{total:,}"])
        values[str(T)] = {
            "kept": kept,
            "at_step": at_step,
            "total": total,
            "recurrence_total": T * step,
            "ratio": total / (T * step),
        }
    crossover = next(t for t in range(1, 10 * step) if attention.attention_work(t, hidden) > step)
    table = Table(
        columns=[
            "steps $T$",
            "kept: recurrence",
            "kept: attention",
            "step $T$: recurrence",
            "step $T$: attention",
            "all $T$ steps: recurrence",
            "all $T$ steps: attention",
        ],
        rows=rows,
        align=["right"] * 7,
        notes=(
            f"{ARTICLES[cell]} {cells.LABELS[cell]} of {hidden} units reading inputs of {input_size}. Kept: the numbers that must be stored to compute step T + 1 (the recurrence's state; "
            "every state, for the attention readout). Step T and all T steps: multiply-adds of the recurrence's "
            "products, and of a readout that attends over every state so far at every step."
        ),
    )
    return table, {
        "cell": cell,
        "hidden": hidden,
        "input_size": input_size,
        "state": state,
        "step": step,
        "crossover": crossover,
        "rows": values,
    }

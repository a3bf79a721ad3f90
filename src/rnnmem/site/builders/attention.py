"""Figures and tables of the chapter "Looking back: attention".

What is trained and how is :mod:`rnnmem.attention_lab` (the design's
constants, the three readouts, the runs); the counts of the last section are
:mod:`rnnmem.attention`'s. The runs are trained, shared between the figures
and kept on disk by :func:`rnnmem.site.labruns.runs`. Every comparison worded
here carries Fisher's exact test (:func:`rnnmem.site.comparisons.compare`),
or, for what the states keep of the token, the Mann-Whitney test
(:func:`rnnmem.stats.mann_whitney`); :math:`p \\ge 0.05` reads as none
detected.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

import numpy as np

from rnnmem import attention, cells, stats
from rnnmem.attention_lab import (
    ARMS,
    BUDGET,
    DESIGN,
    HOLD,
    LAGS,
    LAGS_DESIGNED,
    MEMORY_GROUPS,
    MEMORY_LAGS,
    MODEL,
    REACH_SEQUENCES,
    AttentionRun,
    attention_profile,
    clue_share,
    token_memory,
)
from rnnmem.by_design import ModelText, Spec
from rnnmem.checks import PositiveInt
from rnnmem.experiments import ALPHABET, Lags, Outcome, Threshold

from ..arithmetic import arithmetic
from ..comparisons import ALPHA, compare, p_text
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


def _spread(values: np.ndarray) -> dict:
    """The median of per-seed values with their quartiles, and how many seeds they are."""
    q1, median, q3 = stats.quartiles(values)
    return {"median": median, "q1": q1, "q3": q3, "n": int(values.size), "text": f"{median:.2f} [{q1:.2f}, {q3:.2f}]"}


def _rank_test(a: np.ndarray, b: np.ndarray) -> dict:
    """Two arms' per-seed values by the Mann-Whitney test: p, whether it detects a difference, and which is higher."""
    mw = stats.mann_whitney(a, b)
    differ = mw.p < ALPHA
    higher = float(np.median(a)) > float(np.median(b))
    words = ("higher than" if higher else "lower than") if differ else "not detectably different from"
    return {"p": p_text(mw.p), "p_eq": f"*p* = {p_text(mw.p)}", "p_value": mw.p, "differ": differ, "words": words}


def _held_test(hold: np.ndarray, query: np.ndarray) -> dict:
    """Each seed's :math:`M` at the query against its :math:`M` a few steps after the token, by the Wilcoxon
    signed-rank test: p, whether it detects a difference, and the direction."""
    w = stats.wilcoxon_signed_rank(query - hold)
    differ = w.p < ALPHA
    higher = float(np.median(query - hold)) > 0
    words = ("higher than" if higher else "lower than") if differ else "not detectably different from"
    return {
        "p": p_text(w.p),
        "p_eq": f"*p* = {p_text(w.p)}",
        "p_value": w.p,
        "differ": differ,
        "words": words,
        "ratio": _spread(query / hold),
    }


@figure()
def attention_memory_figure(
    lags: Lags = MEMORY_LAGS,
    seeds: PositiveInt = 20,
    hidden: PositiveInt = 16,
    steps: PositiveInt = BUDGET,
    threshold: Threshold = 0.9,
    groups: PositiveInt = MEMORY_GROUPS,
    hold: PositiveInt = HOLD,
):
    """What the trained LSTM of each readout keeps of the token, :math:`M_t` against the step, median over the
    seeds with their quartiles, one panel per lag (:func:`rnnmem.attention_lab.token_memory`); read ``hold``
    steps after the token and at the query, each pair of readouts compared there by the Mann-Whitney test, and
    each readout's value at the query against its own a few steps after the token by the Wilcoxon test."""
    if any(lag < hold for lag in lags):
        raise ValueError(
            f"lags must all be at least hold = {hold}, so that step 1 + hold comes before the query, got {list(lags)}"
        )
    trained = _trained(lags, seeds, hidden, steps, threshold)
    fig, axes = new_figure(ncols=len(lags), height=3.0, sharey=True, squeeze=False)
    at: dict = {"hold": {}, "query": {}}
    tests: dict = {"hold": {}, "query": {}}
    held: dict = {}
    for col, lag in enumerate(lags):
        ax = axes[0, col]
        T = lag + 2
        per_seed = {}
        for k, arm in enumerate(ARMS):
            memory = token_memory(arm, lag, range(seeds), hidden, trained[(arm, lag)].params, groups=groups)
            memory = memory[np.isfinite(memory).all(axis=1)]  # a diverged member has no states to measure
            per_seed[arm] = memory
            linestyle, marker = STYLES[arm]
            q1, median, q3 = np.quantile(memory, [0.25, 0.5, 0.75], axis=0)
            t = np.arange(1, T + 1)
            ax.plot(t, median, color=PALETTE[k], linestyle=linestyle, label=LABELS[arm])
            ax.fill_between(t, q1, q3, color=PALETTE[k], alpha=0.15, linewidth=0)
        ax.axvline(1 + hold, color="#777777", linestyle=":", linewidth=1.0)
        ax.set_title(f"lag {lag}")
        ax.set_xlabel("step $t$")
        for point, index in (("hold", hold), ("query", T - 1)):
            at[point][str(lag)] = {arm: _spread(per_seed[arm][:, index]) for arm in ARMS}
            tests[point][str(lag)] = {
                f"{a}-{b}": _rank_test(per_seed[a][:, index], per_seed[b][:, index]) for a, b in PAIRS
            }
        held[str(lag)] = {arm: _held_test(per_seed[arm][:, hold], per_seed[arm][:, T - 1]) for arm in ARMS}
    axes[0, 0].set_ylabel("$M_t$, median over seeds")
    axes[0, 0].set_ylim(bottom=0.0)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside upper center", ncols=3)
    return fig, {
        "lags": list(lags),
        "seeds": seeds,
        "groups": groups,
        "sequences": groups * ALPHABET,
        "hold": hold,
        "hold_step": 1 + hold,
        "at": at,
        "tests": tests,
        "held": held,
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

"""Figures and tables of the chapter "Remembering by design".

The LRU's ring at initialization, drawn from :mod:`rnnmem.lru`; and the lab
of the chapter: what it trains and how the results are read is
:mod:`rnnmem.by_design` (the design's constants, the model specs, the runs,
the lag ladder and its climbing rule). The runs are trained, shared between
the figures and kept on disk by :func:`rnnmem.site.labruns.runs`. Every
comparison worded here carries Fisher's exact test
(:func:`rnnmem.site.comparisons.compare`); :math:`p \\ge 0.05` reads as none
detected.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from rnnmem import lru, memory, stats, tasks
from rnnmem.by_design import (
    BUDGET,
    CLIMB_RATE,
    DESIGN,
    FIRST_BLOCK,
    FIRST_LAG,
    FIRST_MODELS,
    FIRST_SELECTIVE,
    LAGS,
    MODELS,
    PLAIN_TASK,
    REACH_LAG,
    REACH_MODELS,
    RING_LAG,
    RING_RADII,
    DesignRun,
    Ladder,
    LadderResult,
    ModelText,
    Spec,
    gradient_reach,
    make_ensemble,
)
from rnnmem.checks import NonNegativeInt, OpenUnit, PositiveInt
from rnnmem.experiments import ALPHABET, Design, Lags, Outcome, Threshold

from ..arithmetic import arithmetic
from ..comparisons import ALPHA, compare, p_text
from ..labruns import chains, runs
from ..registry import figure, table
from ..style import PALETTE, new_figure
from ..tables import Table

# ------------------------------------------------------------------ the LRU's ring


@figure()
def lru_ring_horizons(
    state_size: PositiveInt = 64,
    r_min: OpenUnit = 0.9,
    r_max: OpenUnit = 0.999,
    level: OpenUnit = 0.01,
    seed: NonNegativeInt = 0,
):
    """The LRU's decays at initialization on the complex plane (left) and the level horizon of each (right).

    The decays are :func:`rnnmem.lru.ring_init` then :func:`rnnmem.lru.decay`;
    the horizons :func:`rnnmem.lru.ring_horizon` of their moduli. Values:
    ``state_size``, ``r_min``, ``r_max``, ``level``; ``smallest`` and
    ``largest``, the extreme moduli drawn; ``horizon_min`` and
    ``horizon_max``, the horizons of ``r_min`` and ``r_max``; ``shortest``,
    ``median`` and ``longest``, the horizons drawn; ``stable``, whether every
    modulus is below one.
    """
    r_min, r_max = lru.check_ring(r_min, r_max)
    lam = lru.decay(*lru.ring_init(state_size, r_min, r_max, seed=seed))
    r = np.abs(lam)
    steps = np.sort(np.atleast_1d(lru.ring_horizon(r, level)["level"]))
    bounds = [lru.ring_horizon(x, level)["level"] for x in (r_min, r_max)]

    fig, (ax, bx) = new_figure(ncols=2, height=2.6)
    circle = np.exp(1j * np.linspace(0.0, 2 * np.pi, 361))
    ax.plot(circle.real, circle.imag, color="#999999", linestyle="--", linewidth=0.8)
    for x in (r_min, r_max):
        ax.plot(x * circle.real, x * circle.imag, color=PALETTE[0], linewidth=0.6, alpha=0.6)
    ax.plot(lam.real, lam.imag, "o", color=PALETTE[1], markersize=2.5)
    ax.set_aspect("equal")
    ax.set_xlim(-1.1, 1.1)
    ax.set_ylim(-1.1, 1.1)
    ax.set_xlabel(r"$\mathrm{Re}\,\lambda$")
    ax.set_ylabel(r"$\mathrm{Im}\,\lambda$")

    k = np.arange(1, state_size + 1)
    bx.semilogy(k, steps, "o", color=PALETTE[1], markersize=2.5)
    for x in bounds:
        bx.axhline(x, color="#777777", linestyle="--", linewidth=0.8)
    bx.set_xlabel("state, by horizon")
    bx.set_ylabel(f"{100 * level:g}% horizon (steps)")
    return fig, {
        "state_size": state_size,
        "r_min": r_min,
        "r_max": r_max,
        "level": level,
        "smallest": float(r.min()),
        "largest": float(r.max()),
        "horizon_min": bounds[0],
        "horizon_max": bounds[1],
        "shortest": float(steps[0]),
        "median": float(np.median(steps)),
        "longest": float(steps[-1]),
        "stable": bool(np.all(r < 1.0)),
    }


# ---------------------------------------------------------------------------- the lab
#
# What is trained and how it is read is rnnmem.by_design (the design's constants, the specs, the runs, the
# ladder and its climbing rule); the runs are trained, shared and kept by labruns.runs. Every comparison
# worded here carries Fisher's exact test (comparisons.compare); p >= 0.05 reads as none detected.


def _specs(models) -> list[Spec]:
    return [Spec.parse(m, f"models[{i}]") for i, m in enumerate(models)]


def _lab_design(hidden: int, steps: int, threshold: float) -> Design:
    return dataclasses.replace(DESIGN, hidden=hidden, steps=steps, threshold=threshold)


def _ladder(models, task_names, lags, seeds, hidden, steps, threshold) -> LadderResult:
    ladder = Ladder(
        tuple(models), tuple(task_names), tuple(lags), tuple(range(seeds)), _lab_design(hidden, steps, threshold)
    )
    return ladder.result(chains(ladder.first_runs(), ladder.next_run))


def _rate_text(o: Outcome) -> str:
    lo, hi = o.interval()
    return f"{o.successes} ({100 * lo:.0f}–{100 * hi:.0f}%)"


_CLASSIC_NAMES = {"lstm:chrono": "the chrono LSTM", "gru": "the GRU", "rnn": "the tanh RNN"}
_CELL_NAMES = {
    "lru": "the LRU",
    "mingru": "minGRU",
    "selective": "the bare selective scan",
    "mamba": "Mamba's block",
}
_LAYER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four"}


def prose_name(spec: Spec, among: Sequence[Spec] = ()) -> str:
    """The model as a sentence names it: "the chrono LSTM", "minGRU", "the two-layer LRU".

    The number of layers is named when ``among`` holds the same cell with another number of layers, or
    when it is more than one.
    """
    if spec.classic is not None:
        return _CLASSIC_NAMES.get(str(spec.classic), str(spec.classic))
    name = _CELL_NAMES[spec.cell]
    if spec.layers > 1 or any(o.cell == spec.cell and o.layers != spec.layers for o in among):
        words = _LAYER_WORDS.get(spec.layers, str(spec.layers))
        name = name.replace("the ", f"the {words}-layer ") if name.startswith("the ") else f"{words}-layer {name}"
    return name if spec.r_max is None else f"{name} with r_max {spec.r_max:g}"


def _join(names: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def reach_phrase(longest: Sequence[tuple[str, int | None]], rate: float) -> str:
    """The longest lag each model holds, as one clause: the models grouped by that lag, longest first.

    ``longest`` pairs a model's prose name with the longest lag at which at least ``rate`` of its seeds
    succeed (``None``: no lag). The clause is true of the values whatever they are, which is why the
    chapter's summary is written by it rather than by hand.

    >>> reach_phrase([("the GRU", 30), ("the LRU", 300), ("minGRU", 30), ("the LSTM", None)], 0.5)
    'at least half the seeds succeed up to lag 300 for the LRU, up to lag 30 for the GRU and minGRU, and at no lag for the LSTM'
    """
    if not longest:
        raise ValueError("longest: expected at least one (model, lag) pair, got none")
    groups: dict[int | None, list[str]] = {}
    for name, lag in longest:
        groups.setdefault(lag, []).append(name)
    order = sorted(groups, key=lambda lag: -1 if lag is None else lag, reverse=True)
    parts = [(f"up to lag {lag}" if lag is not None else "at no lag") + " for " + _join(groups[lag]) for lag in order]
    share = "half the seeds" if rate == 0.5 else f"{rate:.0%} of the seeds"
    body = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + ", and " + parts[-1]
    return f"at least {share} succeed {body}"


def _ladder_values(res: LadderResult) -> dict:
    """Per task and model: the count at every lag trained, and the longest lag held by most seeds; per
    task, ``reach``: :func:`reach_phrase` of those longest lags."""
    lad = res.ladder
    out: dict = {
        "seeds": len(lad.seeds),
        "steps": lad.design.steps,
        "lags": list(lad.lags),
        "climb": lad.climb_rate,
        "arithmetic": arithmetic(),
        "tasks": {},
    }
    for t in lad.tasks:
        per_task: dict = {}
        for s in lad.models:
            counts = {}
            for lag in lad.lags:
                o = res.outcome(s, t, lag)
                if o is not None:
                    lo, hi = o.interval()
                    counts[str(lag)] = {"k": o.successes, "lo": lo, "hi": hi, "text": _rate_text(o)}
            held = res.longest(s, t)
            per_task[s.key] = {"counts": counts, "longest": held if held is not None else "none"}
        out["tasks"][t] = per_task
        specs = list(lad.models)
        longest = [(prose_name(s, specs), res.longest(s, t, lad.climb_rate)) for s in specs]
        out.setdefault("reach", {})[t] = reach_phrase(longest, lad.climb_rate)
    return out


TASK_SHORT = {"blank-recall": "blanks", "recall": "random tokens", "adding": "adding", "first-recall": "first token"}

TASK_TITLES = {
    "blank-recall": "recall across blanks",
    "recall": "recall across random tokens",
    "adding": "the adding problem",
    "first-recall": "recall of the first token",
}


@figure()
def ladder_figure(
    models: Sequence[ModelText] = MODELS,
    tasks: Sequence[Literal["blank-recall", "recall", "adding"]] = ("blank-recall", "recall", "adding"),
    lags: Lags = LAGS,
    seeds: PositiveInt = 20,
    hidden: PositiveInt = 16,
    steps: PositiveInt = BUDGET,
    threshold: Threshold = 0.9,
):
    """Share of seeds that succeed against lag, one panel per task, a line per model, 95% Wilson intervals."""
    res = _ladder(models, tasks, lags, seeds, hidden, steps, threshold)
    specs = list(res.ladder.models)
    fig, axes = new_figure(nrows=len(res.ladder.tasks), height=1.7 + 1.9 * len(res.ladder.tasks), squeeze=False)
    offsets = np.linspace(-0.06, 0.06, len(specs))
    for ax, t in zip(axes[:, 0], res.ladder.tasks):
        for k, s in enumerate(specs):
            xs, ys, lo, hi = [], [], [], []
            for lag in res.ladder.lags:
                o = res.outcome(s, t, lag)
                if o is None:
                    continue
                a, b = o.interval()
                xs.append(lag * 10 ** offsets[k])
                ys.append(o.rate)
                lo.append(o.rate - a)
                hi.append(b - o.rate)
            style = dict(color=PALETTE[k % len(PALETTE)], linestyle="-" if s.classic is None else "--")
            ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", markersize=3.5, capsize=2, label=s.label, **style)
        ax.set_xscale("log")
        ax.set_xticks(list(res.ladder.lags), [str(lag) for lag in res.ladder.lags])
        ax.minorticks_off()
        ax.set_ylim(-0.05, 1.05)
        ax.set_title(TASK_TITLES[t], fontsize=10)
        ax.set_ylabel("share of seeds")
    axes[-1, 0].set_xlabel("lag (steps between the answer and the query)")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside upper center", ncols=3)
    return fig, _ladder_values(res)


@table()
def ladder_table(
    models: Sequence[ModelText] = MODELS,
    tasks: Sequence[Literal["blank-recall", "recall", "adding"]] = ("blank-recall", "recall", "adding"),
    lags: Lags = LAGS,
    seeds: PositiveInt = 20,
    hidden: PositiveInt = 16,
    steps: PositiveInt = BUDGET,
    threshold: Threshold = 0.9,
):
    """Successes of ``seeds`` per task and model (rows) and lag (columns), with the Wilson interval of the rate."""
    res = _ladder(models, tasks, lags, seeds, hidden, steps, threshold)
    rows = []
    for t in res.ladder.tasks:
        for k, s in enumerate(res.ladder.models):
            row = [TASK_TITLES[t] if k == 0 else "", s.label]
            for lag in res.ladder.lags:
                o = res.outcome(s, t, lag)
                row.append("–" if o is None else _rate_text(o))
            rows.append(row)
    table = Table(
        columns=["task", "model", *[f"lag {lag}" for lag in res.ladder.lags]],
        rows=rows,
        align=["left", "left", *["right"] * len(res.ladder.lags)],
        notes=(
            f"Seeds of {seeds} that reached {threshold:g} (held-out accuracy, or the share of the baseline's "
            f"squared error removed) within {steps} updates, and the 95% Wilson interval of the rate; "
            f"– : not trained, the model's rate at the lag before was below {CLIMB_RATE:.0%}."
        ),
    )
    return table, _ladder_values(res)


def _outcomes(specs: list[Spec], task: str, lag: int, seeds: int, hidden: int, steps: int, threshold: float):
    design = _lab_design(hidden, steps, threshold)
    keys = [DesignRun(s, task, lag, tuple(range(seeds)), design) for s in specs]
    return [r.outcome(steps) for r in runs(keys)]


def covers_phrase(informative: Sequence[str], uninformative: Sequence[str]) -> str:
    """Which failures of first-token recall say something: the models that learn plain recall and fail the first
    token, and those that fail both.

    Both name models that learned the first token in no seed: ``informative`` those whose plain-recall count is
    above it by Fisher's test; ``uninformative`` those where it is not, whose first-token failure the task's
    distance alone explains.

    >>> covers_phrase(["the two-layer LRU"], ["minGRU", "the one-layer LRU"])
    'the failure says something only for the two-layer LRU, which learned plain recall at the same lag; minGRU \
and the one-layer LRU did not learn plain recall either, so their failure says nothing about the first token'
    >>> covers_phrase([], ["minGRU"])
    'the failure says nothing about the first token for any of them: minGRU did not learn plain recall either'
    """
    if not informative and not uninformative:
        raise ValueError("informative and uninformative: expected at least one model, got none")
    if not informative:
        return (
            f"the failure says nothing about the first token for any of them: {_join(uninformative)} did not learn "
            "plain recall either"
        )
    text = f"the failure says something only for {_join(informative)}, which learned plain recall at the same lag"
    if uninformative:
        text += (
            f"; {_join(uninformative)} did not learn plain recall either, so their failure says nothing about the "
            "first token"
        )
    return text


def learned_phrase(learned: Sequence[tuple[str, int]], models: int, seeds: int, steps: int) -> str:
    """Which of ``models`` input-only models learned the first token in some seeds: ``learned`` pairs a model's
    prose name with its successes (the others had none).

    >>> learned_phrase([], 3, 20, 300)
    'none learned it within 300 updates'
    >>> learned_phrase([("the two-layer selective decay", 5)], 3, 20, 300)
    'within 300 updates the two-layer selective decay learned it in 5 seeds of 20, and the others in none'
    """
    if not learned:
        return f"none learned it within {steps} updates"
    parts = _join([f"{name} learned it in {k} seeds of {seeds}" for name, k in learned])
    rest = "" if len(learned) == models else ", and the others in none"
    return f"within {steps} updates {parts}{rest}"


@table()
def first_recall_table(
    models: Sequence[ModelText] = FIRST_MODELS + FIRST_SELECTIVE + FIRST_BLOCK,
    lag: PositiveInt = FIRST_LAG,
    seeds: PositiveInt = 20,
    hidden: PositiveInt = 16,
    steps: PositiveInt = BUDGET,
    threshold: Threshold = 0.9,
):
    """Recall of the first token, whose position varies, beside plain recall at the same lag: successes on each
    and the final accuracy on the first token per model; one layer against two for each input-only model, the
    gated model against each, and plain against first-token recall per model, with Fisher's exact test."""
    specs = _specs(models)
    outcomes = dict(zip(specs, _outcomes(specs, "first-recall", lag, seeds, hidden, steps, threshold)))
    plain = dict(zip(specs, _outcomes(specs, PLAIN_TASK, lag, seeds, hidden, steps, threshold)))
    rows: list[list[str]] = []
    models_: dict[str, Any] = {}
    pairs: dict[str, Any] = {}
    gated = [s for s in specs if s.classic is not None]
    informative: list[str] = []
    uninformative: list[str] = []
    learned: list[tuple[str, int]] = []
    for s, o in outcomes.items():
        q1, med, q3 = o.accuracy()
        control = compare(plain[s], o)
        rows.append([s.label, _rate_text(plain[s]), _rate_text(o), control["p"], f"{med:.2f} [{q1:.2f}, {q3:.2f}]"])
        told = control["differ"] and plain[s].successes > o.successes
        models_[s.key] = {
            "k": o.successes,
            "text": _rate_text(o),
            "median": med,
            "plain_k": plain[s].successes,
            "plain_text": _rate_text(plain[s]),
            "control": control,
            "informative": told,
            "name": prose_name(s, specs),
        }
        if s.classic is None and o.successes == 0:
            (informative if told else uninformative).append(prose_name(s, specs))
        elif s.classic is None:
            learned.append((prose_name(s, specs), o.successes))
    for s in specs:
        deeper = [d for d in specs if d.classic is None and d.cell == s.cell and d.layers > s.layers]
        if s.classic is None and s.layers == 1 and deeper:
            pairs[f"{s.cell}_layers"] = compare(outcomes[deeper[0]], outcomes[s])
        if s.classic is None and gated:
            pairs[f"{gated[0].key}_{s.key}"] = compare(outcomes[gated[0]], outcomes[s])
    input_only = [prose_name(s, specs) for s in specs if s.classic is None]
    values: dict[str, Any] = {
        "lag": lag,
        "near": (lag + 1) // 2 + 1,
        "far": lag + 1,
        "seeds": seeds,
        "steps": steps,
        "chance": 1 / ALPHABET,
        "models": models_,
        "pairs": pairs,
        "largest_p": max((p["p_value"] for p in pairs.values() if p["differ"]), default=float("nan")),
        "input_only": _join(input_only) if input_only else "none",
        "covers": covers_phrase(informative, uninformative) if informative or uninformative else "none",
        "learned": learned_phrase(learned, len(input_only), seeds, steps),
        "informative": len(informative),
    }
    table = Table(
        columns=[
            "model",
            f"plain recall, successes of {seeds}",
            f"first token, successes of {seeds}",
            "Fisher's p, plain against first",
            "first token, final accuracy, median [quartiles]",
        ],
        rows=rows,
        align=["left", "right", "right", "right", "right"],
        notes=(
            f"The token to recall is followed by random tokens and the query; {(lag + 1) // 2 + 1} to {lag + 1} steps "
            f"separate it from the query, and blanks fill the start. Plain recall: the token {lag + 1} steps back, "
            f"random tokens between. Within {steps} updates, 95% Wilson intervals of the rates; chance accuracy "
            f"is 1/{ALPHABET}."
        ),
    )
    return table, values


@figure()
def ring_figure(
    radii: Sequence[OpenUnit] = RING_RADII,
    task: Literal["blank-recall", "recall", "adding"] = "blank-recall",
    lag: PositiveInt = RING_LAG,
    seeds: PositiveInt = 20,
    hidden: PositiveInt = 16,
    steps: PositiveInt = BUDGET,
    threshold: Threshold = 0.9,
):
    """LRU success against the ring's outer radius r_max, beside the 1% horizon each radius predicts."""
    specs = [Spec("lru", 1, float(r)) for r in radii]
    design = _lab_design(hidden, steps, threshold)
    keys = [DesignRun(s, task, lag, tuple(range(seeds)), design) for s in specs]
    results = runs(keys)
    outcomes = [r.outcome(steps) for r in results]
    fig, (left, right) = new_figure(ncols=2, height=2.9)
    x = np.arange(len(radii))
    rates = [o.rate for o in outcomes]
    intervals = np.array([o.interval() for o in outcomes])
    left.bar(x, rates, color=PALETTE[0], width=0.6)
    left.errorbar(
        x,
        rates,
        yerr=[np.array(rates) - intervals[:, 0], intervals[:, 1] - np.array(rates)],
        fmt="none",
        color="#222222",
        capsize=3,
    )
    left.set_xticks(x, [f"{r:g}" for r in radii])
    left.set_ylim(0, 1.05)
    left.set_xlabel("$r_{\\max}$")
    left.set_ylabel(f"share of seeds, lag {lag}")
    horizons = [float(memory.horizon(float(r))) for r in radii]
    right.semilogy(x, horizons, "o-", color=PALETTE[1])
    right.axhline(lag + 1, color="#c23b6b", linestyle=":", linewidth=1.4)
    right.text(x[0], (lag + 1) * 1.25, f"the task's distance, {lag + 1}", fontsize=8, color="#c23b6b")
    right.set_xticks(x, [f"{r:g}" for r in radii])
    right.set_xlabel("$r_{\\max}$")
    right.set_ylabel("1% horizon of $|\\lambda| = r_{\\max}$")
    values = {
        "lag": lag,
        "distance": lag + 1,
        "task": task,
        "seeds": seeds,
        "steps": steps,
        "radii": {
            f"{r:g}": {
                "text": _rate_text(o),
                "k": o.successes,
                "horizon": h,
                "lifetime": float(memory.mean_lifetime(float(r))),
            }
            for r, o, h in zip(radii, outcomes, horizons)
        },
        "pair": compare(outcomes[-1], outcomes[0]),
        "moduli": {f"{r:g}": trained_moduli(key, result) for r, key, result in zip(radii, keys, results)},
    }
    return fig, values


def trained_moduli(run: DesignRun, result: Any) -> dict:
    """The largest :math:`|\\lambda|` of each seed's first layer, drawn and trained, and what training did to it.

    ``initial`` and ``trained``: per seed; ``rose``: the seeds whose largest modulus rose; ``p``: the Wilcoxon
    signed-rank test of trained against drawn (:func:`rnnmem.stats.wilcoxon_signed_rank`); ``highest``: the
    largest trained modulus of any seed, and ``horizon`` its 1% horizon; ``past``: the seeds whose largest trained
    modulus keeps 1% over the task's distance (``lag + 1`` steps).
    """
    task = tasks.make_task(run.task, run.lag, ALPHABET)
    start = make_ensemble(run.model, task, run.seeds, run.design.hidden).params["nu_log_l0"]
    initial = np.exp(-np.exp(np.asarray(start, dtype=np.float64))).max(axis=1)
    trained = np.exp(-np.exp(np.asarray(result.params["nu_log_l0"], dtype=np.float64))).max(axis=1)
    test = stats.wilcoxon_signed_rank(trained - initial)
    highest = float(trained.max())
    return {
        "initial": initial.tolist(),
        "trained": trained.tolist(),
        "rose": int((trained > initial).sum()),
        "n": int(trained.size),
        "p_value": test.p,
        "p": p_text(test.p),
        "differ": test.p < ALPHA,
        "highest": highest,
        "highest_initial": float(initial.max()),
        "horizon": float(memory.horizon(highest)),
        "past": int((trained >= memory.gate_for_horizon(run.lag + 1)).sum()),
    }


@figure()
def reach_figure(
    models: Sequence[ModelText] = REACH_MODELS,
    lag: PositiveInt = REACH_LAG,
    seeds: PositiveInt = 20,
    hidden: PositiveInt = 16,
    steps: PositiveInt = BUDGET,
    threshold: Threshold = 0.9,
    sequences: PositiveInt = 128,
    opened: Sequence[ModelText] = ("lstm:chrono", "lstm:chrono:i0"),
):
    """||dL/dh_s|| over ||dL/dh_T|| against the distance T - s on blank recall, at initialization and trained.

    Values: ``before`` and ``after``, the share at the far end per model; ``opened``, the share at the far end at
    initialization seed by seed of the two models ``opened`` (by default the chrono LSTM as drawn and with its
    input-gate bias set to 0, the chrono draw's shut input gates opened), their medians, the seeds where the second
    is higher and the Wilcoxon signed-rank test of the log ratios."""
    specs = _specs(models)
    design = _lab_design(hidden, steps, threshold)
    keys = [DesignRun(s, "blank-recall", lag, tuple(range(seeds)), design) for s in specs]
    results = dict(zip(keys, runs(keys)))
    fig, (left, right) = new_figure(ncols=2, height=3.6, sharey=True)
    far: dict[str, list[float]] = {}
    for k, (s, key) in enumerate(zip(specs, keys)):
        style = dict(color=PALETTE[k % len(PALETTE)], linestyle="-" if s.classic is None else "--")
        for ax, params in ((left, None), (right, results[key].params)):
            share = gradient_reach(s, lag, key.seeds, hidden, params=params, sequences=sequences)
            ax.semilogy(np.arange(len(share)), share, label=s.label, **style)
            far.setdefault(s.key, []).append(float(share[-1]))
    for ax, title in ((left, "at initialization"), (right, f"after training\n(≤ {steps} updates)")):
        ax.set_title(title, fontsize=10)
        ax.set_xlim(0, lag + 1)
    fig.supxlabel("distance from the query, T − s")
    left.set_ylabel("$\\|\\partial\\ell/\\partial h_s\\| / \\|\\partial\\ell/\\partial h_T\\|$, median")
    fig.legend(*right.get_legend_handles_labels(), loc="outside upper center", ncols=2)
    if isinstance(opened, str) or len(opened) != 2:
        raise ValueError(f"opened must be two models, as drawn and changed, got {opened!r}")
    shut, opened_spec = (Spec.parse(m, f"opened[{i}]") for i, m in enumerate(opened))
    pair = [
        [float(gradient_reach(m, lag, (seed,), hidden, sequences=sequences)[-1]) for seed in keys[0].seeds]
        for m in (shut, opened_spec)
    ]
    test = stats.wilcoxon_signed_rank(np.log(pair[1]) - np.log(pair[0]))
    return fig, {
        "lag": lag,
        "distance": lag + 1,
        "opened": {
            "model": opened_spec.label,
            "against": shut.label,
            "median": float(np.median(pair[1])),
            "against_median": float(np.median(pair[0])),
            "higher": int(sum(b > a for a, b in zip(*pair))),
            "n": len(pair[0]),
            "p_value": test.p,
            "p": p_text(test.p),
            "differ": test.p < ALPHA,
        },
        "before": {key: v[0] for key, v in far.items()},
        "after": {key: v[1] for key, v in far.items()},
    }


def _cell(text: str, name: str) -> tuple[Spec, str, int]:
    """``"model/task/lag"`` as its spec, task and lag, with errors naming ``name``."""
    parts = text.split("/") if isinstance(text, str) else []
    if len(parts) != 3 or not parts[2].isdigit() or int(parts[2]) < 1:
        raise ValueError(f"{name} must be a cell 'model/task/lag', such as 'lru/recall/10', got {text!r}")
    spec = Spec.parse(parts[0], name)
    if parts[1] not in TASK_TITLES:
        raise ValueError(f"{name} must name a task of {', '.join(TASK_TITLES)}, got {parts[1]!r}")
    return spec, parts[1], int(parts[2])


@table()
def contrast_table(
    contrasts: Sequence[str] = ("lru/recall/10 : selective/recall/10",),
    seeds: PositiveInt = 20,
    hidden: PositiveInt = 16,
    steps: PositiveInt = BUDGET,
    threshold: Threshold = 0.9,
):
    """The differences the chapter states: two cells each (``"model/task/lag : model/task/lag"``), their
    successes and Fisher's exact test. Values by position: ``{{id.c0.phrase}}``, ``{{id.c0.p}}``."""
    pairs = []
    for i, text in enumerate(contrasts):
        sides = text.split(" : ") if isinstance(text, str) else []
        if len(sides) != 2:
            raise ValueError(f"contrasts[{i}] must be two cells 'model/task/lag : model/task/lag', got {text!r}")
        pairs.append(tuple(_cell(side.strip(), f"contrasts[{i}]") for side in sides))
    design = _lab_design(hidden, steps, threshold)
    keys = [DesignRun(s, t, lag, tuple(range(seeds)), design) for pair in pairs for s, t, lag in pair]
    outcomes = [r.outcome(steps) for r in runs(keys)]
    rows, values = [], {}
    for i, pair in enumerate(pairs):
        a, b = outcomes[2 * i], outcomes[2 * i + 1]
        test = compare(a, b)
        names = [f"{s.label}; {TASK_SHORT[t]}, lag {lag}" for s, t, lag in pair]
        rows.append([names[0], str(a.successes), names[1], str(b.successes), test["p"], test["verdict"]])
        values[f"c{i}"] = {**test, "first": names[0], "second": names[1]}
    table = Table(
        columns=["first", "successes", "second", "successes", "Fisher's p", "verdict"],
        rows=rows,
        align=["left", "right", "left", "right", "right", "left"],
        notes=(
            f"Successes of {seeds} seeds within {steps} updates; Fisher's exact test, two-sided; a difference "
            "is stated where p < 0.05."
        ),
    )
    return table, values

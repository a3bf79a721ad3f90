"""Figures and tables of the chapter "Memory, measured by training".

What the lab trains and how its results are read is :mod:`rnnmem.experiments`:
the model specs, the design (:data:`~rnnmem.experiments.ALPHABET`,
:data:`~rnnmem.experiments.CONFIGS`, :data:`~rnnmem.experiments.DESIGN`), the
runs as frozen values (:class:`~rnnmem.experiments.RecallRun`,
:class:`~rnnmem.experiments.DropoutRun`, :class:`~rnnmem.experiments.SGDRun`),
success counts, measured horizons, starting factors and the plain gradient
descent of the clipping experiment. This module draws them and words them.

Training runs are shared between the figures of one build: each run's result
is kept in :data:`_RUNS`, keyed by the run (a frozen value holding everything
it depends on), and the runs a directive needs that are not there yet are
trained in up to :data:`WORKERS` processes (one inside a pytest-xdist worker;
started by ``forkserver`` or ``spawn``, never ``fork``: see :func:`pool_context`).
Each run is a pure function of itself, so the output does not depend on which
process trained it.

The builders' arguments are checked from their signatures
(:func:`rnnmem.checks.check_arguments`); only relations between arguments are
checked in the body.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence

import numpy as np

from rnnmem import memory
from rnnmem.checks import Finite, Positive, PositiveInt
from rnnmem.experiments import (
    ALPHABET,
    CONFIGS,
    DESIGN,
    SCHEMES,
    AddingLength,
    Design,
    DropoutRun,
    Keep,
    Lags,
    Model,
    ModelSpec,
    Sweep,
    Threshold,
    by_starting_horizon,
    carry_survival,
    clip_ladder,
    figure_rung,
    measured_horizon,
    starting_factor,
)
from rnnmem.experiments import (
    gradient_reach as reach_by_distance,
)

from ..arithmetic import arithmetic
from ..registry import figure, table
from ..style import PALETTE, new_figure
from ..tables import Table

WORKERS = max(1, min(2, os.cpu_count() or 1, int(os.environ.get("RNNMEM_LAB_WORKERS", "2"))))

_RUNS: dict = {}


# ---------------------------------------------------------------------------- words


def _label(spec: ModelSpec, tex: bool = False) -> str:
    """A model in a legend or a table: "tanh RNN", "LSTM, chrono", "LSTM, $b_f = 2$"."""
    if spec.cell != "lstm":
        return {"rnn": "tanh RNN", "gru": "GRU"}[spec.cell]
    if spec.init == "chrono":
        return "LSTM, chrono"
    if spec.forget_bias is None:
        return "LSTM, default draw"
    return f"LSTM, \\(b_f = {spec.forget_bias:g}\\)" if tex else f"LSTM, $b_f = {spec.forget_bias:g}$"


def _prose(spec: ModelSpec) -> str:
    """A model named in a sentence: "the tanh RNN", "the LSTM with $b_f = 2$"."""
    if spec.cell != "lstm":
        return {"rnn": "the tanh RNN", "gru": "the GRU"}[spec.cell]
    if spec.init == "chrono":
        return "the chrono LSTM"
    if spec.forget_bias is None:
        return "the LSTM with PyTorch's draw"
    return f"the LSTM with $b_f = {spec.forget_bias:g}$"


def _join(words: list[str], empty: str = "none") -> str:
    """``a``, ``a and b``, ``a, b and c``; ``empty`` for no words."""
    if not words:
        return empty
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _order_words(counts: list[int]) -> str:
    """ "follow" when successes never fall as the starting horizon grows, else "do not follow"."""
    return "follow" if all(a <= b for a, b in zip(counts, counts[1:])) else "do not follow"


def _design(hidden: int, steps: int, threshold: float) -> Design:
    """The lab's design with the directive's hidden size, budget and threshold."""
    return dataclasses.replace(DESIGN, hidden=hidden, steps=steps, threshold=threshold)


# ---------------------------------------------------------------------------- runs


def runs(keys: list) -> list:
    """The results of the runs ``keys`` (:mod:`rnnmem.experiments` runs), training those not yet kept.

    The missing runs are trained costliest first, in up to :func:`workers` processes, started by
    :func:`pool_context` (never by ``fork``).
    """
    missing = sorted({k for k in keys if k not in _RUNS}, key=lambda k: (-k.cost, repr(k)))
    processes = min(workers(), len(missing))
    if processes > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(processes, mp_context=pool_context(), initializer=_start_worker) as pool:
            for k, result in zip(missing, pool.map(_execute, missing)):
                _RUNS[k] = result
    else:
        for k in missing:
            _RUNS[k] = _execute(k)
    return [_RUNS[k] for k in keys]


def workers() -> int:
    """How many processes may train: :data:`WORKERS`, but one inside a pytest-xdist worker.

    pytest-xdist's workers (``$PYTEST_XDIST_WORKER`` set) already keep the cores busy; a pool in
    each of them would start twice as many training processes as there are cores.
    """
    return 1 if os.environ.get("PYTEST_XDIST_WORKER") else WORKERS


def pool_context():
    """The multiprocessing context of the pool: ``forkserver`` where the platform has it, else ``spawn``.

    Never ``fork``: ``mkdocs serve`` renders while its server and file-watcher threads run, and
    a child forked from a multi-threaded process can inherit a lock another thread held and hang.
    The fork server is one single-threaded process that has imported this module once, and forks
    each worker from itself.
    """
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


def _start_worker() -> None:
    """In each worker, before its first run: the BLAS on one thread, as :func:`rnnmem.site.render.build_content`
    holds it in the parent (a started process does not inherit that limit; a sum split over threads would
    add in another order)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def _execute(run):
    """Train one run (in whichever process)."""
    return run.execute()


# ---------------------------------------------------------------------------- (a) success against lag


def _sweep(models, lags, seeds, hidden, steps, threshold) -> tuple[Sweep, dict, dict]:
    """The sweep, its successes per model and lag (:meth:`rnnmem.experiments.Sweep.counts`), and its results."""
    sweep = Sweep(models, lags, tuple(range(seeds)), _design(hidden, steps, threshold))
    keys = sweep.runs()
    results = dict(zip(keys, runs(keys)))
    return sweep, sweep.counts(results), results


def _sweep_values(sweep: Sweep, counts: dict) -> dict:
    """What the chapter reads off the sweep: successes per model and lag, totals per lag, measured horizons,
    and the arithmetic that trained them (:mod:`rnnmem.site.arithmetic`)."""
    specs, lags, S, design = sweep.models, list(sweep.lags), len(sweep.seeds), sweep.design
    horizon = {s.key: measured_horizon(lags, counts[s], S) for s in specs}
    lstms = by_starting_horizon(specs)  # forget bias up, chrono last
    return {
        "seeds": S,
        "steps": design.steps,
        "threshold": design.threshold,
        "hidden": design.hidden,
        "lags": lags,
        "models": len(specs),
        "runs": len(specs) * S,
        "counts": {s.key: {f"lag{lag}": k for lag, k in zip(lags, counts[s])} for s in specs},
        "successes": {f"lag{lag}": sum(counts[s][i] for s in specs) for i, lag in enumerate(lags)},
        "learned": {
            f"lag{lag}": _join([_prose(s) for s in specs if counts[s][i] > 0], "no model") for i, lag in enumerate(lags)
        },
        "all_seeds": {
            f"lag{lag}": _join([_prose(s) for s in specs if counts[s][i] == S], "no model")
            for i, lag in enumerate(lags)
        },
        "horizon": {k: "none" if v is None else v for k, v in horizon.items()},
        "bias_order": {f"lag{lag}": _order_words([counts[s][i] for s in lstms]) for i, lag in enumerate(lags)},
        "arithmetic": arithmetic(),
    }


@figure()
def success_by_lag(
    models: Sequence[Model] = CONFIGS,
    lags: Lags = (2, 5, 10, 20, 40),
    seeds: PositiveInt = 3,
    hidden: PositiveInt = 16,
    steps: PositiveInt = 300,
    threshold: Threshold = 0.9,
):
    """Share of seeds that reach the held-out threshold, against the lag, one line per model."""
    sweep, counts, _ = _sweep(models, lags, seeds, hidden, steps, threshold)
    fig, ax = new_figure(height=4.4)
    markers = "osD^vP"
    n = len(sweep.models)
    for k, spec in enumerate(sweep.models):
        rate = np.array(counts[spec]) / len(sweep.seeds)
        offset = (k - (n - 1) / 2) * 0.012  # keep equal rates from hiding each other
        ax.plot(
            sweep.lags,
            rate + offset,
            marker=markers[k % 6],
            color=PALETTE[k % len(PALETTE)],
            linestyle="-" if spec.cell == "lstm" else "--",
            label=_label(spec),
        )
    ax.set_xscale("log", base=2)
    ax.set_xticks(sweep.lags, [str(v) for v in sweep.lags])
    ax.minorticks_off()
    ax.set_ylim(-0.06, 1.06)
    ax.set_xlabel("lag: distractors between the token and the query")
    ax.set_ylabel(
        f"share of {len(sweep.seeds)} seeds with held-out\n"
        f"accuracy ≥ {sweep.design.threshold:g} by update {sweep.design.steps}"
    )
    fig.legend(loc="outside lower center", ncols=2)
    return fig, _sweep_values(sweep, counts)


@table()
def measured_horizon_table(
    models: Sequence[Model] = CONFIGS,
    lags: Lags = (2, 5, 10, 20, 40),
    seeds: PositiveInt = 3,
    hidden: PositiveInt = 16,
    steps: PositiveInt = 300,
    threshold: Threshold = 0.9,
):
    """Per model: the starting factor, the horizons it predicts, successes K/S by lag, the measured horizon."""
    sweep, counts, _ = _sweep(models, lags, seeds, hidden, steps, threshold)
    S, design = len(sweep.seeds), sweep.design
    rows = []
    for spec in sweep.models:
        if spec.init == "chrono":
            factor, efold, level = "σ(ln u), u ≤ T − 1", "up to ≈ T", "up to ≈ 4.6 T"
        else:
            f = starting_factor(spec, sweep.lags[0], sweep.seeds, design.hidden)
            factor = f"{f:.3f}"
            efold, level = f"{memory.efold_horizon(f):.1f}", f"{memory.horizon(f):.1f}"
        found = measured_horizon(sweep.lags, counts[spec], S)
        rows.append(
            [_label(spec, tex=True), factor, efold, level]
            + [f"{k}/{S}" for k in counts[spec]]
            + ["none" if found is None else str(found)]
        )
    columns = (
        ["model", "starting factor", "e-fold horizon", "1% horizon"]
        + [f"lag {v}" for v in sweep.lags]
        + ["measured horizon"]
    )
    table = Table(
        columns=columns,
        rows=rows,
        align=["left"] + ["right"] * (len(columns) - 1),
        notes=(
            f"Successes out of {S} seeds: held-out accuracy ≥ {design.threshold:g} on "
            f"{design.eval_size} sequences (chance {1 / ALPHABET:g}) within {design.steps} "
            f"updates. Predicted horizons (steps) from the starting factor; T = lag + 2 is the "
            f"sequence length. Measured horizon: the longest lag at which at least half the seeds "
            f"succeed."
        ),
    )
    return table, _sweep_values(sweep, counts)


# ---------------------------------------------------------------------------- (b) learning curves


@figure()
def lag_learning_curves(
    lag: PositiveInt = 20,
    models: Sequence[Model] = CONFIGS,
    seeds: PositiveInt = 3,
    hidden: PositiveInt = 16,
    steps: PositiveInt = 300,
    threshold: Threshold = 0.9,
):
    """Held-out accuracy against updates at one lag, every seed, one panel per model, chance marked."""
    sweep, _, results = _sweep(models, [lag], seeds, hidden, steps, threshold)
    specs, design = sweep.models, sweep.design
    cols = min(2, len(specs))
    rows = math.ceil(len(specs) / cols)
    fig, axes = new_figure(ncols=cols, nrows=rows, height=1.9 * rows + 0.5, sharex=True, sharey=True, squeeze=False)
    for k, spec in enumerate(specs):
        ax = axes.flat[k]
        run = results[sweep.run(spec, lag)]
        for e in range(len(sweep.seeds)):
            ax.plot(run.eval_steps, run.scores[e], color=PALETTE[k % len(PALETTE)], linewidth=1.2, alpha=0.85)
        ax.axhline(1 / ALPHABET, color="#777777", linestyle=":", linewidth=1.0)
        ax.axhline(design.threshold, color="#777777", linestyle="--", linewidth=0.8)
        ax.set_title(f"{_label(spec)}: {run.successes}/{len(sweep.seeds)}", fontsize=9.5)
        ax.set_xlim(0, design.steps)
        ax.set_ylim(0, 1.02)
    for ax in axes.flat[len(specs) :]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("updates")
    for ax in axes[:, 0]:
        ax.set_ylabel("held-out accuracy")
    return fig, _curve_values(sweep, lag, results)


FLAT = 2 / ALPHABET
"""A panel is flat when no seed's held-out accuracy ever reaches this, twice chance."""


def _curve_values(sweep: Sweep, lag: int, results: dict) -> dict:
    """Which panels stay flat (below :data:`FLAT`), each model's best and final accuracies, its successes."""
    specs = sweep.models
    by_model = {s: results[sweep.run(s, lag)] for s in specs}
    best = {s: float(np.max(by_model[s].scores)) for s in specs}
    flat = [s for s in specs if best[s] < FLAT]
    moving = [s for s in specs if best[s] >= FLAT]
    finals = {s: sorted(float(v) for v in by_model[s].final_scores) for s in specs}
    return {
        "lag": lag,
        "seeds": len(sweep.seeds),
        "steps": sweep.design.steps,
        "threshold": sweep.design.threshold,
        "panels": len(specs),
        "flat": len(flat),
        "moving": len(moving),
        "flat_below": FLAT,
        "flat_models": _join([_prose(s) for s in flat]),
        "moving_models": _join([_prose(s) for s in moving]),
        "best": {s.key: best[s] for s in specs},
        "final": {s.key: _join([f"{v:.2f}" for v in finals[s]]) for s in specs},
        "successes": {s.key: by_model[s].successes for s in specs},
    }


# ---------------------------------------------------------------------------- (c) gradient by distance


@figure()
def gradient_reach(
    lag: PositiveInt = 20,
    models: Sequence[Model] = CONFIGS,
    seeds: PositiveInt = 3,
    hidden: PositiveInt = 16,
    steps: PositiveInt = 300,
    threshold: Threshold = 0.9,
    sequences: PositiveInt = 256,
):
    """||dL/dh_s|| over ||dL/dh_T|| against the distance T - s, at initialization and after training."""
    sweep, _, results = _sweep(models, [lag], seeds, hidden, steps, threshold)
    specs, design = sweep.models, sweep.design
    fig, (left, right) = new_figure(ncols=2, height=4.4, sharey=True)
    far: dict[ModelSpec, list[float]] = {}
    for k, spec in enumerate(specs):
        style = dict(color=PALETTE[k % len(PALETTE)], linestyle="-" if spec.cell == "lstm" else "--")
        trained = results[sweep.run(spec, lag)].params
        for ax, params in ((left, None), (right, trained)):
            ratio = reach_by_distance(spec, lag, sweep.seeds, design.hidden, params=params, sequences=sequences)
            ax.semilogy(np.arange(len(ratio)), ratio, label=_label(spec), **style)
            far.setdefault(spec, []).append(float(ratio[-1]))
    length = lag + 2
    for ax, title in ((left, "at initialization"), (right, f"after {design.steps} updates\n(or success)")):
        ax.set_title(title, fontsize=10)
        ax.set_xlim(0, length - 1)
    fig.supxlabel("distance from the query, T − s")
    left.set_ylabel(
        "$\\|\\partial\\ell/\\partial h_s\\| \\,/\\, \\|\\partial\\ell/\\partial h_T\\|$,\nmedian over seeds"
    )
    fig.legend(*right.get_legend_handles_labels(), loc="outside upper center", ncols=2)
    ranked = sorted(specs, key=lambda s: -far[s][0])
    grew = [s for s in specs if far[s][1] > far[s][0]]
    return fig, {
        "lag": lag,
        "distance": length - 1,
        "seeds": len(sweep.seeds),
        "sequences": sequences,
        "steps": design.steps,
        "before": {s.key: far[s][0] for s in specs},
        "after": {s.key: far[s][1] for s in specs},
        "ranked": _join([_prose(s) for s in ranked]),
        "most": _prose(ranked[0]),
        "least": _join([_prose(s) for s in ranked[-3:]]),
        "grew": _join([_prose(s) for s in grew], "no model"),
        "grew_count": len(grew),
        "fell": _join([_prose(s) for s in specs if s not in grew], "no model"),
    }


# ---------------------------------------------------------------------------- (d) the forget bias


def _bias_sweep(biases, lag, seeds, hidden, steps, threshold) -> tuple[list[float], Sweep, list]:
    """The forget biases (as numbers), the recall sweep of one LSTM per bias at one lag, and its results."""
    sweep = Sweep(
        tuple(ModelSpec("lstm", forget_bias=b) for b in biases),
        (lag,),
        tuple(range(seeds)),
        _design(hidden, steps, threshold),
    )
    return [_forget_bias(m) for m in sweep.models], sweep, runs(sweep.runs())


def _forget_bias(spec: ModelSpec) -> float:
    """The forget bias of an LSTM built with one (``ModelSpec("lstm", forget_bias=b)``)."""
    assert spec.forget_bias is not None, f"{spec} has no forget bias"
    return spec.forget_bias


@figure()
def bias_updates(
    biases: Sequence[Finite] = (0, 1, 2, 3, 4),
    lag: PositiveInt = 20,
    seeds: PositiveInt = 3,
    hidden: PositiveInt = 16,
    steps: PositiveInt = 300,
    threshold: Threshold = 0.9,
):
    """Updates each seed needs to reach the threshold, against the forget bias, at one lag."""
    biases, sweep, results = _bias_sweep(biases, lag, seeds, hidden, steps, threshold)
    design = sweep.design
    fig, ax = new_figure(height=3.2)
    never = design.steps * 1.12
    S = len(sweep.seeds)
    for b, run in zip(biases, results):
        for e, (s, ok) in enumerate(zip(run.success_step, run.succeeded)):
            x = b + (e - (S - 1) / 2) * 0.06
            if not ok:
                ax.plot(x, never, marker="x", color=PALETTE[1], markersize=6)
            else:
                ax.plot(x, s, marker="o", color=PALETTE[0], markersize=5)
    ax.axhline(design.steps, color="#777777", linestyle="--", linewidth=0.8)
    ax.annotate(
        f"budget, {design.steps} updates",
        (biases[0], design.steps),
        textcoords="offset points",
        xytext=(0, -12),
        fontsize=8.5,
        color="#555555",
    )
    from matplotlib.lines import Line2D

    ax.legend(
        handles=[
            Line2D([], [], marker="o", linestyle="none", color=PALETTE[0], label="one seed: updates to success"),
            Line2D([], [], marker="x", linestyle="none", color=PALETTE[1], label="one seed: not within the budget"),
        ],
        loc="lower left",
        fontsize=8.5,
    )
    ax.set_xticks(biases, [f"{b:g}" for b in biases])
    ax.set_ylim(0, design.steps * 1.2)
    ax.set_xlabel(f"forget bias $b_f$ (lag {lag})")
    ax.set_ylabel(f"updates to held-out\naccuracy ≥ {design.threshold:g}")
    return fig, _bias_values(biases, lag, sweep, results)


def _bias_values(biases, lag, sweep: Sweep, results) -> dict:
    """Successes and median updates per bias, the starting share f^(lag+1), and the successes in words."""
    S = len(sweep.seeds)
    wins = [run.successes for run in results]
    groups: dict = {}
    for b, k in zip(biases, wins):
        groups.setdefault(k, []).append(f"{b:g}")
    words = "; ".join(f"{k} of {S} at $b_f$ = {_join(bs)}" for k, bs in groups.items())
    keep = {f"b{b:g}": memory.decay(memory.sigmoid(b), lag + 1) for b in biases}
    learned = [b for b, k in zip(biases, wins) if k > 0]
    return {
        "lag": lag,
        "seeds": S,
        "steps": sweep.design.steps,
        "threshold": sweep.design.threshold,
        "steps_across": lag + 1,
        "successes": {f"b{b:g}": k for b, k in zip(biases, wins)},
        "total": sum(wins),
        "by_bias": words,
        "keep": keep,
        "keep_first": keep[f"b{biases[0]:g}"],
        "keep_last": keep[f"b{biases[-1]:g}"],
        "first": biases[0],
        "last": biases[-1],
        "lowest_learned": "none" if not learned else f"{min(learned):g}",
    }


@table()
def bias_updates_table(
    biases: Sequence[Finite] = (0, 1, 2, 3, 4),
    lag: PositiveInt = 20,
    seeds: PositiveInt = 3,
    hidden: PositiveInt = 16,
    steps: PositiveInt = 300,
    threshold: Threshold = 0.9,
):
    """Per forget bias at one lag: starting gate, predicted horizons, successes, median updates to success."""
    biases, sweep, results = _bias_sweep(biases, lag, seeds, hidden, steps, threshold)
    rows = []
    for b, run in zip(biases, results):
        f = memory.sigmoid(b)
        done = run.updates_to_success
        rows.append(
            [
                f"{b:g}",
                f"{f:.3f}",
                f"{memory.horizon(f):.1f}",
                f"{memory.decay(f, lag + 1):.1e}",
                f"{len(done)}/{len(sweep.seeds)}",
                "–" if not done else f"{int(np.median(done))}",
            ]
        )
    table = Table(
        columns=[
            "\\(b_f\\)",
            "gate \\(\\sigma(b_f)\\)",
            "1% horizon",
            f"\\(f^{{{lag + 1}}}\\)",
            "successes",
            "median updates to success",
        ],
        rows=rows,
        notes=(
            f"Lag {lag}, {len(sweep.seeds)} seeds, {sweep.design.steps} updates at most; "
            f"the median is over the seeds that succeeded."
        ),
    )
    return table, _bias_values(biases, lag, sweep, results)


# ---------------------------------------------------------------------------- (e) clipping


def _power(value: float) -> str:
    exponent = int(math.floor(math.log10(value)))
    return f"\\({value / 10**exponent:.1f} \\times 10^{{{exponent}}}\\)"


def _clip_ladder(model, length, rates, clip, seeds, hidden, steps) -> tuple[list, int]:
    """Per rate ``(rate, unclipped result, clipped result)``, and the rung the figure shows."""
    ladder = clip_ladder(model, length, rates, clip, range(seeds), hidden=hidden, batch=DESIGN.batch, steps=steps)
    keys = [run for pair in ladder for run in pair]
    results = dict(zip(keys, runs(keys)))
    rungs = [(free.lr, results[free], results[clipped]) for free, clipped in ladder]
    return rungs, figure_rung([free for _, free, _ in rungs])


@figure()
def clip_ladder_runs(
    model: Model = "lstm:1",
    length: AddingLength = 20,
    rates: Sequence[Positive] = (0.5, 1.0, 2.0, 4.0),
    clip: Positive = 1.0,
    seeds: PositiveInt = 2,
    hidden: PositiveInt = 16,
    steps: PositiveInt = 150,
):
    """Loss and gradient norm per update, unclipped and clipped, at the smallest rate where every unclipped seed diverges."""
    ladder, chosen = _clip_ladder(model, length, rates, clip, seeds, hidden, steps)
    lr, free, clipped = ladder[chosen]
    spec, clip = ModelSpec.parse(model), float(clip)
    fig, (top, bottom) = new_figure(nrows=2, height=4.8, sharex=True)
    u = np.arange(1, steps + 1)
    cap = 1e30  # values above are drawn at the top edge
    for run, colour, name in ((free, PALETTE[1], "no clipping"), (clipped, PALETTE[0], f"clipped at norm {clip:g}")):
        for e in range(seeds):
            label = name if e == 0 else None
            top.semilogy(u, np.minimum(run.losses[e], cap), color=colour, linewidth=1.0, alpha=0.85, label=label)
            bottom.semilogy(u, np.minimum(run.grad_norms[e], cap), color=colour, linewidth=1.0, alpha=0.85)
            if run.diverged_at[e] is not None:
                top.plot(run.diverged_at[e], cap, marker="x", color=colour, markersize=8)
    for ax, key in ((top, "losses"), (bottom, "grad_norms")):
        values = np.concatenate([getattr(free, key).ravel(), getattr(clipped, key).ravel()])
        values = np.minimum(values[np.isfinite(values) & (values > 0)], cap)
        exponents = np.log10(values)
        ax.set_ylim(10 ** (exponents.min() - 0.3), 10 ** (exponents.max() + 0.5))
    top.axhline(free.baseline, color="#777777", linestyle=":", linewidth=1.0)
    top.annotate(
        "constant prediction",
        (steps, free.baseline),
        textcoords="offset points",
        xytext=(-4, 4),
        ha="right",
        fontsize=8.5,
        color="#555555",
    )
    top.set_ylabel("training loss (MSE)")
    bottom.set_ylabel("gradient norm ‖g‖\nbefore clipping")
    bottom.axhline(clip, color="#777777", linestyle="--", linewidth=0.8)
    bottom.set_xlabel(f"update (gradient descent, learning rate {lr:g},\n{_label(spec)}, adding problem T = {length})")
    bottom.set_xlim(0, steps)
    top.legend(loc="upper right", fontsize=8.5)
    return fig, _clip_values(length, clip, seeds, steps, ladder, lr)


def _clip_values(length, clip, seeds, steps, ladder, chosen_rate) -> dict:
    """Diverged runs with and without clipping, and how close to the baseline the clipped runs end."""
    clipped_ratio = np.concatenate([c.error_ratio for _, _, c in ladder])
    finite = clipped_ratio[np.isfinite(clipped_ratio)]
    return {
        "seeds": seeds,
        "steps": steps,
        "length": length,
        "clip": clip,
        "rate": chosen_rate,
        "rates": len(ladder),
        "runs": len(ladder) * seeds,
        "free_diverged": sum(f.diverged for _, f, _ in ladder),
        "clipped_diverged": sum(c.diverged for _, _, c in ladder),
        "first_free_diverged": next((lr for lr, f, _ in ladder if f.diverged > 0), "none"),
        "clipped_best": float(finite.min()) if finite.size else None,
        "clipped_worst": float(finite.max()) if finite.size else None,
    }


@table()
def clip_ladder_table(
    model: Model = "lstm:1",
    length: AddingLength = 20,
    rates: Sequence[Positive] = (0.5, 1.0, 2.0, 4.0),
    clip: Positive = 1.0,
    seeds: PositiveInt = 2,
    hidden: PositiveInt = 16,
    steps: PositiveInt = 150,
):
    """Per learning rate: unclipped and clipped runs, diverged seeds and held-out MSE over the baseline."""
    ladder, chosen = _clip_ladder(model, length, rates, clip, seeds, hidden, steps)
    spec, clip = ModelSpec.parse(model), float(clip)

    def outcome(run):
        middle = run.median_ratio
        ratio = "–" if math.isnan(middle) else f"{middle:.2f}" if middle < 1000 else _power(middle)
        return [f"{run.diverged}/{seeds}", ratio]

    rows = [
        [f"{lr:g}" + (" (figure)" if k == chosen else "")] + outcome(free) + outcome(clipped)
        for k, (lr, free, clipped) in enumerate(ladder)
    ]
    table = Table(
        columns=[
            "learning rate",
            "diverged, no clipping",
            "MSE / baseline, no clipping",
            f"diverged, clipped at {clip:g}",
            "MSE / baseline, clipped",
        ],
        rows=rows,
        notes=(
            f"{_label(spec, tex=True)}, adding problem of length {length}, {seeds} seeds, "
            f"{steps} updates of plain gradient descent; held-out MSE over the "
            f"constant-prediction baseline (median over the seeds that did not diverge; "
            f"1 is no better than predicting 1)."
        ),
    )
    return table, _clip_values(length, clip, seeds, steps, ladder, ladder[chosen][0])


# ---------------------------------------------------------------------------- (f) carry-line dropout


def _dropout_runs(keep, bias, lag, seeds, hidden, steps, threshold) -> tuple[list[DropoutRun], list]:
    """One run per scheme of :data:`rnnmem.experiments.SCHEMES`, and their results."""
    design = _design(hidden, steps, threshold)
    keys = [DropoutRun(s, keep, bias, lag, tuple(range(seeds)), design) for s in SCHEMES]
    return keys, runs(keys)


SCHEME_LABELS = {"none": "no dropout", "per-step": "a fresh mask every step", "per-sequence": "one mask per sequence"}


@figure()
def carry_dropout_curves(
    keep: Keep = 0.9,
    bias: Finite = 2,
    lag: PositiveInt = 20,
    seeds: PositiveInt = 3,
    hidden: PositiveInt = 16,
    steps: PositiveInt = 300,
    threshold: Threshold = 0.9,
):
    """Held-out accuracy against updates for the three carry-line schemes, every seed."""
    keys, results = _dropout_runs(keep, bias, lag, seeds, hidden, steps, threshold)
    design = keys[0].design
    fig, axes = new_figure(nrows=len(keys), height=1.6 * len(keys) + 0.5, sharex=True, sharey=True)
    for k, (key, run) in enumerate(zip(keys, results)):
        ax = axes[k]
        for e in range(seeds):
            ax.plot(run.eval_steps, run.scores[e], color=PALETTE[k], linewidth=1.2, alpha=0.85)
        ax.axhline(1 / ALPHABET, color="#777777", linestyle=":", linewidth=1.0)
        ax.axhline(design.threshold, color="#777777", linestyle="--", linewidth=0.8)
        ax.set_title(f"{SCHEME_LABELS[key.scheme]}: {run.successes}/{seeds}", fontsize=9.5)
        ax.set_xlim(0, design.steps)
        ax.set_ylim(0, 1.02)
    axes[-1].set_xlabel("updates")
    axes[0].set_ylabel("held-out accuracy\n(no mask)")
    return fig, _dropout_values(keys, results)


def _dropout_values(keys: list[DropoutRun], results: list) -> dict:
    """Per scheme (keys ``none``, ``per_step``, ``per_sequence``): successes, final accuracies, survival."""
    first = keys[0]
    final = {k.scheme.replace("-", "_"): run.final_scores for k, run in zip(keys, results)}
    gate = float(memory.sigmoid(first.forget_bias))
    survive = carry_survival("per-step", first.keep, first.lag)
    return {
        "keep": first.keep,
        "bias": first.forget_bias,
        "lag": first.lag,
        "steps_across": first.lag + 1,
        "seeds": len(first.seeds),
        "steps": first.design.steps,
        "threshold": first.design.threshold,
        "successes": {k.scheme.replace("-", "_"): run.successes for k, run in zip(keys, results)},
        "median": {k: float(np.median(v)) for k, v in final.items()},
        "best": {k: float(np.max(v)) for k, v in final.items()},
        "survive_step": survive,
        "one_in": round(1 / survive),
        "gate": gate,
        "rescaled_gate": gate / first.keep,
    }


@table()
def carry_dropout_table(
    keep: Keep = 0.9,
    bias: Finite = 2,
    lag: PositiveInt = 20,
    seeds: PositiveInt = 3,
    hidden: PositiveInt = 16,
    steps: PositiveInt = 300,
    threshold: Threshold = 0.9,
):
    """Per scheme: the chance a unit's carried value survives the lag, successes, held-out accuracy."""
    keys, results = _dropout_runs(keep, bias, lag, seeds, hidden, steps, threshold)
    first = keys[0]
    rows = []
    for key, run in zip(keys, results):
        final = run.final_scores
        rows.append(
            [
                SCHEME_LABELS[key.scheme],
                f"{carry_survival(key.scheme, key.keep, key.lag):.3f}",
                f"{run.successes}/{seeds}",
                f"{np.median(final):.2f}",
                f"{final.min():.2f} to {final.max():.2f}",
            ]
        )
    table = Table(
        columns=[
            "masks on \\(c_{t-1}\\)",
            "kept across the lag",
            "successes",
            "median held-out accuracy",
            "range over seeds",
        ],
        rows=rows,
        align=["left", "right", "right", "right", "right"],
        notes=(
            f"LSTM with \\(b_f = {first.forget_bias:g}\\), keep probability {first.keep:g}, recall at lag {lag}, "
            f"{seeds} seeds, {first.design.steps} updates; accuracy on {first.design.eval_size} "
            f"held-out sequences without masks (chance {1 / ALPHABET:g}). A unit's value is kept across "
            f"the lag with probability \\(p^{{{lag + 1}}}\\) under fresh masks and \\(p\\) under one "
            f"mask per sequence."
        ),
    )
    return table, _dropout_values(keys, results)

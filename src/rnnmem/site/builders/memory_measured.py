"""Figures and tables of the chapter "Memory, measured by training".

Every experiment trains ensembles with :func:`rnnmem.lab.train` (with its
carry-line dropout for the dropout experiment, and plain gradient descent for
the clipping experiment, :func:`sgd_run`). The design is fixed here
and in the chapter's directives before any result is looked at:

* task: recall, alphabet of :data:`ALPHABET` tokens (chance ``1/8``), random
  distractors; the lag is the number of distractors;
* models: :data:`CONFIGS`, the tanh RNN, the GRU, and the LSTM with forget
  bias 0, 1, 2 and chrono initialization with :math:`T_{\\max}` the sequence
  length (lag + 2);
* hidden size, batch, Adam learning rate, clipping, budget, evaluation and
  threshold: :data:`DESIGN`;
* the measured horizon of a model is the longest lag at which at least half
  of its seeds succeed.

Training runs are shared between the figures of one build: each run is kept in
:data:`_RUNS`, keyed by everything it depends on, and the runs a directive
needs that are not there yet are trained in up to :data:`WORKERS` processes.
Each run is a pure function of its key, so the output does not depend on which
process trained it.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from rnnmem import lab, memory, tasks
from rnnmem.checks import check_list, check_positive, check_positive_int

from ..arithmetic import arithmetic
from ..registry import figure, table
from ..style import PALETTE, new_figure
from ..tables import Table

ALPHABET = 8
DESIGN = dict(hidden=16, batch=32, lr=0.01, clip=1.0, steps=300, eval_every=25, eval_size=256, threshold=0.9)
CONFIGS = ("rnn", "gru", "lstm:0", "lstm:1", "lstm:2", "lstm:chrono")
LABELS = {"rnn": "tanh RNN", "gru": "GRU", "lstm:chrono": "LSTM, chrono"}
PLAIN = {"rnn": "tanh RNN", "gru": "GRU", "lstm:chrono": "LSTM, chrono"}
WORKERS = max(1, min(2, os.cpu_count() or 1, int(os.environ.get("RNNMEM_LAB_WORKERS", "2"))))

_RUNS: dict = {}


# ---------------------------------------------------------------------------- arguments


def _config(name: str, spec: Any) -> tuple[str, float | None, str]:
    """``"rnn"``, ``"gru"``, ``"lstm:B"`` (forget bias B) or ``"lstm:chrono"`` as (model, bias, init)."""
    allowed = "'rnn', 'gru', 'lstm:B' with B a forget bias, or 'lstm:chrono'"
    if not isinstance(spec, str):
        raise ValueError(f"{name} must be a model: {allowed}, got {spec!r}")
    if spec in ("rnn", "gru"):
        return spec, None, "default"
    if spec == "lstm:chrono":
        return "lstm", None, "chrono"
    if spec.startswith("lstm:"):
        try:
            bias = float(spec[5:])
        except ValueError:
            bias = math.nan
        if math.isfinite(bias):
            return "lstm", bias, "default"
    raise ValueError(f"{name} must be a model: {allowed}, got {spec!r}")


def _configs(values: Any) -> list[str]:
    specs = check_list("models", values, lambda n, v: (_config(n, v), v)[1], "models")
    return specs


def _label(spec: str, tex: bool = False) -> str:
    if spec in LABELS:
        return LABELS[spec]
    bias = _config("model", spec)[1]
    return f"LSTM, \\(b_f = {bias:g}\\)" if tex else f"LSTM, $b_f = {bias:g}$"


def _key(spec: str) -> str:
    """A model's name in a builder's values: ``rnn``, ``gru``, ``lstm2`` (forget bias 2), ``chrono``."""
    return "chrono" if spec == "lstm:chrono" else spec.replace(":", "")


def _prose(spec: str) -> str:
    """A model named in a sentence: "the tanh RNN", "the LSTM with $b_f = 2$"."""
    if spec in PLAIN:
        return f"the {PLAIN[spec]}" if spec != "lstm:chrono" else "the chrono LSTM"
    return f"the LSTM with $b_f = {_config('model', spec)[1]:g}$"


def _join(words: list[str], empty: str = "none") -> str:
    """``a``, ``a and b``, ``a, b and c``; ``empty`` for no words."""
    if not words:
        return empty
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _lags(values: Any) -> list[int]:
    lags = check_list("lags", values, check_positive_int, "lags (whole numbers >= 1)")
    if sorted(set(lags)) != lags:
        raise ValueError(f"lags must be increasing and distinct, got {values!r}")
    return lags


def _seeds(value: Any) -> tuple:
    return tuple(range(check_positive_int("seeds", value)))


def _threshold(value: Any) -> float:
    return lab.check_threshold(value)


def _design(hidden, steps, threshold) -> dict:
    d = dict(DESIGN)
    d.update(
        hidden=check_positive_int("hidden", hidden),
        steps=check_positive_int("steps", steps),
        threshold=_threshold(threshold),
    )
    return d


# ---------------------------------------------------------------------------- runs


def _run_key(spec: str, lag: int, seeds: tuple, design: dict) -> tuple:
    return ("recall", spec, lag, seeds, tuple(sorted(design.items())))


def _summary(result: lab.LabResult) -> dict:
    return {
        "eval_steps": result.eval_steps,
        "scores": result.scores,
        "losses": result.losses,
        "grad_norms": result.grad_norms,
        "success_step": list(result.success_step),
        "diverged_at": list(result.diverged_at),
        "params": {k: v.copy() for k, v in result.ensemble.params.items()},
    }


def _execute(key: tuple) -> dict:
    """Train the run a key names (in whichever process): a pure function of the key."""
    kind = key[0]
    if kind == "recall":
        _, spec, lag, seeds, items = key
        design = dict(items)
        model, bias, init = _config("model", spec)
        result = lab.train(
            tasks.recall(lag, ALPHABET),
            model,
            seeds=list(seeds),
            forget_bias=bias,
            init=init,
            stop_when_done=True,
            **design,
        )
        return _summary(result)
    if kind == "dropout":
        _, scheme, keep, bias, lag, seeds, items = key
        design = dict(items)
        keep_arg = None if scheme == "none" else keep
        result = lab.train(
            tasks.recall(lag, ALPHABET),
            "lstm",
            seeds=list(seeds),
            forget_bias=bias,
            carry_keep=keep_arg,
            carry_mask="sequence" if scheme == "per-sequence" else "step",
            **design,
        )
        return _summary(result)
    if kind == "sgd":
        _, spec, length, lr, clip, seeds, hidden, batch, steps = key
        return sgd_run(spec, length, lr, clip, seeds, hidden=hidden, batch=batch, steps=steps)
    raise ValueError(f"unknown run kind {kind!r}")


def _cost(key: tuple) -> float:
    if key[0] == "recall":
        gates = {"rnn": 1, "gru": 3}.get(key[1], 4)
        return gates * (key[2] + 2) * len(key[3])
    if key[0] == "dropout":
        return 6 * (key[4] + 2) * len(key[5])
    return 4 * key[2] * len(key[5])


def runs(keys: list) -> list[dict]:
    """The results of the runs ``keys`` name, training those not yet kept, in up to :data:`WORKERS` processes."""
    missing = sorted({k for k in keys if k not in _RUNS}, key=lambda k: (-_cost(k), repr(k)))
    if len(missing) > 1 and WORKERS > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("fork")) as pool:
            for k, result in zip(missing, pool.map(_execute, missing)):
                _RUNS[k] = result
    else:
        for k in missing:
            _RUNS[k] = _execute(k)
    return [_RUNS[k] for k in keys]


def success_count(run: dict) -> int:
    """Members that reached the threshold and never diverged."""
    return sum(s is not None and d is None for s, d in zip(run["success_step"], run["diverged_at"]))


def measured_horizon(lags: list[int], counts: list[int], seeds: int) -> int | None:
    """The longest lag at which at least half of the seeds succeed (None: not even the shortest)."""
    passed = [lag for lag, k in zip(lags, counts) if 2 * k >= seeds]
    return max(passed) if passed else None


def starting_factor(spec: str, lag: int, seeds: tuple, hidden: int) -> float:
    """The per-step factor a gradient starts with, median over the seeds' units.

    LSTM and GRU: the forget (update) gate at zero input and state, sigma of its
    total bias. Tanh RNN: the spectral radius of ``W_hh``, an upper bound on the
    per-step factor since tanh' <= 1.
    """
    model, bias, init = _config("model", spec)
    ens = lab.make_ensemble(tasks.recall(lag, ALPHABET), model, list(seeds), hidden=hidden, forget_bias=bias, init=init)
    p = ens.params
    H = hidden
    if model == "rnn":
        return float(np.median([max(abs(np.linalg.eigvals(W))) for W in p["weight_hh_l0"]]))
    b = p["bias_ih_l0"] + p["bias_hh_l0"]
    return float(np.median(memory.sigmoid(b[:, H : 2 * H])))


# ---------------------------------------------------------------------------- (a) success against lag


def _sweep(models, lags, seeds, hidden, steps, threshold):
    specs = _configs(models)
    lags = _lags(lags)
    seed_list = _seeds(seeds)
    design = _design(hidden, steps, threshold)
    keys = [_run_key(s, lag, seed_list, design) for s in specs for lag in lags]
    results = dict(zip(keys, runs(keys)))
    counts = {s: [success_count(results[_run_key(s, lag, seed_list, design)]) for lag in lags] for s in specs}
    return specs, lags, seed_list, design, counts, results


def _sweep_values(specs, lags, seed_list, design, counts) -> dict:
    """What the chapter reads off the sweep: successes per model and lag, totals per lag, measured horizons,
    and the arithmetic that trained them (:mod:`rnnmem.site.arithmetic`)."""
    S = len(seed_list)
    horizon = {_key(s): measured_horizon(lags, counts[s], S) for s in specs}
    # the LSTMs in the order of their starting horizons: forget bias up, chrono last
    lstms = sorted(
        (s for s in specs if s.startswith("lstm")),
        key=lambda s: math.inf if s == "lstm:chrono" else _config("model", s)[1],
    )
    return {
        "seeds": S,
        "steps": design["steps"],
        "threshold": design["threshold"],
        "hidden": design["hidden"],
        "lags": list(lags),
        "models": len(specs),
        "runs": len(specs) * S,
        "counts": {_key(s): {f"lag{lag}": k for lag, k in zip(lags, counts[s])} for s in specs},
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


def _order_words(counts: list[int]) -> str:
    """ "follow" when successes never fall as the starting horizon grows, else "do not follow"."""
    return "follow" if all(a <= b for a, b in zip(counts, counts[1:])) else "do not follow"


@figure()
def success_by_lag(models=CONFIGS, lags=(2, 5, 10, 20, 40), seeds=3, hidden=16, steps=300, threshold=0.9):
    """Share of seeds that reach the held-out threshold, against the lag, one line per model."""
    specs, lags, seed_list, design, counts, _ = _sweep(models, lags, seeds, hidden, steps, threshold)
    fig, ax = new_figure(height=4.4)
    markers = "osD^vP"
    n = len(specs)
    for k, spec in enumerate(specs):
        rate = np.array(counts[spec]) / len(seed_list)
        offset = (k - (n - 1) / 2) * 0.012  # keep equal rates from hiding each other
        ax.plot(
            lags,
            rate + offset,
            marker=markers[k % 6],
            color=PALETTE[k % len(PALETTE)],
            linestyle="-" if spec.startswith("lstm") else "--",
            label=_label(spec),
        )
    ax.set_xscale("log", base=2)
    ax.set_xticks(lags, [str(v) for v in lags])
    ax.minorticks_off()
    ax.set_ylim(-0.06, 1.06)
    ax.set_xlabel("lag: distractors between the token and the query")
    ax.set_ylabel(
        f"share of {len(seed_list)} seeds with held-out\naccuracy ≥ {design['threshold']:g} by update {design['steps']}"
    )
    fig.legend(loc="outside lower center", ncols=2)
    return fig, _sweep_values(specs, lags, seed_list, design, counts)


@table()
def measured_horizon_table(models=CONFIGS, lags=(2, 5, 10, 20, 40), seeds=3, hidden=16, steps=300, threshold=0.9):
    """Per model: the starting factor, the horizons it predicts, successes K/S by lag, the measured horizon."""
    specs, lags, seed_list, design, counts, _ = _sweep(models, lags, seeds, hidden, steps, threshold)
    S = len(seed_list)
    rows = []
    for spec in specs:
        model, bias, init = _config("model", spec)
        if init == "chrono":
            factor, efold, level = "σ(ln u), u ≤ T − 1", "up to ≈ T", "up to ≈ 4.6 T"
        else:
            f = starting_factor(spec, lags[0], seed_list, design["hidden"])
            factor = f"{f:.3f}"
            efold, level = f"{memory.efold_horizon(f):.1f}", f"{memory.horizon(f):.1f}"
        found = measured_horizon(lags, counts[spec], S)
        rows.append(
            [_label(spec, tex=True), factor, efold, level]
            + [f"{k}/{S}" for k in counts[spec]]
            + ["none" if found is None else str(found)]
        )
    columns = (
        ["model", "starting factor", "e-fold horizon", "1% horizon"] + [f"lag {v}" for v in lags] + ["measured horizon"]
    )
    table = Table(
        columns=columns,
        rows=rows,
        align=["left"] + ["right"] * (len(columns) - 1),
        notes=(
            f"Successes out of {S} seeds: held-out accuracy ≥ {design['threshold']:g} on "
            f"{design['eval_size']} sequences (chance {1 / ALPHABET:g}) within {design['steps']} "
            f"updates. Predicted horizons (steps) from the starting factor; T = lag + 2 is the "
            f"sequence length. Measured horizon: the longest lag at which at least half the seeds "
            f"succeed."
        ),
    )
    return table, _sweep_values(specs, lags, seed_list, design, counts)


# ---------------------------------------------------------------------------- (b) learning curves


@figure()
def lag_learning_curves(lag=20, models=CONFIGS, seeds=3, hidden=16, steps=300, threshold=0.9):
    """Held-out accuracy against updates at one lag, every seed, one panel per model, chance marked."""
    lag = check_positive_int("lag", lag)
    specs, _, seed_list, design, _, results = _sweep(models, [lag], seeds, hidden, steps, threshold)
    cols = min(2, len(specs))
    rows = math.ceil(len(specs) / cols)
    fig, axes = new_figure(ncols=cols, nrows=rows, height=1.9 * rows + 0.5, sharex=True, sharey=True, squeeze=False)
    for k, spec in enumerate(specs):
        ax = axes.flat[k]
        run = results[_run_key(spec, lag, seed_list, design)]
        for e in range(len(seed_list)):
            ax.plot(run["eval_steps"], run["scores"][e], color=PALETTE[k % len(PALETTE)], linewidth=1.2, alpha=0.85)
        ax.axhline(1 / ALPHABET, color="#777777", linestyle=":", linewidth=1.0)
        ax.axhline(design["threshold"], color="#777777", linestyle="--", linewidth=0.8)
        ax.set_title(f"{_label(spec)}: {success_count(run)}/{len(seed_list)}", fontsize=9.5)
        ax.set_xlim(0, design["steps"])
        ax.set_ylim(0, 1.02)
    for ax in axes.flat[len(specs) :]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("updates")
    for ax in axes[:, 0]:
        ax.set_ylabel("held-out accuracy")
    return fig, _curve_values(specs, lag, seed_list, design, results)


FLAT = 2 / ALPHABET
"""A panel is flat when no seed's held-out accuracy ever reaches this, twice chance."""


def _curve_values(specs, lag, seed_list, design, results) -> dict:
    """Which panels stay flat (below :data:`FLAT`), each model's best and final accuracies, its successes."""
    S = len(seed_list)
    runs = {s: results[_run_key(s, lag, seed_list, design)] for s in specs}
    best = {s: float(np.max(runs[s]["scores"])) for s in specs}
    flat = [s for s in specs if best[s] < FLAT]
    moving = [s for s in specs if best[s] >= FLAT]
    finals = {s: sorted(float(v) for v in runs[s]["scores"][:, -1]) for s in specs}
    return {
        "lag": lag,
        "seeds": S,
        "steps": design["steps"],
        "threshold": design["threshold"],
        "panels": len(specs),
        "flat": len(flat),
        "moving": len(moving),
        "flat_below": FLAT,
        "flat_models": _join([_prose(s) for s in flat]),
        "moving_models": _join([_prose(s) for s in moving]),
        "best": {_key(s): best[s] for s in specs},
        "final": {_key(s): _join([f"{v:.2f}" for v in finals[s]]) for s in specs},
        "successes": {_key(s): success_count(runs[s]) for s in specs},
    }


# ---------------------------------------------------------------------------- (c) gradient by distance


@figure()
def gradient_reach(lag=20, models=CONFIGS, seeds=3, hidden=16, steps=300, threshold=0.9, sequences=256):
    """||dL/dh_s|| over ||dL/dh_T|| against the distance T - s, at initialization and after training."""
    lag = check_positive_int("lag", lag)
    sequences = check_positive_int("sequences", sequences)
    specs, _, seed_list, design, _, results = _sweep(models, [lag], seeds, hidden, steps, threshold)
    task = tasks.recall(lag, ALPHABET)
    fig, (left, right) = new_figure(ncols=2, height=4.4, sharey=True)
    far = {}
    for k, spec in enumerate(specs):
        model, bias, init = _config("model", spec)
        ens = lab.make_ensemble(task, model, list(seed_list), hidden=design["hidden"], forget_bias=bias, init=init)
        style = dict(color=PALETTE[k % len(PALETTE)], linestyle="-" if model == "lstm" else "--")
        before = lab.gradient_by_step(ens, task, n=sequences, seed=1)
        for name, value in results[_run_key(spec, lag, seed_list, design)]["params"].items():
            ens.params[name][...] = value
        after = lab.gradient_by_step(ens, task, n=sequences, seed=1)
        for ax, norms in ((left, before), (right, after)):
            ratio = np.median(norms[:, ::-1] / norms[:, -1:], axis=0)  # distance 0 first
            ax.semilogy(np.arange(task.length), ratio, label=_label(spec), **style)
            far.setdefault(spec, []).append(float(ratio[-1]))
    for ax, title in ((left, "at initialization"), (right, f"after {design['steps']} updates\n(or success)")):
        ax.set_title(title, fontsize=10)
        ax.set_xlim(0, task.length - 1)
    fig.supxlabel("distance from the query, T − s")
    left.set_ylabel(
        "$\\|\\partial\\ell/\\partial h_s\\| \\,/\\, \\|\\partial\\ell/\\partial h_T\\|$,\nmedian over seeds"
    )
    fig.legend(*right.get_legend_handles_labels(), loc="outside upper center", ncols=2)
    ranked = sorted(specs, key=lambda s: -far[s][0])
    grew = [s for s in specs if far[s][1] > far[s][0]]
    return fig, {
        "lag": lag,
        "distance": task.length - 1,
        "seeds": len(seed_list),
        "sequences": sequences,
        "steps": design["steps"],
        "before": {_key(s): far[s][0] for s in specs},
        "after": {_key(s): far[s][1] for s in specs},
        "ranked": _join([_prose(s) for s in ranked]),
        "most": _prose(ranked[0]),
        "least": _join([_prose(s) for s in ranked[-3:]]),
        "grew": _join([_prose(s) for s in grew], "no model"),
        "grew_count": len(grew),
        "fell": _join([_prose(s) for s in specs if s not in grew], "no model"),
    }


# ---------------------------------------------------------------------------- (d) the forget bias


def _bias_sweep(biases, lag, seeds, hidden, steps, threshold):
    biases = check_list("biases", biases, lambda n, v: float(_finite_number(n, v)), "forget biases")
    lag = check_positive_int("lag", lag)
    seed_list = _seeds(seeds)
    design = _design(hidden, steps, threshold)
    specs = [f"lstm:{b:g}" for b in biases]
    keys = [_run_key(s, lag, seed_list, design) for s in specs]
    return biases, lag, seed_list, design, runs(keys)


def _finite_number(name: str, value: Any) -> float:
    if isinstance(value, (bool, str)) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


@figure()
def bias_updates(biases=(0, 1, 2, 3, 4), lag=20, seeds=3, hidden=16, steps=300, threshold=0.9):
    """Updates each seed needs to reach the threshold, against the forget bias, at one lag."""
    biases, lag, seed_list, design, results = _bias_sweep(biases, lag, seeds, hidden, steps, threshold)
    fig, ax = new_figure(height=3.2)
    never = design["steps"] * 1.12
    S = len(seed_list)
    for b, run in zip(biases, results):
        for e, s in enumerate(run["success_step"]):
            x = b + (e - (S - 1) / 2) * 0.06
            if s is None or run["diverged_at"][e] is not None:
                ax.plot(x, never, marker="x", color=PALETTE[1], markersize=6)
            else:
                ax.plot(x, s, marker="o", color=PALETTE[0], markersize=5)
    ax.axhline(design["steps"], color="#777777", linestyle="--", linewidth=0.8)
    ax.annotate(
        f"budget, {design['steps']} updates",
        (biases[0], design["steps"]),
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
    ax.set_ylim(0, design["steps"] * 1.2)
    ax.set_xlabel(f"forget bias $b_f$ (lag {lag})")
    ax.set_ylabel(f"updates to held-out\naccuracy ≥ {design['threshold']:g}")
    return fig, _bias_values(biases, lag, seed_list, design, results)


def _bias_values(biases, lag, seed_list, design, results) -> dict:
    """Successes and median updates per bias, the starting share f^(lag+1), and the successes in words."""
    S = len(seed_list)
    wins = [success_count(run) for run in results]
    groups: dict = {}
    for b, k in zip(biases, wins):
        groups.setdefault(k, []).append(f"{b:g}")
    words = "; ".join(f"{k} of {S} at $b_f$ = {_join(bs)}" for k, bs in groups.items())
    keep = {f"b{b:g}": memory.decay(memory.sigmoid(b), lag + 1) for b in biases}
    learned = [b for b, k in zip(biases, wins) if k > 0]
    return {
        "lag": lag,
        "seeds": S,
        "steps": design["steps"],
        "threshold": design["threshold"],
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
def bias_updates_table(biases=(0, 1, 2, 3, 4), lag=20, seeds=3, hidden=16, steps=300, threshold=0.9):
    """Per forget bias at one lag: starting gate, predicted horizons, successes, median updates to success."""
    biases, lag, seed_list, design, results = _bias_sweep(biases, lag, seeds, hidden, steps, threshold)
    rows = []
    for b, run in zip(biases, results):
        f = memory.sigmoid(b)
        done = sorted(s for s, d in zip(run["success_step"], run["diverged_at"]) if s is not None and d is None)
        rows.append(
            [
                f"{b:g}",
                f"{f:.3f}",
                f"{memory.horizon(f):.1f}",
                f"{memory.decay(f, lag + 1):.1e}",
                f"{len(done)}/{len(seed_list)}",
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
            f"Lag {lag}, {len(seed_list)} seeds, {design['steps']} updates at most; "
            f"the median is over the seeds that succeeded."
        ),
    )
    return table, _bias_values(biases, lag, seed_list, design, results)


# ---------------------------------------------------------------------------- (e) clipping


def sgd_run(
    spec: str,
    length: int,
    lr: float,
    clip: float | None,
    seeds: tuple,
    *,
    hidden: int = 16,
    batch: int = 32,
    steps: int = 200,
    eval_size: int = 512,
) -> dict:
    """Plain gradient descent (no Adam) on the adding problem, with or without clipping by global norm.

    :func:`rnnmem.lab.train` with ``optimizer="sgd"``: a member whose loss or
    gradient norm stops being finite is frozen and reported as diverged.
    Returns losses, gradient norms, held-out MSE (NaN if diverged), divergence
    per member, and the constant-prediction baseline.
    """
    model, bias, init = _config("model", spec)
    task = tasks.adding(length)
    result = lab.train(
        task,
        model,
        seeds=list(seeds),
        hidden=hidden,
        batch=batch,
        steps=steps,
        lr=lr,
        clip=clip,
        forget_bias=bias,
        init=init,
        optimizer="sgd",
        eval_every=steps,
        eval_size=eval_size,
    )
    mse = np.where([d is None for d in result.diverged_at], result.scores[:, -1], np.nan)
    return {
        "losses": result.losses,
        "grad_norms": result.grad_norms,
        "diverged_at": list(result.diverged_at),
        "mse": mse,
        "baseline": task.baseline_mse,
    }


def _power(value: float) -> str:
    exponent = int(math.floor(math.log10(value)))
    return f"\\({value / 10**exponent:.1f} \\times 10^{{{exponent}}}\\)"


def _clip_ladder(model, length, rates, clip, seeds, hidden, steps):
    spec = _config("model", model) and model
    length = check_positive_int("length", length)
    if length < 2:
        raise ValueError(f"length must be a whole number >= 2, got {length!r}")
    rates = check_list("rates", rates, lambda n, v: float(check_positive(n, v)), "learning rates")
    clip = float(check_positive("clip", clip))
    seed_list = _seeds(seeds)
    hidden = check_positive_int("hidden", hidden)
    steps = check_positive_int("steps", steps)
    keys = [
        ("sgd", spec, length, lr, c, seed_list, hidden, DESIGN["batch"], steps) for lr in rates for c in (None, clip)
    ]
    results = dict(zip(keys, runs(keys)))
    ladder = [(lr, results[keys[2 * k]], results[keys[2 * k + 1]]) for k, lr in enumerate(rates)]
    chosen = next((row for row in ladder if all(d is not None for d in row[1]["diverged_at"])), ladder[-1])
    return spec, length, clip, seed_list, steps, ladder, chosen


@figure()
def clip_ladder_runs(model="lstm:1", length=20, rates=(0.5, 1.0, 2.0, 4.0), clip=1.0, seeds=2, hidden=16, steps=150):
    """Loss and gradient norm per update, unclipped and clipped, at the smallest rate where every unclipped seed diverges."""
    spec, length, clip, seed_list, steps, ladder, (lr, free, clipped) = _clip_ladder(
        model, length, rates, clip, seeds, hidden, steps
    )
    fig, (top, bottom) = new_figure(nrows=2, height=4.8, sharex=True)
    u = np.arange(1, steps + 1)
    cap = 1e30  # values above are drawn at the top edge
    for run, colour, name in ((free, PALETTE[1], "no clipping"), (clipped, PALETTE[0], f"clipped at norm {clip:g}")):
        for e in range(len(seed_list)):
            label = name if e == 0 else None
            top.semilogy(u, np.minimum(run["losses"][e], cap), color=colour, linewidth=1.0, alpha=0.85, label=label)
            bottom.semilogy(u, np.minimum(run["grad_norms"][e], cap), color=colour, linewidth=1.0, alpha=0.85)
            if run["diverged_at"][e] is not None:
                top.plot(run["diverged_at"][e], cap, marker="x", color=colour, markersize=8)
    for ax, key in ((top, "losses"), (bottom, "grad_norms")):
        values = np.concatenate([free[key].ravel(), clipped[key].ravel()])
        values = np.minimum(values[np.isfinite(values) & (values > 0)], cap)
        exponents = np.log10(values)
        ax.set_ylim(10 ** (exponents.min() - 0.3), 10 ** (exponents.max() + 0.5))
    top.axhline(free["baseline"], color="#777777", linestyle=":", linewidth=1.0)
    top.annotate(
        "constant prediction",
        (steps, free["baseline"]),
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
    return fig, _clip_values(spec, length, clip, seed_list, steps, ladder, lr)


def _clip_values(spec, length, clip, seed_list, steps, ladder, chosen_rate) -> dict:
    """Diverged runs with and without clipping, and how close to the baseline the clipped runs end."""
    S = len(seed_list)
    clipped_ratio = np.concatenate([c["mse"] / c["baseline"] for _, _, c in ladder])
    finite = clipped_ratio[np.isfinite(clipped_ratio)]
    return {
        "seeds": S,
        "steps": steps,
        "length": length,
        "clip": clip,
        "rate": chosen_rate,
        "rates": len(ladder),
        "runs": len(ladder) * S,
        "free_diverged": sum(sum(d is not None for d in f["diverged_at"]) for _, f, _ in ladder),
        "clipped_diverged": sum(sum(d is not None for d in c["diverged_at"]) for _, _, c in ladder),
        "first_free_diverged": next(
            (lr for lr, f, _ in ladder if any(d is not None for d in f["diverged_at"])), "none"
        ),
        "clipped_best": float(finite.min()) if finite.size else None,
        "clipped_worst": float(finite.max()) if finite.size else None,
    }


@table()
def clip_ladder_table(model="lstm:1", length=20, rates=(0.5, 1.0, 2.0, 4.0), clip=1.0, seeds=2, hidden=16, steps=150):
    """Per learning rate: unclipped and clipped runs, diverged seeds and held-out MSE over the baseline."""
    spec, length, clip, seed_list, steps, ladder, chosen = _clip_ladder(
        model, length, rates, clip, seeds, hidden, steps
    )
    S = len(seed_list)

    def outcome(run):
        n = sum(d is not None for d in run["diverged_at"])
        ok = run["mse"][np.isfinite(run["mse"])] / run["baseline"]
        middle = float(np.median(ok)) if ok.size else math.nan
        ratio = "–" if ok.size == 0 else f"{middle:.2f}" if middle < 1000 else _power(middle)
        return [f"{n}/{S}", ratio]

    rows = [
        [f"{lr:g}" + (" (figure)" if lr == chosen[0] else "")] + outcome(free) + outcome(clipped)
        for lr, free, clipped in ladder
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
            f"{_label(spec, tex=True)}, adding problem of length {length}, {S} seeds, "
            f"{steps} updates of plain gradient descent; held-out MSE over the "
            f"constant-prediction baseline (median over the seeds that did not diverge; "
            f"1 is no better than predicting 1)."
        ),
    )
    return table, _clip_values(spec, length, clip, seed_list, steps, ladder, chosen[0])


# ---------------------------------------------------------------------------- (f) carry-line dropout

SCHEMES = ("none", "per-step", "per-sequence")


def _dropout_runs(keep, bias, lag, seeds, hidden, steps, threshold):
    keep = float(check_positive("keep", keep))
    if keep > 1:
        raise ValueError(f"keep must be a keep probability in (0, 1], got {keep!r}")
    bias = _finite_number("bias", bias)
    lag = check_positive_int("lag", lag)
    seed_list = _seeds(seeds)
    design = _design(hidden, steps, threshold)
    keys = [("dropout", s, keep, bias, lag, seed_list, tuple(sorted(design.items()))) for s in SCHEMES]
    return SCHEMES, keep, bias, lag, seed_list, design, runs(keys)


SCHEME_LABELS = {"none": "no dropout", "per-step": "a fresh mask every step", "per-sequence": "one mask per sequence"}


@figure()
def carry_dropout_curves(keep=0.9, bias=2, lag=20, seeds=3, hidden=16, steps=300, threshold=0.9):
    """Held-out accuracy against updates for the three carry-line schemes, every seed."""
    schemes, keep, bias, lag, seed_list, design, results = _dropout_runs(
        keep, bias, lag, seeds, hidden, steps, threshold
    )
    fig, axes = new_figure(nrows=len(schemes), height=1.6 * len(schemes) + 0.5, sharex=True, sharey=True)
    for k, (scheme, run) in enumerate(zip(schemes, results)):
        ax = axes[k]
        for e in range(len(seed_list)):
            ax.plot(run["eval_steps"], run["scores"][e], color=PALETTE[k], linewidth=1.2, alpha=0.85)
        ax.axhline(1 / ALPHABET, color="#777777", linestyle=":", linewidth=1.0)
        ax.axhline(design["threshold"], color="#777777", linestyle="--", linewidth=0.8)
        ax.set_title(f"{SCHEME_LABELS[scheme]}: {success_count(run)}/{len(seed_list)}", fontsize=9.5)
        ax.set_xlim(0, design["steps"])
        ax.set_ylim(0, 1.02)
    axes[-1].set_xlabel("updates")
    axes[0].set_ylabel("held-out accuracy\n(no mask)")
    return fig, _dropout_values(schemes, keep, bias, lag, seed_list, design, results)


def _dropout_values(schemes, keep, bias, lag, seed_list, design, results) -> dict:
    """Per scheme (keys ``none``, ``per_step``, ``per_sequence``): successes, final accuracies, survival."""
    final = {s.replace("-", "_"): run["scores"][:, -1] for s, run in zip(schemes, results)}
    gate = float(memory.sigmoid(bias))
    return {
        "keep": keep,
        "bias": bias,
        "lag": lag,
        "steps_across": lag + 1,
        "seeds": len(seed_list),
        "steps": design["steps"],
        "threshold": design["threshold"],
        "successes": {s.replace("-", "_"): success_count(run) for s, run in zip(schemes, results)},
        "median": {k: float(np.median(v)) for k, v in final.items()},
        "best": {k: float(np.max(v)) for k, v in final.items()},
        "survive_step": keep ** (lag + 1),
        "one_in": round(1 / keep ** (lag + 1)),
        "gate": gate,
        "rescaled_gate": gate / keep,
    }


@table()
def carry_dropout_table(keep=0.9, bias=2, lag=20, seeds=3, hidden=16, steps=300, threshold=0.9):
    """Per scheme: the chance a unit's carried value survives the lag, successes, held-out accuracy."""
    schemes, keep, bias, lag, seed_list, design, results = _dropout_runs(
        keep, bias, lag, seeds, hidden, steps, threshold
    )
    survive = {"none": 1.0, "per-step": keep ** (lag + 1), "per-sequence": keep}
    rows = []
    for scheme, run in zip(schemes, results):
        final = run["scores"][:, -1]
        rows.append(
            [
                SCHEME_LABELS[scheme],
                f"{survive[scheme]:.3f}",
                f"{success_count(run)}/{len(seed_list)}",
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
            f"LSTM with \\(b_f = {bias:g}\\), keep probability {keep:g}, recall at lag {lag}, "
            f"{len(seed_list)} seeds, {design['steps']} updates; accuracy on {design['eval_size']} "
            f"held-out sequences without masks (chance {1 / ALPHABET:g}). A unit's value is kept across "
            f"the lag with probability \\(p^{{{lag + 1}}}\\) under fresh masks and \\(p\\) under one "
            f"mask per sequence."
        ),
    )
    return table, _dropout_values(schemes, keep, bias, lag, seed_list, design, results)

"""Figures and tables of the chapters "Memory, measured by training" and "Controls and clipping, measured".

What the lab trains and how its results are read is :mod:`rnnmem.experiments`:
the model specs, the design (the constants :data:`~rnnmem.experiments.CONFIGS`,
:data:`~rnnmem.experiments.SEEDS`, :data:`~rnnmem.experiments.DESIGN`, the
budgets and lag grids), the runs as frozen values, the sweep with its
extension rules (:class:`~rnnmem.experiments.Sweep`), outcomes with their
intervals, survival and logistic fits, starting factors and horizons. This
module draws them and words them. Two models are compared over every lag
both were trained at (a common-slope Firth fit, :func:`rnnmem.stats.lag_shift`),
and at one lag chosen by :func:`rnnmem.experiments.contrast_lag` with Fisher's
exact test (:func:`rnnmem.stats.fisher_exact`); a difference with
:math:`p \\ge 0.05` is worded as none detected. Within the LSTMs the starting
horizons are ranked against the lags learned (:func:`rnnmem.stats.spearman`).

The runs are asked of :mod:`rnnmem.site.labruns` (which trains those not kept,
on local processes or a Dask cluster: :mod:`rnnmem.engine`); comparisons are
worded by :mod:`rnnmem.site.comparisons`. Each run is a pure function of itself,
so the output does not depend on where it was trained.

The builders' arguments are checked from their signatures
(:func:`rnnmem.checks.check_arguments`); only relations between arguments are
checked in the body.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rnnmem import memory, stats
from rnnmem.checks import Finite, Positive, PositiveInt
from rnnmem.experiments import (
    ALPHABET,
    BIASES,
    CONFIGS,
    CONTROL_LAG,
    DESIGN,
    DIAGNOSTIC_LAG,
    DROPOUT_BIAS,
    DROPOUT_KEEP,
    EQUIVALENCE_MARGIN,
    INPUT_RERUNS,
    LONG,
    LONG_LAGS,
    SCHEMES,
    SGD_CALIBRATION,
    SGD_LAGS,
    SGD_RATES,
    SHORT,
    SHORT_LAGS,
    SURVIVAL_LAGS,
    Design,
    DropoutRun,
    Keep,
    Lags,
    Model,
    ModelSpec,
    Outcome,
    RecallRun,
    Sweep,
    SweepResult,
    Threshold,
    calibration_lag,
    carry_survival,
    contrast_lag,
    dropout_equivalent_bias,
    forget_biases,
    lag_learned_text,
    masked_accuracy,
    pilot_lag,
    rnn_spectra,
    sgd_rate,
    starting_factor,
    starting_horizon,
)
from rnnmem.experiments import (
    gradient_reach as reach_by_distance,
)

from .. import placeholders
from ..arithmetic import arithmetic
from ..comparisons import ALPHA, compare, p_text
from ..labruns import chains, runs
from ..registry import figure, table
from ..style import PALETTE, new_figure
from ..tables import Table

# ---------------------------------------------------------------------------- words


def _label(spec: ModelSpec, tex: bool = False) -> str:
    """A model in a legend or a table: "tanh RNN", "LSTM, chrono", "LSTM, $b_f = 2$", "LSTM, chrono, $b_i = 0$"."""
    if spec.cell != "lstm":
        return {"rnn": "tanh RNN", "gru": "GRU"}[spec.cell]
    math_ = (lambda s: f"\\({s}\\)") if tex else (lambda s: f"${s}$")
    if spec.init == "chrono":
        text = "LSTM, chrono"
    elif spec.forget_bias is None:
        text = "LSTM, default draw"
    else:
        text = f"LSTM, {math_(f'b_f = {spec.forget_bias:.3g}')}"
    return text if spec.input_bias is None else f"{text}, {math_(f'b_i = {spec.input_bias:g}')}"


def _short_label(spec: ModelSpec) -> str:
    """A model in a narrow column or row: "RNN", "GRU", "b_f=0", "chrono"."""
    if spec.cell != "lstm":
        return {"rnn": "RNN", "gru": "GRU"}[spec.cell]
    text = "chrono" if spec.init == "chrono" else "LSTM" if spec.forget_bias is None else f"$b_f$={spec.forget_bias:g}"
    return text if spec.input_bias is None else f"{text}, $b_i$={spec.input_bias:g}"


def _prose(spec: ModelSpec) -> str:
    """A model named in a sentence: "the tanh RNN", "the LSTM with $b_f = 2$"."""
    if spec.cell != "lstm":
        return {"rnn": "the tanh RNN", "gru": "the GRU"}[spec.cell]
    if spec.init == "chrono":
        text = "the chrono LSTM"
    elif spec.forget_bias is None:
        text = "the LSTM with PyTorch's draw"
    else:
        text = f"the LSTM with $b_f = {spec.forget_bias:.3g}$"
    return text if spec.input_bias is None else f"{text} and $b_i = {spec.input_bias:g}$"


def _join(words: list[str], empty: str = "none") -> str:
    """``a``, ``a and b``, ``a, b and c``; ``empty`` for no words."""
    if not words:
        return empty
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _interval(outcome: Outcome) -> str:
    lo, hi = outcome.interval()
    return f"[{lo:.2f}, {hi:.2f}]"


def _budget_key(budget: int) -> str:
    return f"u{budget}"


# ---------------------------------------------------------------------------- runs


def _design(hidden: int, threshold: float, steps: int = SHORT) -> Design:
    """The lab's design with the directive's hidden size, threshold and budget."""
    return dataclasses.replace(DESIGN, hidden=hidden, threshold=threshold, steps=steps)


def _lab(models, short_lags, long_lags, seeds, hidden, budgets, threshold, extend_to) -> SweepResult:
    """The recall sweep of the directive's design, trained model by model (:class:`rnnmem.experiments.SweepChains`)."""
    sweep = Sweep(
        tuple(models),
        tuple(short_lags),
        tuple(long_lags),
        tuple(range(seeds)),
        _design(hidden, threshold),
        tuple(budgets),
        extend_to=extend_to,
    )
    schedule = sweep.chains()
    chains(schedule.first_runs(), schedule.follow)
    return schedule.result


# A shift between two curves is worded as one when its likelihood-ratio test gives p below ALPHA,
# the level of every comparison (rnnmem.verdicts.ALPHA).

PAIRS = (
    ("rnn", "lstm0"),
    ("gru", "lstm0"),
    ("lstm1", "lstm0"),
    ("lstm2", "lstm1"),
    ("chrono", "lstm2"),
    ("rnn", "gru"),
)
"""The pairs of models the chapter compares: over every lag (:func:`_shift_words`), at the lag of the
contrast rule (:func:`_contrast_words`), and lag by lag (Fisher's exact test)."""


def _horizons(res: SweepResult) -> dict:
    """Per model: the starting factor and the 1% horizon it predicts at zero input, at each lag tried.

    A gate's factor does not depend on the lag; chrono's does (its lifetimes scale with T = lag + 2)."""
    sweep = res.sweep
    hidden, seeds = sweep.design.hidden, sweep.seeds
    out: dict = {}
    for spec in sweep.models:
        lags = sorted(set(res.lags(spec, sweep.budgets[0])) | set(res.lags(spec, sweep.budgets[1])))
        if spec.init == "chrono":
            by_lag = {lag: starting_horizon(spec, lag, seeds, hidden) for lag in lags}
            out[spec] = {
                "factor": None,
                "horizon": None,
                "by_lag": by_lag,
                "beyond": all(h > lag for lag, h in by_lag.items()),
            }
        else:
            f = starting_factor(spec, lags[0], seeds, hidden)
            h = float(memory.horizon(f))
            out[spec] = {
                "factor": f,
                "horizon": h,
                "by_lag": {lag: h for lag in lags},
                "beyond": all(h > lag for lag in lags),
            }
    return out


def _fit_words(fit, lags: list[int], counts: list[int], n: int) -> dict:
    """L50 and its interval as numbers and as the counts allow them to be printed
    (:func:`rnnmem.experiments.lag_learned_text`): ``text`` the value ("17", "between 4 and 8", "beyond 64",
    "below 8"), ``interval`` its interval or "" (a range or a bound has none), ``full`` the two together."""
    text, interval = lag_learned_text(lags, counts, n)
    x50 = fit.x50
    lo, hi = fit.x50_interval if x50 is not None else (None, None)
    return {
        "x50": x50,
        "lo": lo,
        "hi": hi,
        "inside": x50 is not None,
        "text": text,
        "interval": interval,
        "full": f"{text} {interval}".strip(),
        "slope": fit.slope,
        # the fitted curve's 50% point, extrapolated beyond the lags tried: an order, not a value to print
        "point": -fit.intercept / fit.slope if fit.slope != 0 else math.inf,
    }


def _lag_text(value: float | None) -> str:
    """A shift's interval end: one decimal, "open" where the data do not bound it."""
    return "open" if value is None else f"{value:.1f}"


def _shift_words(res: SweepResult, a: ModelSpec, b: ModelSpec, budget: int) -> dict:
    """Two models compared over every lag each was trained at (:func:`rnnmem.stats.lag_shift`): the
    difference of their 50% lags, :math:`L_{50,a} - L_{50,b}`, its 95% interval, and the
    likelihood-ratio test of one curve against two shifted ones, in words."""
    n = len(res.sweep.seeds)
    (lags_a, counts_a), (lags_b, counts_b) = ((res.lags(s, budget), res.counts(s, budget)) for s in (a, b))
    shift = stats.lag_shift(lags_a, counts_a, [n] * len(lags_a), lags_b, counts_b, [n] * len(lags_b))
    differ = shift.p < ALPHA
    d = shift.difference
    phrase = (
        ("a longer lag learned than" if d is not None and d > 0 else "a shorter lag learned than")
        if differ
        else "no detectable shift from"
    )
    lo, hi = shift.interval
    text = p_text(shift.p)
    return {
        "difference": d,
        "lo": lo,
        "hi": hi,
        "d": "open" if d is None else f"{d:.1f}",
        "interval": f"[{_lag_text(lo)}, {_lag_text(hi)}]",
        "statistic": shift.statistic,
        "p_value": shift.p,
        "p": text,
        "p_eq": f"*p* = {text}",
        "phrase": phrase,
        "differ": differ,
    }


def _contrast_words(res: SweepResult, a: ModelSpec, b: ModelSpec, budget: int) -> dict | None:
    """One lag's counts compared (Fisher's exact test), at the lag :func:`rnnmem.experiments.contrast_lag`
    picks from the lags both were trained at; None when they share no lag."""
    common = sorted(set(res.lags(a, budget)) & set(res.lags(b, budget)))
    if not common:
        return None
    n = len(res.sweep.seeds)
    counts = [[res.outcome(s, lag, budget).successes for lag in common] for s in (a, b)]
    lag = contrast_lag(common, counts[0], counts[1], n)
    c = compare(res.outcome(a, lag, budget), res.outcome(b, lag, budget))
    return {**c, "lag": lag}


def _sweep_values(res: SweepResult) -> dict:
    """What the chapter reads off the sweep: per model and budget the lags, counts and rates with their
    intervals, the fits, the horizons at the start, comparisons by Fisher's exact test, and the arithmetic."""
    sweep = res.sweep
    S = len(sweep.seeds)
    keys = {s.key: s for s in sweep.models}
    values: dict = {
        "seeds": S,
        "models": len(sweep.models),
        "budgets": list(sweep.budgets),
        "short": sweep.budgets[0],
        "long": sweep.budgets[1],
        "threshold": sweep.design.threshold,
        "hidden": sweep.design.hidden,
        "arithmetic": arithmetic(),
        "precision": sweep.dtype,
    }
    counts: dict = {}
    rates: dict = {}
    intervals: dict = {}
    lags: dict = {}
    last: dict = {}
    last_success: dict = {}
    fits: dict = {}
    for s in sweep.models:
        for b in sweep.budgets:
            tried = res.lags(s, b)
            lags.setdefault(s.key, {})[_budget_key(b)] = tried
            last.setdefault(s.key, {})[_budget_key(b)] = tried[-1]
            for lag in tried:
                o = res.outcome(s, lag, b)
                counts.setdefault(s.key, {}).setdefault(_budget_key(b), {})[f"lag{lag}"] = o.successes
                rates.setdefault(s.key, {}).setdefault(_budget_key(b), {})[f"lag{lag}"] = o.rate
                intervals.setdefault(s.key, {}).setdefault(_budget_key(b), {})[f"lag{lag}"] = _interval(o)
            fits.setdefault(s.key, {})[_budget_key(b)] = _fit_words(res.fit(s, b), tried, res.counts(s, b), S)
            won = [lag for lag, k in zip(tried, res.counts(s, b)) if k > 0]
            last_success.setdefault(s.key, {})[_budget_key(b)] = won[-1] if won else None
    vs: dict = {}
    shift: dict = {}
    contrast: dict = {}
    for a, b_ in PAIRS:
        if a not in keys or b_ not in keys:
            continue
        for b in sweep.budgets:
            pair = f"{a}-{b_}"
            shift.setdefault(pair, {})[_budget_key(b)] = _shift_words(res, keys[a], keys[b_], b)
            contrast.setdefault(pair, {})[_budget_key(b)] = _contrast_words(res, keys[a], keys[b_], b)
            common = sorted(set(res.lags(keys[a], b)) & set(res.lags(keys[b_], b)))
            for lag in common:
                vs.setdefault(f"{a}-{b_}", {}).setdefault(_budget_key(b), {})[f"lag{lag}"] = compare(
                    res.outcome(keys[a], lag, b), res.outcome(keys[b_], lag, b)
                )
    later: dict = {}
    short, long = sweep.budgets
    for s in sweep.models:
        for lag in res.lags(s, long):
            o_short, o_long = res.outcome(s, lag, short), res.outcome(s, lag, long)
            later.setdefault(s.key, {})[f"lag{lag}"] = o_long.successes - o_short.successes
    values.update(
        counts=counts,
        rates=rates,
        intervals=intervals,
        lags=lags,
        last=last,
        last_success=last_success,
        fits=fits,
        vs=vs,
        shift=shift,
        contrast=contrast,
        later=later,
    )
    return values


@dataclasses.dataclass(frozen=True)
class SweepArgs:
    """The arguments of the recall sweep that the section's builders read (:func:`_lab`): each one's rule and
    default, stated once.

    A builder decorated with :func:`takes_the_sweep` takes these as its last parameters, so that a directive
    writes them as before and they are checked from the signature like any other, and receives them as
    one value, ``args``.
    """

    models: Sequence[Model] = CONFIGS
    short_lags: Lags = SHORT_LAGS
    long_lags: Lags = LONG_LAGS
    seeds: PositiveInt = 20
    hidden: PositiveInt = 16
    budgets: Sequence[PositiveInt] = (SHORT, LONG)
    threshold: Threshold = 0.9
    extend_to: PositiveInt = 64

    def result(self) -> SweepResult:
        """The sweep these arguments ask for, trained (or read from the runs' cache)."""
        return _lab(
            self.models,
            self.short_lags,
            self.long_lags,
            self.seeds,
            self.hidden,
            self.budgets,
            self.threshold,
            self.extend_to,
        )


def takes_the_sweep(builder: Callable[..., Any]) -> Callable[..., Any]:
    """``builder(own..., *, args: SweepArgs)`` as a builder of its own parameters followed by the fields of
    :class:`SweepArgs`, with their annotations and defaults (what :func:`rnnmem.checks.check_arguments` and a
    directive read); a call gathers those into ``args``."""
    import functools
    import inspect
    import typing

    hints = typing.get_type_hints(builder, include_extras=True)
    own = [
        p.replace(annotation=hints.get(p.name, p.annotation))
        for p in inspect.signature(builder).parameters.values()
        if p.name != "args"
    ]
    fields = typing.get_type_hints(SweepArgs, include_extras=True)
    shared = [
        inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=f.default, annotation=fields[f.name])
        for f in dataclasses.fields(SweepArgs)
    ]
    signature = inspect.Signature(own + shared)

    @functools.wraps(builder)
    def wrapper(*positional: Any, **keywords: Any) -> Any:
        bound = signature.bind(*positional, **keywords)
        bound.apply_defaults()
        given = bound.arguments
        args = SweepArgs(**{p.name: given.pop(p.name) for p in shared})
        return builder(**given, args=args)

    # The signature and annotations are the wrapper's own: check_arguments unwraps to read them.
    del wrapper.__wrapped__
    wrapper.__signature__ = signature  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
    return wrapper


@figure()
@takes_the_sweep
def success_heatmap(
    *,
    args: SweepArgs,
):
    """Share of seeds that learn recall, model by lag, one panel per budget, the starting 1% horizon marked."""
    res = args.result()
    sweep = res.sweep
    specs = list(sweep.models)
    horizons = _horizons(res)
    fig, axes = new_figure(nrows=2, height=2.0 + 1.0 * len(specs), squeeze=False)
    all_lags = sorted({lag for s in specs for b in sweep.budgets for lag in res.lags(s, b)})
    x_lo, x_hi = 0.0, all_lags[-1] + 4
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    # The light two thirds of "Blues": every count is drawn in dark ink and stays legible on every cell
    # (the figure's texts are kept dark enough to read on the white page, rnnmem.site.style.legible_text).
    cmap = ListedColormap(plt.get_cmap("Blues")(np.linspace(0.0, 0.65, 256)))
    for ax, b in zip(axes[:, 0], sweep.budgets):
        tried = sorted({lag for s in specs for lag in res.lags(s, b)})
        edges = _edges(tried)
        grid = np.full((len(specs), len(tried)), np.nan)
        for i, s in enumerate(specs):
            for lag in res.lags(s, b):
                o = res.outcome(s, lag, b)
                j = tried.index(lag)
                grid[i, j] = o.rate
                ax.text(
                    lag,
                    i,
                    f"{o.successes}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="#222222",
                    zorder=4,  # above the cells and the horizon marks
                )
        ax.pcolormesh(edges, np.arange(len(specs) + 1) - 0.5, np.ma.masked_invalid(grid), cmap=cmap, vmin=0, vmax=1)
        for i, s in enumerate(specs):
            h = horizons[s]
            if h["beyond"]:
                ax.annotate(
                    "",
                    (x_hi - 0.3, i),
                    xytext=(x_hi - 3.2, i),
                    arrowprops=dict(arrowstyle="-|>", color="#c23b6b", lw=1.6),
                )
            else:
                ax.plot([h["horizon"]] * 2, [i - 0.45, i + 0.45], color="#c23b6b", linewidth=2.4)
        ax.set_yticks(range(len(specs)), [_short_label(s) for s in specs])
        ax.set_ylim(len(specs) - 0.5, -0.5)
        ax.set_xlim(x_lo, x_hi)
        ax.set_xticks([lag for lag in tried if lag % 8 == 0])
        ax.set_title(f"within {b} updates", fontsize=10)
    axes[-1, 0].set_xlabel("lag (distractors between the token and the query)")
    values = _sweep_values(res)
    values["horizon"] = {s.key: (h["horizon"] if not h["beyond"] else "beyond") for s, h in horizons.items()}
    return fig, values


def _edges(lags: list[int]) -> np.ndarray:
    """Cell edges on a lag axis: half-way between neighbours, half a gap beyond the ends."""
    x = np.array(lags, dtype=float)
    if len(x) == 1:
        return np.array([x[0] - 2, x[0] + 2])
    mid = (x[1:] + x[:-1]) / 2
    return np.concatenate([[x[0] - (mid[0] - x[0])], mid, [x[-1] + (x[-1] - mid[-1])]])


LSTMS = ("lstm0", "lstm1", "lstm2", "chrono")
"""The LSTM family of the sweep, whose starting horizons are ranked against the lags they learned."""

ACROSS = ("rnn", "gru")
"""The other architectures, whose learned lags are set beside the horizons their starts predict."""


def _ordering(res: SweepResult, horizons: dict, values: dict) -> dict:
    """Does the starting horizon order the lags learned? Within :data:`LSTMS`, per budget, Spearman's rank
    correlation of the predicted 1% horizon against the fitted 50% lag (its ``point``, extrapolated when it
    lies beyond the lags tried: only the order is used) with its exact permutation p, one-sided (a longer
    horizon, a longer lag) and two-sided; chrono's horizon, beyond every lag, ranks last. Across
    architectures: each model's predicted horizon beside its lag learned."""
    keys = {s.key: s for s in res.sweep.models}
    out: dict = {"rank": {}, "predicted": {}}
    for s in res.sweep.models:
        h = horizons[s]
        out["predicted"][s.key] = "beyond every lag tried" if h["beyond"] else f"{h['horizon']:.1f}"
    family = [k for k in LSTMS if k in keys]
    if len(family) < 3:
        return out
    start = [math.inf if horizons[keys[k]]["beyond"] else horizons[keys[k]]["horizon"] for k in family]
    start = [max(v for v in start if math.isfinite(v)) + 1.0 if not math.isfinite(v) else v for v in start]
    for b in res.sweep.budgets:
        learned = [values["fits"][k][_budget_key(b)]["point"] for k in family]
        if len(set(learned)) < 2:  # every curve the same: no order to rank
            continue
        rho, p_one = stats.spearman(start, learned, "greater")
        _, p_two = stats.spearman(start, learned, "two-sided")
        order = [k for _, k in sorted(zip(learned, family))]
        out["rank"][_budget_key(b)] = {
            "rho": rho,
            "rho_text": f"{rho:.2f}",
            "p_one": p_one,
            "p_two": p_two,
            "p_one_text": f"{p_one:.3f}",
            "p_two_text": f"{p_two:.3f}",
            "order": _join([_prose(keys[k]) for k in order]),
            "same_order": order == family,
            "models": len(family),
        }
        # each step of the family's order, tested over every lag (the pairs of PAIRS along it)
        missed = []
        for low, high in zip(family, family[1:]):
            shift = values.get("shift", {}).get(f"{high}-{low}", {}).get(_budget_key(b))
            if shift is not None and not shift["differ"]:
                missed.append(f"that from {_prose(keys[low])} to {_prose(keys[high])} ({shift['p_eq']})")
        out["rank"][_budget_key(b)]["steps"] = (
            "each step of that order" if not missed else "each step but " + _join(missed)
        )
        # one curve for the family against a shifted curve per model
        n = len(res.sweep.seeds)
        arms = [(res.lags(keys[k], b), res.counts(keys[k], b), [n] * len(res.lags(keys[k], b))) for k in family]
        joint = stats.lag_shifts(arms)
        text = p_text(joint.p)
        out["rank"][_budget_key(b)]["joint"] = {
            "statistic": joint.statistic,
            "df": joint.df,
            "p_value": joint.p,
            "text": f"{joint.statistic:.0f} on {joint.df} degrees of freedom, " + f"*p* = {text}",
        }
    n = len(family)
    out["orders"] = math.factorial(n)
    out["least_p_value"] = f"{1 / math.factorial(n):.3f}"
    return out


@table()
@takes_the_sweep
def lab_horizon_table(
    *,
    args: SweepArgs,
):
    """Per model: the starting factor at zero input, its 1% horizon, and the lag learned within each budget."""
    res = args.result()
    sweep = res.sweep
    horizons = _horizons(res)
    values = _sweep_values(res)
    rows = []
    rho, norm = rnn_spectra(sweep.short_lags[0], sweep.seeds, sweep.design.hidden)
    for s in sweep.models:
        h = horizons[s]
        if s.init == "chrono":
            ratio = float(np.median([v / (lag + 2) for lag, v in h["by_lag"].items()]))
            factor, horizon = "grows with T", f"≈ {ratio:.1f} T"
        elif s.cell == "rnn":
            factor = f"ρ {h['factor']:.2f} (‖W‖₂ {float(np.median(norm)):.2f})"
            horizon = f"{h['horizon']:.1f}"
        else:
            factor, horizon = f"{h['factor']:.2f}", f"{h['horizon']:.1f}"
        cells = []
        for b in sweep.budgets:
            fit = values["fits"][s.key][_budget_key(b)]
            cells.append(f"{fit['text']} {fit['interval']}".strip())
        rows.append([_short_label(s), factor, horizon, *cells])
    b0, b1 = sweep.budgets
    table = Table(
        columns=["model", "starting factor at zero input", "predicted 1% horizon", f"L50({b0})", f"L50({b1})"],
        rows=rows,
        align=["left", "right", "right", "right", "right"],
        notes=(
            f"Starting factor: the median forget (GRU: update) gate at zero input and state, or the tanh RNN's "
            f"spectral radius ρ of \\(W_{{hh}}\\), over {len(sweep.seeds)} seeds; horizons in steps. "
            f"L50(U): the lag at which a Firth logistic fit of success against lag crosses 50% within U updates, "
            f"with its 95% interval; where the counts fall from at least 90% to at most 10% between two "
            f"adjacent lags tried, that range; beyond the lags tried, a bound."
        ),
    )
    values["horizon"] = {s.key: (h["horizon"] if not h["beyond"] else "beyond") for s, h in horizons.items()}
    values.update(_ordering(res, horizons, values))
    values["rho"] = float(np.median(rho))
    values["rho_range"] = f"{rho.min():.2f} to {rho.max():.2f}"
    values["norm"] = float(np.median(norm))
    values["norm_range"] = f"{norm.min():.2f} to {norm.max():.2f}"
    return table, values


@table()
@takes_the_sweep
def success_counts_table(
    budget: PositiveInt = SHORT,
    *,
    args: SweepArgs,
):
    """Successes per lag (rows) and model (columns) within one budget."""
    if budget not in list(args.budgets):
        raise ValueError(f"budget must be one of budgets {list(args.budgets)}, got {budget!r}")
    res = args.result()
    sweep = res.sweep
    tried = sorted({lag for s in sweep.models for lag in res.lags(s, budget)})
    rows = []
    for lag in tried:
        row = [str(lag)]
        for s in sweep.models:
            row.append(str(res.outcome(s, lag, budget).successes) if lag in res.lags(s, budget) else "–")
        rows.append(row)
    table = Table(
        columns=["lag", *[_short_label(s) for s in sweep.models]],
        rows=rows,
        align=["right"] * (1 + len(sweep.models)),
        notes=(
            f"Seeds of {len(sweep.seeds)} whose held-out accuracy reached {sweep.design.threshold:g} within "
            f"{budget} updates; – : not tried (the extension rule had stopped)."
        ),
    )
    return table, _sweep_values(res)


@table()
def wilson_table(seeds: PositiveInt = 20, level: Finite = 0.95):
    """The Wilson interval of k successes out of ``seeds``, for every k."""
    if not 0 < level < 1:
        raise ValueError(f"level must be a number between 0 and 1, got {level!r}")
    half = (seeds + 2) // 2
    rows = []
    for k in range(half):
        pair = [str(k), "[{:.2f}, {:.2f}]".format(*stats.wilson(k, seeds, level))]
        j = k + half
        pair += [str(j), "[{:.2f}, {:.2f}]".format(*stats.wilson(j, seeds, level))] if j <= seeds else ["", ""]
        rows.append(pair)
    table = Table(
        columns=["successes", f"{level:.0%} interval", "successes", f"{level:.0%} interval"],
        rows=rows,
        notes=f"Wilson score interval of the success rate, out of {seeds} seeds.",
    )
    return table, {"seeds": seeds, "level": level}


# ---------------------------------------------------------------------------- continuous outcomes


@figure()
@takes_the_sweep
def final_accuracy(
    *,
    args: SweepArgs,
):
    """Median final held-out accuracy and its interquartile range against the lag, one panel per model."""
    res = args.result()
    sweep = res.sweep
    specs = list(sweep.models)
    cols = min(2, len(specs))
    nrows = math.ceil(len(specs) / cols)
    fig, axes = new_figure(ncols=cols, nrows=nrows, height=1.7 * nrows + 0.8, sharex=True, sharey=True, squeeze=False)
    medians: dict = {}
    for k, s in enumerate(specs):
        ax = axes.flat[k]
        for b, style, colour in zip(sweep.budgets, ("-", "--"), (PALETTE[0], PALETTE[1])):
            lags = res.lags(s, b)
            q = np.array([res.outcome(s, lag, b).accuracy() for lag in lags])
            ax.fill_between(lags, q[:, 0], q[:, 2], color=colour, alpha=0.2, linewidth=0)
            ax.plot(lags, q[:, 1], linestyle=style, color=colour, marker="o", markersize=3, label=f"within {b} updates")
            medians.setdefault(s.key, {})[_budget_key(b)] = {f"lag{lag}": float(m) for lag, m in zip(lags, q[:, 1])}
        ax.axhline(1 / ALPHABET, color="#777777", linestyle=":", linewidth=1.0)
        ax.axhline(sweep.design.threshold, color="#777777", linestyle="--", linewidth=0.8)
        ax.set_title(_short_label(s), fontsize=10)
        ax.set_ylim(0, 1.02)
    for ax in axes.flat[len(specs) :]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("lag")
    for ax in axes[:, 0]:
        ax.set_ylabel("final held-out\naccuracy")
    fig.legend(*axes.flat[0].get_legend_handles_labels(), loc="outside lower center", ncols=2)
    return fig, {"seeds": len(sweep.seeds), "median": medians, "threshold": sweep.design.threshold}


@figure()
@takes_the_sweep
def survival_curves(
    lags: Lags = SURVIVAL_LAGS,
    *,
    args: SweepArgs,
):
    """Kaplan-Meier curves of updates to success: the share not yet succeeded, per model, at each lag."""
    missing = [lag for lag in lags if lag not in list(args.long_lags)]
    if missing:
        raise ValueError(f"lags must be lags of long_lags {list(args.long_lags)}, got {list(lags)}")
    res = args.result()
    sweep = res.sweep
    long = sweep.budgets[1]
    fig, axes = new_figure(nrows=len(lags), height=2.0 * len(lags) + 1.0, sharex=True, sharey=True, squeeze=False)
    medians: dict = {}
    for ax, lag in zip(axes[:, 0], lags):
        for k, s in enumerate(sweep.models):
            km = res.outcome(s, lag, long).survival()
            t = np.concatenate([[0.0], np.asarray(km.times, dtype=float), [float(long)]])
            surv = np.concatenate([[1.0], np.asarray(km.survival, dtype=float)])
            surv = np.concatenate([surv, [surv[-1]]])
            ax.step(
                t,
                surv,
                where="post",
                color=PALETTE[k % len(PALETTE)],
                linestyle="-" if s.cell == "lstm" else "--",
                label=_short_label(s),
            )
            med = km.median()
            lo, hi = km.median_interval(0.95)
            medians.setdefault(s.key, {})[f"lag{lag}"] = {
                "median": "not reached" if med is None or not math.isfinite(med) else f"{med:.0f}",
                "interval": _km_interval(lo, hi),
                "by_short": float(km.success_by(sweep.budgets[0])),
                "by_long": float(km.success_by(long)),
            }
        ax.axvline(sweep.budgets[0], color="#777777", linestyle=":", linewidth=1.0)
        ax.set_title(f"lag {lag}", fontsize=10)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlim(0, long)
        ax.set_ylabel("share not yet\nsucceeded")
    axes[-1, 0].set_xlabel("updates")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncols=3)
    return fig, {"lags": list(lags), "seeds": len(sweep.seeds), "long": long, "short": sweep.budgets[0], "km": medians}


def _km_interval(lo, hi) -> str:
    def word(v):
        return "not reached" if v is None or not math.isfinite(v) else f"{v:.0f}"

    return f"[{word(lo)}, {word(hi)}]"


# ---------------------------------------------------------------------------- diagnostics


def _trajectory(run, name: str, e: int) -> tuple[np.ndarray, np.ndarray]:
    """One member's diagnostic over the evaluations it was trained through."""
    values = run.diagnostics[name][e]
    ok = np.isfinite(values)
    return run.eval_steps[ok], values[ok]


def _band(run, name: str, members: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Quartiles over ``members`` of a diagnostic at each evaluation, over the members still training there."""
    values = np.asarray(run.diagnostics[name])[members]
    keep = np.isfinite(values).any(axis=0)
    x, values = run.eval_steps[keep], values[:, keep]
    low, mid, high = (np.nanpercentile(values, q, axis=0) for q in (25, 50, 75))
    return x, low, mid, high


def _start_end(run, name: str, members: list[int]) -> tuple[float, float]:
    """The median over ``members`` of a diagnostic at the start and at each member's last checkpoint."""
    if not members:
        return math.nan, math.nan
    start = [_trajectory(run, name, e)[1][0] for e in members]
    end = [_trajectory(run, name, e)[1][-1] for e in members]
    return float(np.median(start)), float(np.median(end))


DIAGNOSED = (("rnn", "spectral_radius"), ("lstm:0", "forget_bias_median"), ("lstm:1", "grad_c_first"))
"""The panels of the diagnostics figure: a model and the quantity drawn for it."""

QUANTITY = {
    "spectral_radius": "ρ(W_hh)",
    "spectral_norm": "‖W_hh‖₂",
    "forget_bias_median": "median forget bias",
    "grad_c_first": "‖∂ℓ/∂c₁‖",
    "grad_h_first": "‖∂ℓ/∂h₁‖",
}


DIAGNOSTIC_LAGS = (8, DIAGNOSTIC_LAG)
"""The lags of the diagnostics figure: the shortest of the long grid, where most seeds succeed, and
:data:`rnnmem.experiments.DIAGNOSTIC_LAG`, where most do not (both from the runs of the sweep)."""


def _number(value: float, fmt: str) -> str:
    return placeholders.sci(value, 1) if fmt == "sci" else f"{value:{fmt}}"


def _group_clause(count: int, who: str, a: float, b: float, when: str, fmt: str, empty: str = "") -> str:
    """``in the 2 seeds that succeeded it rose from 0.60 to 3.85 at their success``; ``empty`` (default
    ``no seed <who>``) when there are none."""
    if count == 0:
        return empty or f"no seed {who}"
    seeds = "the one seed" if count == 1 else f"the {count} seeds"
    return f"in {seeds} that {who} it {_direction(a, b)} from {_number(a, fmt)} to {_number(b, fmt)} {when}"


@figure()
@takes_the_sweep
def diagnostics_over_training(
    lags: Lags = DIAGNOSTIC_LAGS,
    *,
    args: SweepArgs,
):
    """Per member, over training at each of ``lags`` (long budget): the RNN's ρ(W_hh), the b_f = 0 LSTM's
    median forget bias, and the gradient reaching the b_f = 1 LSTM's first cell state; successes against
    failures. Values per lag and model: the counts, the medians at the start and at each member's last
    checkpoint, and ``text``, a clause that says it in words (``no seed succeeded`` when none did)."""
    lags = list(lags)
    for i, lag in enumerate(lags):
        if lag not in list(args.long_lags):
            raise ValueError(f"lags[{i}] must be one of long_lags {list(args.long_lags)}, got {lag!r}")
    needed = [m for m, _ in DIAGNOSED]
    if any(ModelSpec.parse(m) not in [ModelSpec.parse(x) for x in args.models] for m in needed):
        raise ValueError(f"models must include {needed}, got {list(args.models)}")
    res = args.result()
    long = res.sweep.budgets[1]
    fig, grid = new_figure(
        nrows=len(DIAGNOSED), ncols=len(lags), height=2.0 * len(DIAGNOSED) + 0.8, sharex=True, squeeze=False
    )
    values: dict = {"lags": lags, "long": long, "seeds": len(res.sweep.seeds)}
    for col, lag in enumerate(lags):
        at: dict = {}
        for row, (model, name) in enumerate(DIAGNOSED):
            ax = grid[row][col]
            spec = ModelSpec.parse(model)
            run = res.result(spec, lag, long)
            ok = run.outcome(long).observed
            for flag, colour in ((True, PALETTE[0]), (False, PALETTE[1])):
                members = [e for e in range(len(ok)) if bool(ok[e]) == flag]
                if not members:
                    continue
                x, low, mid, high = _band(run, name, members)
                ax.fill_between(x, low, high, color=colour, alpha=0.25, linewidth=0)
                ax.plot(x, mid, color=colour, linewidth=1.4)
            if name == "grad_c_first":
                ax.set_yscale("log")
            if name == "spectral_radius":
                ax.axhline(1.0, color="#777777", linestyle=":", linewidth=1.0)
            if col == 0:
                ax.set_ylabel(f"{_short_label(spec)}:\n{QUANTITY[name]}")
            if row == 0:
                ax.set_title(f"lag {lag}", fontsize=10)
            won = [e for e in range(len(ok)) if ok[e]]
            lost = [e for e in range(len(ok)) if not ok[e]]
            fmt = "sci" if name == "grad_c_first" else ".2f"
            entry: dict = {"successes": len(won), "failures": len(lost)}
            clauses = []
            for group, members, who, when, empty in (
                ("won", won, "succeeded", "at their success", ""),
                ("lost", lost, f"did not succeed within {long} updates", "at the end", "every seed succeeded"),
            ):
                a, b = _start_end(run, name, members)
                entry[group] = {"start": a, "end": b, "direction": _direction(a, b) if members else None}
                clauses.append(_group_clause(len(members), who, a, b, when, fmt, empty))
            entry["text"] = "; ".join(clauses)
            if spec.cell == "rnn":
                for group, members in (("won", won), ("lost", lost)):
                    a, b = _start_end(run, "spectral_norm", members)
                    entry[f"norm_{group}"] = {"start": a, "end": b}
            at[spec.key] = entry
        values[f"lag{lag}"] = at
    from matplotlib.lines import Line2D

    fig.legend(
        handles=[
            Line2D([], [], color=PALETTE[0], label="succeeded (until success)"),
            Line2D([], [], color=PALETTE[1], label=f"not within {long} updates"),
        ],
        loc="outside lower center",
        ncol=2,
        fontsize=8.5,
    )
    for col in range(len(lags)):
        grid[-1][col].set_xlabel("updates")
    return fig, values


def _direction(start: float, end: float) -> str:
    if not (math.isfinite(start) and math.isfinite(end)):
        raise ValueError(f"a trend needs two finite values, got {start!r} and {end!r}")
    return "rose" if end > start else "fell" if end < start else "stayed"


# ---------------------------------------------------------------------------- gradient by distance


@figure()
def gradient_reach(
    lag: PositiveInt = CONTROL_LAG,
    models: Sequence[Model] = CONFIGS,
    seeds: PositiveInt = 20,
    hidden: PositiveInt = 16,
    steps: PositiveInt = SHORT,
    threshold: Threshold = 0.9,
    sequences: PositiveInt = 256,
):
    """||dL/dh_s|| over ||dL/dh_T|| against the distance T - s, at initialization and after training."""
    specs = [ModelSpec.parse(m, f"models[{i}]") for i, m in enumerate(models)]
    design = _design(hidden, threshold, steps)
    keys = [RecallRun(s, lag, tuple(range(seeds)), design) for s in specs]
    results = dict(zip(keys, runs(keys)))
    fig, (left, right) = new_figure(ncols=2, height=4.4, sharey=True)
    far: dict[ModelSpec, list[float]] = {}
    for k, (spec, key) in enumerate(zip(specs, keys)):
        style = dict(color=PALETTE[k % len(PALETTE)], linestyle="-" if spec.cell == "lstm" else "--")
        trained = results[key].params
        for ax, params in ((left, None), (right, trained)):
            ratio = reach_by_distance(spec, lag, key.seeds, hidden, params=params, sequences=sequences)
            ax.semilogy(np.arange(len(ratio)), ratio, label=_short_label(spec), **style)
            far.setdefault(spec, []).append(float(ratio[-1]))
    length = lag + 2
    for ax, title in ((left, "at initialization"), (right, f"after training\n(≤ {steps} updates)")):
        ax.set_title(title, fontsize=10)
        ax.set_xlim(0, length - 1)
    fig.supxlabel("distance from the query, T − s")
    left.set_ylabel(
        "$\\|\\partial\\ell/\\partial h_s\\| \\,/\\, \\|\\partial\\ell/\\partial h_T\\|$,\nmedian over seeds"
    )
    fig.legend(*right.get_legend_handles_labels(), loc="outside upper center", ncols=3)
    ranked = sorted(specs, key=lambda s: -far[s][0])
    grew = [s for s in specs if far[s][1] > far[s][0]]
    return fig, {
        "lag": lag,
        "distance": length - 1,
        "seeds": seeds,
        "sequences": sequences,
        "steps": steps,
        "before": {s.key: far[s][0] for s in specs},
        "after": {s.key: far[s][1] for s in specs},
        "ranked": _join([_prose(s) for s in ranked]),
        "most": _prose(ranked[0]),
        "least": _join([_prose(s) for s in ranked[-3:]]),
        "grew": _join([_prose(s) for s in grew], "no model"),
        "fell": _join([_prose(s) for s in specs if s not in grew], "no model"),
    }


# ---------------------------------------------------------------------------- controls


def _control_runs(specs: list[ModelSpec], lag, seeds, hidden, steps, threshold) -> list:
    design = _design(hidden, threshold, steps)
    keys = [RecallRun(s, lag, tuple(range(seeds)), design) for s in specs]
    return [r.outcome(steps) for r in runs(keys)]


def _accuracy_text(o: Outcome) -> str:
    q1, med, q3 = o.accuracy()
    return f"{med:.2f} [{q1:.2f}, {q3:.2f}]"


def _count_text(o: Outcome) -> str:
    return f"{o.successes} {_interval(o)}"


def _sci(v: float) -> str:
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    exponent = int(math.floor(math.log10(abs(v))))
    return f"{v:.2f}" if exponent >= -1 else f"\\({v / 10**exponent:.1f} \\times 10^{{{exponent}}}\\)"


def _bias_outcomes(biases, lag, seeds, hidden, steps, threshold) -> list[Outcome]:
    return _control_runs([ModelSpec("lstm", forget_bias=b) for b in biases], lag, seeds, hidden, steps, threshold)


@figure()
def bias_sweep(
    biases: Sequence[Finite] = BIASES,
    lag: PositiveInt = CONTROL_LAG,
    seeds: PositiveInt = 20,
    hidden: PositiveInt = 16,
    steps: PositiveInt = SHORT,
    threshold: Threshold = 0.9,
):
    """Success rate with its Wilson interval, and median final accuracy with its IQR, against the forget bias."""
    outcomes = _bias_outcomes(biases, lag, seeds, hidden, steps, threshold)
    fig, (top, bottom) = new_figure(nrows=2, height=4.4, sharex=True)
    rate = np.array([o.rate for o in outcomes])
    lo, hi = np.array([o.interval() for o in outcomes]).T
    top.errorbar(biases, rate, yerr=[rate - lo, hi - rate], marker="o", color=PALETTE[0], capsize=3)
    top.set_ylim(-0.03, 1.03)
    top.set_ylabel(f"share of {seeds}\nthat succeed")
    q = np.array([o.accuracy() for o in outcomes])
    bottom.errorbar(
        biases, q[:, 1], yerr=[q[:, 1] - q[:, 0], q[:, 2] - q[:, 1]], marker="s", color=PALETTE[2], capsize=3
    )
    bottom.axhline(threshold, color="#777777", linestyle="--", linewidth=0.8)
    bottom.set_ylim(0, 1.02)
    bottom.set_ylabel("final held-out\naccuracy")
    bottom.set_xlabel(f"forget bias $b_f$ (lag {lag}, {steps} updates)")
    bottom.set_xticks(list(biases), [f"{b:g}" for b in biases])
    return fig, _bias_values(biases, lag, seeds, steps, outcomes)


def _bias_values(biases, lag, seeds, steps, outcomes: list[Outcome]) -> dict:
    rates = [o.rate for o in outcomes]
    best = max(rates)
    peak = [b for b, r in zip(biases, rates) if r == best]
    adjacent = {
        f"b{a:g}-b{b:g}": compare(outcomes[i + 1], outcomes[i]) for i, (a, b) in enumerate(zip(biases, biases[1:]))
    }
    # The accuracy each seed ended with (at its success, or at the end of the budget), step by step.
    ranks = {
        f"b{a:g}-b{b:g}": stats.mann_whitney(outcomes[i + 1].final, outcomes[i].final).p
        for i, (a, b) in enumerate(zip(biases, biases[1:]))
    }
    separated = [f"{b:g} against {a:g}" for a, b in zip(biases, biases[1:]) if ranks[f"b{a:g}-b{b:g}"] < ALPHA]
    return {
        "lag": lag,
        "seeds": seeds,
        "steps": steps,
        "steps_across": lag + 1,
        "adjacent_text": "; ".join(
            f"{b:g} against {a:g}, {_step_words(adjacent[f'b{a:g}-b{b:g}'])}" for a, b in zip(biases, biases[1:])
        ),
        "accuracy_p": {k: p_text(p) for k, p in ranks.items()},
        "accuracy_steps": len(separated),
        "accuracy_text": _join(separated),
        "counts": {f"b{b:g}": o.successes for b, o in zip(biases, outcomes)},
        "intervals": {f"b{b:g}": _interval(o) for b, o in zip(biases, outcomes)},
        "median": {f"b{b:g}": o.accuracy()[1] for b, o in zip(biases, outcomes)},
        "peak": _join([f"{b:g}" for b in peak]),
        "peak_count": round(best * seeds),
        "first_vs_peak": compare(outcomes[rates.index(best)], outcomes[0]),
        "last_vs_peak": compare(outcomes[-1], outcomes[rates.index(best)]),
        "adjacent": adjacent,
        "keep": {f"b{b:g}": float(memory.decay(memory.sigmoid(b), lag + 1)) for b in biases},
    }


def _step_words(c: dict) -> str:
    """One step of the bias sweep in a few words: its counts and what Fisher's test can say of them."""
    counts = f"{c['a']} of {c['n']} against {c['b']}"
    if c["kind"] in ("floor", "ceiling"):
        return f"{counts}, both at the {c['kind']}, where the test cannot tell"
    if c["differ"]:
        return f"{counts}, {c['phrase'].split(' ')[0]} successes (p = {c['p']})"
    return f"{counts}, no difference found (p = {c['p']}, power {c['power']})"


@table()
def bias_sweep_table(
    biases: Sequence[Finite] = BIASES,
    lag: PositiveInt = CONTROL_LAG,
    seeds: PositiveInt = 20,
    hidden: PositiveInt = 16,
    steps: PositiveInt = SHORT,
    threshold: Threshold = 0.9,
):
    """Per forget bias: the starting gate, the share it keeps across the lag, successes and final accuracy."""
    outcomes = _bias_outcomes(biases, lag, seeds, hidden, steps, threshold)
    rows = []
    for b, o in zip(biases, outcomes):
        f = float(memory.sigmoid(b))
        rows.append([f"{b:g}", f"{f:.3f}", _sci(float(memory.decay(f, lag + 1))), _count_text(o), _accuracy_text(o)])
    table = Table(
        columns=[
            "\\(b_f\\)",
            "\\(\\sigma(b_f)\\)",
            f"\\(f^{{{lag + 1}}}\\)",
            f"successes of {seeds} [95%]",
            "accuracy, median [IQR]",
        ],
        rows=rows,
        notes=f"Lag {lag}, {steps} updates at most; accuracy on held-out sequences at success or at the end.",
    )
    return table, _bias_values(biases, lag, seeds, steps, outcomes)


DROPOUT_ARMS = ("none", "carry-step", "carry-sequence", "hidden-sequence", "equivalent")
ARM_LABELS = {
    "none": "no dropout",
    "carry-step": "on \\(c_{t-1}\\), a fresh mask every step",
    "carry-sequence": "on \\(c_{t-1}\\), one mask per sequence",
    "hidden-sequence": "on \\(h_{t-1}\\), one mask per sequence",
    "equivalent": "no dropout",
}


def _dropout_outcomes(keep, bias, lag, seeds, hidden, steps, threshold) -> tuple[float, dict]:
    """Per arm, its outcome: no dropout (shared with the sweep's runs), three masks, and no dropout at the
    forget bias a kept unit behaves as if it had under per-sequence carry masks."""
    design = _design(hidden, threshold, steps)
    equivalent = dropout_equivalent_bias(bias, keep)
    seeds_ = tuple(range(seeds))
    keys = [
        RecallRun(ModelSpec("lstm", bias), lag, seeds_, design),
        *[DropoutRun(s, keep, bias, lag, seeds_, design) for s in SCHEMES if s != "none"],
        RecallRun(ModelSpec("lstm", equivalent), lag, seeds_, design),
    ]
    return equivalent, {arm: r.outcome(steps) for arm, r in zip(DROPOUT_ARMS, runs(keys))}


# ---------------------------------------------------------------------------- the SGD arm


def _sgd(models, lags, rates, calibration, seeds, hidden, steps, threshold):
    """The calibration (one run per rate), the rate it picks, and per model and lag the SGD and Adam outcomes."""
    cal_model, cal_lag = calibration
    seeds_ = tuple(range(seeds))
    sgd = dataclasses.replace(_design(hidden, threshold, steps), optimizer="sgd")
    cal_keys = [RecallRun(cal_model, int(cal_lag), seeds_, dataclasses.replace(sgd, lr=r)) for r in rates]
    cal = [r.outcome(steps) for r in runs(cal_keys)]
    rate = sgd_rate(rates, [o.successes for o in cal])
    specs = [ModelSpec.parse(m, f"models[{i}]") for i, m in enumerate(models)]
    chosen = dataclasses.replace(sgd, lr=rate)
    adam = _design(hidden, threshold, steps)
    keys = [RecallRun(s, lag, seeds_, d) for s in specs for lag in lags for d in (chosen, adam)]
    out = [r.outcome(steps) for r in runs(keys)]
    pairs = {
        (s, lag): (out[2 * i], out[2 * i + 1]) for i, (s, lag) in enumerate((s, lag) for s in specs for lag in lags)
    }
    return cal, rate, specs, pairs


# ---------------------------------------------------------------------------- the controls rerun at the pilot's lag


def _pilot(reference: ModelSpec, args: SweepArgs, neighbour_lag: int) -> dict:
    """The pilot of a control whose reference arm is ``reference``: its row of the main grid at the short
    budget, or, for a reference the grid does not train, its neighbour's (:data:`INPUT_RERUNS`): the bias
    sweep's LSTM with the same forget bias at ``neighbour_lag``. The lag :func:`pilot_lag` picks."""
    short = args.budgets[0]
    if reference in {ModelSpec.parse(m) for m in args.models}:
        res = args.result()
        lags, counts, source = res.lags(reference, short), res.counts(reference, short), reference
    else:
        source = ModelSpec("lstm", forget_bias=reference.forget_bias)
        (o,) = _control_runs([source], neighbour_lag, args.seeds, args.hidden, short, args.threshold)
        lags, counts = [neighbour_lag], [o.successes]
    lag = pilot_lag(lags, counts, args.seeds)
    text = _join([f"{k} at lag {lag_}" for lag_, k in zip(lags, counts)])
    return {"lag": lag, "source": _prose(source), "counts": text, "count": counts[lags.index(lag)]}


def _arm(result, steps: int, threshold: float) -> dict:
    """One arm trained without retirement: first-look and end-of-budget successes, the accuracy at the end."""
    o = result.outcome(steps)
    end = result.scores_at(steps)
    return {"outcome": o, "first": o.successes, "end": result.successes_at(steps, threshold), "scores": end}


def _quartile_text(values) -> str:
    q1, med, q3 = stats.quartiles(np.asarray(values, dtype=float))
    return f"{med:.2f} [{q1:.2f}, {q3:.2f}]"


def _versus(arm: dict, ref: dict, n: int) -> dict:
    """An arm against its reference: Fisher's test on the first-look and on the end-of-budget counts, and the
    Mann-Whitney test on the accuracy at the end of the budget."""
    end_a = Outcome(ref["outcome"].budget, tuple(0 if i < arm["end"] else None for i in range(n)), arm["scores"])
    end_b = Outcome(ref["outcome"].budget, tuple(0 if i < ref["end"] else None for i in range(n)), ref["scores"])
    mw = stats.mann_whitney(arm["scores"], ref["scores"])
    return {
        "first": compare(arm["outcome"], ref["outcome"]),
        "end": compare(end_a, end_b),
        "mw_p": p_text(mw.p),
        "mw_differ": mw.p < ALPHA,
        "mw_method": mw.method,
        "mw_words": _rank_words(mw.p, arm["scores"], ref["scores"]),
    }


def _rank_words(p: float, a, b) -> str:
    """A rank test's result as a clause: which sample lies higher, or that the test separates neither."""
    if p >= ALPHA:
        return f"the Mann-Whitney test detects no difference between them (p = {p_text(p)})"
    side = "higher" if float(np.median(a)) > float(np.median(b)) else "lower"
    return f"the Mann-Whitney test puts the first {side} (p = {p_text(p)})"


@table()
@takes_the_sweep
def input_rerun_table(
    neighbour_lag: PositiveInt = CONTROL_LAG,
    sequences: PositiveInt = 256,
    *,
    args: SweepArgs,
):
    """The input-gate pairs rerun at the lag the pilot rule picks for each reference arm, without retirement."""
    steps, n = args.budgets[0], args.seeds
    design = _design(args.hidden, args.threshold, steps)
    rows: list = []
    values: dict = {"seeds": n, "steps": steps, "pairs": {}}
    for ref_text, arm_text in INPUT_RERUNS:
        ref, arm = ModelSpec.parse(ref_text), ModelSpec.parse(arm_text)
        pilot = _pilot(ref, args, neighbour_lag)
        lag = pilot["lag"]
        ref_run, arm_run = runs([RecallRun(s, lag, tuple(range(n)), design, retire=False) for s in (ref, arm)])
        a, b = _arm(arm_run, steps, args.threshold), _arm(ref_run, steps, args.threshold)
        first = _control_runs([ref, arm], CONTROL_LAG, n, args.hidden, steps, args.threshold)
        vs = _versus(a, b, n)
        reach = {
            s.key: float(reach_by_distance(s, lag, range(n), args.hidden, sequences=sequences)[-1]) for s in (ref, arm)
        }
        values["pairs"][arm.key] = {
            "lag": lag,
            "pilot": pilot,
            "first": {ref.key: b["first"], arm.key: a["first"]},
            "end": {ref.key: b["end"], arm.key: a["end"]},
            "accuracy": {ref.key: _quartile_text(b["scores"]), arm.key: _quartile_text(a["scores"])},
            "vs": vs,
            "reach": reach,
            "design1": {ref.key: first[0].successes, arm.key: first[1].successes, "lag": CONTROL_LAG},
            "design1_vs": compare(first[1], first[0]),
        }
        for s, d, o in ((ref, b, first[0]), (arm, a, first[1])):
            rows.append(
                [
                    _label(s, tex=True),
                    str(lag),
                    f"{d['first']} {_interval(d['outcome'])}",
                    str(d["end"]),
                    _quartile_text(d["scores"]),
                    "" if s == ref else vs["first"]["p"],
                    "" if s == ref else vs["mw_p"],
                    _sci(reach[s.key]),
                    str(o.successes),
                ]
            )
    table = Table(
        columns=[
            "model",
            "lag",
            f"successes of {n}, first look [95%]",
            f"at {steps} updates",
            f"accuracy at {steps}, median [IQR]",
            "p, counts",
            "p, accuracy",
            "gradient at step 1, start",
            f"lag {CONTROL_LAG}, first design",
        ],
        rows=rows,
        align=["left"] + ["right"] * 8,
        notes=(
            f"Trained without retirement for {steps} updates. First look: held-out accuracy at least "
            f"{args.threshold:g} at any evaluation; at {steps} updates: at the last one. p, counts: Fisher's exact "
            f"test of the first-look successes against the row above; p, accuracy: the Mann-Whitney test of the "
            f"accuracies at {steps} updates. Last column: successes of the first design, at lag {CONTROL_LAG} "
            f"with retirement."
        ),
    )
    return table, values


DROPOUT_RERUN_ARMS = ("none", "carry-step", "carry-sequence", "hidden-sequence", "equivalent")


@table()
@takes_the_sweep
def dropout_rerun_table(
    keep: Keep = DROPOUT_KEEP,
    bias: Finite = DROPOUT_BIAS,
    margin: Positive = EQUIVALENCE_MARGIN,
    sequences: PositiveInt = 256,
    *,
    args: SweepArgs,
):
    """The dropout arms rerun at the pilot's lag for the LSTM at ``bias``, without retirement, with the trained
    forget biases and the per-sequence carry arm evaluated with and without a training-time mask."""
    if not margin < 1:
        raise ValueError(f"margin must be a share below 1, got {margin!r}")
    steps, n = args.budgets[0], args.seeds
    design = _design(args.hidden, args.threshold, steps)
    reference = ModelSpec("lstm", forget_bias=bias)
    pilot = _pilot(reference, args, CONTROL_LAG)
    lag = pilot["lag"]
    equivalent = dropout_equivalent_bias(bias, keep)
    seeds_ = tuple(range(n))
    keys = [
        RecallRun(reference, lag, seeds_, design, retire=False),
        *[DropoutRun(s, keep, bias, lag, seeds_, design, retire=False) for s in SCHEMES if s != "none"],
        RecallRun(ModelSpec("lstm", forget_bias=equivalent), lag, seeds_, design, retire=False),
    ]
    results = dict(zip(DROPOUT_RERUN_ARMS, runs(keys)))
    arms = {a: _arm(r, steps, args.threshold) for a, r in results.items()}
    fb = {a: forget_biases(r.params, args.hidden) for a, r in results.items()}
    seq = results["carry-sequence"]
    masked = masked_accuracy(seq.params, bias, lag, seeds_, args.hidden, keep, sequences=sequences)
    unmasked = masked_accuracy(seq.params, bias, lag, seeds_, args.hidden, 1.0, sequences=sequences)
    _, first_design = _dropout_outcomes(keep, bias, CONTROL_LAG, n, args.hidden, steps, args.threshold)
    vs = {a.replace("-", "_"): _versus(arms[a], arms["none"], n) for a in DROPOUT_RERUN_ARMS if a != "none"}
    seq_eq = _versus(arms["carry-sequence"], arms["equivalent"], n)
    tost = stats.equivalence(arms["carry-sequence"]["first"], n, arms["equivalent"]["first"], n, margin)
    rows = []
    for a in DROPOUT_RERUN_ARMS:
        d = arms[a]
        b = equivalent if a == "equivalent" else bias
        rows.append(
            [
                f"{b:.2f}",
                ARM_LABELS[a],
                f"{d['first']} {_interval(d['outcome'])}",
                str(d["end"]),
                _quartile_text(d["scores"]),
                _quartile_text(fb[a]),
                "" if a == "none" else vs[a.replace("-", "_")]["first"]["p"],
                "" if a == "none" else vs[a.replace("-", "_")]["mw_p"],
                str(first_design[a].successes),
            ]
        )
    table = Table(
        columns=[
            "\\(b_f\\)",
            "dropout",
            f"successes of {n}, first look [95%]",
            f"at {steps} updates",
            f"accuracy at {steps}, median [IQR]",
            "trained \\(b_f\\), median [IQR]",
            "p, counts",
            "p, accuracy",
            f"lag {CONTROL_LAG}, first design",
        ],
        rows=rows,
        align=["right", "left"] + ["right"] * 7,
        notes=(
            f"Keep probability {keep:g}, recall at lag {lag}, trained without retirement for {steps} updates; "
            f"accuracy without masks. Trained \\(b_f\\): per seed the median over units of the forget bias at "
            f"the end, then the median and quartiles over seeds. p against no dropout at "
            f"\\(b_f = {bias:g}\\): Fisher's exact test of the first-look successes, and the Mann-Whitney test "
            f"of the accuracies. Last column: successes of the first design, at lag {CONTROL_LAG} with retirement."
        ),
    )
    key = {a: a.replace("-", "_") for a in DROPOUT_RERUN_ARMS}
    return table, {
        "keep": keep,
        "bias": bias,
        "lag": lag,
        "pilot": pilot,
        "seeds": n,
        "steps": steps,
        "equivalent": equivalent,
        "first": {key[a]: d["first"] for a, d in arms.items()},
        "end": {key[a]: d["end"] for a, d in arms.items()},
        "accuracy": {key[a]: _quartile_text(d["scores"]) for a, d in arms.items()},
        "trained_bias": {key[a]: _quartile_text(v) for a, v in fb.items()},
        "trained_bias_median": {key[a]: float(np.median(v)) for a, v in fb.items()},
        "vs": vs,
        "sequence_vs_equivalent": seq_eq,
        "tost": {
            "margin": margin,
            "lower": tost.lower,
            "upper": tost.upper,
            "equivalent": tost.equivalent,
            "interval": f"[{tost.lower:.2f}, {tost.upper:.2f}]",
            "words": "equivalent" if tost.equivalent else "not shown equivalent",
        },
        "masked": _quartile_text(masked),
        "unmasked": _quartile_text(unmasked),
        "masked_median": float(np.median(masked)),
        "unmasked_median": float(np.median(unmasked)),
        "bias_vs_none": _rank_words(
            stats.mann_whitney(fb["carry-sequence"], fb["none"]).p, fb["carry-sequence"], fb["none"]
        ),
        "masked_lower": int(np.sum(masked < unmasked)),
        "masked_words": (
            "a difference" if stats.wilcoxon_signed_rank(masked - unmasked).p < ALPHA else "no detectable difference"
        ),
        "masked_p": p_text(stats.wilcoxon_signed_rank(masked - unmasked).p),
        "design1": {key[a]: o.successes for a, o in first_design.items()},
        "design1_lag": CONTROL_LAG,
        "steps_across": lag + 1,
        "survive_step": carry_survival("carry-step", keep, lag),
        "growth": (1 / keep) ** (lag + 1),
    }


@table()
@takes_the_sweep
def sgd_rerun_table(
    lags: Lags = SGD_LAGS,
    rates: Sequence[Positive] = SGD_RATES,
    first_calibration_model: Model = SGD_CALIBRATION[0],
    first_calibration_lag: PositiveInt = SGD_CALIBRATION[1],
    sequences: PositiveInt = 256,
    *,
    args: SweepArgs,
):
    """Plain gradient descent with a learning rate calibrated per model at its own lag off the ceiling, beside
    Adam and beside the first design (one rate for all), with chrono's input gate set back to zero as the
    control for chrono's failure."""
    steps, n, short = args.budgets[0], args.seeds, args.budgets[0]
    seeds_ = tuple(range(n))
    adam = _design(args.hidden, args.threshold, steps)
    sgd = dataclasses.replace(adam, optimizer="sgd")
    grid = args.result()
    specs = [ModelSpec.parse(m, f"models[{i}]") for i, m in enumerate(args.models)]
    cal_lags = {s: calibration_lag(grid.lags(s, short), grid.counts(s, short), n) for s in specs}
    cal_keys = [RecallRun(s, cal_lags[s], seeds_, dataclasses.replace(sgd, lr=r)) for s in specs for r in rates]
    cal = [r.outcome(steps).successes for r in runs(cal_keys)]
    counts = {s: cal[i * len(rates) : (i + 1) * len(rates)] for i, s in enumerate(specs)}
    chrono = ModelSpec("lstm", init="chrono")
    control = ModelSpec("lstm", init="chrono", input_bias=0)
    arms = [*specs, *([control] if chrono in specs else [])]
    # the second rule: every rate of the ladder at every lag; a model's rate has the most successes over its lags
    sweep_keys = [
        RecallRun(s, lag, seeds_, dataclasses.replace(sgd, lr=r)) for s in arms for lag in lags for r in rates
    ]
    swept = iter(r.outcome(steps) for r in runs(sweep_keys))
    by_rate = {(s, lag, r): next(swept) for s in arms for lag in lags for r in rates}
    own = {s: sgd_rate(rates, [sum(by_rate[(s, lag, r)].successes for lag in lags) for r in rates]) for s in arms}
    adam_out = iter(r.outcome(steps) for r in runs([RecallRun(s, lag, seeds_, adam) for s in arms for lag in lags]))
    cell = {(s, lag): (by_rate[(s, lag, own[s])], next(adam_out)) for s in arms for lag in lags}
    first_cal, first_rate, _, first_pairs = _sgd(
        args.models,
        lags,
        rates,
        (first_calibration_model, first_calibration_lag),
        n,
        args.hidden,
        steps,
        args.threshold,
    )
    rows: list = []
    vs: dict = {}
    ranks: dict = {}
    for s in arms:
        row = [_short_label(s), f"{own[s]:g}"]
        for lag in lags:
            a, b = cell[(s, lag)]
            vs.setdefault(s.key, {})[f"lag{lag}"] = compare(a, b)
            ranks[(s, lag)] = stats.mann_whitney(a.final, b.final).p
            first = first_pairs[(s, lag)][0].successes if (s, lag) in first_pairs else "–"
            row.append(f"{a.successes} · {b.successes} ({first})")
        rows.append(row)
    table = Table(
        columns=["model", "learning rate", *[f"lag {lag}" for lag in lags]],
        rows=rows,
        align=["left", "right"] + ["right"] * len(lags),
        notes=(
            f"Successes of {n} within {steps} updates: plain gradient descent (clipped at norm {DESIGN.clip:g}) at "
            f"the model's own learning rate · Adam (learning rate {DESIGN.lr:g}); in brackets, plain gradient "
            f"descent in the first design, at {first_rate:g} for every model. Each model's rate is the rate of "
            f"the ladder {_join([f'{r:g}' for r in rates])} with the most successes over these lags, a tie going "
            f"to the smaller."
        ),
    )
    tallies = {s: sum(cell[(s, lag)][0].successes for lag in lags) for s in arms}
    chrono_vs = {}
    if chrono in specs:
        chrono_vs = {f"{r:g}": compare(by_rate[(control, lags[0], r)], by_rate[(chrono, lags[0], r)]) for r in rates}
        chrono_vs["own"] = compare(cell[(control, lags[0])][0], cell[(chrono, lags[0])][0])
        chrono_vs["first"] = chrono_vs[f"{first_rate:g}"]
    reach = {
        s.key: float(reach_by_distance(s, lags[0], seeds_, args.hidden, sequences=sequences)[-1])
        for s in ((chrono, control) if chrono in specs else ())
    }
    return table, {
        "seeds": n,
        "steps": steps,
        "rates": _join([f"{r:g}" for r in rates]),
        "cal_lag": {s.key: cal_lags[s] for s in specs},
        "cal_best": max(max(c) for c in counts.values()),
        "cal_lags_text": "; ".join(f"{_prose(s)}, lag {cal_lags[s]}" for s in specs),
        "swept": {
            s.key: {f"{r:g}": {f"lag{lag}": by_rate[(s, lag, r)].successes for lag in lags} for r in rates}
            for s in arms
        },
        "rate": {s.key: own[s] for s in arms},
        "calibration_text": {s.key: _join([f"{c} at {r:g}" for r, c in zip(rates, counts[s])]) for s in specs},
        "rates_text": _join([f"{_short_label(s).replace('$', '')} {own[s]:g}" for s in specs]),
        "counts": {s.key: {f"lag{lag}": cell[(s, lag)][0].successes for lag in lags} for s in arms},
        "adam": {s.key: {f"lag{lag}": cell[(s, lag)][1].successes for lag in lags} for s in arms},
        "vs": vs,
        "chrono_vs": chrono_vs,
        "reach": reach,
        "first_lag": lags[0],
        "at_first_lag": {s.key: by_rate[(s, lags[0], first_rate)].successes for s in arms},
        "differ_count": sum(vs[s.key][f"lag{lag}"]["differ"] for s in specs for lag in lags),
        "floor_count": sum(vs[s.key][f"lag{lag}"]["kind"] == "floor" for s in specs for lag in lags),
        "accuracy_count": sum(ranks[(s, lag)] < ALPHA for s in specs for lag in lags),
        "cells": len(specs) * len(lags),
        "sgd_total": sum(tallies[s] for s in specs),
        "adam_total": sum(cell[(s, lag)][1].successes for s in specs for lag in lags),
        "first_rate": first_rate,
        "first_cal": _join([f"{o.successes} at {r:g}" for r, o in zip(rates, first_cal)]),
        "first_total": sum(first_pairs[(s, lag)][0].successes for s in specs for lag in lags),
        "first_chrono": sum(first_pairs[(chrono, lag)][0].successes for lag in lags) if chrono in specs else 0,
        "chrono_total": tallies.get(chrono, 0),
        "control_total": tallies.get(control, 0),
    }

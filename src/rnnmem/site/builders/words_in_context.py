"""Figures and tables of the chapter "Words in context".

Every builder reads the same measurement, :func:`rnnmem.probe.measure` of
seeds ``0 .. seeds - 1``: one training run per seed with the recipe
:class:`rnnmem.bilm.Recipe` declared once in the core (the page's snippets use
the same one), read at :data:`rnnmem.probe.CHECKPOINTS`. The seeds are split
into :data:`PARTS` runs (:class:`rnnmem.probe.MeasureRun`) that the lab's pool
trains side by side and :mod:`rnnmem.site.runcache` keeps on disk, so an edit
to a builder does not train them again; :func:`_runs` keeps the measurement
for the process.

**How many seeds, and in what precision.** The models train in float32 (the
core's stacked trainer, about three times faster than float64; builders'
numbers may differ across processors, and the page says so), and the chapter
uses :data:`SEEDS` seeds, twenty, the number the book asks of any result from
training. On the book's shared two-core machine their 5,000 steps and probes
take about 64 s of wall time split between the pool's two processes (ten
seeds stacked in each, about 6 s a seed; ``make bench-lab`` measures it).

**The seed is the unit of replication.** Each seed trains its own language
models and fits its own probes, and the held-out occurrences a seed's probe
is scored on all share that seed's model: they are not independent
replicates, and a test that pooled them over seeds would claim thousands of
observations where there are twenty. So every number the page reads is first
computed per seed (a seed's held-out accuracy, a seed's mean loss on the
noun), and then:

* an interval is across the seeds: the median of the per-seed values and its
  95% percentile bootstrap interval (:func:`rnnmem.stats.bootstrap_median`,
  :data:`RESAMPLES` resamples, seed :data:`BOOTSTRAP_SEED`);
* a comparison is Wilcoxon's signed-rank test
  (:func:`rnnmem.stats.wilcoxon_signed_rank`) on the per-seed differences,
  paired by seed wherever two numbers come from the same seed (two layers,
  the senses against the control task, trained against untrained, near
  against far), and on the per-seed values minus the reference for a
  comparison with a constant (one half, a floor of the loss). A difference is
  stated as one only when ``p < 0.05`` (:data:`ALPHA`), and the page prints
  the ``p``; otherwise it says there is no detectable difference. With 20
  seeds no such test can give a ``p`` below :math:`2^{-19}`, about
  :math:`1.9 \\times 10^{-6}`.

Per-seed accuracies are differenced exactly (:class:`fractions.Fraction`)
before they are rounded to floats, so equal differences tie as they should.
"""

from __future__ import annotations

import inspect
import math
from fractions import Fraction
from functools import cache

import numpy as np

from rnnmem import corpus, probe
from rnnmem.checks import NonNegativeInt, PositiveInt
from rnnmem.stats import Wilcoxon, bootstrap_median, wilcoxon_signed_rank

from ..labruns import runs
from ..registry import figure, table
from ..style import INK, PALETTE, new_figure
from ..tables import Table

SEEDS = 20
"""The seeds the chapter trains (see the module's docstring for the rule)."""

ALPHA = 0.05
"""The level below which a seed-level test's ``p`` lets the page call two numbers different."""

LEVEL = 0.95
"""The level of every interval across seeds."""

RESAMPLES = 2000
"""The bootstrap resamples of each interval across seeds."""

BOOTSTRAP_SEED = 0
"""The seed of the bootstrap's generator, so that every interval is the same on every build."""

TEST = "Wilcoxon signed-rank test"
"""The name the page gives the seed-level test."""

WINDOW = inspect.signature(probe.compare).parameters["window"].default
"""The bag of rows' half-width: the default of :func:`rnnmem.probe.compare`, which the builders use."""

OWN = {"forward": "before", "backward": "after"}
"""The side of the noun each direction's state has read: its *own* side."""

OTHER = {"forward": "after", "backward": "before"}

NAMES = {
    "static": "static row \\(E_w\\)",
    "bag": f"bag of rows, \\(\\pm {WINDOW}\\) words",
    "untrained": "untrained BiLM, \\([\\overrightarrow{h}; \\overleftarrow{h}]\\)",
    "forward": "trained, forward \\(\\overrightarrow{h}\\)",
    "backward": "trained, backward \\(\\overleftarrow{h}\\)",
    "both": "trained, \\([\\overrightarrow{h}; \\overleftarrow{h}]\\)",
    "layer 1": "trained, layer 1 \\([\\overrightarrow{h}; \\overleftarrow{h}]\\)",
    "mixture": "trained, ELMo mixture of layers 0–2",
}
"""How the page names each of :data:`rnnmem.probe.METHODS`."""

PLAIN = {
    "static": "the static row",
    "bag": "the bag of rows",
    "untrained": "the untrained network",
    "forward": "the trained forward states",
    "backward": "the trained backward states",
    "both": "the trained states joined",
    "layer 1": "the trained first layer",
    "mixture": "the trained mixture of layers",
}
"""How the page's sentences name each method."""

CURVES = ("forward", "backward", "both", "untrained", "bag")
LABELS = {
    "forward": "trained, forward",
    "backward": "trained, backward",
    "both": "trained, both joined",
    "untrained": "untrained, both joined",
    "bag": f"bag of rows ±{WINDOW}",
}


PARTS = 2
"""The measurement's seeds are split into this many runs (:class:`rnnmem.probe.MeasureRun`), seeds dealt
alternately, so that the lab's engine (:func:`rnnmem.site.labruns.runs`) trains them side by side and
keeps them on disk; a seed computes the same numbers in any run."""


@cache
def _runs(seeds: int) -> tuple[probe.SeedResult, ...]:
    """The chapter's measurement for seeds ``0 .. seeds - 1``, with the recipe of the core, in float32."""
    parts = [probe.MeasureRun(tuple(range(k, seeds, PARTS))) for k in range(min(PARTS, seeds))]
    by_seed = {run.seed: run for result in runs(parts) for run in result}
    return tuple(by_seed[s] for s in range(seeds))


def _measured(seeds: int) -> tuple[probe.SeedResult, ...]:
    if seeds < 2:
        raise ValueError(f"seeds must be at least 2 (a spread needs two runs), got {seeds}")
    return _runs(seeds)


def _key(method: str) -> str:
    """A method's name in a builder's values: ``layer 1`` becomes ``layer1``."""
    return method.replace(" ", "")


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _share(pair: tuple[int, int]) -> Fraction:
    """A seed's ``(correct, total)`` as an exact share."""
    return Fraction(pair[0], pair[1])


def _shares(pairs) -> np.ndarray:
    """Per-seed accuracies, one float per seed, from ``(correct, total)`` pairs."""
    return np.array([float(_share(p)) for p in pairs])


def _differences(a, b) -> np.ndarray:
    """Per-seed ``a - b`` of two lists of ``(correct, total)``, paired by seed, differenced exactly."""
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(f"a and b must hold one count per seed each, got {len(a)} and {len(b)}")
    return np.array([float(_share(x) - _share(y)) for x, y in zip(a, b)])


def _median(values) -> tuple[float, float, float]:
    """``(median, lower, upper)`` across seeds: the percentile bootstrap of :func:`rnnmem.stats.bootstrap_median`."""
    return bootstrap_median(values, level=LEVEL, resamples=RESAMPLES, seed=BOOTSTRAP_SEED)


def _interval(values) -> str:
    """Per-seed values as the tables print them: the median across seeds and its 95% interval."""
    median, low, high = _median(values)
    return f"{median:.2f} [{low:.2f}, {high:.2f}]"


def _rate(pairs) -> str:
    """Per-seed accuracies, as the tables print them."""
    return _interval(_shares(pairs))


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _p(p: float) -> str:
    """A p-value as the page prints it: two significant digits, below 0.001 times a power of ten.

    >>> _p(0.0312), _p(0.5), _p(1.0), _p(0.0012), _p(3.24e-6)
    ('p = 0.031', 'p = 0.50', 'p = 1.0', 'p = 0.0012', 'p = 3.2 × 10⁻⁶')
    """
    if not 0.0 < p <= 1.0:
        raise ValueError(f"p must be a probability above 0 and at most 1, got {p!r}")
    if p < 0.001:
        mantissa, exponent = f"{p:.1e}".split("e")
        return f"p = {mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"
    rounded = float(f"{p:.2g}")
    return f"p = {rounded:.{max(1, 1 - math.floor(math.log10(rounded)))}f}"


def _test(differences) -> Wilcoxon:
    """The seed-level test of per-seed differences (or values minus a reference) about zero."""
    return wilcoxon_signed_rank(differences)


def _named(result: Wilcoxon) -> str:
    """The test's ``p`` as the page's sentences give it: the page names the test once, in its method."""
    return _p(result.p)


def _sign(result: Wilcoxon) -> int:
    """+1 where the positive differences outweigh the negative ones, -1 where the negative do, 0 at a tie."""
    half = result.n * (result.n + 1) / 4
    return (result.r_plus > half) - (result.r_plus < half)


def _versus(a, b) -> str:
    """Computed words for how per-seed accuracies ``a`` stand against ``b`` of the same seeds (to follow "is")."""
    d = _differences(a, b)
    result = _test(d)
    if result.p >= ALPHA:
        return f"not detectably different ({_named(result)})"
    side = "higher" if _sign(result) > 0 else "lower"
    return f"{side} ({_named(result)})"


def _by_median(per_seed: dict[str, list[tuple[int, int]]]) -> list[str]:
    """The methods by their median accuracy over seeds, highest first; the mean breaks a tie."""
    acc = {m: _shares(p) for m, p in per_seed.items()}
    return sorted(per_seed, key=lambda m: (-float(np.median(acc[m])), -float(acc[m].mean())))


def _ranking(per_seed: dict[str, list[tuple[int, int]]]) -> tuple[str, str]:
    """Computed words for an order by median accuracy that claims no more than the paired test supports.

    ``per_seed`` maps each method to its ``(correct, total)`` per seed, the same seeds in the same
    order. The methods are put in order, highest median first (the mean breaks a tie), and each is
    tested against its neighbour above it by the signed-rank test on the seeds' paired differences:
    where the test tells the two apart (``p`` below :data:`ALPHA`) a new group starts. Returns the
    order, groups separated by "; then", and a sentence saying what the separators mean, with the
    range of ``p`` on each side of the line.

    >>> strong = [(9, 10)] * 20
    >>> weak = [(6 + s % 3, 10) for s in range(20)]
    >>> order, rule = _ranking({"bag": strong, "untrained": weak, "static": weak[::-1]})
    >>> order
    'the bag of rows; then the untrained network and the static row'
    """
    ranked = _by_median(per_seed)
    groups, apart, level = [[ranked[0]]], [], []
    for above, below in zip(ranked, ranked[1:]):
        p = _test(_differences(per_seed[above], per_seed[below])).p
        if p < ALPHA:
            groups.append([below])
            apart.append(p)
        else:
            groups[-1].append(below)
            level.append(p)
    order = "; then ".join(_join([PLAIN[m] for m in group]) for group in groups)
    seeds = len(next(iter(per_seed.values())))

    def span(ps: list[float]) -> str:
        low, high = _p(min(ps)), _p(max(ps))
        return f"({low})" if low == high else f"({low} to {high.removeprefix('p = ')})"

    parts = []
    if apart:
        parts.append(
            f"a semicolon marks where the {TEST} on the {seeds} seeds' paired accuracies tells a "
            f"representation from the one before it {span(apart)}"
        )
    if level:
        parts.append(f"within a group, each is not detectably different from the one before it {span(level)}")
    rule = "; ".join(parts)
    return order, rule[0].upper() + rule[1:] + "."


def _against(values, reference: float) -> tuple[int, Wilcoxon]:
    """The per-seed ``values`` against a constant: the side they lie on (+1, -1, or 0 for no detectable
    difference) and the test of ``values - reference``."""
    result = _test(np.asarray(values, dtype=np.float64) - reference)
    return (_sign(result) if result.p < ALPHA else 0), result


def _chance_words(pairs) -> str:
    """Computed words for per-seed accuracies against one half, with the test's ``p``."""
    shares = _shares(pairs)
    side, result = _against(shares, 0.5)
    words = {1: "above one half", -1: "below one half", 0: "no detectable difference from one half"}[side]
    return f"{words} ({_named(result)})"


def _seed_losses(runs, step: int, direction: str, side: str) -> np.ndarray:
    """Each seed's mean loss on the noun over its held-out sentences."""
    return np.array([float(np.mean(r.slot[(step, direction, side)])) for r in runs])


def _checkpoint_labels(steps) -> list[str]:
    return [f"{s:,}" for s in steps]


# ---------------------------------------------------------------------- the language models


@figure()
def bilm_loss(seed: NonNegativeInt = 0, seeds: PositiveInt = SEEDS, window: PositiveInt = 100):
    """One seed's minibatch loss at every step, its running mean, the checkpoints, and the uniform guess ln V."""
    runs = _measured(seeds)
    if seed >= len(runs):
        raise ValueError(f"seed must be one of the {len(runs)} seeds trained (0 to {len(runs) - 1}), got {seed}")
    run = runs[seed]
    losses = np.array(run.losses)
    V = len(corpus.vocabulary())
    k = np.arange(1, losses.size + 1)
    fig, ax = new_figure(height=2.9)
    ax.plot(k, losses, color=PALETTE[0], alpha=0.25, linewidth=0.6, label="minibatch loss")
    if window <= losses.size:
        mean = np.convolve(losses, np.ones(window) / window, mode="valid")
        ax.plot(k[window - 1 :], mean, color=PALETTE[0], label=f"mean of the last {window} steps")
    uniform = np.log(V)
    ax.axhline(uniform, color="#777777", linestyle="--", linewidth=1.0)
    ax.annotate(
        f"uniform guess, ln {V} = {uniform:.2f}",
        (losses.size, uniform),
        textcoords="offset points",
        xytext=(-4, 4),
        ha="right",
        va="bottom",
        color="#555555",
    )
    for step in run.checkpoints[1:]:
        ax.axvline(step, color="#bbbbbb", linewidth=0.8, linestyle=":")
    ax.set_xlim(0, losses.size)
    ax.set_ylim(0, uniform * 1.15)
    ax.set_xlabel("Adam step")
    ax.set_ylabel("cross-entropy (nats per token)")
    ax.legend(loc="lower left")
    tail = losses[-window:] if window <= losses.size else losses
    return fig, {
        "seed": seed,
        "steps": int(losses.size),
        "first": float(losses[0]),
        "last_mean": float(np.mean(tail)),
        "window": window,
        "vocabulary": V,
        "uniform": float(uniform),
        "checkpoints": _join(_checkpoint_labels(run.checkpoints[1:])),
        "seeds": len(runs),
        "p_floor": _test(np.arange(1.0, len(runs) + 1)).p,
    }


FLOORS = {"nothing": "knows nothing of the topic", "word": "knows the word, not the sense", "sense": "knows the sense"}


def _slot(runs, step: int, direction: str, side: str) -> tuple[float, float, float]:
    """The median across seeds of the seeds' mean losses on the noun, and its 95% interval."""
    return _median(_seed_losses(runs, step, direction, side))


def _against_floor(values, knowing: str) -> str:
    """Computed words for per-seed mean losses against a floor of :func:`rnnmem.corpus.slot_entropy`, with the test."""
    side, result = _against(values, corpus.slot_entropy(knowing))
    word = {1: "above", -1: "below", 0: "not detectably different from"}[side]
    return f"{word} that floor ({_named(result)})"


def _slot_values(runs) -> dict:
    """What the page reads off the slot: the seeds' losses against the floors and each other, their reading of the sense."""
    steps = runs[0].checkpoints
    last = steps[-1]
    floors = {k: corpus.slot_entropy(k) for k in corpus.KNOWLEDGE}
    own_seeds = {d: _seed_losses(runs, last, d, OWN[d]) for d in OWN}
    other_seeds = {d: _seed_losses(runs, last, d, OTHER[d]) for d in OWN}
    early_seeds = {d: _seed_losses(runs, steps[1], d, OWN[d]) for d in OWN}
    own = {d: _median(own_seeds[d]) for d in OWN}
    other = {d: _median(other_seeds[d]) for d in OWN}
    early = {d: _median(early_seeds[d]) for d in OWN}
    reading = {d: [r.reading[(last, d, OWN[d])] for r in runs] for d in OWN}
    reading_median = {d: _median(_shares(reading[d])) for d in OWN}
    versus, tests = {}, {}
    for d in OWN:
        diff = own_seeds[d] - other_seeds[d]
        result = _test(diff)
        tests[d] = result.p
        named = _named(result)
        if result.p >= ALPHA:
            versus[d] = f"not detectably different from its loss with the cue on the other side ({named})"
        else:
            side = "lower" if _sign(result) < 0 else "higher"
            versus[d] = (
                f"{side} than with the cue on the other side, by {abs(float(np.median(diff))):.2f} nats "
                f"in the median seed ({named})"
            )
    return {
        "seeds": len(runs),
        "last": last,
        "first_trained": steps[1],
        "floor": floors,
        "own": {d: own[d][0] for d in OWN},
        "own_low": {d: own[d][1] for d in OWN},
        "own_high": {d: own[d][2] for d in OWN},
        "own_vs_nothing": {d: _against_floor(own_seeds[d], "nothing") for d in OWN},
        "own_vs_word": {d: _against_floor(own_seeds[d], "word") for d in OWN},
        "own_vs_other": versus,
        "own_vs_other_p": tests,
        "per_seed_own": {d: own_seeds[d].tolist() for d in OWN},
        "per_seed_other": {d: other_seeds[d].tolist() for d in OWN},
        "other": {d: other[d][0] for d in OWN},
        "early": {d: early[d][0] for d in OWN},
        "early_vs_nothing": {d: _against_floor(early_seeds[d], "nothing") for d in OWN},
        "seed_low": float(min(min(v) for v in own_seeds.values())),
        "seed_high": float(max(max(v) for v in own_seeds.values())),
        "reading": {d: reading_median[d][0] for d in OWN},
        "reading_low": {d: reading_median[d][1] for d in OWN},
        "reading_high": {d: reading_median[d][2] for d in OWN},
        "reading_words": {d: _chance_words(reading[d]) for d in OWN},
    }


@figure()
def slot_curves(seeds: PositiveInt = SEEDS):
    """The noun's loss against the training step, cue on the state's own side and on the other, with the floors."""
    runs = _measured(seeds)
    steps = runs[0].checkpoints
    x = np.arange(len(steps))
    fig, axes = new_figure(ncols=2, height=3.6, sharey=True)
    for ax, direction in zip(axes, OWN):
        for side, colour, marker, label in (
            (OWN[direction], PALETTE[0], "o", "cue on its own side (read)"),
            (OTHER[direction], PALETTE[1], "s", "cue on the other side"),
        ):
            mean, low, high = np.array([_slot(runs, s, direction, side) for s in steps[1:]]).T
            ax.errorbar(
                x[1:],
                mean,
                yerr=[mean - low, high - mean],
                color=colour,
                marker=marker,
                markersize=4,
                capsize=2,
                linewidth=1.2,
                label=label,
            )
        for knowing, style in zip(corpus.KNOWLEDGE, ("--", "-.", ":")):
            ax.axhline(corpus.slot_entropy(knowing), color="#777777", linestyle=style, linewidth=0.9)
        ax.set_title(f"{direction} model")
        ax.set_xticks(x[1:], _checkpoint_labels(steps[1:]))
        ax.set_xlim(0.5, len(steps) - 0.5)
    for knowing, y in ((k, corpus.slot_entropy(k)) for k in corpus.KNOWLEDGE):
        axes[1].annotate(
            FLOORS[knowing],
            (len(steps) - 0.55, y),
            textcoords="offset points",
            xytext=(0, 2),
            ha="right",
            va="bottom",
            color="#555555",
            fontsize=7,
        )
    axes[0].set_ylabel("loss on the noun (nats)")
    fig.supxlabel("Adam step (checkpoints of one run per seed)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncols=2)
    return fig, _slot_values(runs)


@table()
def slot_table(seeds: PositiveInt = SEEDS):
    """The noun's loss and the models' own reading of its sense, by checkpoint, direction and side of the cue."""
    runs = _measured(seeds)
    rows = []
    for step in runs[0].checkpoints:
        for direction in OWN:
            for side in (OWN[direction], OTHER[direction]):
                mean, low, high = _slot(runs, step, direction, side)
                reading = [r.reading[(step, direction, side)] for r in runs]
                rows.append(
                    [
                        f"{step:,}",
                        f"{direction} model, cue {side}",
                        "yes" if side == OWN[direction] else "no",
                        f"{mean:.2f} [{low:.2f}, {high:.2f}]",
                        _rate(reading),
                    ]
                )
    n = sum(runs[0].reading[(runs[0].checkpoints[0], "forward", s)][1] for s in corpus.DIRECTIONS)
    floors = ", ".join(f"{corpus.slot_entropy(k):.2f} for a model that {FLOORS[k]}" for k in corpus.KNOWLEDGE)
    table = Table(
        columns=[
            "step",
            "prediction of the noun",
            "has read the cue",
            "loss, nats [95% interval]",
            "cue's sense preferred [95% interval]",
        ],
        rows=rows,
        align=["right", "left", "center", "right", "right"],
        notes=f"Per seed: the mean loss over its held-out sentences (about {n}) and the share in which its "
        f"model prefers the cue's sense; then the median over the {len(runs)} seeds with a 95% percentile "
        f"bootstrap interval. Floors of the loss: {floors}.",
    )
    return table, _slot_values(runs)


# ---------------------------------------------------------------------- probes at the checkpoints


def _step_counts(runs, step, task, direction, side) -> list[tuple[int, int]]:
    """Each seed's ``(correct, total)`` of one probe at one checkpoint, by the side of the cue."""
    return [r.counts[(step, task, direction, side)] for r in runs]


def _steps_values(runs) -> dict:
    """What the page reads off the probes at the checkpoints, per seed and then across seeds."""
    steps = runs[0].checkpoints
    first, last = steps[0], steps[-1]
    c = {
        (s, t, d, side): _step_counts(runs, s, t, d, side)
        for s in steps
        for t in probe.TASKS
        for d in OWN
        for side in corpus.DIRECTIONS
    }

    def acc(key) -> float:
        return _median(_shares(c[key]))[0]

    own = {(s, t, d): c[(s, t, d, OWN[d])] for s in steps for t in probe.TASKS for d in OWN}
    trained = [acc((s, "sense", d, side)) for s in steps[1:] for d in OWN for side in corpus.DIRECTIONS]
    selectivity = {
        (s, d): _median(_differences(own[(s, "sense", d)], own[(s, "control", d)]))[0] for s in steps for d in OWN
    }
    return {
        "seeds": len(runs),
        "alpha": ALPHA,
        "first": first,
        "last": last,
        "untrained_sense": {d: acc((first, "sense", d, OWN[d])) for d in OWN},
        "untrained_control": {d: acc((first, "control", d, OWN[d])) for d in OWN},
        "untrained_selectivity": {d: selectivity[(first, d)] for d in OWN},
        "untrained_versus": {d: _versus(own[(first, "sense", d)], own[(first, "control", d)]) for d in OWN},
        "untrained_other": {d: acc((first, "sense", d, OTHER[d])) for d in OWN},
        "neighbour_untrained": {d: acc((first, "neighbour", d, OWN[d])) for d in OWN},
        "neighbour_untrained_words": {d: _chance_words(own[(first, "neighbour", d)]) for d in OWN},
        "neighbour_last": {d: acc((last, "neighbour", d, OWN[d])) for d in OWN},
        "neighbour_fall": {d: _versus(own[(last, "neighbour", d)], own[(first, "neighbour", d)]) for d in OWN},
        "last_sense": {d: acc((last, "sense", d, OWN[d])) for d in OWN},
        "last_sense_words": {d: _chance_words(own[(last, "sense", d)]) for d in OWN},
        "last_control": {d: acc((last, "control", d, OWN[d])) for d in OWN},
        "last_selectivity": {d: selectivity[(last, d)] for d in OWN},
        "last_versus": {d: _versus(own[(last, "sense", d)], own[(last, "control", d)]) for d in OWN},
        "trained_low": min(trained),
        "trained_high": max(trained),
        "occurrences": min(n for pairs in c.values() for _, n in pairs),
    }


@table()
def probe_steps_table(seeds: PositiveInt = SEEDS):
    """Probe accuracy at each checkpoint, by direction and side: the sense, the control task, selectivity, the cue next to the noun."""
    runs = _measured(seeds)
    rows = []
    for step in runs[0].checkpoints:
        for direction in OWN:
            for side in (OWN[direction], OTHER[direction]):
                sense = _step_counts(runs, step, "sense", direction, side)
                control = _step_counts(runs, step, "control", direction, side)
                near = _step_counts(runs, step, "neighbour", direction, side)
                selectivity = _differences(sense, control)
                p = _test(selectivity).p
                rows.append(
                    [
                        f"{step:,}",
                        f"{direction}, cue {side}",
                        _rate(sense),
                        _rate(control),
                        f"{_median(selectivity)[0]:+.2f} ({_p(p)})",
                        _rate(near),
                    ]
                )
    table = Table(
        columns=[
            "step",
            "state, cue",
            "sense [95% interval]",
            "control task",
            f"selectivity ({TEST}'s p)",
            "cue next to the noun",
        ],
        rows=rows,
        align=["right", "left", "right", "right", "right", "right"],
        notes=f"Per seed: the held-out accuracy on the occurrences of bank, plant and bat; then the median over "
        f"the {len(runs)} seeds with a 95% percentile bootstrap interval. Selectivity is a seed's sense "
        f"accuracy minus its control task's, the median over seeds, tested on the {len(runs)} paired differences.",
    )
    return table, _steps_values(runs)


@figure()
def probe_steps_curves(seeds: PositiveInt = SEEDS):
    """Probe accuracy against the checkpoint, one panel per direction, with chance marked."""
    runs = _measured(seeds)
    steps = runs[0].checkpoints
    x = np.arange(len(steps))
    fig, axes = new_figure(ncols=2, height=3.9, sharey=True)
    lines = (
        ("sense", "own", PALETTE[0], "-", "o", "sense, own side"),
        ("control", "own", PALETTE[3], "--", "^", "control task, own side"),
        ("neighbour", "own", PALETTE[2], "-", "D", "sense, cue next to noun"),
        ("sense", "other", PALETTE[1], ":", "s", "sense, other side"),
    )
    for ax, direction in zip(axes, OWN):
        for task, which, colour, line, marker, label in lines:
            side = OWN[direction] if which == "own" else OTHER[direction]
            acc, low, high = np.array([_median(_shares(_step_counts(runs, s, task, direction, side))) for s in steps]).T
            ax.errorbar(
                x,
                acc,
                yerr=[acc - low, high - acc],
                color=colour,
                linestyle=line,
                marker=marker,
                markersize=4,
                capsize=2,
                linewidth=1.2,
                label=label,
            )
        ax.axhline(0.5, color="#999999", linewidth=0.8)
        ax.set_title(f"{direction} states")
        ax.set_xticks(x, _checkpoint_labels(steps))
        # Half a checkpoint of room at each end: the last label of one panel ("5,000") and the
        # first of the next ("0") stand apart, and the end markers clear the frame.
        ax.set_xlim(-0.5, len(steps) - 0.5)
        ax.set_ylim(0.3, 1.0)
    axes[0].set_ylabel("held-out accuracy")
    fig.supxlabel("Adam step")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncols=2)
    return fig, _steps_values(runs)


# ---------------------------------------------------------------------- every representation, fully trained


def _final(runs) -> list[probe.Comparison]:
    return [r.final for r in runs]


@table()
def probe_table(seeds: PositiveInt = SEEDS):
    """Held-out sense accuracy of a probe on each representation, at the last checkpoint: the median over seeds."""
    runs = _final(_measured(seeds))
    rows = []
    per_seed = {m: [(r.correct[m], r.total) for r in runs] for m in probe.METHODS}
    for method in probe.METHODS:
        acc = _shares(per_seed[method])
        rows.append([NAMES[method], _rate(per_seed[method]), f"{min(acc):.2f}", f"{max(acc):.2f}"])
    chance = [r.chance for r in runs]
    rows.append(["chance (the commoner sense)", _interval(chance), f"{min(chance):.2f}", f"{max(chance):.2f}"])
    total = runs[0].total
    table = Table(
        columns=[
            "representation",
            f"held-out accuracy, median of {len(runs)} seeds [95% interval]",
            "lowest seed",
            "highest seed",
        ],
        rows=rows,
        align=["left", "right", "right", "right"],
        notes=f"{total} held-out occurrences per seed (bank, plant and bat together), "
        "from templates neither the language model nor the probe saw; the interval is the percentile "
        "bootstrap of the median across seeds.",
    )
    share = {m: _median(_shares(per_seed[m]))[0] for m in probe.METHODS}
    order, order_rule = _ranking(per_seed)
    trained = ("forward", "backward", "both", "layer 1", "mixture")
    static = [r.accuracy("static") for r in runs]
    return table, {
        "seeds": len(runs),
        "total": total,
        "median": {_key(m): share[m] for m in probe.METHODS},
        "ranked": order,
        "ranked_rule": order_rule,
        "first": PLAIN[_by_median(per_seed)[0]],
        "static_min": float(min(static)),
        "static_max": float(max(static)),
        "trained_max": max(share[m] for m in trained),
        "trained_min": min(share[m] for m in trained),
        "both_versus_untrained": _versus(per_seed["both"], per_seed["untrained"]),
        "both_versus_untrained_p": _test(_differences(per_seed["both"], per_seed["untrained"])).p,
        "per_seed": {_key(m): per_seed[m] for m in ("both", "untrained")},
        "bag_versus_untrained": _versus(per_seed["bag"], per_seed["untrained"]),
    }


def _cell(runs, method, direction, k) -> list[tuple[int, int]]:
    """Each seed's ``(correct, total)`` with the cue on one side at one distance."""
    return [r.cells[method][(direction, k)] for r in runs]


def _distances(runs) -> list[int]:
    return sorted({k for (_, k) in runs[0].cells["both"]})


@table()
def cue_distance_table(seeds: PositiveInt = SEEDS):
    """Held-out accuracy by the cue's side and distance, for each curve: the median over seeds."""
    runs = _final(_measured(seeds))
    rows = []
    for direction in corpus.DIRECTIONS:
        for k in _distances(runs):
            n = [t for _, t in _cell(runs, "both", direction, k)]
            rows.append(
                [f"{direction}, {k} words", f"{min(n)}–{max(n)}"]
                + [_rate(_cell(runs, m, direction, k)) for m in CURVES]
            )
    table = Table(
        columns=["cue", "occurrences per seed"] + [LABELS[m] for m in CURVES],
        rows=rows,
        align=["left", "right"] + ["right"] * len(CURVES),
        notes=f"Each accuracy is the median over {len(runs)} seeds, with a 95% percentile bootstrap interval.",
    )
    return table, _distance_values(runs)


def _distance_values(runs) -> dict:
    """What the page reads off the distance curves: the bag's step, the untrained decay, the trained states."""
    ks = _distances(runs)
    sides = corpus.DIRECTIONS
    acc = {(m, d, k): _median(_shares(_cell(runs, m, d, k)))[0] for m in CURVES for d in sides for k in ks}
    near = [k for k in ks if k <= WINDOW]
    far = [k for k in ks if k > WINDOW]
    trained = [acc[(m, d, k)] for m in ("forward", "backward", "both") for d in sides for k in ks]
    counts = {(d, k): min(t for _, t in _cell(runs, "both", d, k)) for d in sides for k in ks}
    fewest = min(counts, key=counts.__getitem__)
    nearest_untrained = {d: _cell(runs, "untrained", d, ks[0]) for d in sides}
    farthest_untrained = {d: _cell(runs, "untrained", d, ks[-1]) for d in sides}
    return {
        "seeds": len(runs),
        "window": WINDOW,
        "nearest": ks[0],
        "farthest": ks[-1],
        "bag_near": min(acc[("bag", d, k)] for d in sides for k in near),
        "bag_far_low": min(acc[("bag", d, k)] for d in sides for k in far),
        "bag_far_high": max(acc[("bag", d, k)] for d in sides for k in far),
        "untrained_nearest": {d: acc[("untrained", d, ks[0])] for d in sides},
        "untrained_farthest": {d: acc[("untrained", d, ks[-1])] for d in sides},
        "untrained_decay": {d: _versus(farthest_untrained[d], nearest_untrained[d]) for d in sides},
        "trained_off": max(abs(a - 0.5) for a in trained),
        "fewest": counts[fewest],
        "fewest_at": fewest[1],
    }


@figure()
def cue_distance_curves(seeds: PositiveInt = SEEDS):
    """Held-out accuracy against the cue's distance, one panel per side of the cue, with chance marked."""
    runs = _final(_measured(seeds))
    ks = _distances(runs)
    fig, axes = new_figure(ncols=2, height=4.4, sharey=True)
    styles = {
        "forward": (PALETTE[0], "-", "o"),
        "backward": (PALETTE[1], "-", "s"),
        "both": (PALETTE[2], "-", "^"),
        "untrained": (INK, "--", "x"),
        "bag": ("#777777", ":", "d"),
    }
    for ax, direction in zip(axes, corpus.DIRECTIONS):
        for m in CURVES:
            acc, low, high = np.array([_median(_shares(_cell(runs, m, direction, k))) for k in ks]).T
            colour, line, marker = styles[m]
            ax.errorbar(
                ks,
                acc,
                yerr=[acc - low, high - acc],
                color=colour,
                linestyle=line,
                marker=marker,
                markersize=4,
                capsize=2,
                linewidth=1.2,
                label=LABELS[m],
            )
        ax.axhline(0.5, color="#999999", linewidth=0.8)
        ax.annotate(
            "chance",
            (ks[-1], 0.5),
            textcoords="offset points",
            xytext=(0, -10),
            ha="right",
            color="#666666",
            fontsize=8,
        )
        ax.set_title(f"cue {direction} the word")
        ax.set_xticks(ks)
        ax.set_ylim(0.0, 1.05)
    axes[0].set_ylabel("held-out accuracy")
    fig.supxlabel("distance of the cue (words)")
    fig.legend(*axes[1].get_legend_handles_labels(), loc="outside upper center", ncols=2)
    return fig, _distance_values(runs)


@table()
def mixture_table(seeds: PositiveInt = SEEDS):
    """ELMo's mixture trained through the probe: layer weights and scale per word, mean ± sd over seeds."""
    runs = _final(_measured(seeds))
    rows = []
    for word in corpus.SENSES:
        s = np.array([r.s[word] for r in runs])  # (seed, J)
        g = [r.gamma[word] for r in runs]
        rows.append([f"*{word}*"] + [_spread(s[:, j]) for j in range(s.shape[1])] + [_spread(g)])
    J = len(runs[0].s["bank"])
    table = Table(
        columns=["word"] + [f"\\(s_{j}\\)" for j in range(J)] + ["\\(\\gamma\\)"],
        rows=rows,
        align=["left"] + ["right"] * (J + 1),
    )
    s = np.array([[r.s[word] for r in runs] for word in corpus.SENSES])  # (word, seed, J)
    mean = s.mean(axis=1)  # (word, J)
    return table, {
        "seeds": len(runs),
        "layers": J,
        "s0_max": float(s[:, :, 0].max()),
        "first_on_top": int(sum(np.argmax(m) == 1 for m in mean)),
        "words": len(mean),
    }


def _spread(values) -> str:
    v = np.asarray(values, dtype=np.float64)
    return f"{v.mean():.2f} ± {v.std(ddof=1):.2f}"


@table()
def layer_table(seeds: PositiveInt = SEEDS):
    """The lower layer against the upper layer and the mixture: medians over seeds, and the paired test of the two layers."""
    runs = _final(_measured(seeds))
    lower = [(r.correct["layer 1"], r.total) for r in runs]
    upper = [(r.correct["both"], r.total) for r in runs]
    mixture = [(r.correct["mixture"], r.total) for r in runs]
    difference = _differences(lower, upper)
    p = _test(difference).p
    rows = [
        ["layer 1 (lower)", _rate(lower)],
        ["layer 2 (upper)", _rate(upper)],
        ["ELMo mixture", _rate(mixture)],
        ["lower minus upper, seed by seed", f"{_interval(difference)} ({TEST}, {_p(p)})"],
    ]
    table = Table(
        columns=["held-out sense accuracy", f"median of {len(runs)} seeds [95% interval]"],
        rows=rows,
        align=["left", "right"],
        notes="The layers are probed on the same held-out occurrences of each seed, so they are compared seed by "
        "seed: the test is on the per-seed differences.",
    )
    return table, {
        "seeds": len(runs),
        "lower": _median(_shares(lower))[0],
        "upper": _median(_shares(upper))[0],
        "mixture": _median(_shares(mixture))[0],
        "difference": _median(difference)[0],
        "p": p,
        "per_seed": {"lower": lower, "upper": upper},
        "versus": _versus(lower, upper),
        "lower_words": _chance_words(lower),
        "upper_words": _chance_words(upper),
    }

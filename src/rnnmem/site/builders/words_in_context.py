"""Figures and tables of the chapter "Words in context".

Every builder reads the same measurements: :func:`rnnmem.probe.compare` for
seeds ``0 .. seeds - 1``, with the training recipe :class:`rnnmem.bilm.Recipe`
declared once in the core (the page's snippets use the same one). Each seed's
comparison is computed once per process (:func:`_comparison` keeps it).
"""

from __future__ import annotations

import inspect
from functools import cache

import numpy as np

from rnnmem import bilm, corpus, probe
from rnnmem.checks import NonNegativeInt, PositiveInt

from ..registry import figure, table
from ..style import INK, PALETTE, new_figure
from ..tables import Table

WINDOW = inspect.signature(probe.compare).parameters["window"].default
"""The bag of rows' half-width: the default of :func:`rnnmem.probe.compare`, which the builders use."""

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

CURVES = ("forward", "backward", "both", "untrained", "bag")
LABELS = {
    "forward": "trained, forward",
    "backward": "trained, backward",
    "both": "trained, both joined",
    "untrained": "untrained, both joined",
    "bag": f"bag of rows ±{WINDOW}",
}


@cache
def _comparison(seed: int) -> probe.Comparison:
    """The chapter's comparison for one seed, with the recipe of the core."""
    return probe.compare(seed, bilm.Recipe())


def _comparisons(seeds: int) -> list[probe.Comparison]:
    if seeds < 2:
        raise ValueError(f"seeds must be at least 2 (a spread needs two runs), got {seeds}")
    return [_comparison(s) for s in range(seeds)]


def _key(method: str) -> str:
    """A method's name in a builder's values: ``layer 1`` becomes ``layer1``."""
    return method.replace(" ", "")


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


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _spread(values) -> str:
    v = np.asarray(values, dtype=np.float64)
    return f"{v.mean():.2f} ± {v.std(ddof=1):.2f}"


@table()
def probe_table(seeds: PositiveInt = 10):
    """Held-out sense accuracy of a probe on each representation: mean ± standard deviation over seeds."""
    runs = _comparisons(seeds)
    rows = []
    for method in probe.METHODS:
        acc = [r.accuracy(method) for r in runs]
        rows.append([NAMES[method], _spread(acc), f"{min(acc):.2f}", f"{max(acc):.2f}"])
    chance = [r.chance for r in runs]
    rows.append(["chance (the commoner sense)", _spread(chance), f"{min(chance):.2f}", f"{max(chance):.2f}"])
    total = runs[0].total
    table = Table(
        columns=[
            "representation",
            f"held-out accuracy, mean ± sd over {len(runs)} seeds",
            "lowest seed",
            "highest seed",
        ],
        rows=rows,
        align=["left", "right", "right", "right"],
        notes=f"{total} held-out occurrences per seed (bank, plant and bat together), "
        "from templates neither the language model nor the probe saw.",
    )
    mean = {m: float(np.mean([r.accuracy(m) for r in runs])) for m in probe.METHODS}
    ranked = sorted(probe.METHODS, key=lambda m: -mean[m])
    trained = ("forward", "backward", "both", "layer 1", "mixture")
    static = [r.accuracy("static") for r in runs]
    return table, {
        "seeds": len(runs),
        "total": total,
        "mean": {_key(m): mean[m] for m in probe.METHODS},
        "ranked": _join([PLAIN[m] for m in ranked]),
        "first": PLAIN[ranked[0]],
        "second": PLAIN[ranked[1]],
        "static_min": float(min(static)),
        "static_max": float(max(static)),
        "trained_max": max(mean[m] for m in trained),
        "trained_min": min(mean[m] for m in trained),
        "trained_below_untrained": sum(mean[m] < mean["untrained"] for m in trained),
        "trained_count": len(trained),
    }


def _cell_accuracy(runs, method, direction, k) -> np.ndarray:
    return np.array([r.cells[method][(direction, k)][0] / r.cells[method][(direction, k)][1] for r in runs])


def _distances(runs) -> list[int]:
    return sorted({k for (_, k) in runs[0].cells["both"]})


@table()
def cue_distance_table(seeds: PositiveInt = 10):
    """Held-out accuracy by the cue's side and distance, for each curve: mean ± sd over seeds."""
    runs = _comparisons(seeds)
    rows = []
    for direction in corpus.DIRECTIONS:
        for k in _distances(runs):
            n = int(np.mean([r.cells["both"][(direction, k)][1] for r in runs]))
            rows.append(
                [f"{direction}, {k} words", str(n)] + [_spread(_cell_accuracy(runs, m, direction, k)) for m in CURVES]
            )
    table = Table(
        columns=["cue", "occurrences per seed (mean)"] + [LABELS[m] for m in CURVES],
        rows=rows,
        align=["left", "right"] + ["right"] * len(CURVES),
    )
    return table, _distance_values(runs)


def _distance_values(runs) -> dict:
    """What the page reads off the distance curves: the bag's step, the untrained decay, the trained states."""
    ks = _distances(runs)
    mean = {
        (m, d, k): float(_cell_accuracy(runs, m, d, k).mean()) for m in CURVES for d in corpus.DIRECTIONS for k in ks
    }
    near = [k for k in ks if k <= WINDOW]
    far = [k for k in ks if k > WINDOW]
    both_sides = corpus.DIRECTIONS
    own = {"forward": "before", "backward": "after"}
    trained = [mean[(m, d, k)] for m in ("forward", "backward", "both") for d in both_sides for k in ks]
    own_side = {m: [mean[(m, own[m], k)] for k in near] for m in own}
    counts = {(d, k): int(np.mean([r.cells["both"][(d, k)][1] for r in runs])) for d in both_sides for k in ks}
    fewest = min(counts, key=counts.__getitem__)
    return {
        "seeds": len(runs),
        "window": WINDOW,
        "nearest": ks[0],
        "farthest": ks[-1],
        "bag_near": min(mean[("bag", d, k)] for d in both_sides for k in near),
        "bag_far_low": min(mean[("bag", d, k)] for d in both_sides for k in far),
        "bag_far_high": max(mean[("bag", d, k)] for d in both_sides for k in far),
        "untrained_nearest": {d: mean[("untrained", d, ks[0])] for d in both_sides},
        "untrained_farthest": {d: mean[("untrained", d, ks[-1])] for d in both_sides},
        "trained_off": max(abs(a - 0.5) for a in trained),
        "own_near": {m: max(own_side[m]) for m in own},
        "fewest": counts[fewest],
        "fewest_at": fewest[1],
    }


@figure()
def cue_distance_curves(seeds: PositiveInt = 10):
    """Held-out accuracy against the cue's distance, one panel per side of the cue, with chance marked."""
    runs = _comparisons(seeds)
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
            acc = np.array([_cell_accuracy(runs, m, direction, k) for k in ks])  # (k, seed)
            colour, line, marker = styles[m]
            ax.errorbar(
                ks,
                acc.mean(axis=1),
                yerr=acc.std(axis=1, ddof=1),
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
def mixture_table(seeds: PositiveInt = 10):
    """ELMo's mixture trained through the probe: layer weights and scale per word, and each layer alone."""
    runs = _comparisons(seeds)
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
        "s0_max": float(mean[:, 0].max()),
        "s1": {w: float(m[1]) for w, m in zip(corpus.SENSES, mean)},
        "top_layer": {w: int(np.argmax(m)) for w, m in zip(corpus.SENSES, mean)},
        "first_on_top": int(sum(np.argmax(m) == 1 for m in mean)),
        "words": len(mean),
    }


@table()
def layer_table(seeds: PositiveInt = 10):
    """The lower layer against the upper layer, seed by seed: accuracies and how often each wins."""
    runs = _comparisons(seeds)
    lower = np.array([r.accuracy("layer 1") for r in runs])
    upper = np.array([r.accuracy("both") for r in runs])
    mixture = np.array([r.accuracy("mixture") for r in runs])
    rows = [
        ["layer 1 (lower)", _spread(lower)],
        ["layer 2 (upper)", _spread(upper)],
        ["upper minus lower", _spread(upper - lower)],
        ["ELMo mixture", _spread(mixture)],
        ["seeds where the upper layer scores higher", f"{int((upper > lower).sum())} of {len(runs)}"],
        ["seeds where the lower layer scores higher", f"{int((upper < lower).sum())} of {len(runs)}"],
    ]
    table = Table(
        columns=["held-out sense accuracy", f"mean ± sd over {len(runs)} seeds"], rows=rows, align=["left", "right"]
    )
    return table, {
        "seeds": len(runs),
        "lower_wins": int((upper < lower).sum()),
        "upper_wins": int((upper > lower).sum()),
        "lower_minus_upper": float((lower - upper).mean()),
        "lower": float(lower.mean()),
        "upper": float(upper.mean()),
        "mixture": float(mixture.mean()),
        "off_chance": float(max(abs(lower.mean() - 0.5), abs(upper.mean() - 0.5))),
    }


@table()
def slot_table(seeds: PositiveInt = 10):
    """The language models' loss on the noun, by model direction and side of the cue, against the two floors."""
    runs = _comparisons(seeds)
    rows = []
    for direction in ("forward", "backward"):
        for side in corpus.DIRECTIONS:
            reads = (direction == "forward") == (side == "before")
            rows.append(
                [
                    f"{direction} model, cue {side} the noun",
                    "yes" if reads else "no",
                    _spread([r.slot_loss[(direction, side)] for r in runs]),
                ]
            )
    rows.append(["floor, knowing the cue", "", f"{corpus.slot_entropy(True):.2f}"])
    rows.append(["floor, not knowing it", "", f"{corpus.slot_entropy(False):.2f}"])
    table = Table(
        columns=["prediction of the noun", "has read the cue", f"nats, mean ± sd over {len(runs)} seeds"],
        rows=rows,
        align=["left", "center", "right"],
    )
    loss = {
        (d, side): float(np.mean([r.slot_loss[(d, side)] for r in runs]))
        for d in ("forward", "backward")
        for side in corpus.DIRECTIONS
    }
    lowest = min(min(r.slot_loss.values()) for r in runs)
    own = {"forward": "before", "backward": "after"}
    other = {"forward": "after", "backward": "before"}
    saving = {d: loss[(d, other[d])] - loss[(d, own[d])] for d in own}
    return table, {
        "seeds": len(runs),
        "floor_known": corpus.slot_entropy(True),
        "floor_unknown": corpus.slot_entropy(False),
        "lowest": float(lowest),
        "above_floor": bool(lowest >= corpus.slot_entropy(False) - 0.005),
        "own_saving": saving,
        "largest_saving": max(saving.values()),
        "possible_saving": corpus.slot_entropy(False) - corpus.slot_entropy(True),
    }


@figure()
def bilm_loss(seed: NonNegativeInt = 0, window: PositiveInt = 20):
    """One seed's minibatch loss at every step, its running mean, and the uniform guess ln V."""
    losses = np.array(_comparison(seed).losses)
    V = len(corpus.vocabulary())
    k = np.arange(1, losses.size + 1)
    fig, ax = new_figure(height=2.9)
    ax.plot(k, losses, color=PALETTE[0], alpha=0.35, linewidth=1.0, label="minibatch loss")
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
    ax.set_xlim(0, losses.size)
    ax.set_ylim(0, uniform * 1.15)
    ax.set_xlabel("Adam step")
    ax.set_ylabel("cross-entropy (nats per token)")
    ax.legend(loc="center right")
    tail = losses[-window:] if window <= losses.size else losses
    return fig, {
        "steps": int(losses.size),
        "first": float(losses[0]),
        "last_mean": float(np.mean(tail)),
        "window": window,
        "vocabulary": V,
        "uniform": float(uniform),
    }

"""Figures and tables of the chapter "Real text: a character-level model".

Two kinds of run, both from the core: the language model of
:mod:`rnnmem.charlm` (:class:`rnnmem.charlm.TextRun`, the recipe
:data:`rnnmem.charlm.RECIPE`) trained on the standard library's source, and
the cells of the planted-dependency experiment of :mod:`rnnmem.planted`
(:data:`rnnmem.planted.GRID`, then :data:`rnnmem.planted.FOLLOW_UP`). Each
run's ``repr`` holds the digest of the corpus it reads, so another
interpreter's sources make other runs. They are trained once per build, costliest first, and kept on disk, by
:func:`rnnmem.site.labruns.runs`.

The page's numbers that depend on the corpus (every perplexity, sample and
count) come from here, through placeholders; its snippets show the mechanics
on a small text of their own. Every sentence about the experiment's outcome
that could read otherwise on another corpus is written here, from the
counts, by :func:`rnnmem.verdicts.compare`: a difference only where Fisher's
exact test gives :math:`p <` :data:`rnnmem.verdicts.ALPHA`, no verdict at a
floor or a ceiling, and a null with its power.
"""

from __future__ import annotations

import math
import platform
from collections.abc import Sequence

import numpy as np

from rnnmem import charlm, planted, stats, verdicts
from rnnmem.checks import NonNegativeInt, Positive, PositiveInt

from ..arithmetic import arithmetic
from ..labruns import runs
from ..registry import figure, table
from ..style import INK, PALETTE, new_figure
from ..tables import Table

CHANCE = 0.1
"""The recall accuracy of a model that does not read the clue: one digit in ten, drawn uniformly."""

CONTRASTS = {1: (1, 2), 2: (2, 32), 4: (2, 8), 16: (8, 32)}
"""For each distance, the two truncations the page compares: the longest that credits no pair against a
longer one that credits some."""

SAMPLE_CHARS = 2000
"""The length of the samples the word counts are read from (the figures show their first lines)."""

LINES, COLUMNS = 6, 48
"""How much of a sample a figure's box shows: lines, and characters per line."""

NAMES = ("def", "return", "self", "if", "else", "for", "in", "not", "None", "import", "class")
"""Words of Python source whose appearance in a sample the page reports."""


# ---------------------------------------------------------------------------- runs


def _lm() -> charlm.RunResult:
    """The chapter's language model, trained with the core's recipe (kept on disk)."""
    (result,) = runs([charlm.TextRun()])
    return result


def _cells() -> dict[tuple[int, int], planted.CellResult]:
    """Every cell of the experiment, the grid and the follow-up, by (truncation, distance)."""
    keys = list(planted.GRID) + list(planted.FOLLOW_UP)
    return dict(zip(keys, runs([planted.Cell(k, d) for k, d in keys])))


def _corpus() -> charlm.Corpus:
    return charlm.stdlib_corpus()


def _baselines(corpus: charlm.Corpus) -> dict[str, float]:
    """Validation nats per character of the uniform guess and the add-one unigram and bigram counts."""
    train, valid = charlm.encode(corpus.train), charlm.encode(corpus.valid)
    return {name: charlm.ngram_nats(train, valid, order) for order, name in enumerate(("uniform", "unigram", "bigram"))}


def _check_steps(name: str, steps: Sequence[int], result: charlm.RunResult) -> list[int]:
    for k, s in enumerate(steps):
        if s not in result.checkpoints:
            raise ValueError(f"{name}[{k}] must be one of the run's checkpoints {list(result.checkpoints)}, got {s!r}")
    return list(steps)


# ---------------------------------------------------------------------------- the language model


@table()
def real_text_perplexity():
    """The validation perplexity of the baselines and of the trained network, with the corpus they read.

    Values: ``uniform``, ``unigram``, ``bigram``, ``rnn`` (perplexities) and
    ``nats`` (the same as nats per character); ``updates``; ``chars`` and
    ``unknown`` (symbols of the training and validation text, and those read
    as the unknown symbol); ``modules`` (how many files each); ``digest``
    and ``python``, the corpus's digest and the interpreter's version;
    ``ratio_bigram``, the bigram's perplexity over the network's.
    """
    corpus, result = _corpus(), _lm()
    nats = _baselines(corpus)
    final = result.checkpoints[-1]
    nats["rnn"] = result.valid_nats[-1]
    ppl = {k: math.exp(v) for k, v in nats.items()}
    names = {
        "uniform": "uniform guess, \\(1/V\\)",
        "unigram": "unigram counts, add-one",
        "bigram": "bigram counts, add-one",
        "rnn": f"tanh RNN, {final:,} updates",
    }
    rows = [[names[k], f"{nats[k]:.3f}", f"{nats[k] / math.log(2):.2f}", f"{ppl[k]:.2f}"] for k in names]
    tab = Table(
        ["model", "nats per character", "bits per character", "perplexity"],
        rows,
        align=["left", "right", "right", "right"],
        notes=(
            f"Validation text: {corpus.valid_modules[0]} to {corpus.valid_modules[-1]}, "
            f"{len(corpus.valid_modules)} files of Python {platform.python_version()}'s standard library, "
            f"{result.chars['valid']:,} characters; the counts and the network read "
            f"{len(corpus.train_modules)} other files, {result.chars['train']:,} characters."
        ),
    )
    return tab, {
        **ppl,
        "nats": nats,
        "updates": final,
        "chars": result.chars,
        "unknown": result.unknown,
        "modules": {"train": len(corpus.train_modules), "valid": len(corpus.valid_modules)},
        "digest": result.digest,
        "python": platform.python_version(),
        "ratio_bigram": ppl["bigram"] / ppl["rnn"],
        "arithmetic": arithmetic(),
    }


@figure()
def real_text_curve(window: PositiveInt = 25):
    """Validation perplexity at the checkpoints, and the training windows' perplexity, against updates.

    The training curve is :math:`\\exp` of the mean loss over the last
    ``window`` updates. Values: ``checkpoints``, ``perplexity`` (validation,
    at each), ``first`` and ``last``; ``uniform``, ``unigram``, ``bigram``;
    ``below_unigram`` and ``below_bigram``, the first checkpoint whose
    perplexity is below that baseline (``None``: none); ``train_last``, the
    training curve's last value; ``window``; ``updates``, the last checkpoint.
    """
    corpus, result = _corpus(), _lm()
    base = {k: math.exp(v) for k, v in _baselines(corpus).items()}
    steps = np.array(result.checkpoints)
    ppl = np.exp(np.array(result.valid_nats))
    losses = np.array(result.train_losses)
    if window > losses.size:
        raise ValueError(f"window must be at most the run's {losses.size} updates, got {window}")
    smooth = np.exp(np.convolve(losses, np.ones(window) / window, mode="valid"))
    fig, ax = new_figure(height=3.0)
    ax.semilogy(np.arange(window, losses.size + 1), smooth, color=PALETTE[1], linewidth=1.2, label="training windows")
    ax.semilogy(steps, ppl, "o-", color=PALETTE[0], markersize=4, label="validation text")
    for (name, value), style in zip(base.items(), (":", "--", "-.")):
        ax.axhline(value, color=INK, linestyle=style, linewidth=0.9)
        ax.annotate(
            name, (steps[-1] * 0.3, value), xytext=(0, 2), textcoords="offset points", ha="left", va="bottom", color=INK
        )
    ax.set_xlim(0, steps[-1])
    ax.set_xlabel("updates")
    ax.set_ylabel("perplexity")
    ax.legend(loc="upper right", bbox_to_anchor=(1.0, 0.9))

    def first_below(level: float) -> int | None:
        below = [int(s) for s, p in zip(steps, ppl) if p < level]
        return below[0] if below else None

    return fig, {
        "checkpoints": [int(s) for s in steps],
        "perplexity": {int(s): float(p) for s, p in zip(steps, ppl)},
        "first": float(ppl[0]),
        "last": float(ppl[-1]),
        **base,
        "below_unigram": first_below(base["unigram"]),
        "below_bigram": first_below(base["bigram"]),
        "train_last": float(smooth[-1]),
        "window": window,
        "updates": int(steps[-1]),
    }


def _box(ax, title: str, text: str) -> None:
    """One sample in a box: a title line, then at most LINES lines of COLUMNS characters (longer ones cut with …)."""
    lines = text.split("\n")[:LINES]
    shown = [line if len(line) <= COLUMNS else line[: COLUMNS - 1] + "…" for line in lines]
    ax.set_axis_off()
    ax.text(0.0, 1.0, title, transform=ax.transAxes, va="top", ha="left", color=INK, parse_math=False)
    ax.text(
        0.0,
        0.80,
        "\n".join(shown),
        transform=ax.transAxes,
        va="top",
        ha="left",
        family="DejaVu Sans Mono",
        color=INK,
        linespacing=1.15,
        parse_math=False,
        bbox={"boxstyle": "square,pad=0.4", "facecolor": "none", "edgecolor": "#b0b0b0", "linewidth": 0.8},
    )


def _samples_figure(titles: list[str], texts: list[str]):
    fig, axes = new_figure(nrows=len(texts), height=1.45 * len(texts))
    for ax, title, text in zip(np.atleast_1d(axes), titles, texts):
        _box(ax, title, text)
    return fig


@figure()
def real_text_samples(
    steps: Sequence[NonNegativeInt] = (0, 100, 300, 1000),
    temperature: Positive = 1.0,
    prompt: str = "\n",
    seed: NonNegativeInt = 0,
):
    """Text sampled from the model at several checkpoints, each after the same ``prompt`` with the same ``seed``.

    Each box shows the first lines of a sample; the counts are read from
    :data:`SAMPLE_CHARS` characters. Values: ``steps``; ``perplexity``,
    ``known`` (the share of the sample's words of three letters or more
    that occur in the training text, :func:`rnnmem.charlm.known_share`) and
    ``distinct`` (symbols used), each by step; ``known_unigram`` and
    ``known_bigram``, the same share for samples of the counts;
    ``indented`` (the share of a sample's non-blank lines that start with a
    space) and ``names`` (which of :data:`NAMES` it writes, in words), by
    step; ``samples``, the shown text by step; ``temperature``, ``chars``.
    """
    corpus, result = _corpus(), _lm()
    steps = _check_steps("steps", steps, result)
    train = charlm.encode(corpus.train)
    texts, known, distinct, ppl, indented, names = {}, {}, {}, {}, {}, {}
    for s in steps:
        text = charlm.sample(result.model(s), prompt, SAMPLE_CHARS, temperature=temperature, seed=seed)
        texts[s], known[s], distinct[s] = text, charlm.known_share(text, corpus.train), len(set(text))
        ppl[s] = result.perplexity(s)
        lines = [line for line in text.split("\n") if line.strip()]
        indented[s] = sum(line.startswith(" ") for line in lines) / len(lines) if lines else 0.0
        found = set(charlm.words(text))
        names[s] = _join([f"`{w}`" for w in NAMES if w in found], empty="none of them")
    controls = {
        name: charlm.known_share(
            charlm.ngram_sample(train, order, SAMPLE_CHARS, prompt=prompt, seed=seed), corpus.train
        )
        for order, name in ((1, "unigram"), (2, "bigram"))
    }
    titles = [f"after {s:,} updates · validation perplexity {ppl[s]:.1f}" for s in steps]
    fig = _samples_figure(titles, [texts[s] for s in steps])
    return fig, {
        "steps": steps,
        "perplexity": ppl,
        "known": known,
        "distinct": distinct,
        "known_unigram": controls["unigram"],
        "known_bigram": controls["bigram"],
        "indented": indented,
        "names": names,
        "samples": {s: "\n".join(texts[s].split("\n")[:LINES]) for s in steps},
        "temperature": temperature,
        "chars": SAMPLE_CHARS,
    }


@figure()
def real_text_temperature(
    temperatures: Sequence[Positive] = (0.5, 1.0, 1.5),
    prompt: str = "\n",
    seed: NonNegativeInt = 0,
):
    """Text sampled from the trained model at several temperatures, after the same prompt with the same seed.

    Values: ``temperatures``; by temperature, ``distinct`` (symbols used in
    :data:`SAMPLE_CHARS` characters), ``known`` (as in
    :func:`real_text_samples`) and ``perplexity``, the validation text's
    perplexity under the tempered distributions
    (:meth:`rnnmem.charlm.CharRNN.nats`); ``best``, the temperature whose
    perplexity is lowest; ``updates``.
    """
    corpus, result = _corpus(), _lm()
    final = result.checkpoints[-1]
    model = result.model(final)
    valid = charlm.encode(corpus.valid)
    texts, known, distinct, ppl = {}, {}, {}, {}
    for tau in temperatures:
        text = charlm.sample(model, prompt, SAMPLE_CHARS, temperature=tau, seed=seed)
        texts[tau], known[tau], distinct[tau] = text, charlm.known_share(text, corpus.train), len(set(text))
        ppl[tau] = math.exp(float(model.nats(valid, temperature=tau)[0]))
    titles = [f"temperature {tau:g} · validation perplexity {ppl[tau]:.1f}" for tau in temperatures]
    fig = _samples_figure(titles, [texts[tau] for tau in temperatures])
    return fig, {
        "temperatures": list(temperatures),
        "distinct": distinct,
        "known": known,
        "perplexity": ppl,
        "best": min(temperatures, key=lambda t: ppl[t]),
        "updates": final,
    }


# ---------------------------------------------------------------------------- truncation


def _above_chance(result: planted.CellResult) -> int:
    """The members whose recall accuracy's 95% Wilson interval lies wholly above :data:`CHANCE`."""
    hits = [round(a * result.recalls) for a in result.accuracy]
    return sum(stats.wilson(h, result.recalls)[0] > CHANCE for h in hits)


def _contrast(cells: dict, distance: int) -> dict:
    """The two truncations :data:`CONTRASTS` names at ``distance``, compared by :func:`rnnmem.verdicts.compare`."""
    short, long = CONTRASTS[distance]
    a, b = cells[(short, distance)], cells[(long, distance)]
    v = verdicts.compare(a.successes, a.n, b.successes, b.n)
    p = verdicts.p_text(v.p)
    sentence = (
        f"under truncation {short}, {a.successes} of {a.n} seeds succeeded, and under truncation {long}, "
        f"{b.successes}: truncation {short} shows {v.phrase} truncation {long} "
        f"(*p* = {p}, Fisher's exact test"
        + (f"; power {v.power:.2f} to detect a difference of {v.effect:g})" if v.kind == "null" else ")")
    )
    return {
        "sentence": sentence,
        "short": short,
        "long": long,
        "a": a.successes,
        "b": b.successes,
        "n": a.n,
        "p": p,
        "p_eq": f"*p* = {p}",
        "differ": v.differ,
        "phrase": v.phrase,
        "verdict": v.verdict,
    }


def _carry_sentence(result: planted.CellResult) -> str:
    """How many seeds of the cell of truncation 1 read the clue better than chance, in words."""
    above = _above_chance(result)
    median = float(np.median(result.accuracy))
    if above == 0:
        return (
            f"none of the {result.n} seeds trained so at distance 1 read the clue better than chance "
            f"(median recall accuracy {median:.2f})"
        )
    return (
        f"{above} of the {result.n} seeds trained so at distance 1 read the clue better than chance: the 95% "
        f"interval of their recall accuracy lies above {CHANCE:g} (median over the seeds {median:.2f})"
    )


def _join(words: list[str], empty: str = "none") -> str:
    """``a``, ``a and b``, ``a, b and c``; ``empty`` for no words."""
    if not words:
        return empty
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _longest(cells: dict) -> dict[int, int | None]:
    """For each truncation trained, the longest distance that at least :data:`LEARNED_RATE <rnnmem.planted.LEARNED_RATE>`
    of its seeds learned (``None``: none)."""
    out: dict[int, int | None] = {}
    for k in sorted({k for k, _ in cells}):
        learned = [d for (kk, d), r in cells.items() if kk == k and r.successes >= planted.LEARNED_RATE * r.n]
        out[k] = max(learned) if learned else None
    return out


def _longest_sentence(longest: dict[int, int | None]) -> str:
    """ "under truncation 1 no distance was learned; under 2, 8 and 32 the longest learned was 1" (grouped)."""
    groups: dict[int | None, list[int]] = {}
    for k, d in longest.items():
        groups.setdefault(d, []).append(k)
    parts = []
    for d, ks in groups.items():
        names = _join([str(k) for k in ks])
        where = f"under truncation {names}" if len(ks) == 1 else f"under truncations {names}"
        parts.append(
            f"{where} no distance was learned" if d is None else f"{where} the longest distance learned was {d}"
        )
    return "; ".join(parts)


@table()
def real_text_truncation():
    """Success counts of the planted-dependency experiment, by truncation and distance, with the follow-up cells.

    Values: ``cells``, keyed ``"k,d"``, each with ``successes``, ``n``,
    ``low`` and ``high`` (95% Wilson interval of the success rate),
    ``credited`` (the share of pairs whose gradient reaches the clue),
    ``median``, ``lowest`` and ``highest`` (members' recall accuracy),
    ``above`` (members reading the clue above chance) and ``follow_up``;
    ``longest`` (by truncation), ``longest_sentence``; ``tests`` by
    distance (:data:`CONTRASTS`); ``seeds``, ``updates``, ``threshold``,
    ``chance``, ``recalls`` (by distance).
    """
    cells = _cells()
    order = sorted(cells)
    rows, values = [], {}
    for k, d in order:
        r = cells[(k, d)]
        low, high = stats.wilson(r.successes, r.n)
        acc = np.array(r.accuracy)
        credited = planted.credited_share(k, d)
        follow = (k, d) in planted.FOLLOW_UP
        above = _above_chance(r)
        rows.append(
            [
                f"{k}" + (" †" if follow else ""),
                f"{d}",
                f"{credited:.2f}",
                f"{r.successes} [{low:.2f}, {high:.2f}]",
                f"{np.median(acc):.2f} [{acc.min():.2f}, {acc.max():.2f}]",
                f"{above}",
            ]
        )
        values[f"{k},{d}"] = {
            "successes": r.successes,
            "n": r.n,
            "low": low,
            "high": high,
            "credited": credited,
            "median": float(np.median(acc)),
            "lowest": float(acc.min()),
            "highest": float(acc.max()),
            "above": above,
            "follow_up": follow,
        }
    design = planted.DESIGN
    n = cells[order[0]].n
    tab = Table(
        [
            "truncation \\(k\\)",
            "distance \\(n\\)",
            "pairs credited",
            f"successes of {n} [95% interval]",
            "recall accuracy, median [range]",
            "above chance",
        ],
        rows,
        align=["right"] * 6,
        notes=(
            f"Each cell: {n} seeds, {design.updates} updates; a seed succeeds at a held-out recall accuracy of "
            f'{design.threshold:g} or more; "above chance" counts seeds whose accuracy\'s 95% Wilson interval lies '
            f"above {CHANCE:g}. † added after the other cells had been read."
        ),
    )
    longest = _longest(cells)
    return tab, {
        "cells": values,
        "longest": longest,
        "longest_sentence": _longest_sentence(longest),
        "tests": {d: _contrast(cells, d) for d in CONTRASTS},
        "seeds": n,
        "updates": design.updates,
        "threshold": design.threshold,
        "chance": CHANCE,
        "recalls": {d: cells[(k, d)].recalls for k, d in order},
        "carry": _carry_sentence(cells[(1, 1)]) if (1, 1) in cells else "",
        "arithmetic": arithmetic(),
    }

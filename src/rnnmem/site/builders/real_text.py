"""Figures and tables of the chapter "Real text: a character-level model".

The language model of
:mod:`rnnmem.charlm` (:class:`rnnmem.charlm.TextRun`, the recipe
:data:`rnnmem.charlm.RECIPE`) trained on the standard library's source. Its
run's ``repr`` holds the digest of the corpus it reads, so another
interpreter's sources make other runs. It is trained once per build and kept on disk, by
:func:`rnnmem.site.labruns.runs`. The planted-dependency experiment's table is
:mod:`rnnmem.site.builders.real_text_truncation`'s.

The page's numbers that depend on the corpus (every perplexity, sample and
count) come from here, through placeholders; its snippets show the mechanics
on a small text of their own.
"""

from __future__ import annotations

import math
import platform
from collections.abc import Sequence

import numpy as np

from rnnmem import charlm
from rnnmem.checks import NonNegativeInt, Positive, PositiveInt

from .. import textsamples
from ..arithmetic import arithmetic
from ..registry import figure, table
from ..style import INK, PALETTE, new_figure
from ..tables import Table
from ..textsamples import LINES, SAMPLE_CHARS

NAMES = ("def", "return", "self", "if", "else", "for", "in", "not", "None", "import", "class")
"""Words of Python source whose appearance in a sample the page reports."""


# ---------------------------------------------------------------------------- runs


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
    corpus, result = textsamples.corpus(), textsamples.lm()
    nats = textsamples.baselines(corpus)
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
    corpus, result = textsamples.corpus(), textsamples.lm()
    base = {k: math.exp(v) for k, v in textsamples.baselines(corpus).items()}
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
    corpus, result = textsamples.corpus(), textsamples.lm()
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
        names[s] = textsamples.join([f"`{w}`" for w in NAMES if w in found], empty="none of them")
    controls = {
        name: charlm.known_share(
            charlm.ngram_sample(train, order, SAMPLE_CHARS, prompt=prompt, seed=seed), corpus.train
        )
        for order, name in ((1, "unigram"), (2, "bigram"))
    }
    titles = [f"after {s:,} updates · validation perplexity {ppl[s]:.1f}" for s in steps]
    fig = textsamples.samples_figure(titles, [texts[s] for s in steps])
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
    corpus, result = textsamples.corpus(), textsamples.lm()
    final = result.checkpoints[-1]
    model = result.model(final)
    valid = charlm.encode(corpus.valid)
    texts, known, distinct, ppl = {}, {}, {}, {}
    for tau in temperatures:
        text = charlm.sample(model, prompt, SAMPLE_CHARS, temperature=tau, seed=seed)
        texts[tau], known[tau], distinct[tau] = text, charlm.known_share(text, corpus.train), len(set(text))
        ppl[tau] = math.exp(float(model.nats(valid, temperature=tau)[0]))
    titles = [f"temperature {tau:g} · validation perplexity {ppl[tau]:.1f}" for tau in temperatures]
    fig = textsamples.samples_figure(titles, [texts[tau] for tau in temperatures])
    return fig, {
        "temperatures": list(temperatures),
        "distinct": distinct,
        "known": known,
        "perplexity": ppl,
        "best": min(temperatures, key=lambda t: ppl[t]),
        "updates": final,
    }

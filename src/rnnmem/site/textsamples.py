"""The real-text chapter's shared pieces: its corpus, its language model's run, the Kneser-Ney model chosen for it,
and samples of text drawn as boxes.

Several builders of the chapter read the same corpus and the same run (:mod:`rnnmem.charlm`), and time the
networks against the same counting model (:mod:`rnnmem.ngram`); a builder never imports another, so these
live here. Each is computed once per process (the run through :func:`rnnmem.site.labruns.runs`, cached on disk).

A sample is text, and its figure keeps it as text: :func:`samples_figure` labels the figure
:data:`rnnmem.site.style.TEXT_FIGURE`, which writes its characters as SVG ``<text>`` rather than as glyph
outlines, a tenth of the bytes.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from rnnmem import charlm, ngram

from .labruns import runs
from .style import INK, TEXT_FIGURE, new_figure

__all__ = [
    "SAMPLE_CHARS",
    "LINES",
    "COLUMNS",
    "corpus",
    "lm",
    "baselines",
    "kneser_ney",
    "kneser_ney_perplexity",
    "join",
    "samples_figure",
]

SAMPLE_CHARS = 2000
"""The length of the samples the word counts are read from (the figures show their first lines)."""

LINES, COLUMNS = 6, 48
"""How much of a sample a figure's box shows: lines, and characters per line."""


def corpus() -> charlm.Corpus:
    """The chapter's corpus: the standard library's source of the interpreter that builds the site."""
    return charlm.stdlib_corpus()


def lm() -> charlm.RunResult:
    """The chapter's language model, trained with the core's recipe (kept on disk)."""
    (result,) = runs([charlm.TextRun()])
    return result


def baselines(text: charlm.Corpus) -> dict[str, float]:
    """Validation nats per character of the uniform guess and the add-one unigram and bigram counts of ``text``."""
    train, valid = charlm.encode(text.train), charlm.encode(text.valid)
    return {name: charlm.ngram_nats(train, valid, order) for order, name in enumerate(("uniform", "unigram", "bigram"))}


@functools.cache
def _fitted(digest: str) -> ngram.OrderChoice:
    text = corpus()
    if text.digest != digest:
        raise ValueError(f"digest must be the corpus's {text.digest}, got {digest!r}")
    return ngram.choose_order(charlm.encode(text.train))


def kneser_ney() -> ngram.OrderChoice:
    """The order chosen on the training text's held-out tail, and that order refitted on all of it
    (:func:`rnnmem.ngram.choose_order`), once per corpus."""
    return _fitted(corpus().digest)


def kneser_ney_perplexity(text: charlm.Corpus) -> float:
    """The validation perplexity of :func:`kneser_ney`'s model: the reference the networks are timed against."""
    if text.digest != corpus().digest:
        raise ValueError(f"text must be the chapter's corpus (digest {corpus().digest}), got digest {text.digest!r}")
    return math.exp(kneser_ney().model.nats(charlm.encode(text.valid)))


def join(words: list[str], empty: str = "none") -> str:
    """``a``, ``a and b``, ``a, b and c``; ``empty`` for no words.

    >>> join(["a", "b", "c"]), join([])
    ('a, b and c', 'none')
    """
    if not words:
        return empty
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


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


def samples_figure(titles: list[str], texts: list[str]):
    """One box per sample, under its title, top to bottom; the figure keeps its characters as text."""
    if len(titles) != len(texts) or not texts:
        raise ValueError(f"titles and texts must pair up, one or more each, got {len(titles)} and {len(texts)}")
    fig, axes = new_figure(nrows=len(texts), height=1.45 * len(texts))
    fig.set_label(TEXT_FIGURE)
    for ax, title, text in zip(np.atleast_1d(axes), titles, texts):
        _box(ax, title, text)
    return fig

"""Figures and tables of the chapter "Words in context".

Every builder trains the chapter's bidirectional language model with the
recipe its arguments give (the page's snippets use the same one), once per
process: :func:`_trained` keeps the result.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from rnnmem import bilm, corpus, train
from rnnmem.checks import check_choice, check_list, check_nonnegative_int, check_positive, check_positive_int

from ..registry import figure, table
from ..style import INK, PALETTE, new_figure
from ..tables import Table

WORDS = tuple(corpus.SENSES)
MARKERS = ("o", "s")


def _recipe(sentences, dim, steps, batch_size, lr, seed) -> tuple:
    return (check_positive_int("sentences", sentences), check_positive_int("dim", dim),
            check_positive_int("steps", steps), check_positive_int("batch_size", batch_size),
            float(check_positive("lr", lr)), check_nonnegative_int("seed", seed))


@lru_cache(maxsize=4)
def _trained(sentences: int, dim: int, steps: int, batch_size: int, lr: float, seed: int):
    """The chapter's corpus, vocabulary, trained model and training history for one recipe."""
    data = corpus.make_corpus(sentences, seed=seed)
    vocab = corpus.Vocabulary(data)
    sequences = [vocab.encode(s) for s in data]
    model = bilm.BiLM(len(vocab), dim=dim, seed=seed)
    history = train.fit(model.parameters(), model.loss_and_grads, sequences, steps=steps,
                        batch_size=batch_size, lr=lr, max_norm=1.0, seed=seed)
    return data, vocab, model, history


def _context(s: corpus.Sentence) -> tuple:
    """Sort key: the words after the ambiguous word, then those before it."""
    return s.tokens[s.position + 1:], s.tokens[:s.position]


def _occurrences(word: str, recipe: tuple):
    """The occurrences of ``word`` (sense by sense), their senses and their layers ``(L+1, N, 2 dim)``."""
    data, vocab, model, _ = _trained(*recipe)
    groups = corpus.occurrences(data, word)
    occ = [s for g in groups.values() for s in sorted(g, key=_context)]   # like contexts side by side
    layers = model.layers_at([vocab.encode(s) for s in occ], [s.position for s in occ])
    return model, [s.sense for s in occ], layers


def _views(model, layers) -> dict:
    """The representations the chapter compares, each ``(N, F)``."""
    D = model.dim
    return {
        "static row \\(E_w\\)": layers[0, :, :D],
        "forward state \\(\\overrightarrow{h}_t\\)": layers[1, :, :D],
        "backward state \\(\\overleftarrow{h}_t\\)": layers[1, :, D:],
        "layer 1 \\([\\overrightarrow{h}_t; \\overleftarrow{h}_t]\\)": layers[1],
        "mixture, \\(a = 0\\), \\(\\gamma = 1\\)": bilm.scalar_mix(layers),
    }


def _word(word):
    return check_choice("word", word, WORDS)


@figure()
def bilm_loss(sentences=300, dim=16, steps=300, batch_size=16, lr=0.02, seed=0, window=20):
    """The minibatch loss at every step, its running mean, and the uniform guess ln V."""
    recipe = _recipe(sentences, dim, steps, batch_size, lr, seed)
    window = check_positive_int("window", window)
    _, vocab, _, history = _trained(*recipe)
    losses = np.array(history.losses)
    k = np.arange(1, losses.size + 1)
    fig, ax = new_figure(figsize=(6.4, 2.9))
    ax.plot(k, losses, color=PALETTE[0], alpha=0.35, linewidth=1.0, label="minibatch loss")
    if window <= losses.size:
        mean = np.convolve(losses, np.ones(window) / window, mode="valid")
        ax.plot(k[window - 1:], mean, color=PALETTE[0], label=f"mean of the last {window} steps")
    uniform = np.log(len(vocab))
    ax.axhline(uniform, color="#777777", linestyle="--", linewidth=1.0)
    ax.annotate(f"uniform guess, ln {len(vocab)} = {uniform:.3f}", (losses.size, uniform), textcoords="offset points",
                xytext=(-4, 4), ha="right", va="bottom", color="#555555")
    ax.set_xlim(0, losses.size)
    ax.set_ylim(0, uniform * 1.15)
    ax.set_xlabel("Adam step")
    ax.set_ylabel("cross-entropy (nats per token)")
    ax.legend(loc="center right")
    return fig


@table()
def sense_similarity(word="train", sentences=300, dim=16, steps=300, batch_size=16, lr=0.02, seed=0):
    """Mean cosine between occurrences of one word, within each sense and across, per representation."""
    word = _word(word)
    model, senses, layers = _occurrences(word, _recipe(sentences, dim, steps, batch_size, lr, seed))
    a, b = corpus.SENSES[word]
    rows = []
    for name, vectors in _views(model, layers).items():
        sim = bilm.mean_cosines(vectors, senses)
        rows.append([name, f"{sim[f'within {a}']:.2f}", f"{sim[f'within {b}']:.2f}", f"{sim['across']:.2f}"])
    counts = {s: senses.count(s) for s in (a, b)}
    return Table(columns=["representation of *" + word + "*", f"within *{a}* ({counts[a]})",
                          f"within *{b}* ({counts[b]})", "across senses"],
                 rows=rows, align=["left", "right", "right", "right"])


def _words(words) -> list[str]:
    return check_list("words", words, lambda name, w: check_choice(name, w, WORDS),
                      f"the words {', '.join(WORDS)}")


@table()
def sense_summary(words=WORDS, sentences=300, dim=16, steps=300, batch_size=16, lr=0.02, seed=0):
    """For each ambiguous word: layer 1's mean cosine within each sense and across."""
    words = _words(words)
    recipe = _recipe(sentences, dim, steps, batch_size, lr, seed)
    rows = []
    for word in words:
        _, senses, layers = _occurrences(word, recipe)
        a, b = corpus.SENSES[word]
        sim = bilm.mean_cosines(layers[1], senses)
        rows.append([f"*{word}*", f"{a} ({senses.count(a)}), {b} ({senses.count(b)})",
                     f"{sim[f'within {a}']:.2f}", f"{sim[f'within {b}']:.2f}", f"{sim['across']:.2f}"])
    return Table(columns=["word", "senses (occurrences)", "within first", "within second", "across"],
                 rows=rows, align=["left", "left", "right", "right", "right"])


def _blues():
    from matplotlib.colors import LinearSegmentedColormap

    return LinearSegmentedColormap.from_list("rnnmem-blues", ["#ffffff", PALETTE[0], "#0b2d4d"])


@figure()
def sense_heatmap(word="train", sentences=300, dim=16, steps=300, batch_size=16, lr=0.02, seed=0):
    """Cosine similarity between every pair of occurrences: static rows against LSTM layer 1."""
    word = _word(word)
    model, senses, layers = _occurrences(word, _recipe(sentences, dim, steps, batch_size, lr, seed))
    D = model.dim
    panels = [("static row $E_w$", layers[0, :, :D]),
              (r"layer 1, $[\overrightarrow{h}_t; \overleftarrow{h}_t]$", layers[1])]
    a, b = corpus.SENSES[word]
    na = senses.count(a)
    N = len(senses)
    fig, axes = new_figure(ncols=2, figsize=(6.4, 3.3))
    for ax, (title, vectors) in zip(axes, panels):
        image = ax.imshow(bilm.cosine_matrix(vectors), cmap=_blues(), vmin=0.0, vmax=1.0,
                          interpolation="nearest")
        ax.axhline(na - 0.5, color=INK, linewidth=0.8)
        ax.axvline(na - 0.5, color=INK, linewidth=0.8)
        ax.set_xticks([(na - 1) / 2, na + (N - na - 1) / 2], [a, b])
        ax.set_yticks([(na - 1) / 2, na + (N - na - 1) / 2], [a, b], rotation=90, va="center")
        ax.tick_params(length=0)
        ax.grid(False)
        ax.set_title(title)
    bar = fig.colorbar(image, ax=list(axes), shrink=0.85)
    bar.set_label("cosine similarity")
    return fig


@figure()
def sense_projection(words=WORDS, sentences=300, dim=16, steps=300, batch_size=16, lr=0.02, seed=0):
    """The mixture vectors of each word's occurrences on their first two principal axes, by sense."""
    words = _words(words)
    recipe = _recipe(sentences, dim, steps, batch_size, lr, seed)
    fig, axes = new_figure(ncols=len(words), figsize=(6.4, 3.2))
    axes = np.atleast_1d(axes)
    for ax, word in zip(axes, words):
        _, senses, layers = _occurrences(word, recipe)
        mixed = bilm.scalar_mix(layers)
        centre = mixed.mean(axis=0)
        _, _, vt = np.linalg.svd(mixed - centre, full_matrices=False)
        axes2 = vt[:2]
        axes2 *= np.where(axes2.sum(axis=1, keepdims=True) < 0, -1.0, 1.0)   # a fixed sign per axis
        points = (mixed - centre) @ axes2.T
        static = (layers[0, 0] - centre) @ axes2.T
        for colour, marker, sense in zip(PALETTE, MARKERS, corpus.SENSES[word]):
            idx = [i for i, s in enumerate(senses) if s == sense]
            ax.scatter(points[idx, 0], points[idx, 1], s=18, color=colour, marker=marker, label=sense,
                       linewidths=0)
        ax.scatter([static[0]], [static[1]], s=60, color=INK, marker="x", label="static row")
        ax.set_title(f"{word}")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=1, fontsize=8, handletextpad=0.2)
    axes[0].set_ylabel("second principal axis")
    axes[len(axes) // 2].set_xlabel("first principal axis", labelpad=2)
    return fig

"""Figures and tables of "Real text": the LSTM language model beside the tanh RNN, and where the gradient lands.

**The design, fixed before any result was read.**

* Both networks, the tanh RNN (:class:`rnnmem.charlm.CharRNN`) and the LSTM
  (:class:`rnnmem.charlm.CharLSTM`), are trained with the chapter's recipe
  (:data:`rnnmem.charlm.RECIPE`: the same corpus, split, sizes, optimizer,
  budget and checkpoints), each on the seeds :data:`SEEDS`; seed 0 of the RNN
  is the chapter's own run. Every run is a :class:`rnnmem.charlm.TextRun`,
  trained once and kept by :func:`rnnmem.site.labruns.runs`.
* Their validation perplexities after the last update are compared across
  the seeds by the Mann-Whitney test (:func:`rnnmem.stats.mann_whitney`); a
  difference is worded only where :math:`p <` :data:`rnnmem.verdicts.ALPHA`.
  Intervals are the range (lowest to highest) over the seeds.
* How long each needs to pass a reference model: for each seed, the first
  checkpoint whose validation perplexity is below the reference's
  (:data:`REFERENCES`); a seed that never does is counted as not passing
  within the budget.
* Samples: seed 0 of each network at the checkpoints :data:`SAMPLE_STEPS`,
  temperature 1, after a newline, drawn with seed 0, as the chapter's
  samples of the RNN are.
* Connectivity (Madsen 2019): :func:`rnnmem.charlm.connectivity` of the
  trained network of every seed (after the last update), at the distances
  0 to :data:`MAX_LAG`, averaged over :data:`POSITIONS` evenly spaced
  positions of the validation text, each read after :data:`WARMUP`
  characters of context. The figure shows the mean over the seeds and their
  range; at the distances :data:`READ_AT` the two networks are compared by
  the Mann-Whitney test across the seeds.
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from rnnmem import charlm, stats, verdicts
from rnnmem.checks import NonNegativeInt, Positive, PositiveInt

from ..labruns import runs
from ..registry import figure, table, widget
from ..style import INK, PALETTE, new_figure
from ..tables import Table
from ..textsamples import SAMPLE_CHARS, kneser_ney_perplexity, samples_figure
from ..widgets import RADIO, Control, Curve, Layer, State, Widget

SEEDS = (0, 1, 2, 3, 4)
"""The seeds each network is trained on (0 is the chapter's run of the RNN)."""

SAMPLE_STEPS = (100, 300, 1000)
"""The checkpoints at which both networks' samples are shown."""

MAX_LAG = 100
"""The longest distance :math:`k` at which connectivity is measured."""

POSITIONS = 256
"""How many positions of the validation text connectivity is averaged over."""

WARMUP = 100
"""Characters read before the farthest input measured, so that every distance has this much context."""

READ_AT = (1, 10, 100)
"""The distances at which the prose reads connectivity and the two networks are compared."""

MODEL_NAMES = {"rnn": "tanh RNN", "lstm": "LSTM"}
"""How the page names the two networks."""


def _bigram(corpus: charlm.Corpus) -> float:
    """The validation perplexity of the add-one bigram counts of the training text."""
    return math.exp(charlm.ngram_nats(charlm.encode(corpus.train), charlm.encode(corpus.valid), 2))


REFERENCES: dict[str, tuple[str, Callable[[charlm.Corpus], float]]] = {
    "bigram": ("bigram counts", _bigram),
    "kneser_ney": ("Kneser–Ney model", kneser_ney_perplexity),
}
"""The models a network is timed against, by name: what the page calls it, and its validation perplexity
(the add-one bigram counts, and the interpolated Kneser-Ney model of :mod:`rnnmem.ngram`, its order chosen on
the training text's held-out tail)."""


# ---------------------------------------------------------------------------- runs


@functools.cache
def _corpus() -> charlm.Corpus:
    return charlm.stdlib_corpus()


def _runs() -> dict[tuple[str, int], charlm.RunResult]:
    """Every run of the comparison, by (network, seed): the chapter's recipe with that network and seed."""
    keys = [(m, s) for m in MODEL_NAMES for s in SEEDS]
    found = runs([charlm.TextRun(charlm.Recipe(seed=s, model=m)) for m, s in keys])
    return dict(zip(keys, found))


def _spread(values: Sequence[float] | np.ndarray) -> dict:
    """Median, lowest and highest of the seeds' values, and the values themselves."""
    arr = np.asarray(values, dtype=np.float64)
    return {"median": float(np.median(arr)), "low": float(arr.min()), "high": float(arr.max()), "seeds": arr.tolist()}


def _test(lstm: Sequence[float], rnn: Sequence[float], lower: str) -> dict:
    """The two networks' values across the seeds compared by the Mann-Whitney test, in words.

    ``lower`` words what a smaller value means ("lower perplexity"). A difference is worded only where
    :math:`p <` :data:`rnnmem.verdicts.ALPHA`.
    """
    result = stats.mann_whitney(lstm, rnn)
    p = verdicts.p_text(result.p)
    differ = result.p < verdicts.ALPHA
    if not differ:
        phrase = f"no detectable difference between the two networks (*p* = {p}, Mann-Whitney test over the seeds)"
    else:
        which = "LSTM" if np.median(lstm) < np.median(rnn) else "tanh RNN"
        phrase = f"the {which} has the {lower} (*p* = {p}, Mann-Whitney test over the seeds)"
    return {"p": p, "p_value": result.p, "u": result.u, "differ": bool(differ), "phrase": phrase}


def _check_reference(reference: str) -> str:
    if reference not in REFERENCES:
        raise ValueError(f"reference must be one of {sorted(REFERENCES)}, got {reference!r}")
    return reference


def _passes(result: charlm.RunResult, level: float) -> int | None:
    """The first checkpoint whose validation perplexity is below ``level`` (``None``: none within the budget)."""
    below = [s for s, n in zip(result.checkpoints, result.valid_nats) if math.exp(n) < level]
    return below[0] if below else None


def _passes_text(name: str, steps: list[int | None], behind: float) -> str:
    """When the seeds of network ``name`` first fell below the reference, in words, with how far behind it ended
    (``behind``, its median final perplexity over the reference's) where some seed never did.

    >>> _passes_text("LSTM", [200, 300], 0.9)
    'the LSTM falls below it in all 2 seeds, by updates 200 to 300'
    >>> print(_passes_text("tanh RNN", [None, None], 1.05))
    the tanh RNN does not fall below it within the budget in any of the 2 seeds (its median final perplexity is 1.05 times the reference's)
    """
    done = sorted(s for s in steps if s is not None)
    if not done:
        return (
            f"the {name} does not fall below it within the budget in any of the {len(steps)} seeds "
            f"(its median final perplexity is {behind:.2f} times the reference's)"
        )
    when = f"update {done[0]:,}" if done[0] == done[-1] else f"updates {done[0]:,} to {done[-1]:,}"
    if len(done) == len(steps):
        return f"the {name} falls below it in all {len(steps)} seeds, by {when}"
    return (
        f"the {name} falls below it in {len(done)} of the {len(steps)} seeds, by {when} "
        f"(its median final perplexity is {behind:.2f} times the reference's)"
    )


# ---------------------------------------------------------------------------- perplexity


@figure()
def real_text_lstm_curve(reference: str = "bigram"):
    """Validation perplexity of both networks at the checkpoints: the median over the seeds and their range.

    The reference model (:data:`REFERENCES`) is drawn as a horizontal line. Values: ``checkpoints``;
    ``rnn`` and ``lstm``, each with ``perplexity`` (by checkpoint: ``median``, ``low``, ``high``,
    ``seeds``), ``final`` (the same after the last update), ``passes`` (each seed's first checkpoint
    below the reference, ``None`` for none) and ``passes_text``; ``reference``, ``reference_name`` and
    ``reference_perplexity``; ``behind`` (by network, the median final perplexity over the
    reference's, one or less when it passed); ``test``, the final perplexities compared
    (:func:`_test`); ``seeds``, ``updates``.
    """
    reference = _check_reference(reference)
    name, fn = REFERENCES[reference]
    level = fn(_corpus())
    results = _runs()
    steps = list(results[("rnn", SEEDS[0])].checkpoints)
    values: dict = {"checkpoints": steps, "seeds": len(SEEDS), "updates": steps[-1]}
    fig, ax = new_figure(height=3.0)
    for color, model in zip(PALETTE, MODEL_NAMES):
        ppl = np.exp([[results[(model, s)].valid_nats[k] for s in SEEDS] for k in range(len(steps))])
        median = np.median(ppl, axis=1)
        ax.fill_between(steps, ppl.min(axis=1), ppl.max(axis=1), color=color, alpha=0.25, linewidth=0)
        ax.semilogy(steps, median, "o-", color=color, markersize=4, label=MODEL_NAMES[model])
        passes = [_passes(results[(model, s)], level) for s in SEEDS]
        final = _spread(ppl[-1])
        values[model] = {
            "perplexity": {s: _spread(row) for s, row in zip(steps, ppl)},
            "final": final,
            "passes": passes,
            "passes_text": _passes_text(MODEL_NAMES[model], passes, final["median"] / level),
        }
    ax.axhline(level, color=INK, linestyle="-.", linewidth=0.9)
    ax.annotate(name, (steps[-1] * 0.3, level), xytext=(0, 2), textcoords="offset points", color=INK, va="bottom")
    ax.set_xlim(0, steps[-1])
    ax.set_xlabel("updates")
    ax.set_ylabel("validation perplexity")
    ax.legend(loc="upper right")
    final = {m: values[m]["final"] for m in MODEL_NAMES}
    values.update(
        reference=reference,
        reference_name=name,
        reference_perplexity=level,
        behind={m: final[m]["median"] / level for m in MODEL_NAMES},
        test=_test(final["lstm"]["seeds"], final["rnn"]["seeds"], "lower validation perplexity"),
    )
    return fig, values


@table()
def real_text_lstm_perplexity():
    """Validation perplexity of both networks at each checkpoint: the median over the seeds and the range.

    Values: ``rows`` by checkpoint, each with ``rnn`` and ``lstm`` (``median``, ``low``, ``high``);
    ``seeds``.
    """
    results = _runs()
    steps = list(results[("rnn", SEEDS[0])].checkpoints)
    rows, values = [], {}
    for k, step in enumerate(steps):
        cells = {m: _spread([math.exp(results[(m, s)].valid_nats[k]) for s in SEEDS]) for m in MODEL_NAMES}
        rows.append([f"{step:,}"] + [f"{c['median']:.2f} [{c['low']:.2f}, {c['high']:.2f}]" for c in cells.values()])
        values[step] = {m: {k2: v for k2, v in c.items() if k2 != "seeds"} for m, c in cells.items()}
    tab = Table(
        ["updates"] + [f"{MODEL_NAMES[m]}, median [range]" for m in MODEL_NAMES],
        rows,
        align=["right"] * 3,
        notes=f"Each network trained with the chapter's recipe on {len(SEEDS)} seeds; the range is over the seeds.",
    )
    return tab, {"rows": values, "seeds": len(SEEDS)}


@figure()
def real_text_lstm_samples(
    steps: Sequence[NonNegativeInt] = SAMPLE_STEPS,
    temperature: Positive = 1.0,
    prompt: str = "\n",
    seed: NonNegativeInt = 0,
):
    """Text sampled from both networks (seed 0 of each) at the same checkpoints, with the same draws.

    Values: ``steps``; for ``rnn`` and ``lstm``, ``perplexity``, ``known`` (the share of the sample's
    words of three letters or more found in the training text, :func:`rnnmem.charlm.known_share`) and
    ``samples`` (the shown lines), by step; ``temperature``, ``chars``.
    """
    results = _runs()
    corpus = _corpus()
    marks = results[("rnn", SEEDS[0])].checkpoints
    for k, s in enumerate(steps):
        if s not in marks:
            raise ValueError(f"steps[{k}] must be one of the run's checkpoints {list(marks)}, got {s!r}")
    titles: list[str] = []
    texts: list[str] = []
    values: dict = {}
    for model in MODEL_NAMES:
        result = results[(model, SEEDS[0])]
        values[model] = {"perplexity": {}, "known": {}, "samples": {}}
        for s in steps:
            text = charlm.sample(result.model(s), prompt, SAMPLE_CHARS, temperature=temperature, seed=seed)
            values[model]["perplexity"][s] = result.perplexity(s)
            values[model]["known"][s] = charlm.known_share(text, corpus.train)
            values[model]["samples"][s] = text
    for s in steps:
        for model in MODEL_NAMES:
            ppl = values[model]["perplexity"][s]
            titles.append(f"{MODEL_NAMES[model]} after {s:,} updates · validation perplexity {ppl:.1f}")
            texts.append(values[model]["samples"][s])
    fig = samples_figure(titles, texts)
    for model in MODEL_NAMES:
        values[model]["samples"] = {s: "\n".join(t.split("\n")[:6]) for s, t in values[model]["samples"].items()}
    return fig, {**values, "steps": list(steps), "temperature": temperature, "chars": SAMPLE_CHARS}


# ---------------------------------------------------------------------------- connectivity


@functools.cache
def _connectivity() -> dict[str, np.ndarray]:
    """By network, ``(seeds, MAX_LAG + 1)``: each seed's trained network's connectivity on the validation text."""
    results = _runs()
    valid = charlm.encode(_corpus().valid)
    out = {}
    for model in MODEL_NAMES:
        rows = []
        for s in SEEDS:
            result = results[(model, s)]
            net = result.model(result.checkpoints[-1])
            rows.append(charlm.connectivity(net, valid, MAX_LAG, POSITIONS, warmup=WARMUP)[0])
        out[model] = np.array(rows)
    return out


@figure()
def real_text_connectivity(scale: Literal["log", "linear"] = "log"):
    """Connectivity by distance on the validation text, for both trained networks: mean over the seeds and range.

    Values: for ``rnn`` and ``lstm``, ``at`` (by distance of :data:`READ_AT`: ``mean``, ``low``,
    ``high``, ``seeds``) and ``fall`` (the mean at the first distance of :data:`READ_AT` over the mean
    at the last); ``tests`` by distance of :data:`READ_AT` (:func:`_test`, smaller meaning less
    gradient); ``ratio`` by distance, the LSTM's mean over the RNN's; ``max_lag``, ``positions``,
    ``warmup``, ``seeds``.
    """
    if scale not in ("log", "linear"):
        raise ValueError(f"scale must be 'log' or 'linear', got {scale!r}")
    conn = _connectivity()
    k = np.arange(MAX_LAG + 1)
    fig, ax = new_figure(height=3.0)
    values: dict = {"max_lag": MAX_LAG, "positions": POSITIONS, "warmup": WARMUP, "seeds": len(SEEDS)}
    for color, model in zip(PALETTE, MODEL_NAMES):
        c = conn[model]
        ax.fill_between(k, c.min(axis=0), c.max(axis=0), color=color, alpha=0.25, linewidth=0)
        ax.plot(k, c.mean(axis=0), color=color, linewidth=1.4, label=MODEL_NAMES[model])
        at = {d: {**_spread(c[:, d]), "mean": float(c[:, d].mean())} for d in READ_AT}
        values[model] = {"at": at, "fall": at[READ_AT[0]]["mean"] / at[READ_AT[-1]]["mean"]}
    ax.set_yscale(scale)
    ax.set_xlim(0, MAX_LAG)
    ax.set_xlabel("distance $k$ (characters back)")
    ax.set_ylabel("mean gradient norm")
    ax.legend(loc="upper right")
    values["tests"] = {
        d: _test(conn["lstm"][:, d].tolist(), conn["rnn"][:, d].tolist(), "smaller gradient") for d in READ_AT
    }
    values["ratio"] = {d: values["lstm"]["at"][d]["mean"] / values["rnn"]["at"][d]["mean"] for d in READ_AT}
    return fig, values


# ---------------------------------------------------------------------------- the widget

SNIPPET_AT = 5000
"""Where the widget's snippet is looked for: the first line of the validation text that starts after this many
characters begins it."""

SNIPPET_CHARS = 52
"""The snippet's length in characters: one row of the widget."""

SHARE_FLOOR = -4
"""The widget's share axis runs from 10 to this power up to 1; a smaller share is drawn at the bottom."""

WIDGET_BOX = (44.0, 40.0, 300.0, 120.0)
"""The widget's plot, in SVG units: x0, y0, width, height (the snippet's row sits above it)."""


def _snippet(valid: np.ndarray, at: int, chars: int) -> int:
    """Where the snippet starts: the first line start after ``at`` with ``WARMUP`` characters before it."""
    newline = charlm.encode("\n")[0]
    starts = np.flatnonzero(valid[:-1] == newline) + 1
    fit = starts[(starts > at) & (starts >= WARMUP) & (starts + chars + 1 < valid.size)]
    if fit.size == 0:
        raise ValueError(f"at must leave room for a snippet of {chars} characters in the validation text, got {at}")
    return int(fit[0])


def gradient_shares(net: charlm.CharRNN | charlm.CharLSTM, valid: np.ndarray, start: int, chars: int) -> np.ndarray:
    """``(chars, chars)``: entry ``[t, j]`` is the share of the loss gradient at snippet position ``t`` that lands
    on the input at position ``j`` (zero for ``j > t``).

    The snippet is ``valid[start : start + chars]``, read after the :data:`WARMUP` characters before it, from the
    zero state. The share is the norm of :math:`\\partial \\ell_t / \\partial o_{x_j}` over the sum of those norms
    for every input read up to :math:`t`, the warm-up's included (:func:`rnnmem.charlm.connectivity`'s norms).
    """
    L = WARMUP + chars
    x = np.repeat(valid[start - WARMUP : start + chars, None], chars, axis=1)
    y = np.repeat(valid[start - WARMUP + 1 : start + chars + 1, None], chars, axis=1)
    mask = np.zeros((L, chars), dtype=bool)
    mask[WARMUP + np.arange(chars), np.arange(chars)] = True
    _, grads, _ = net.loss_and_grads(x, y, mask=mask, input_grads=True)
    norms = np.linalg.norm(grads["x"][:, 0], axis=2)  # (L, B): stream b holds the loss at WARMUP + b
    shares = norms / norms.sum(axis=0, keepdims=True)
    return shares[WARMUP:].T.copy()


def _shown(ch: str) -> str:
    return {"\n": "⏎", " ": "␣"}.get(ch, ch)


@widget()
def real_text_gradient_explorer(at: NonNegativeInt = SNIPPET_AT, chars: PositiveInt = SNIPPET_CHARS):
    """A validation snippet; pick a character (point at it, or move the slider by its keys) and a network; see the share of its loss
    gradient that lands on each character before it, on a logarithmic axis under the snippet.

    Seed 0 of each network after its last update (:data:`SEEDS`), :func:`gradient_shares`; the snippet is the
    ``chars`` characters from the first line start after ``at``.
    """
    if not 8 <= chars <= 60:
        raise ValueError(f"chars must be a whole number from 8 to 60, got {chars!r}")
    results = _runs()
    valid = charlm.encode(_corpus().valid)
    start = _snippet(valid, at, chars)
    text = charlm.decode(valid[start : start + chars + 1])
    x0, y0, w, h = WIDGET_BOX
    step = w / chars
    xs = tuple(x0 + step * (j + 0.5) for j in range(chars))

    def y_of(share: float) -> float:
        level = max(math.log10(share), SHARE_FLOOR) if share > 0 else SHARE_FLOOR
        return round(y0 + h * (1 - (level - SHARE_FLOOR) / -SHARE_FLOOR), 1)

    positions = tuple(
        f"character {t + 1} of {chars}, {_shown(text[t])!r}, predicting {_shown(text[t + 1])!r}" for t in range(chars)
    )
    states = []
    for model in MODEL_NAMES:
        result = results[(model, SEEDS[0])]
        shares = gradient_shares(result.model(result.checkpoints[-1]), valid, start, chars)
        for t in range(chars):
            row = shares[t, : t + 1]
            top = int(np.argmax(row))
            near = float(row[max(0, t - 9) :].sum())
            states.append(
                State(
                    readouts={
                        "self": f"{row[t]:.0%}",
                        "near": f"{near:.0%}",
                        "top": f"{_shown(text[top])!r}, {t - top} back, {row[top]:.0%}",
                        "snippet": f"{float(row.sum()):.0%}",
                    },
                    curves={"share": [y_of(float(v)) for v in shares[t, : t + 1]] + [y0 + h] * (chars - t - 1)},
                    marks={"at": round(xs[t], 2)},
                )
            )
    row_y = y0 - 14
    letters = "".join(
        f'<text class="rnnmem-w-tick rnnmem-w-pick" x="{x:.2f}" y="{row_y:g}" text-anchor="middle" '
        f'font-family="monospace" data-pick="position:{j}">{html.escape(_shown(ch))}</text>'
        for j, (x, ch) in enumerate(zip(xs, text[:chars]))
    )
    ticks = [
        (y0 + h * (1 - (d - SHARE_FLOOR) / -SHARE_FLOOR), "1" if d == 0 else f"10{_power(d)}")
        for d in range(SHARE_FLOOR, 1)
    ]
    frame = _frame(WIDGET_BOX, ticks, "the snippet, character by character", "share")
    svg = letters + frame + "{curves}{marks}"
    return Widget(
        name="real_text_gradient_explorer",
        title="Where the gradient of one prediction lands, character by character",
        controls=[
            Control("network", "network", tuple(MODEL_NAMES.values()), kind=RADIO),
            Control("position", "the character read", positions, start=chars - 1),
        ],
        layers=[Layer(("network", "position"), tuple(states))],
        readouts=[
            ("self", "on the character read"),
            ("near", "on it and the nine before"),
            ("top", "the largest share"),
            ("snippet", "on the snippet (the rest: before it)"),
        ],
        curves=[Curve("share", "share of the gradient", xs=xs)],
        marks=["at"],
        svg=svg,
        view=(360.0, 200.0),
        description=(
            f"A row of {chars} characters of the validation text and, under each, the share of the loss gradient "
            f"at the chosen character that lands on it, on a logarithmic axis from 10{_power(SHARE_FLOOR)} to 1; "
            "a vertical line marks the chosen character."
        ),
        note=(
            f"Seed 0 of each network after its last update, reading the snippet after the {WARMUP} characters "
            "before it. A share is the norm of the gradient of the loss with respect to that input, over the sum "
            "of those norms for every input read so far; the characters after the one chosen get none."
        ),
    )


def _power(d: int) -> str:
    return str(d).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _frame(
    box: tuple[float, float, float, float], yticks: Sequence[tuple[float, str]], xlabel: str, ylabel: str
) -> str:
    """The plot's frame, horizontal grid and ticks, and its axis labels."""
    x0, y0, w, h = box
    parts = [f'<rect class="rnnmem-w-frame" x="{x0:g}" y="{y0:g}" width="{w:g}" height="{h:g}"/>']
    for y, text in yticks:
        parts.append(
            f'<line class="rnnmem-w-grid" x1="{x0:g}" x2="{x0 + w:g}" y1="{y:.2f}" y2="{y:.2f}"/>'
            f'<text class="rnnmem-w-tick" x="{x0 - 6:g}" y="{y + 4:.2f}" text-anchor="end">{text}</text>'
        )
    parts.append(
        f'<text class="rnnmem-w-axis" x="{x0 + w / 2:g}" y="{y0 + h + 18:g}" text-anchor="middle">{xlabel}</text>'
        f'<text class="rnnmem-w-axis" x="12" y="{y0 + h / 2:g}" text-anchor="middle" '
        f'transform="rotate(-90 12 {y0 + h / 2:g})">{ylabel}</text>'
    )
    return "".join(parts)

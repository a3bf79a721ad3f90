"""The widget and figure of "Memory inside one sequence", in the chapter "Memory, measured by training".

What is trained and measured is :mod:`rnnmem.inside`: each model of the lab
(:class:`rnnmem.inside.InsideRun`) trained on recall over the whole budget,
with the seeds ``0, ..., seeds - 1`` together, a checkpoint at every
evaluation (every 25 updates), and the member shown chosen by the rule of
:func:`rnnmem.inside.shown_member`, stated in the code, not chosen from the measurements: the
lowest seed that succeeds within the budget, else seed 0. The page says which
seed each model shows and whether it succeeded. Training runs in float32 (the
lab's faster precision; the cost of this section is its three trainings), and
both measures are taken in float64 at every checkpoint.

* :func:`inside_explorer` (a widget): a slider over the checkpoints. Every
  position's geometry and text is computed here; ``docs/javascripts/inside.js``
  only copies the chosen position's numbers into the page. Without
  JavaScript the widget shows update 0 and says that the figure shows more.
* :func:`inside_checkpoints` (a figure): the static view, both measures at
  four checkpoints chosen by a rule fixed in advance (update 0, a third and
  two thirds of the budget, and the end, each the nearest evaluation), with
  the values the chapter's prose and the caption quote.

Both builders read the same runs, trained once per build by the lab's
:func:`~rnnmem.site.labruns.runs` (kept for the build and on disk; the three
trainings are this section's whole cost).
Colours follow the chapter's other figures (a model keeps its colour of
:data:`rnnmem.experiments.CONFIGS`); on the dark palette the widget uses the
colour the site's stylesheet gives the figures there (``invert(0.88)
hue-rotate(180deg)``, :func:`dark_colour`).
"""

from __future__ import annotations

import dataclasses
import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rnnmem.checks import PositiveInt
from rnnmem.experiments import ALPHABET, CONFIGS, DESIGN, Model, ModelSpec, Threshold
from rnnmem.inside import InsideResult, InsideRun

from ..labruns import runs
from ..registry import figure, widget
from ..style import PALETTE, new_figure
from ..widgets import State, Widget

MODELS = ("rnn", "lstm:0", "lstm:chrono")
"""The models shown: the tanh RNN, the LSTM with :math:`b_f = 0` and the chrono LSTM."""

DASHES = ("6 3", "1.5 3", "", "8 3 2 3")
"""SVG dash patterns of the models, in the order given (the first, dashed, as the chapter draws the RNN)."""
LINESTYLES = ("--", ":", "-", "-.")
"""The same patterns for matplotlib."""

FLOOR = 1e-12
"""Values below this are drawn at the bottom of the logarithmic axes (none of the lab's come near)."""

# ---------------------------------------------------------------------------- words and colours


def _label(spec: ModelSpec, markup: str = "text") -> str:
    """A model in a legend: "tanh RNN", "LSTM, b_f = 0", "LSTM, chrono"; ``markup`` "html" or "tex" sets b_f so."""
    if spec.cell != "lstm":
        return {"rnn": "tanh RNN", "gru": "GRU"}[spec.cell]
    if spec.init == "chrono":
        return "LSTM, chrono"
    if spec.forget_bias is None:
        return "LSTM, default draw"
    bias = {"text": "b_f", "html": "b<sub>f</sub>", "tex": "$b_f$"}[markup]
    return (
        f"LSTM, {bias} = {spec.forget_bias:g}" if markup != "html" else f"LSTM, {bias}&nbsp;=&nbsp;{spec.forget_bias:g}"
    )


def _prose(spec: ModelSpec) -> str:
    """A model in a sentence: "the tanh RNN", "the LSTM with $b_f = 0$", "the chrono LSTM"."""
    if spec.cell != "lstm":
        return {"rnn": "the tanh RNN", "gru": "the GRU"}[spec.cell]
    if spec.init == "chrono":
        return "the chrono LSTM"
    return "the LSTM with PyTorch's draw" if spec.forget_bias is None else f"the LSTM with $b_f = {spec.forget_bias:g}$"


def _join(words: list[str], empty: str = "none") -> str:
    """``a``, ``a and b``, ``a, b and c``; ``empty`` for no words."""
    if not words:
        return empty
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def sci(value: float) -> str:
    """A positive ratio as text: two decimals below 1, one below 10, none below 1,000, else a power of ten.

    Below 0.01 and from 1,000 on, two digits and a power of ten in Unicode.

    >>> sci(3.07e-7), sci(0.177), sci(5.99), sci(34.3), sci(float("nan"))
    ('3.1 × 10⁻⁷', '0.18', '6.0', '34', '–')
    """
    if not math.isfinite(value):
        return "–"
    if 0.01 <= abs(value) < 1000:
        return f"{value:.2f}" if abs(value) < 1 else f"{value:.1f}" if abs(value) < 10 else f"{value:.0f}"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa} × {_superscript(int(exponent))}"


def dark_colour(colour: str) -> str:
    """The colour the site shows for ``colour`` on the dark palette: CSS ``invert(0.88) hue-rotate(180deg)``.

    The stylesheet turns every figure so on the dark page (``docs/stylesheets/book.css``); the widget,
    drawn in the page, takes the same colours. The filters' matrices, in sRGB, as the Filter Effects
    specification gives them.

    >>> dark_colour("#ffffff"), dark_colour("#000000")
    ('#1f1f1f', '#e0e0e0')
    """
    rgb = np.array([int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)])
    rgb = 0.88 - 0.76 * rgb  # invert(0.88): c (1 - p) + (1 - c) p
    rotate = np.array([[-0.574, 1.430, 0.144], [0.426, 0.430, 0.144], [0.426, 1.430, -0.856]])  # 180 degrees
    out = np.clip(rotate @ rgb, 0.0, 1.0)
    return "#" + "".join(f"{round(float(c) * 255):02x}" for c in out)


def _colour(spec: ModelSpec) -> str:
    """The model's colour in the chapter's figures: its place among the lab's models, else by its cell."""
    text = str(spec)
    index = CONFIGS.index(text) if text in CONFIGS else {"rnn": 0, "gru": 1}.get(spec.cell, 3)
    return PALETTE[index % len(PALETTE)]


# ---------------------------------------------------------------------------- runs


def _check(models: Sequence[str]) -> list[ModelSpec]:
    specs = [ModelSpec.parse(m, f"models[{k}]") for k, m in enumerate(models)]
    if not 1 <= len(specs) <= len(DASHES):
        raise ValueError(f"models must name 1 to {len(DASHES)} models (one line style each), got {len(specs)}")
    if len(set(specs)) != len(specs):
        raise ValueError(f"models must be distinct, got {list(models)}")
    return specs


def watched(
    models: Sequence[str], lag: int, seeds: int, hidden: int, steps: int, threshold: float, sequences: int
) -> list[InsideResult]:
    """One :class:`rnnmem.inside.InsideResult` per model, trained once per build.

    The runs go through :func:`rnnmem.site.labruns.runs`: kept for the build, and those missing trained
    by the lab's engine (:mod:`rnnmem.engine`).
    """
    design = dataclasses.replace(DESIGN, hidden=hidden, steps=steps, threshold=threshold)
    keys = [
        InsideRun(str(spec), lag, tuple(range(seeds)), design, ALPHABET, "float32", sequences, 0)
        for spec in _check(models)
    ]
    return runs(keys)


def checkpoints(eval_steps: np.ndarray) -> list[int]:
    """The figure's checkpoints, fixed in advance: update 0, a third and two thirds of the budget, the end.

    Each is the evaluation nearest to its target (the earlier one on a tie); one that repeats is left out.

    >>> checkpoints(np.arange(0, 1501, 25))
    [0, 20, 40, 60]
    """
    last = int(eval_steps[-1])
    out: list[int] = []
    for target in (0, last / 3, 2 * last / 3, last):
        k = int(np.argmin(np.abs(eval_steps - target)))
        if k not in out:
            out.append(k)
    return out


def _first(steps: np.ndarray, values: np.ndarray, level: float) -> int | None:
    """The first update at which ``values`` reaches ``level``, or None."""
    hits = np.flatnonzero(values >= level)
    return int(steps[hits[0]]) if hits.size else None


def _order(a: int | None, b: int | None) -> str:
    """Where update a comes against update b: "before", "at" or "after" ("never" if a is None)."""
    if a is None:
        return "never"
    if b is None or a < b:
        return "before"
    return "at" if a == b else "after"


def _values(specs: list[ModelSpec], results: list[InsideResult], lag: int, sequences: int, threshold: float) -> dict:
    """What the captions and the prose read: per model (by its key), the seed shown, its outcome, and both
    measures at the far end (the memory at the query, the gradient on the token) at the start and the end."""
    first = results[0]
    steps = int(first.eval_steps[-1])
    per: dict[str, dict] = {}
    for spec, r in zip(specs, results):
        kept, share = r.memory[:, -1], r.landing[:, 0]
        per[spec.key] = {
            "name": _prose(spec),
            "seed": r.seed,
            "learned": "learned" if r.succeeded else "did not learn",
            "success": "never" if r.success_step is None else r.success_step,
            "memory_start": float(kept[0]),
            "memory_end": float(kept[-1]),
            "memory_change": "rose" if kept[-1] > kept[0] else "fell",
            "landing_start": float(share[0]),
            "landing_end": float(share[-1]),
            "landing_change": "rose" if share[-1] > share[0] else "fell",
            "story": _story(spec, r, threshold),
        }
    learned = [spec for spec, r in zip(specs, results) if r.succeeded]
    shown = checkpoints(first.eval_steps)
    return {
        "lag": lag,
        "length": lag + 2,
        "steps": steps,
        "every": int(first.eval_steps[1] - first.eval_steps[0]) if len(first.eval_steps) > 1 else steps,
        "checks": len(first.eval_steps),
        "seeds": len(first.seeds),
        "last_seed": first.seeds[-1],
        "threshold": threshold,
        "sequences": sequences,
        "alphabet": ALPHABET,
        "variants": sequences * ALPHABET,
        "models": len(specs),
        "learners": _join([_prose(s) for s in learned], "no model"),
        "non_learners": _join([_prose(s) for s in specs if s not in learned], "no model"),
        "learner_count": len(learned),
        "drift": _drift([(s, r) for s, r in zip(specs, results) if not r.succeeded]),
        "checkpoints": _join([f"{int(first.eval_steps[k]):,}" for k in shown]),
        "shown": {spec.key: _shown_words(spec, r, steps) for spec, r in zip(specs, results)},
        "summary": "; ".join(
            f"{_label(spec)}, M from {sci(float(r.memory[0, -1]))} to {sci(float(r.memory[-1, -1]))} and g from "
            f"{sci(float(r.landing[0, 0]))} to {sci(float(r.landing[-1, 0]))}"
            for spec, r in zip(specs, results)
        ),
        **per,
    }


def _story(spec: ModelSpec, r: InsideResult, threshold: float) -> str:
    """What one model's measures did over training, in two sentences computed from them.

    The memory is :math:`M_T` at the query, the gradient :math:`g_1` on the token. Every direction and
    ordering is read from the numbers: which way each moved from update 0 to the end, when each first
    reached 1, and when that was against the update at which the held-out accuracy passed the threshold.
    """
    kept, share, steps = r.memory[:, -1], r.landing[:, 0], r.eval_steps
    m_one, g_one = _first(steps, kept, 1.0), _first(steps, share, 1.0)
    moved = (
        f"For {_prose(spec)}, the memory at the query {'rose' if kept[-1] > kept[0] else 'fell'} from "
        f"{sci(float(kept[0]))} at update 0 to {sci(float(kept[-1]))} at update {int(steps[-1]):,}, and the "
        f"share of the gradient on the token {'rose' if share[-1] > share[0] else 'fell'} from "
        f"{sci(float(share[0]))} to {sci(float(share[-1]))}."
    )
    if m_one is None and g_one is None:
        reached = "Neither reached 1 at any checkpoint"
    elif m_one == g_one:
        reached = f"Both first reached 1 at update {m_one:,}"
    else:
        at = ["at no checkpoint" if u is None else f"at update {u:,}" for u in (m_one, g_one)]
        reached = f"The memory first reached 1 {at[0]}, the gradient {at[1]}"
    passed = f"the held-out accuracy passed {threshold:g}"
    if r.success_step is None:
        return f"{moved} {reached}, and {passed.replace('passed', 'never passed')}."
    if m_one is None:
        return f"{moved} {reached}, and {passed} at update {r.success_step:,} all the same."
    then = float(r.scores[list(steps).index(m_one)])
    when = {
        "before": f"{r.success_step - m_one:,} updates before {passed} (at update {r.success_step:,})",
        "at": f"at the checkpoint at which {passed}",
        "after": f"{m_one - r.success_step:,} updates after {passed} (at update {r.success_step:,})",
    }[_order(m_one, r.success_step)]
    tail = f"{reached}, {when}" if m_one == g_one else f"{reached}; the memory reached it {when}"
    return f"{moved} {tail}, with the accuracy then at {then:.2f}."


def _orders(a: float, b: float) -> str:
    """How many orders of magnitude lie between two positive numbers, in words: "about 4"."""
    return f"about {abs(math.log10(b / a)):.0f}"


def _drift(unlearned: list) -> str:
    """Where training took each model that did not learn, in a sentence per model read from its measures."""
    if not unlearned:
        return "Every model shown learned in this run."
    out = []
    for spec, r in unlearned:
        kept, share = r.memory[:, -1], r.landing[:, 0]
        m_dir = "fell" if kept[-1] < kept[0] else "rose"
        g_dir = "fell" if share[-1] < share[0] else "rose"
        where = (
            "further from the token"
            if m_dir == g_dir == "fell"
            else "closer to the token, without reaching it"
            if m_dir == g_dir == "rose"
            else "neither closer to the token nor further from it"
        )
        out.append(
            f"For {_prose(spec)}, the memory at the query {m_dir} by {_orders(kept[0], kept[-1])} orders of "
            f"magnitude over the budget, and the gradient on the token {g_dir} by {_orders(share[0], share[-1])}: "
            f"training took it {where}."
        )
    return " ".join(out)


def _shown_words(spec: ModelSpec, r: InsideResult, steps: int) -> str:
    """Which seed a model shows and why, in words."""
    if r.succeeded:
        why = "the lowest that learned" if r.seed != r.seeds[0] else "which learned"
        return f"seed {r.seed}, {why}, at update {r.success_step:,}"
    return f"seed {r.seeds[0]}: no seed from {r.seeds[0]} to {r.seeds[-1]} learned within {steps:,} updates"


# ---------------------------------------------------------------------------- the widget

#: Each plot's viewBox (width, height) and its box inside it (x0, y0, width, height).
VIEW = (320.0, 206.0)
BOX = (52.0, 12.0, 246.0, 146.0)


@dataclass(frozen=True)
class InsideWidget(Widget):
    """A widget of its own layout (three plots and a table), drawn by ``docs/javascripts/inside.js``.

    The :class:`~rnnmem.site.widgets.Widget` fields say what it shows (one
    :class:`~rnnmem.site.widgets.State` per checkpoint, its readouts the
    table's cells); :meth:`to_html` writes the page's HTML.
    """

    body: str = ""

    def to_html(self) -> str:
        """The widget's HTML, built by :func:`inside_explorer`."""
        return self.body


def _ys(values: np.ndarray, low: float, high: float) -> list[float | None]:
    """Logarithmic y coordinates of positive values (None for a value that is not a number)."""
    x0, y0, w, h = BOX
    out: list[float | None] = []
    for v in values:
        if not math.isfinite(v):
            out.append(None)
            continue
        frac = (math.log10(max(float(v), 10**low)) - low) / (high - low)
        out.append(round(y0 + (1 - min(frac, 1.0)) * h, 1))
    return out


def _points(xs: list[float], ys: list[float | None]) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys) if y is not None)


def _superscript(exponent: int) -> str:
    return "10" + str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _frame(xticks: list[tuple[float, str]], yticks: list[tuple[float, str]], xlabel: str, ylabel: str) -> str:
    """A plot's frame, grid, ticks and axis labels (SVG)."""
    x0, y0, w, h = BOX
    parts = [f'<rect class="rnnmem-inside-frame" x="{x0}" y="{y0}" width="{w}" height="{h}"/>']
    for x, text in xticks:
        parts.append(
            f'<line class="rnnmem-inside-grid" x1="{x:.1f}" x2="{x:.1f}" y1="{y0}" y2="{y0 + h}"/>'
            f'<text class="rnnmem-inside-tick" x="{x:.1f}" y="{y0 + h + 15}" text-anchor="middle">{text}</text>'
        )
    for y, text in yticks:
        parts.append(
            f'<line class="rnnmem-inside-grid" x1="{x0}" x2="{x0 + w}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="rnnmem-inside-tick" x="{x0 - 5}" y="{y + 4:.1f}" text-anchor="end">{text}</text>'
        )
    parts.append(
        f'<text class="rnnmem-inside-axis" x="{x0 + w / 2}" y="{VIEW[1] - 6}" text-anchor="middle">{xlabel}</text>'
        f'<text class="rnnmem-inside-axis" x="13" y="{y0 + h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 13 {y0 + h / 2})">{ylabel}</text>'
    )
    return "".join(parts)


def _step_ticks(T: int) -> list[tuple[float, str]]:
    """Step ticks: 1 (the token), T (the query) and the multiples of 5 well inside."""
    x0, _, w, _ = BOX
    steps = [1] + [s for s in range(5, T, 5) if s - 1 >= 3 and T - s >= 3] + [T]
    return [(x0 + w * (s - 1) / (T - 1), str(s)) for s in steps]


def _log_ticks(low: int, high: int) -> list[tuple[float, str]]:
    """Decade ticks, every second or third decade when there are many."""
    x0, y0, w, h = BOX
    every = 1 if high - low <= 5 else 2 if high - low <= 10 else 3
    return [(y0 + (1 - (d - low) / (high - low)) * h, _superscript(d)) for d in range(high, low - 1, -every)]


def _tight(value: float) -> str:
    """:func:`sci` with narrow spaces around the times sign, for the table's narrow columns."""
    return sci(float(value)).replace(" × ", "\u202f×\u202f")


def _sub(text: str) -> str:
    """A subscript inside an SVG text."""
    return f'<tspan baseline-shift="sub" font-size="9">{text}</tspan>'


def _svg(name: str, label: str, content: str) -> str:
    return (
        f'<svg class="rnnmem-inside-plot" viewBox="0 0 {VIEW[0]:g} {VIEW[1]:g}" role="img" '
        f'aria-label="{html.escape(label, quote=True)}" data-plot="{name}">{content}</svg>'
    )


def _line(kind: str, m: int, points: str, dash: str) -> str:
    style = f' stroke-dasharray="{dash}"' if dash else ""
    return f'<polyline class="rnnmem-inside-line rnnmem-inside-m{m}" data-{kind}="{m}" points="{points}"{style}/>'


@widget()
def inside_explorer(
    models: Sequence[Model] = MODELS,
    lag: PositiveInt = 20,
    seeds: PositiveInt = 5,
    hidden: PositiveInt = 16,
    steps: PositiveInt = 1500,
    threshold: Threshold = 0.9,
    sequences: PositiveInt = 4,
):
    """A slider over the training checkpoints: held-out accuracy, the memory M_t of the first token, and
    the share g_s of the query's gradient that lands on each step, for each model's shown seed."""
    specs = _check(models)
    results = watched(models, lag, seeds, hidden, steps, threshold, sequences)
    first = results[0]
    C, T = first.memory.shape
    x0, y0, w, h = BOX
    ends = [float(v) for r in results for v in np.concatenate([r.memory.ravel(), r.landing.ravel()])]
    finite = [v for v in ends if math.isfinite(v) and v > 0]
    low = max(math.floor(math.log10(min(finite))), int(math.log10(FLOOR)))
    high = max(1, math.ceil(math.log10(max(finite))))
    xs = [x0 + w * t / (T - 1) for t in range(T)]
    budget = int(first.eval_steps[-1])
    ux = [round(x0 + w * int(u) / budget, 1) for u in first.eval_steps]

    def acc_y(a: float) -> float:
        return round(y0 + (1 - a) * h, 1)

    labels = [f"update {int(u):,} of {budget:,}" for u in first.eval_steps]
    memory = [[_ys(r.memory[i], low, high) for r in results] for i in range(C)]
    landing = [[_ys(r.landing[i], low, high) for r in results] for i in range(C)]
    cells = [
        [[f"{r.scores[i]:.2f}", _tight(r.memory[i, -1]), _tight(r.landing[i, 0])] for r in results] for i in range(C)
    ]
    dots = [[acc_y(float(r.scores[i])) for r in results] for i in range(C)]
    states = [
        State(
            label=labels[i],
            readouts={f"{k}-{j}": cells[i][k][j] for k in range(len(specs)) for j in range(3)},
        )
        for i in range(C)
    ]
    columns = ("held-out accuracy", "kept at the query", "gradient on the token")
    readout_keys = [(f"{k}-{j}", f"{_label(s)}: {col}") for k, s in enumerate(specs) for j, col in enumerate(columns)]

    # --- the three plots, at update 0
    chance, bar = 1 / ALPHABET, float(threshold)
    acc_ticks = [(acc_y(v), f"{v:g}") for v in (0.0, 0.5, 1.0)]
    upd_ticks = [(x0 + w * u / budget, f"{u:,}") for u in _update_ticks(budget)]
    accuracy = _frame(upd_ticks, acc_ticks, "update", "held-out accuracy")
    accuracy += (
        f'<line class="rnnmem-inside-ref rnnmem-inside-chance" x1="{x0}" x2="{x0 + w}" y1="{acc_y(chance)}" '
        f'y2="{acc_y(chance)}"/><line class="rnnmem-inside-ref" x1="{x0}" x2="{x0 + w}" y1="{acc_y(bar)}" '
        f'y2="{acc_y(bar)}"/>'
    )
    for k, r in enumerate(results):
        pts = " ".join(f"{x:.1f},{acc_y(float(a))}" for x, a in zip(ux, r.scores))
        accuracy += _line("acc", k, pts, DASHES[k])
    accuracy += (
        f'<line class="rnnmem-inside-now" data-now="1" x1="{ux[0]}" x2="{ux[0]}" y1="{y0}" y2="{y0 + h}"/>'
        + "".join(
            f'<circle class="rnnmem-inside-dot rnnmem-inside-m{k}" data-dot="{k}" cx="{ux[0]}" cy="{dots[0][k]}" r="3.5"/>'
            for k in range(len(results))
        )
    )
    step_ticks = _step_ticks(T)
    log_ticks = _log_ticks(low, high)
    kept = _frame(step_ticks, log_ticks, "step t (1: the token)", f"kept of the token, M{_sub('t')}")
    kept += "".join(_line("memory", k, _points(xs, memory[0][k]), DASHES[k]) for k in range(len(results)))
    lands = _frame(step_ticks, log_ticks, f"step s ({T}: the query)", f"gradient landing, g{_sub('s')}")
    lands += "".join(_line("landing", k, _points(xs, landing[0][k]), DASHES[k]) for k in range(len(results)))
    who = _join([_label(s) for s in specs])
    note = (
        f'<p class="rnnmem-inside-note">Memory M<sub>t</sub>: the spread of the hidden states of the '
        f"{ALPHABET} versions of a sequence that differ only in the first token, relative to step 1. Gradient "
        f"g<sub>s</sub>: the mean norm of the gradient of the loss with respect to the input at step s, relative "
        f"to the query. Both on {sequences} sequences at lag {lag}, for the seed each model shows; a value "
        f"below {_superscript(low)} is drawn at the bottom.</p>"
    )
    plots = (
        _svg(
            "accuracy",
            f"Held-out accuracy against the update, 0 to {budget:,}, one line per model ({who}); a vertical "
            f"line marks the checkpoint chosen, a dotted line chance ({chance:g}) and a dashed one the "
            f"threshold {bar:g}.",
            accuracy,
        )
        + note
        + _svg(
            "memory",
            f"At the checkpoint chosen, for each model, the memory of the first token M_t against the step t, "
            f"from 1 (just read, M = 1) to {T}, on a logarithmic axis from {_superscript(low)} to "
            f"{_superscript(high)}.",
            kept,
        )
        + _svg(
            "landing",
            f"At the checkpoint chosen, for each model, the share g_s of the query's gradient that lands on the "
            f"input at step s, against s from 1 (the token) to {T} (the query, g = 1), on the same "
            f"logarithmic axis.",
            lands,
        )
    )

    # --- the table of the checkpoint's numbers
    rows = []
    for k, (spec, r) in enumerate(zip(specs, results)):
        swatch = (
            f'<svg class="rnnmem-inside-key" viewBox="0 0 28 8" aria-hidden="true">'
            f'<line class="rnnmem-inside-line rnnmem-inside-m{k}" x1="1" x2="27" y1="4" y2="4"'
            f"{f' stroke-dasharray={chr(34)}{DASHES[k]}{chr(34)}' if DASHES[k] else ''}/></svg>"
        )
        outcome = f"seed {r.seed}, " + (
            f"learned at update {r.success_step:,}" if r.success_step is not None else f"not in {budget:,} updates"
        )
        tds = "".join(
            f'<td><output data-cell="{k}-{j}" for="rnnmem-inside-slider">{html.escape(cells[0][k][j])}</output></td>'
            for j in range(3)
        )
        rows.append(
            f'<tr class="rnnmem-inside-m{k}"><th scope="row">{swatch}<span class="rnnmem-inside-name">'
            f"{_label(spec, 'html')}</span>"
            f'<span class="rnnmem-inside-seed">{html.escape(outcome)}</span></th>{tds}</tr>'
        )
    table = (
        '<div class="rnnmem-inside-table"><table class="rnnmem-inside-numbers" aria-live="polite">'
        "<thead><tr>"
        '<th scope="col">model, seed shown</th><th scope="col">held-out accuracy</th>'
        f'<th scope="col">kept at the query, M<sub>{T}</sub></th>'
        '<th scope="col">gradient on the token, g<sub>1</sub></th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
    colours = "".join(
        f"--rnnmem-inside-c{k}:{_colour(s)};--rnnmem-inside-d{k}:{dark_colour(_colour(s))};"
        for k, s in enumerate(specs)
    )
    data = json.dumps(
        {
            "labels": labels,
            "cells": cells,
            "xs": [round(x, 1) for x in xs],
            "memory": memory,
            "landing": landing,
            "now": ux,
            "dots": dots,
        },
        separators=(",", ":"),
        ensure_ascii=False,
    ).replace("</", "<\\/")
    uid = "rnnmem-inside"
    title = "Scrub through training: what each model keeps of the first token, and where its gradient lands"
    body = (
        f'<div class="rnnmem-inside" id="{uid}" style="{colours}">'
        f'<p class="rnnmem-inside-title" id="{uid}-title">{html.escape(title)}</p>'
        f'<div class="rnnmem-inside-control"><label for="{uid}-slider">Training checkpoint</label>'
        f'<input type="range" id="{uid}-slider" min="0" max="{C - 1}" step="1" value="0" disabled '
        f'aria-valuetext="{html.escape(labels[0], quote=True)}" aria-describedby="{uid}-title">'
        f'<output class="rnnmem-inside-at" for="{uid}-slider" aria-hidden="true">{html.escape(labels[0])}</output></div>'
        f'<noscript><p class="rnnmem-inside-nojs">The slider needs JavaScript. Shown here: update 0, before '
        f"training; the figure after this one draws {_count(len(checkpoints(first.eval_steps)))} checkpoints."
        "</p></noscript>"
        f"{table}"
        f'<div class="rnnmem-inside-plots">{plots}</div>'
        f'<script type="application/json" class="rnnmem-inside-data">{data}</script>'
        "</div>"
    )
    return InsideWidget(
        name="inside",
        title=title,
        control_label="Training checkpoint",
        states=states,
        start=0,
        readouts=readout_keys,
        curves=[],
        marks=[],
        svg="",
        description=f"Held-out accuracy, memory of the first token and gradient landing for {who}.",
        body=body,
    )


def _count(n: int) -> str:
    """A small count in words."""
    return {1: "one", 2: "two", 3: "three", 4: "four"}.get(n, str(n))


def _update_ticks(budget: int) -> list[int]:
    """Round update ticks: 0, the budget, and up to three in between."""
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000):
        if budget / step <= 4:
            break
    ticks = list(range(0, budget + 1, step))
    if budget - ticks[-1] > step / 2:
        ticks.append(budget)
    return ticks


# ---------------------------------------------------------------------------- the figure


@figure()
def inside_checkpoints(
    models: Sequence[Model] = MODELS,
    lag: PositiveInt = 20,
    seeds: PositiveInt = 5,
    hidden: PositiveInt = 16,
    steps: PositiveInt = 1500,
    threshold: Threshold = 0.9,
    sequences: PositiveInt = 4,
):
    """Both measures at four checkpoints (:func:`checkpoints`), one row per model: M_t left, g_s right."""
    specs = _check(models)
    results = watched(models, lag, seeds, hidden, steps, threshold, sequences)
    first = results[0]
    T = first.memory.shape[1]
    shown = checkpoints(first.eval_steps)
    styles = [("#8a8a8a", ":"), (PALETTE[1], "--"), (PALETTE[4], "-."), (PALETTE[0], "-")]
    height = 1.75 * len(specs) + 0.9
    fig, axes = new_figure(ncols=2, nrows=len(specs), height=height, sharex=True, sharey=True, squeeze=False)
    t = np.arange(1, T + 1)
    for row, (spec, r) in enumerate(zip(specs, results)):
        for col, values in enumerate((r.memory, r.landing)):
            ax = axes[row, col]
            for (colour, style), k in zip(styles, shown):
                ax.semilogy(
                    t,
                    np.maximum(values[k], FLOOR),
                    color=colour,
                    linestyle=style,
                    linewidth=1.6,
                    label=f"update {int(r.eval_steps[k]):,}",
                )
            ax.set_xlim(1, T)
        outcome = f"learned at update {r.success_step:,}" if r.success_step is not None else "did not learn"
        axes[row, 0].set_title(f"{_label(spec, 'tex')}, seed {r.seed}: {outcome}", loc="left")
        axes[row, 0].set_ylabel("kept, $M_t$")
        axes[row, 1].set_ylabel("gradient, $g_s$")
    for ax in axes[-1]:
        ax.set_xticks([1, 5, 10, 15, T] if T > 17 else [1, T])
    axes[-1, 0].set_xlabel("step t (1: the token)")
    axes[-1, 1].set_xlabel(f"step s ({T}: the query)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2)
    return fig, _values(specs, results, lag, sequences, threshold)

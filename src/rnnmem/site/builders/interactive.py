"""Interactive figures: slider widgets whose every state ``rnnmem`` computes at build time."""

from __future__ import annotations

import math

import numpy as np

from rnnmem import memory
from rnnmem.checks import OpenUnit, Positive, PositiveInt, Real

from ..registry import widget
from ..widgets import Curve, State, Widget, polyline

#: The plot's box inside the 360 x 206 viewBox: (x0, y0, width, height).
BOX = (44.0, 10.0, 290.0, 160.0)


def _x(n: float, max_steps: float) -> float:
    """Where step n sits on the logarithmic step axis, 0 (one step) to 1 (max_steps)."""
    return math.log10(n) / math.log10(max_steps)


def _axes(max_steps: int) -> str:
    x0, y0, w, h = BOX
    decades = range(0, int(round(math.log10(max_steps))) + 1)
    parts = [f'<rect class="rnnmem-w-frame" x="{x0}" y="{y0}" width="{w}" height="{h}"/>']
    for d in decades:
        x = x0 + w * d / math.log10(max_steps)
        parts.append(
            f'<line class="rnnmem-w-grid" x1="{x:.2f}" x2="{x:.2f}" y1="{y0}" y2="{y0 + h}"/>'
            f'<text class="rnnmem-w-tick" x="{x:.2f}" y="{y0 + h + 14}" text-anchor="middle">'
            f"{10**d:,}</text>"
        )
    for v in (0.0, 0.5, 1.0):
        y = y0 + (1 - v) * h
        parts.append(
            f'<line class="rnnmem-w-grid" x1="{x0}" x2="{x0 + w}" y1="{y:.2f}" y2="{y:.2f}"/>'
            f'<text class="rnnmem-w-tick" x="{x0 - 6}" y="{y + 4:.2f}" text-anchor="end">{v:g}</text>'
        )
    parts.append(
        f'<text class="rnnmem-w-axis" x="{x0 + w / 2}" y="{y0 + h + 29}" text-anchor="middle">'
        "steps n (logarithmic)</text>"
    )
    parts.append(
        f'<text class="rnnmem-w-axis" x="12" y="{y0 + h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 12 {y0 + h / 2})">f to the n</text>'
    )
    return "".join(parts) + "{curves}{marks}"


@widget()
def forget_bias_explorer(
    low: Real = -2.0,
    high: Real = 6.0,
    step: Positive = 0.25,
    start: Real = 1.0,
    max_steps: PositiveInt = 10_000,
    level: OpenUnit = 0.01,
    points: PositiveInt = 121,
):
    """A slider for the forget bias b_f: the gate σ(b_f), its e-fold and level horizons, and f^n.

    At zero input the forget gate is σ(b_f) (the forget-bias chapter, with its
    caveat that inputs spread the gates around this value). For each position
    of the slider: f = σ(b_f) (:func:`rnnmem.memory.sigmoid`), the e-fold
    horizon -1/ln f (:func:`rnnmem.memory.efold_horizon`), the steps until
    f^n falls to ``level`` (:func:`rnnmem.memory.horizon`), and the curve f^n
    (:func:`rnnmem.memory.decay`) over 1 to ``max_steps`` steps on a
    logarithmic axis, with the two horizons marked.
    """
    if high <= low:
        raise ValueError(f"high must be above low, got low={low}, high={high}")
    count = round((high - low) / step)
    if not math.isclose(low + count * step, high, abs_tol=1e-9) or count > 200:
        raise ValueError(f"step must divide high - low into at most 200 parts, got low={low}, high={high}, step={step}")
    biases = [round(low + i * step, 10) for i in range(count + 1)]
    if not any(math.isclose(b, start, abs_tol=1e-9) for b in biases):
        raise ValueError(f"start must be one of the slider's positions ({low} to {high} by {step}), got {start}")
    if max_steps < 10:
        raise ValueError(f"max_steps must be a whole number of at least 10, got {max_steps!r}")
    if not 2 <= points <= 1000:
        raise ValueError(f"points must be a whole number from 2 to 1000, got {points!r}")

    # Whole steps, spread evenly on the logarithmic axis (f^n is defined step by step).
    n = np.unique(np.round(np.logspace(0, math.log10(max_steps), points)).astype(int))
    xs = [_x(int(v), max_steps) for v in n]
    states = []
    for b in biases:
        f = float(memory.sigmoid(b))
        tau = float(memory.efold_horizon(f))
        reach = float(memory.horizon(f, level))
        curve = polyline(xs, [float(v) for v in memory.decay(f, n)], BOX)
        marks = {
            key: (BOX[0] + BOX[2] * _x(v, max_steps) if 1 <= v <= max_steps else None)
            for key, v in (("efold", tau), ("level", reach))
        }
        states.append(
            State(
                label=f"b_f = {b:.2f}, forget gate {f:.3f}",
                readouts={
                    "bias": f"{b:.2f}",
                    "gate": f"{f:.3f}",
                    "efold": f"{tau:,.1f} steps",
                    "level": f"{reach:,.1f} steps",
                },
                curves={"decay": curve},
                marks=marks,
            )
        )
    return Widget(
        name="forget-bias",
        title="Move the forget bias and watch the horizons move",
        control_label="Forget bias b<sub>f</sub>",
        states=states,
        start=next(i for i, b in enumerate(biases) if math.isclose(b, start, abs_tol=1e-9)),
        readouts=[
            ("bias", "b<sub>f</sub>"),
            ("gate", "forget gate σ(b<sub>f</sub>)"),
            ("efold", "e-fold horizon (dashed)"),
            ("level", f"steps to {level:.0%} (dotted)"),
        ],
        curves=[Curve("decay", "f to the n")],
        marks=["efold", "level"],
        svg=_axes(max_steps),
        description=(
            f"What is left of a signal after n steps, f to the n, for the forget gate f = sigma(b_f) at "
            f"the chosen bias, on a logarithmic step axis from 1 to {max_steps:,}; dashed lines mark the "
            f"e-fold horizon and the steps until {level:.0%} is left."
        ),
    )

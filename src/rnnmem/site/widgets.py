"""Interactive figures without a server: every state computed when the site is built.

A widget builder (registered with :func:`rnnmem.site.registry.widget`) returns
a :class:`Widget`: a control (a slider over a few dozen positions) and, for each
position, the text it shows and the SVG geometry it draws, all computed by
``rnnmem`` in Python. The page embeds them as JSON; the script
(``docs/javascripts/widgets.js``) only looks up the state of the slider's
position and writes it into the page. So a value the reader sees is a value
the book computed, and the first state is in the HTML itself, readable without
JavaScript.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Curve", "State", "Widget", "polyline"]


@dataclass(frozen=True)
class State:
    """What the widget shows at one slider position.

    ``label`` is the slider's value as read aloud (``aria-valuetext``);
    ``readouts`` maps each readout's key to its text; ``curves`` maps each SVG
    polyline's key to its ``points`` attribute; ``marks`` maps a vertical
    marker's key to its x coordinate (or None to hide it).
    """

    label: str
    readouts: dict[str, str]
    curves: dict[str, str] = field(default_factory=dict)
    marks: dict[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Curve:
    """One polyline of the widget's plot: its key, its legend text and its CSS class."""

    key: str
    legend: str
    css: str = "rnnmem-w-curve"


def polyline(xs: Sequence[float], ys: Sequence[float], box: tuple[float, float, float, float]) -> str:
    """An SVG ``points`` attribute for data ``xs, ys`` mapped into ``box`` = (x0, y0, width, height).

    x runs left to right over [0, 1] of the box, y bottom to top over [0, 1]
    (the caller maps its data to [0, 1] first). Two decimals: the same text on
    every machine.

    >>> polyline([0.0, 0.5, 1.0], [1.0, 0.5, 0.0], (10, 10, 100, 50))
    '10.00,10.00 60.00,35.00 110.00,60.00'
    """
    x0, y0, w, h = box
    return " ".join(f"{x0 + x * w:.2f},{y0 + (1 - y) * h:.2f}" for x, y in zip(xs, ys))


@dataclass(frozen=True)
class Widget:
    """A slider with readouts and a plot, every state precomputed.

    ``readouts`` is a list of (key, label) pairs shown above the plot, in order;
    ``svg`` is the plot's static part (axes, ticks, labels) with ``{curves}``
    and ``{marks}`` where the live polylines and markers go.
    """

    name: str
    title: str
    control_label: str
    states: list[State]
    start: int
    readouts: list[tuple[str, str]]
    curves: list[Curve]
    marks: list[str]
    svg: str
    description: str

    def __post_init__(self) -> None:
        if not self.states:
            raise ValueError("states must not be empty: a widget shows at least one state")
        if not 0 <= self.start < len(self.states):
            raise ValueError(f"start must be an index into states, 0 to {len(self.states) - 1}, got {self.start}")
        keys = {k for k, _ in self.readouts}
        for i, s in enumerate(self.states):
            if set(s.readouts) != keys:
                raise ValueError(f"state {i} has readouts {sorted(s.readouts)}; the widget shows {sorted(keys)}")
            if set(s.curves) != {c.key for c in self.curves}:
                raise ValueError(
                    f"state {i} has curves {sorted(s.curves)}; the widget draws {sorted(c.key for c in self.curves)}"
                )

    def to_html(self) -> str:
        """The widget's HTML: the first state rendered, all states as JSON for the script."""
        first = self.states[self.start]
        uid = f"rnnmem-w-{self.name}"
        readouts = "".join(
            f'<div class="rnnmem-w-readout"><dt>{label}</dt>'
            f'<dd><output data-key="{key}" for="{uid}-slider">{html.escape(first.readouts[key])}</output></dd></div>'
            for key, label in self.readouts
        )
        curves = "".join(
            f'<polyline class="{c.css}" data-key="{c.key}" points="{first.curves[c.key]}"/>' for c in self.curves
        )
        marks = "".join(self._mark(k, first.marks.get(k)) for k in self.marks)
        data = json.dumps(
            {
                "labels": [s.label for s in self.states],
                "readouts": [s.readouts for s in self.states],
                "curves": [s.curves for s in self.states],
                "marks": [s.marks for s in self.states],
            },
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        data = data.replace("</", "<\\/")
        svg = self.svg.replace("{curves}", curves).replace("{marks}", marks)
        return (
            f'<div class="rnnmem-widget" id="{uid}" data-widget="{self.name}">'
            f'<p class="rnnmem-w-title" id="{uid}-title">{html.escape(self.title)}</p>'
            f'<div class="rnnmem-w-control"><label for="{uid}-slider">{self.control_label}</label>'
            f'<input type="range" id="{uid}-slider" min="0" max="{len(self.states) - 1}" step="1" '
            f'value="{self.start}" aria-valuetext="{html.escape(first.label, quote=True)}" '
            f'aria-describedby="{uid}-title"></div>'
            f'<dl class="rnnmem-w-readouts" aria-live="polite">{readouts}</dl>'
            f'<svg class="rnnmem-w-plot" viewBox="0 0 360 206" role="img" '
            f'aria-label="{html.escape(self.description, quote=True)}">{svg}</svg>'
            f'<script type="application/json" class="rnnmem-w-data">{data}</script>'
            f"</div>"
        )

    @staticmethod
    def _mark(key: str, x: float | None) -> str:
        hidden = ' visibility="hidden"' if x is None else ""
        x = 0.0 if x is None else x
        return (
            f'<line class="rnnmem-w-mark rnnmem-w-mark-{key}" data-key="{key}" x1="{x:.2f}" x2="{x:.2f}" '
            f'y1="10" y2="170"{hidden}/>'
        )

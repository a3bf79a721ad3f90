"""Interactive figures without a server: every state computed when the site is built.

A widget builder (registered with :func:`rnnmem.site.registry.widget`) returns
a :class:`Widget`: one or more controls (sliders and groups of radio buttons,
each over a few positions) and, for the positions, the text the widget shows
and the SVG geometry it draws, all computed by ``rnnmem`` in Python. The page
embeds them as JSON; the script (``docs/javascripts/widgets.js``) only looks
up the state of the controls' positions and writes it into the page. So a
value the reader sees is a value the book computed, and the starting state is
in the HTML itself, readable without JavaScript (the controls are disabled
there, and a note says so).

**One slider** is the simple case: ``control_label``, a list of ``states`` (one
per position) and ``start``.

**Several controls.** ``controls`` lists them (:class:`Control`) and ``layers``
says what depends on which: a :class:`Layer` holds one :class:`State` per
combination of the positions of its controls, so a curve that depends on one
control is stored once per position of that control, not once per combination
of all of them. Each readout, curve, mark and shape is given by exactly one
layer.

What a state may set: the text of a readout (``<output>``), the points of a
polyline (:class:`Curve`), the x of a vertical marker, and any attribute of a
:class:`Shape` (a dot, a line, a text), or hide it.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RADIO", "SLIDER", "Control", "Curve", "Layer", "Shape", "State", "Widget", "polyline", "scale"]

SLIDER = "slider"
RADIO = "radio"
#: The key of the one slider of a widget given as ``control_label`` and ``states``.
ONE = "slider"
_KEY = re.compile(r"[a-z][a-z0-9_-]*\Z")
#: The plot's size in SVG units, unless a widget says otherwise.
VIEW = (360.0, 206.0)


@dataclass(frozen=True)
class State:
    """What the widget shows at one position of its controls (or of a layer's controls).

    ``label`` is the slider's value as read aloud (``aria-valuetext``), for a
    widget of one slider; ``readouts`` maps each readout's key to its text;
    ``curves`` maps each polyline's key to its ``points`` attribute, or to its
    y coordinates when the :class:`Curve` gives the x ones; ``marks`` maps a
    vertical marker's key to its x coordinate (None hides it); ``shapes`` maps
    a :class:`Shape`'s key to the attributes to set (``"text"`` is its text),
    or None to hide it.
    """

    label: str = ""
    readouts: dict[str, str] = field(default_factory=dict)
    curves: dict[str, str | Sequence[float]] = field(default_factory=dict)
    marks: dict[str, float | None] = field(default_factory=dict)
    shapes: dict[str, dict[str, str] | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Curve:
    """One polyline of the widget's plot: its key, its legend text (HTML) and its CSS class.

    ``xs``: the x coordinates, when every state gives the same ones; the states
    then give only the y coordinates, one per x (half the data).
    """

    key: str
    legend: str
    css: str = "rnnmem-w-curve"
    xs: tuple[float, ...] = ()

    def points(self, value: str | Sequence[float]) -> str:
        """The ``points`` attribute of a state's value for this curve."""
        if isinstance(value, str):
            return value
        return " ".join(f"{_num(x)},{_num(y)}" for x, y in zip(self.xs, value))


@dataclass(frozen=True)
class Shape:
    """An SVG element that the states move, change or hide: a dot, a line, a text.

    ``tag`` is the SVG element (``circle``, ``line``, ``rect``, ``text``,
    ``polyline``), ``css`` its class, ``attrs`` the attributes no state changes.
    A state's attribute ``"text"`` is the element's text.
    """

    key: str
    tag: str
    css: str
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Control:
    """One control: a slider over ``positions``, or a group of radio buttons, one per position.

    ``label`` (HTML) names what it moves; ``positions`` are the positions' texts,
    read aloud for a slider (``aria-valuetext``) and shown beside it, and each
    radio button's label; ``scale`` is HTML drawn under a slider (its labelled
    ticks, :func:`scale`).
    """

    key: str
    label: str
    positions: tuple[str, ...]
    start: int = 0
    kind: str = SLIDER
    scale: str = ""


@dataclass(frozen=True)
class Layer:
    """What depends on the controls ``by``: one state per combination of their positions.

    The states are in the order of ``itertools.product`` over the controls'
    positions (the last control's position changes fastest).
    """

    by: tuple[str, ...]
    states: tuple[State, ...]


def _num(value: float) -> str:
    """A coordinate with at most two decimals, trailing zeros dropped (the same text on every machine)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


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


def scale(rows: Sequence[Sequence[tuple[float, float | None, str, str]]]) -> str:
    """HTML drawn under a slider: rows of labels placed at fractions of its range.

    Each item of a row is ``(start, end, text, css)``: a label centred at the
    fraction ``start`` (``end`` None), or a bar from ``start`` to ``end`` with
    the text in it; a label at either end is kept inside the slider's width.
    The scale is hidden from screen readers: what it shows must
    also be said in words (the slider's values, a readout or a note).

    >>> scale([[(0.0, None, "-2", ""), (0.5, 1.0, "range", "rnnmem-w-bar")]])[:64]
    '<div class="rnnmem-w-scale" aria-hidden="true"><div class="rnnme'
    """
    out = []
    for row in rows:
        items = []
        for start, end, text, css in row:
            style = f"left:{100 * start:.2f}%" + ("" if end is None else f";width:{100 * (end - start):.2f}%")
            edge = "" if end is not None else "rnnmem-w-first" if start <= 0 else "rnnmem-w-last" if start >= 1 else ""
            kind = " ".join(filter(None, ["rnnmem-w-at" if end is None else "rnnmem-w-span", edge, css]))
            items.append(f'<span class="{kind}" style="{style}">{html.escape(text)}</span>')
        out.append('<div class="rnnmem-w-scale-row">' + "".join(items) + "</div>")
    return '<div class="rnnmem-w-scale" aria-hidden="true">' + "".join(out) + "</div>"


@dataclass(frozen=True, kw_only=True)
class Widget:
    """Controls, readouts and a plot, every state precomputed.

    ``readouts`` is a list of (key, label) pairs shown above the plot, in order;
    ``svg`` is the plot's static part (axes, ticks, labels) with ``{curves}``,
    ``{marks}`` and ``{shapes}`` where the live elements go (shapes last if
    it has no place for them); ``description`` says what the plot shows
    (its ``aria-label``); ``legend`` lists (CSS class, HTML) pairs, a line
    drawn in that class and its text, shown under the plot; ``note`` (HTML)
    is printed under it.
    """

    name: str
    title: str
    readouts: list[tuple[str, str]]
    curves: list[Curve]
    marks: list[str]
    svg: str
    description: str
    control_label: str = ""
    states: list[State] = field(default_factory=list)
    start: int = 0
    controls: list[Control] = field(default_factory=list)
    layers: list[Layer] = field(default_factory=list)
    shapes: list[Shape] = field(default_factory=list)
    view: tuple[float, float] = VIEW
    legend: list[tuple[str, str]] = field(default_factory=list)
    note: str = ""

    def __post_init__(self) -> None:
        if not self.controls:
            if not self.states:
                raise ValueError("states must not be empty: a widget shows at least one state")
            if not 0 <= self.start < len(self.states):
                raise ValueError(f"start must be an index into states, 0 to {len(self.states) - 1}, got {self.start}")
        elif self.states:
            raise ValueError("states must be empty when controls are given: the layers hold the states")
        controls, layers = self.all_controls(), self.all_layers()
        keys = [c.key for c in controls]
        if len(set(keys)) != len(keys):
            raise ValueError(f"controls must have distinct keys, got {keys}")
        for c in controls:
            if not _KEY.match(c.key):
                raise ValueError(f"a control's key must be lower-case letters, digits, '-' and '_', got {c.key!r}")
            if c.kind not in (SLIDER, RADIO):
                raise ValueError(f"control {c.key!r}: kind must be {SLIDER!r} or {RADIO!r}, got {c.kind!r}")
            if not c.positions or (c.kind == RADIO and len(c.positions) < 2):
                raise ValueError(
                    f"control {c.key!r} must have positions (a radio group at least two), got {c.positions}"
                )
            if not 0 <= c.start < len(c.positions):
                raise ValueError(f"control {c.key!r}: start must be 0 to {len(c.positions) - 1}, got {c.start}")
        if not layers:
            raise ValueError("layers must not be empty: a widget shows at least one state")
        sizes = {c.key: len(c.positions) for c in controls}
        for k, layer in enumerate(layers):
            if len(set(layer.by)) != len(layer.by) or not set(layer.by) <= set(keys):
                raise ValueError(f"layer {k}: by must name distinct controls among {keys}, got {layer.by}")
            wanted = math.prod(sizes[b] for b in layer.by)
            if len(layer.states) != wanted:
                raise ValueError(
                    f"layer {k} depends on {list(layer.by)} and must have {wanted} states, got {len(layer.states)}"
                )
        curves = {c.key: c for c in self.curves}
        for what, declared in (
            ("readouts", [k for k, _ in self.readouts]),
            ("curves", list(curves)),
            ("marks", list(self.marks)),
            ("shapes", [s.key for s in self.shapes]),
        ):
            self._check_keys(layers, what, declared)
        for layer in layers:
            for i, s in enumerate(layer.states):
                for key, value in s.curves.items():
                    xs = curves[key].xs
                    if isinstance(value, str) == bool(xs) or (xs and len(value) != len(xs)):
                        raise ValueError(
                            f"state {i}: curve {key!r} must be "
                            + (f"{len(xs)} y coordinates, one per x" if xs else "a points attribute (text)")
                        )

    @staticmethod
    def _check_keys(layers: list[Layer], what: str, declared: list[str]) -> None:
        owner: dict[str, int] = {}
        for k, layer in enumerate(layers):
            first = set(getattr(layer.states[0], what))
            for i, s in enumerate(layer.states):
                if set(getattr(s, what)) != first:
                    raise ValueError(
                        f"layer {k}, state {i} has {what} {sorted(getattr(s, what))}; its first state has {sorted(first)}"
                    )
            for key in first:
                if key in owner:
                    raise ValueError(f"{what} {key!r} is given by layers {owner[key]} and {k}: give it in one")
                owner[key] = k
        if set(owner) != set(declared):
            raise ValueError(f"the states have {what} {sorted(owner)}; the widget shows {sorted(declared)}")

    # -- the controls and layers, a widget of one slider included
    def all_controls(self) -> list[Control]:
        """The controls; for a widget of one slider, that slider (its positions the states' labels)."""
        if self.controls:
            return list(self.controls)
        labels = tuple(s.label for s in self.states)
        return [Control(ONE, self.control_label, labels, self.start)] if labels else []

    def all_layers(self) -> list[Layer]:
        """The layers; for a widget of one slider, one layer of its states."""
        return list(self.layers) if self.controls else [Layer((ONE,), tuple(self.states))]

    def first(self) -> State:
        """Everything the widget shows at the controls' starting positions, merged into one state."""
        return self.state_at({c.key: c.start for c in self.all_controls()})

    def state_at(self, positions: Mapping[str, int]) -> State:
        """Everything the widget shows at ``positions`` (control key -> position), merged into one state."""
        merged = State(label="")
        for layer in self.all_layers():
            s = layer.states[self._index(layer, positions)]
            merged.readouts.update(s.readouts)
            merged.curves.update(s.curves)
            merged.marks.update(s.marks)
            merged.shapes.update(s.shapes)
        return merged

    def _index(self, layer: Layer, positions: Mapping[str, int]) -> int:
        sizes = {c.key: len(c.positions) for c in self.all_controls()}
        index = 0
        for key in layer.by:
            index = index * sizes[key] + positions[key]
        return index

    def data(self) -> dict[str, Any]:
        """What the script reads: the controls' spoken values, the layers' states and the curves' shared xs."""

        def compact(s: State) -> dict[str, Any]:
            parts: dict[str, dict[str, Any]] = {"r": s.readouts, "c": s.curves, "m": s.marks, "s": s.shapes}
            return {k: dict(v) for k, v in parts.items() if v}

        return {
            "controls": [{"key": c.key, "kind": c.kind, "labels": list(c.positions)} for c in self.all_controls()],
            "layers": [
                {"by": list(layer.by), "states": [compact(s) for s in layer.states]} for layer in self.all_layers()
            ],
            "xs": {c.key: [float(_num(x)) for x in c.xs] for c in self.curves if c.xs},
        }

    # -- HTML
    def to_html(self) -> str:
        """The widget's HTML: the starting state rendered, every state as JSON for the script."""
        uid = f"rnnmem-w-{self.name}"
        controls = self.all_controls()
        first = self.first()
        ids = {c.key: f"{uid}-{c.key}" for c in controls}
        owner = {}
        for layer in self.all_layers():
            for key in layer.states[0].readouts:
                owner[key] = " ".join(ids[b] for b in layer.by)
        readouts = "".join(
            f'<div class="rnnmem-w-readout"><dt>{label}</dt>'
            f'<dd><output data-key="{key}" for="{owner[key]}">{html.escape(first.readouts[key])}</output></dd></div>'
            for key, label in self.readouts
        )
        curves = "".join(
            f'<polyline class="{c.css}" data-curve="{c.key}" points="{c.points(first.curves[c.key])}"/>'
            for c in self.curves
        )
        marks = "".join(self._mark(k, first.marks.get(k)) for k in self.marks)
        shapes = "".join(self._shape(s, first.shapes.get(s.key)) for s in self.shapes)
        data = json.dumps(self.data(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        data = data.replace("</", "<\\/")
        svg = self.svg.replace("{curves}", curves).replace("{marks}", marks)
        svg = svg.replace("{shapes}", shapes) if "{shapes}" in svg else svg + shapes
        shown = "; ".join(
            f"{_plain(c.label)}: {c.positions[c.start]}"
            if c.kind == RADIO or len(controls) > 1
            else c.positions[c.start]
            for c in controls
        )
        legend = ""
        if self.legend:
            legend = (
                '<ul class="rnnmem-w-legend">'
                + "".join(
                    f'<li><svg viewBox="0 0 28 8" aria-hidden="true"><line class="{css}" x1="1" x2="27" y1="4" '
                    f'y2="4"/></svg><span>{text}</span></li>'
                    for css, text in self.legend
                )
                + "</ul>"
            )
        note = f'<p class="rnnmem-w-note">{self.note}</p>' if self.note else ""
        return (
            f'<div class="rnnmem-widget" id="{uid}" data-widget="{self.name}">'
            f'<p class="rnnmem-w-title" id="{uid}-title">{html.escape(self.title)}</p>'
            f'<div class="rnnmem-w-controls">{"".join(self._control(c, uid, ids[c.key]) for c in controls)}</div>'
            f'<noscript><p class="rnnmem-w-nojs">The controls need JavaScript. Shown here: '
            f"{html.escape(shown)}.</p></noscript>"
            f'<dl class="rnnmem-w-readouts" aria-live="polite">{readouts}</dl>'
            f'<svg class="rnnmem-w-plot" viewBox="0 0 {self.view[0]:g} {self.view[1]:g}" role="img" '
            f'aria-label="{html.escape(self.description, quote=True)}">{svg}</svg>'
            f"{legend}{note}"
            f'<script type="application/json" class="rnnmem-w-data">{data}</script>'
            f"</div>"
        )

    @staticmethod
    def _control(c: Control, uid: str, cid: str) -> str:
        if c.kind == SLIDER:
            spoken = html.escape(c.positions[c.start], quote=True)
            return (
                f'<div class="rnnmem-w-control"><label for="{cid}">{c.label}</label>'
                f'<output class="rnnmem-w-value" data-value="{c.key}" for="{cid}" aria-hidden="true">'
                f"{html.escape(c.positions[c.start])}</output>"
                f'<input type="range" class="rnnmem-w-slider" id="{cid}" data-control="{c.key}" min="0" '
                f'max="{len(c.positions) - 1}" step="1" value="{c.start}" aria-valuetext="{spoken}" '
                f'aria-describedby="{uid}-title" disabled>{c.scale}</div>'
            )
        buttons = "".join(
            f'<label><input type="radio" name="{cid}" value="{k}" data-control="{c.key}"'
            f"{' checked' if k == c.start else ''} disabled><span>{html.escape(text)}</span></label>"
            for k, text in enumerate(c.positions)
        )
        return (
            f'<fieldset class="rnnmem-w-control rnnmem-w-choices" id="{cid}"><legend>{c.label}</legend>'
            f'<div class="rnnmem-w-options">{buttons}</div></fieldset>'
        )

    @staticmethod
    def _mark(key: str, x: float | None) -> str:
        hidden = ' visibility="hidden"' if x is None else ""
        x = 0.0 if x is None else x
        return (
            f'<line class="rnnmem-w-mark rnnmem-w-mark-{key}" data-mark="{key}" x1="{x:.2f}" x2="{x:.2f}" '
            f'y1="10" y2="170"{hidden}/>'
        )

    @staticmethod
    def _shape(shape: Shape, attrs: Mapping[str, str] | None) -> str:
        fixed = {"class": shape.css, **shape.attrs}
        live = dict(attrs or {})
        text = html.escape(live.pop("text", fixed.pop("text", "")))
        merged = {**fixed, **live}
        if attrs is None:
            merged["visibility"] = "hidden"
        written = "".join(f' {k}="{html.escape(str(v), quote=True)}"' for k, v in merged.items())
        return f'<{shape.tag} data-shape="{shape.key}"{written}>{text}</{shape.tag}>'


def _plain(markup: str) -> str:
    """HTML reduced to its text (a control's label in the note for readers without JavaScript)."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))

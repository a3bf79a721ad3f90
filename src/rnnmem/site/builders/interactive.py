"""Interactive figures: widgets whose every state ``rnnmem`` computes at build time.

* :func:`forget_bias_explorer` (the forget-bias chapter): the forget bias moved,
  the share of the carry that survives n steps on logarithmic axes, a lag with
  the share that arrives there, and the known starting biases marked.
* :func:`lstm_step_explorer` (the chapter on gates): the four activations of
  one LSTM unit chosen, its cell and output drawn over many steps.
* :func:`gru_convention_toggle` (the chapter on gates): the two update
  conventions of the GRU, one state computed under either.
* :func:`tanh_distance_explorer` (following an error backward): the recurrent
  weight of a tanh unit moved, and what a small change is multiplied by as it
  travels back, with the slope of tanh and without it.

Every number and coordinate is computed here, in Python, from ``rnnmem``; the
script only shows the state of the controls' positions
(:mod:`rnnmem.site.widgets`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

import numpy as np

from rnnmem import bptt, gate_arithmetic, init, jacobians, memory
from rnnmem.checks import Check, Finite, OpenUnit, Positive, PositiveInt, Real, check_finite, check_positive

from ..registry import widget
from ..widgets import RADIO, Control, Curve, Layer, Shape, State, Widget, polyline, scale

#: The plot's box inside the 360 x 206 viewBox: (x0, y0, width, height).
BOX = (50.0, 10.0, 284.0, 160.0)
VIEW = (360.0, 206.0)
MINUS = "\u2212"
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


# ---------------------------------------------------------------------------- argument rules


def _closed(low: float, high: float, what: str) -> Callable[[str, Any], float]:
    def check(name: str, value: Any) -> float:
        v = float(check_finite(name, value))
        if not low <= v <= high:
            raise ValueError(f"{name} must be {what} from {low:g} to {high:g} (inclusive), got {value!r}")
        return v

    return check


#: A gate value supplied to the cell, the limits 0 and 1 included.
GateValue = Annotated[float, Check(_closed(0.0, 1.0, "a gate value"), "gate values from 0 to 1")]
#: A candidate value supplied to the cell, the limits -1 and 1 included.
CandidateValue = Annotated[float, Check(_closed(-1.0, 1.0, "a candidate value"), "candidate values from -1 to 1")]


def _t_max(name: str, value: Any) -> float:
    t = float(check_positive(name, value))
    if t <= 2.0:
        raise ValueError(f"{name} must be greater than 2 (chrono draws u from [1, t_max - 1]), got {value!r}")
    return t


#: Chrono's longest lifetime: a number greater than 2.
TMax = Annotated[float, Check(_t_max, "numbers greater than 2")]


def _grid(low: float, high: float, step: float, most: int = 200) -> list[float]:
    """The positions low, low + step, ..., high of a slider; ValueError naming the arguments if step does not fit."""
    if high <= low:
        raise ValueError(f"high must be above low, got low={low}, high={high}")
    count = round((high - low) / step)
    if not math.isclose(low + count * step, high, abs_tol=1e-9) or count > most:
        raise ValueError(
            f"step must divide high - low into at most {most} parts, got low={low}, high={high}, step={step}"
        )
    return [round(low + k * step, 10) for k in range(count + 1)]


def _position(values: Sequence[float], value: float, name: str, where: str) -> int:
    """The index of ``value`` among a control's positions; ValueError naming ``name`` if it is not one."""
    for k, v in enumerate(values):
        if math.isclose(v, value, abs_tol=1e-9):
            return k
    raise ValueError(f"{name} must be one of {where}, got {value!r}")


def _distinct(name: str, values: Sequence[float], most: int) -> list[float]:
    """A control's values, checked to be increasing and at most ``most``; ValueError naming ``name`` if not."""
    out = [float(v) for v in values]
    if len(out) > most or any(b <= a for a, b in zip(out, out[1:])):
        raise ValueError(f"{name} must be increasing values, at most {most} of them, got {list(values)}")
    return out


# ---------------------------------------------------------------------------- words and SVG


def _signed(text: str) -> str:
    """A number's text with a typographic minus."""
    return text.replace("-", MINUS)


def _fixed(value: float, decimals: int = 2) -> str:
    """``value`` to ``decimals`` places, never "-0.00", with a typographic minus."""
    v = round(value, decimals)
    return _signed(f"{v + 0.0:,.{decimals}f}")


def _short(value: float, decimals: int = 2) -> str:
    """``value`` to at most ``decimals`` places without padding zeros ("1", "6.91"), with a typographic minus."""
    text = _fixed(value, decimals)
    return text.rstrip("0").rstrip(".") if "." in text else text


def _power(exponent: int) -> str:
    """10 to a whole power, in Unicode ("1" for the zeroth)."""
    return "1" if exponent == 0 else "10" + str(exponent).translate(_SUPERSCRIPT)


def _sci(value: float, decimals: int = 1) -> str:
    """A small or large number as mantissa × 10 to a power ("3.7 × 10⁻⁵")."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    mantissa, exponent = f"{value:.{decimals}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def _share(value: float) -> str:
    """A share of a signal: three decimals from 0.01 up, a power of ten below, "under 10⁻³⁰⁷" when it underflows."""
    if value >= 0.01:
        return f"{value:.3f}"
    if value > 0:
        return _sci(value)
    return "under 10" + str(-307).translate(_SUPERSCRIPT)


def _frame(
    box: tuple[float, float, float, float],
    xticks: Sequence[tuple[float, str]],
    yticks: Sequence[tuple[float, str]],
    xlabel: str,
    ylabel: str,
    grid: Sequence[float] = (),
) -> str:
    """A plot's frame, grid, ticks (given in SVG coordinates) and axis labels; ``grid``: more horizontal grid lines."""
    x0, y0, w, h = box
    parts = [f'<rect class="rnnmem-w-frame" x="{x0:g}" y="{y0:g}" width="{w:g}" height="{h:g}"/>']
    for x, text in xticks:
        parts.append(
            f'<line class="rnnmem-w-grid" x1="{x:.2f}" x2="{x:.2f}" y1="{y0:g}" y2="{y0 + h:g}"/>'
            f'<text class="rnnmem-w-tick" x="{x:.2f}" y="{y0 + h + 14:g}" text-anchor="middle">{text}</text>'
        )
    for y in grid:
        parts.append(f'<line class="rnnmem-w-grid" x1="{x0:g}" x2="{x0 + w:g}" y1="{y:.2f}" y2="{y:.2f}"/>')
    for y, text in yticks:
        parts.append(
            f'<line class="rnnmem-w-grid" x1="{x0:g}" x2="{x0 + w:g}" y1="{y:.2f}" y2="{y:.2f}"/>'
            f'<text class="rnnmem-w-tick" x="{x0 - 6:g}" y="{y + 4:.2f}" text-anchor="end">{text}</text>'
        )
    parts.append(
        f'<text class="rnnmem-w-axis" x="{x0 + w / 2:g}" y="{y0 + h + 29:g}" text-anchor="middle">{xlabel}</text>'
        f'<text class="rnnmem-w-axis" x="12" y="{y0 + h / 2:g}" text-anchor="middle" '
        f'transform="rotate(-90 12 {y0 + h / 2:g})">{ylabel}</text>'
    )
    return "".join(parts)


def _log_y(value: float, low: int, high: int, box: tuple[float, float, float, float] = BOX) -> float:
    """The SVG y of a positive value on a logarithmic axis from 10^low (bottom) to 10^high (top)."""
    _, y0, _, h = box
    return y0 + (1 - (math.log10(value) - low) / (high - low)) * h


def _cut_log(
    xs: Sequence[float], values: Sequence[float], low: int, high: int, box: tuple[float, float, float, float] = BOX
) -> str:
    """Points of a positive curve on a logarithmic y axis, stopped where it falls below 10^low.

    The last point drawn is where the segment that leaves the axis crosses its
    bottom, found on the logarithmic scale (the curve is straight there between
    two points), so the line ends on the axis instead of at a point below it.
    """
    pts: list[tuple[float, float]] = []
    for k, (x, v) in enumerate(zip(xs, values)):
        if v > 0 and math.log10(v) >= low:
            pts.append((x, _log_y(v, low, high, box)))
            continue
        if k and pts:
            a = math.log10(values[k - 1])
            b = math.log10(v) if v > 0 else -math.inf
            t = 1.0 if b == -math.inf else (a - low) / (a - b)
            pts.append((xs[k - 1] + t * (x - xs[k - 1]), box[1] + box[3]))
        break
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)


# ---------------------------------------------------------------------------- the forget bias

#: The lags the forget-bias widget offers: 1, 2, 5 in each decade.
LAGS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000)


def _x(n: float, max_steps: float) -> float:
    """Where step n sits on the logarithmic step axis, 0 (one step) to 1 (max_steps)."""
    return math.log10(n) / math.log10(max_steps)


def _pytorch_mean_bias() -> float:
    """The mean of PyTorch's default forget bias, from its density (:func:`rnnmem.init.pytorch_forget_bias_density`).

    The density is symmetric about zero for every width; one unit is enough.
    The mean is taken on a grid over its support, rounded to six places.
    """
    b = np.linspace(-2.0, 2.0, 4001)
    density = init.pytorch_forget_bias_density(b, 1)
    return round(float(np.sum(b * density) / np.sum(density)), 6) + 0.0


def _decay_svg(max_steps: int, decades: int, level: float) -> str:
    x0, y0, w, h = BOX
    xticks = [(x0 + w * d / math.log10(max_steps), f"{10**d:,}") for d in range(int(math.log10(max_steps)) + 1)]
    every = 1 if decades <= 4 else 2 if decades <= 8 else 3
    yticks = [(_log_y(10.0**-d, -decades, 0), _power(-d)) for d in range(0, decades + 1, every)]
    grid = [_log_y(10.0**-d, -decades, 0) for d in range(decades + 1) if d % every]
    parts = [_frame(BOX, xticks, yticks, "steps n (logarithmic)", "share left, f to the n", grid)]
    for key, value, label in (("efold", math.exp(-1.0), "1/e"), ("level", level, f"{level:.0%}")):
        y = _log_y(value, -decades, 0)
        parts.append(
            f'<line class="rnnmem-w-ref rnnmem-w-ref-{key}" x1="{x0:g}" x2="{x0 + w:g}" y1="{y:.2f}" y2="{y:.2f}"/>'
            f'<text class="rnnmem-w-tick rnnmem-w-label" x="{x0 + w - 4:g}" y="{y + 14:.2f}" text-anchor="end">'
            f"{label}</text>"
        )
    return "".join(parts) + "{curves}{marks}{shapes}"


def _bias_scale(
    low: float, high: float, pins: Sequence[tuple[float, str, int]], chrono: tuple[float, float], t_max: float
) -> str:
    """The slider's scale: whole biases, the named ones on rows of their own, and chrono's range as a bar."""

    def at(b: float) -> float:
        return (min(max(b, low), high) - low) / (high - low)

    rows: list[list[tuple[float, float | None, str, str]]] = [
        [(at(b), None, _signed(f"{b:g}"), "") for b in range(math.ceil(low), math.floor(high) + 1)]
    ]
    for row in sorted({r for _, _, r in pins}):
        rows.append([(at(b), None, text, "rnnmem-w-pin") for b, text, r in pins if r == row and low <= b <= high])
    lo, hi = max(chrono[0], low), min(chrono[1], high)
    if lo < hi:
        rows.append([(at(lo), at(hi), f"chrono, Tₘₐₓ = {t_max:,g}", "rnnmem-w-bar")])
    return scale(rows)


@widget()
def forget_bias_explorer(
    low: Real = -2.0,
    high: Real = 6.0,
    step: Positive = 0.25,
    start: Real = 1.0,
    max_steps: PositiveInt = 10_000,
    level: OpenUnit = 0.01,
    points: PositiveInt = 121,
    lags: Sequence[PositiveInt] = LAGS,
    lag: PositiveInt = 100,
    t_max: TMax = 1000.0,
    decades: PositiveInt = 6,
):
    """Two sliders: the forget bias b_f and a lag L; the share f^n of the carry left after n steps, on logarithmic axes.

    At zero input the forget gate is σ(b_f) (the forget-bias chapter, with its
    caveat that inputs spread the gates around this value). For each bias:
    f = σ(b_f) (:func:`rnnmem.memory.sigmoid`), the e-fold horizon -1/ln f
    (:func:`rnnmem.memory.efold_horizon`), the steps until f^n falls to
    ``level`` (:func:`rnnmem.memory.horizon`), and the curve f^n
    (:func:`rnnmem.memory.decay`) over 1 to ``max_steps`` steps, from 1 down
    to 10^-``decades``, the horizons marked. For each bias and lag, the share
    f^L that arrives at the lag, a dot on the curve. Under the slider, the
    biases of PyTorch's default (its mean, from
    :func:`rnnmem.init.pytorch_forget_bias_density`), of Keras'
    ``unit_forget_bias`` (:func:`rnnmem.init.initial_forget_biases`), b_f = 2,
    and chrono's range for ``t_max``, the biases of the mean lifetimes 2 and
    ``t_max`` (:func:`rnnmem.init.forget_bias`).
    """
    biases = _grid(low, high, step)
    first = _position(biases, start, "start", f"the slider's positions ({low} to {high} by {step})")
    if max_steps < 10:
        raise ValueError(f"max_steps must be a whole number of at least 10, got {max_steps!r}")
    if not 2 <= points <= 1000:
        raise ValueError(f"points must be a whole number from 2 to 1000, got {points!r}")
    lag_list = [int(v) for v in _distinct("lags", lags, 40)]
    if lag_list[-1] > max_steps:
        raise ValueError(f"lags must be at most max_steps ({max_steps:,}), got {lag_list[-1]:,}")
    lag_at = _position(lag_list, lag, "lag", f"the lags {lag_list}")
    if decades > 30:
        raise ValueError(f"decades must be a whole number from 1 to 30, got {decades!r}")

    floor = 10.0**-decades
    # Whole steps, spread evenly on the logarithmic axis (f^n is defined step by step).
    n = np.unique(np.round(np.logspace(0, math.log10(max_steps), points)).astype(int))
    x0, y0, w, h = BOX
    xs = [x0 + w * _x(int(v), max_steps) for v in n]

    def at_x(steps: float) -> float:
        return x0 + w * _x(steps, max_steps)

    mean = _pytorch_mean_bias()
    keras = float(init.initial_forget_biases("keras", 1)[0])
    chrono = (float(init.forget_bias(mean_lifetime=2.0)), float(init.forget_bias(mean_lifetime=t_max)))
    named = [
        (mean, "PyTorch's default, on average"),
        (keras, "Keras' unit_forget_bias"),
        (2.0, "b_f = 2"),
    ]

    bias_states, pair_states = [], []
    for b in biases:
        f = float(memory.sigmoid(b))
        tau = float(memory.efold_horizon(f))
        reach = float(memory.horizon(f, level))
        curve = [float(v) for v in memory.decay(f, n)]
        tail = [] if curve[-1] >= floor else [float(memory.horizon(f, floor))]
        kept = [(x, _log_y(v, -decades, 0)) for x, v in zip(xs, curve) if v >= floor]
        kept += [(at_x(t), y0 + h) for t in tail if t >= 1]
        settings = [text for value, text in named if math.isclose(b, value, abs_tol=1e-9)]
        if chrono[0] - 1e-9 <= b <= chrono[1] + 1e-9:
            settings.append(f"in chrono's range for T_max = {t_max:,g}")
        bias_states.append(
            State(
                readouts={
                    "bias": _fixed(b),
                    "gate": f"{f:.3f}",
                    "efold": f"{tau:,.1f} steps",
                    "level": f"{reach:,.1f} steps",
                    "setting": "; ".join(settings) or "none of those marked",
                },
                curves={"decay": " ".join(f"{x:.2f},{y:.2f}" for x, y in kept)},
                marks={
                    key: (at_x(v) if 1 <= v <= max_steps else None) for key, v in (("efold", tau), ("level", reach))
                },
            )
        )
        for L in lag_list:
            share = float(memory.decay(f, L))
            dot = None if share < floor else {"cx": f"{at_x(L):.2f}", "cy": f"{_log_y(share, -decades, 0):.2f}"}
            pair_states.append(State(readouts={"arrives": _share(share)}, shapes={"dot": dot}))
    lag_states = [State(shapes={"lag": {"x1": f"{at_x(L):.2f}", "x2": f"{at_x(L):.2f}"}}) for L in lag_list]

    pins = [(mean, "PyTorch", 0), (keras, "Keras", 1), (2.0, "b_f = 2", 0)]
    bias_control = Control(
        "bias",
        "Forget bias b<sub>f</sub>",
        tuple(f"b_f = {b:.2f}, forget gate {float(memory.sigmoid(b)):.3f}" for b in biases),
        first,
        scale=_bias_scale(low, high, pins, chrono, t_max),
    )
    decade_marks = [
        (k / (len(lag_list) - 1), None, f"{L:,}", "")
        for k, L in enumerate(lag_list)
        if len(lag_list) > 1 and math.log10(L).is_integer()
    ]
    lag_control = Control(
        "lag",
        "Lag L",
        tuple(f"{L:,} step" + ("s" if L != 1 else "") for L in lag_list),
        lag_at,
        scale=scale([decade_marks]) if decade_marks else "",
    )
    return Widget(
        name="forget-bias",
        title="Move the forget bias and the lag: what survives, and how much arrives",
        controls=[bias_control, lag_control],
        layers=[
            Layer(("bias",), tuple(bias_states)),
            Layer(("lag",), tuple(lag_states)),
            Layer(("bias", "lag"), tuple(pair_states)),
        ],
        readouts=[
            ("bias", "b<sub>f</sub>"),
            ("gate", "forget gate σ(b<sub>f</sub>)"),
            ("efold", "e-fold horizon (dashed)"),
            ("level", f"steps to {level:.0%} (dotted)"),
            ("arrives", "share f<sup>L</sup> that arrives at lag L (dot)"),
            ("setting", "marked settings at this bias"),
        ],
        curves=[Curve("decay", "f to the n")],
        marks=["efold", "level"],
        shapes=[
            Shape("lag", "line", "rnnmem-w-mark rnnmem-w-mark-lag", {"y1": f"{y0:g}", "y2": f"{y0 + h:g}"}),
            Shape("dot", "circle", "rnnmem-w-dot", {"r": "4"}),
        ],
        svg=_decay_svg(max_steps, decades, level),
        description=(
            f"What is left of a signal after n steps, f to the n, for the forget gate f = sigma(b_f) at the chosen "
            f"bias, on logarithmic axes: steps from 1 to {max_steps:,}, share from 1 down to {_power(-decades)}. "
            f"Dashed lines mark the e-fold horizon and the level 1/e, dotted ones the steps until {level:.0%} is "
            "left and that level; a solid vertical line marks the chosen lag, a dot the share that arrives there."
        ),
        note=(
            f"Under the slider: PyTorch draws b<sub>f</sub> at random, {_short(mean)} on average; Keras' "
            f"<code>unit_forget_bias</code> sets {_short(keras)}; b<sub>f</sub> = 2 is one common choice; chrono "
            f"initialization for T<sub>max</sub> = {t_max:,g} draws b<sub>f</sub> from {_short(chrono[0])} to "
            f"{_short(chrono[1])}."
        ),
    )


# ---------------------------------------------------------------------------- one LSTM cell

#: The ends of a scale: these times a power of ten.
_NICE = (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8)


def _nice(value: float) -> float:
    """The smallest of :data:`_NICE` times a power of ten (from 1 up) at least ``value``."""
    exponent = 0
    while True:
        for m in _NICE:
            if m * 10**exponent >= value - 1e-12:
                return float(m * 10**exponent)
        exponent += 1


def _lstm_runs(
    forget: Sequence[float], inputs: Sequence[float], candidates: Sequence[float], outputs: Sequence[float], steps: int
) -> tuple[np.ndarray, np.ndarray]:
    """c_t and h_t, t = 0..steps and 1..steps, for every combination of the activations, from c_0 = 0.

    Each step is :func:`rnnmem.gate_arithmetic.lstm_update`, every combination
    at once (arrays of shape ``(F, I, G, O)``). Returns ``c`` of shape
    ``(F, I, G, steps + 1)`` (c does not depend on o) and ``h`` of shape
    ``(F, I, G, O, steps)``.
    """
    f, i, g, o = np.meshgrid(forget, inputs, candidates, outputs, indexing="ij")
    c = np.zeros_like(f)
    cs, hs = [c[..., 0]], []
    for _ in range(steps):
        u = gate_arithmetic.lstm_update(c, f=f, i=i, g=g, o=o)
        c = u.c
        cs.append(c[..., 0])
        hs.append(u.h)
    return np.stack(cs, axis=-1), np.stack(hs, axis=-1)


def _gate_label(v: float) -> str:
    return _signed(f"{v:g}")


@widget()
def lstm_step_explorer(
    forget: Sequence[GateValue] = (0.0, 0.5, 0.8, 0.9, 0.95, 0.99, 1.0),
    input_gate: Sequence[GateValue] = (0.0, 0.5, 1.0),
    candidate: Sequence[CandidateValue] = (-1.0, 0.5, 1.0),
    output_gate: Sequence[GateValue] = (0.0, 0.5, 1.0),
    f: GateValue = 0.9,
    i: GateValue = 1.0,
    g: CandidateValue = 1.0,
    o: GateValue = 1.0,
    steps: PositiveInt = 50,
):
    """Four groups of buttons for f, i, g and o; the cell c_t and output h_t of one LSTM unit over ``steps`` steps.

    The activations are supplied and held for every step, from c_0 = 0:
    c_t = f c_{t-1} + i g and h_t = o tanh(c_t), by
    :func:`rnnmem.gate_arithmetic.lstm_update` (the chapter on gates). The
    readouts: c and h at the last step, and the fixed point i g / (1 - f) the
    cell approaches when f < 1 (the c for which the update gives c again).
    """
    lists = {
        "forget": _distinct("forget", forget, 12),
        "input_gate": _distinct("input_gate", input_gate, 12),
        "candidate": _distinct("candidate", candidate, 12),
        "output_gate": _distinct("output_gate", output_gate, 12),
    }
    starts = {
        key: _position(lists[name], value, key, f"the values of {name} {lists[name]}")
        for key, name, value in (
            ("f", "forget", f),
            ("i", "input_gate", i),
            ("g", "candidate", g),
            ("o", "output_gate", o),
        )
    }
    if not 2 <= steps <= 500:
        raise ValueError(f"steps must be a whole number from 2 to 500, got {steps!r}")
    fs, is_, gs, os_ = (lists[k] for k in ("forget", "input_gate", "candidate", "output_gate"))
    c, hh = _lstm_runs(fs, is_, gs, os_, steps)
    x0, y0, w, h = BOX
    c_xs = tuple(round(x0 + w * t / steps, 2) for t in range(steps + 1))
    h_xs = c_xs[1:]

    def y(value: float, top: float) -> float:
        return round(y0 + (1 - (value + top) / (2 * top)) * h, 1)

    cell_states, out_states = [], []
    for a, b, d in itertools.product(range(len(fs)), range(len(is_)), range(len(gs))):
        run = c[a, b, d]
        written = gate_arithmetic.lstm_update(0.0, f=fs[a], i=is_[b], g=gs[d], o=1.0).written
        # The fixed point: the c that the update gives back, c = f c + i g.
        point = written / (1 - fs[a]) if fs[a] < 1 else None
        # The scale holds the run and the fixed point, with a little room above the larger.
        top = _nice(1.05 * max(1.0, float(np.max(np.abs(run))), abs(point or 0.0)))
        if point is not None:
            fixed = _fixed(point)
            line: dict[str, str] | None = {"y1": f"{y(point, top):.1f}", "y2": f"{y(point, top):.1f}"}
        else:
            fixed = (
                f"none: f = 1, and c grows by i g = {_fixed(written)} every step"
                if written
                else "none needed: f = 1 and nothing is written, so c stays at 0"
            )
            line = None
        ticks = {f"tick{k}": {"text": _signed(f"{v:g}")} for k, v in enumerate((top, top / 2, 0.0, -top / 2, -top))}
        cell_states.append(
            State(
                readouts={"c": _fixed(float(run[-1])), "fixed": fixed},
                curves={"c": [y(float(v), top) for v in run]},
                shapes={"fixed": line, **ticks},
            )
        )
        for e in range(len(os_)):
            out_states.append(
                State(
                    readouts={"h": _fixed(float(hh[a, b, d, e, -1]))},
                    curves={"h": [y(float(v), top) for v in hh[a, b, d, e]]},
                )
            )

    controls = [
        Control("f", "forget gate f", tuple(_gate_label(v) for v in fs), starts["f"], RADIO),
        Control("i", "input gate i", tuple(_gate_label(v) for v in is_), starts["i"], RADIO),
        Control("g", "candidate g", tuple(_gate_label(v) for v in gs), starts["g"], RADIO),
        Control("o", "output gate o", tuple(_gate_label(v) for v in os_), starts["o"], RADIO),
    ]
    ticks_y = [y0 + h * k / 4 for k in range(5)]
    xticks = [(x0 + w * t / steps, f"{t}") for t in _step_ticks(steps)]
    svg = _frame(BOX, xticks, [], "step t", "value", ticks_y)
    # The tick labels of the value axis are shapes: their numbers change with the scale.
    svg += "{shapes}{curves}"
    shapes = [
        Shape(f"tick{k}", "text", "rnnmem-w-tick", {"x": f"{x0 - 6:g}", "y": f"{yy + 4:.2f}", "text-anchor": "end"})
        for k, yy in enumerate(ticks_y)
    ]
    shapes.append(Shape("fixed", "line", "rnnmem-w-ref rnnmem-w-ref-fixed", {"x1": f"{x0:g}", "x2": f"{x0 + w:g}"}))
    return Widget(
        name="lstm-step",
        title=f"Choose the gates and the candidate: one LSTM unit over {steps} steps from c₀ = 0",
        controls=controls,
        layers=[Layer(("f", "i", "g"), tuple(cell_states)), Layer(("f", "i", "g", "o"), tuple(out_states))],
        readouts=[
            ("c", f"cell c<sub>{steps}</sub>"),
            ("h", f"output h<sub>{steps}</sub>"),
            ("fixed", "fixed point i g / (1 − f) (dotted)"),
        ],
        curves=[
            Curve("c", "cell c<sub>t</sub> = f c<sub>t−1</sub> + i g", "rnnmem-w-curve", c_xs),
            Curve("h", "output h<sub>t</sub> = o tanh(c<sub>t</sub>)", "rnnmem-w-curve rnnmem-w-curve-second", h_xs),
        ],
        marks=[],
        shapes=shapes,
        svg=svg,
        legend=[
            ("rnnmem-w-curve", "cell c<sub>t</sub> = f c<sub>t−1</sub> + i g"),
            ("rnnmem-w-curve rnnmem-w-curve-second", "output h<sub>t</sub> = o tanh(c<sub>t</sub>)"),
            ("rnnmem-w-ref rnnmem-w-ref-fixed", "fixed point i g / (1 − f)"),
        ],
        description=(
            f"The cell c_t (solid) and the output h_t (dashed) of one LSTM unit over steps 0 to {steps}, for the "
            "chosen forget gate, input gate, candidate and output gate held at every step, from c_0 = 0; a dotted "
            "line marks the fixed point i g / (1 - f) when it is in view. The vertical scale widens to hold the cell."
        ),
    )


def _step_ticks(steps: int) -> list[int]:
    """Ticks for steps 0..steps: three to six round whole numbers."""
    every = max(1, int(_tick_step(steps)))
    return list(range(0, steps + 1, every))


# ---------------------------------------------------------------------------- the GRU's two conventions

_CONVENTIONS = ("z_keeps", "z_writes")
_RULES = {
    "z_keeps": "hₜ = z hₜ₋₁ + (1 − z) nₜ",
    "z_writes": "hₜ = (1 − z) hₜ₋₁ + z nₜ",
}


@widget()
def gru_convention_toggle(
    h_prev: Finite = 0.8,
    r: OpenUnit = 0.25,
    z: GateValue = 0.9,
    positions: PositiveInt = 21,
    update: Literal["z_keeps", "z_writes"] = "z_keeps",
    points: PositiveInt = 101,
):
    """A switch between the GRU's update conventions and a slider for z: the new state of one unit.

    One unit, no input, recurrent weight 1, as in the chapter's example: the
    candidate n_t = tanh(r h_prev) and the new state under ``"z_keeps"``
    (h = z h_prev + (1 - z) n) or ``"z_writes"`` (h = (1 - z) h_prev + z n),
    by :func:`rnnmem.gate_arithmetic.gru_update` (the conventions of
    :mod:`rnnmem.gru`). Both curves of the new state against z are drawn, the
    chosen convention's solid; a dot marks the state at the chosen z, and a
    hollow one the other convention at 1 - z, where it gives the same state.
    """
    if not 3 <= positions <= 101:
        raise ValueError(f"positions must be a whole number from 3 to 101, got {positions!r}")
    if not 2 <= points <= 1001:
        raise ValueError(f"points must be a whole number from 2 to 1001, got {points!r}")
    zs = [k / (positions - 1) for k in range(positions)]
    first_z = _position(zs, z, "z", f"the slider's positions (0 to 1 in {positions - 1} steps)")
    grid = np.linspace(0.0, 1.0, points)
    curves = {u: gate_arithmetic.gru_update(h_prev, z=grid, r=r, update=u).h for u in _CONVENTIONS}
    n = float(gate_arithmetic.gru_update(h_prev, z=0.5, r=r).n)
    lo, hi = min(h_prev, n), max(h_prev, n)
    pad = 0.15 * ((hi - lo) or 1.0)
    bottom, top = lo - pad, hi + pad
    x0, y0, w, h = BOX

    def sx(v: float) -> float:
        return x0 + w * v

    def sy(v: float) -> float:
        return y0 + (1 - (v - bottom) / (top - bottom)) * h

    def pts(values: np.ndarray) -> str:
        return polyline(grid.tolist(), ((values - bottom) / (top - bottom)).tolist(), BOX)

    convention_states = [
        State(
            readouts={"rule": _RULES[u]},
            curves={"chosen": pts(curves[u]), "other": pts(curves[_CONVENTIONS[1 - k]])},
        )
        for k, u in enumerate(_CONVENTIONS)
    ]
    z_states = [State(shapes={"zline": {"x1": f"{sx(v):.2f}", "x2": f"{sx(v):.2f}"}}) for v in zs]
    pair_states = []
    for k, u in enumerate(_CONVENTIONS):
        other = _CONVENTIONS[1 - k]
        for v in zs:
            s = gate_arithmetic.gru_update(h_prev, z=v, r=r, update=u)
            mirror = gate_arithmetic.gru_update(h_prev, z=1 - v, r=r, update=other)
            keep = v if u == "z_keeps" else 1 - v
            pair_states.append(
                State(
                    readouts={
                        "kept": f"{_fixed(keep)} × {_signed(f'{h_prev:g}')} = {_short(s.kept, 4)}",
                        "written": f"{_fixed(1 - keep)} × {_short(s.n, 4)} = {_short(s.written, 4)}",
                        "h": _short(s.h, 4),
                        "mirror": f"z = {_fixed(1 - v)} gives {_short(mirror.h, 4)}",
                    },
                    shapes={
                        "dot": {"cx": f"{sx(v):.2f}", "cy": f"{sy(s.h):.2f}"},
                        "mirror": {"cx": f"{sx(1 - v):.2f}", "cy": f"{sy(mirror.h):.2f}"},
                        "bridge": {
                            "x1": f"{sx(v):.2f}",
                            "x2": f"{sx(1 - v):.2f}",
                            "y1": f"{sy(s.h):.2f}",
                            "y2": f"{sy(mirror.h):.2f}",
                        },
                    },
                )
            )

    xticks = [(sx(v), _signed(f"{v:g}")) for v in (0.0, 0.25, 0.5, 0.75, 1.0)]
    step = _tick_step(top - bottom)
    yticks = [
        (sy(v), _signed(f"{v:g}"))
        for v in (round(k * step, 10) for k in range(math.ceil(bottom / step), math.floor(top / step) + 1))
    ]
    svg = _frame(BOX, xticks, yticks, "update gate z", "new state hₜ")
    for value, label in (
        (h_prev, f"old state hₜ₋₁ = {_signed(f'{h_prev:g}')}"),
        (n, f"candidate nₜ = {_fixed(n, 6)}"),
    ):
        # The label of the upper line goes above it, the other's below.
        below = 13 if value < max(h_prev, n) else -4
        svg += (
            f'<line class="rnnmem-w-ref rnnmem-w-ref-level" x1="{x0:g}" x2="{x0 + w:g}" y1="{sy(value):.2f}" '
            f'y2="{sy(value):.2f}"/><text class="rnnmem-w-tick rnnmem-w-label" x="{x0 + w / 2:g}" '
            f'y="{sy(value) + below:.2f}" text-anchor="middle">{label}</text>'
        )
    svg += "{curves}{shapes}"
    first_update = _CONVENTIONS.index(update)
    return Widget(
        name="gru-update",
        title="Switch the update convention: the same cell, with z read as 1 − z",
        controls=[
            Control(
                "update",
                "The update gate z",
                ("keeps the old state (PyTorch, Keras)", "writes the candidate (several textbooks)"),
                first_update,
                RADIO,
            ),
            Control("z", "Update gate z", tuple(f"z = {v:.2f}" for v in zs), first_z),
        ],
        layers=[
            Layer(("update",), tuple(convention_states)),
            Layer(("z",), tuple(z_states)),
            Layer(("update", "z"), tuple(pair_states)),
        ],
        readouts=[
            ("rule", "update rule"),
            ("kept", "kept of the old state"),
            ("written", "written from the candidate"),
            ("h", "new state h<sub>t</sub> (dot)"),
            ("mirror", "the other convention (hollow dot)"),
        ],
        curves=[
            Curve("chosen", "the convention chosen", "rnnmem-w-curve"),
            Curve("other", "the other convention", "rnnmem-w-curve rnnmem-w-curve-second"),
        ],
        marks=[],
        shapes=[
            Shape("zline", "line", "rnnmem-w-mark rnnmem-w-mark-lag", {"y1": f"{y0:g}", "y2": f"{y0 + h:g}"}),
            Shape("bridge", "line", "rnnmem-w-ref rnnmem-w-bridge"),
            Shape("mirror", "circle", "rnnmem-w-dot rnnmem-w-hollow", {"r": "4"}),
            Shape("dot", "circle", "rnnmem-w-dot", {"r": "4"}),
        ],
        svg=svg,
        legend=[
            ("rnnmem-w-curve", "the convention chosen"),
            ("rnnmem-w-curve rnnmem-w-curve-second", "the other convention"),
        ],
        description=(
            f"The new state of one GRU unit against the update gate z from 0 to 1, for an old state of {h_prev:g}, "
            f"a reset gate of {r:g} and no input, under both update conventions: two mirror-image curves between "
            f"the old state and the candidate {_short(n, 4)} (dotted lines). The chosen convention is solid; a dot marks "
            "the new state at the chosen z, a hollow dot the same state on the other curve, at 1 - z."
        ),
    )


def _tick_step(span: float) -> float:
    """A round step (1, 2 or 5 times a power of ten) that puts three to six ticks over ``span``."""
    exponent = math.floor(math.log10(span / 5))
    for m in (1, 2, 5, 10):
        if span / (m * 10.0**exponent) <= 6:
            return m * 10.0**exponent
    return 10.0 ** (exponent + 1)


# ---------------------------------------------------------------------------- distance, with and without tanh


@widget()
def tanh_distance_explorer(
    low: Positive = 0.25,
    high: Positive = 2.0,
    step: Positive = 0.05,
    w: Positive = 1.0,
    inputs: Sequence[Finite] = (0.0, 0.1, 0.5, 2.0),
    x: Finite = 0.5,
    steps: PositiveInt = 16,
    floor: PositiveInt = 10,
):
    """A slider for the recurrent weight w of one tanh unit and buttons for its input; the distance multipliers.

    The unit h_t = tanh(w h_{t-1} + x) starts at h_0 = 0 and reads the same
    input x at every step, ``steps`` steps (:func:`rnnmem.jacobians.rnn_trajectory`,
    one unit). A small change of h_{T-n} reaches h_T multiplied by
    |∂h_T/∂h_{T-n}| (:func:`rnnmem.jacobians.distance_norms`), the product of
    the local rates w tanh'(a_t) of the n edges it crosses; without tanh every
    edge would multiply by w, and n edges by w^n
    (:func:`rnnmem.bptt.distance_multipliers`). Both on a logarithmic axis down
    to 10^-``floor``.
    """
    weights = _grid(low, high, step, 100)
    first_w = _position(weights, w, "w", f"the slider's positions ({low} to {high} by {step})")
    xs_in = _distinct("inputs", inputs, 8)
    first_x = _position(xs_in, x, "x", f"the inputs {xs_in}")
    if not 2 <= steps <= 100:
        raise ValueError(f"steps must be a whole number from 2 to 100, got {steps!r}")
    if floor > 30:
        raise ValueError(f"floor must be a whole number from 1 to 30, got {floor!r}")
    distances = list(range(steps + 1))
    top = max(1, math.ceil(steps * math.log10(weights[-1])))
    x0, y0, bw, bh = BOX
    px = [x0 + bw * d / steps for d in distances]

    weight_states, pair_states = [], []
    for wv in weights:
        linear = [row[1] for row in bptt.distance_multipliers((wv,), distances)]
        weight_states.append(
            State(
                readouts={"linear": _share(linear[-1]) if linear[-1] < 1000 else _sci(linear[-1])},
                curves={"linear": _cut_log(px, linear, -floor, top)},
            )
        )
        for xv in xs_in:
            states, J = jacobians.rnn_trajectory(np.full((steps, 1), xv), [0.0], [[1.0]], [[wv]], [0.0], [0.0])
            norms = [float(v) for v in jacobians.distance_norms(J)]
            rate = float(J[-1, 0, 0])
            pair_states.append(
                State(
                    readouts={
                        "state": _fixed(float(states[-1, 0]), 3),
                        "slope": _fixed(rate / wv, 3),
                        "edge": _fixed(rate, 3),
                        "tanh": _share(norms[-1]) if norms[-1] < 1000 else _sci(norms[-1]),
                    },
                    curves={"tanh": _cut_log(px, norms, -floor, top)},
                )
            )
    every = 1 if floor + top <= 6 else 2 if floor + top <= 10 else 5
    yticks = [(_log_y(10.0**d, -floor, top), _power(d)) for d in range(top, -floor - 1, -1) if d % every == 0]
    grid = [_log_y(10.0**d, -floor, top) for d in range(top, -floor - 1, -1) if d % every]
    xticks = [(x0 + bw * d / steps, f"{d}") for d in _step_ticks(steps)]
    svg = _frame(BOX, xticks, yticks, "edges crossed n", "multiplier (logarithmic)", grid)
    one = _log_y(1.0, -floor, top)
    svg += f'<line class="rnnmem-w-ref rnnmem-w-ref-one" x1="{x0:g}" x2="{x0 + bw:g}" y1="{one:.2f}" y2="{one:.2f}"/>'
    svg += "{curves}"
    return Widget(
        name="tanh-distance",
        title="Move the recurrent weight: what a change is multiplied by on its way back",
        controls=[
            Control("w", "Recurrent weight w", tuple(f"w = {v:.2f}" for v in weights), first_w),
            Control("x", "Input x at every step", tuple(_signed(f"{v:g}") for v in xs_in), first_x, RADIO),
        ],
        layers=[Layer(("w",), tuple(weight_states)), Layer(("w", "x"), tuple(pair_states))],
        readouts=[
            ("state", f"last state h<sub>{steps}</sub>"),
            ("slope", "slope tanh′ at the last step"),
            ("edge", "local rate w tanh′ of the last edge"),
            ("tanh", f"after {steps} edges, with tanh"),
            ("linear", f"after {steps} edges, without tanh: w<sup>{steps}</sup>"),
        ],
        curves=[
            Curve("tanh", "with tanh: the product of w tanh′ over the edges", "rnnmem-w-curve"),
            Curve("linear", "without tanh: w<sup>n</sup>", "rnnmem-w-curve rnnmem-w-curve-second"),
        ],
        marks=[],
        svg=svg,
        legend=[
            ("rnnmem-w-curve", "with tanh: the product of w tanh′ over the edges"),
            ("rnnmem-w-curve rnnmem-w-curve-second", "without tanh: w<sup>n</sup>"),
        ],
        description=(
            f"What a small change of the state n steps before the last is multiplied by when it reaches the last "
            f"state, against n from 0 to {steps}, on a logarithmic axis from {_power(-floor)} to {_power(top)}: "
            "solid for the tanh unit at the chosen weight and input, dashed for w to the n, the same unit without "
            "tanh. A horizontal line marks 1."
        ),
        note=(
            f"The unit h<sub>t</sub> = tanh(w h<sub>t−1</sub> + x) starts at h<sub>0</sub> = 0 and reads the same "
            f"input x at each of {steps} steps; n counts the edges between h<sub>{steps}−n</sub> and "
            f"h<sub>{steps}</sub>."
        ),
    )

r"""The scalar growth cell: an LSTM whose gradient grows although its forget gate is below one.

A one-unit LSTM with constant gates :math:`i, f, o` and
candidate :math:`g_t = \tanh(w_c h_{t-1})`, :math:`h_t = o\tanh(c_t)`. Its state
is :math:`c` alone and its step factor is

.. math::  \frac{dc_t}{dc_{t-1}} = f + i(1 - g_t^2)\,w_c\,o\,(1 - \tanh^2 c_{t-1}),

which can exceed 1 although :math:`f < 1`; at the zero state it is
:math:`f + i w_c o`.

The cell runs through :func:`rnnmem.lstm.step`; its gates are held by biases
:func:`rnnmem.memory.logit` of the gate values. Bad input raises
:class:`ValueError` naming the argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import lstm, memory
from .checks import check_finite, check_open_unit, check_positive_int

__all__ = [
    "GrowthTrajectory",
    "GrowthStart",
    "growth_factor",
    "growth_cell_weights",
    "growth_trajectory",
    "find_growth_start",
    "zero_state_growth",
    "weight_for_zero_state_growth",
    "perturbation_growth",
]


def _gates(f: Any, i: Any, o: Any) -> tuple[float, float, float]:
    return (float(check_open_unit("f", f)), float(check_open_unit("i", i)), float(check_open_unit("o", o)))


def growth_factor(c_prev: float, f: float = 0.75, i: float = 0.5, o: float = 0.75, w_c: float = 2.0) -> float:
    r"""The scalar cell's step factor :math:`dc_t/dc_{t-1} = f + i(1-g_t^2)\,w_c\,o\,(1-\tanh^2 c_{t-1})`.

    The carry line is the first term; the second is every path through
    :math:`w_c`. At the zero state it is :math:`f + i w_c o`.

    >>> growth_factor(0.0), round(growth_factor(0.4), 6)
    (1.5, 1.221326)
    """
    f, i, o = _gates(f, i, o)
    c = float(check_finite("c_prev", c_prev))
    w = float(check_finite("w_c", w_c))
    t = math.tanh(c)
    g = math.tanh(w * o * t)
    return f + i * (1 - g * g) * w * o * (1 - t * t)


def growth_cell_weights(f: float = 0.75, i: float = 0.5, o: float = 0.75, w_c: float = 2.0) -> dict[str, np.ndarray]:
    r"""The scalar growth cell as a one-unit LSTM in torch layout (input size 1, input weights 0).

    Gate biases :math:`\ln(p/(1-p))` hold :math:`i, f, o` constant; the
    candidate's recurrent weight is :math:`w_c` and its bias 0.

    >>> W = growth_cell_weights()
    >>> W["W_hh"].ravel().tolist(), [round(b, 4) for b in W["b_ih"].tolist()]
    ([0.0, 0.0, 2.0, 0.0], [0.0, 1.0986, 0.0, 1.0986])
    """
    f, i, o = _gates(f, i, o)
    w = float(check_finite("w_c", w_c))
    return {
        "W_ih": np.zeros((4, 1)),
        "W_hh": np.array([[0.0], [0.0], [w], [0.0]]),
        "b_ih": np.array([memory.logit(i), memory.logit(f), 0.0, memory.logit(o)]),
        "b_hh": np.zeros(4),
    }


@dataclass(frozen=True)
class GrowthTrajectory:
    """The scalar growth cell run from ``cells[0]``: cells, step factors, their product and the carry line's."""

    cells: tuple[float, ...]
    factors: tuple[float, ...]
    product: float
    carry_line: float


def growth_trajectory(
    c_start: float, steps: int = 2, f: float = 0.75, i: float = 0.5, o: float = 0.75, w_c: float = 2.0
) -> GrowthTrajectory:
    r"""Run the scalar growth cell (:func:`rnnmem.lstm.step`) from :math:`c = ` ``c_start``, :math:`h = o\tanh c`.

    ``factors[k]`` is :math:`dc_{k+1}/dc_k` from :func:`growth_factor`,
    ``product`` their product and ``carry_line`` :math:`f^{\text{steps}}`.

    >>> g = growth_trajectory(0.4)
    >>> [round(v, 6) for v in g.factors], round(g.product, 6), g.carry_line
    ([1.221326, 1.078827], 1.3176, 0.5625)
    """
    f, i, o = _gates(f, i, o)
    n = check_positive_int("steps", steps)
    c = float(check_finite("c_start", c_start))
    W = growth_cell_weights(f, i, o, w_c)
    cells, factors = [c], []
    h = o * math.tanh(c)
    for _ in range(n):
        factors.append(growth_factor(c, f, i, o, w_c))
        s = lstm.step(np.zeros(1), np.array([h]), np.array([c]), **W)
        c, h = float(s.c[0]), float(s.h[0])
        cells.append(c)
    return GrowthTrajectory(
        cells=tuple(cells), factors=tuple(factors), product=float(np.prod(factors)), carry_line=f**n
    )


@dataclass(frozen=True)
class GrowthStart:
    r"""The starting cell that reproduces given step factors: ``c_start`` (:math:`-c` works as well).

    ``trajectory`` is the run from it; ``residuals`` are its factors minus the
    given ones.
    """

    c_start: float
    trajectory: GrowthTrajectory
    residuals: tuple[float, ...]


def find_growth_start(
    factors: Any = (1.221326, 1.078827), f: float = 0.75, i: float = 0.5, o: float = 0.75, w_c: float = 2.0
) -> GrowthStart:
    r"""Solve for the starting cell :math:`c_1 \ge 0` whose trajectory has the given step factors.

    The first factor fixes :math:`|c_1|`: :func:`growth_factor` moves
    monotonically in :math:`|c|` from :math:`f + i w_c o` at 0 towards
    :math:`f`, so bisection finds it; the later factors are then checked
    (``residuals``). The factor is even in :math:`c`, so :math:`-c_1` gives the
    same factors.

    For the chapter's cell and factors the start is :math:`c_1 = 0.4` (or
    :math:`-0.4`), :math:`h_1 = \tfrac34\tanh 0.4`; from exactly 0.4 the
    factors round to the stated ones (:func:`growth_trajectory`).

    >>> s = find_growth_start()
    >>> f"{s.c_start:.6f}", [abs(r) < 5e-7 for r in s.residuals]
    ('0.400000', [True, True])
    """
    fs = [float(check_finite(f"factors[{k}]", v)) for k, v in enumerate(factors)]
    if not fs:
        raise ValueError("factors must hold at least one step factor, got an empty sequence")
    f, i, o = _gates(f, i, o)
    top, bottom = growth_factor(0.0, f, i, o, w_c), f
    lo_f, hi_f = min(top, bottom), max(top, bottom)
    if not (fs[0] == top or lo_f < fs[0] < hi_f):
        raise ValueError(
            f"factors[0] must lie between the carry line f = {bottom!r} and the zero-state factor "
            f"{top!r} for this cell, got {fs[0]!r}"
        )
    rising = top < bottom
    lo, hi = 0.0, 1.0
    while (growth_factor(hi, f, i, o, w_c) > fs[0]) != rising and hi < 1e3:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if (growth_factor(mid, f, i, o, w_c) > fs[0]) != rising:
            lo = mid
        else:
            hi = mid
    c1 = 0.5 * (lo + hi)
    traj = growth_trajectory(c1, len(fs), f, i, o, w_c)
    return GrowthStart(c_start=c1, trajectory=traj, residuals=tuple(a - b for a, b in zip(traj.factors, fs)))


def zero_state_growth(f: float, i: float, o: float, w_c: float) -> float:
    r"""The factor by which the scalar cell amplifies a small perturbation of the zero state: :math:`f + i w_c o`.

    At :math:`c = h = 0` the candidate is 0 and both ``tanh`` slopes are 1.

    >>> zero_state_growth(0.5, 0.5, 0.75, 3.0)
    1.625
    """
    return growth_factor(0.0, f, i, o, w_c)


def weight_for_zero_state_growth(growth: float, f: float, i: float, o: float) -> float:
    r"""The candidate weight :math:`w_c = (\text{growth} - f)/(i\,o)` that gives ``growth`` at the zero state.

    A forget value of one half with :math:`i = 1/2` and :math:`o = 3/4` (the
    growth example's input and output gates) needs :math:`w_c = 3` for a
    growth of 1.625 per step. Any cell with :math:`i w_c o = 9/8` does the
    same, for instance :math:`i = o = 3/4` with :math:`w_c = 2`.

    >>> weight_for_zero_state_growth(1.625, 0.5, 0.5, 0.75)
    3.0
    """
    f, i, o = _gates(f, i, o)
    gr = float(check_finite("growth", growth))
    return (gr - f) / (i * o)


def perturbation_growth(
    eps: float = 1e-6, steps: int = 10, f: float = 0.5, i: float = 0.5, o: float = 0.75, w_c: float = 3.0
) -> np.ndarray:
    r"""Per-step growth ratios :math:`c_t/c_{t-1}` of the scalar cell started at :math:`c_0 = \epsilon`, :math:`h_0 = o\tanh\epsilon`.

    While the perturbation is small each ratio is :func:`zero_state_growth`
    (1.625 for the defaults); once it is large, the ``tanh`` saturates and
    the ratio falls.

    >>> perturbation_growth(steps=4).round(4).tolist()
    [1.625, 1.625, 1.625, 1.625]
    """
    f, i, o = _gates(f, i, o)
    e = float(check_finite("eps", eps))
    if e == 0.0:
        raise ValueError("eps must be a nonzero perturbation of the zero state, got 0.0")
    n = check_positive_int("steps", steps)
    W = growth_cell_weights(f, i, o, w_c)
    c, h = e, o * math.tanh(e)
    ratios = []
    for _ in range(n):
        s = lstm.step(np.zeros(1), np.array([h]), np.array([c]), **W)
        ratios.append(float(s.c[0]) / c)
        c, h = float(s.c[0]), float(s.h[0])
    return np.array(ratios)

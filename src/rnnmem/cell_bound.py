r"""How large an LSTM's cell can get: a bound from the forget gate alone.

Since :math:`|i g| < 1`, :math:`|c_t| \le f_t |c_{t-1}| + 1`;
with every forget value at most :math:`\varphi`,
:math:`|c_t| \le \varphi^t |c_0| + (1-\varphi^t)/(1-\varphi)`, and
:math:`|c_0| + t` at :math:`\varphi = 1`.

A run of a random LSTM (:func:`rnnmem.lstm.step`, weights from
:func:`rnnmem.jacobians.random_lstm`) checks the inequality coordinate by
coordinate. Bad input raises :class:`ValueError` naming the argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import lstm
from .checks import check_finite, check_nonnegative_int, check_positive, check_positive_int, check_seed
from .jacobians import random_lstm

__all__ = [
    "CellBoundCheck",
    "cell_bound",
    "simulate_cell_bound",
]


def cell_bound(t: Any, phi: float, c0: float = 0.0) -> Any:
    r"""The bound :math:`|c_t| \le \varphi^t |c_0| + (1-\varphi^t)/(1-\varphi)`, or :math:`|c_0| + t` at :math:`\varphi = 1`.

    ``t`` is a whole number of steps or an array of them; ``phi`` the largest
    forget value, :math:`0 < \varphi \le 1`.

    >>> round(cell_bound(10, 0.5), 6), cell_bound(10, 1.0, c0=2.0)
    (1.998047, 12.0)
    """
    p = float(check_positive("phi", phi))
    if p > 1.0:
        raise ValueError(f"phi must be a largest forget value in (0, 1], got {phi!r}")
    a = abs(float(check_finite("c0", c0)))
    if np.ndim(t) == 0 and not isinstance(t, np.ndarray):
        n = check_nonnegative_int("t", t)
        return a + n if p == 1.0 else p**n * a + (1 - p**n) / (1 - p)
    tt = np.asarray(t)
    if tt.size and (np.any(tt < 0) or np.any(tt != np.floor(tt))):
        raise ValueError(f"t must hold whole numbers >= 0, got {tt.tolist() if tt.size <= 6 else tt.shape}")
    tt = tt.astype(np.float64)
    return a + tt if p == 1.0 else p**tt * a + (1 - p**tt) / (1 - p)


@dataclass(frozen=True)
class CellBoundCheck:
    r"""A random LSTM run against the cell bound, coordinate by coordinate.

    ``cells`` is :math:`|c_t|` ``(T+1, H)``; ``phi`` the running largest
    forget value per coordinate ``(T+1, H)`` (row 0 unused); ``bounds`` the
    bound with that :math:`\varphi`; ``tightness`` the largest ratio
    :math:`|c_t|/\text{bound}` over :math:`t \ge 1`.
    """

    cells: np.ndarray
    phi: np.ndarray
    bounds: np.ndarray
    holds: bool
    tightness: float


def simulate_cell_bound(
    hidden: int = 16,
    steps: int = 200,
    seed: Any = 0,
    scale: float = 1.0,
    forget_bias: float = 3.0,
    input_size: int = 4,
    c0_scale: float = 5.0,
) -> CellBoundCheck:
    r"""Run a random LSTM (:func:`rnnmem.lstm.step`) and check :math:`|c_t| \le \varphi_t^t |c_0| + (1-\varphi_t^t)/(1-\varphi_t)`.

    :math:`\varphi_t` is, per coordinate, the largest forget value seen up to
    step :math:`t`, so the bound's assumption holds by construction and the
    run tests the inequality itself. Inputs are standard normal; :math:`c_0`
    is normal with standard deviation ``c0_scale``.

    >>> chk = simulate_cell_bound(seed=0)
    >>> chk.holds, bool(0.5 < chk.tightness <= 1.0)
    (True, True)
    """
    H = check_positive_int("hidden", hidden)
    T = check_positive_int("steps", steps)
    D = check_positive_int("input_size", input_size)
    rng = check_seed("seed", seed)
    W = random_lstm(D, H, rng, scale, forget_bias)
    c = float(check_positive("c0_scale", c0_scale)) * rng.standard_normal(H)
    h = np.zeros(H)
    c0 = np.abs(c)
    cells, phis = [c0], [np.zeros(H)]
    running = np.zeros(H)
    for _ in range(T):
        s = lstm.step(rng.standard_normal(D), h, c, **W)
        running = np.maximum(running, s.f)
        c, h = s.c, s.h
        cells.append(np.abs(c))
        phis.append(running.copy())
    cells_a, phi_a = np.stack(cells), np.stack(phis)
    t = np.arange(T + 1, dtype=np.float64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        geometric = np.where(phi_a < 1.0, (1 - phi_a**t) / (1 - phi_a), t)
    bounds = phi_a**t * c0 + geometric
    bounds[0] = c0
    ratio = cells_a[1:] / bounds[1:]
    return CellBoundCheck(
        cells=cells_a, phi=phi_a, bounds=bounds, holds=bool(np.all(cells_a <= bounds)), tightness=float(ratio.max())
    )

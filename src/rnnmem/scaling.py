r"""Power laws in data: what a "per tenfold" improvement costs.

If error falls as a power of the amount of training data,

.. math::

    E(D) = E_0 \left(\frac{D}{D_0}\right)^{\beta}, \qquad \beta < 0,

then every tenfold increase of data multiplies the error by :math:`10^\beta`.
A relative improvement :math:`\gamma` per tenfold therefore fixes the exponent,
:math:`10^\beta = 1 - \gamma`, so :math:`\beta = \log_{10}(1 - \gamma)`
(:math:`\gamma = 40\%` gives :math:`\beta = \log_{10} 0.6 = -0.222`).

To multiply the error by a ratio :math:`q` (:math:`q = 1/2` halves it) the data
must grow by :math:`x = \log_{10}(q)/\beta` decades, a factor of
:math:`10^x = q^{1/\beta}`. Both logarithms are negative, so :math:`x > 0`;
writing :math:`\log_{10}(0.5)/0.222` with a positive :math:`0.222` drops a sign.
At :math:`\gamma = 40\%` halving costs 1.36 decades, :math:`22.7\times` the data;
at :math:`\gamma = 30\%` it costs :math:`88\times`.

Scalars in give Python floats out; arrays in give float64 arrays out. Bad
input raises :class:`ValueError` naming the argument (a ``beta`` that is not
negative, an improvement outside (0, 1), a non-positive amount of data).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .checks import check_finite, check_open_unit, check_positive

__all__ = [
    "exponent_per_tenfold",
    "improvement_per_tenfold",
    "decades_for",
    "data_multiple",
    "data_needed",
    "error_at",
    "error_curves",
]


def _beta(beta: Any) -> float:
    if np.ndim(beta) != 0:
        raise ValueError(f"beta must be a single negative number, got {beta!r}")
    b = float(check_finite("beta", beta))
    if not b < 0:
        raise ValueError(f"beta must be negative (error falls as data grows; beta = log10(1 - gamma)), got {beta!r}")
    return b


def _out(x: Any, value: Any) -> Any:
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        return float(value)
    return np.asarray(value, dtype=np.float64)


def exponent_per_tenfold(improvement: Any) -> Any:
    r"""The exponent :math:`\beta = \log_{10}(1 - \gamma)` of a relative improvement :math:`\gamma` per tenfold data.

    >>> round(exponent_per_tenfold(0.4), 3), round(exponent_per_tenfold(0.3), 3)
    (-0.222, -0.155)
    """
    gamma = check_open_unit("improvement", improvement)
    return _out(gamma, np.log10(1.0 - np.asarray(gamma, dtype=np.float64)))


def improvement_per_tenfold(beta: float) -> float:
    r"""The relative improvement per tenfold data, :math:`1 - 10^\beta`; inverts :func:`exponent_per_tenfold`.

    >>> round(improvement_per_tenfold(math.log10(0.6)), 12)
    0.4
    """
    return 1.0 - math.pow(10.0, _beta(beta))


def decades_for(error_ratio: Any, beta: float) -> Any:
    r"""Decades of data that multiply the error by ``error_ratio``: :math:`x = \log_{10}(q)/\beta`.

    >>> round(decades_for(0.5, exponent_per_tenfold(0.4)), 2)
    1.36
    """
    q = check_positive("error_ratio", error_ratio)
    b = _beta(beta)
    return _out(q, np.log10(np.asarray(q, dtype=np.float64)) / b)


def data_multiple(error_ratio: Any, beta: float) -> Any:
    r"""The factor of data that multiplies the error by ``error_ratio``: :math:`10^x = q^{1/\beta}`.

    >>> round(data_multiple(0.5, exponent_per_tenfold(0.4)), 1), round(data_multiple(0.5, exponent_per_tenfold(0.3)))
    (22.7, 88)
    """
    x = decades_for(error_ratio, beta)
    return _out(error_ratio, np.power(10.0, x))


def data_needed(data: float, error: float, target_error: Any, beta: float) -> Any:
    r"""The data that takes the error from ``error`` (at ``data``) to ``target_error``: :math:`D_0 (E/E_0)^{1/\beta}`.

    From 10% error at 12,000 hours to 5%, at 40% per tenfold:

    >>> f"{data_needed(12_000, 0.10, 0.05, exponent_per_tenfold(0.4)):,.0f}"
    '272,959'
    """
    d0 = float(check_positive("data", data))
    e0 = float(check_positive("error", error))
    e = check_positive("target_error", target_error)
    return _out(e, d0 * data_multiple(np.asarray(e, dtype=np.float64) / e0, beta))


def error_at(data: Any, beta: float, data0: float = 1.0, error0: float = 1.0) -> Any:
    r"""The power law :math:`E(D) = E_0 (D/D_0)^\beta`.

    >>> round(error_at(10.0, math.log10(0.6)), 12)
    0.6
    """
    d = check_positive("data", data)
    d0 = float(check_positive("data0", data0))
    e0 = float(check_positive("error0", error0))
    return _out(d, e0 * np.power(np.asarray(d, dtype=np.float64) / d0, _beta(beta)))


def error_curves(
    improvements: Any = (0.3, 0.4),
    data0: float = 12_000.0,
    error0: float = 0.10,
    decades: float = 2.0,
    points: int = 50,
) -> dict[str, Any]:
    """Error against data for a figure: one curve per improvement, over ``decades`` decades from ``data0``.

    Returns ``{"data": array, "curves": {improvement: array}}``, the data on a
    logarithmic grid.

    >>> c = error_curves(points=3, decades=2)
    >>> c["data"].round().tolist(), c["curves"][0.4].round(4).tolist()
    ([12000.0, 120000.0, 1200000.0], [0.1, 0.06, 0.036])
    """
    d0 = float(check_positive("data0", data0))
    span = float(check_positive("decades", decades))
    if isinstance(points, bool) or not isinstance(points, int) or points < 2:
        raise ValueError(f"points must be a whole number >= 2, got {points!r}")
    grid = d0 * np.logspace(0.0, span, points)
    curves = {float(r): error_at(grid, exponent_per_tenfold(float(r)), d0, error0) for r in improvements}
    if not curves:
        raise ValueError("improvements must hold at least one relative improvement, got an empty sequence")
    return {"data": grid, "curves": curves}

r"""How far back memory reaches: the scalar mathematics of a per-step factor.

A signal (a remembered value, or the gradient that trains it) that is multiplied
by the same factor :math:`f` at every step keeps :math:`f^n` of itself after
:math:`n` steps. Everything here follows from that product.

Two conventions for the *horizon* are in use, and this module offers both:

* the **level horizon** :func:`horizon`: the number of steps until :math:`f^n`
  falls to a chosen level :math:`\varepsilon` (1% unless told otherwise),
  :math:`n = \ln\varepsilon / \ln f`;
* the **e-fold horizon** :func:`efold_horizon`: the number of steps over which
  :math:`f^n` falls by a factor of :math:`e`, :math:`\tau = -1/\ln f`, the
  time constant of a leaky unit (:mod:`rnnmem.leaky`).

They differ by the constant factor :math:`-\ln\varepsilon` (4.605 at 1%).
A gate is :math:`f = \sigma(b)`, the logistic function of a bias, so every
horizon can be turned into the bias that starts a gate there.

Scalars in give Python floats out; arrays in give float64 arrays out.
Every function raises :class:`ValueError` naming the argument on input outside
its domain (a gate value outside (0, 1), a level outside (0, 1), a negative
step count, ...).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .checks import (
    check_nonnegative_int,
    check_open_unit,
    check_positive,
    check_real,
)

__all__ = [
    "sigmoid",
    "logit",
    "decay",
    "horizon",
    "efold_horizon",
    "efold_bounds",
    "mean_lifetime",
    "gate_for_horizon",
    "gate_for_efold_horizon",
    "gate_for_mean_lifetime",
    "bias_for_gate",
    "bias_for_horizon",
    "bias_for_efold_horizon",
    "bias_for_mean_lifetime",
]

DEFAULT_LEVEL = 0.01
"""The level used by :func:`horizon` unless told otherwise: 1% of the signal."""


def _out(x: Any, value: Any) -> Any:
    """Python float for scalar input, float64 array for array input."""
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        return float(value)
    return np.asarray(value, dtype=np.float64)


def sigmoid(z: Any) -> Any:
    r"""The logistic function :math:`\sigma(z) = 1/(1 + e^{-z})`: the package's one sigmoid.

    Computed as :math:`1/(1+e^{-|z|})` for :math:`z \ge 0` and
    :math:`e^{-|z|}/(1+e^{-|z|})` below, which never overflows and keeps the
    relative precision of gate values near 0 (a shut gate's
    :math:`\sigma(-30) \approx 9.4 \cdot 10^{-14}` comes out to all its
    digits). Scalars in give Python floats out; a float32 or float64 array
    keeps its dtype (the step functions of :mod:`rnnmem.lstm` and
    :mod:`rnnmem.gru` use it); other arrays become float64. NaN raises
    :class:`ValueError`; :math:`\pm\infty` give 1 and 0.

    >>> sigmoid(0.0)
    0.5
    >>> round(sigmoid(1.0), 6)
    0.731059
    >>> sigmoid(np.array([-40.0, 0.0, 3.0], dtype=np.float32)).dtype
    dtype('float32')
    """
    keep = isinstance(z, np.ndarray) and z.dtype in (np.float32, np.float64)
    zz = z if keep and not np.isnan(z).any() else np.asarray(check_real("z", z))
    e = np.exp(-np.abs(zz))
    out = np.where(zz >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return out if keep else _out(z, out)


def logit(p: Any) -> Any:
    r"""The inverse of :func:`sigmoid`: :math:`\ln(p/(1-p))` for :math:`0 < p < 1`: the package's one logit.

    Scalars in give Python floats out; arrays give float64 arrays.

    >>> round(logit(0.95), 4)
    2.9444
    >>> logit(np.array([0.5, 0.75])).round(4).tolist()
    [0.0, 1.0986]
    """
    p = check_open_unit("p", p)
    return _out(p, np.log(np.asarray(p) / (1.0 - np.asarray(p))))


def decay(f: Any, n: Any) -> Any:
    r"""What is left after ``n`` steps of a per-step factor ``f``: :math:`f^n`.

    ``f`` may be any positive factor (above 1 the signal grows); ``n`` is a
    whole number of steps or an array of them.

    >>> decay(0.5, 3)
    0.125
    >>> f"{decay(0.99, 100):.6f}"
    '0.366032'
    """
    f = check_positive("f", f)
    if np.ndim(n) == 0 and not isinstance(n, np.ndarray):
        steps: Any = check_nonnegative_int("n", n)
    else:
        arr = np.asarray(n)
        if arr.size and (not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr != np.floor(arr))):
            raise ValueError(f"n must hold whole numbers >= 0, got {arr.tolist() if arr.size <= 6 else arr.shape}")
        steps = arr.astype(np.float64)
    value = np.power(np.asarray(f, dtype=np.float64), steps)
    if np.ndim(f) == 0 and np.ndim(n) == 0 and not isinstance(f, np.ndarray) and not isinstance(n, np.ndarray):
        return float(value)
    return np.asarray(value, dtype=np.float64)


def horizon(f: Any, level: float = DEFAULT_LEVEL) -> Any:
    r"""Steps until :math:`f^n` falls to ``level``: :math:`\ln(\text{level}) / \ln f`.

    This is the *level horizon* (the 1% horizon by default). The gradient is
    below ``level`` of its size for every :math:`n` greater than the value
    returned; it is a real number, not rounded.

    Args:
        f: the per-step factor, a gate value strictly between 0 and 1.
        level: the fraction that counts as gone, strictly between 0 and 1.

    >>> round(horizon(0.95), 1)
    89.8
    >>> round(horizon(0.5), 1)
    6.6
    """
    f = check_open_unit("f", f)
    level = check_open_unit("level", level)
    return _out(f, math.log(level) / np.log(f))


def efold_horizon(f: Any) -> Any:
    r"""Steps over which :math:`f^n` falls by a factor of :math:`e`: :math:`\tau = -1/\ln f`.

    This is the *e-fold horizon*. It lies strictly between the bounds of
    :func:`efold_bounds`.

    >>> round(efold_horizon(0.5), 2)
    1.44
    >>> round(efold_horizon(0.99), 3)
    99.499
    """
    f = check_open_unit("f", f)
    return _out(f, -1.0 / np.log(f))


def efold_bounds(f: Any) -> tuple[Any, Any]:
    r"""The bounds :math:`f/(1-f) < -1/\ln f < 1/(1-f)` on the e-fold horizon.

    Both follow from :math:`\ln x \le x - 1` (equality only at 1), applied at
    :math:`x = f` and :math:`x = 1/f`. Returns ``(lower, upper)``.

    >>> lower, upper = efold_bounds(0.9)
    >>> round(lower, 1), round(upper, 1)
    (9.0, 10.0)
    """
    f = check_open_unit("f", f)
    ff = np.asarray(f, dtype=np.float64)
    return _out(f, ff / (1.0 - ff)), _out(f, 1.0 / (1.0 - ff))


def mean_lifetime(f: Any) -> Any:
    r"""The total :math:`\sum_{n \ge 0} f^n = 1/(1-f)`: the upper e-fold bound.

    It is the whole area under the decay curve, measured in steps, and the
    upper bound of :func:`efold_bounds`.

    >>> round(mean_lifetime(sigmoid(1.0)), 2)
    3.72
    """
    f = check_open_unit("f", f)
    return _out(f, 1.0 / (1.0 - np.asarray(f, dtype=np.float64)))


def gate_for_horizon(steps: Any, level: float = DEFAULT_LEVEL) -> Any:
    r"""The gate value whose level horizon is ``steps``: :math:`f = \text{level}^{1/\text{steps}}`.

    Inverts :func:`horizon`.

    >>> round(gate_for_horizon(300), 4)
    0.9848
    """
    steps = check_positive("steps", steps)
    level = check_open_unit("level", level)
    return _out(steps, np.exp(math.log(level) / np.asarray(steps, dtype=np.float64)))


def gate_for_efold_horizon(tau: Any) -> Any:
    r"""The gate value whose e-fold horizon is ``tau``: :math:`f = e^{-1/\tau}`.

    >>> round(gate_for_efold_horizon(100), 6)
    0.99005
    """
    tau = check_positive("tau", tau)
    return _out(tau, np.exp(-1.0 / np.asarray(tau, dtype=np.float64)))


def gate_for_mean_lifetime(lifetime: Any) -> Any:
    r"""The gate value with :math:`1/(1-f) = \ell`, for :math:`\ell > 1`: :math:`f = 1 - 1/\ell`.

    >>> gate_for_mean_lifetime(4)
    0.75
    """
    lifetime = check_positive("lifetime", lifetime)
    ll = np.asarray(lifetime, dtype=np.float64)
    if np.any(ll <= 1):
        raise ValueError(f"lifetime must be greater than 1 (a lifetime of at least one step), got {lifetime!r}")
    return _out(lifetime, 1.0 - 1.0 / ll)


def bias_for_gate(f: Any) -> Any:
    r"""The bias that starts a gate at value ``f``: :math:`b = \ln(f/(1-f))`.

    Inverts the logistic function, :math:`f = \sigma(b)`, on the assumption
    (true at initialization, with small weights) that the bias alone sets the
    pre-activation.

    >>> round(bias_for_gate(0.95), 2)
    2.94
    >>> bias_for_gate(0.5)
    0.0
    """
    return logit(check_open_unit("f", f))


def bias_for_horizon(steps: Any, level: float = DEFAULT_LEVEL) -> Any:
    r"""The bias whose gate has level horizon ``steps``.

    Composes :func:`gate_for_horizon` with :func:`bias_for_gate`.

    >>> round(bias_for_horizon(300), 2)
    4.17
    """
    return bias_for_gate(gate_for_horizon(steps, level))


def bias_for_efold_horizon(tau: Any) -> Any:
    r"""The bias whose gate has e-fold horizon ``tau``.

    >>> round(bias_for_efold_horizon(100), 3)
    4.6
    """
    return bias_for_gate(gate_for_efold_horizon(tau))


def bias_for_mean_lifetime(lifetime: Any) -> Any:
    r"""The bias :math:`b = \ln(\ell - 1)`, which gives exactly :math:`1/(1-f) = \ell` (``lifetime``).

    Since :math:`1 - \sigma(b) = 1/(1 + e^{b})`, the choice :math:`b = \ln(\ell-1)`
    makes :math:`1/(1-f) = 1 + e^{b} = \ell`: the upper bound of the e-fold
    horizon is then ``lifetime``, and the e-fold horizon itself just under it.

    >>> b = bias_for_mean_lifetime(100)
    >>> round(b, 4), round(mean_lifetime(sigmoid(b)), 9)
    (4.5951, 100.0)
    """
    lifetime = check_positive("lifetime", lifetime)
    ll = np.asarray(lifetime, dtype=np.float64)
    if np.any(ll <= 1):
        raise ValueError(f"lifetime must be greater than 1 (a lifetime of at least one step), got {lifetime!r}")
    return _out(lifetime, np.log(ll - 1.0))

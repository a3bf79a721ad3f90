r"""Leaky units and time constants: the continuous-time reading of a forget gate.

A *leaky unit* (Goodfellow et al., *Deep Learning*, §10.9) keeps a running
average of what it is fed,

.. math::

    h_t = \alpha\, h_{t-1} + (1 - \alpha)\, x_t ,

with a fixed *leak* :math:`\alpha \in (0, 1)`. It is the discrete-time form of
the differential equation :math:`\tau\, \mathrm{d}h/\mathrm{d}t = x - h`,
whose response to a pulse decays as :math:`e^{-t/\tau}`: :math:`\tau` is the
unit's *time constant*, the time over which what it holds falls by a factor of
:math:`e`. Two discretizations with a step of one are in use:

* **exact**: :math:`\alpha = e^{-1/\tau}`; the pulse response is
  :math:`e^{-n/\tau}` at every whole step, so :math:`\tau` is exactly the
  e-fold horizon :math:`-1/\ln\alpha` of :mod:`rnnmem.memory`;
* **Euler**: :math:`\alpha = 1 - 1/\tau` (for :math:`\tau \ge 1`), the forward
  step :math:`h_t = h_{t-1} + (x_t - h_{t-1})/\tau`; then :math:`\tau` is
  exactly the mean lifetime :math:`1/(1 - \alpha) = \sum_n \alpha^n`.

The two readings of :math:`\tau` are the two bounds of the e-fold horizon
apart, less than a step. An LSTM whose input gate is tied to its forget gate,
:math:`i = 1 - f`, and whose candidate reads the input is a leaky unit with
leak :math:`f`: this is how Tallec and Ollivier (2018) derive chrono
initialization (:func:`gate_biases`).

Scalars in give Python floats out; arrays give float64 arrays. Bad input
raises :class:`ValueError` naming the argument.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .checks import check_choice, check_finite, check_open_unit, check_positive

__all__ = ["DISCRETIZATIONS", "leak", "time_constant", "run", "gate_biases"]

DISCRETIZATIONS = ("exact", "euler")
"""The two ways of turning a time constant into a per-step leak (see the module)."""


def _out(x: Any, value: Any) -> Any:
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        return float(value)
    return np.asarray(value, dtype=np.float64)


def _check_tau(tau: Any, discretization: str) -> np.ndarray:
    tau = check_positive("tau", tau)
    tt = np.asarray(tau, dtype=np.float64)
    if discretization == "euler" and np.any(tt <= 1.0):
        raise ValueError(f"tau must be greater than 1 for the Euler leak 1 - 1/tau (a leak in (0, 1)), got {tau!r}")
    return tt


def leak(tau: Any, discretization: str = "exact") -> Any:
    r"""The per-step leak :math:`\alpha` of a unit with time constant ``tau``.

    ``"exact"``: :math:`\alpha = e^{-1/\tau}`, so that :math:`\alpha^n =
    e^{-n/\tau}`; ``"euler"``: :math:`\alpha = 1 - 1/\tau`, for
    :math:`\tau > 1`. Either way the leak is the forget gate of a cell that
    behaves as this unit.

    >>> round(leak(10.0), 4), leak(10.0, "euler")
    (0.9048, 0.9)
    >>> leak(np.array([2.0, 4.0]), "euler").tolist()
    [0.5, 0.75]
    """
    discretization = check_choice("discretization", discretization, DISCRETIZATIONS)
    tt = _check_tau(tau, discretization)
    value = np.exp(-1.0 / tt) if discretization == "exact" else 1.0 - 1.0 / tt
    return _out(tau, value)


def time_constant(alpha: Any, discretization: str = "exact") -> Any:
    r"""The time constant of a unit with leak ``alpha``: the inverse of :func:`leak`.

    ``"exact"``: :math:`\tau = -1/\ln\alpha`, the e-fold horizon;
    ``"euler"``: :math:`\tau = 1/(1 - \alpha)`, the mean lifetime. The second
    exceeds the first by less than one step, whatever :math:`\alpha` is.

    >>> round(time_constant(0.9), 3), round(time_constant(0.9, "euler"), 3)
    (9.491, 10.0)
    """
    discretization = check_choice("discretization", discretization, DISCRETIZATIONS)
    alpha = check_open_unit("alpha", alpha)
    aa = np.asarray(alpha, dtype=np.float64)
    value = -1.0 / np.log(aa) if discretization == "exact" else 1.0 / (1.0 - aa)
    return _out(alpha, value)


def run(x: Any, tau: Any, h0: Any = 0.0, discretization: str = "exact") -> np.ndarray:
    r"""Feed the sequence ``x`` (time on axis 0) to leaky units: :math:`h_t = \alpha h_{t-1} + (1 - \alpha) x_t`.

    ``tau`` is one time constant or one per unit (it broadcasts against a
    step ``x[t]``); ``h0`` is the state before the first step. Returns the
    states :math:`h_1, \dots, h_T`, shaped like ``x`` broadcast with ``tau``.

    A pulse at the first step, read at step :math:`1 + \tau`, has fallen by
    :math:`e`:

    >>> x = np.zeros(21); x[0] = 1.0
    >>> h = run(x, 5.0)
    >>> round(float(h[5] / h[0]), 4), round(float(np.exp(-1)), 4)
    (0.3679, 0.3679)
    """
    discretization = check_choice("discretization", discretization, DISCRETIZATIONS)
    xs = np.asarray(check_finite("x", x), dtype=np.float64)
    if xs.ndim == 0 or xs.shape[0] == 0:
        raise ValueError(f"x must be a sequence with at least one step on axis 0, got shape {xs.shape}")
    alpha = np.asarray(leak(tau, discretization), dtype=np.float64)
    h = np.asarray(check_finite("h0", h0), dtype=np.float64)
    states = []
    for x_t in xs:
        h = alpha * h + (1.0 - alpha) * x_t
        states.append(h)
    return np.stack(states)


def gate_biases(tau: Any) -> tuple[Any, Any]:
    r"""The forget and input biases ``(b_f, b_i)`` that start a gated cell as a leaky unit of time constant ``tau``.

    With the weights at zero the gates are :math:`f = \sigma(b_f)` and
    :math:`i = \sigma(b_i)`. The Euler leaky unit with time constant
    :math:`\tau` needs :math:`f = 1 - 1/\tau` and :math:`i = 1 - f = 1/\tau`.
    Since :math:`1/(1 - \sigma(b)) = 1 + e^{b}` and :math:`\sigma(-b) = 1 -
    \sigma(b)`, that is

    .. math::

        b_f = \ln(\tau - 1), \qquad b_i = -b_f .

    Chrono initialization (Tallec and Ollivier, 2018) is this map applied to
    time constants drawn uniformly from :math:`[2, T_{\max}]`
    (:func:`rnnmem.init.chrono_biases` draws :math:`u = \tau - 1`).

    >>> b_f, b_i = gate_biases(10.0)
    >>> round(b_f, 4), round(b_i, 4)
    (2.1972, -2.1972)
    """
    tt = _check_tau(tau, "euler")
    b_f = np.log(tt - 1.0)
    return _out(tau, b_f), _out(tau, -b_f)

r"""The carry factor of a gated cell, measured on data rather than read off its bias.

Along the carry line a cell multiplies its memory by one factor per unit and
step: the forget gate :math:`f_t` of an LSTM, :math:`c_t = f_t \odot c_{t-1} +
\dots`, and the *keep* factor of a GRU, :math:`h_t = k_t \odot h_{t-1} + (1 -
k_t) \odot n_t`, which is the update gate :math:`z_t` under PyTorch's
convention (``update="z_keeps"``) and :math:`1 - z_t` under the other
(``update="z_writes"``). At zero input and zero state the factor is the
logistic function of the gate's bias; fed data, it is
:math:`\sigma(W x_t + U h_{t-1} + b)`, and the weighted sums spread it.

:func:`carry_factors` runs a model's own step function (:func:`rnnmem.lstm.step`,
:func:`rnnmem.gru.step`) over a batch of sequences and returns every factor;
:func:`efold_of_factors` turns them into one e-fold horizon through the mean
of :math:`\ln f`, since a product of factors decays as :math:`e^{n\,
\overline{\ln f}}`. :func:`default_forget_gates` sets the gates of
PyTorch's default LSTMs fed noise beside their zero-input values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import cells, gru, lstm, memory
from .checks import check_list, check_nonnegative_int, check_open_unit, check_positive_int

__all__ = ["carry_factors", "efold_of_factors", "ForgetGates", "default_forget_gates"]


def carry_factors(model: Any, x: Any) -> np.ndarray:
    r"""The per-step carry factor of every unit, for the batch of sequences ``x`` ``(T, B, d)``.

    ``model`` is an :class:`rnnmem.LSTM` (the factor is the forget gate
    :math:`f_t`) or an :class:`rnnmem.GRU` (the factor is :math:`z_t` under
    ``update="z_keeps"``, :math:`1 - z_t` under ``"z_writes"``). The states
    start at zero. Returns an array ``(T, B, H)``; row ``t - 1`` holds the
    factors of step ``t``.

    >>> from rnnmem import LSTM, memory
    >>> model = LSTM(2, 3, seed=0)
    >>> f = carry_factors(model, np.zeros((4, 1, 2)))
    >>> f.shape
    (4, 1, 3)
    >>> zero_input = memory.sigmoid(model.b_ih[3:6] + model.b_hh[3:6])
    >>> bool(np.allclose(f[0, 0], zero_input))
    True
    """
    if not isinstance(model, (lstm.LSTM, gru.GRU)):
        raise ValueError(f"model must be an rnnmem.LSTM or an rnnmem.GRU, got {type(model).__name__}")
    xs = np.asarray(x, dtype=np.float64)
    if xs.ndim != 3 or xs.shape[0] == 0 or xs.shape[2] != model.input_size:
        raise ValueError(f"x must have shape (T, B, {model.input_size}) with T >= 1, got {xs.shape}")
    if not np.all(np.isfinite(xs)):
        raise ValueError("x must be finite, got NaN or infinity")
    H, B = model.hidden_size, xs.shape[1]
    h = np.zeros((B, H))
    weights = (model.W_ih, model.W_hh, model.b_ih, model.b_hh)
    factors = np.empty((xs.shape[0], B, H))
    if isinstance(model, lstm.LSTM):
        c = np.zeros((B, H))
        for t, x_t in enumerate(xs):
            cell = lstm.step(x_t, h, c, *weights)
            h, c, factors[t] = cell.h, cell.c, cell.f
        return factors
    for t, x_t in enumerate(xs):
        unit = gru.step(x_t, h, *weights, update=model.update, reset=model.reset)
        h = unit.h
        factors[t] = unit.z if model.update == "z_keeps" else 1.0 - unit.z
    return factors


def efold_of_factors(factors: Any) -> float:
    r"""The e-fold horizon of a collection of carry factors: :math:`\tau = -1/\overline{\ln f}`.

    A product of :math:`n` factors is :math:`e^{\sum \ln f} \approx
    e^{n\,\overline{\ln f}}`, so the mean of the logarithms, not the mean of
    the factors, sets the decay. For one repeated factor this is
    :func:`rnnmem.memory.efold_horizon`.

    >>> from rnnmem import memory
    >>> round(efold_of_factors([0.5, 0.5]), 2)
    1.44
    >>> round(efold_of_factors([0.2, 0.8]), 2), round(memory.efold_horizon(0.5), 2)
    (1.09, 1.44)
    """
    ff = np.asarray(factors, dtype=np.float64)
    if ff.size == 0:
        raise ValueError("factors must hold at least one value, got an empty array")
    check_open_unit("factors", ff)
    return float(-1.0 / np.mean(np.log(ff)))


@dataclass(frozen=True)
class ForgetGates:
    """Forget gates of LSTMs fed data (``on_data``) and the same units' gates at zero input (``zero_input``).

    Both are flat arrays, one entry per seed, unit and (for ``on_data``)
    sequence. :meth:`summary` gives the numbers the forget-bias chapter reads.
    """

    on_data: np.ndarray
    zero_input: np.ndarray

    def summary(self) -> dict[str, float]:
        """``min``, ``max``, ``sd`` and ``median`` of the gates on data; ``zero_min`` and ``zero_max`` of
        the zero-input gates; ``tau_data`` and ``tau_zero``, their :func:`efold_of_factors`."""
        d, z = self.on_data, self.zero_input
        return {
            "min": float(d.min()),
            "max": float(d.max()),
            "sd": float(d.std()),
            "median": float(np.median(d)),
            "zero_min": float(z.min()),
            "zero_max": float(z.max()),
            "tau_data": efold_of_factors(d),
            "tau_zero": efold_of_factors(z),
        }


def default_forget_gates(
    hidden: int = 256, steps: int = 50, batch: int = 16, seeds: Any = (0, 1, 2), data_seed: int = 1
) -> ForgetGates:
    r"""The forget gates of PyTorch's default LSTMs at step ``steps`` of unit-variance noise, and at zero input.

    One :class:`rnnmem.LSTM` of ``hidden`` units with ``hidden`` inputs per
    seed of ``seeds`` (PyTorch's default draw), fed ``batch`` sequences of
    standard normal inputs from ``data_seed``; ``on_data`` holds
    :func:`carry_factors` at the last step, ``zero_input`` the gates
    :math:`\sigma(b_{if} + b_{hf})` that the bias alone sets.

    Fed data, the gates spread far beyond the narrow band their biases give:

    >>> g = default_forget_gates(hidden=16, steps=5, batch=4, seeds=[0])
    >>> g.on_data.shape, g.zero_input.shape
    ((64,), (16,))
    >>> s = g.summary()
    >>> bool(s["max"] - s["min"] > 2 * (s["zero_max"] - s["zero_min"]))
    True
    """
    H = check_positive_int("hidden", hidden)
    T = check_positive_int("steps", steps)
    B = check_positive_int("batch", batch)
    seeds = check_list("seeds", seeds, check_nonnegative_int, "seeds (whole numbers >= 0)")
    noise = np.random.default_rng(check_nonnegative_int("data_seed", data_seed)).standard_normal((T, B, H))
    forget = cells.gate_slice("lstm", "f", H)
    on_data, zero_input = [], []
    for seed in seeds:
        model = lstm.LSTM(H, H, seed=seed)
        on_data.append(carry_factors(model, noise)[-1].ravel())
        zero_input.append(memory.sigmoid(model.b_ih[forget] + model.b_hh[forget]))
    return ForgetGates(np.concatenate(on_data), np.concatenate(zero_input))

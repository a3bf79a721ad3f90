r"""The tanh recurrent network (Elman's RNN), one step and a whole sequence.

Equations, for input :math:`x_t` and previous state :math:`h_{t-1}`:

.. math::  h_t = \tanh(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh})

Conventions as PyTorch's ``nn.RNN(D, H)`` (one layer, ``nonlinearity="tanh"``,
``batch_first=False``): parameters ``W_ih`` ``(H, D)``, ``W_hh`` ``(H, H)``
and two biases ``b_ih``, ``b_hh`` ``(H,)``; sequences time first, ``(T, B, D)``.

:func:`step` is the equation as written, for reading and for Jacobians;
:class:`RNN` runs a sequence and its exact backpropagation through time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._recurrent import Recurrent, check_step_args

__all__ = ["RNN", "step"]


def step(x: Any, h_prev: Any, W_ih: Any, W_hh: Any, b_ih: Any, b_hh: Any) -> np.ndarray:
    r"""One step of the tanh RNN: :math:`h = \tanh(W_{ih} x + b_{ih} + W_{hh} h_{prev} + b_{hh})`.

    ``x`` is ``(B, D)`` or ``(D,)``, ``h_prev`` ``(B, H)`` or ``(H,)``; the
    weights are in torch layout. Returns the new hidden state, shaped like
    ``h_prev``.

    >>> W_ih, W_hh = np.array([[1.0]]), np.array([[0.5]])
    >>> b = np.zeros(1)
    >>> step(np.array([0.2]), np.array([0.4]), W_ih, W_hh, b, b).round(6).tolist()
    [0.379949]
    """
    x, h_prev, W_ih, W_hh, b_ih, b_hh = check_step_args(1, x, h_prev, W_ih, W_hh, b_ih, b_hh)
    return np.tanh(x @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh)


class RNN(Recurrent):
    r"""A single-layer tanh RNN over whole sequences, with exact backpropagation through time.

    ``RNN(input_size, hidden_size, *, dtype=np.float64, seed=None)`` draws
    every weight and both biases from :math:`U(-1/\sqrt{H}, 1/\sqrt{H})`, as
    PyTorch does; ``seed`` is an int or a ``numpy.random.Generator``. The
    parameters are the attributes ``W_ih`` ``(H, D)``, ``W_hh`` ``(H, H)``,
    ``b_ih`` and ``b_hh`` ``(H,)``. The state is ``h``.

    The sequence path computes what :func:`step` computes, with one matrix
    product for the input projections of all steps and one per step for the
    recurrence.

    >>> model = RNN(2, 3, seed=0)
    >>> outputs, h = model.forward(np.ones((4, 2, 2)))    # T=4, B=2, D=2
    >>> outputs.shape, h.shape
    ((4, 2, 3), (2, 3))
    >>> grads = model.backward(np.zeros_like(outputs), d_final_state=np.ones_like(h))
    >>> grads["h0"].shape, grads["weight_hh_l0"].shape
    ((2, 3), (3, 3))
    """

    gate_names = ("h",)
    state_names = ("h",)

    def _forward(self, x: np.ndarray, state: tuple) -> tuple:
        T, B, D = x.shape
        H = self.hidden_size
        hidden = self._buffer("hidden", (T + 1, B, H))
        pre = self._buffer("pre", (T, B, H))
        recurrent = self._buffer("recurrent", (B, H))
        np.matmul(x.reshape(T * B, D), self.W_ih.T, out=pre.reshape(T * B, H))
        pre += self.b_ih + self.b_hh
        hidden[0] = state[0]
        W_hT = np.ascontiguousarray(self.W_hh.T)
        for t in range(T):
            np.matmul(hidden[t], W_hT, out=recurrent)
            np.add(pre[t], recurrent, out=recurrent)
            np.tanh(recurrent, out=hidden[t + 1])
        return hidden[1:].copy(), (hidden[T].copy(),), {"x": x, "hidden": hidden}

    def _backward(self, cache: dict, d_outputs: np.ndarray, d_final: tuple) -> dict:
        x, hidden = cache["x"], cache["hidden"]
        T, B, D = x.shape
        H, dtype = self.hidden_size, self.dtype
        d_pre = self._buffer("d_pre", (T, B, H))
        np.multiply(hidden[1:], hidden[1:], out=d_pre)
        np.subtract(1.0, d_pre, out=d_pre)  # tanh' = 1 - h^2, times dh_t in the loop
        (dh_T,) = d_final
        d_recurrent = np.zeros((B, H), dtype=dtype) if dh_T is None else dh_T.copy()
        d_hidden = self._buffer("d_hidden", (B, H))
        for t in range(T - 1, -1, -1):
            np.add(d_outputs[t], d_recurrent, out=d_hidden)
            d_pre[t] *= d_hidden
            np.matmul(d_pre[t], self.W_hh, out=d_recurrent)
        d_flat = d_pre.reshape(T * B, H)
        d_bias = np.ones(T * B, dtype=dtype) @ d_flat
        return {
            "weight_ih_l0": d_flat.T @ x.reshape(T * B, D),
            "weight_hh_l0": d_flat.T @ hidden[:-1].reshape(T * B, H),
            "bias_ih_l0": d_bias,
            "bias_hh_l0": d_bias.copy(),
            "x": (d_flat @ self.W_ih).reshape(T, B, D),
            "h0": d_recurrent,
        }

r"""The long short-term memory (LSTM), one step and a whole sequence.

Equations, for input :math:`x_t`, previous hidden state :math:`h_{t-1}` and
previous cell :math:`c_{t-1}`; each gate has its own block of rows of the
weights and biases:

.. math::

    i_t &= \sigma(W_{ii} x_t + b_{ii} + W_{hi} h_{t-1} + b_{hi})  &\text{input gate}\\
    f_t &= \sigma(W_{if} x_t + b_{if} + W_{hf} h_{t-1} + b_{hf})  &\text{forget gate}\\
    g_t &= \tanh(W_{ig} x_t + b_{ig} + W_{hg} h_{t-1} + b_{hg})   &\text{candidate}\\
    o_t &= \sigma(W_{io} x_t + b_{io} + W_{ho} h_{t-1} + b_{ho})  &\text{output gate}\\
    c_t &= f_t \odot c_{t-1} + i_t \odot g_t                      &\text{cell}\\
    h_t &= o_t \odot \tanh(c_t)                                   &\text{hidden state}

Conventions as PyTorch's ``nn.LSTM(D, H)`` (one layer, ``batch_first=False``):
the gates are stacked by rows in the order ``i|f|g|o``, so ``W_ih`` is
``(4H, D)``, ``W_hh`` ``(4H, H)``, and there are two biases ``b_ih`` and
``b_hh``, ``(4H,)`` each, of which only the sum matters; sequences are time
first, ``(T, B, D)``, and the state is the pair ``(h, c)``.

:func:`step` is the equations as written, for reading and for Jacobians;
:class:`LSTM` runs a sequence and its exact backpropagation through time.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._recurrent import check_step_args, sigmoid

__all__ = ["LSTMStep", "step"]


class LSTMStep(NamedTuple):
    """Everything one LSTM step computes: the four gates, the new cell and hidden state."""

    i: np.ndarray
    """Input gate."""
    f: np.ndarray
    """Forget gate."""
    g: np.ndarray
    """Candidate (the value the input gate writes)."""
    o: np.ndarray
    """Output gate."""
    c: np.ndarray
    """New cell."""
    h: np.ndarray
    """New hidden state."""


def step(x: Any, h_prev: Any, c_prev: Any, W_ih: Any, W_hh: Any, b_ih: Any, b_hh: Any) -> LSTMStep:
    r"""One LSTM step, the equations of the module as written.

    ``x`` is ``(B, D)`` or ``(D,)``; ``h_prev`` and ``c_prev`` are ``(B, H)`` or
    ``(H,)``; the weights are in torch layout, gates ``i|f|g|o``. Returns an
    :class:`LSTMStep` ``(i, f, g, o, c, h)``, each shaped like ``h_prev``.

    A forget gate held open by a large bias keeps the cell:

    >>> H, D = 1, 1
    >>> W_ih, W_hh = np.zeros((4 * H, D)), np.zeros((4 * H, H))
    >>> b_ih = np.array([0.0, 5.0, 0.0, 0.0])   # i, f, g, o
    >>> s = step(np.ones(D), np.zeros(H), np.ones(H), W_ih, W_hh, b_ih, np.zeros(4 * H))
    >>> round(float(s.f[0]), 4), round(float(s.c[0]), 4), round(float(s.h[0]), 4)
    (0.9933, 0.9933, 0.3794)
    """
    x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh = check_step_args(
        4, x, h_prev, W_ih, W_hh, b_ih, b_hh, c_prev=c_prev)
    H = W_hh.shape[1]
    pre = x @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh
    input_gate = sigmoid(pre[..., 0 * H:1 * H])
    forget_gate = sigmoid(pre[..., 1 * H:2 * H])
    candidate = np.tanh(pre[..., 2 * H:3 * H])
    output_gate = sigmoid(pre[..., 3 * H:4 * H])
    cell = forget_gate * c_prev + input_gate * candidate
    hidden = output_gate * np.tanh(cell)
    return LSTMStep(input_gate, forget_gate, candidate, output_gate, cell, hidden)

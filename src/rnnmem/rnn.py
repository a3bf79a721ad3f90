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

from ._recurrent import check_step_args

__all__ = ["step"]


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

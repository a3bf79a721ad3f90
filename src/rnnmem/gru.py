r"""The gated recurrent unit (GRU), one step and a whole sequence, in its conventions.

Equations, for input :math:`x_t` and previous state :math:`h_{t-1}`; each gate
has its own block of rows of the weights and biases:

.. math::

    r_t &= \sigma(W_{ir} x_t + b_{ir} + W_{hr} h_{t-1} + b_{hr})   &\text{reset gate}\\
    z_t &= \sigma(W_{iz} x_t + b_{iz} + W_{hz} h_{t-1} + b_{hz})   &\text{update gate}\\
    n_t &= \tanh(W_{in} x_t + b_{in} + r_t \odot (W_{hn} h_{t-1} + b_{hn}))  &\text{candidate}\\
    h_t &= z_t \odot h_{t-1} + (1 - z_t) \odot n_t                 &\text{hidden state}

Two conventions differ between sources, and both are options:

``update=`` which share of the state the update gate :math:`z` weights:

* ``"z_keeps"`` (default): :math:`h_t = z_t \odot h_{t-1} + (1 - z_t) \odot n_t`,
  :math:`z` is the share of the old state kept. Cho et al. (2014), PyTorch,
  Keras and TensorFlow, cuDNN.
* ``"z_writes"``: :math:`h_t = (1 - z_t) \odot h_{t-1} + z_t \odot n_t`,
  :math:`z` is the share written from the candidate. Chung et al. (2014),
  Olah's "Understanding LSTM Networks", Wikipedia.

``reset=`` where the reset gate :math:`r` acts in the candidate:

* ``"after"`` (default): after the recurrent product,
  :math:`n_t = \tanh(W_{in} x_t + b_{in} + r_t \odot (W_{hn} h_{t-1} + b_{hn}))`.
  PyTorch, cuDNN, and Keras with its default ``reset_after=True``.
* ``"before"``: on the state before the product,
  :math:`n_t = \tanh(W_{in} x_t + b_{in} + W_{hn} (r_t \odot h_{t-1}) + b_{hn})`.
  Cho et al. (2014), Chung et al. (2014), textbooks, and Keras with
  ``reset_after=False``.

The defaults together are PyTorch's ``nn.GRU(D, H)`` (one layer,
``batch_first=False``), whose conventions the layout follows: gates stacked by
rows in the order ``r|z|n``, ``W_ih`` ``(3H, D)``, ``W_hh`` ``(3H, H)``, two
biases ``b_ih`` and ``b_hh`` ``(3H,)`` each (for ``r`` and ``z``, and for
``n`` under ``reset="before"``, only their sum matters); sequences time first,
``(T, B, D)``.

:func:`step` is the equations as written, for reading and for Jacobians;
:class:`GRU` runs a sequence and its exact backpropagation through time.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._recurrent import check_step_args, sigmoid
from ._validate import check_choice

__all__ = ["UPDATE_CONVENTIONS", "RESET_CONVENTIONS", "GRUStep", "step"]

UPDATE_CONVENTIONS = ("z_keeps", "z_writes")
"""The values of ``update=``: ``z`` weights the old state, or the candidate."""

RESET_CONVENTIONS = ("after", "before")
"""The values of ``reset=``: ``r`` applied after the recurrent product, or before it."""


class GRUStep(NamedTuple):
    """Everything one GRU step computes: the two gates, the candidate and the new state."""

    r: np.ndarray
    """Reset gate."""
    z: np.ndarray
    """Update gate."""
    n: np.ndarray
    """Candidate."""
    h: np.ndarray
    """New hidden state."""


def step(x: Any, h_prev: Any, W_ih: Any, W_hh: Any, b_ih: Any, b_hh: Any, *,
         update: str = "z_keeps", reset: str = "after") -> GRUStep:
    r"""One GRU step, the equations of the module as written, in the chosen conventions.

    ``x`` is ``(B, D)`` or ``(D,)``; ``h_prev`` is ``(B, H)`` or ``(H,)``; the
    weights are in torch layout, gates ``r|z|n``. ``update`` is ``"z_keeps"``
    or ``"z_writes"``, ``reset`` is ``"after"`` or ``"before"`` (see the
    module). Returns a :class:`GRUStep` ``(r, z, n, h)``, each shaped like
    ``h_prev``.

    With :math:`z = \sigma(2) \approx 0.88` the state mostly stays under
    ``"z_keeps"`` and is mostly replaced under ``"z_writes"``:

    >>> W_ih, W_hh = np.zeros((3, 1)), np.zeros((3, 1))
    >>> b_ih, b_hh = np.array([0.0, 2.0, 1.0]), np.zeros(3)   # r, z, n
    >>> keep = step(np.zeros(1), np.ones(1), W_ih, W_hh, b_ih, b_hh)
    >>> write = step(np.zeros(1), np.ones(1), W_ih, W_hh, b_ih, b_hh, update="z_writes")
    >>> round(float(keep.z[0]), 4), round(float(keep.h[0]), 4), round(float(write.h[0]), 4)
    (0.8808, 0.9716, 0.79)
    """
    update = check_choice("update", update, UPDATE_CONVENTIONS)
    reset = check_choice("reset", reset, RESET_CONVENTIONS)
    x, h_prev, W_ih, W_hh, b_ih, b_hh = check_step_args(3, x, h_prev, W_ih, W_hh, b_ih, b_hh)
    H = W_hh.shape[1]
    rz, n = slice(0, 2 * H), slice(2 * H, 3 * H)
    from_input = x @ W_ih.T + b_ih
    from_state = h_prev @ W_hh[rz].T + b_hh[rz]
    reset_gate = sigmoid(from_input[..., 0:H] + from_state[..., 0:H])
    update_gate = sigmoid(from_input[..., H:2 * H] + from_state[..., H:2 * H])
    if reset == "after":
        candidate = np.tanh(from_input[..., n] + reset_gate * (h_prev @ W_hh[n].T + b_hh[n]))
    else:
        candidate = np.tanh(from_input[..., n] + (reset_gate * h_prev) @ W_hh[n].T + b_hh[n])
    keep = update_gate if update == "z_keeps" else 1 - update_gate
    hidden = keep * h_prev + (1 - keep) * candidate
    return GRUStep(reset_gate, update_gate, candidate, hidden)

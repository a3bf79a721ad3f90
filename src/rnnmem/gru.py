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

from ._recurrent import Recurrent, check_step_args, sigmoid_inplace
from .checks import check_choice
from .memory import sigmoid

__all__ = ["GRU", "UPDATE_CONVENTIONS", "RESET_CONVENTIONS", "GRUStep", "step"]

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


def step(
    x: Any, h_prev: Any, W_ih: Any, W_hh: Any, b_ih: Any, b_hh: Any, *, update: str = "z_keeps", reset: str = "after"
) -> GRUStep:
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
    update_gate = sigmoid(from_input[..., H : 2 * H] + from_state[..., H : 2 * H])
    if reset == "after":
        candidate = np.tanh(from_input[..., n] + reset_gate * (h_prev @ W_hh[n].T + b_hh[n]))
    else:
        candidate = np.tanh(from_input[..., n] + (reset_gate * h_prev) @ W_hh[n].T + b_hh[n])
    keep = update_gate if update == "z_keeps" else 1 - update_gate
    hidden = keep * h_prev + (1 - keep) * candidate
    return GRUStep(reset_gate, update_gate, candidate, hidden)


class GRU(Recurrent):
    r"""A single-layer GRU over whole sequences, with exact backpropagation through time.

    ``GRU(input_size, hidden_size, *, dtype=np.float64, seed=None,
    update="z_keeps", reset="after")`` draws every weight and both biases from
    :math:`U(-1/\sqrt{H}, 1/\sqrt{H})`, as PyTorch does; ``seed`` is an int or
    a ``numpy.random.Generator``; ``update`` and ``reset`` choose the
    conventions of the module (the defaults are PyTorch's). The parameters
    are the attributes ``W_ih`` ``(3H, D)``, ``W_hh`` ``(3H, H)``, ``b_ih``
    and ``b_hh`` ``(3H,)``, gates ``r|z|n``. The state is ``h``.

    The sequence path computes what :func:`step` computes, with one matrix
    product for the input projections of all steps, one per step for the
    recurrence (two under ``reset="before"``, where the reset gate must be
    known before the candidate's product), and one for each weight gradient.

    >>> model = GRU(2, 3, seed=0, update="z_writes", reset="before")
    >>> model
    GRU(input_size=2, hidden_size=3, dtype=float64, update='z_writes', reset='before')
    >>> outputs, h = model.forward(np.ones((4, 1, 2)))
    >>> grads = model.backward(np.ones_like(outputs))
    >>> outputs.shape, grads["weight_hh_l0"].shape, grads["x"].shape
    ((4, 1, 3), (9, 3), (4, 1, 2))
    """

    gate_names = ("r", "z", "n")
    state_names = ("h",)
    option_names = ("update", "reset")

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        dtype: Any = np.float64,
        seed: Any = None,
        update: str = "z_keeps",
        reset: str = "after",
    ) -> None:
        self.update = check_choice("update", update, UPDATE_CONVENTIONS)
        self.reset = check_choice("reset", reset, RESET_CONVENTIONS)
        super().__init__(input_size, hidden_size, dtype=dtype, seed=seed)

    def _options(self) -> dict:
        return {"update": self.update, "reset": self.reset}

    def _forward(self, x: np.ndarray, state: tuple) -> tuple:
        T, B, D = x.shape
        H = self.hidden_size
        rz, n = slice(0, 2 * H), slice(2 * H, 3 * H)
        after = self.reset == "after"
        # From the input, all steps at once; the biases that enter as a sum go here.
        from_input = self._buffer("from_input", (T, B, 3 * H))
        np.matmul(x.reshape(T * B, D), self.W_ih.T, out=from_input.reshape(T * B, 3 * H))
        from_input += self.b_ih
        from_input[..., rz] += self.b_hh[rz]
        if not after:
            from_input[..., n] += self.b_hh[n]
        gates = self._buffer("gates", (T, B, 3 * H))  # r | z | n
        hidden = self._buffer("hidden", (T + 1, B, H))
        # reset "after": W_hn h + b_hn, which r multiplies; "before": r * h, which W_hn multiplies.
        reset_input = self._buffer("reset_input", (T, B, H))
        from_state = self._buffer("from_state", (B, 3 * H if after else 2 * H))
        W_hT = np.ascontiguousarray(self.W_hh.T if after else self.W_hh[rz].T)
        W_hnT = np.ascontiguousarray(self.W_hh[n].T)
        hidden[0] = state[0]
        for t in range(T):
            h_prev, g_t = hidden[t], gates[t]
            np.matmul(h_prev, W_hT, out=from_state)
            np.add(from_input[t, :, rz], from_state[:, rz], out=g_t[:, rz])
            sigmoid_inplace(g_t[:, rz])
            reset_gate, update_gate, candidate = g_t[:, 0:H], g_t[:, H : 2 * H], g_t[:, n]
            if after:
                np.add(from_state[:, n], self.b_hh[n], out=reset_input[t])
                np.multiply(reset_gate, reset_input[t], out=candidate)
            else:
                np.multiply(reset_gate, h_prev, out=reset_input[t])
                np.matmul(reset_input[t], W_hnT, out=candidate)
            candidate += from_input[t, :, n]
            np.tanh(candidate, out=candidate)
            # h = keep * h_prev + (1 - keep) * n, keep = z ("z_keeps") or 1 - z ("z_writes")
            if self.update == "z_keeps":
                np.subtract(h_prev, candidate, out=hidden[t + 1])
                hidden[t + 1] *= update_gate
                hidden[t + 1] += candidate
            else:
                np.subtract(candidate, h_prev, out=hidden[t + 1])
                hidden[t + 1] *= update_gate
                hidden[t + 1] += h_prev
        cache = {"x": x, "gates": gates, "hidden": hidden, "reset_input": reset_input}
        return hidden[1:].copy(), (hidden[T].copy(),), cache

    def _backward(self, cache: dict, d_outputs: np.ndarray, d_final: tuple) -> dict:
        x, gates, hidden, reset_input = cache["x"], cache["gates"], cache["hidden"], cache["reset_input"]
        T, B, D = x.shape
        H, dtype = self.hidden_size, self.dtype
        rz, n = slice(0, 2 * H), slice(2 * H, 3 * H)
        after = self.reset == "after"
        reset_gate, update_gate, candidate = gates[..., 0:H], gates[..., H : 2 * H], gates[..., n]
        h_prev = hidden[:-1]
        keep = update_gate if self.update == "z_keeps" else 1.0 - update_gate
        # dh_t/dz_t = +-(h_prev - n): + when z keeps the old state, - when z writes the candidate.
        sign = 1.0 if self.update == "z_keeps" else -1.0

        # d(pre-activation) = dh_t * coefficient, known from the forward pass
        # (under reset "before" the reset gate's needs a product with W_hn in the loop).
        coef = self._buffer("coef", (T, B, 3 * H))
        coef3 = coef.reshape(T, B, 3, H)
        np.multiply(candidate, candidate, out=coef3[:, :, 2])
        np.subtract(1.0, coef3[:, :, 2], out=coef3[:, :, 2])
        coef3[:, :, 2] *= 1.0 - keep  # n: (1 - keep)(1 - n^2)
        np.subtract(h_prev, candidate, out=coef3[:, :, 1])
        coef3[:, :, 1] *= sign * update_gate * (1.0 - update_gate)  # z
        reset_slope = reset_gate * (1.0 - reset_gate)
        if after:
            np.multiply(coef3[:, :, 2], reset_input, out=coef3[:, :, 0])
            coef3[:, :, 0] *= reset_slope  # r: via r * (W_hn h + b_hn)
        else:
            reset_slope *= h_prev  # r: via W_hn (r * h)

        d_input = self._buffer("d_input", (T, B, 3 * H))  # d(pre-activation), input side
        d_input3 = d_input.reshape(T, B, 3, H)
        d_state = self._buffer("d_state", (T, B, 3 * H)) if after else d_input
        d_state3 = d_state.reshape(T, B, 3, H)
        (dh_T,) = d_final
        d_recurrent = np.zeros((B, H), dtype=dtype) if dh_T is None else dh_T.copy()
        d_hidden = self._buffer("d_hidden", (B, H))
        d_reset_input = self._buffer("d_reset_input", (B, H))
        W_rz, W_n = self.W_hh[rz], self.W_hh[n]
        for t in range(T - 1, -1, -1):
            np.add(d_outputs[t], d_recurrent, out=d_hidden)
            if after:
                np.multiply(coef3[t], d_hidden[:, None, :], out=d_input3[t])
                d_state3[t, :, 0:2] = d_input3[t, :, 0:2]
                np.multiply(d_input3[t, :, 2], reset_gate[t], out=d_state3[t, :, 2])
                np.matmul(d_state[t], self.W_hh, out=d_recurrent)
            else:
                np.multiply(coef3[t, :, 1:], d_hidden[:, None, :], out=d_input3[t, :, 1:])
                np.matmul(d_input3[t, :, 2], W_n, out=d_reset_input)
                np.multiply(d_reset_input, reset_slope[t], out=d_input3[t, :, 0])
                np.matmul(d_input[t, :, rz], W_rz, out=d_recurrent)
                d_reset_input *= reset_gate[t]
                d_recurrent += d_reset_input
            d_hidden *= keep[t]
            d_recurrent += d_hidden

        d_in = d_input.reshape(T * B, 3 * H)
        d_st = d_state.reshape(T * B, 3 * H)
        ones = np.ones(T * B, dtype=dtype)
        d_W_hh = np.empty_like(self.W_hh)
        if after:
            d_W_hh[...] = d_st.T @ h_prev.reshape(T * B, H)
        else:
            d_W_hh[rz] = d_st[:, rz].T @ h_prev.reshape(T * B, H)
            d_W_hh[n] = d_st[:, n].T @ reset_input.reshape(T * B, H)
        return {
            "weight_ih_l0": d_in.T @ x.reshape(T * B, D),
            "weight_hh_l0": d_W_hh,
            "bias_ih_l0": ones @ d_in,
            "bias_hh_l0": ones @ d_st,
            "x": (d_in @ self.W_ih).reshape(T, B, D),
            "h0": d_recurrent,
        }

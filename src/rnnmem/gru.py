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
    _chunk_elements = 2**18
    """Backward sums the weight gradients over chunks of steps whose gate gradients hold about this many values."""

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
        # Feature-major, as in rnnmem.lstm: every per-step array is (rows, B), so that a gate is a
        # contiguous block of H rows and each element-wise operation one pass over contiguous numbers.
        # From the input, all steps at once, (T, 3H, B); the biases that enter as a sum go here.
        from_input = self._buffer("from_input", (T, 3 * H, B))
        np.matmul(self.W_ih, x.transpose(0, 2, 1), out=from_input)
        from_input += self.b_ih[:, None]
        from_input[:, rz] += self.b_hh[rz, None]
        if not after:
            from_input[:, n] += self.b_hh[n, None]
        gates = self._buffer("gates", (T, 3 * H, B))  # r | z | n
        hidden = self._buffer("hidden", (T + 1, H, B))
        # reset "after": W_hn h + b_hn, which r multiplies; "before": r * h, which W_hn multiplies.
        reset_input = self._buffer("reset_input", (T, H, B))
        from_state = self._buffer("from_state", (3 * H if after else 2 * H, B))
        W_h = np.ascontiguousarray(self.W_hh if after else self.W_hh[rz])
        W_hn = np.ascontiguousarray(self.W_hh[n])
        b_hn = self.b_hh[n, None]
        hidden[0] = state[0].T
        keeps = self.update == "z_keeps"
        for t in range(T):
            h_prev, g_t, h_t = hidden[t], gates[t], hidden[t + 1]
            np.matmul(W_h, h_prev, out=from_state)
            np.add(from_input[t, rz], from_state[rz], out=g_t[rz])
            sigmoid_inplace(g_t[rz])
            reset_gate, update_gate, candidate = g_t[0:H], g_t[H : 2 * H], g_t[n]
            if after:
                np.add(from_state[n], b_hn, out=reset_input[t])
                np.multiply(reset_gate, reset_input[t], out=candidate)
            else:
                np.multiply(reset_gate, h_prev, out=reset_input[t])
                np.matmul(W_hn, reset_input[t], out=candidate)
            candidate += from_input[t, n]
            np.tanh(candidate, out=candidate)
            # h = keep * h_prev + (1 - keep) * n, keep = z ("z_keeps") or 1 - z ("z_writes")
            if keeps:
                np.subtract(h_prev, candidate, out=h_t)
                h_t *= update_gate
                h_t += candidate
            else:
                np.subtract(candidate, h_prev, out=h_t)
                h_t *= update_gate
                h_t += h_prev
        cache = {"x": x, "gates": gates, "hidden": hidden, "reset_input": reset_input}
        return hidden[1:].transpose(0, 2, 1).copy(), (hidden[T].T.copy(),), cache

    def _backward(self, cache: dict, d_outputs: np.ndarray, d_final: tuple) -> dict:
        x, gates, hidden, reset_input = cache["x"], cache["gates"], cache["hidden"], cache["reset_input"]
        T, B, D = x.shape
        H, dtype = self.hidden_size, self.dtype
        rz, n = slice(0, 2 * H), slice(2 * H, 3 * H)
        after = self.reset == "after"
        reset_gate, update_gate, candidate = gates[:, 0:H], gates[:, H : 2 * H], gates[:, n]
        h_prev = hidden[:-1]
        keep = update_gate if self.update == "z_keeps" else 1.0 - update_gate
        # dh_t/dz_t = +-(h_prev - n): + when z keeps the old state, - when z writes the candidate.
        sign = 1.0 if self.update == "z_keeps" else -1.0

        # d(pre-activation) = dh_t * coefficient, known from the forward pass
        # (under reset "before" the reset gate's needs a product with W_hn in the loop).
        coef = self._buffer("coef", (T, 3 * H, B))
        c_r, c_z, c_n = coef[:, 0:H], coef[:, H : 2 * H], coef[:, n]
        scratch = self._buffer("coef_scratch", (T, H, B))
        np.multiply(candidate, candidate, out=c_n)
        np.subtract(1.0, c_n, out=c_n)
        np.subtract(1.0, keep, out=scratch)
        c_n *= scratch  # n: (1 - keep)(1 - n^2)
        np.subtract(h_prev, candidate, out=c_z)
        np.multiply(update_gate, sign, out=scratch)
        scratch *= 1.0 - update_gate
        c_z *= scratch  # z: +-(h_prev - n) z (1 - z)
        reset_slope = reset_gate * (1.0 - reset_gate)
        if after:
            np.multiply(c_n, reset_input, out=c_r)
            c_r *= reset_slope  # r: via r * (W_hn h + b_hn)
        else:
            reset_slope *= h_prev  # r: via W_hn (r * h)

        # Per step, the gate gradients as blocks of rows. reset "after": [r; z; r n; n], the first
        # three the state side (W_hh, b_hh: n's gradient there passes through r), the r, z and last
        # blocks the input side (W_ih, b_ih). reset "before": [r; z; n], one side for both.
        G = 4 * H if after else 3 * H
        d_rows = self._buffer("d_rows", (T, G, B))
        state_side = slice(0, 3 * H)  # "after": r, z, r n; "before": r, z, n
        input_blocks = (rz, slice(3 * H, 4 * H)) if after else (slice(0, 3 * H),)
        d_out = self._buffer("d_out", (T, H, B))
        np.copyto(d_out, d_outputs.transpose(0, 2, 1))
        (dh_T,) = d_final
        d_recurrent = np.zeros((H, B), dtype=dtype) if dh_T is None else dh_T.T.copy()
        d_hidden = self._buffer("d_hidden", (H, B))
        d_reset_input = self._buffer("d_reset_input", (H, B))
        if after:
            W_hhT = np.ascontiguousarray(self.W_hh.T)
        else:
            W_rzT, W_nT = np.ascontiguousarray(self.W_hh[rz].T), np.ascontiguousarray(self.W_hh[n].T)
        W_ih_blocks = [self.W_ih[rz], self.W_ih[n]] if after else [self.W_ih]
        # The weight gradients, summed over a chunk of steps at a time while its rows are in the cache:
        # the rows laid out (G, steps, B), one copy, then one product per block over all its columns.
        d_W_ih = np.zeros((3 * H, D), dtype=dtype)
        d_W_hh = np.zeros((3 * H, H), dtype=dtype)
        d_b_ih = np.zeros(3 * H, dtype=dtype)
        d_b_hh = np.zeros(3 * H, dtype=dtype)
        d_x = np.empty((T * B, D), dtype=dtype)
        x_rows = x.reshape(T * B, D)
        chunk = max(1, min(T, self._chunk_elements // (G * B)))
        for start in range(((T - 1) // chunk) * chunk, -1, -chunk):
            stop = min(start + chunk, T)
            for t in range(stop - 1, start - 1, -1):
                np.add(d_out[t], d_recurrent, out=d_hidden)
                d_t = d_rows[t]
                if after:
                    np.multiply(coef[t, rz].reshape(2, H, B), d_hidden, out=d_t[rz].reshape(2, H, B))
                    np.multiply(coef[t, n], d_hidden, out=d_t[3 * H :])
                    np.multiply(d_t[3 * H :], reset_gate[t], out=d_t[n])
                    np.matmul(W_hhT, d_t[: 3 * H], out=d_recurrent)
                else:
                    np.multiply(coef[t, H:].reshape(2, H, B), d_hidden, out=d_t[H:].reshape(2, H, B))
                    np.matmul(W_nT, d_t[n], out=d_reset_input)
                    np.multiply(d_reset_input, reset_slope[t], out=d_t[0:H])
                    np.matmul(W_rzT, d_t[rz], out=d_recurrent)
                    d_reset_input *= reset_gate[t]
                    d_recurrent += d_reset_input
                d_hidden *= keep[t]
                d_recurrent += d_hidden
            m = (stop - start) * B
            rows = self._buffer("chunk_rows", (G, chunk * B))[:, :m]
            np.copyto(rows.reshape(G, stop - start, B), d_rows[start:stop].transpose(1, 0, 2))
            h_rows = self._buffer("chunk_h", (H, chunk * B))[:, :m]
            np.copyto(h_rows.reshape(H, stop - start, B), h_prev[start:stop].transpose(1, 0, 2))
            x_chunk, ones = x_rows[start * B : stop * B], np.ones(m, dtype=dtype)
            if after:
                d_W_hh += rows[state_side] @ h_rows.T
                d_b_hh += rows[state_side] @ ones
            else:
                ri_rows = self._buffer("chunk_reset_input", (H, chunk * B))[:, :m]
                np.copyto(ri_rows.reshape(H, stop - start, B), reset_input[start:stop].transpose(1, 0, 2))
                d_W_hh[rz] += rows[rz] @ h_rows.T
                d_W_hh[n] += rows[n] @ ri_rows.T
            d_x_chunk = d_x[start * B : stop * B]
            at = 0
            for k, (block, W_block) in enumerate(zip(input_blocks, W_ih_blocks)):
                size = W_block.shape[0]
                d_W_ih[at : at + size] += rows[block] @ x_chunk
                d_b_ih[at : at + size] += rows[block] @ ones
                if k == 0:
                    np.matmul(rows[block].T, W_block, out=d_x_chunk)
                else:
                    d_x_chunk += rows[block].T @ W_block
                at += size
        if not after:
            d_b_hh[...] = d_b_ih
        return {
            "weight_ih_l0": d_W_ih,
            "weight_hh_l0": d_W_hh,
            "bias_ih_l0": d_b_ih,
            "bias_hh_l0": d_b_hh,
            "x": d_x.reshape(T, B, D),
            "h0": d_recurrent.T.copy(),
        }

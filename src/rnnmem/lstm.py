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

from ._recurrent import Recurrent, check_step_args
from .memory import sigmoid

__all__ = ["LSTM", "LSTMStep", "step"]


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
    x, h_prev, c_prev, W_ih, W_hh, b_ih, b_hh = check_step_args(4, x, h_prev, W_ih, W_hh, b_ih, b_hh, c_prev=c_prev)
    H = W_hh.shape[1]
    pre = x @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh
    input_gate = sigmoid(pre[..., 0 * H : 1 * H])
    forget_gate = sigmoid(pre[..., 1 * H : 2 * H])
    candidate = np.tanh(pre[..., 2 * H : 3 * H])
    output_gate = sigmoid(pre[..., 3 * H : 4 * H])
    cell = forget_gate * c_prev + input_gate * candidate
    hidden = output_gate * np.tanh(cell)
    return LSTMStep(input_gate, forget_gate, candidate, output_gate, cell, hidden)


class LSTM(Recurrent):
    r"""A single-layer LSTM over whole sequences, with exact backpropagation through time.

    ``LSTM(input_size, hidden_size, *, dtype=np.float64, seed=None)`` draws
    every weight and both biases from :math:`U(-1/\sqrt{H}, 1/\sqrt{H})`, as
    PyTorch does; ``seed`` is an int or a ``numpy.random.Generator``. The
    parameters are the attributes ``W_ih`` ``(4H, D)``, ``W_hh`` ``(4H, H)``,
    ``b_ih`` and ``b_hh`` ``(4H,)``, gates ``i|f|g|o``. The state is ``(h, c)``.

    The sequence path computes what :func:`step` computes, arranged for speed.
    Every per-step array is feature-major, ``(rows, B)``, so that each gate is
    one contiguous block of rows. A single matrix product per step, of the
    stacked weights ``[W_ih, b_ih + b_hh, W_hh]`` with the column block
    ``[x_t; 1; h_{t-1}]``, gives all four pre-activations. In float64 one
    ``exp`` and one division activate them all, the candidate through
    :math:`\tanh(z) = 2\sigma(2z) - 1`; in float32 one ``tanh`` does, the
    sigmoid gates through :math:`\sigma(z) = (1 + \tanh(z/2))/2` (the two
    agree to rounding). The backward pass computes each
    gate's coefficient, for a chunk of steps at once, in place where its
    gradient goes, so that the recursion over the steps only multiplies them by
    :math:`\partial L/\partial h_t` and :math:`\partial L/\partial c_t`;
    per chunk, three products give the weight and bias gradients (from ``x``
    and ``[1, h_{t-1}]`` as laid out batch-major) and the input gradient. Scratch
    arrays, and the per-step views of them, are kept from call to call.

    >>> model = LSTM(3, 2, seed=0)
    >>> x = np.ones((5, 1, 3))                       # T=5 steps, B=1, D=3
    >>> outputs, (h, c) = model.forward(x)
    >>> outputs.shape, h.shape, c.shape
    ((5, 1, 2), (1, 2), (1, 2))
    >>> grads = model.backward(np.ones_like(outputs))
    >>> sorted(grads)
    ['bias_hh_l0', 'bias_ih_l0', 'c0', 'h0', 'weight_hh_l0', 'weight_ih_l0', 'x']
    >>> grads["weight_ih_l0"].shape
    (8, 3)
    """

    gate_names = ("i", "f", "g", "o")
    state_names = ("h", "c")
    _chunk_elements = 2**18
    """Backward works through chunks of steps whose work arrays hold about this many values (5 H B per step)."""

    def _views(self, name: str, buffers: tuple, make) -> list:
        """Per-step views of the scratch buffers, made once and kept while the buffers are.

        Slicing costs as much as a small operation: at a small hidden size,
        making a dozen views per step would take a tenth of the time.
        """
        key = tuple(id(b) for b in buffers) + tuple(b.shape for b in buffers)
        kept = self.__dict__.setdefault("_step_views", {})
        if name not in kept or kept[name][0] != key:
            kept[name] = (key, make())
        return kept[name][1]

    def _forward(self, x: np.ndarray, state: tuple) -> tuple:
        T, B, D = x.shape
        H, dtype = self.hidden_size, self.dtype
        K = D + 1 + H
        # Feature-major: every per-step array is (rows, B), so that a gate is a
        # contiguous block of H rows and one matrix product gives all four.
        # rows[t] is [x_t; 1; h_{t-1}] (K, B): the stacked weights [W_ih,
        # b_ih + b_hh, W_hh] times it give every pre-activation of step t.
        # steps[t] is [o; i; f; g; c_{t-1}] (5H, B): the product writes the
        # gates above the previous cell, so that [i; f] * [g; c_{t-1}] is one
        # multiplication (into a small scratch array) and c_t the sum of its two
        # halves. What is kept for backward is only steps, tanh(c_t) and h.
        # Activations. float64: one exp activates all four gates. The rows are
        # scaled (exactly) so that with q = 1 + exp(-s z), 1/q is sigma(z) for o, i, f
        # (s = 1) and 2/q - 1 = 2 sigma(2z) - 1 = tanh(z) for g (s = 2). float32,
        # where numpy's tanh costs less than its exp: one tanh of all four, the rows
        # of o, i, f scaled by 1/2 (exactly), and sigma(z) = (1 + tanh(z/2)) / 2.
        by_tanh = dtype == np.float32
        W = np.concatenate([self.W_ih, (self.b_ih + self.b_hh)[:, None], self.W_hh], axis=1)
        W = W[_rows_oifg(H)]
        W[: 3 * H] *= 0.5 if by_tanh else -1.0
        if not by_tanh:
            W[3 * H :] *= -2.0  # (4H, K)

        rows = self._buffer("rows", (T + 1, K, B))
        products = self._buffer("products", (2 * H, B))  # [i g; f c_{t-1}] of the current step
        steps = self._buffer("steps", (T + 1, 5 * H, B))
        tanh_cell = self._buffer("tanh_cell", (T, H, B))
        # Batch-major copies of what backward multiplies the gate gradients by, so
        # that those products need no transposition: x as given, and hs[t] =
        # [1, h_{t-1}] (T + 1, B, 1 + H), the bias column then the previous hidden
        # state; hs[1:, :, 1:] are the outputs.
        hs = self._buffer("hs", (T + 1, B, 1 + H))
        one = np.ones((), dtype)
        rows[:T, :D] = x.transpose(0, 2, 1)
        rows[:T, D] = one
        rows[0, D + 1 : K] = state[0].T
        steps[0, 4 * H :] = state[1].T
        hs[:, :, 0] = one
        hs[0, :, 1:] = state[0]
        # numpy's float64 tanh costs about three of its exps: there tanh(c) is
        # computed as 2 / (1 + exp(-2c)) - 1.
        half, minus_two, two = np.full((), 0.5, dtype), np.full((), -2.0, dtype), np.full((), 2.0, dtype)
        numerator = self._buffer("numerator", (4 * H, B))  # 1 for o, i, f; 2 for g
        numerator[: 3 * H] = one
        numerator[3 * H :] = two
        views = self._views(
            "forward",
            (rows, steps, tanh_cell, products),
            lambda: [
                (
                    rows[t, :K],
                    steps[t, : 4 * H],
                    steps[t, : 3 * H],
                    steps[t, 3 * H : 4 * H],
                    steps[t, H : 3 * H],
                    steps[t, 3 * H :],
                    products,
                    products[:H],
                    products[H:],
                    steps[t + 1, 4 * H :],
                    tanh_cell[t],
                    steps[t, :H],
                    rows[t + 1, D + 1 : K],
                )
                for t in range(T)
            ],
        )
        # Outputs are passed by position, and in-place updates spelled as calls:
        # parsing out= costs about a tenth of a small operation.
        divide, exp, matmul, tanh = np.divide, np.exp, np.matmul, np.tanh
        multiply, add, subtract = np.multiply, np.add, np.subtract
        if by_tanh:
            for x_t, gates, sigmoids, _, i_f, g_c, p_t, p_ig, p_fc, c_t, tc_t, o_t, h_t in views:
                matmul(W, x_t, gates)
                tanh(gates, gates)  # tanh(z/2) for o, i, f; tanh(z) for g
                multiply(sigmoids, half, sigmoids)
                add(sigmoids, half, sigmoids)
                multiply(i_f, g_c, p_t)
                add(p_ig, p_fc, c_t)
                tanh(c_t, tc_t)
                multiply(o_t, tc_t, h_t)
        else:
            with np.errstate(over="ignore"):  # exp(-z) = inf for a gate shut hard: sigma = 1/inf = 0
                for x_t, gates, _, candidate, i_f, g_c, p_t, p_ig, p_fc, c_t, tc_t, o_t, h_t in views:
                    matmul(W, x_t, gates)
                    exp(gates, gates)
                    add(gates, one, gates)
                    divide(numerator, gates, gates)  # sigma(z) for o, i, f; 2 sigma(2z) for g
                    subtract(candidate, one, candidate)
                    multiply(i_f, g_c, p_t)
                    add(p_ig, p_fc, c_t)
                    multiply(c_t, minus_two, tc_t)
                    exp(tc_t, tc_t)
                    add(tc_t, one, tc_t)
                    divide(two, tc_t, tc_t)
                    subtract(tc_t, one, tc_t)
                    multiply(o_t, tc_t, h_t)
        np.copyto(hs[1:, :, 1:], rows[1:, D + 1 : K].transpose(0, 2, 1))
        cache = {"x": x, "rows": rows, "steps": steps, "tanh_cell": tanh_cell, "hs": hs}
        outputs = hs[1:, :, 1:].copy()
        return outputs, (outputs[T - 1].copy(), steps[T, 4 * H :].T.copy()), cache

    def _backward(self, cache: dict, d_outputs: np.ndarray, d_final: tuple) -> dict:
        x, rows, steps, tanh_cell, hs = (cache[k] for k in ("x", "rows", "steps", "tanh_cell", "hs"))
        T, B, D = x.shape
        H, dtype = self.hidden_size, self.dtype
        one = np.ones((), dtype)

        # The gradient of a gate's pre-activation is the upstream gradient (dh_t
        # for o; dc_t for i, f, g) times a coefficient known from the forward
        # pass: the slope of its activation times what the gate multiplies,
        #   o: h (1 - o),  i: i g (1 - i),  f: f c_{t-1} (1 - f),  g: i - i g g,
        # and dc_t gains dh_t (o - h tanh(c_t)). Row block j of `work` is
        # [o - h tanh(c_t); o; i; f; g] (5H, B): the coefficients, multiplied in
        # place by dh_t (first two blocks) and dc_t (last three). The steps go
        # in chunks. No coefficient depends on the recursion, so a chunk's are
        # computed first, eight operations over all its steps at once, from the
        # gates, c_{t-1} and tanh(c_t) alone (h = o tanh(c_t), i g and f c_{t-1}
        # are computed again: reading them back from memory costs more); the loop
        # over the steps then does five element-wise operations and the
        # product with W_hh^T per step. Per chunk, the gate gradients are laid
        # out row-major over (step, batch), one copy, for one product each with
        # x and with [1, h_{t-1}] (the weight and bias gradients; both are
        # batch-major already) and with W_ih (dx).
        chunk = max(1, min(T, self._chunk_elements // (5 * H * B)))
        work = self._buffer("work", (chunk, 5 * H, B))
        by_gate = work.reshape(chunk, 5, H, B)
        d_rows = self._buffer("d_rows", (4 * H, chunk, B))
        d_next = self._buffer("d_next", (chunk, H, B))  # dy_t, feature-major
        d_W_x_part = self._buffer("d_W_x_part", (4 * H, D))
        d_W_h_part = self._buffer("d_W_h_part", (4 * H, 1 + H))
        d_W_x = np.zeros((4 * H, D), dtype=dtype)  # dW_ih, rows o|i|f|g
        d_W_h = np.zeros((4 * H, 1 + H), dtype=dtype)  # [db, dW_hh], rows o|i|f|g
        d_x = np.empty((T * B, D), dtype=dtype)
        x_rows = x.reshape(T * B, D)
        hs_rows = hs.reshape((T + 1) * B, 1 + H)
        W_ih = self.W_ih[_rows_oifg(H)]
        d_hidden = self._buffer("d_hidden", (H, B))
        dh_T, dc_T = d_final
        d_cell = np.zeros((H, B), dtype=dtype) if dc_T is None else dc_T.T.copy()
        d_recurrent = np.zeros((H, B), dtype=dtype) if dh_T is None else dh_T.T.copy()
        W_hT = self.W_hh[_rows_oifg(H)].T.copy()  # (H, 4H)
        # Per-step views: the coefficients that dh_t and dc_t multiply (2 and 3
        # blocks of rows), the coefficient of dh_t in dc_t, dy_t, f_t, and the gate
        # gradients the product with W_hh^T takes.
        views = self._views(
            "backward",
            (steps, work, d_next),
            lambda: [
                (
                    d_next[t % chunk],
                    by_gate[t % chunk, :2],
                    work[t % chunk, :H],
                    by_gate[t % chunk, 2:],
                    steps[t, 2 * H : 3 * H],
                    work[t % chunk, H:],
                )
                for t in range(T)
            ],
        )
        subtract, multiply, add, matmul = np.subtract, np.multiply, np.add, np.matmul
        for start in range(((T - 1) // chunk) * chunk, -1, -chunk):
            stop = min(start + chunk, T)
            n = stop - start
            np.copyto(d_next[:n], d_outputs[start:stop].transpose(0, 2, 1))
            # Every coefficient of the chunk at once: (n, rows, B) arrays, each
            # step's block contiguous.
            gates, coef, tanh_c = steps[start:stop], work[:n], tanh_cell[start:stop]
            slopes = d_rows.reshape(-1)[: n * 3 * H * B].reshape(n, 3 * H, B)  # scratch until the copy below
            multiply(gates[:, :H], tanh_c, out=coef[:, H : 2 * H])  # h
            multiply(gates[:, H : 3 * H], gates[:, 3 * H :], out=coef[:, 2 * H : 4 * H])  # i g, f c_{t-1}
            multiply(coef[:, 2 * H : 3 * H], gates[:, 3 * H : 4 * H], out=coef[:, 4 * H :])
            subtract(gates[:, H : 2 * H], coef[:, 4 * H :], out=coef[:, 4 * H :])  # g: i - i g g
            multiply(coef[:, H : 2 * H], tanh_c, out=coef[:, :H])
            subtract(gates[:, :H], coef[:, :H], out=coef[:, :H])  # o (1 - tanh(c_t)^2)
            subtract(one, gates[:, : 3 * H], out=slopes)  # 1 - o, 1 - i, 1 - f
            multiply(coef[:, H : 4 * H], slopes, out=coef[:, H : 4 * H])  # o, i, f
            for dy, by_hidden, to_cell, by_cell, f, d_gates in views[stop - 1 : start - 1 if start else None : -1]:
                add(dy, d_recurrent, d_hidden)
                multiply(by_hidden, d_hidden, by_hidden)
                add(d_cell, to_cell, d_cell)
                multiply(by_cell, d_cell, by_cell)
                multiply(d_cell, f, d_cell)
                matmul(W_hT, d_gates, d_recurrent)  # dh_{t-1}, a sum over gates
            d_chunk = d_rows[:, :n]
            np.copyto(d_chunk, work[:n, H:].transpose(1, 0, 2))
            d_chunk = d_chunk.reshape(4 * H, n * B)
            matmul(d_chunk, x_rows[start * B : stop * B], out=d_W_x_part)
            add(d_W_x, d_W_x_part, d_W_x)
            matmul(d_chunk, hs_rows[start * B : stop * B], out=d_W_h_part)
            add(d_W_h, d_W_h_part, d_W_h)
            matmul(d_chunk.T, W_ih, out=d_x[start * B : stop * B])

        ifgo = _rows_ifgo(H)
        d_W_x, d_W_h = d_W_x[ifgo], d_W_h[ifgo]
        d_bias = d_W_h[:, 0].copy()
        return {
            "weight_ih_l0": d_W_x,
            "weight_hh_l0": d_W_h[:, 1:].copy(),
            "bias_ih_l0": d_bias,
            "bias_hh_l0": d_bias.copy(),
            "x": d_x.reshape(T, B, D),
            "h0": d_recurrent.T.copy(),
            "c0": d_cell.T.copy(),
        }


def _rows_oifg(H: int) -> np.ndarray:
    """Row indices taking torch's gate order i|f|g|o to o|i|f|g."""
    return np.r_[3 * H : 4 * H, 0 : 3 * H]


def _rows_ifgo(H: int) -> np.ndarray:
    """Row indices taking the order o|i|f|g back to torch's i|f|g|o."""
    return np.r_[H : 4 * H, 0:H]

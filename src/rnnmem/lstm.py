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


class LSTM(Recurrent):
    r"""A single-layer LSTM over whole sequences, with exact backpropagation through time.

    ``LSTM(input_size, hidden_size, *, dtype=np.float64, seed=None)`` draws
    every weight and both biases from :math:`U(-1/\sqrt{H}, 1/\sqrt{H})`, as
    PyTorch does; ``seed`` is an int or a ``numpy.random.Generator``. The
    parameters are the attributes ``W_ih`` ``(4H, D)``, ``W_hh`` ``(4H, H)``,
    ``b_ih`` and ``b_hh`` ``(4H,)``, gates ``i|f|g|o``. The state is ``(h, c)``.

    The sequence path computes what :func:`step` computes, arranged for speed.
    Row ``t`` of one array holds ``[h_t, x_t, 1]``, so that a single batch of
    matrix products per step, with the stacked weights ``[W_hh, W_ih, b]``,
    gives all four pre-activations, and a single product over the whole
    sequence gives every weight and bias gradient. The gates are stored
    gate-major, each gate's ``(B, H)`` block of a step contiguous, and one
    ``exp`` activates all four, the candidate through
    :math:`\tanh(z) = 2\sigma(2z) - 1`. The backward pass works through the
    sequence in chunks of steps small enough to stay in cache. Scratch arrays
    are kept from call to call.

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

    def _forward(self, x: np.ndarray, state: tuple) -> tuple:
        T, B, D = x.shape
        H, dtype = self.hidden_size, self.dtype
        K = H + D + 1
        # Gate-major storage, gates[k, t] = gate k at step t, (B, H) and contiguous,
        # so that every per-step operation runs over contiguous memory.
        # Row t of `inputs` is [h_t, x_t, 1]: one product per step with the stacked
        # weights [W_hh, W_ih, b_ih + b_hh] gives every pre-activation, and in
        # backward one product gives every weight and bias gradient.
        # One exp activates all four gates: the rows are scaled (exactly) so that
        # 1/(1 + exp(-s z)) is sigma(z) for i, f, o (s = 1) and sigma(2z) for g
        # (s = 2), whence the candidate tanh(z) = 2 sigma(2z) - 1.
        scale = np.array([-1.0, -1.0, -2.0, -1.0], dtype=dtype)[:, None, None]
        W = np.concatenate([self.W_hh, self.W_ih, (self.b_ih + self.b_hh)[:, None]], axis=1)
        W_T = (W.reshape(4, H, K) * scale).transpose(0, 2, 1).copy()      # (4, K, H)

        inputs = self._buffer("inputs", (T + 1, B, K))
        gates = self._buffer("gates", (4, T, B, H))       # sigma(z) for i, f, o; sigma(2z) for g
        candidate = self._buffer("candidate", (T, B, H))
        cell = self._buffer("cell", (T + 1, B, H))
        tanh_cell = self._buffer("tanh_cell", (T, B, H))
        written = self._buffer("written", (B, H))
        inputs[:T, :, H:H + D] = x
        inputs[:T, :, H + D] = 1.0
        inputs[0, :, :H], cell[0] = state
        input_gate, forget_gate, candidate_gate, output_gate = gates
        with np.errstate(over="ignore"):        # exp(-z) = inf for a gate shut hard: sigma = 1/inf = 0
            for t in range(T):
                g_t = gates[:, t]
                np.matmul(inputs[t], W_T, out=g_t)
                np.exp(g_t, out=g_t)
                g_t += 1.0
                np.reciprocal(g_t, out=g_t)
                np.multiply(candidate_gate[t], 2.0, out=candidate[t])
                candidate[t] -= 1.0
                np.multiply(forget_gate[t], cell[t], out=cell[t + 1])
                np.multiply(input_gate[t], candidate[t], out=written)
                cell[t + 1] += written
                np.tanh(cell[t + 1], out=tanh_cell[t])
                np.multiply(output_gate[t], tanh_cell[t], out=inputs[t + 1, :, :H])
        cache = {"x": x, "inputs": inputs, "gates": gates, "candidate": candidate, "cell": cell,
                 "tanh_cell": tanh_cell}
        hidden = inputs[1:, :, :H]
        return hidden.copy(), (hidden[T - 1].copy(), cell[T].copy()), cache

    def _backward(self, cache: dict, d_outputs: np.ndarray, d_final: tuple) -> dict:
        x, inputs, gates, candidate, cell, tanh_cell = (
            cache[k] for k in ("x", "inputs", "gates", "candidate", "cell", "tanh_cell"))
        T, B, D = x.shape
        H, dtype = self.hidden_size, self.dtype
        K = H + D + 1
        input_gate, forget_gate, _, output_gate = gates

        # The gradient of a gate's pre-activation is the upstream gradient (dc_t
        # for i, f, g; dh_t for o) times a coefficient known from the forward
        # pass: the slope s (1 - s) of its sigmoid (times 4 for the candidate,
        # 1 - g^2 = 4 s (1 - s) with s = sigma(2z)) times what the gate
        # multiplies. The coefficients are computed for a chunk of steps at a
        # time, small enough to stay in cache while the chunk's steps use them.
        chunk = max(1, min(T, 2**16 // (4 * B * H)))
        coef = self._buffer("coef", (4, chunk, B, H))
        to_cell = self._buffer("to_cell", (chunk, B, H))         # dc_t += dh_t * to_cell[t]
        d_gates = self._buffer("d_gates", (4, chunk, B, H))      # gate-major, like the gates
        d_flat = self._buffer("d_flat", (T, B, 4 * H))           # torch layout, for the products
        d_gate_terms = self._buffer("d_gate_terms", (4, B, H))
        dh_T, dc_T = d_final
        d_hidden = self._buffer("d_hidden", (B, H))
        scratch = self._buffer("scratch", (B, H))
        d_cell = np.zeros((B, H), dtype=dtype) if dc_T is None else dc_T.copy()
        d_recurrent = np.zeros((B, H), dtype=dtype) if dh_T is None else dh_T.copy()
        W_h = self.W_hh.reshape(4, H, H)
        for start in range(((T - 1) // chunk) * chunk, -1, -chunk):
            steps = slice(start, min(start + chunk, T))
            n = steps.stop - start
            c, tc, s = coef[:, :n], to_cell[:n], gates[:, steps]
            np.subtract(1.0, s, out=c)
            c *= s
            c[0] *= candidate[steps]                            # i multiplies g
            c[1] *= cell[start:steps.stop]                      # f multiplies c_{t-1}
            np.multiply(input_gate[steps], 4.0, out=tc)
            c[2] *= tc                                          # g is multiplied by i
            c[3] *= tanh_cell[steps]                            # o multiplies tanh(c_t)
            np.multiply(tanh_cell[steps], tanh_cell[steps], out=tc)
            np.subtract(1.0, tc, out=tc)
            tc *= output_gate[steps]
            for j in range(n - 1, -1, -1):
                t = start + j
                np.add(d_outputs[t], d_recurrent, out=d_hidden)
                np.multiply(d_hidden, tc[j], out=scratch)
                d_cell += scratch
                np.multiply(c[3, j], d_hidden, out=d_gates[3, j])
                np.multiply(c[0:3, j], d_cell, out=d_gates[0:3, j])
                d_cell *= forget_gate[t]
                np.matmul(d_gates[:, j], W_h, out=d_gate_terms)     # dh_{t-1}, a sum over gates
                np.add.reduce(d_gate_terms, axis=0, out=d_recurrent)
            np.copyto(d_flat[steps].reshape(n, B, 4, H), d_gates[:, :n].transpose(1, 2, 0, 3))

        d_flat = d_flat.reshape(T * B, 4 * H)
        d_W = d_flat.T @ inputs[:T].reshape(T * B, K)              # (4H, K): [dW_hh, dW_ih, db]
        d_bias = d_W[:, H + D].copy()
        return {"weight_ih_l0": d_W[:, H:H + D].copy(), "weight_hh_l0": d_W[:, :H].copy(),
                "bias_ih_l0": d_bias, "bias_hh_l0": d_bias.copy(),
                "x": (d_flat @ self.W_ih).reshape(T, B, D), "h0": d_recurrent, "c0": d_cell}

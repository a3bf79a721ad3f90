r"""Mamba's block (Gu and Dao 2023, Fig. 3): a gated branch, a causal convolution, then the selective scan S6.

One layer reads its input :math:`u_t` (``D_in`` wide) and writes :math:`o_t`
(``H`` wide) through :math:`C = E H` inner channels (:data:`EXPAND` is
:math:`E`, the paper's expansion factor 2), as the reference
implementation's ``Mamba`` layer does:

.. math::

    x_t = W_x u_t, \qquad z_t = W_z u_t
    \quad\text{(the input projection, no bias, its two branches)},

.. math::

    \tilde x_t[c] = b^{conv}[c] + \sum_{k=0}^{K-1} w^{conv}[c, k]\, x_{t-K+1+k}[c], \qquad
    x_s = 0 \text{ for } s < 0,

a **causal depthwise convolution** of width :math:`K` = :data:`CONV_WIDTH`
(4) per channel, with a bias, whose window before the first step is **zeros**
(PyTorch's ``Conv1d(C, C, K, groups=C, padding=K-1)``, cut to the first
:math:`T` outputs; :math:`w^{conv}[c, K-1]` weighs the current step), then

.. math::

    v_t = \operatorname{SiLU}(\tilde x_t), \qquad
    s_t = \operatorname{S6}(v)_t, \qquad
    o_t = W_{out}\, \big(s_t \odot \operatorname{SiLU}(z_t)\big),

with :math:`\operatorname{SiLU}(a) = a\,\sigma(a)`. S6 is the selective scan
of :mod:`rnnmem.selective` on the :math:`C` channels :math:`v_t`, its
parameterization and initialization unchanged: :math:`\Delta_t =
\operatorname{softplus}(W_\Delta v_t + b_\Delta)`, :math:`B_t = W_B v_t`,
:math:`C_t = W_C v_t`, :math:`A = -\exp(A_{\log})`, the state
:math:`h_t = e^{\Delta_t A} h_{t-1} + \Delta_t B_t v_t` and the output
:math:`s_t = C_t h_t + D \odot v_t` (the skip term :math:`D`). So
:math:`\Delta_t, B_t, C_t` read the last :math:`K` inputs, not the current
one alone, and at the first :math:`K - 1` steps the zeros of the padding
stand where a later step reads earlier tokens: the gate can tell the first
token of a sequence from a later copy of it.

The residual connection and the normalization around the block in the paper
are the ensemble's (:mod:`rnnmem.linear_ensemble`: the residual MLP between
layers). :math:`W_\Delta` is full ``(C, C)``, as in :mod:`rnnmem.selective`
(Mamba's is low rank).

**Backward pass**, exact: with :math:`\bar o` the gradient of the outputs,
:math:`\bar g_t = W_{out}^\top \bar o_t`, :math:`\bar s_t = \bar g_t \odot
\operatorname{SiLU}(z_t)`, :math:`\bar z_t = \bar g_t \odot s_t \odot
\operatorname{SiLU}'(z_t)`, :math:`\operatorname{SiLU}'(a) = \sigma(a)(1 +
a(1 - \sigma(a)))`; :math:`\bar v` and the scan's gradients by
:func:`rnnmem.selective.backward` (backpropagation through time by the
scan's reverse recurrence); :math:`\bar{\tilde x}_t = \bar v_t \odot
\operatorname{SiLU}'(\tilde x_t)`; and the convolution's transpose,
:math:`\bar x_s[c] = \sum_k w^{conv}[c, k]\, \bar{\tilde x}_{s+K-1-k}[c]`,
:math:`\bar w^{conv}[c, k] = \sum_t \bar{\tilde x}_t[c]\, x_{t-K+1+k}[c]`,
:math:`\bar b^{conv} = \sum_t \bar{\tilde x}_t`.

**Initialization** (the reference implementation's layer): :math:`[W_x;
W_z]` PyTorch's ``nn.Linear(D_in, 2C, bias=False)``, :math:`U(-1/\sqrt{D_{in}},
1/\sqrt{D_{in}})`; :math:`w^{conv}, b^{conv}` PyTorch's ``Conv1d``,
:math:`U(-1/\sqrt K, 1/\sqrt K)`; S6's arrays by
:func:`rnnmem.selective.draw_scan` on :math:`C` channels; :math:`W_{out}`
``nn.Linear(C, H, bias=False)``, :math:`U(-1/\sqrt C, 1/\sqrt C)`.

Arrays are stacked as in :mod:`rnnmem.lru`: time first, then the member, then
the batch, ``(T, E, B, ...)``; parameters carry the member first. The
recurrence runs by the parallel scan (``method="scan"``,
:func:`rnnmem.scan.linear_scan`) or by the loop (``"loop"``); the
convolution and the SiLUs are computed for all steps at once either way.

>>> p = draw(np.random.default_rng(0), 3, 4, 2)
>>> p["W_x"].shape, p["conv_w"].shape, p["W_dt"].shape, p["W_out"].shape
((8, 3), (8, 4), (8, 8), (4, 8))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import selective
from ._recurrent import sigmoid_by_tanh
from .lru import _mm, _mm_grad

__all__ = [
    "EXPAND",
    "CONV_WIDTH",
    "shapes",
    "draw",
    "silu",
    "causal_conv",
    "causal_conv_backward",
    "forward",
    "backward",
]

EXPAND = 2
"""The expansion factor :math:`E` of the block: :math:`C = E H` inner channels (the paper's default, 2)."""

CONV_WIDTH = 4
"""The width :math:`K` of the causal depthwise convolution (the paper's ``d_conv``, 4)."""

PROJECTION = ("W_x", "W_z")
"""The row blocks that read the layer's input, stacked ``(2C, D_in)``: the branch that is scanned and the gate's."""

PROJECTION_BIASES = None
"""Mamba's input projection has no bias."""

KEEP_LIMIT = selective.KEEP_LIMIT
"""As :data:`rnnmem.selective.KEEP_LIMIT`: the scan keeps its states for the backward pass up to this size."""


def shapes(input_size: int, hidden: int, state: int) -> dict:
    """The block's arrays, name -> shape, in the order they are drawn.

    >>> shapes(3, 4, 2)["conv_w"], shapes(3, 4, 2)["A_log"]
    ((8, 4), (8, 2))
    """
    D, H = input_size, hidden
    C = EXPAND * H
    return {
        "W_x": (C, D),
        "W_z": (C, D),
        "conv_w": (C, CONV_WIDTH),
        "conv_b": (C,),
        **selective.scan_shapes(C, state),
        "W_out": (H, C),
    }


def draw(rng: np.random.Generator, input_size: int, hidden: int, state: int) -> dict:
    """One block's parameters (float64) from ``rng``, in the order of :func:`shapes` (see the module).

    >>> p = draw(np.random.default_rng(0), 3, 4, 2)
    >>> {k: v.shape for k, v in p.items()} == shapes(3, 4, 2)
    True
    """
    D, H = input_size, hidden
    C = EXPAND * H
    bound_in, bound_conv, bound_out = 1.0 / np.sqrt(D), 1.0 / np.sqrt(CONV_WIDTH), 1.0 / np.sqrt(C)
    W_in = rng.uniform(-bound_in, bound_in, (2 * C, D))
    conv_w = rng.uniform(-bound_conv, bound_conv, (C, CONV_WIDTH))
    conv_b = rng.uniform(-bound_conv, bound_conv, C)
    inner = selective.draw_scan(rng, C, state)
    W_out = rng.uniform(-bound_out, bound_out, (H, C))
    return {"W_x": W_in[:C], "W_z": W_in[C:], "conv_w": conv_w, "conv_b": conv_b, **inner, "W_out": W_out}


def silu(a: np.ndarray) -> np.ndarray:
    r""":math:`\operatorname{SiLU}(a) = a\,\sigma(a)` (Elfwing et al. 2018), a new array in ``a``'s precision.

    >>> silu(np.array([0.0, 1.0])).round(4).tolist()
    [0.0, 0.7311]
    """
    return a * sigmoid_by_tanh(a)


def _silu_slope(a: np.ndarray, sig: np.ndarray) -> np.ndarray:
    r""":math:`\operatorname{SiLU}'(a) = \sigma(a)\,(1 + a (1 - \sigma(a)))`, given ``sig`` :math:`= \sigma(a)`."""
    slope = 1.0 - sig
    slope *= a
    slope += 1.0
    slope *= sig
    return slope


def causal_conv(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    r"""The causal depthwise convolution :math:`\tilde x_t = b + \sum_k w[:, k] \odot x_{t-K+1+k}`, zeros before step 0.

    ``x`` is ``(T, E, B, C)``, ``w`` ``(E, C, K)`` (``w[..., K-1]`` weighs the current step), ``b`` ``(E, C)``;
    returns ``(T, E, B, C)``.

    >>> x = np.arange(1.0, 6.0).reshape(5, 1, 1, 1)                        # 1, 2, 3, 4, 5
    >>> causal_conv(x, np.array([[[1.0, 0.0, 0.0, 10.0]]]), np.zeros((1, 1))).ravel().tolist()
    [10.0, 20.0, 30.0, 41.0, 52.0]
    """
    T, K = x.shape[0], w.shape[-1]
    out = np.empty_like(x)
    out[...] = b[None, :, None, :]
    for k in range(K):
        shift = K - 1 - k  # how many steps back tap k reads
        if shift < T:
            out[shift:] += w[None, :, None, :, k] * x[: T - shift]
    return out


def causal_conv_backward(x: np.ndarray, w: np.ndarray, d_out: np.ndarray) -> tuple:
    r"""The gradients ``(dw, db, dx)`` of :func:`causal_conv` from ``d_out``, the gradient of its output.

    :math:`\bar w[:, k] = \sum_{t, b} \bar{\tilde x}_t \odot x_{t-K+1+k}`, :math:`\bar b = \sum_{t, b}
    \bar{\tilde x}_t`, :math:`\bar x_s = \sum_k w[:, k] \odot \bar{\tilde x}_{s+K-1-k}` (the transpose: a
    convolution that looks ahead, with zeros past the last step).

    >>> x = np.ones((3, 1, 1, 1))
    >>> dw, db, dx = causal_conv_backward(x, np.ones((1, 1, 4)), np.ones((3, 1, 1, 1)))
    >>> dw.ravel().tolist(), db.ravel().tolist(), dx.ravel().tolist()
    ([0.0, 1.0, 2.0, 3.0], [3.0], [3.0, 2.0, 1.0])
    """
    T, K = x.shape[0], w.shape[-1]
    dw = np.zeros(w.shape, dtype=d_out.dtype)
    dx = np.zeros(x.shape, dtype=d_out.dtype)
    for k in range(K):
        shift = K - 1 - k
        if shift < T:
            dw[..., k] = (d_out[shift:] * x[: T - shift]).sum(axis=(0, 2))
            dx[: T - shift] += w[None, :, None, :, k] * d_out[shift:]
    return dw, d_out.sum(axis=(0, 2)), dx


def forward(
    p: dict, proj: np.ndarray, *, last_only: bool, method: str = "scan", keep_states: bool = False
) -> tuple[np.ndarray, dict]:
    r"""The block: ``proj`` ``(T, E, B, 2C)`` is :math:`[x_t; z_t] = [W_x u_t; W_z u_t]`; returns ``o`` and the cache.

    ``o`` is ``(T, E, B, H)``, or the last step ``(1, E, B, H)`` with ``last_only`` (the convolution and the
    scan still run over every step; the gate and the output projection only at the last). ``method`` and
    ``keep_states`` are those of :func:`rnnmem.selective.forward`, which runs the scan.

    >>> p = {k: v[None] for k, v in draw(np.random.default_rng(0), 2, 3, 4).items()}   # one member, H = 3
    >>> forward(p, np.ones((5, 1, 6, 12)), last_only=False)[0].shape                   # C = 6: 2C = 12
    (5, 1, 6, 3)
    """
    T = proj.shape[0]
    C = p["conv_b"].shape[1]
    x_in, z_all = proj[..., :C], proj[..., C:]
    x_conv = causal_conv(x_in, p["conv_w"], p["conv_b"])
    sig_x = sigmoid_by_tanh(x_conv)
    v = x_conv * sig_x
    s, inner = selective.forward(p, v, last_only=last_only, method=method, keep_states=keep_states)
    sel = slice(T - 1, T) if last_only else slice(0, T)
    z = z_all[sel]
    sig_z = sigmoid_by_tanh(z)
    gate = z * sig_z
    gated = s * gate
    o = _mm(gated, p["W_out"])
    cache = {"x_in": x_in, "x_conv": x_conv, "sig_x": sig_x, "z": z, "sig_z": sig_z, "gate": gate, "s": s}
    cache.update(gated=gated, inner=inner, sel=sel, shape=proj.shape)
    return o, cache


def backward(p: dict, cache: dict, dy: np.ndarray, *, norms: bool = False) -> tuple[dict, np.ndarray, Any]:
    """Gradients of the block's arrays, of ``proj`` (``d_proj``) and, with ``norms``, the scan's step norms ``(E, T)``.

    The projection's own gradients come from ``d_proj`` (:mod:`rnnmem.linear_ensemble`); the step norms are
    :func:`rnnmem.selective.backward`'s, of the scan's state.

    >>> p = {k: v[None] for k, v in draw(np.random.default_rng(0), 2, 3, 4).items()}
    >>> y, cache = forward(p, np.ones((5, 1, 6, 12)), last_only=True)
    >>> grads, d_proj, norms = backward(p, cache, np.ones_like(y), norms=True)
    >>> sorted(grads)[:4], d_proj.shape, norms.shape
    (['A_log', 'Dskip', 'W_B', 'W_C'], (5, 1, 6, 12), (1, 5))
    """
    sel = cache["sel"]
    grads = {"W_out": _mm_grad(dy, cache["gated"])}
    d_gated = _mm(dy, p["W_out"].transpose(0, 2, 1))
    d_s = d_gated * cache["gate"]
    d_z = d_gated * cache["s"]
    d_z *= _silu_slope(cache["z"], cache["sig_z"])
    inner, d_v, step_norms = selective.backward(p, cache["inner"], d_s, norms=norms)
    grads.update(inner)
    d_conv = d_v * _silu_slope(cache["x_conv"], cache["sig_x"])
    grads["conv_w"], grads["conv_b"], d_x = causal_conv_backward(cache["x_in"], p["conv_w"], d_conv)
    C = d_x.shape[3]
    d_proj = np.zeros(cache["shape"], dtype=d_x.dtype)
    d_proj[..., :C] = d_x
    d_proj[sel, :, :, C:] = d_z
    return grads, d_proj, step_norms

r"""Selective decay: a simplified S6 layer (Gu and Dao 2023, "Mamba", Algorithm 2), the paper's maths without its kernels.

Per step, :math:`H` channels :math:`x_t = W_{in} u_t + b_{in}`; a step size
per channel and a state of :math:`N` numbers per channel:

.. math::

    \Delta_t = \operatorname{softplus}(W_{\Delta} x_t + b_{\Delta}), \quad
    A = -\exp(A_{\log}), \quad B_t = W_B x_t, \quad C_t = W_C x_t,

.. math::

    h_t[d, n] = e^{\Delta_t[d] A[d, n]}\, h_{t-1}[d, n] + \Delta_t[d]\, B_t[n]\, x_t[d], \qquad
    y_t[d] = \textstyle\sum_n C_t[n]\, h_t[d, n] + D[d]\, x_t[d],

the zero-order hold of :math:`A` and Mamba's simplified (Euler) discretization
of :math:`B`. It is the selective scan S6 alone: the block around it in the
paper (a causal convolution, a SiLU and a gating branch) is :mod:`rnnmem.mamba`,
which runs this module's scan on its channels. The decay depends on the input (through :math:`\Delta_t`): the
layer chooses, step by step, how much to keep. It is a linear recurrence in
:math:`h` (:mod:`rnnmem.scan`), real-valued, of :math:`H N` numbers per
sequence; :math:`W_\Delta` is full ``(H, H)`` (Mamba's is low rank).

**Initialization** (Mamba's): :math:`W_{in}, b_{in}` PyTorch's
``nn.Linear(D_in, H)``; :math:`W_B, W_C` ``nn.Linear(H, N, bias=False)``,
:math:`U(-1/\sqrt H, 1/\sqrt H)`; :math:`W_\Delta` :math:`U(-1/\sqrt H,
1/\sqrt H)`; :math:`\Delta_0 = \exp(U[\ln 0.001, \ln 0.1])` per channel and
:math:`b_\Delta = \operatorname{softplus}^{-1}(\Delta_0) = \Delta_0 +
\ln(1 - e^{-\Delta_0})`; :math:`A_{\log}[d, n] = \ln n`, :math:`n = 1..N`
(S4D-real); :math:`D = 1`.

**Memory.** The state of a whole batch over every step is :math:`T E B H N`
numbers. The forward pass runs the scan over spans of :func:`chunk_steps`
steps, keeping the state at each span's start. The loop (``method="loop"``)
computes each step's decay and input just before the step, one step's
arrays at a time, rather than a whole span's first. With ``keep_states`` (a
training step) and at most :data:`KEEP_LIMIT` numbers, it also keeps every
span's decays and states for the backward pass; otherwise the backward pass
recomputes each span's from the state at its start (the same operations on
the same numbers: the same results, bit for bit), last span first, and
passes the gradient of the span's initial state (``dh0`` of
:func:`rnnmem.scan.linear_scan_backward`, or of
:func:`rnnmem.scan.sequential_scan_backward` with ``method="loop"``) to the
span before. The spans depend on the batch and layer sizes, never on the
number of members.

>>> p = draw(np.random.default_rng(0), 3, 4, 2)
>>> np.exp(p["A_log"][0]).tolist()
[1.0, 2.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._recurrent import sigmoid_by_tanh
from .lru import _mm, _mm_grad
from .scan import by_method

__all__ = [
    "shapes",
    "draw",
    "scan_shapes",
    "draw_scan",
    "forward",
    "backward",
    "softplus",
    "inverse_softplus",
    "chunk_steps",
    "KEEP_LIMIT",
]

PROJECTION = ("W_in",)
"""The block that reads the layer's input: the channels :math:`x_t = W_{in} u_t + b_{in}`."""

PROJECTION_BIASES = ("b_in",)

DT_MIN, DT_MAX = 0.001, 0.1
"""The range of Mamba's initial step sizes, drawn log-uniformly."""

KEEP_LIMIT = 2**26
"""The most state numbers (:math:`T E B H N`) for which the forward pass keeps every step's decay and state for the
backward pass (two arrays of that many numbers, 512 MiB in float32), rather than the backward pass recomputing them."""


def softplus(z: np.ndarray) -> np.ndarray:
    r""":math:`\ln(1 + e^z)`, without overflow.

    >>> round(float(softplus(np.array(0.0))), 6)
    0.693147
    """
    return np.logaddexp(0.0, z)


def inverse_softplus(y: Any) -> np.ndarray:
    r"""The :math:`z` with :math:`\operatorname{softplus}(z) = y > 0`: :math:`y + \ln(1 - e^{-y})`.

    >>> bool(np.isclose(softplus(inverse_softplus(0.01)), 0.01))
    True
    """
    y = np.asarray(y, dtype=np.float64)
    return y + np.log(-np.expm1(-y))


def chunk_steps(batch: int, hidden: int, state: int) -> int:
    """Steps per span of the scan: about ``2**18`` state numbers per member (never depends on the members).

    >>> chunk_steps(32, 32, 8)
    32
    """
    return max(1, 2**18 // (batch * hidden * state))


def shapes(input_size: int, hidden: int, state: int) -> dict:
    """The layer's arrays, name -> shape, in the order they are drawn.

    >>> shapes(3, 4, 2)["A_log"]
    (4, 2)
    """
    D, H = input_size, hidden
    return {"W_in": (H, D), "b_in": (H,), **scan_shapes(H, state)}


def scan_shapes(hidden: int, state: int) -> dict:
    """The arrays that act on the channels :math:`x_t` (all but the projection), name -> shape, in drawing order.

    >>> list(scan_shapes(4, 2))
    ['W_B', 'W_C', 'W_dt', 'b_dt', 'A_log', 'Dskip']
    """
    H, N = hidden, state
    return {"W_B": (N, H), "W_C": (N, H), "W_dt": (H, H), "b_dt": (H,), "A_log": (H, N), "Dskip": (H,)}


def draw(rng: np.random.Generator, input_size: int, hidden: int, state: int) -> dict:
    """One layer's parameters (float64) from ``rng``, Mamba's initialization (see the module).

    >>> p = draw(np.random.default_rng(0), 3, 4, 2)
    >>> dt = softplus(p["b_dt"])
    >>> bool(np.all((dt >= 0.001 - 1e-12) & (dt <= 0.1 + 1e-12)))
    True
    """
    D, H = input_size, hidden
    bound_in = 1.0 / np.sqrt(D)
    W_in = rng.uniform(-bound_in, bound_in, (H, D))
    b_in = rng.uniform(-bound_in, bound_in, H)
    return {"W_in": W_in, "b_in": b_in, **draw_scan(rng, H, state)}


def draw_scan(rng: np.random.Generator, hidden: int, state: int) -> dict:
    """The arrays of :func:`scan_shapes` (float64) from ``rng``, Mamba's initialization (see the module).

    :func:`draw` draws the projection, then these; :mod:`rnnmem.mamba` draws these for its block's channels.

    >>> np.exp(draw_scan(np.random.default_rng(0), 3, 2)["A_log"]).tolist()
    [[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]
    """
    H, N = hidden, state
    bound_h = 1.0 / np.sqrt(H)
    W_BC = rng.uniform(-bound_h, bound_h, (2 * N, H))
    W_dt = rng.uniform(-bound_h, bound_h, (H, H))
    dt = np.exp(rng.uniform(np.log(DT_MIN), np.log(DT_MAX), H))
    return {
        "W_B": W_BC[:N],
        "W_C": W_BC[N:],
        "W_dt": W_dt,
        "b_dt": inverse_softplus(dt),
        "A_log": np.tile(np.log(np.arange(1, N + 1, dtype=np.float64)), (H, 1)),
        "Dskip": np.ones(H),
    }


def _spans(T: int, K: int) -> list:
    return [(s, min(s + K, T)) for s in range(0, T, K)]


def _coefficients(A: np.ndarray, delta: np.ndarray, written: np.ndarray, Bt: np.ndarray) -> tuple:
    """A span's decay exp(Delta A) and input Delta B x, (K, E, B, H, N) each."""
    a = delta[..., None] * A[None, :, None]
    np.exp(a, out=a)
    b = written[..., None] * Bt[:, :, :, None, :]
    return a, b


def _span_buffers(K: int, step: tuple, dtype: Any, every_step: bool) -> tuple:
    """Arrays for :func:`_steps` on a span of ``K`` steps: the decays, the states, one step's input.

    With ``every_step`` the decays and states of all ``K`` steps (kept for the backward pass, or read for
    every step's output); otherwise one step's decay and two steps' states, reused from step to step.
    """
    return (
        np.empty((K if every_step else 1,) + step, dtype=dtype),
        np.empty((K if every_step else 2,) + step, dtype=dtype),
        np.empty(step, dtype=dtype),
    )


def _steps(
    A: np.ndarray,
    delta: np.ndarray,
    written: np.ndarray,
    Bt: np.ndarray,
    h0: np.ndarray | None,
    a: np.ndarray,
    h: np.ndarray,
    b: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    r"""A span by the loop, each step's decay and input computed just before the step uses them.

    Step :math:`k` writes :math:`a_k = \exp(\Delta_k A)` into ``a[k % len(a)]``, :math:`b_k = \Delta_k B_k
    x_k` into ``b`` and :math:`h_k = a_k h_{k-1} + b_k` into ``h[k % len(h)]``: the same operations on the
    same numbers as :func:`_coefficients` and :func:`rnnmem.scan.sequential_scan` (so the same results, bit
    for bit), one step's arrays at a time, which stay in the processor's cache.
    """
    prev = np.zeros(h.shape[1:], dtype=h.dtype) if h0 is None else h0
    for k in range(delta.shape[0]):
        a_k, h_k = a[k % len(a)], h[k % len(h)]
        np.multiply(delta[k][..., None], A[:, None], out=a_k)
        np.exp(a_k, out=a_k)
        np.multiply(written[k][..., None], Bt[k][:, :, None, :], out=b)
        np.multiply(a_k, prev, out=h_k)
        h_k += b
        prev = h_k
    return a, h


def forward(
    p: dict, proj: np.ndarray, *, last_only: bool, method: str = "scan", keep_states: bool = False
) -> tuple[np.ndarray, dict]:
    r"""The layer: ``proj`` ``(T, E, B, H)`` is the channels :math:`x_t`; returns ``y`` and the cache.

    ``y`` is ``(T, E, B, H)``, or the last step ``(1, E, B, H)`` with ``last_only``. ``keep_states``: a
    backward pass follows, so keep each span's decays and states for it when they fit (see the module).

    >>> p = {k: v[None] for k, v in draw(np.random.default_rng(0), 2, 3, 4).items()}   # one member
    >>> forward(p, np.ones((5, 1, 6, 3)), last_only=False)[0].shape                    # channels x_t: H = 3
    (5, 1, 6, 3)
    """
    x = proj
    T, E, B, H = x.shape
    N = p["A_log"].shape[2]
    z = _mm(x, p["W_dt"])
    z += p["b_dt"][None, :, None, :]
    delta = softplus(z)
    Bt, Ct = _mm(x, p["W_B"]), _mm(x, p["W_C"])
    A = -np.exp(p["A_log"])
    written = delta * x
    scan = by_method(method)[0]
    spans = _spans(T, chunk_steps(B, H, N))
    starts: list = []
    kept: list | None = [] if keep_states and T * E * B * H * N <= KEEP_LIMIT else None
    h0 = None
    y = None if last_only else np.empty((T, E, B, H), dtype=x.dtype)
    buffers = None
    for s, e in spans:
        starts.append(h0)
        if method == "loop":
            if kept is not None or buffers is None:
                buffers = _span_buffers(e - s, (E, B, H, N), x.dtype, every_step=kept is not None or y is not None)
            a, h = _steps(A, delta[s:e], written[s:e], Bt[s:e], h0, *buffers)
        else:
            a, b = _coefficients(A, delta[s:e], written[s:e], Bt[s:e])
            h = scan(a, b, h0)
            del b
        if y is not None:
            y[s:e] = np.matmul(h[: e - s], Ct[s:e, :, :, :, None])[..., 0]
        h0 = h[(e - s - 1) % len(h)].copy()
        if kept is not None:
            kept.append((a, h))
        del a, h
    assert h0 is not None
    sel = slice(T - 1, T) if last_only else slice(0, T)
    if y is None:
        y = np.matmul(h0, Ct[T - 1, :, :, :, None])[None, ..., 0]
    else:
        y = y[sel]
    y += p["Dskip"][None, :, None, :] * x[sel]
    cache = {"x": x, "z": z, "delta": delta, "Bt": Bt, "Ct": Ct, "A": A, "written": written}
    cache.update(starts=starts, spans=spans, sel=sel, h_last=h0, method=method, kept=kept)
    return y, cache


def backward(p: dict, cache: dict, dy: np.ndarray, *, norms: bool = False) -> tuple[dict, np.ndarray, Any]:
    """Gradients of the layer's arrays, of the channels ``x`` (``d_proj``), and the state's step norms ``(E, T)``.

    >>> p = {k: v[None] for k, v in draw(np.random.default_rng(0), 2, 3, 4).items()}
    >>> y, cache = forward(p, np.ones((5, 1, 6, 3)), last_only=True)
    >>> grads, d_proj, norms = backward(p, cache, np.ones_like(y), norms=True)
    >>> sorted(grads), d_proj.shape, norms.shape
    (['A_log', 'Dskip', 'W_B', 'W_C', 'W_dt', 'b_dt'], (5, 1, 6, 3), (1, 5))
    """
    x, z, delta, Bt, Ct, A, written = (cache[k] for k in ("x", "z", "delta", "Bt", "Ct", "A", "written"))
    sel, spans, starts = cache["sel"], cache["spans"], cache["starts"]
    T, E, B, H = x.shape
    first = sel.start
    dx = np.zeros_like(x)
    dx[sel] = dy * p["Dskip"][None, :, None, :]
    grads = {"Dskip": (dy * x[sel]).sum(axis=(0, 2))}
    d_delta = np.zeros_like(x)
    d_written = np.zeros_like(x)
    dBt, dCt = np.zeros_like(Bt), np.zeros_like(Ct)
    dA = np.zeros_like(A)
    step_norms = np.zeros((E, T)) if norms else None
    carry = None
    scan, backward_scan = by_method(cache["method"])
    kept = cache["kept"]
    for k in range(len(spans) - 1, -1, -1):
        (s, e), h0 = spans[k], starts[k]
        if kept is not None:
            a, h = kept[k]
        elif cache["method"] == "loop":
            buffers = _span_buffers(e - s, (E, B, H, A.shape[-1]), x.dtype, every_step=True)
            a, h = _steps(A, delta[s:e], written[s:e], Bt[s:e], h0, *buffers)
        else:
            a, b = _coefficients(A, delta[s:e], written[s:e], Bt[s:e])
            h = scan(a, b, h0)
            del b
        lo = max(s, first)
        dh_out = None
        if lo < e:  # steps of this span whose outputs carry gradient
            d_out = dy[lo - first : e - first]
            dh_out = d_out[..., :, None] * Ct[lo:e, :, :, None, :]
            dCt[lo:e] = np.matmul(d_out[..., None, :], h[lo - s :])[..., 0, :]
        if dh_out is None:  # no output reads this span: only the carry reaches it
            dh_out = np.zeros((0,) + h.shape[1:], dtype=h.dtype)
        da, g, carry = backward_scan(a, h, dh_out, h0, first=min(lo, e) - s, carry=carry)
        if step_norms is not None:
            step_norms[:, s:e] = (np.sqrt((g * g).sum(axis=(3, 4))).mean(axis=2) * B).T
        da *= a  # d(Delta A)
        d_delta[s:e] = np.einsum("kebhn,ehn->kebh", da, A)
        dA += np.einsum("kebhn,kebh->ehn", da, delta[s:e])
        d_written[s:e] = np.matmul(g, Bt[s:e, :, :, :, None])[..., 0]
        dBt[s:e] = np.matmul(written[s:e, :, :, None, :], g)[..., 0, :]
        del a, h, dh_out, da, g
    d_delta += d_written * x
    dx += d_written * delta
    dz = d_delta * sigmoid_by_tanh(z)  # softplus' = sigma
    grads["W_dt"] = _mm_grad(dz, x)
    grads["b_dt"] = dz.sum(axis=(0, 2))
    grads["W_B"] = _mm_grad(dBt, x)
    grads["W_C"] = _mm_grad(dCt, x)
    grads["A_log"] = dA * A
    dx += _mm(dz, p["W_dt"].transpose(0, 2, 1))
    dx += _mm(dBt, p["W_B"].transpose(0, 2, 1))
    dx += _mm(dCt, p["W_C"].transpose(0, 2, 1))
    return grads, dx, step_norms

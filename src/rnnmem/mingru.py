r"""minGRU (Feng et al. 2024, "Were RNNs all we needed?"): a GRU whose gates read the input only.

.. math::

    z_t = \sigma(W_z u_t + b_z), \qquad \tilde h_t = W_h u_t + b_h, \qquad
    h_t = (1 - z_t) \odot h_{t-1} + z_t \odot \tilde h_t ,

the paper's minGRU (no :math:`\tanh` on the candidate, no reset gate). The
state is :math:`H` wide and is the layer's output, :math:`y_t = h_t`. Since
neither :math:`z_t` nor :math:`\tilde h_t` reads :math:`h_{t-1}`, the layer is
the linear recurrence :math:`h_t = a_t h_{t-1} + b_t` with :math:`a_t = 1 -
z_t`, :math:`b_t = z_t \tilde h_t` (:mod:`rnnmem.scan`), and its backward
pass is

.. math::

    \frac{\partial L}{\partial z_t} = -\frac{\partial L}{\partial a_t} + g_t \tilde h_t, \qquad
    \frac{\partial L}{\partial \tilde h_t} = g_t z_t ,

with :math:`g_t` the state's total gradient. Initialization: PyTorch's
``nn.Linear(D_in, 2H)``, every entry of :math:`[W_z; W_h]` and
:math:`[b_z; b_h]` from :math:`U(-1/\sqrt{D_{in}}, 1/\sqrt{D_{in}})`, so
:math:`z \approx 1/2` at first (a short memory the training must lengthen).

**A shifted gate.** ``draw(..., gate_shift=s)`` adds :math:`s` to every drawn
:math:`b_z` (nothing else changes, the draws are the same), so at a zero input
:math:`z = \sigma(b_z + s)`. :func:`gate_shift_for` gives the shift that puts the
decays :math:`1 - z` at a zero input and a zero drawn bias at :math:`a`:
:math:`s = \ln\frac{1 - a}{a}`, :math:`\sigma(s) = 1 - a`.

>>> p = draw(np.random.default_rng(0), 3, 4)
>>> sorted(p)
['W_h', 'W_z', 'b_h', 'b_z']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._recurrent import sigmoid_by_tanh
from .checks import check_finite, check_open_unit
from .scan import by_method

__all__ = ["shapes", "draw", "gate_shift_for", "forward", "backward"]

PROJECTION = ("W_z", "W_h")
"""The row blocks that read the layer's input, stacked ``(2H, D_in)``: the gate's and the candidate's."""

PROJECTION_BIASES = ("b_z", "b_h")
"""Their biases, stacked ``(2H,)``."""


def shapes(input_size: int, hidden: int) -> dict:
    """The layer's arrays, name -> shape, in the order they are drawn.

    >>> shapes(3, 4)
    {'W_z': (4, 3), 'W_h': (4, 3), 'b_z': (4,), 'b_h': (4,)}
    """
    return {"W_z": (hidden, input_size), "W_h": (hidden, input_size), "b_z": (hidden,), "b_h": (hidden,)}


def gate_shift_for(decay: float) -> float:
    r"""The shift :math:`s = \ln((1 - a)/a)` of the gate's bias that puts :math:`1 - \sigma(s)` at ``decay`` :math:`a`.

    >>> s = gate_shift_for(0.95)
    >>> round(s, 4), round(float(1 - 1 / (1 + np.exp(-s))), 6)
    (-2.9444, 0.95)
    """
    a = float(check_open_unit("decay", decay))
    return float(np.log((1.0 - a) / a))


def draw(rng: np.random.Generator, input_size: int, hidden: int, *, gate_shift: float = 0.0) -> dict:
    """One layer's parameters (float64): PyTorch's ``nn.Linear`` draw, weight then bias, ``(2H, D_in)`` and ``(2H,)``,
    with ``gate_shift`` added to the gate's bias :math:`b_z` (see the module).

    >>> bool(np.all(np.abs(draw(np.random.default_rng(0), 4, 2)["W_z"]) <= 0.5))
    True
    >>> a, b = (draw(np.random.default_rng(0), 4, 2, gate_shift=s) for s in (0.0, -3.0))
    >>> (b["b_z"] - a["b_z"]).tolist(), bool(np.array_equal(a["W_z"], b["W_z"]))
    ([-3.0, -3.0], True)
    """
    H, D = hidden, input_size
    bound = 1.0 / np.sqrt(D)
    W = rng.uniform(-bound, bound, (2 * H, D))
    b = rng.uniform(-bound, bound, 2 * H)
    return {"W_z": W[:H], "W_h": W[H:], "b_z": b[:H] + float(check_finite("gate_shift", gate_shift)), "b_h": b[H:]}


def forward(p: dict, proj: np.ndarray, *, last_only: bool, method: str = "scan") -> tuple[np.ndarray, dict]:
    r"""The layer: ``proj`` ``(T, E, B, 2H)`` is :math:`[W_z u + b_z; W_h u + b_h]`; returns ``y = h`` and the cache.

    ``y`` is ``(T, E, B, H)``, or the last step ``(1, E, B, H)`` with ``last_only``.

    >>> y, _ = forward({}, np.zeros((4, 1, 2, 6)), last_only=False)   # z = 1/2, candidate 0
    >>> y.shape, float(np.abs(y).max())
    ((4, 1, 2, 3), 0.0)
    """
    T = proj.shape[0]
    H = proj.shape[3] // 2
    z = sigmoid_by_tanh(proj[..., :H])
    cand = proj[..., H:]
    a = 1.0 - z
    b = z * cand
    h = by_method(method)[0](a, b)
    sel = slice(T - 1, T) if last_only else slice(0, T)
    return h[sel], {"z": z, "cand": cand, "a": a, "h": h, "sel": sel, "method": method}


def backward(p: dict, cache: dict, dy: np.ndarray, *, norms: bool = False) -> tuple[dict, np.ndarray, Any]:
    """Gradients: the layer has no arrays of its own outside the projection; ``d_proj`` and the step norms ``(E, T)``.

    >>> y, cache = forward({}, np.ones((4, 1, 2, 6)), last_only=True)
    >>> grads, d_proj, norms = backward({}, cache, np.ones_like(y), norms=True)
    >>> grads, d_proj.shape, norms.shape
    ({}, (4, 1, 2, 6), (1, 4))
    """
    z, cand, a, h, sel = (cache[k] for k in ("z", "cand", "a", "h", "sel"))
    B = h.shape[2]
    da, g, _ = by_method(cache["method"])[1](a, h, dy.astype(h.dtype, copy=False), first=sel.start)
    d_proj = np.empty(h.shape[:3] + (2 * h.shape[3],), dtype=h.dtype)
    H = h.shape[3]
    dz = d_proj[..., :H]
    np.multiply(g, cand, out=dz)
    dz -= da
    dz *= z
    dz *= a  # sigma' = z (1 - z)
    np.multiply(g, z, out=d_proj[..., H:])
    step_norms = None
    if norms:
        step_norms = (np.sqrt((g * g).sum(axis=3)).mean(axis=2) * B).T.astype(np.float64)
    return {}, d_proj, step_norms

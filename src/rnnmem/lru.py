r"""The linear recurrent unit (LRU) of Orvieto et al. (2023), "Resurrecting recurrent neural networks for long sequences".

One layer keeps a complex diagonal state of size :math:`N` per sequence:

.. math::

    h_t = \lambda \odot h_{t-1} + \gamma \odot (B u_t), \qquad
    y_t = \operatorname{Re}(C h_t) + D u_t,

with the decay :math:`\lambda = \exp(-\exp(\nu) + i\theta)` (so
:math:`|\lambda| = \exp(-\exp(\nu)) < 1` for every real :math:`\nu`: the
recurrence is stable by construction) and the normalization
:math:`\gamma = \sqrt{1 - |\lambda|^2}`, a fixed function of :math:`\lambda`
(not a free parameter as in the paper's code: its gradient flows into
:math:`\nu`). :math:`B` is complex ``(N, D_in)`` and :math:`C` complex
``(H, N)``, each stored as two real arrays (``B_re``, ``B_im``, ``C_re``,
``C_im``); :math:`D` is real ``(H, D_in)`` (a matrix, since the layer's input
and output sizes may differ; the paper's is a diagonal).

**Ring initialization** (the paper's Lemma 3.2 and its appendix code):
:math:`|\lambda|^2` uniform on :math:`[r_{\min}^2, r_{\max}^2]`, i.e.
:math:`\lambda` uniform in area on the annulus, phase
:math:`\theta = u_2\, \text{max\_phase}`; :math:`B` N(0, 1/(2 D_in)) in each
of its real and imaginary parts, :math:`C` N(0, 1/N) in each part (as the
paper's code: ``normal / sqrt(N)``), :math:`D` N(0, 1/D_in).

**Real decays.** With ``phases="zero"`` the phases start at 0 (the draw is
the same, :math:`u_2` is drawn and discarded), so every decay starts real and
training may turn it; with ``phases="frozen"`` :math:`\theta = 0` for good: the
layer has no array ``theta`` (:func:`shapes`), its decays are real,
:math:`\lambda = e^{-e^{\nu}}`, throughout training.

Gradients of complex arrays follow :mod:`rnnmem.scan`: :math:`\partial
L/\partial \operatorname{Re} z + i\,\partial L/\partial \operatorname{Im} z`.
With :math:`r = |\lambda|`, :math:`\bar g_\lambda` the gradient with respect
to :math:`\lambda` and :math:`g_\gamma` with respect to :math:`\gamma`,

.. math::

    \frac{\partial L}{\partial \nu} = -e^{\nu} r\Big(\frac{\operatorname{Re}(g_\lambda \bar\lambda)}{r}
        - \frac{r}{\gamma} g_\gamma\Big), \qquad
    \frac{\partial L}{\partial \theta} = \operatorname{Re}\big(g_\lambda\, \overline{i\lambda}\big).

Arrays are stacked: time first, then the member, then the batch,
``(T, E, B, ...)``; parameters carry the member first, ``(E, ...)``.

>>> lam = decay(*ring_init(4, 0.9, 0.99, seed=0))
>>> bool(np.all((np.abs(lam) >= 0.9) & (np.abs(lam) <= 0.99)))
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import memory
from .checks import check_choice, check_open_unit, check_positive, check_positive_int, check_seed
from .scan import by_method

__all__ = ["PHASES", "ring_init", "decay", "normalization", "ring_horizon", "shapes", "draw", "forward", "backward"]

PHASES = ("ring", "zero", "frozen")
"""How a layer's phases :math:`\theta` are set: drawn on the ring and trained (the paper's), started at 0 and
trained, or fixed at 0 and not a parameter (real decays)."""

PROJECTION = ("B_re", "B_im", "D")
"""The row blocks that read the layer's input, ``(2N + H, D_in)`` stacked: :math:`B u` (real, imaginary) and :math:`D u`."""

PROJECTION_BIASES = None
"""The LRU's input projection has no bias."""


def ring_init(
    state_size: int, r_min: float = 0.9, r_max: float = 0.999, *, max_phase: float = 2 * np.pi, seed: Any = 0
) -> tuple[np.ndarray, np.ndarray]:
    r"""``(nu_log, theta)``, ``(N,)`` each: decays uniform on the ring :math:`r_{\min} \le |\lambda| \le r_{\max}`.

    As the paper: :math:`u_1, u_2 \sim U[0, 1]`, :math:`\nu = \ln(-\tfrac12
    \ln(u_1 (r_{\max}^2 - r_{\min}^2) + r_{\min}^2))`, :math:`\theta = u_2\,
    \text{max\_phase}` (``u1`` drawn first, then ``u2``, from ``seed``, a
    :func:`~rnnmem.checks.check_seed` value).

    >>> nu, theta = ring_init(3, 0.5, 0.6, max_phase=0.1, seed=1)
    >>> bool(np.all(np.exp(-np.exp(nu)) >= 0.5)), bool(np.all(theta <= 0.1))
    (True, True)
    """
    N = check_positive_int("state_size", state_size)
    r_min, r_max = check_ring(r_min, r_max)
    max_phase = float(check_positive("max_phase", max_phase))
    rng = check_seed("seed", seed)
    u1 = rng.uniform(size=N)
    u2 = rng.uniform(size=N)
    nu_log = np.log(-0.5 * np.log(u1 * (r_max**2 - r_min**2) + r_min**2))
    return nu_log, u2 * max_phase


def check_ring(r_min: Any, r_max: Any) -> tuple[float, float]:
    """``r_min`` and ``r_max`` in (0, 1) with ``r_min < r_max``.

    >>> check_ring(0.99, 0.9)
    Traceback (most recent call last):
    ...
    ValueError: r_min must be below r_max, got r_min=0.99 and r_max=0.9
    """
    r_min = float(check_open_unit("r_min", r_min))
    r_max = float(check_open_unit("r_max", r_max))
    if not r_min < r_max:
        raise ValueError(f"r_min must be below r_max, got r_min={r_min!r} and r_max={r_max!r}")
    return r_min, r_max


def decay(nu_log: Any, theta: Any) -> np.ndarray:
    r""":math:`\lambda = \exp(-\exp(\nu) + i\theta)`: complex128 from float64, complex64 from float32.

    >>> complex(decay(np.log(-np.log(0.5)), np.pi / 2).round(12))
    0.5j
    """
    nu = np.asarray(nu_log)
    th = np.asarray(theta)
    ctype = np.result_type(nu, th, np.complex64)
    return np.exp(-np.exp(nu).astype(ctype) + (1j * th).astype(ctype))


def normalization(lam: Any) -> np.ndarray:
    r""":math:`\gamma = \sqrt{1 - |\lambda|^2}`, real: the input's scale that keeps :math:`E|h_t|^2 = E|B u|^2` for white input.

    >>> float(normalization(0.6 + 0.0j))
    0.8
    """
    lam = np.asarray(lam)
    return np.sqrt(1.0 - (lam.real * lam.real + lam.imag * lam.imag))


def ring_horizon(r: Any, level: float = 0.01) -> dict:
    r"""How long a decay of modulus ``r`` remembers, in the horizon chapter's three measures.

    ``"level"``: the steps :math:`\ln(\text{level})/\ln r` until :math:`r^k`
    falls to ``level`` (:func:`rnnmem.memory.horizon`); ``"efold"``: the
    e-fold horizon :math:`-1/\ln r` (:func:`rnnmem.memory.efold_horizon`);
    ``"lifetime"``: the mean lifetime :math:`1/(1-r)`
    (:func:`rnnmem.memory.mean_lifetime`). A state of the LRU with
    :math:`|\lambda| = r` forgets as a forget gate :math:`f = r` does.

    >>> h = ring_horizon(0.99)
    >>> round(h["level"], 1), round(h["efold"], 1), round(h["lifetime"], 1)
    (458.2, 99.5, 100.0)
    """
    r = check_open_unit("r", r)
    return {
        "level": memory.horizon(r, check_open_unit("level", level)),
        "efold": memory.efold_horizon(r),
        "lifetime": memory.mean_lifetime(r),
    }


def shapes(input_size: int, hidden: int, state: int, phases: str = "ring") -> dict:
    """The layer's parameter arrays, name -> shape, in the order they are drawn (no ``theta`` when the
    ``phases`` are ``"frozen"``, :data:`PHASES`).

    >>> shapes(3, 4, 2)["C_re"]
    (4, 2)
    >>> "theta" in shapes(3, 4, 2, phases="frozen")
    False
    """
    D, H, N = input_size, hidden, state
    theta = {} if check_choice("phases", phases, PHASES) == "frozen" else {"theta": (N,)}
    return {
        "nu_log": (N,),
        **theta,
        "B_re": (N, D),
        "B_im": (N, D),
        "C_re": (H, N),
        "C_im": (H, N),
        "D": (H, D),
    }


def draw(
    rng: np.random.Generator,
    input_size: int,
    hidden: int,
    state: int,
    *,
    r_min: float = 0.9,
    r_max: float = 0.999,
    max_phase: float = 2 * np.pi,
    phases: str = "ring",
) -> dict:
    """One layer's parameters (float64) from ``rng``, in the order of :func:`shapes` (see the module).

    The same draws whatever the ``phases`` (:data:`PHASES`): ``"zero"`` sets the drawn phases to 0,
    ``"frozen"`` leaves them out.

    >>> p = draw(np.random.default_rng(0), 3, 4, 2)
    >>> {k: v.shape for k, v in p.items()} == shapes(3, 4, 2)
    True
    >>> q = draw(np.random.default_rng(0), 3, 4, 2, phases="zero")
    >>> float(np.abs(q["theta"]).max()), bool(np.array_equal(q["C_re"], p["C_re"]))
    (0.0, True)
    """
    D, H, N = input_size, hidden, state
    phases = check_choice("phases", phases, PHASES)
    nu_log, theta = ring_init(N, r_min, r_max, max_phase=max_phase, seed=rng)
    own = {"theta": theta if phases == "ring" else np.zeros_like(theta)} if phases != "frozen" else {}
    return {
        "nu_log": nu_log,
        **own,
        "B_re": rng.standard_normal((N, D)) / np.sqrt(2 * D),
        "B_im": rng.standard_normal((N, D)) / np.sqrt(2 * D),
        "C_re": rng.standard_normal((H, N)) / np.sqrt(N),
        "C_im": rng.standard_normal((H, N)) / np.sqrt(N),
        "D": rng.standard_normal((H, D)) / np.sqrt(D),
    }


def _theta(p: dict) -> Any:
    """The layer's phases: its array ``theta``, or 0 where the phases are frozen (no such array)."""
    return p["theta"] if "theta" in p else np.zeros((), dtype=p["nu_log"].dtype)


def _mm(x: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``x @ W[e].T`` member by member: x (T, E, B, K), W (E, O, K) -> (T, E, B, O)."""
    T, E, B, K = x.shape
    xm = np.ascontiguousarray(x.transpose(1, 0, 2, 3)).reshape(E, T * B, K)
    return np.matmul(xm, W.transpose(0, 2, 1)).reshape(E, T, B, -1).transpose(1, 0, 2, 3)


def _mm_grad(d: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``sum_{t,b} d ⊗ x`` member by member: d (T, E, B, P), x (T, E, B, K) -> (E, P, K)."""
    T, E, B, P = d.shape
    dm = np.ascontiguousarray(d.transpose(1, 0, 2, 3)).reshape(E, T * B, P)
    xm = np.ascontiguousarray(x.transpose(1, 0, 2, 3)).reshape(E, T * B, -1)
    return np.matmul(dm.transpose(0, 2, 1), xm)


def forward(p: dict, proj: np.ndarray, *, last_only: bool, method: str = "scan") -> tuple[np.ndarray, dict]:
    r"""The layer on every member: ``proj`` ``(T, E, B, 2N + H)`` is :math:`[\operatorname{Re} Bu; \operatorname{Im} Bu; Du]`.

    Returns ``y`` ``(T, E, B, H)`` (or only the last step, ``(1, E, B, H)``,
    with ``last_only``) and what :func:`backward` needs.

    >>> p = {k: v[None] for k, v in draw(np.random.default_rng(0), 2, 3, 4).items()}   # one member
    >>> proj = np.random.default_rng(1).standard_normal((5, 1, 6, 2 * 4 + 3))         # T=5, B=6
    >>> forward(p, proj, last_only=True)[0].shape
    (1, 1, 6, 3)
    """
    N = p["nu_log"].shape[1]
    T, E, B = proj.shape[:3]
    lam = decay(p["nu_log"], _theta(p))  # (E, N)
    gamma = normalization(lam)
    b = np.empty((T, E, B, N), dtype=lam.dtype)  # gamma (B u), from the projection's real and imaginary parts
    np.multiply(proj[..., :N], gamma[None, :, None, :], out=b.real)
    np.multiply(proj[..., N : 2 * N], gamma[None, :, None, :], out=b.imag)
    a = np.broadcast_to(lam[None, :, None, :], (T, E, 1, N))
    h = by_method(method)[0](a, b)
    sel = slice(T - 1, T) if last_only else slice(0, T)
    hs = h[sel]
    y = _mm(hs.real, p["C_re"])
    y -= _mm(hs.imag, p["C_im"])
    y += proj[sel, :, :, 2 * N :]
    return y, {"lam": lam, "gamma": gamma, "proj": proj, "a": a, "h": h, "sel": sel, "method": method}


def backward(p: dict, cache: dict, dy: np.ndarray, *, norms: bool = False) -> tuple[dict, np.ndarray, Any]:
    r"""Gradients of the layer's own arrays (``B`` and ``D`` come from ``d_proj``), of ``proj``, and (``norms``) the state's step norms ``(E, T)``.

    ``dy`` is :math:`\partial L/\partial y_t` for the steps :func:`forward`
    returned. The state's total gradient :math:`g_t` comes from
    :func:`rnnmem.scan.linear_scan_backward` (or, when the forward pass ran
    the loop, :func:`rnnmem.scan.sequential_scan_backward`); the step norm is the mean over
    sequences of :math:`B \|g_t\|` (complex modulus), :math:`B` the batch (the
    loss being a batch mean, a sequence's own gradient is :math:`B g_t`).

    >>> p = {k: v[None] for k, v in draw(np.random.default_rng(0), 2, 3, 4).items()}
    >>> y, cache = forward(p, np.ones((5, 1, 6, 11)), last_only=True)
    >>> grads, d_proj, norms = backward(p, cache, np.ones_like(y), norms=True)
    >>> sorted(grads), d_proj.shape, norms.shape
    (['C_im', 'C_re', 'nu_log', 'theta'], (5, 1, 6, 11), (1, 5))
    """
    lam, gamma, proj, a, h, sel = (cache[k] for k in ("lam", "gamma", "proj", "a", "h", "sel"))
    T, E, B, N = h.shape
    hs = h[sel]
    grads = {"C_re": _mm_grad(dy, hs.real), "C_im": -_mm_grad(dy, hs.imag)}
    dh = np.empty((sel.stop - sel.start,) + h.shape[1:], dtype=h.dtype)  # the steps the outputs read
    dh.real = _mm(dy, p["C_re"].transpose(0, 2, 1))
    dh.imag = -_mm(dy, p["C_im"].transpose(0, 2, 1))
    da, g, _ = by_method(cache["method"])[1](a, h, dh, first=sel.start)
    d_lam = da.sum(axis=0)[:, 0, :]  # (E, N)
    d_gamma = (g.real * proj[..., :N]).sum(axis=(0, 2))  # Re(g conj(B u))
    d_gamma += (g.imag * proj[..., N : 2 * N]).sum(axis=(0, 2))
    r = np.abs(lam)
    e_nu = np.exp(p["nu_log"])
    d_r = (d_lam * np.conj(lam)).real / r - (r / gamma) * d_gamma
    grads["nu_log"] = -e_nu * r * d_r
    if "theta" in p:
        grads["theta"] = (d_lam * np.conj(1j * lam)).real
    d_proj = np.empty((T, E, B, 2 * N + dy.shape[3]), dtype=h.real.dtype)
    np.multiply(g.real, gamma[None, :, None, :], out=d_proj[..., :N])
    np.multiply(g.imag, gamma[None, :, None, :], out=d_proj[..., N : 2 * N])
    d_proj[..., 2 * N :] = 0.0
    d_proj[sel, :, :, 2 * N :] = dy
    step_norms = None
    if norms:
        step_norms = (np.sqrt((g.real**2 + g.imag**2).sum(axis=3)).mean(axis=2) * B).T.astype(np.float64)
    return grads, d_proj, step_norms

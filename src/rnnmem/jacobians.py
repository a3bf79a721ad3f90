r"""One-step Jacobians of the recurrent cells, and what their products do over many steps.

Conventions: one unbatched example, ``x`` of shape ``(D,)`` and states of
shape ``(H,)``; weights in torch layout (``W_ih`` ``(G*H, D)``, ``W_hh``
``(G*H, H)``, biases ``b_ih`` and ``b_hh``), gates ``i|f|g|o`` and ``r|z|n``.
A Jacobian's row is an output coordinate and its column an input coordinate,
:math:`J_{jk} = \partial s^{new}_j / \partial s^{old}_k`, so a perturbation
maps as :math:`\delta s_t = J_t\,\delta s_{t-1}` and over many steps

.. math::  \frac{\partial s_T}{\partial s_s} = J_T J_{T-1} \cdots J_{s+1}.

The cell math is that of :mod:`rnnmem.rnn`, :mod:`rnnmem.lstm` and
:mod:`rnnmem.gru`; the derivatives, with :math:`\sigma' = \sigma(1-\sigma)`
and :math:`\tanh' = 1 - \tanh^2`, and :math:`U_k` the block of ``W_hh`` of gate
:math:`k`:

**tanh RNN.** :math:`\partial h_t/\partial h_{t-1} = \operatorname{diag}(1 - h_t^2)\,W_{hh}`.

**LSTM.** The state is the pair :math:`(c, h)`, and the Jacobian has four blocks
(rows :math:`c_t, h_t`; columns :math:`c_{t-1}, h_{t-1}`):

.. math::

    \frac{\partial c_t}{\partial c_{t-1}} &= \operatorname{diag}(f_t), \\
    M_t = \frac{\partial c_t}{\partial h_{t-1}} &= \operatorname{diag}(c_{t-1} f_t(1-f_t))\,U_f
        + \operatorname{diag}(g_t\, i_t(1-i_t))\,U_i + \operatorname{diag}(i_t (1-g_t^2))\,U_g, \\
    \frac{\partial h_t}{\partial c_{t-1}} &= D_t \operatorname{diag}(f_t), \qquad
    D_t = \operatorname{diag}(o_t (1 - \tanh^2 c_t)), \\
    \frac{\partial h_t}{\partial h_{t-1}} &= \operatorname{diag}(\tanh(c_t)\, o_t(1-o_t))\,U_o + D_t M_t .

**GRU** (``update="z_keeps"``: :math:`h_t = k_t h_{t-1} + (1-k_t) n_t` with
:math:`k = z`; ``"z_writes"``: :math:`k = 1 - z`):

.. math::

    \frac{\partial h_t}{\partial h_{t-1}} = \operatorname{diag}(k_t)
        + \operatorname{diag}(h_{t-1} - n_t)\,\frac{\partial k_t}{\partial h_{t-1}}
        + \operatorname{diag}((1-k_t)(1-n_t^2))\,\frac{\partial a_n}{\partial h_{t-1}},

with :math:`\partial a_n/\partial h = \operatorname{diag}(U_n h + b_{hn})\,\partial r/\partial h + \operatorname{diag}(r)\,U_n`
for ``reset="after"`` and :math:`U_n(\operatorname{diag}(r) + \operatorname{diag}(h)\,\partial r/\partial h)`
for ``reset="before"``.

Norms of matrices are spectral norms (largest singular value). Random draws
take a ``seed`` (:func:`rnnmem.checks.check_seed`) and come from PyTorch's
draw (:func:`rnnmem.init.pytorch_weights`). Bad input raises
:class:`ValueError` naming the argument.

What the products say about the LSTM's cell is split over three modules:
:mod:`rnnmem.cell_paths` (the carry line against the other paths),
:mod:`rnnmem.growth_cell` (a cell whose gradient grows although
:math:`f < 1`) and :mod:`rnnmem.cell_bound` (how large the cell can get).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from . import cells, gru, lstm, rnn
from ._recurrent import check_step_args
from .checks import (
    check_choice,
    check_finite,
    check_nonnegative_int,
    check_positive,
    check_positive_int,
    check_seed,
)
from .init import Weights, pytorch_weights, recurrent_matrix

__all__ = [
    "LSTMJacobian",
    "GRUJacobian",
    "finite_difference_jacobian",
    "rnn_jacobian",
    "lstm_jacobian",
    "gru_jacobian",
    "NONLINEARITIES",
    "rnn_trajectory",
    "lstm_trajectory",
    "gru_trajectory",
    "jacobian_products",
    "distance_norms",
    "loss_rates",
    "path_terms",
    "growth_rate",
    "spectral_radius",
    "with_spectral_radius",
    "random_rnn",
    "random_lstm",
    "RNNRun",
    "random_rnn_run",
    "rnn_norms_by_distance",
    "init_norms_by_distance",
    "free_run",
    "nonnormal_growth",
]


# --------------------------------------------------------------------------- helpers


def _vector(name: str, value: Any) -> np.ndarray:
    arr = np.asarray(check_finite(name, np.asarray(value)), dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a single unbatched vector of shape (n,), got shape {arr.shape}")
    return arr


def _sequence(name: str, xs: Any) -> np.ndarray:
    arr = np.asarray(check_finite(name, np.asarray(xs)), dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] < 1:
        raise ValueError(
            f"{name} must have shape (T, D) with T >= 1 steps (one unbatched sequence), got shape {arr.shape}"
        )
    return arr


def _square(name: str, W: Any) -> np.ndarray:
    arr = np.asarray(check_finite(name, np.asarray(W)), dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
        raise ValueError(f"{name} must be a square matrix, got shape {arr.shape}")
    return arr


def _blocks(W_hh: np.ndarray, gates: int) -> list[np.ndarray]:
    H = W_hh.shape[1]
    return [W_hh[k * H : (k + 1) * H] for k in range(gates)]


def finite_difference_jacobian(fn: Callable[[np.ndarray], Any], v: Any, eps: float = 1e-6) -> np.ndarray:
    r"""The central-difference Jacobian :math:`(fn(v + \epsilon e_k) - fn(v - \epsilon e_k))/2\epsilon`, column by column.

    An independent check of every analytic Jacobian here.

    >>> finite_difference_jacobian(lambda v: np.array([v[0] * v[1], v[0]]), [2.0, 3.0]).round(6).tolist()
    [[3.0, 2.0], [1.0, 0.0]]
    """
    v = _vector("v", v)
    eps = float(check_positive("eps", eps))
    cols = []
    for k in range(v.size):
        e = np.zeros_like(v)
        e[k] = eps
        cols.append((np.asarray(fn(v + e), dtype=np.float64) - np.asarray(fn(v - e), dtype=np.float64)) / (2 * eps))
    return np.stack(cols, axis=-1)


# --------------------------------------------------------------------------- one step

NONLINEARITIES = ("tanh", "relu")
"""The tanh RNN's activations :func:`rnn_jacobian` knows, as PyTorch's ``nn.RNN(nonlinearity=...)``."""


def rnn_jacobian(
    x: Any, h_prev: Any, W_ih: Any, W_hh: Any, b_ih: Any, b_hh: Any, nonlinearity: str = "tanh"
) -> tuple[np.ndarray, np.ndarray]:
    r"""``(h, J)``: the new state and :math:`\partial h_t/\partial h_{t-1} = \operatorname{diag}(1 - h_t^2) W_{hh}`.

    With ``nonlinearity="relu"`` the step is :math:`h_t = \max(0, a_t)` and
    :math:`J_t = \operatorname{diag}([a_t > 0])\,W_{hh}` (slope 0 at the
    corner, as PyTorch takes it).

    >>> W_ih, W_hh, b = np.eye(2), np.array([[0.5, 0.0], [0.0, 2.0]]), np.zeros(2)
    >>> h, J = rnn_jacobian(np.zeros(2), np.zeros(2), W_ih, W_hh, b, b)
    >>> J.tolist()
    [[0.5, 0.0], [0.0, 2.0]]
    >>> h, J = rnn_jacobian([1.0, -1.0], [0.0, 0.0], W_ih, W_hh, b, b, "relu")
    >>> h.tolist(), J.tolist()
    ([1.0, 0.0], [[0.5, 0.0], [0.0, 0.0]])
    """
    h_prev = _vector("h_prev", h_prev)
    x = _vector("x", x)
    kind = check_choice("nonlinearity", nonlinearity, NONLINEARITIES)
    if kind == "tanh":
        h = rnn.step(x, h_prev, W_ih, W_hh, b_ih, b_hh).astype(np.float64)
        slope = 1.0 - h * h
    else:
        x, h_prev, W_ih, W_hh, b_ih, b_hh = check_step_args(1, x, h_prev, W_ih, W_hh, b_ih, b_hh)
        a = (W_ih @ x + b_ih + W_hh @ h_prev + b_hh).astype(np.float64)
        h = np.maximum(a, 0.0)
        slope = (a > 0).astype(np.float64)
    return h, slope[:, None] * np.asarray(W_hh, dtype=np.float64)


class LSTMJacobian(NamedTuple):
    """The four blocks of an LSTM step's Jacobian, and the step itself.

    ``full`` stacks them as ``[[dc_dc, dc_dh], [dh_dc, dh_dh]]``, the state
    ordered ``(c, h)``.
    """

    step: lstm.LSTMStep
    dc_dc: np.ndarray
    dc_dh: np.ndarray
    dh_dc: np.ndarray
    dh_dh: np.ndarray

    @property
    def full(self) -> np.ndarray:
        """The ``(2H, 2H)`` Jacobian of ``(c_t, h_t)`` with respect to ``(c_{t-1}, h_{t-1})``."""
        return np.block([[self.dc_dc, self.dc_dh], [self.dh_dc, self.dh_dh]])


def lstm_jacobian(x: Any, h_prev: Any, c_prev: Any, W_ih: Any, W_hh: Any, b_ih: Any, b_hh: Any) -> LSTMJacobian:
    r"""The four blocks of :math:`\partial(c_t, h_t)/\partial(c_{t-1}, h_{t-1})` (module equations).

    With every weight zero the cell only carries: the blocks are
    :math:`\operatorname{diag}(f)`, 0, :math:`D\operatorname{diag}(f)` and 0.

    >>> W_ih, W_hh = np.zeros((4, 1)), np.zeros((4, 1))
    >>> b = np.array([0.0, math.log(3.0), 0.0, 0.0])       # f = 3/4
    >>> J = lstm_jacobian(np.zeros(1), np.zeros(1), np.zeros(1), W_ih, W_hh, b, np.zeros(4))
    >>> round(float(J.dc_dc[0, 0]), 6), float(J.dc_dh[0, 0]), J.full.shape
    (0.75, 0.0, (2, 2))
    """
    h_prev, c_prev = _vector("h_prev", h_prev), _vector("c_prev", c_prev)
    s = lstm.step(_vector("x", x), h_prev, c_prev, W_ih, W_hh, b_ih, b_hh)
    i, f, g, o, c = (np.asarray(a, dtype=np.float64) for a in s[:5])
    U_i, U_f, U_g, U_o = _blocks(np.asarray(W_hh, dtype=np.float64), 4)
    M = (c_prev * f * (1 - f))[:, None] * U_f + (g * i * (1 - i))[:, None] * U_i + (i * (1 - g * g))[:, None] * U_g
    tc = np.tanh(c)
    D = o * (1 - tc * tc)
    dh_dh = (tc * o * (1 - o))[:, None] * U_o + D[:, None] * M
    return LSTMJacobian(step=s, dc_dc=np.diag(f), dc_dh=M, dh_dc=np.diag(D * f), dh_dh=dh_dh)


class GRUJacobian(NamedTuple):
    """A GRU step and its Jacobian ``J`` :math:`= \\partial h_t/\\partial h_{t-1}`."""

    step: gru.GRUStep
    J: np.ndarray


def gru_jacobian(
    x: Any, h_prev: Any, W_ih: Any, W_hh: Any, b_ih: Any, b_hh: Any, *, update: str = "z_keeps", reset: str = "after"
) -> GRUJacobian:
    r""":math:`\partial h_t/\partial h_{t-1}` of a GRU step, in :mod:`rnnmem.gru`'s conventions.

    With zero weights only the kept share of the old state passes:
    :math:`\operatorname{diag}(z)` under ``"z_keeps"``, :math:`\operatorname{diag}(1-z)` under ``"z_writes"``.

    >>> W_ih, W_hh = np.zeros((3, 1)), np.zeros((3, 1))
    >>> b = np.array([0.0, 2.0, 0.0])                        # r, z, n
    >>> keep = gru_jacobian(np.zeros(1), np.ones(1), W_ih, W_hh, b, np.zeros(3))
    >>> write = gru_jacobian(np.zeros(1), np.ones(1), W_ih, W_hh, b, np.zeros(3), update="z_writes")
    >>> round(float(keep.J[0, 0]), 4), round(float(write.J[0, 0]), 4)
    (0.8808, 0.1192)
    """
    h_prev = _vector("h_prev", h_prev)
    s = gru.step(_vector("x", x), h_prev, W_ih, W_hh, b_ih, b_hh, update=update, reset=reset)
    r, z, n = (np.asarray(a, dtype=np.float64) for a in s[:3])
    W = np.asarray(W_hh, dtype=np.float64)
    U_r, U_z, U_n = _blocks(W, 3)
    H = W.shape[1]
    b_hn = np.asarray(b_hh, dtype=np.float64)[2 * H :]
    dr = (r * (1 - r))[:, None] * U_r
    dz = (z * (1 - z))[:, None] * U_z
    if reset == "after":
        da_n = (U_n @ h_prev + b_hn)[:, None] * dr + r[:, None] * U_n
    else:
        da_n = U_n @ (np.diag(r) + h_prev[:, None] * dr)
    keep, dkeep = (z, dz) if update == "z_keeps" else (1 - z, -dz)
    J = np.diag(keep) + (h_prev - n)[:, None] * dkeep + ((1 - keep) * (1 - n * n))[:, None] * da_n
    return GRUJacobian(step=s, J=J)


# --------------------------------------------------------------------------- along a trajectory


def rnn_trajectory(
    xs: Any, h0: Any, W_ih: Any, W_hh: Any, b_ih: Any, b_hh: Any, nonlinearity: str = "tanh"
) -> tuple[np.ndarray, np.ndarray]:
    """Run the RNN over ``xs`` ``(T, D)``: states ``(T+1, H)`` (``h_0`` first) and Jacobians ``(T, H, H)``.

    ``nonlinearity`` is ``"tanh"`` (the book's RNN) or ``"relu"``, as in
    :func:`rnn_jacobian`.

    >>> states, J = rnn_trajectory(np.zeros((3, 1)), [0.5], [[1.0]], [[0.9]], [0.0], [0.0])
    >>> states.shape, J.shape
    ((4, 1), (3, 1, 1))
    """
    xs = _sequence("xs", xs)
    h = _vector("h0", h0)
    states, jacs = [h], []
    for x in xs:
        h, J = rnn_jacobian(x, h, W_ih, W_hh, b_ih, b_hh, nonlinearity)
        states.append(h)
        jacs.append(J)
    return np.stack(states), np.stack(jacs)


def lstm_trajectory(xs: Any, h0: Any, c0: Any, W_ih: Any, W_hh: Any, b_ih: Any, b_hh: Any) -> list[LSTMJacobian]:
    """Run the LSTM over ``xs`` ``(T, D)`` from ``(h0, c0)``: one :class:`LSTMJacobian` per step.

    >>> W = random_lstm(2, 3, seed=0)
    >>> steps = lstm_trajectory(np.ones((4, 2)), np.zeros(3), np.zeros(3), **W)
    >>> len(steps), steps[-1].full.shape
    (4, (6, 6))
    """
    xs = _sequence("xs", xs)
    h, c = _vector("h0", h0), _vector("c0", c0)
    out = []
    for x in xs:
        J = lstm_jacobian(x, h, c, W_ih, W_hh, b_ih, b_hh)
        out.append(J)
        h, c = np.asarray(J.step.h, dtype=np.float64), np.asarray(J.step.c, dtype=np.float64)
    return out


def gru_trajectory(
    xs: Any, h0: Any, W_ih: Any, W_hh: Any, b_ih: Any, b_hh: Any, *, update: str = "z_keeps", reset: str = "after"
) -> list[GRUJacobian]:
    """Run the GRU over ``xs`` ``(T, D)`` from ``h0``: one :class:`GRUJacobian` per step.

    >>> rng = np.random.default_rng(0)
    >>> W = {k: rng.uniform(-0.5, 0.5, s) for k, s in
    ...      [("W_ih", (6, 1)), ("W_hh", (6, 2)), ("b_ih", (6,)), ("b_hh", (6,))]}
    >>> [J.J.shape for J in gru_trajectory(np.ones((2, 1)), np.zeros(2), **W)]
    [(2, 2), (2, 2)]
    """
    xs = _sequence("xs", xs)
    h = _vector("h0", h0)
    out = []
    for x in xs:
        J = gru_jacobian(x, h, W_ih, W_hh, b_ih, b_hh, update=update, reset=reset)
        out.append(J)
        h = np.asarray(J.step.h, dtype=np.float64)
    return out


def _stack(jacobians: Any) -> np.ndarray:
    if isinstance(jacobians, (list, tuple)) and jacobians and isinstance(jacobians[0], LSTMJacobian):
        arr = np.stack([J.full for J in jacobians])
    elif isinstance(jacobians, (list, tuple)) and jacobians and isinstance(jacobians[0], GRUJacobian):
        arr = np.stack([J.J for J in jacobians])
    else:
        arr = np.asarray(check_finite("jacobians", np.asarray(jacobians)), dtype=np.float64)
    if arr.ndim != 3 or arr.shape[1] != arr.shape[2] or arr.shape[0] < 1:
        raise ValueError(
            f"jacobians must be a non-empty stack of square matrices, shape (T, n, n), got shape {arr.shape}"
        )
    return arr


def jacobian_products(jacobians: Any) -> np.ndarray:
    r"""Cumulative products from the start: entry ``k`` is :math:`\partial s_k/\partial s_0 = J_k \cdots J_1` (entry 0 is I).

    ``jacobians`` is a ``(T, n, n)`` stack, or a list of :class:`LSTMJacobian`
    (their ``full``) or :class:`GRUJacobian`.

    >>> jacobian_products(np.full((3, 1, 1), 0.5))[:, 0, 0].tolist()
    [1.0, 0.5, 0.25, 0.125]
    """
    Js = _stack(jacobians)
    out = [np.eye(Js.shape[1])]
    for J in Js:
        out.append(J @ out[-1])
    return np.stack(out)


def distance_norms(jacobians: Any) -> np.ndarray:
    r"""What a gradient from the last step meets at distance ``k``: :math:`\|\partial s_T/\partial s_{T-k}\|_2`, ``k = 0..T``.

    >>> distance_norms(np.full((3, 1, 1), 1.5)).tolist()
    [1.0, 1.5, 2.25, 3.375]
    """
    Js = _stack(jacobians)
    P = np.eye(Js.shape[1])
    norms = [1.0]
    for J in Js[::-1]:
        P = P @ J
        norms.append(float(np.linalg.norm(P, 2)))
    return np.array(norms)


def _errors(jacobians: np.ndarray, errors: Any) -> np.ndarray:
    e = np.asarray(check_finite("errors", np.asarray(errors)), dtype=np.float64)
    if e.shape != (jacobians.shape[0], jacobians.shape[1]):
        raise ValueError(
            f"errors must have shape (T, n) = {(jacobians.shape[0], jacobians.shape[1])}, "
            f"one row per step, got shape {e.shape}"
        )
    return e


def loss_rates(jacobians: Any, errors: Any) -> np.ndarray:
    r"""BPTT with a loss at every step: :math:`\delta_t = \partial L/\partial h_t`, ``t = 1..T``, shape ``(T, n)``.

    ``jacobians[t-1]`` is :math:`J_t = \partial h_t/\partial h_{t-1}` and
    ``errors[t-1]`` is :math:`e_t = \partial L_t/\partial h_t`, the direct
    rate of step :math:`t`'s own loss, for :math:`L = \sum_t L_t`. The
    recursion walks backward,

    .. math::  \delta_T = e_T, \qquad \delta_t = e_t + J_{t+1}^{\top}\,\delta_{t+1},

    so :math:`\delta_t` holds every later loss's rate, each carried back by
    the transposed Jacobians (:func:`path_terms` lists them one by one).

    >>> loss_rates(np.full((3, 1, 1), 0.5), [[0.0], [0.0], [-0.75]])[:, 0].tolist()
    [-0.1875, -0.375, -0.75]
    """
    Js = _stack(jacobians)
    e = _errors(Js, errors)
    out = np.empty_like(e)
    after = np.zeros(Js.shape[1])
    for t in range(Js.shape[0] - 1, -1, -1):
        out[t] = e[t] + after
        after = Js[t].T @ out[t]
    return out


def path_terms(jacobians: Any, errors: Any) -> np.ndarray:
    r"""Every loss's rate at every earlier state, one term per pair: ``terms[s-1, u-1]``, shape ``(T, T, n)``.

    The term for state :math:`s` and the loss at step :math:`u \ge s` is
    :math:`(J_{s+1} \cdots J_u)^{\top} e_u = J_{s+1}^{\top} \cdots J_u^{\top} e_u`,
    the rate that loss sends back along the one chain from :math:`h_u` to
    :math:`h_s` (Goodfellow et al., §10.2.2, the sum over paths); it is zero
    for :math:`u < s`. Summed over :math:`u` they give :func:`loss_rates`.
    Written as the sum it is, one product per pair, for reading, not speed.

    >>> terms = path_terms(np.full((3, 1, 1), 0.5), [[1.0], [1.0], [1.0]])
    >>> terms[0, :, 0].tolist(), terms.sum(axis=1)[:, 0].tolist()
    ([1.0, 0.5, 0.25], [1.75, 1.5, 1.0])
    """
    Js = _stack(jacobians)
    e = _errors(Js, errors)
    T, n = e.shape
    terms = np.zeros((T, T, n))
    for u in range(T):
        rate = e[u]
        for s in range(u, -1, -1):  # state s + 1, from h_{u+1} back to h_1
            terms[s, u] = rate
            rate = Js[s].T @ rate
    return terms


def growth_rate(jacobians: Any, burn_in: int = 0, seed: Any = 0) -> float:
    r"""The average factor per step by which the product :math:`J_T \cdots J_1` stretches a vector, in the long run.

    A random unit vector is carried through every step and renormalized at
    each; over the steps after ``burn_in`` (when it has turned into the
    growing direction) the result is :math:`\exp` of the mean log
    stretch, an estimate of :math:`e^{\lambda_1}`, the largest Lyapunov
    exponent of the run (the growth rate of :math:`\|J_T \cdots J_1\|^{1/T}`).
    Above one, nearby trajectories separate (chaos); below one they merge.

    >>> growth_rate(np.full((50, 1, 1), 0.5))
    0.5
    >>> round(growth_rate(np.stack([np.diag([0.5, 2.0])] * 60), burn_in=10), 3)
    2.0
    """
    Js = _stack(jacobians)
    skip = check_nonnegative_int("burn_in", burn_in)
    if skip >= Js.shape[0]:
        raise ValueError(f"burn_in must be below the number of steps ({Js.shape[0]}), got {burn_in!r}")
    v = check_seed("seed", seed).standard_normal(int(Js.shape[1]))
    v /= np.linalg.norm(v)
    logs = []
    for t, J in enumerate(Js):
        v = J @ v
        size = float(np.linalg.norm(v))
        if size == 0.0:
            return 0.0
        if t >= skip:
            logs.append(math.log(size))
        v /= size
    return float(round(math.exp(sum(logs) / len(logs)), 12))


# --------------------------------------------------------------------------- tanh RNN: spectral radius and non-normal growth


def spectral_radius(W: Any) -> float:
    """The largest absolute eigenvalue of a square matrix.

    >>> spectral_radius([[0.5, 10.0], [0.0, 0.5]])
    0.5
    """
    return float(np.max(np.abs(np.linalg.eigvals(_square("W", W)))))


def with_spectral_radius(W: Any, radius: float) -> np.ndarray:
    """``W`` rescaled so that its spectral radius is ``radius``.

    >>> round(spectral_radius(with_spectral_radius([[1.0, 2.0], [3.0, 4.0]], 0.9)), 12)
    0.9
    """
    W = _square("W", W)
    rho = float(check_positive("radius", radius))
    current = spectral_radius(W)
    if current == 0.0:
        raise ValueError(
            "W must have a nonzero eigenvalue to be rescaled (its spectral radius is 0), got a nilpotent matrix"
        )
    return W * (rho / current)


def random_rnn(input_size: int, hidden: int, radius: float, seed: Any = 0) -> Weights:
    r"""A tanh RNN drawn as PyTorch does, :math:`U(-1/\sqrt H, 1/\sqrt H)`, then ``W_hh`` rescaled to spectral radius ``radius``.

    Returns ``{"W_ih", "W_hh", "b_ih", "b_hh"}``, ready for ``**``.

    >>> W = random_rnn(3, 16, radius=0.9, seed=0)
    >>> W["W_hh"].shape, round(spectral_radius(W["W_hh"]), 6)
    ((16, 16), 0.9)
    """
    D = check_positive_int("input_size", input_size)
    H = check_positive_int("hidden", hidden)
    W = pytorch_weights(D, H, gates=cells.GATES["rnn"], seed=check_seed("seed", seed))
    return Weights(W_ih=W["W_ih"], W_hh=with_spectral_radius(W["W_hh"], radius), b_ih=W["b_ih"], b_hh=W["b_hh"])


def random_lstm(
    input_size: int,
    hidden: int,
    seed: Any = 0,
    scale: float = 1.0,
    forget_bias: float = 0.0,
    input_bias: float = 0.0,
    candidate_bias: float = 0.0,
) -> Weights:
    r"""An LSTM drawn from :math:`U(-s/\sqrt H, s/\sqrt H)` (PyTorch's draw at ``scale`` :math:`s = 1`), plus offsets on ``b_ih``.

    ``forget_bias``, ``input_bias`` and ``candidate_bias`` are added to the
    ``f``, ``i`` and ``g`` slices of ``b_ih``: large offsets saturate those
    gates (a forget bias of 6 holds :math:`f` near 0.998, an input bias of -6
    holds :math:`i` near 0.002).

    >>> W = random_lstm(2, 3, seed=0, forget_bias=4.0)
    >>> W["W_ih"].shape, W["W_hh"].shape, bool(W["b_ih"][3:6].min() > 3)
    ((12, 2), (12, 3), True)
    """
    D = check_positive_int("input_size", input_size)
    H = check_positive_int("hidden", hidden)
    s = float(check_positive("scale", scale))
    offsets = [
        float(check_finite(name, v))
        for name, v in (("input_bias", input_bias), ("forget_bias", forget_bias), ("candidate_bias", candidate_bias))
    ]
    W = pytorch_weights(D, H, gates=cells.GATES["lstm"], seed=check_seed("seed", seed), scale=s)
    for k, offset in enumerate(offsets):
        W["b_ih"][k * H : (k + 1) * H] += offset
    return Weights(W_ih=W["W_ih"], W_hh=W["W_hh"], b_ih=W["b_ih"], b_hh=W["b_hh"])


class RNNRun(NamedTuple):
    r"""A random tanh RNN run from zero (:func:`random_rnn_run`): its weights, its states, and its gradient by distance.

    ``weights`` as :func:`random_rnn` draws them, ``states`` ``(T+1, H)``
    (:math:`h_0 = 0` first), and ``norms`` :math:`\|\partial h_T/\partial h_{T-k}\|_2`
    for ``k = 0..T`` (:func:`distance_norms`).
    """

    weights: Weights
    states: np.ndarray
    norms: np.ndarray

    @property
    def mean_factor(self) -> float:
        r"""The gradient's mean factor per step over the whole run: :math:`\|\partial h_T/\partial h_0\|_2^{1/T}`."""
        T = len(self.norms) - 1
        return float(self.norms[T] ** (1.0 / T))

    @property
    def mean_slope(self) -> float:
        r"""The mean of :math:`\tanh' = 1 - h_t^2` over the steps :math:`t = 1..T` and the units.

        One step multiplies the gradient by :math:`\operatorname{diag}(1 - h_t^2)\,W_{hh}`, so
        :math:`\rho(W_{hh})` times this mean slope predicts :attr:`mean_factor` (roughly: the slopes
        vary along the run and :math:`W_{hh}` need not be normal).
        """
        return float(np.mean(1 - self.states[1:] ** 2))


def random_rnn_run(
    radius: float, hidden: int = 32, steps: int = 40, input_size: int = 4, input_scale: float = 1.0, seed: Any = 0
) -> RNNRun:
    r"""A tanh RNN with ``W_hh`` of spectral radius ``radius`` (:func:`random_rnn`), run ``steps`` steps from zero.

    Inputs are standard normal times ``input_scale``, drawn after the weights
    from the same generator (``seed``). The run's ``norms`` are
    :math:`\|\partial h_T/\partial h_{T-k}\|_2` for ``k = 0..steps``, what
    :func:`rnn_norms_by_distance` returns.

    >>> run = random_rnn_run(0.5, hidden=8, steps=10, seed=0)
    >>> run.states.shape, run.norms.shape, round(spectral_radius(run.weights["W_hh"]), 6)
    ((11, 8), (11,), 0.5)
    >>> bool(run.mean_factor < 0.5 * 1.01), bool(0 < run.mean_slope <= 1)
    (True, True)
    """
    T = check_positive_int("steps", steps)
    scale = float(check_positive("input_scale", input_scale))
    rng = check_seed("seed", seed)
    W = random_rnn(input_size, hidden, radius, rng)
    xs = scale * rng.standard_normal((T, check_positive_int("input_size", input_size)))
    states, Js = rnn_trajectory(xs, np.zeros(W["W_hh"].shape[0]), **W)
    return RNNRun(W, states, distance_norms(Js))


def rnn_norms_by_distance(
    radius: float, hidden: int = 32, steps: int = 40, input_size: int = 4, input_scale: float = 1.0, seed: Any = 0
) -> np.ndarray:
    r"""On a random tanh RNN with ``W_hh`` of spectral radius ``radius``: :math:`\|\partial h_T/\partial h_{T-k}\|_2` for ``k = 0..steps``.

    Inputs are standard normal times ``input_scale``; the network starts at
    zero (the ``norms`` of :func:`random_rnn_run`, which also keeps the
    weights and the states). Shrinks geometrically for a radius below one
    (and, through :math:`\tanh'`, often above it too).

    >>> n = rnn_norms_by_distance(0.5, steps=20, seed=0)
    >>> bool(n[20] < 1e-5), bool(np.all(np.diff(n[1:]) < 0))
    (True, True)
    """
    return random_rnn_run(radius, hidden, steps, input_size, input_scale, seed).norms


def init_norms_by_distance(
    init: str,
    hidden: int = 32,
    steps: int = 40,
    input_size: int = 4,
    input_scale: float = 1.0,
    seed: Any = 0,
    nonlinearity: str = "tanh",
    zero_biases: bool = False,
) -> np.ndarray:
    r"""Like :func:`rnn_norms_by_distance`, for a starting ``W_hh`` of :func:`rnnmem.init.recurrent_matrix`.

    ``W_ih`` and the biases are PyTorch's draw (:func:`rnnmem.init.pytorch_weights`),
    then ``W_hh`` is replaced by ``recurrent_matrix(init, hidden)`` from the same
    generator (``"pytorch"`` keeps the drawn one); ``zero_biases`` sets both
    biases to zero, as the IRNN of Le, Jaitly and Hinton (2015) does with
    ``init="identity"`` and ``nonlinearity="relu"``. Inputs are standard normal
    times ``input_scale``, the network starts at zero, and the result is
    :math:`\|\partial h_T/\partial h_{T-k}\|_2` for ``k = 0..steps``.

    >>> n = init_norms_by_distance("identity", nonlinearity="relu", zero_biases=True, steps=10)
    >>> sorted(set(n.round(12).tolist()))
    [1.0]
    """
    T = check_positive_int("steps", steps)
    D = check_positive_int("input_size", input_size)
    H = check_positive_int("hidden", hidden)
    scale = float(check_positive("input_scale", input_scale))
    if not isinstance(zero_biases, (bool, np.bool_)):
        raise ValueError(f"zero_biases must be True or False, got {zero_biases!r}")
    rng = check_seed("seed", seed)
    W = pytorch_weights(D, H, gates=cells.GATES["rnn"], seed=rng)
    W["W_hh"] = W["W_hh"] if init == "pytorch" else recurrent_matrix(init, H, rng)
    if zero_biases:
        W["b_ih"], W["b_hh"] = np.zeros(H), np.zeros(H)
    xs = scale * rng.standard_normal((T, D))
    _, Js = rnn_trajectory(xs, np.zeros(H), **W, nonlinearity=nonlinearity)
    return distance_norms(Js)


def free_run(
    radius: float, hidden: int = 64, steps: int = 200, start: float = 1e-3, seed: Any = 0
) -> tuple[np.ndarray, np.ndarray]:
    r"""A tanh RNN left to itself: no input, no bias, ``W_hh`` of spectral radius ``radius``; ``(states, jacobians)``.

    ``W_hh`` is PyTorch's draw rescaled (:func:`random_rnn`), the biases are
    zero and every input is zero, so :math:`h = 0` is a fixed point with
    Jacobian :math:`W_{hh}` (the slope of :math:`\tanh` is 1 at zero). The run
    starts from a small disturbance, ``start`` times a standard normal
    vector. Below :math:`\rho = 1` the disturbance dies out; above it the
    zero state is unstable and the activity grows until :math:`\tanh`
    saturates (the setting of Sompolinsky, Crisanti and Sommers, 1988, in
    discrete time). States ``(steps+1, H)``, Jacobians ``(steps, H, H)``.

    >>> states, Js = free_run(0.5, hidden=8, steps=30)
    >>> bool(np.abs(states[-1]).max() < 1e-9), Js.shape
    (True, (30, 8, 8))
    """
    H = check_positive_int("hidden", hidden)
    T = check_positive_int("steps", steps)
    size = float(check_positive("start", start))
    rng = check_seed("seed", seed)
    W = random_rnn(1, H, radius, rng)
    W["b_ih"], W["b_hh"] = np.zeros(H), np.zeros(H)
    h0 = size * rng.standard_normal(H)
    return rnn_trajectory(np.zeros((T, 1)), h0, **W)


def nonnormal_growth(
    radius: float = 0.5, size: int = 4, coupling: float = 1.0, steps: int = 20
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""A non-normal matrix with spectral radius ``radius`` that still grows a vector for several steps.

    :math:`W = \rho I + a N`, with :math:`N` the shift (ones just above the
    diagonal): its eigenvalues are all :math:`\rho`, yet :math:`W^k` holds the
    terms :math:`\binom{k}{j}\rho^{k-j}a^j`, which grow for a while before
    :math:`\rho^k` wins. Returns ``(W, v, curve)`` with :math:`v` the last basis
    vector and ``curve[k]`` :math:`= \|W^k v\|` for ``k = 0..steps``.

    >>> W, v, curve = nonnormal_growth()
    >>> spectral_radius(W), int(curve.argmax()), round(float(curve.max()), 2)
    (0.5, 5, 2.81)
    """
    rho = float(check_positive("radius", radius))
    n = check_positive_int("size", size)
    a = float(check_finite("coupling", coupling))
    T = check_nonnegative_int("steps", steps)
    W = rho * np.eye(n) + a * np.eye(n, k=1)
    v = np.zeros(n)
    v[-1] = 1.0
    curve, u = [1.0], v
    for _ in range(T):
        u = W @ u
        curve.append(float(np.linalg.norm(u)))
    return W, v, np.array(curve)

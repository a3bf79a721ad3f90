r"""The LSTM's cell gradient split into paths: the carry line against all others.

The LSTM's one-step Jacobian has four blocks (:mod:`rnnmem.jacobians`, rows
:math:`c_t, h_t`; columns :math:`c_{t-1}, h_{t-1}`), the top-left one
:math:`\operatorname{diag}(f_t)`. Expanding the product of block Jacobians, the top-left block
:math:`\partial c_T/\partial c_s` is a sum over paths. The path that stays on
the cell row is the weight-free **carry line**
:math:`\operatorname{diag}(f_{s+1} \odot \cdots \odot f_T)`; every other path
passes through some :math:`M_k` and so through ``W_hh``. Which dominates
depends on the gates: :func:`lstm_cell_paths` measures both.

The GRU has the same structure with one state: its one-step Jacobian is
:math:`\operatorname{diag}(k_t)` plus terms that each carry a block of
``W_hh`` (:mod:`rnnmem.jacobians`, :math:`k = z` when the update gate keeps),
so :math:`\partial h_T/\partial h_s` holds exactly one weight-free path,
:math:`\operatorname{diag}(k_{s+1} \odot \cdots \odot k_T)`, the product of
the kept shares; :func:`gru_state_paths` splits it off the same way.

:func:`random_lstm_paths` and :func:`keep_bias_paths` run these on random
cells, the LSTM in the two :data:`REGIMES` of the chapter on what gating does
not fix, and the LSTM against the GRU with the same bias on the gate that keeps.

Conventions as :mod:`rnnmem.jacobians`: one unbatched sequence ``xs`` of
shape ``(T, D)``, states ``(H,)``, weights in torch layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import cells
from .checks import check_finite, check_positive, check_positive_int, check_seed
from .init import pytorch_weights
from .jacobians import gru_trajectory, lstm_trajectory, random_lstm

__all__ = [
    "CellPaths",
    "lstm_cell_paths",
    "gru_state_paths",
    "random_gru",
    "REGIMES",
    "random_lstm_paths",
    "keep_bias_paths",
]


@dataclass(frozen=True)
class CellPaths:
    r""":math:`\partial c_k/\partial c_0` split into the carry line and all other paths, ``k = 0..T``.

    ``total_norm[k]``, ``carry_norm[k]`` and ``other_norm[k]`` are spectral
    norms of the total, of :math:`\operatorname{diag}(f_1 \odot \cdots \odot f_k)`
    and of their difference; ``total``, ``carry_line`` and ``other`` are the
    matrices at ``k = T``.
    For a GRU (:func:`gru_state_paths`) the same fields describe
    :math:`\partial h_k/\partial h_0`, the carry line being the product of
    the kept shares of the update gate.
    """

    total_norm: np.ndarray
    carry_norm: np.ndarray
    other_norm: np.ndarray
    total: np.ndarray
    carry_line: np.ndarray
    other: np.ndarray

    @property
    def carry_share(self) -> np.ndarray:
        """``carry_norm / total_norm`` at each distance (1 at distance 0)."""
        return self.carry_norm / self.total_norm


def lstm_cell_paths(xs: Any, h0: Any, c0: Any, W_ih: Any, W_hh: Any, b_ih: Any, b_hh: Any) -> CellPaths:
    r"""Split :math:`\partial c_k/\partial c_0` (top-left block of :math:`J_k \cdots J_1`) into carry line and other paths.

    With saturated gates (here :math:`f \approx 1`, :math:`i \approx 0`, the
    candidate near :math:`\pm 1`) :math:`M_t` is small and the carry line
    carries almost everything; with strong recurrent weights and open forget
    gates the other paths outgrow it.

    >>> xs = np.random.default_rng(1).standard_normal((30, 2))
    >>> start = np.zeros(8), np.zeros(8)
    >>> sat = lstm_cell_paths(xs, *start, **random_lstm(2, 8, seed=0, forget_bias=6, input_bias=-6, candidate_bias=4))
    >>> bool(sat.other_norm[30] < 0.05 * sat.carry_norm[30])
    True
    >>> strong = lstm_cell_paths(xs, *start, **random_lstm(2, 8, seed=0, scale=5.0, forget_bias=5.0))
    >>> bool(strong.other_norm[30] > 5 * strong.carry_norm[30])
    True
    """
    steps = lstm_trajectory(xs, h0, c0, W_ih, W_hh, b_ih, b_hh)
    H = steps[0].dc_dc.shape[0]
    P = np.eye(2 * H)
    carry = np.ones(H)
    total_n, carry_n, other_n = [1.0], [1.0], [0.0]
    for J in steps:
        P = J.full @ P
        carry = carry * np.asarray(J.step.f, dtype=np.float64)
        total = P[:H, :H]
        other = total - np.diag(carry)
        total_n.append(float(np.linalg.norm(total, 2)))
        carry_n.append(float(np.max(np.abs(carry))))
        other_n.append(float(np.linalg.norm(other, 2)))
    return CellPaths(
        total_norm=np.array(total_n),
        carry_norm=np.array(carry_n),
        other_norm=np.array(other_n),
        total=total,
        carry_line=np.diag(carry),
        other=other,
    )


def random_gru(
    input_size: int, hidden: int, seed: Any = 0, scale: float = 1.0, update_bias: float = 0.0
) -> dict[str, np.ndarray]:
    r"""A GRU drawn from :math:`U(-s/\sqrt H, s/\sqrt H)` (PyTorch's draw at ``scale`` 1), ``update_bias`` added to ``z``.

    The offset goes on the ``z`` slice of ``b_ih`` (gate order ``r|z|n``): a
    large one holds the update gate near one, which keeps the old state
    under PyTorch's convention, the GRU's counterpart of a large forget bias.

    >>> W = random_gru(2, 3, seed=0, update_bias=4.0)
    >>> W["W_ih"].shape, W["W_hh"].shape, bool(W["b_ih"][3:6].min() > 3)
    ((9, 2), (9, 3), True)
    """
    D = check_positive_int("input_size", input_size)
    H = check_positive_int("hidden", hidden)
    s = float(check_positive("scale", scale))
    offset = float(check_finite("update_bias", update_bias))
    W = pytorch_weights(D, H, gates=cells.GATES["gru"], seed=check_seed("seed", seed), scale=s)
    W["b_ih"][cells.gate_slice("gru", "z", H)] += offset
    return W


def gru_state_paths(
    xs: Any, h0: Any, W_ih: Any, W_hh: Any, b_ih: Any, b_hh: Any, *, update: str = "z_keeps", reset: str = "after"
) -> CellPaths:
    r"""Split :math:`\partial h_k/\partial h_0` of a GRU into its weight-free path and all others, ``k = 0..T``.

    The weight-free path is :math:`\operatorname{diag}(k_1 \odot \cdots \odot k_k)`,
    :math:`k = z` under ``"z_keeps"`` and :math:`1 - z` under ``"z_writes"``
    (the share of the old state kept). Every other path carries a block of
    ``W_hh`` through :math:`\partial z/\partial h`, :math:`\partial r/\partial h`
    or the candidate's :math:`U_n`. With the update gate held near one by its
    bias the weight-free path carries almost everything; with strong
    recurrent weights the others outgrow it, as in the LSTM.

    >>> xs = np.random.default_rng(1).standard_normal((30, 2))
    >>> held = gru_state_paths(xs, np.zeros(8), **random_gru(2, 8, seed=0, update_bias=6))
    >>> bool(held.other_norm[30] < 0.05 * held.carry_norm[30])
    True
    """
    steps = gru_trajectory(xs, h0, W_ih, W_hh, b_ih, b_hh, update=update, reset=reset)
    H = steps[0].J.shape[0]
    P = np.eye(H)
    carry = np.ones(H)
    total_n, carry_n, other_n = [1.0], [1.0], [0.0]
    for J in steps:
        P = J.J @ P
        z = np.asarray(J.step.z, dtype=np.float64)
        carry = carry * (z if update == "z_keeps" else 1.0 - z)
        other = P - np.diag(carry)
        total_n.append(float(np.linalg.norm(P, 2)))
        carry_n.append(float(np.max(np.abs(carry))))
        other_n.append(float(np.linalg.norm(other, 2)))
    return CellPaths(
        total_norm=np.array(total_n),
        carry_norm=np.array(carry_n),
        other_norm=np.array(other_n),
        total=P,
        carry_line=np.diag(carry),
        other=other,
    )


REGIMES = {
    "saturated": {"forget_bias": 6.0, "input_bias": -6.0, "candidate_bias": 4.0},
    "strong": {"scale": 5.0, "forget_bias": 5.0},
}
"""The two regimes of the chapter on what gating does not fix, as settings of :func:`rnnmem.jacobians.random_lstm`.

``"saturated"``: :math:`f \\approx 1`, :math:`i \\approx 0`, the candidate near
:math:`\\pm 1` (the carry line carries almost everything); ``"strong"``:
recurrent weights at five times PyTorch's range and open forget gates (the
other paths outgrow it).
"""


def _inputs(steps: Any, input_size: Any, input_seed: Any) -> np.ndarray:
    T = check_positive_int("steps", steps)
    D = check_positive_int("input_size", input_size)
    return check_seed("input_seed", input_seed).standard_normal((T, D))


def random_lstm_paths(
    steps: int = 30, hidden: int = 8, input_size: int = 2, seed: Any = 0, input_seed: Any = 1, **settings: float
) -> CellPaths:
    """:func:`lstm_cell_paths` of a random LSTM from the zero state, on standard normal inputs.

    The weights are :func:`rnnmem.jacobians.random_lstm` with ``seed`` and
    ``settings`` (``scale``, ``forget_bias``, ``input_bias``,
    ``candidate_bias``: one of :data:`REGIMES`, say); the ``steps`` inputs of
    width ``input_size`` are drawn from ``input_seed``.

    >>> sat = random_lstm_paths(12, **REGIMES["saturated"])
    >>> strong = random_lstm_paths(12, **REGIMES["strong"])
    >>> bool(sat.other_norm[12] < sat.carry_norm[12]), bool(strong.other_norm[12] > strong.carry_norm[12])
    (True, True)
    """
    xs = _inputs(steps, input_size, input_seed)
    zero = np.zeros(check_positive_int("hidden", hidden))
    return lstm_cell_paths(xs, zero, zero, **random_lstm(xs.shape[1], zero.size, seed, **settings))


def keep_bias_paths(
    bias: float,
    steps: int = 30,
    hidden: int = 8,
    input_size: int = 2,
    scale: float = 5.0,
    seed: Any = 0,
    input_seed: Any = 1,
) -> tuple[CellPaths, CellPaths]:
    """The LSTM's cell paths with forget bias ``bias`` and the GRU's state paths with update bias ``bias``.

    Both cells are drawn at ``scale`` times PyTorch's range from ``seed``
    (:func:`rnnmem.jacobians.random_lstm`, :func:`random_gru`) and read the
    same standard normal inputs (``input_seed``) from the zero state. A large
    bias holds the LSTM's forget gates and the GRU's update gates near one;
    only the GRU's other paths vanish with it (its gate multiplies every path
    through the candidate).

    >>> lstm_held, gru_held = keep_bias_paths(30.0, steps=12)
    >>> bool(gru_held.other_norm[12] < 1e-3 < lstm_held.other_norm[12])
    True
    """
    xs = _inputs(steps, input_size, input_seed)
    zero = np.zeros(check_positive_int("hidden", hidden))
    D, H = xs.shape[1], zero.size
    lstm_w = random_lstm(D, H, seed, scale=scale, forget_bias=bias)
    gru_w = random_gru(D, H, seed, scale=scale, update_bias=bias)
    gru_paths = gru_state_paths(
        xs, zero, W_ih=gru_w["W_ih"], W_hh=gru_w["W_hh"], b_ih=gru_w["b_ih"], b_hh=gru_w["b_hh"]
    )
    return lstm_cell_paths(xs, zero, zero, **lstm_w), gru_paths

r"""Checking a model's backpropagation against central finite differences.

:func:`gradcheck` compares the gradients of :meth:`backward` with

.. math::  \frac{\partial L}{\partial \theta_k} \approx \frac{L(\theta + \varepsilon e_k) - L(\theta - \varepsilon e_k)}{2\varepsilon}

for every entry of every parameter, of both initial states and of the input,
for the fixed random projection loss

.. math::  L = \sum_{t,b,j} P_{tbj}\, y_{tbj} + \sum_{b,j} Q_{bj}\, h_{T,bj} \;(+ \sum_{b,j} R_{bj}\, c_{T,bj}),

with :math:`P, Q, R` standard normal from a fixed seed, so that every output,
the final hidden state and (for the LSTM) the final cell all carry gradient.

It reports the error **by block**, one row each, as

.. math::  \text{rel}(a, n) = \frac{\max_k |a_k - n_k|}{\max(\max_k |a_k|, \max_k |n_k|, \text{tiny})},

the largest difference over the block relative to the block's largest
gradient (``tiny`` the smallest normal float64, so an all-zero block scores
0). The block-wise scale keeps entries whose true gradient is near zero, where
finite differences have no relative accuracy, from swamping the table.

Two views of the parameter blocks:

* ``blocks="torch"`` (default): each of PyTorch's four arrays split by gate,
  ``W_ih[i]``, ``W_ih[f]``, ..., ``b_hh[o]``: 16 rows for the LSTM, 12 for the
  GRU, 4 for the tanh RNN (whose single block has no gate suffix);
* ``blocks="equations"``: the blocks of the chapters' equations, named as the
  book writes them (see the conventions page): input weights ``W_ig``,
  recurrent weights ``W_hg`` and one bias ``b_g`` per gate ``g`` (``W_ii``,
  ``W_if``, ..., ``W_ho``, ``b_i``, ..., ``b_o``): the twelve parameter blocks
  of the LSTM; ``W_ih``, ``W_hh`` and ``b`` for the tanh RNN. The bias of an equation
  is the sum ``b_ih + b_hh``; its finite difference moves that sum, and both
  of PyTorch's bias gradients are compared with it (the worse is reported).
  The GRU's candidate under ``reset="after"`` keeps two rows, ``b_in`` and
  ``b_hn``, since there :math:`r` multiplies ``b_hn`` alone.

Then ``h0`` (and ``c0``) and, unless ``include_x=False``, ``x``.

The difference :math:`L(\theta + \varepsilon e_k) - L(\theta - \varepsilon e_k)` is
formed output by output before the sum, and divided by the step actually
taken, :math:`(\theta_k + \varepsilon) - (\theta_k - \varepsilon)`: both keep
rounding down. What rounding remains, about :math:`10^{-16}/\varepsilon` of the
outputs' size, sets the floor of what the check can see; a block whose true
gradient is below about :math:`10^{-3}` reads a relative error near
:math:`10^{-7}` for that reason alone, and a larger ``eps`` (1e-5) lowers it.

Finite differences need float64: a float32 model is refused with a
:class:`ValueError` (``model.astype(np.float64)`` makes a float64 copy).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._recurrent import Recurrent
from .checks import check_bool, check_choice, check_positive, check_seed

__all__ = ["GradcheckResult", "gradcheck", "gradcheck_loss", "relative_error"]

BLOCK_VIEWS = ("torch", "equations")
"""The values of ``blocks=``: PyTorch's arrays split by gate, or the equations' blocks."""

_TINY = float(np.finfo(np.float64).tiny)


def relative_error(analytic: Any, numeric: Any) -> float:
    r"""The block-wise relative error :math:`\max|a-n| / \max(\max|a|, \max|n|, \text{tiny})`.

    >>> relative_error([1.0, 0.0], [1.0, 1e-9])
    1e-09
    >>> relative_error([0.0], [0.0])
    0.0
    """
    a = np.asarray(analytic, dtype=np.float64)
    n = np.asarray(numeric, dtype=np.float64)
    scale = max(float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(n), initial=0.0)), _TINY)
    return float(np.max(np.abs(a - n), initial=0.0) / scale)


@dataclass
class GradcheckResult:
    """What :func:`gradcheck` found: one row ``(block, worst relative error)`` per block.

    ``str(result)`` is a plain-text table (:func:`rnnmem.site.tables.gradcheck_table`
    makes a page's table of it).

    >>> r = GradcheckResult([("W_ih", 2e-10), ("h0", 5e-11)], eps=1e-6, blocks="torch")
    >>> r.worst
    2e-10
    >>> print(r)
    block   worst relative error
    W_ih                 2.0e-10
    h0                   5.0e-11
    worst                2.0e-10
    """

    rows: list = field(default_factory=list)
    """``(block, worst relative error)`` pairs, in the order checked."""
    eps: float = 1e-6
    """The finite-difference step."""
    blocks: str = "torch"
    """Which view of the parameter blocks the rows use."""

    @property
    def worst(self) -> float:
        """The largest relative error over all blocks."""
        return max((err for _, err in self.rows), default=0.0)

    def as_dict(self) -> dict:
        """The rows as a dict from block to error.

        >>> GradcheckResult([("b_ih", 1e-11)]).as_dict()
        {'b_ih': 1e-11}
        """
        return dict(self.rows)

    def __str__(self) -> str:
        width = max([len("block"), len("worst"), *(len(name) for name, _ in self.rows)])
        lines = [f"{'block':<{width}}   worst relative error"]
        lines += [f"{name:<{width}}   {err:20.1e}" for name, err in self.rows]
        lines.append(f"{'worst':<{width}}   {self.worst:20.1e}")
        return "\n".join(lines)


_EPS_MIN = float(np.finfo(np.float64).eps)
"""The smallest ``eps`` :func:`gradcheck` takes: float64's machine epsilon, the spacing of float64 at 1."""
_EPS_RANGE = "2.2e-16 <= eps < 1 (float64's machine epsilon up to 1)"


def gradcheck(
    model: Recurrent,
    x: Any,
    state: Any = None,
    *,
    eps: float = 1e-6,
    seed: Any = 0,
    blocks: str = "torch",
    include_x: bool | np.bool_ = True,
) -> GradcheckResult:
    """Compare ``model.backward`` with central finite differences, block by block.

    ``model`` is a float64 :class:`~rnnmem.rnn.RNN`, :class:`~rnnmem.lstm.LSTM`
    or :class:`~rnnmem.gru.GRU`; ``x`` a sequence ``(T, B, D)``; ``state`` the
    initial state (zeros when ``None``); ``eps`` the step, a number with
    ``2.2e-16 <= eps < 1`` (float64's machine epsilon: a smaller step
    vanishes against an entry of size one, and a step that vanishes against a
    larger entry it moves raises :class:`ValueError` as well, before any
    entry is moved); ``seed`` fixes the projection of the loss
    (:func:`rnnmem.checks.check_seed`); ``blocks`` is ``"torch"`` or
    ``"equations"`` (see the module); ``include_x`` is ``True`` or ``False``.
    The model's parameters are moved and put back exactly. A bad argument
    raises :class:`ValueError` naming it.

    >>> from rnnmem.lstm import LSTM
    >>> result = gradcheck(LSTM(2, 3, seed=0), np.ones((4, 2, 2)), blocks="equations")
    >>> [name for name, _ in result.rows][:5]
    ['W_ii', 'W_if', 'W_ig', 'W_io', 'W_hi']
    >>> len(result.rows), result.worst < 1e-7
    (15, True)
    """
    if not isinstance(model, Recurrent):
        raise ValueError(f"model must be an RNN, LSTM or GRU from rnnmem, got {type(model).__name__}")
    if model.dtype != np.float64:
        raise ValueError(
            f"model must be float64 for finite differences, got {model.dtype.name}; "
            "model.astype(np.float64) makes a float64 copy"
        )
    if np.ndim(eps) != 0:
        raise ValueError(
            f"eps must be a single step, a number with {_EPS_RANGE}, got an array of shape {np.shape(eps)}"
        )
    eps = float(check_positive("eps", eps))
    if not _EPS_MIN <= eps < 1.0:
        raise ValueError(f"eps must be a small step, a number with {_EPS_RANGE}, got {eps!r}")
    blocks = check_choice("blocks", blocks, BLOCK_VIEWS)
    include_x = check_bool("include_x", include_x)
    rng = check_seed("seed", seed)

    x = np.array(model._check_x(x), dtype=np.float64)
    T, B, _ = x.shape
    H, parts = model.hidden_size, model.state_names
    if state is None:
        initial = [np.zeros((B, H)) for _ in parts]
    else:
        initial = [np.array(s, dtype=np.float64) for s in model._check_state("state", state, B)]
    # Every entry the check moves must move: (v + eps) - (v - eps) > 0, i.e. eps above half float64's spacing at v.
    moved = [*model.parameters().values(), *initial, *([x] if include_x else [])]
    largest = max(float(np.max(np.abs(a))) for a in moved)
    if largest + eps == largest and largest - eps == largest:
        raise ValueError(
            f"eps must move every entry it steps, got eps={eps!r}: it vanishes against an entry of size "
            f"{largest:.6g}, where float64's spacing is {np.spacing(largest):.3g} (take eps >= {np.spacing(largest):.3g})"
        )

    project_outputs = rng.standard_normal((T, B, H))
    project_final = [rng.standard_normal((B, H)) for _ in parts]

    def packed(states: list) -> Any:
        return states[0] if len(parts) == 1 else tuple(states)

    def run() -> list:
        outputs, final = model.forward(x, packed(initial))
        return [outputs, *((final,) if len(parts) == 1 else final)]

    projections = [project_outputs, *project_final]

    def numeric(array: np.ndarray, index: Any) -> np.ndarray:
        """Central differences of the loss with respect to ``array[index]``."""
        view = array[index]
        flat_idx = np.arange(array.size).reshape(array.shape)[index].ravel()
        out = np.empty(flat_idx.size)
        flat = array.reshape(-1)
        for k, j in enumerate(flat_idx):
            original = flat[j]
            flat[j] = up = original + eps
            plus = run()
            flat[j] = down = original - eps
            minus = run()
            flat[j] = original
            # L(+) - L(-) output by output, before summing, over the step actually taken.
            difference = sum(float(np.sum(p * (a - b))) for p, a, b in zip(projections, plus, minus))
            out[k] = difference / (up - down)
        return out.reshape(view.shape)

    model.forward(x, packed(initial))
    analytic = model.backward(project_outputs, packed(project_final))

    rows = []
    params = model.parameters()
    G = len(model.gate_names)
    gate_rows = [(gate, slice(k * H, (k + 1) * H)) for k, gate in enumerate(model.gate_names)]
    if blocks == "torch":
        for key, label in (
            ("weight_ih_l0", "W_ih"),
            ("weight_hh_l0", "W_hh"),
            ("bias_ih_l0", "b_ih"),
            ("bias_hh_l0", "b_hh"),
        ):
            for gate, rows_of_gate in gate_rows:
                name = label if G == 1 else f"{label}[{gate}]"
                fd = numeric(params[key], rows_of_gate)
                rows.append((name, relative_error(analytic[key][rows_of_gate], fd)))
    else:
        for key, source in (("weight_ih_l0", "i"), ("weight_hh_l0", "h")):
            for gate, rows_of_gate in gate_rows:
                fd = numeric(params[key], rows_of_gate)
                name = f"W_{source}h" if G == 1 else f"W_{source}{gate}"
                rows.append((name, relative_error(analytic[key][rows_of_gate], fd)))
        separate = getattr(model, "reset", None) == "after"
        for gate, rows_of_gate in gate_rows:
            if separate and gate == "n":
                for key, name in (("bias_ih_l0", "b_in"), ("bias_hh_l0", "b_hn")):
                    fd = numeric(params[key], rows_of_gate)
                    rows.append((name, relative_error(analytic[key][rows_of_gate], fd)))
                continue
            fd = numeric(params["bias_ih_l0"], rows_of_gate)  # moves b_ih + b_hh
            err = max(
                relative_error(analytic["bias_ih_l0"][rows_of_gate], fd),
                relative_error(analytic["bias_hh_l0"][rows_of_gate], fd),
            )
            rows.append(("b" if G == 1 else f"b_{gate}", err))
    for part, array in zip(parts, initial):
        rows.append((f"{part}0", relative_error(analytic[f"{part}0"], numeric(array, ...))))
    if include_x:
        rows.append(("x", relative_error(analytic["x"], numeric(x, ...))))
    model.forward(x, packed(initial))
    return GradcheckResult(rows, eps=eps, blocks=blocks)


def gradcheck_loss(
    ensemble: Any, x: Any, targets: Any, kind: str, *, eps: float = 1e-6, seed: Any = 0
) -> GradcheckResult:
    r"""Compare an ensemble's ``loss_and_grads`` with central finite differences of its loss, array by array.

    ``ensemble`` is a float64 :class:`~rnnmem.ensemble.Ensemble` or
    :class:`~rnnmem.linear_ensemble.LinearEnsemble`; ``x``, ``targets`` and
    ``kind`` are what its ``loss_and_grads`` takes. The loss differentiated is
    the sum of the members' losses (members never mix, so each array's
    gradient is its own member's), and every entry of every parameter array
    is moved by :math:`\pm` ``eps`` (and put back exactly). One row per
    parameter array, the block-wise relative error of the module. ``seed``
    is accepted for symmetry with :func:`gradcheck` (checked; the loss has no
    random projection).

    >>> from rnnmem.linear_ensemble import LinearEnsemble
    >>> ens = LinearEnsemble("mingru", 2, 3, 1, seeds=[0, 1])
    >>> r = gradcheck_loss(ens, np.ones((4, 2, 2)), np.ones(2), "regression")
    >>> r.rows[0][0], r.worst < 1e-7
    ('W_z_l0', True)
    """
    params = getattr(ensemble, "params", None)
    if not isinstance(params, dict) or not hasattr(ensemble, "loss_and_grads"):
        raise ValueError(f"ensemble must be an Ensemble or LinearEnsemble, got {type(ensemble).__name__}")
    if ensemble.dtype != np.float64:
        raise ValueError(f"ensemble must be float64 for finite differences, got {np.dtype(ensemble.dtype).name}")
    if np.ndim(eps) != 0:
        raise ValueError(
            f"eps must be a single step, a number with {_EPS_RANGE}, got an array of shape {np.shape(eps)}"
        )
    eps = float(check_positive("eps", eps))
    if not _EPS_MIN <= eps < 1.0:
        raise ValueError(f"eps must be a small step, a number with {_EPS_RANGE}, got {eps!r}")
    check_seed("seed", seed)
    _, analytic = ensemble.loss_and_grads(x, targets, kind)
    analytic = {k: v.copy() for k, v in analytic.items()}

    def loss() -> np.ndarray:
        return ensemble.loss_and_grads(x, targets, kind)[0]

    rows = []
    for name, array in params.items():
        flat = array.reshape(-1) if array.flags.c_contiguous else None
        numeric = np.empty(array.shape)
        for index in np.ndindex(array.shape):
            original = array[index]
            array[index] = up = original + eps
            plus = loss()
            array[index] = down = original - eps
            minus = loss()
            array[index] = original
            numeric[index] = float(np.sum(plus - minus)) / (up - down)
        del flat
        rows.append((name, relative_error(analytic[name], numeric)))
    return GradcheckResult(rows, eps=eps, blocks="arrays")

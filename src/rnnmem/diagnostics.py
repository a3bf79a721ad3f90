r"""Checkpoint diagnostics: a few numbers per member that say what state a trained model is in.

:func:`checkpoint` reads each member of an :class:`~rnnmem.ensemble.Ensemble`
at one moment of training (for example from :func:`rnnmem.lab.train`'s
``on_evaluation`` hook) and returns one array of shape ``(E,)`` per quantity,
from its weights and from one forward and backward pass over held-out
sequences the caller gives (the same ones at every checkpoint, so that
checkpoints compare).

**Gate biases** (only the sum of the two bias vectors enters a gate): the
median over the :math:`H` units of

* LSTM: ``forget_bias_median`` :math:`b_{if} + b_{hf}` and
  ``input_bias_median`` :math:`b_{ii} + b_{hi}` (gates ``i|f|g|o``);
* GRU: ``update_bias_median`` :math:`b_{iz} + b_{hz}` (gates ``r|z|n``,
  :math:`z` the share of the old state kept, as in :mod:`rnnmem.gru`).

**The recurrent matrix** (tanh RNN): ``spectral_radius``
:math:`\rho(W_{hh}) = \max_k |\lambda_k|` and ``spectral_norm``
:math:`\|W_{hh}\|_2 = \sigma_{\max}(W_{hh})`; :math:`\rho \le \|W_{hh}\|_2`.

**Gradients that reach the states** (every model). For one sequence
:math:`n` with loss :math:`\ell_n` (its cross-entropy, or squared error, read
at the query, the last step :math:`T`):

* ``grad_h_first`` :math:`= \frac1N \sum_n \|\partial \ell_n / \partial h_1\|`,
  the total derivative with respect to the hidden state after the first step,
  through every later step (what reaches the step that holds the answer in
  recall);
* ``grad_h_last`` :math:`= \frac1N \sum_n \|\partial \ell_n / \partial h_T\|`,
  at the query, straight from the readout;
* LSTM: ``grad_c_first`` :math:`= \frac1N \sum_n \|\partial \ell_n / \partial
  c_1\|`, the total derivative with respect to the cell state :math:`c_1` as a
  node of the computation, through :math:`h_1 = o_1 \tanh c_1` and through the
  carry line :math:`c_2 = f_2 c_1 + \dots` (see
  :meth:`rnnmem.ensemble.Ensemble.backward`).

Their ratio ``grad_h_first / grad_h_last`` is how much of the gradient at
the query survives the trip back to step 1. Also ``loss``, each member's mean
loss on the sequences. Norms are Euclidean over the :math:`H` units of one
sequence, then averaged over the :math:`N` sequences. All values are float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .ensemble import Ensemble
from .tasks import Task

__all__ = ["checkpoint"]


def checkpoint(ens: Ensemble, task: Task, inputs: Any, targets: Any) -> dict[str, np.ndarray]:
    r"""Diagnostics of every member of ``ens`` now: a dict of arrays of shape ``(E,)`` (see the module).

    ``inputs`` ``(T, N, D)`` and ``targets`` ``(N,)`` are held-out sequences
    of ``task``, shared by every member (for example ``task.sample(64,
    seed=...)``, the same at every checkpoint). Keys: ``loss``,
    ``grad_h_first``, ``grad_h_last``; for the LSTM also ``grad_c_first``,
    ``forget_bias_median`` and ``input_bias_median``; for the GRU
    ``update_bias_median``; for the RNN ``spectral_radius`` and
    ``spectral_norm``. One forward and one backward pass; the parameters are
    not changed.

    >>> from rnnmem.tasks import recall
    >>> from rnnmem.lab import make_ensemble
    >>> task = recall(lag=10)
    >>> ens = make_ensemble(task, "lstm", seeds=[0, 1, 2], hidden=16, forget_bias=1.0)
    >>> d = checkpoint(ens, task, *task.sample(64, seed=0))
    >>> sorted(d)
    ['forget_bias_median', 'grad_c_first', 'grad_h_first', 'grad_h_last', 'input_bias_median', 'loss']
    >>> d["forget_bias_median"].tolist(), d["grad_h_first"].shape
    ([1.0, 1.0, 1.0], (3,))
    >>> bool((d["grad_h_first"] < d["grad_h_last"]).all())   # the gradient fades on its way back
    True
    """
    if not isinstance(ens, Ensemble):
        raise ValueError(f"ens must be an Ensemble (from rnnmem.ensemble), got {type(ens).__name__}")
    if not isinstance(task, Task):
        raise ValueError(f"task must be a Task (from rnnmem.tasks), got {type(task).__name__}")
    if (ens.input_size, ens.output_size) != (task.input_size, task.output_size):
        raise ValueError(
            f"ens must fit the task: input and output sizes ({task.input_size}, {task.output_size}), "
            f"got ({ens.input_size}, {ens.output_size})"
        )
    x = np.asarray(inputs)
    if x.ndim != 3 or x.shape[0] != task.length or x.shape[2] != task.input_size or x.shape[1] < 1:
        raise ValueError(
            f"inputs must have shape ({task.length}, N, {task.input_size}) (sequences of the task, time first), "
            f"got shape {x.shape}"
        )
    loss, grads = ens.loss_and_grads(x, targets, task.kind, step_norms=True)
    out = {
        "loss": np.asarray(loss, dtype=np.float64),
        "grad_h_first": grads["step_norms"][:, 0].copy(),
        "grad_h_last": grads["step_norms"][:, -1].copy(),
    }
    H = ens.hidden_size
    p = ens.params
    bias = (p["bias_ih_l0"] + p["bias_hh_l0"]).astype(np.float64)
    if ens.model == "lstm":
        out["grad_c_first"] = grads["cell_step_norms"][:, 0].copy()
        out["input_bias_median"] = np.median(bias[:, 0:H], axis=1)
        out["forget_bias_median"] = np.median(bias[:, H : 2 * H], axis=1)
    elif ens.model == "gru":
        out["update_bias_median"] = np.median(bias[:, H : 2 * H], axis=1)
    else:
        W = p["weight_hh_l0"].astype(np.float64)
        out["spectral_radius"] = np.abs(np.linalg.eigvals(W)).max(axis=1)
        out["spectral_norm"] = np.linalg.svd(W, compute_uv=False)[:, 0]
    return out

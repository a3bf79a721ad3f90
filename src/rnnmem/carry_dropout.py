r"""An LSTM trained with dropout on its carry line: a fresh mask at every step, one per sequence, or none.

The cell of :mod:`rnnmem.lstm`, with an inverted-dropout mask :math:`m_t \in
\{0, 1\}^H` (keep probability :math:`p`) on the memory it carries:

.. math::

    c_t = f_t \odot \frac{m_t}{p} \odot c_{t-1} + i_t \odot g_t ,

the carry line of the chapter on dropout. Three schemes draw the masks of one
sequence:

* ``"per-step"``: a fresh mask at every step, :math:`m_1, m_2, \dots`
  independent, so a value reaches step :math:`t` untouched with probability
  :math:`p^t`;
* ``"per-sequence"``: one mask drawn for the sequence and used at every step
  (Gal and Ghahramani, 2016), so :math:`m_t = m`;
* ``"none"``: :math:`m_t = 1`, the plain LSTM.

Masks are used in training only; the held-out evaluation runs the plain LSTM
(the expected mask is one).

:func:`loss_and_grads` is the forward pass, softmax cross-entropy of a readout
of the last hidden state, and its exact gradients (backpropagation through
time, mask included), for ``E`` models stacked on axis 0 in the layout of
:class:`rnnmem.ensemble.Ensemble`. :func:`train` trains them as
:func:`rnnmem.lab.train` does (same weights, same batches, same held-out set,
Adam, clipping by global norm), drawing member ``e``'s masks from
``numpy.random.default_rng((seed_e, 3))``; it returns a
:class:`rnnmem.lab.LabResult`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validate import check_choice, check_finite, check_nonnegative_int, check_positive, check_positive_int
from .lab import LabResult, check_threshold, evaluate, make_ensemble
from .tasks import Task
from .train import Adam

__all__ = ["SCHEMES", "draw_masks", "loss_and_grads", "train"]

SCHEMES = ("none", "per-step", "per-sequence")
"""Where the masks of one sequence come from: nowhere, a fresh draw per step, one draw per sequence."""


def _check_keep(keep: Any) -> float:
    p = float(check_finite("keep", keep))
    if not 0.0 < p <= 1.0:
        raise ValueError(f"keep must be a keep probability in (0, 1], got {keep!r}")
    return p


def draw_masks(scheme: str, steps: int, batch: int, hidden: int, keep: float, rng: np.random.Generator) -> np.ndarray:
    r"""Binary masks ``(steps, batch, hidden)`` for one member: :math:`m_t`, 1 = kept.

    ``"per-step"`` draws every entry independently (kept with probability
    ``keep``); ``"per-sequence"`` draws one ``(batch, hidden)`` mask and
    repeats it at every step; ``"none"`` keeps everything.

    >>> rng = np.random.default_rng(0)
    >>> m = draw_masks("per-sequence", 4, 1, 6, 0.5, rng)
    >>> m.shape, bool((m == m[0]).all())
    ((4, 1, 6), True)
    >>> draw_masks("per-step", 4, 1, 6, 0.5, rng).astype(int)[:, 0].tolist()
    [[0, 0, 0, 0, 0, 1], [0, 1, 0, 1, 0, 0], [1, 1, 1, 1, 0, 0], [0, 1, 0, 0, 0, 0]]
    >>> draw_masks("sometimes", 4, 1, 6, 0.5, rng)
    Traceback (most recent call last):
    ...
    ValueError: scheme must be one of 'none', 'per-step', 'per-sequence', got 'sometimes'
    """
    scheme = check_choice("scheme", scheme, SCHEMES)
    steps, batch, hidden = (check_positive_int(n, v) for n, v in (("steps", steps), ("batch", batch),
                                                                   ("hidden", hidden)))
    keep = _check_keep(keep)
    if scheme == "none":
        return np.ones((steps, batch, hidden))
    if scheme == "per-step":
        return (rng.random((steps, batch, hidden)) < keep).astype(np.float64)
    one = (rng.random((batch, hidden)) < keep).astype(np.float64)
    return np.broadcast_to(one, (steps, batch, hidden)).copy()


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def loss_and_grads(params: dict, x: np.ndarray, targets: np.ndarray, carry: np.ndarray) -> tuple:
    r"""Mean cross-entropy of each member's readout and its exact gradients, carry masks included.

    ``params`` holds the stacked arrays of an LSTM ensemble
    (``weight_ih_l0`` ``(E, 4H, D)``, ``weight_hh_l0`` ``(E, 4H, H)``,
    ``bias_ih_l0``, ``bias_hh_l0`` ``(E, 4H)``, gates ``i|f|g|o``;
    ``readout_weight`` ``(E, K, H)``, ``readout_bias`` ``(E, K)``); ``x`` is
    ``(T, E, B, D)``, ``targets`` ``(E, B)`` class indices and ``carry``
    ``(T, E, B, H)`` the factors :math:`m_t/p` on :math:`c_{t-1}`. Returns
    ``(losses (E,), grads)`` with ``grads`` keyed like ``params``.

    With every factor one it is the plain LSTM; a finite difference checks a
    masked one:

    >>> from rnnmem.lab import make_ensemble
    >>> from rnnmem.tasks import recall
    >>> task = recall(lag=3, alphabet=3)
    >>> p = {k: v.copy() for k, v in make_ensemble(task, "lstm", [0, 1], hidden=4).params.items()}
    >>> b = task.sample(5, seed=0)
    >>> x, y = np.stack([b.inputs] * 2, axis=1), np.stack([b.targets] * 2)
    >>> carry = (np.random.default_rng(0).random((5, 2, 5, 4)) < 0.5) / 0.5
    >>> losses, grads = loss_and_grads(p, x, y, carry)
    >>> p["weight_hh_l0"][1, 5, 2] += 1e-6
    >>> moved = (loss_and_grads(p, x, y, carry)[0][1] - losses[1]) / 1e-6
    >>> bool(abs(moved - grads["weight_hh_l0"][1, 5, 2]) < 1e-6)
    True
    """
    W_ih, W_hh = params["weight_ih_l0"], params["weight_hh_l0"]
    V, v0 = params["readout_weight"], params["readout_bias"]
    T, E, B, D = x.shape
    H = W_hh.shape[2]
    xs = np.ascontiguousarray(x.transpose(1, 0, 2, 3))                    # (E, T, B, D)
    pre_x = np.matmul(xs.reshape(E, T * B, D), W_ih.transpose(0, 2, 1)).reshape(E, T, B, 4 * H)
    pre_x += (params["bias_ih_l0"] + params["bias_hh_l0"])[:, None, None, :]
    carry = np.ascontiguousarray(carry.transpose(1, 0, 2, 3))             # (E, T, B, H)
    W_hT = W_hh.transpose(0, 2, 1)
    hidden = np.zeros((E, T + 1, B, H))
    cell = np.zeros((E, T + 1, B, H))
    kept = np.empty((E, T, B, H))                                          # m_t/p * c_{t-1}
    acts = np.empty((E, T, B, 4 * H))                                      # i, f, g, o
    for t in range(T):
        z = pre_x[:, t] + np.matmul(hidden[:, t], W_hT)
        a = acts[:, t]
        a[..., :2 * H] = _sigmoid(z[..., :2 * H])
        a[..., 2 * H:3 * H] = np.tanh(z[..., 2 * H:3 * H])
        a[..., 3 * H:] = _sigmoid(z[..., 3 * H:])
        np.multiply(carry[:, t], cell[:, t], out=kept[:, t])
        cell[:, t + 1] = a[..., H:2 * H] * kept[:, t] + a[..., :H] * a[..., 2 * H:3 * H]
        hidden[:, t + 1] = a[..., 3 * H:] * np.tanh(cell[:, t + 1])
    h_last = hidden[:, T]
    logits = np.matmul(h_last, V.transpose(0, 2, 1)) + v0[:, None, :]
    shifted = logits - logits.max(axis=2, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=2, keepdims=True))
    y = np.asarray(targets, dtype=np.intp)
    losses = -np.take_along_axis(log_p, y[:, :, None], axis=2)[:, :, 0].mean(axis=1)
    d_logits = np.exp(log_p)
    np.put_along_axis(d_logits, y[:, :, None], np.take_along_axis(d_logits, y[:, :, None], axis=2) - 1.0, axis=2)
    d_logits /= B
    grads = {"readout_weight": np.matmul(d_logits.transpose(0, 2, 1), h_last),
             "readout_bias": d_logits.sum(axis=1)}
    dh = np.matmul(d_logits, V)
    dc = np.zeros((E, B, H))
    d_pre = np.empty((E, T, B, 4 * H))
    for t in range(T - 1, -1, -1):
        a = acts[:, t]
        i, f, g, o = a[..., :H], a[..., H:2 * H], a[..., 2 * H:3 * H], a[..., 3 * H:]
        tc = np.tanh(cell[:, t + 1])
        dc = dc + dh * o * (1.0 - tc * tc)
        d = d_pre[:, t]
        d[..., :H] = dc * g * i * (1.0 - i)
        d[..., H:2 * H] = dc * kept[:, t] * f * (1.0 - f)
        d[..., 2 * H:3 * H] = dc * i * (1.0 - g * g)
        d[..., 3 * H:] = dh * tc * o * (1.0 - o)
        dc = dc * f * carry[:, t]                                          # back along the carry line
        dh = np.matmul(d, W_hh)
    d_flat = d_pre.reshape(E, T * B, 4 * H).transpose(0, 2, 1)
    grads["weight_ih_l0"] = np.matmul(d_flat, xs.reshape(E, T * B, D))
    grads["weight_hh_l0"] = np.matmul(d_flat, hidden[:, :T].reshape(E, T * B, H))
    grads["bias_ih_l0"] = d_pre.sum(axis=(1, 2))
    grads["bias_hh_l0"] = grads["bias_ih_l0"].copy()
    return losses, grads


def train(task: Task, scheme: str = "none", *, keep: float = 0.9, seeds: Any = (0,), hidden: int = 32,
          steps: int = 1000, batch: int = 64, lr: float = 1e-2, clip: float | None = 1.0,
          forget_bias: Any = None, eval_every: int = 50, eval_size: int = 512, eval_seed: int = 0,
          threshold: float = 0.9) -> LabResult:
    """Train an LSTM ensemble on a classification ``task`` with carry-line dropout ``scheme``.

    Everything but the masks is :func:`rnnmem.lab.train`'s procedure (see
    there for the weights, batches, held-out set, success and divergence);
    member ``e``'s masks come from ``default_rng((seeds[e], 3))`` and keep
    each unit with probability ``keep``. With ``scheme="none"`` the result is
    :func:`rnnmem.lab.train`'s LSTM to rounding.

    >>> from rnnmem.tasks import recall
    >>> result = train(recall(lag=2, alphabet=4), "per-sequence", keep=0.9, seeds=[0, 1], hidden=8,
    ...                steps=40, lr=0.02, eval_every=20, eval_size=64)
    >>> result.scores.shape, result.losses.shape
    ((2, 3), (2, 40))
    """
    if not isinstance(task, Task) or task.kind != "classification":
        raise ValueError(f"task must be a classification Task (recall), got {task!r}")
    scheme = check_choice("scheme", scheme, SCHEMES)
    keep = _check_keep(keep)
    steps = check_positive_int("steps", steps)
    batch = check_positive_int("batch", batch)
    lr = float(check_positive("lr", lr))
    if clip is not None:
        clip = float(check_positive("clip", clip))
    eval_every = check_positive_int("eval_every", eval_every)
    eval_size = check_positive_int("eval_size", eval_size)
    eval_seed = check_nonnegative_int("eval_seed", eval_seed)
    threshold = check_threshold(threshold)
    ens = make_ensemble(task, "lstm", seeds, hidden=hidden, forget_bias=forget_bias)
    E, H, T = ens.size, ens.hidden_size, task.length
    held_out = task.sample(eval_size, seed=np.random.default_rng((eval_seed, 2)))
    streams = [np.random.default_rng((seed, 1)) for seed in ens.seeds]
    mask_streams = [np.random.default_rng((seed, 3)) for seed in ens.seeds]
    opt = Adam(ens.params, lr=lr)
    losses = np.full((E, steps), np.nan)
    grad_norms = np.full((E, steps), np.nan)
    success_step: list = [None] * E
    diverged_at: list = [None] * E
    live = np.ones(E, dtype=bool)
    eval_steps, scores = [], []

    def evaluation(done: int) -> None:
        score = evaluate(ens, task, held_out.inputs, held_out.targets, chunk=batch)
        eval_steps.append(done)
        scores.append(score)
        for e in range(E):
            if live[e] and success_step[e] is None and score[e] >= threshold:
                success_step[e] = done

    evaluation(0)
    for done in range(1, steps + 1):
        batches = [task.sample(batch, seed=stream) for stream in streams]
        x = np.stack([b.inputs for b in batches], axis=1)
        y = np.stack([b.targets for b in batches])
        carry = np.stack([draw_masks(scheme, T, batch, H, keep, r) for r in mask_streams], axis=1)
        if scheme != "none":
            carry /= keep                                                  # inverted dropout: mean one
        with np.errstate(over="ignore", invalid="ignore"):
            loss, grads = loss_and_grads(ens.params, x, y, carry)
            norm = np.sqrt(sum((g.reshape(E, -1) ** 2).sum(axis=1) for g in grads.values()))
        bad = live & ~(np.isfinite(loss) & np.isfinite(norm))
        for e in np.flatnonzero(bad):
            diverged_at[e] = done - 1
            live[e] = False
            for k in opt.m:
                opt.m[k][e] = 0.0
                opt.v[k][e] = 0.0
        losses[live, done - 1] = loss[live]
        grad_norms[live, done - 1] = norm[live]
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.ones(E) if clip is None else np.where(norm > clip, clip / norm, 1.0)
        scale = np.where(live, scale, 0.0)
        for g in grads.values():
            g *= scale.reshape((E,) + (1,) * (g.ndim - 1))
        opt.step(grads)
        if done % eval_every == 0 or done == steps:
            evaluation(done)
    return LabResult(task=task, model="lstm", seeds=ens.seeds, threshold=threshold,
                     eval_steps=np.array(eval_steps), scores=np.array(scores).T, losses=losses,
                     grad_norms=grad_norms, success_step=success_step, diverged_at=diverged_at, ensemble=ens)

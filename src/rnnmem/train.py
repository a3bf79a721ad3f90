r"""A small trainer: softmax cross-entropy, Adam, clipping, batches of token sequences.

The pieces, each usable alone:

* :func:`softmax_cross_entropy`: the mean over counted rows of
  :math:`-\log \operatorname{softmax}(z)_y = \log\sum_v e^{z_v} - z_y`, and its
  gradient :math:`(\operatorname{softmax}(z) - e_y)/N` with respect to the
  logits :math:`z`;
* :class:`Adam` (Kingma and Ba, 2015, Algorithm 1): per entry,

  .. math::

      m \leftarrow \beta_1 m + (1-\beta_1) g,\quad
      v \leftarrow \beta_2 v + (1-\beta_2) g^2,\quad
      \theta \leftarrow \theta - \eta\, \frac{m/(1-\beta_1^t)}{\sqrt{v/(1-\beta_2^t)} + \epsilon},

  updating the parameter arrays in place;
* :func:`pad_batch` and :func:`minibatches`: sequences of token ids of
  different lengths, padded at the end into one time-first ``(T, B)`` array
  with its mask, and shuffled minibatches that visit every sequence once per
  epoch;
* :func:`fit`: the loop. Each step draws a minibatch, asks the model for its
  loss and gradients, clips them by global norm with
  :func:`rnnmem.clipping.clip_by_global_norm`, and takes one Adam step; it
  returns the :class:`History` of losses.

A model is anything that offers a dict of its parameter arrays (the live
arrays, which Adam changes in place) and a function
``loss_and_grads(batch) -> (loss, grads)`` with ``grads`` keyed like the
parameters. Bad input raises :class:`ValueError` naming the argument.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .checks import check_finite, check_nonnegative_int, check_positive, check_positive_int, check_seed
from .clipping import clip_by_global_norm

__all__ = ["softmax_cross_entropy", "Adam", "pad_batch", "minibatches", "History", "fit"]


def softmax_cross_entropy(logits: Any, targets: Any, mask: Any = None) -> tuple[float, np.ndarray]:
    r"""Mean cross-entropy of ``targets`` under ``softmax(logits)``, and its gradient.

    ``logits`` is ``(N, V)``, ``targets`` ``(N,)`` whole numbers in ``[0, V)``,
    ``mask`` ``(N,)`` booleans (``None``: every row counts). The loss is the
    mean over the counted rows, in nats; the gradient with respect to the
    logits is ``(softmax - onehot) / count`` on counted rows and zero on the
    others. Returns ``(loss as a float, gradient (N, V) float64)``.

    Uniform logits over four classes cost :math:`\ln 4`:

    >>> loss, grad = softmax_cross_entropy(np.zeros((1, 4)), [2])
    >>> round(loss, 6), grad.round(2).tolist()
    (1.386294, [[0.25, 0.25, -0.75, 0.25]])
    >>> softmax_cross_entropy(np.zeros((1, 4)), [4])
    Traceback (most recent call last):
    ...
    ValueError: targets must hold whole numbers from 0 to 3 (one per row of logits), got array([4])
    """
    z = np.asarray(check_finite("logits", logits), dtype=np.float64)
    if z.ndim != 2 or z.shape[0] < 1 or z.shape[1] < 1:
        raise ValueError(f"logits must have shape (N, V) with N >= 1 and V >= 1, got shape {z.shape}")
    N, V = z.shape
    y = np.asarray(targets)
    if y.shape != (N,) or y.dtype.kind not in "iu" or (y.size and (y.min() < 0 or y.max() >= V)):
        shown = f"array({y.tolist()!r})" if y.size <= 6 else f"an array of shape {y.shape}"
        raise ValueError(f"targets must hold whole numbers from 0 to {V - 1} (one per row of logits), got {shown}")
    if mask is None:
        m = np.ones(N, dtype=np.float64)
    else:
        mb = np.asarray(mask)
        if mb.shape != (N,) or mb.dtype != np.bool_:
            raise ValueError(f"mask must be an array of N = {N} booleans, got shape {mb.shape} and dtype {mb.dtype}")
        m = mb.astype(np.float64)
    count = m.sum()
    if count == 0:
        raise ValueError("mask must keep at least one row, got all False")
    shifted = z - z.max(axis=1, keepdims=True)
    log_norm = np.log(np.exp(shifted).sum(axis=1))
    rows = np.arange(N)
    nll = log_norm - shifted[rows, y]
    loss = float(np.dot(nll, m) / count)
    grad = np.exp(shifted - log_norm[:, None])
    grad[rows, y] -= 1.0
    grad *= (m / count)[:, None]
    return loss, grad


class Adam:
    r"""Adam (Kingma and Ba, 2015, Algorithm 1), updating a dict of arrays in place.

    ``Adam(params, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8)``; ``params``
    maps names to float arrays (the model's live arrays). :meth:`step` takes
    gradients with the same keys and shapes. The first step moves every entry
    by about ``lr`` against the sign of its gradient, since then
    :math:`\hat m / \sqrt{\hat v} = g/|g|`:

    >>> w = {"w": np.array([1.0, -2.0])}
    >>> opt = Adam(w, lr=0.1)
    >>> opt.step({"w": np.array([0.5, -3.0])})
    >>> w["w"].round(6).tolist(), opt.t
    ([0.9, -1.9], 1)
    """

    def __init__(
        self,
        params: Mapping[str, np.ndarray],
        *,
        lr: float = 1e-3,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
    ) -> None:
        if not isinstance(params, Mapping) or not params:
            raise ValueError(
                f"params must be a non-empty dict of parameter arrays, got {params!r}"
                if not isinstance(params, Mapping)
                else "params must be a non-empty dict of parameter arrays, got an empty dict"
            )
        for name, p in params.items():
            if not isinstance(p, np.ndarray) or p.dtype.kind != "f":
                raise ValueError(
                    f"params[{name!r}] must be a float numpy array (updated in place), got {type(p).__name__}"
                )
        self.params = params
        self.lr = float(check_positive("lr", lr))
        for name, beta in (("beta1", beta1), ("beta2", beta2)):
            b = check_finite(name, beta)
            if not 0.0 <= b < 1.0:
                raise ValueError(f"{name} must be in [0, 1), got {beta!r}")
        self.beta1, self.beta2 = float(beta1), float(beta2)
        self.eps = float(check_positive("eps", eps))
        self.t = 0
        self.m = {k: np.zeros_like(p) for k, p in params.items()}
        self.v = {k: np.zeros_like(p) for k, p in params.items()}

    def step(self, grads: Mapping[str, Any]) -> None:
        """One Adam update of every parameter, with gradients keyed like the parameters."""
        if not isinstance(grads, Mapping) or set(grads) != set(self.params):
            got = sorted(grads) if isinstance(grads, Mapping) else type(grads).__name__
            raise ValueError(f"grads must be a dict with the keys of params {sorted(self.params)}, got {got}")
        for k, p in self.params.items():
            g = np.asarray(grads[k])
            if g.shape != p.shape:
                raise ValueError(f"grads[{k!r}] must have the shape of params[{k!r}], {p.shape}, got {g.shape}")
        self.t += 1
        b1, b2 = self.beta1, self.beta2
        correction1 = 1.0 - b1**self.t
        correction2 = 1.0 - b2**self.t
        for k, p in self.params.items():
            g = np.asarray(grads[k], dtype=p.dtype)
            m, v = self.m[k], self.v[k]
            m *= b1
            m += (1.0 - b1) * g
            v *= b2
            v += (1.0 - b2) * (g * g)
            p -= self.lr * (m / correction1) / (np.sqrt(v / correction2) + self.eps)


def pad_batch(sequences: Sequence[Sequence[int] | np.ndarray], pad_id: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Sequences of ids of different lengths as one time-first ``(T, B)`` array, padded at the end.

    Returns ``(ids, mask)``: ``ids`` int64 ``(T, B)`` with ``T`` the longest
    length, and ``mask`` ``(T, B)`` True where a real token is.

    >>> ids, mask = pad_batch([[5, 6, 7], [8]])
    >>> ids.T.tolist(), mask.T.tolist()
    ([[5, 6, 7], [8, 0, 0]], [[True, True, True], [True, False, False]])
    """
    if isinstance(sequences, (str, bytes)) or not isinstance(sequences, Sequence) or not sequences:
        raise ValueError(f"sequences must be a non-empty list of sequences of token ids, got {sequences!r}")
    pad_id = check_nonnegative_int("pad_id", pad_id)
    arrays = []
    for k, s in enumerate(sequences):
        a = np.asarray(s)
        if a.ndim != 1 or a.size == 0 or a.dtype.kind not in "iu" or a.min() < 0:
            raise ValueError(f"sequences[{k}] must be a non-empty list of whole numbers >= 0, got {s!r}")
        arrays.append(a)
    T, B = max(a.size for a in arrays), len(arrays)
    ids = np.full((T, B), pad_id, dtype=np.int64)
    mask = np.zeros((T, B), dtype=bool)
    for b, a in enumerate(arrays):
        ids[: a.size, b] = a
        mask[: a.size, b] = True
    return ids, mask


def minibatches(n_items: int, batch_size: int, seed: Any = 0) -> Iterator[np.ndarray]:
    """Endless minibatches of indices into ``n_items`` items: each epoch a fresh shuffle.

    Each epoch visits every index once, in chunks of ``batch_size`` (the last
    chunk of an epoch may be shorter); the shuffles come from
    ``numpy.random.default_rng(seed)`` (``seed`` as :func:`rnnmem.checks.check_seed` takes it).

    >>> batches = minibatches(5, 2, seed=0)
    >>> [sorted(next(batches).tolist()) for _ in range(3)]
    [[2, 4], [0, 3], [1]]
    """
    n_items = check_positive_int("n_items", n_items)
    batch_size = check_positive_int("batch_size", batch_size)
    rng = check_seed("seed", seed)
    while True:
        order = rng.permutation(n_items)
        for start in range(0, n_items, batch_size):
            yield order[start : start + batch_size]


@dataclass
class History:
    """What :func:`fit` did, step by step.

    ``losses[k]`` is the minibatch loss at step ``k`` (before that step's
    update); ``grad_norms[k]`` the global gradient norm before clipping;
    ``clipped`` the number of steps whose gradient was scaled down.
    """

    losses: list = field(default_factory=list)
    grad_norms: list = field(default_factory=list)
    clipped: int = 0

    @property
    def steps(self) -> int:
        return len(self.losses)


def fit(
    params: Mapping[str, np.ndarray],
    loss_and_grads: Callable[[list], tuple[float, Mapping]],
    data: Sequence[Any],
    *,
    steps: int = 200,
    batch_size: int = 32,
    lr: float = 1e-2,
    max_norm: float | None = 1.0,
    seed: Any = 0,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
) -> History:
    """Train ``params`` in place with Adam on minibatches of ``data``; return the :class:`History`.

    Each of ``steps`` steps takes a minibatch (a list of items of ``data``,
    from :func:`minibatches` with ``seed``), calls ``loss_and_grads(batch)``
    for ``(loss, grads)``, clips ``grads`` to global norm ``max_norm`` (no
    clipping if ``None``) and takes one :class:`Adam` step with ``lr``. The
    same seed, data and starting parameters give the same history.

    Fitting the mean of four numbers by least squares:

    >>> w = {"w": np.zeros(1)}
    >>> def loss_and_grads(batch):
    ...     err = w["w"][0] - np.array(batch)
    ...     return float(np.mean(err ** 2) / 2), {"w": np.array([err.mean()])}
    >>> history = fit(w, loss_and_grads, [1.0, 2.0, 3.0, 4.0], steps=300, batch_size=4, lr=0.05)
    >>> round(float(w["w"][0]), 3), round(history.losses[-1], 3), history.steps
    (2.5, 0.625, 300)
    """
    steps = check_positive_int("steps", steps)
    batch_size = check_positive_int("batch_size", batch_size)
    if max_norm is not None:
        max_norm = float(check_positive("max_norm", max_norm))
    seed = check_seed("seed", seed)
    if not callable(loss_and_grads):
        raise ValueError(f"loss_and_grads must be a function batch -> (loss, grads), got {loss_and_grads!r}")
    if isinstance(data, (str, bytes)) or not isinstance(data, Sequence) or len(data) == 0:
        raise ValueError(f"data must be a non-empty list of training items, got {type(data).__name__}")
    opt = Adam(params, lr=lr, beta1=beta1, beta2=beta2, eps=eps)
    history = History()
    batches = minibatches(len(data), batch_size, seed)
    for _ in range(steps):
        batch = [data[int(i)] for i in next(batches)]
        loss, grads = loss_and_grads(batch)
        loss = float(loss)
        if not math.isfinite(loss):
            raise ValueError(f"loss_and_grads returned a loss that is not finite, {loss}, at step {history.steps}")
        if max_norm is not None:
            result = clip_by_global_norm(dict(grads), max_norm)
            grads = result.grads
            history.grad_norms.append(result.norm_before)
            history.clipped += int(result.clipped)
        else:
            history.grad_norms.append(math.sqrt(sum(float(np.sum(np.square(g))) for g in grads.values())))
        opt.step(grads)
        history.losses.append(loss)
    return history

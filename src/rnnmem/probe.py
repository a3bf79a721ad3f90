r"""Probes: small classifiers trained on frozen vectors, to ask what a representation holds.

A **probe** reads vectors that another model computed and does not change
that model. If a linear classifier on the vectors of held-out sentences
recovers a label, the vectors hold it in a form a linear map can read.

* :func:`fit_logistic` fits binary logistic regression (Newton's method, exact
  gradient and Hessian) on standardized features: with
  :math:`z = x^\top w + b` and :math:`p = \sigma(z)`, it minimizes

  .. math::  \ell(w, b) = \frac1N \sum_n \bigl[\log(1 + e^{z_n}) - y_n z_n\bigr] + \frac{\lambda}{2}\lVert w\rVert^2 ,

  whose gradient is :math:`\frac1N X^\top (p - y) + \lambda w` and
  :math:`\frac1N \sum_n (p_n - y_n)` for the bias
  (:func:`logistic_loss_and_grads`). Each feature is standardized with the
  training rows' mean and standard deviation, kept in the
  :class:`LogisticProbe`; a feature constant over the training rows is
  dropped (set to zero), so a probe on identical vectors predicts one class.
* :func:`fit_mixture` trains ELMo's task-side mixture through a probe
  (Peters et al., 2018, eq. 1): each layer :math:`j` standardized on its own,
  then :math:`m = \gamma \sum_j s_j x_j` with :math:`s = \operatorname{softmax}(a)`,
  then logistic regression on :math:`m`. For a linear probe only the product
  :math:`\gamma w` matters, so the penalty is
  :math:`\frac{\lambda}{2}(\lVert w\rVert^2 + \gamma^2)`, which fixes how
  the scale is shared. The gradient (:func:`mixture_loss_and_grads`) is exact;
  the trainer is :class:`rnnmem.train.Adam`, full batch.
* :func:`compare` runs the chapter's whole comparison for one seed: corpus,
  language model, vectors, probes, held-out accuracies.
* :func:`control_labels` is Hewitt and Liang's (2019) control task for the
  sense probe: every cue word given a random label of its own, independent
  of the sense.
* :func:`measure` trains several seeds' language models in one run and
  probes each at the :data:`CHECKPOINTS` of that run: the sense, the
  control task and the positive control (the cue next to the noun), by
  direction of the state and side of the cue.

Labels are 0 and 1; a prediction is 1 where :math:`z > 0`. Bad input raises
:class:`ValueError` naming the argument.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from . import corpus as _corpus
from .bilm import Recipe
from .checks import check_choice, check_finite, check_positive, check_positive_int, check_seed
from .memory import sigmoid
from .train import Adam

__all__ = [
    "LogisticProbe",
    "logistic_loss_and_grads",
    "fit_logistic",
    "MixtureProbe",
    "mixture_loss_and_grads",
    "fit_mixture",
    "accuracy",
    "Comparison",
    "METHODS",
    "CHECKPOINTS",
    "TASKS",
    "DIRECTIONS",
    "slot_loss",
    "slot_sense",
    "loss_interval",
    "loss_difference",
    "control_labels",
    "compare",
    "SeedResult",
    "measure",
    "MeasureRun",
]


def _softplus(z: np.ndarray) -> np.ndarray:
    return np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))


def _check_X(name: str, X: Any, width: int | None = None) -> np.ndarray:
    a = np.asarray(check_finite(name, X), dtype=np.float64)
    if a.ndim != 2 or a.shape[1] < 1:
        raise ValueError(f"{name} must have shape (N, F) with F >= 1, got shape {a.shape}")
    if a.shape[0] < 1:
        raise ValueError(f"{name} must have at least one row (an empty split?), got shape {a.shape}")
    if width is not None and a.shape[1] != width:
        raise ValueError(f"{name} must have {width} features per row, got {a.shape[1]}")
    return a


def _check_y(y: Any, n: int, both: bool = True) -> np.ndarray:
    a = np.asarray(y)
    if a.shape != (n,) or a.dtype.kind not in "iub" or (a.size and not np.isin(a, (0, 1)).all()):
        raise ValueError(f"y must hold one label 0 or 1 per row ({n}), got shape {a.shape}")
    a = a.astype(np.float64)
    if both and not (a.min() == 0 and a.max() == 1):
        raise ValueError(f"y must hold both labels 0 and 1 to train a probe, got only {int(a[0])}")
    return a


def _standardizer(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and scale per feature; a constant feature gets mean = its value and scale = inf (so it reads 0)."""
    mean = X.mean(axis=0)
    constant = X.max(axis=0) == X.min(axis=0)
    mean[constant] = X[0, constant]
    scale = X.std(axis=0)
    scale[constant] = np.inf
    return mean, scale


def logistic_loss_and_grads(
    weight: Any, bias: float, X: Any, y: Any, l2: float = 0.0
) -> tuple[float, np.ndarray, float]:
    r"""The penalized logistic loss :math:`\ell(w, b)` and its exact gradient ``(loss, dw, db)``.

    ``X`` is ``(N, F)`` (already standardized), ``y`` ``(N,)`` labels 0/1.

    >>> loss, dw, db = logistic_loss_and_grads(np.zeros(2), 0.0, [[1.0, 0.0], [0.0, 1.0]], [1, 0])
    >>> round(loss, 4), dw.tolist(), db
    (0.6931, [-0.25, 0.25], 0.0)
    """
    X = _check_X("X", X)
    w = np.asarray(check_finite("weight", weight), dtype=np.float64)
    if w.shape != (X.shape[1],):
        raise ValueError(f"weight must have one entry per feature ({X.shape[1]}), got shape {w.shape}")
    yv = _check_y(y, X.shape[0], both=False)
    l2 = float(_check_l2(l2))
    z = X @ w + float(check_finite("bias", bias))
    loss = float(np.mean(_softplus(z) - yv * z) + 0.5 * l2 * (w @ w))
    g = (sigmoid(z) - yv) / X.shape[0]
    return loss, X.T @ g + l2 * w, float(g.sum())


def _check_l2(l2: Any) -> float:
    v = check_finite("l2", l2)
    if isinstance(v, np.ndarray) or v < 0:
        raise ValueError(f"l2 must be a number >= 0, got {l2!r}")
    return float(v)


@dataclass(frozen=True)
class LogisticProbe:
    """A fitted logistic probe: standardization (``mean``, ``scale``), then ``weight`` and ``bias``.

    ``iterations`` is the number of Newton steps taken.
    """

    weight: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray
    iterations: int = 0

    def logits(self, X: Any) -> np.ndarray:
        """:math:`z = \\tilde x^\\top w + b` for each row, :math:`\\tilde x` the standardized row."""
        X = _check_X("X", X, self.weight.size)
        return ((X - self.mean) / self.scale) @ self.weight + self.bias

    def predict(self, X: Any) -> np.ndarray:
        """Labels 0/1: 1 where the logit is positive."""
        return (self.logits(X) > 0).astype(np.int64)


def fit_logistic(X: Any, y: Any, *, l2: float = 0.01, max_iter: int = 50, tol: float = 1e-10) -> LogisticProbe:
    r"""Logistic regression on standardized ``X`` by Newton's method, with L2 penalty ``l2`` on ``w``.

    Each step solves :math:`H \delta = -\nabla \ell` with the exact Hessian
    :math:`H = \frac1N \tilde X^\top \operatorname{diag}(p(1-p)) \tilde X + \lambda I`
    (no penalty on the bias), halving the step until the loss does not rise;
    it stops when no entry moves by more than ``tol``. The loss is strictly
    convex for ``l2 > 0``, so the result does not depend on a starting point.

    >>> X = [[0.0], [1.0], [2.0], [3.0]]
    >>> probe = fit_logistic(X, [0, 0, 1, 1])
    >>> probe.predict(X).tolist(), probe.predict([[1.4], [1.6]]).tolist()
    ([0, 0, 1, 1], [0, 1])
    >>> fit_logistic(np.zeros((0, 2)), [])
    Traceback (most recent call last):
    ...
    ValueError: X must have at least one row (an empty split?), got shape (0, 2)
    """
    X = _check_X("X", X)
    yv = _check_y(y, X.shape[0])
    l2 = _check_l2(l2)
    max_iter = check_positive_int("max_iter", max_iter)
    tol = float(check_positive("tol", tol))
    mean, scale = _standardizer(X)
    Z = np.hstack([(X - mean) / scale, np.ones((X.shape[0], 1))])
    N, F = Z.shape
    penalty = np.full(F, l2)
    penalty[-1] = 0.0
    theta = np.zeros(F)

    def loss_of(t: np.ndarray) -> float:
        z = Z @ t
        return float(np.mean(_softplus(z) - yv * z) + 0.5 * (penalty * t) @ t)

    loss = loss_of(theta)
    iterations = 0  # the Newton steps taken, stored on the probe
    while iterations < max_iter:
        iterations += 1
        p = sigmoid(Z @ theta)
        grad = Z.T @ (p - yv) / N + penalty * theta
        hess = (Z.T * (p * (1 - p))) @ Z / N + np.diag(penalty) + 1e-12 * np.eye(F)
        step = np.linalg.solve(hess, -grad)
        t = 1.0
        while True:
            new = loss_of(theta + t * step)
            if new <= loss or t < 1e-8:
                break
            t *= 0.5
        theta = theta + t * step
        loss = new
        if np.max(np.abs(t * step)) < tol:
            break
    return LogisticProbe(theta[:-1], float(theta[-1]), mean, scale, iterations)


def accuracy(predicted: Any, y: Any) -> float:
    """The fraction of ``predicted`` labels equal to ``y``.

    >>> accuracy([1, 0, 1, 1], [1, 1, 1, 0])
    0.5
    """
    p, t = np.asarray(predicted), np.asarray(y)
    if p.shape != t.shape or p.ndim != 1 or p.size == 0:
        raise ValueError(f"predicted and y must be non-empty 1-d arrays of one shape, got {p.shape} and {t.shape}")
    return float(np.mean(p == t))


# ---------------------------------------------------------------------- ELMo's mixture through a probe


def _softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max())
    return e / e.sum()


def mixture_loss_and_grads(params: dict, layers: Any, y: Any, l2: float = 0.0) -> tuple[float, dict]:
    r"""The mixture probe's loss and exact gradient, for ``params`` ``a``, ``gamma``, ``weight``, ``bias``.

    ``layers`` is ``(J, N, F)``, already standardized layer by layer. With
    :math:`s = \operatorname{softmax}(a)`, :math:`m_n = \gamma \sum_j s_j x_{jn}`,
    :math:`z_n = m_n^\top w + b` and :math:`g_n = (\sigma(z_n) - y_n)/N`:
    :math:`\partial\ell/\partial w = \sum_n g_n m_n + \lambda w`,
    :math:`\partial\ell/\partial\gamma = \sum_j s_j u_j + \lambda\gamma` and
    :math:`\partial\ell/\partial a = s \odot (\gamma u - \gamma\, s^\top u)`,
    where :math:`u_j = \sum_n g_n\, x_{jn}^\top w`.

    >>> params = {"a": np.zeros(2), "gamma": np.ones(1), "weight": np.zeros(1), "bias": np.zeros(1)}
    >>> loss, grads = mixture_loss_and_grads(params, [[[1.0], [-1.0]], [[0.0], [0.0]]], [1, 0])
    >>> round(loss, 4), grads["weight"].tolist(), grads["a"].tolist()
    (0.6931, [-0.25], [0.0, 0.0])
    """
    h = np.asarray(check_finite("layers", layers), dtype=np.float64)
    if h.ndim != 3 or min(h.shape) < 1:
        raise ValueError(f"layers must have shape (J, N, F) with every size >= 1, got shape {h.shape}")
    J, N, F = h.shape
    yv = _check_y(y, N, both=False)
    l2 = _check_l2(l2)
    a, w = np.asarray(params["a"], dtype=np.float64), np.asarray(params["weight"], dtype=np.float64)
    if a.shape != (J,) or w.shape != (F,):
        raise ValueError(f"params must hold a of shape ({J},) and weight of shape ({F},), got {a.shape} and {w.shape}")
    return _mixture_loss_and_grads(params, h, yv, l2)


def _mixture_loss_and_grads(params: dict, h: np.ndarray, yv: np.ndarray, l2: float) -> tuple[float, dict]:
    """:func:`mixture_loss_and_grads` on checked arrays (the training loop checks them once)."""
    N = h.shape[1]
    a, gamma = np.asarray(params["a"], dtype=np.float64), float(np.asarray(params["gamma"]).reshape(-1)[0])
    w, b = np.asarray(params["weight"], dtype=np.float64), float(np.asarray(params["bias"]).reshape(-1)[0])
    s = _softmax(a)
    mixed = np.tensordot(s, h, axes=1)  # sum_j s_j x_j, (N, F)
    m = gamma * mixed
    z = m @ w + b
    loss = float(np.mean(_softplus(z) - yv * z) + 0.5 * l2 * (w @ w + gamma * gamma))
    g = (sigmoid(z) - yv) / N
    u = np.tensordot(h, w, axes=([2], [0])) @ g  # u_j = sum_n g_n x_jn . w, (J,)
    grads = {
        "a": s * (gamma * u - gamma * (s @ u)),
        "gamma": np.array([s @ u + l2 * gamma]),
        "weight": m.T @ g + l2 * w,
        "bias": np.array([g.sum()]),
    }
    return loss, grads


@dataclass(frozen=True)
class MixtureProbe:
    """A fitted mixture probe: per-layer standardization, then :math:`\\gamma`, :math:`a`, ``weight``, ``bias``."""

    a: np.ndarray
    gamma: float
    weight: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray
    losses: list = field(default_factory=list)

    @property
    def s(self) -> np.ndarray:
        """The layer weights :math:`s = \\operatorname{softmax}(a)`."""
        return _softmax(self.a)

    def logits(self, layers: Any) -> np.ndarray:
        """:math:`z = \\gamma \\sum_j s_j \\tilde x_j^\\top w + b` for each occurrence of ``layers`` ``(J, N, F)``."""
        h = np.asarray(check_finite("layers", layers), dtype=np.float64)
        if h.ndim != 3 or h.shape[0] != self.a.size or h.shape[2] != self.weight.size:
            raise ValueError(f"layers must have shape ({self.a.size}, N, {self.weight.size}), got shape {h.shape}")
        x = (h - self.mean[:, None, :]) / self.scale[:, None, :]
        return self.gamma * np.tensordot(self.s, x, axes=1) @ self.weight + self.bias

    def predict(self, layers: Any) -> np.ndarray:
        """Labels 0/1: 1 where the logit is positive."""
        return (self.logits(layers) > 0).astype(np.int64)


def fit_mixture(layers: Any, y: Any, *, l2: float = 0.01, steps: int = 400, lr: float = 0.05) -> MixtureProbe:
    r"""Train ELMo's mixture (:math:`a`, :math:`\gamma`) and a logistic probe together, full batch, with Adam.

    ``layers`` is ``(J, N, F)``: the frozen vectors of ``N`` occurrences in
    each of ``J`` layers. Each layer is standardized with its own training
    mean and scale per feature (so no layer wins by its size alone); the
    parameters start at :math:`a = 0` (equal weights), :math:`\gamma = 1`,
    :math:`w = 0`, :math:`b = 0`, and take ``steps`` :class:`rnnmem.train.Adam`
    steps at learning rate ``lr`` on :func:`mixture_loss_and_grads`.

    >>> layers = np.stack([np.zeros((4, 1)), [[0.0], [1.0], [2.0], [3.0]]])   # layer 0 holds nothing
    >>> probe = fit_mixture(layers, [0, 0, 1, 1], steps=200)
    >>> probe.predict(layers).tolist(), bool(probe.s[1] > probe.s[0])
    ([0, 0, 1, 1], True)
    """
    h = np.asarray(check_finite("layers", layers), dtype=np.float64)
    if h.ndim != 3 or h.shape[0] < 1 or h.shape[2] < 1:
        raise ValueError(f"layers must have shape (J, N, F) with J >= 1 and F >= 1, got shape {h.shape}")
    if h.shape[1] < 1:
        raise ValueError(f"layers must hold at least one occurrence (an empty split?), got shape {h.shape}")
    J, N, F = h.shape
    yv = _check_y(y, N)
    l2 = _check_l2(l2)
    steps = check_positive_int("steps", steps)
    stats = [_standardizer(h[j]) for j in range(J)]
    mean = np.stack([m for m, _ in stats])
    scale = np.stack([s for _, s in stats])
    x = (h - mean[:, None, :]) / scale[:, None, :]
    params = {"a": np.zeros(J), "gamma": np.ones(1), "weight": np.zeros(F), "bias": np.zeros(1)}
    opt = Adam(params, lr=lr)
    losses = []
    for _ in range(steps):
        loss, grads = _mixture_loss_and_grads(params, x, yv, l2)
        losses.append(loss)
        opt.step(grads)
    return MixtureProbe(
        params["a"].copy(),
        float(params["gamma"][0]),
        params["weight"].copy(),
        float(params["bias"][0]),
        mean,
        scale,
        losses,
    )


# ---------------------------------------------------------------------- the chapter's comparison

METHODS = ("static", "bag", "untrained", "forward", "backward", "both", "layer 1", "mixture")
"""The representations :func:`compare` probes, in its order.

``static``: the word's row of the trained table; ``bag``: the mean of the
rows within ``window`` words; ``untrained``: the untrained BiLM's top layer,
forward and backward states joined; ``forward``, ``backward``, ``both``: the
trained BiLM's top-layer forward states, backward states, and the two joined;
``layer 1``: the trained BiLM's first layer, both directions; ``mixture``:
ELMo's mixture of every layer, trained through the probe.
"""

CHECKPOINTS = (0, 200, 1000, 5000)
"""The steps of one training run at which :func:`measure` reads the language models.

The rule, fixed before any probe was fitted: 0 (the untrained network), 200
(where the book's recipe used to stop, and the models had not learned to use
the cue) and then five times as many steps each time up to
:attr:`rnnmem.bilm.Recipe.steps`, 5,000. A geometric grid, because a
language model's loss falls fast at first and slowly later; four
checkpoints, because each costs a set of probes and the whole chapter's
render has a budget of time.
"""

TASKS = ("sense", "control", "neighbour")
"""What :func:`measure` probes at each checkpoint.

``sense``: the sense of the ambiguous word, its cue 2 to 8 words away
(:data:`rnnmem.corpus.DISTANCES`); ``control``: Hewitt and Liang's (2019)
control task on the same occurrences, the labels of :func:`control_labels`;
``neighbour``: the sense again, on a corpus whose cue is the noun's neighbour
(:data:`rnnmem.corpus.NEIGHBOUR`), a positive control: a state that has just
read the cue should hold it.
"""

DIRECTIONS = ("forward", "backward")
"""The halves of the top layer :func:`measure` probes: the forward model's state, the backward model's."""


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare` measured for one seed, on held-out templates.

    ``correct[method]`` and ``total`` count held-out occurrences, summed over
    the ambiguous words (one probe per word and method); ``cells[method]``
    maps ``(direction, distance)`` to ``(correct, total)``; ``chance`` is the
    share of the commoner sense among held-out occurrences; ``s`` and
    ``gamma`` are the mixture's layer weights and scale per word;
    ``slot_loss[(direction of the model,
    side of the cue)]`` its cross-entropy of the noun in the held-out
    sentences, read from the forward state at ``the`` or the backward state at
    ``was`` (:func:`slot_loss`); ``losses`` the training loss at every step.
    """

    seed: int
    correct: dict
    total: int
    cells: dict
    chance: float
    s: dict
    gamma: dict
    slot_loss: dict
    losses: list

    def accuracy(self, method: str) -> float:
        """Held-out accuracy of one method, over every ambiguous word."""
        return self.correct[method] / self.total


def _slot_log_probs(model: Any, vocab: Any, sentences: Sequence[Any]) -> dict:
    """``{(model direction, cue side): (sentences, log-probabilities (N, V))}`` of the noun slot.

    The forward model predicts the noun from its top state at ``the`` (the
    word before it), the backward model from its top state at ``was`` (the
    word after it).
    """
    if isinstance(sentences, (str, bytes)) or not isinstance(sentences, Sequence) or not sentences:
        raise ValueError(f"sentences must be a non-empty list of Sentence (an empty split?), got {sentences!r}")
    D = model.dim
    out = {}
    for cue_side in _corpus.DIRECTIONS:
        chosen = [s for s in sentences if s.direction == cue_side]
        if not chosen:
            continue
        seqs = [vocab.encode(s) for s in chosen]
        for direction, offset, half in (("forward", -1, slice(0, D)), ("backward", 1, slice(D, 2 * D))):
            top = model.layers_at(seqs, [s.position + offset for s in chosen])[-1][:, half]
            z = top @ model.softmax_weight.T + model.softmax_bias
            z = z - z.max(axis=1, keepdims=True)
            out[(direction, cue_side)] = (chosen, z - np.log(np.exp(z).sum(axis=1, keepdims=True)))
    return dict(sorted(out.items()))


def slot_loss(model: Any, vocab: Any, sentences: Sequence[Any], *, mean: bool = True) -> dict:
    """How well a language model predicts the noun: cross-entropy (nats) by model direction and cue side.

    For each sentence, the forward model predicts the noun from its top state
    at ``the`` (it has read everything before the noun), the backward model
    from its top state at ``was`` (everything after). Returns
    ``{(model direction, cue direction): loss}``: the mean over the
    sentences, or (``mean=False``) the array of each sentence's loss. A model
    that reads the cue when it has read past it scores lower with the cue on
    its side (the forward model with the cue ``"before"``) than on the other
    side; the floors are :func:`rnnmem.corpus.slot_entropy`.

    >>> from rnnmem import bilm, corpus
    >>> c, vocab = corpus.make_corpus(12, 24, seed=0), corpus.vocabulary()
    >>> losses = slot_loss(bilm.BiLM(len(vocab), dim=4, seed=0), vocab, c.held_out)
    >>> sorted(losses), round(losses[("forward", "before")], 1)
    ([('backward', 'after'), ('backward', 'before'), ('forward', 'after'), ('forward', 'before')], 4.1)
    """
    return _slot_losses(_slot_log_probs(model, vocab, sentences), vocab, mean)


def _slot_losses(log_probs: dict, vocab: Any, mean: bool) -> dict:
    """:func:`slot_loss` from the noun slot's log-probabilities (:func:`_slot_log_probs`)."""
    out = {}
    for key, (chosen, log_p) in log_probs.items():
        each = -log_p[np.arange(len(chosen)), [vocab.id(s.noun) for s in chosen]]
        out[key] = float(each.mean()) if mean else each
    return out


def slot_sense(model: Any, vocab: Any, sentences: Sequence[Any]) -> dict:
    """Whether the language model reads the cue's *sense* where it predicts the noun: ``(correct, total)``.

    A sentence counts as correct when the model, at the state that predicts
    the noun (as in :func:`slot_loss`), gives the topic nouns of the cue's
    sense more probability than those of the ambiguous word's other sense
    (``shore`` and ``stream`` against ``vault`` and ``teller`` after a river
    cue). A model that reads the cue only as naming the word's family of
    nouns, or not at all, is correct half the time. Returns
    ``{(model direction, cue side): (correct, total)}``.

    >>> from rnnmem import bilm, corpus
    >>> c, vocab = corpus.make_corpus(12, 24, seed=0), corpus.vocabulary()
    >>> correct, total = slot_sense(bilm.BiLM(len(vocab), dim=4, seed=0), vocab, c.held_out)[("forward", "before")]
    >>> total == sum(s.direction == "before" for s in c.held_out), 0 <= correct <= total
    (True, True)
    """
    return _slot_senses(_slot_log_probs(model, vocab, sentences), vocab)


def _slot_senses(log_probs: dict, vocab: Any) -> dict:
    """:func:`slot_sense` from the noun slot's log-probabilities (:func:`_slot_log_probs`)."""
    out = {}
    for key, (chosen, log_p) in log_probs.items():
        p = np.exp(log_p)
        correct = 0
        for s, row in zip(chosen, p):
            other = next(x for x in _corpus.SENSES[s.word] if x != s.sense)
            own = sum(row[vocab.id(n)] for n in _corpus.NOUNS[(s.word, s.sense)])
            correct += int(own > sum(row[vocab.id(n)] for n in _corpus.NOUNS[(s.word, other)]))
        out[key] = (correct, len(chosen))
    return out


def loss_interval(values: Any, level: float = 0.95) -> tuple[float, float, float]:
    r"""The mean of ``values`` and its normal-approximation interval, :math:`\bar x \pm z\, s/\sqrt n`.

    ``s`` is the sample standard deviation and :math:`z` the two-sided normal
    quantile of ``level`` (1.96 at 95%). The chapter uses it for a mean loss
    over a thousand or more held-out sentences, where the mean's sampling
    distribution is close to normal. Returns ``(mean, lower, upper)``.

    >>> [round(x, 3) for x in loss_interval([1.0, 2.0, 3.0, 4.0])]
    [2.5, 1.235, 3.765]
    """
    v = np.asarray(check_finite("values", values), dtype=np.float64).ravel()
    if v.size < 2:
        raise ValueError(f"values must hold at least two numbers (a spread needs two), got {v.size}")
    level = float(check_finite("level", level))
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be a number strictly between 0 and 1, got {level!r}")
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    half = z * float(v.std(ddof=1)) / float(np.sqrt(v.size))
    mean = float(v.mean())
    return mean, mean - half, mean + half


def loss_difference(a: Any, b: Any) -> tuple[float, float]:
    r"""The difference of two mean losses and the two-sided p of a large-sample z-test: ``(mean(a) - mean(b), p)``.

    With :math:`d = \bar a - \bar b` and :math:`s_d = \sqrt{s_a^2/n_a + s_b^2/n_b}`
    (sample variances), :math:`p = 2\,\Phi(-|d|/s_d)`: Welch's statistic
    read against the normal distribution, which is what it tends to for the
    hundreds of held-out sentences the chapter compares.

    >>> d, p = loss_difference([1.0, 2.0, 3.0, 4.0] * 50, [2.0, 3.0, 4.0, 5.0] * 50)
    >>> d, p < 1e-10
    (-1.0, True)
    """
    x = np.asarray(check_finite("a", a), dtype=np.float64).ravel()
    y = np.asarray(check_finite("b", b), dtype=np.float64).ravel()
    for name, v in (("a", x), ("b", y)):
        if v.size < 2:
            raise ValueError(f"{name} must hold at least two numbers (a spread needs two), got {v.size}")
    d = float(x.mean() - y.mean())
    spread = float(np.sqrt(x.var(ddof=1) / x.size + y.var(ddof=1) / y.size))
    if spread == 0.0:
        return d, 1.0 if d == 0.0 else 0.0
    return d, float(math.erfc(abs(d) / spread / math.sqrt(2.0)))  # 2 (1 - Phi(|z|)), accurate in the far tail


def control_labels(word: str, seed: Any = 0) -> dict:
    """Hewitt and Liang's control task for one ambiguous word: a fixed random label for each of its cues.

    Hewitt and Liang (2019) pair a probing task with a *control task*: the
    same inputs, each word type given a random label of its own, so that a
    probe can score well only by reading which word it is, not the property
    the task names. Here the label of an occurrence is decided by its cue
    word, as the sense is; the control gives each cue a label instead of its
    sense. Of the four cues of each sense, two drawn with ``seed`` get 1 and
    two get 0, so the control labels are balanced and independent of the
    sense: a probe that reads only the sense scores one half on them, and one
    that reads which cue it was can score as well as on the senses.

    Returns ``{cue: 0 or 1}`` for the word's eight cues.

    >>> from rnnmem import corpus
    >>> labels = control_labels("bank", seed=0)
    >>> [sum(labels[c] for c in corpus.CUES[("bank", sense)]) for sense in corpus.SENSES["bank"]]
    [2, 2]
    """
    check_choice("word", word, tuple(_corpus.SENSES))
    rng = check_seed("seed", seed)
    out = {}
    for sense in _corpus.SENSES[word]:
        cues = _corpus.CUES[(word, sense)]
        if len(cues) % 2:
            raise ValueError(f"the cues of {(word, sense)!r} must be even in number to split evenly, got {len(cues)}")
        ones = set(rng.permutation(len(cues))[: len(cues) // 2].tolist())
        out.update({c: int(k in ones) for k, c in enumerate(cues)})
    return out


def _check_window(window: Any) -> int:
    if isinstance(window, (bool, np.bool_)) or not isinstance(window, (int, np.integer)) or window < 0:
        raise ValueError(f"window must be a whole number >= 0, got {window!r}")
    return int(window)


def compare(
    seed: int = 0,
    recipe: Recipe | None = None,
    *,
    n_train: int = 1200,
    n_held_out: int = 600,
    distances: Sequence[int] = _corpus.DISTANCES,
    length: int = _corpus.LENGTH,
    window: int = 3,
    l2: float = 0.01,
) -> Comparison:
    """The chapter's comparison for one ``seed``: which frozen vectors let a probe tell the senses apart.

    ``seed`` draws the corpus (:func:`rnnmem.corpus.make_corpus`), the
    language model's weights and its minibatches (``recipe``, by default
    :class:`rnnmem.bilm.Recipe`). The model trains on the training sentences
    only. For each ambiguous word and each of :data:`METHODS`, a probe
    (:func:`fit_logistic`, or :func:`fit_mixture` for the mixture) learns the
    sense from the word's occurrences in the training sentences and is scored
    on its occurrences in the held-out sentences, whose templates the model
    and the probe never saw.

    >>> small = Recipe(dim=4, num_layers=1, steps=2, batch_size=8)
    >>> c = compare(seed=0, recipe=small, n_train=48, n_held_out=48, distances=[2], length=6)
    >>> c.total, c.chance, c.accuracy("static")
    (24, 0.5, 0.5)
    """
    recipe = Recipe() if recipe is None else recipe
    if not isinstance(recipe, Recipe):
        raise ValueError(f"recipe must be an rnnmem.bilm.Recipe, got {type(recipe).__name__}")
    window = _check_window(window)
    data = _corpus.make_corpus(n_train, n_held_out, distances=distances, length=length, seed=seed)
    vocab = _corpus.vocabulary()
    train_seqs = [vocab.encode(s) for s in data.train]
    untrained = recipe.model(len(vocab), seed)
    model, history = recipe.fit(train_seqs, len(vocab), seed)
    return _compare(int(seed), data, vocab, model, untrained, list(history.losses), window, l2)


class _Layers:
    """``model.layers_at`` of a word's occurrences in a list of sentences, each computed once.

    ``layers(model, sentences, word)`` returns the occurrences
    (:func:`rnnmem.corpus.occurrences`) and every layer of the model at each,
    ``(L + 1, N, 2 * dim)``. The probes of :func:`measure` read the same
    model on the same sentences for several labellings (the sense and the
    control task) and again for :func:`compare`'s table; the call is the same
    each time, so its result is kept and returned again (keyed by the
    identity of the model and of the list, which the memo holds).
    """

    def __init__(self, vocab: Any) -> None:
        self.vocab = vocab
        self._memo: dict = {}

    def __call__(self, model: Any, sentences: Sequence[Any], word: str) -> tuple[list, np.ndarray]:
        key = (id(model), id(sentences), word)
        if key not in self._memo:
            occ = _corpus.occurrences(sentences, word)
            at = model.layers_at([self.vocab.encode(s) for s in occ], [s.position for s in occ])
            self._memo[key] = (model, sentences, occ, at)
        _, _, occ, at = self._memo[key]
        return occ, at


def _compare(
    seed: int,
    data: Any,
    vocab: Any,
    model: Any,
    untrained: Any,
    losses: list,
    window: int,
    l2: float,
    layers: _Layers | None = None,
    slots: dict | None = None,
) -> Comparison:
    """:func:`compare` of a trained ``model`` (and its ``untrained`` start) on the corpus ``data``.

    ``layers`` (a :class:`_Layers`) and ``slots`` (:func:`slot_loss` of ``model`` on the held-out
    sentences) give what the caller has already computed; the numbers are the same.
    """
    layers = _Layers(vocab) if layers is None else layers
    slots = slot_loss(model, vocab, data.held_out) if slots is None else slots
    D, L = model.dim, model.num_layers
    correct = {m: 0 for m in METHODS}
    cells: dict = {m: {} for m in METHODS}
    total, majority = 0, 0
    s_by_word, gamma_by_word = {}, {}
    for word, senses in _corpus.SENSES.items():
        split = {}
        for name, sentences in (("train", data.train), ("held out", data.held_out)):
            occ, trained = layers(model, sentences, word)
            _, fresh = layers(untrained, sentences, word)
            views = {
                "static": trained[0, :, :D],
                "bag": model.bag_of_rows([vocab.encode(s) for s in occ], [s.position for s in occ], window),
                "untrained": fresh[L],
                "forward": trained[L, :, :D],
                "backward": trained[L, :, D:],
                "both": trained[L],
                "layer 1": trained[1],
                "mixture": trained,
            }
            y = np.array([senses.index(s.sense) for s in occ])
            split[name] = (views, y, [(s.direction, s.distance) for s in occ])
        (tr, y_tr, _), (ho, y_ho, where) = split["train"], split["held out"]
        total += y_ho.size
        majority += max(int(y_ho.sum()), int(y_ho.size - y_ho.sum()))
        for method in METHODS:
            if method == "mixture":
                mixture = fit_mixture(tr[method], y_tr, l2=l2)
                s_by_word[word], gamma_by_word[word] = mixture.s, mixture.gamma
                predicted = mixture.predict(ho[method])
            else:
                predicted = fit_logistic(tr[method], y_tr, l2=l2).predict(ho[method])
            hit = predicted == y_ho
            correct[method] += int(hit.sum())
            for cell, h in zip(where, hit):
                c, n = cells[method].get(cell, (0, 0))
                cells[method][cell] = (c + int(h), n + 1)
    return Comparison(seed, correct, total, cells, majority / total, s_by_word, gamma_by_word, slots, losses)


@dataclass(frozen=True)
class SeedResult:
    """What :func:`measure` read from one seed's training run.

    ``checkpoints`` are the steps read. ``counts[(step, task, direction,
    side)]`` is ``(correct, total)``: the held-out occurrences whose label
    (of ``task`` in :data:`TASKS`) a probe on the top layer's ``direction``
    half got right, among those with the cue on ``side`` (``"before"`` or
    ``"after"`` the noun). ``slot[(step, direction, side)]`` is the array of
    the held-out sentences' losses on the noun (:func:`slot_loss`), and
    ``reading[(step, direction, side)]`` the ``(correct, total)`` of the
    language model's own reading of the sense there (:func:`slot_sense`).
    ``final`` is :func:`compare`'s comparison of the model at the last
    checkpoint; ``losses`` the training loss at every step.
    """

    seed: int
    checkpoints: tuple
    counts: dict
    slot: dict
    reading: dict
    final: Comparison
    losses: list


def _probe_counts(model: Any, vocab: Any, data: Any, labels_of: Any, l2: float, layers: _Layers | None = None) -> dict:
    """``(direction, side) -> (correct, total)`` of per-word probes on the top layer's two halves.

    ``labels_of(word, sentence)`` gives an occurrence's label (0 or 1). For
    each ambiguous word and each half, one probe is fitted on all the word's
    training occurrences and scored on its held-out ones, counted by the side
    of the cue.
    """
    D, L = model.dim, model.num_layers
    layers = _Layers(vocab) if layers is None else layers
    out: dict = {}
    for word in _corpus.SENSES:
        fitted = {}
        for name, sentences in (("train", data.train), ("held out", data.held_out)):
            occ, at = layers(model, sentences, word)
            top = at[L]
            y = np.array([labels_of(word, s) for s in occ])
            fitted[name] = (top, y, [s.direction for s in occ])
        (x_tr, y_tr, _), (x_ho, y_ho, sides) = fitted["train"], fitted["held out"]
        for direction, half in (("forward", slice(0, D)), ("backward", slice(D, 2 * D))):
            hit = fit_logistic(x_tr[:, half], y_tr, l2=l2).predict(x_ho[:, half]) == y_ho
            for side in _corpus.DIRECTIONS:
                chosen = np.array([s == side for s in sides])
                c, n = out.get((direction, side), (0, 0))
                out[(direction, side)] = (c + int(hit[chosen].sum()), n + int(chosen.sum()))
    return out


def measure(
    seeds: Sequence[int],
    recipe: Recipe | None = None,
    *,
    checkpoints: Sequence[int] = CHECKPOINTS,
    dtype: Any = np.float64,
    n_train: int = 1200,
    n_held_out: int = 600,
    window: int = 3,
    l2: float = 0.01,
) -> list[SeedResult]:
    """Train one language model per seed and probe each at ``checkpoints`` of its run: the chapter's measurement.

    Seed ``s`` draws its corpus, its model's weights and its minibatches, as
    in :func:`compare`; the models of all seeds train at once
    (:meth:`rnnmem.bilm.Recipe.fit_many`, in ``dtype``). At each checkpoint,
    for each of :data:`TASKS` and each half of the top layer
    (:data:`DIRECTIONS`), one logistic probe per ambiguous word is fitted on
    the training occurrences and scored on the held-out ones
    (:func:`_probe_counts`), and the noun's loss is read on every held-out
    sentence (:func:`slot_loss`), with the model's own reading of the sense
    there (:func:`slot_sense`). The ``neighbour`` task uses a corpus of its
    own, drawn with the same seed, whose cue stands next to the noun; the
    language model never trains on it. The ``control`` labels of word ``i``
    (in the order of :data:`rnnmem.corpus.SENSES`) under seed ``s`` are
    :func:`control_labels` drawn with ``numpy.random.default_rng([s, i])``. At the last checkpoint,
    :func:`compare`'s comparison of every representation is made as well.

    >>> small = Recipe(dim=4, num_layers=1, steps=4, batch_size=8)
    >>> (run,) = measure([0], small, checkpoints=[0, 4], n_train=48, n_held_out=48)
    >>> run.counts[(4, "control", "forward", "before")][1] > 0, sorted(run.slot)[0]
    (True, (0, 'backward', 'after'))
    """
    recipe = Recipe() if recipe is None else recipe
    if not isinstance(recipe, Recipe):
        raise ValueError(f"recipe must be an rnnmem.bilm.Recipe, got {type(recipe).__name__}")
    window = _check_window(window)
    if isinstance(checkpoints, (str, bytes)) or not isinstance(checkpoints, Sequence) or not checkpoints:
        raise ValueError(f"checkpoints must be a non-empty list of step counts, got {checkpoints!r}")
    marks = sorted(set(int(c) for c in checkpoints))
    vocab = _corpus.vocabulary()
    seeds = list(seeds) if isinstance(seeds, Sequence) and not isinstance(seeds, (str, bytes)) else seeds
    if not isinstance(seeds, list) or not seeds:
        raise ValueError(f"seeds must be a non-empty list of whole numbers >= 0, got {seeds!r}")
    corpora = [_corpus.make_corpus(n_train, n_held_out, seed=s) for s in seeds]
    neighbours = [_corpus.make_corpus(n_train, n_held_out, distances=[_corpus.NEIGHBOUR], seed=s) for s in seeds]
    models, histories = recipe.fit_many(
        [[vocab.encode(x) for x in c.train] for c in corpora], len(vocab), seeds, checkpoints=marks, dtype=dtype
    )
    runs = []
    for k, seed in enumerate(seeds):
        data, near = corpora[k], neighbours[k]
        control = {w: control_labels(w, np.random.default_rng([seed, i])) for i, w in enumerate(_corpus.SENSES)}

        def sense(word: str, s: Any) -> int:
            return _corpus.SENSES[word].index(s.sense)

        def shuffled(word: str, s: Any, control: dict = control) -> int:
            return control[word][s.cue]

        counts, slot, reading = {}, {}, {}
        layers = _Layers(vocab)  # the sense and control probes, and the final comparison, read the same layers
        for step in marks:
            model = models[k][step]
            for task, corpus_, labels_of in (
                ("sense", data, sense),
                ("control", data, shuffled),
                ("neighbour", near, sense),
            ):
                for (direction, side), count in _probe_counts(model, vocab, corpus_, labels_of, l2, layers).items():
                    counts[(step, task, direction, side)] = count
            log_probs = _slot_log_probs(model, vocab, data.held_out)
            for key, each in _slot_losses(log_probs, vocab, mean=False).items():
                slot[(step,) + key] = each
            for key, count in _slot_senses(log_probs, vocab).items():
                reading[(step,) + key] = count
        last = models[k][marks[-1]]
        final = _compare(
            int(seed),
            data,
            vocab,
            last,
            models[k][marks[0]],
            histories[k].losses,
            window,
            l2,
            layers,
            _slot_losses(log_probs, vocab, mean=True),  # the last checkpoint's, read in the loop above
        )
        runs.append(SeedResult(int(seed), tuple(marks), counts, slot, reading, final, list(histories[k].losses)))
    return runs


@dataclass(frozen=True)
class MeasureRun:
    """Some seeds of the chapter's measurement as a value: ``run.execute()`` is :func:`measure` of them, pure.

    :func:`measure` with the default :class:`~rnnmem.bilm.Recipe`, checkpoints
    and corpus sizes, in ``dtype``. A seed's numbers do not depend on the
    seeds it trains beside (each model's products are its own), so the
    seeds of a page can be split among processes and the runs' results put
    back in order. Hashable, so a cache can key its results by it.

    >>> run = MeasureRun((0, 2))
    >>> run, run.cost
    (MeasureRun(seeds=(0, 2), dtype='float32'), 2)
    >>> MeasureRun(())
    Traceback (most recent call last):
    ...
    ValueError: seeds must be a non-empty tuple of whole numbers >= 0, got ()
    """

    seeds: tuple[int, ...]
    dtype: str = "float32"

    def __post_init__(self) -> None:
        seeds = self.seeds
        if (
            not isinstance(seeds, tuple)
            or not seeds
            or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0 for s in seeds)
        ):
            raise ValueError(f"seeds must be a non-empty tuple of whole numbers >= 0, got {seeds!r}")
        object.__setattr__(self, "seeds", tuple(int(s) for s in seeds))
        check_choice("dtype", self.dtype, ("float32", "float64"))

    @property
    def cost(self) -> int:
        """A relative cost, to start the costliest runs first: the seeds."""
        return len(self.seeds)

    def execute(self) -> tuple[SeedResult, ...]:
        """The runs of :attr:`seeds`, in their order (:func:`measure`)."""
        return tuple(measure(list(self.seeds), Recipe(), dtype=np.dtype(self.dtype)))

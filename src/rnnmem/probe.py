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

Labels are 0 and 1; a prediction is 1 where :math:`z > 0`. Bad input raises
:class:`ValueError` naming the argument.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import corpus as _corpus
from .bilm import Recipe
from .checks import check_finite, check_positive, check_positive_int
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
    "slot_loss",
    "compare",
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


def slot_loss(model: Any, vocab: Any, sentences: Sequence[Any]) -> dict:
    """How well a language model predicts the noun: mean cross-entropy (nats) by model direction and cue side.

    For each sentence, the forward model predicts the noun from its top state
    at ``the`` (it has read everything before the noun), the backward model
    from its top state at ``was`` (everything after). Returns
    ``{(model direction, cue direction): loss}``. A model that reads the cue
    when it has read past it scores lower with the cue on its side (the
    forward model with the cue ``"before"``) than on the other side.

    >>> from rnnmem import bilm, corpus
    >>> c, vocab = corpus.make_corpus(12, 24, seed=0), corpus.vocabulary()
    >>> losses = slot_loss(bilm.BiLM(len(vocab), dim=4, seed=0), vocab, c.held_out)
    >>> sorted(losses), round(losses[("forward", "before")], 1)
    ([('backward', 'after'), ('backward', 'before'), ('forward', 'after'), ('forward', 'before')], 4.0)
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
        targets = np.array([vocab.id(s.noun) for s in chosen])
        for direction, offset, half in (("forward", -1, slice(0, D)), ("backward", 1, slice(D, 2 * D))):
            top = model.layers_at(seqs, [s.position + offset for s in chosen])[-1][:, half]
            z = top @ model.softmax_weight.T + model.softmax_bias
            z = z - z.max(axis=1, keepdims=True)
            log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
            out[(direction, cue_side)] = float(-log_p[np.arange(len(chosen)), targets].mean())
    return dict(sorted(out.items()))


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
    if isinstance(window, (bool, np.bool_)) or not isinstance(window, (int, np.integer)) or window < 0:
        raise ValueError(f"window must be a whole number >= 0, got {window!r}")
    data = _corpus.make_corpus(n_train, n_held_out, distances=distances, length=length, seed=seed)
    vocab = _corpus.vocabulary()
    train_seqs = [vocab.encode(s) for s in data.train]
    untrained = recipe.model(len(vocab), seed)
    model, history = recipe.fit(train_seqs, len(vocab), seed)
    slots = slot_loss(model, vocab, data.held_out)
    D, L = model.dim, model.num_layers
    correct = {m: 0 for m in METHODS}
    cells: dict = {m: {} for m in METHODS}
    total, majority = 0, 0
    s_by_word, gamma_by_word = {}, {}
    for word, senses in _corpus.SENSES.items():
        split = {}
        for name, sentences in (("train", data.train), ("held out", data.held_out)):
            occ = _corpus.occurrences(sentences, word)
            seqs = [vocab.encode(s) for s in occ]
            pos = [s.position for s in occ]
            trained = model.layers_at(seqs, pos)
            fresh = untrained.layers_at(seqs, pos)
            views = {
                "static": trained[0, :, :D],
                "bag": model.bag_of_rows(seqs, pos, window),
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
    return Comparison(
        int(seed), correct, total, cells, majority / total, s_by_word, gamma_by_word, slots, list(history.losses)
    )

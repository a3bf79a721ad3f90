r"""A small bidirectional LSTM language model, in the style of ELMo (Peters et al., 2018, §3.1).

A sentence is read as ids :math:`w_0 = \text{<s>}, w_1, \dots, w_n, w_{n+1} = \text{</s>}`.
Two language models share one token table :math:`E` (one row per token, of
width ``dim``) and one output softmax, and have their own stacked LSTMs
(:class:`rnnmem.LSTM`, ``num_layers`` each, every layer of width ``dim``):

* the **forward** model reads :math:`w_0, \dots, w_n` left to right; its top
  state at :math:`w_t`, :math:`\overrightarrow{h}_t`, has read
  :math:`w_0, \dots, w_t` and predicts the next token :math:`w_{t+1}`;
* the **backward** model reads :math:`w_{n+1}, \dots, w_1` right to left; its
  top state at :math:`w_t`, :math:`\overleftarrow{h}_t`, has read
  :math:`w_{n+1}, \dots, w_t` and predicts the previous token :math:`w_{t-1}`.

Each keeps its own target out of its input: the token a state predicts is
never among the tokens it has read. The training loss (:meth:`BiLM.loss_and_grads`)
is the mean of the two directions' mean cross-entropies, in nats per token.

The representations of word :math:`w_t` (:meth:`BiLM.layers`) are, for
layer :math:`j`: :math:`h_{t,0} = [E_{w_t}; E_{w_t}]` (the token's row, twice,
as ELMo duplicates its context-free layer) and
:math:`h_{t,j} = [\overrightarrow{h}_{t,j}; \overleftarrow{h}_{t,j}]` for
:math:`j = 1, \dots, L`, each of width ``2 * dim``. :func:`scalar_mix` forms
ELMo's task-specific mixture (Peters et al., 2018, eq. 1)

.. math::  \mathrm{ELMo}_t = \gamma \sum_{j=0}^{L} s_j\, h_{t,j}, \qquad s = \operatorname{softmax}(a),

with :math:`a` and :math:`\gamma` parameters of the task, not of the language
models, and the same for every position :math:`t`. :func:`cosine_matrix` and
:func:`mean_cosines` compare the vectors of several occurrences of a word;
:meth:`BiLM.bag_of_rows` is the context-free baseline that averages the
table's rows around a word.

:class:`Recipe` declares how the book trains a BiLM (width, layers, steps,
batch, learning rate, clipping): one frozen value that the chapter, its
builders and the tests share, so the recipe is written down once.

ELMo's context-free layer is computed from the characters of the word; here
a plain table of rows stands in for it. Sequences in a batch are padded at
the end with ``pad_id``, so padding never enters a real position's state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .checks import check_finite, check_positive, check_positive_int, check_seed
from .lstm import LSTM
from .train import History, fit, pad_batch, softmax_cross_entropy

__all__ = ["BiLM", "Recipe", "scalar_mix", "cosine_matrix", "mean_cosines"]

_KEYS = {"weight_ih_l0": "W_ih", "weight_hh_l0": "W_hh", "bias_ih_l0": "b_ih", "bias_hh_l0": "b_hh"}


def scalar_mix(layers: Any, weights: Any = None, gamma: float = 1.0) -> np.ndarray:
    r"""ELMo's mixture :math:`\gamma \sum_j \operatorname{softmax}(a)_j\, h_j` of a stack of layers.

    ``layers`` has shape ``(J, ...)``, one representation per layer;
    ``weights`` (the unnormalized :math:`a`, ``(J,)``) defaults to zeros,
    which weighs every layer equally; ``gamma`` scales the result. Returns an
    array of shape ``layers.shape[1:]``.

    >>> layers = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> scalar_mix(layers).tolist()
    [0.5, 0.5]
    >>> scalar_mix(layers, [0.0, np.log(3.0)], gamma=2.0).round(6).tolist()
    [0.5, 1.5]
    >>> scalar_mix(layers, [1.0, 2.0, 3.0])
    Traceback (most recent call last):
    ...
    ValueError: weights must have one entry per layer (2), got 3
    """
    h = np.asarray(check_finite("layers", layers), dtype=np.float64)
    if h.ndim < 1 or h.shape[0] < 1:
        raise ValueError(f"layers must have a leading axis of at least one layer, got shape {h.shape}")
    J = h.shape[0]
    w = np.zeros(J) if weights is None else np.asarray(check_finite("weights", weights), dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != J:
        raise ValueError(f"weights must have one entry per layer ({J}), got {w.size}")
    g = float(check_finite("gamma", gamma))
    s = np.exp(w - w.max())
    s /= s.sum()
    return g * np.tensordot(s, h, axes=1)


def cosine_matrix(vectors: Any) -> np.ndarray:
    r"""Cosine similarities :math:`\langle u, v\rangle / (\|u\|\,\|v\|)` between the rows of ``vectors`` ``(N, F)``.

    >>> cosine_matrix([[1.0, 0.0], [1.0, 1.0], [2.0, 0.0]]).round(4).tolist()
    [[1.0, 0.7071, 1.0], [0.7071, 1.0, 0.7071], [1.0, 0.7071, 1.0]]
    """
    v = np.asarray(check_finite("vectors", vectors), dtype=np.float64)
    if v.ndim != 2 or v.shape[0] < 1 or v.shape[1] < 1:
        raise ValueError(f"vectors must have shape (N, F) with N >= 1 and F >= 1, got shape {v.shape}")
    norms = np.linalg.norm(v, axis=1)
    if not (norms > 0).all():
        raise ValueError(
            f"vectors must be nonzero rows (a zero row has no direction), got a zero row "
            f"at index {int(np.argmin(norms))}"
        )
    u = v / norms[:, None]
    return np.clip(u @ u.T, -1.0, 1.0)


def mean_cosines(vectors: Any, labels: Sequence[str]) -> dict:
    """Mean cosine between distinct occurrences, within each label and across labels.

    ``vectors`` is ``(N, F)``, one row per occurrence; ``labels`` its ``N``
    labels (a sense). Returns ``{"within <label>": ..., "across": ...}`` in
    the order labels first appear: the mean over pairs of different rows
    with the same label, and over pairs with different labels. Each label
    needs two rows, and there must be two labels.

    >>> v = [[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0]]
    >>> {k: round(x, 3) for k, x in mean_cosines(v, ["a", "a", "b", "b"]).items()}
    {'within a': 0.995, 'within b': 0.995, 'across': 0.099}
    """
    c = cosine_matrix(vectors)
    labels = list(labels)
    if len(labels) != c.shape[0]:
        raise ValueError(f"labels must give one label per row of vectors ({c.shape[0]}), got {len(labels)}")
    names = list(dict.fromkeys(labels))
    lab = np.array([names.index(x) for x in labels])
    if len(names) < 2 or min(np.bincount(lab)) < 2:
        raise ValueError(
            f"labels must hold at least two labels with at least two rows each, got counts "
            f"{ {n: int(k) for n, k in zip(names, np.bincount(lab))} }"
        )
    same = lab[:, None] == lab[None, :]
    off = ~np.eye(len(lab), dtype=bool)
    out = {f"within {n}": float(c[same & off & (lab[:, None] == i)].mean()) for i, n in enumerate(names)}
    out["across"] = float(c[~same].mean())
    return out


class BiLM:
    """Forward and backward LSTM language models over one token table and one softmax.

    ``BiLM(vocab_size, dim=32, num_layers=1, pad_id=0, seed=0)``. The
    parameters (:meth:`parameters`) are the table ``embedding``
    ``(vocab_size, dim)``, drawn from :math:`N(0, 1)`; for each direction
    ``d`` in ``forward``, ``backward`` and layer ``l``, the four arrays of an
    :class:`rnnmem.LSTM` as ``d.l.W_ih``, ``d.l.W_hh``, ``d.l.b_ih``,
    ``d.l.b_hh``; and the shared softmax ``softmax.weight`` ``(vocab_size,
    dim)`` and ``softmax.bias``. A sequence is a list of ids that starts with
    ``<s>`` and ends with ``</s>`` (:meth:`rnnmem.corpus.Vocabulary.encode`).

    >>> model = BiLM(10, dim=4, num_layers=2, seed=0)
    >>> sorted(model.parameters())[:3]
    ['backward.0.W_hh', 'backward.0.W_ih', 'backward.0.b_hh']
    >>> model.layers([1, 5, 6, 7, 2]).shape     # 3 layers, 3 words, 2 * dim
    (3, 3, 8)
    """

    def __init__(self, vocab_size: int, *, dim: int = 32, num_layers: int = 1, pad_id: int = 0, seed: int = 0) -> None:
        self.vocab_size = check_positive_int("vocab_size", vocab_size)
        if self.vocab_size < 2:
            raise ValueError(
                f"vocab_size must be at least 2 (a language model chooses among tokens), got {vocab_size!r}"
            )
        self.dim = check_positive_int("dim", dim)
        self.num_layers = check_positive_int("num_layers", num_layers)
        if isinstance(pad_id, bool) or not isinstance(pad_id, (int, np.integer)) or not 0 <= pad_id < self.vocab_size:
            raise ValueError(f"pad_id must be a whole number from 0 to {self.vocab_size - 1}, got {pad_id!r}")
        self.pad_id = int(pad_id)
        rng = check_seed("seed", seed)
        V, D = self.vocab_size, self.dim
        self.embedding = rng.standard_normal((V, D))
        self.lstms = {
            direction: [LSTM(D, D, seed=rng) for _ in range(self.num_layers)] for direction in ("forward", "backward")
        }
        bound = 1.0 / np.sqrt(D)
        self.softmax_weight = rng.uniform(-bound, bound, (V, D))
        self.softmax_bias = np.zeros(V)

    def __repr__(self) -> str:
        return f"BiLM(vocab_size={self.vocab_size}, dim={self.dim}, num_layers={self.num_layers})"

    def parameters(self) -> dict:
        """Every parameter array by name: the live arrays, which an optimizer changes in place."""
        params = {"embedding": self.embedding}
        for direction, stack in self.lstms.items():
            for layer, lstm in enumerate(stack):
                for attr in _KEYS.values():
                    params[f"{direction}.{layer}.{attr}"] = getattr(lstm, attr)
        params["softmax.weight"] = self.softmax_weight
        params["softmax.bias"] = self.softmax_bias
        return params

    # ------------------------------------------------------------------ inputs

    def _check_sequences(self, sequences: Any) -> list[np.ndarray]:
        if isinstance(sequences, (str, bytes)) or not isinstance(sequences, Sequence) or not sequences:
            raise ValueError(f"sequences must be a non-empty list of sequences of token ids, got {sequences!r}")
        out = []
        for k, s in enumerate(sequences):
            a = np.asarray(s)
            if a.ndim != 1 or a.size < 3 or a.dtype.kind not in "iu" or a.min() < 0 or a.max() >= self.vocab_size:
                raise ValueError(
                    f"sequences[{k}] must be a list of at least 3 token ids (<s>, a word, </s>) "
                    f"from 0 to {self.vocab_size - 1}, got {s!r}"
                )
            out.append(a)
        return out

    def _directions(self, seqs: list[np.ndarray]) -> dict:
        """For each direction: (input ids (T, B), target ids (T, B), mask (T, B))."""
        out = {}
        for direction in ("forward", "backward"):
            read = [s if direction == "forward" else s[::-1] for s in seqs]
            inputs, mask = pad_batch([r[:-1] for r in read], self.pad_id)
            targets, _ = pad_batch([r[1:] for r in read], self.pad_id)
            out[direction] = (inputs, targets, mask)
        return out

    def _run(self, direction: str, ids: np.ndarray) -> list[np.ndarray]:
        """The outputs ``(T, B, dim)`` of every layer of one direction, bottom first."""
        h = self.embedding[ids]
        outputs = []
        for lstm in self.lstms[direction]:
            h, _ = lstm.forward(h)
            outputs.append(h)
        return outputs

    # ------------------------------------------------------------------ training

    def loss_and_grads(self, sequences: Sequence[Sequence[int]]) -> tuple[float, dict]:
        """The loss on a batch of sequences and its gradient with respect to every parameter.

        The loss is the mean of the forward and backward models' mean
        cross-entropies over the batch's real tokens (nats per token). The
        gradients are keyed like :meth:`parameters`. This is the function
        :func:`rnnmem.train.fit` calls.

        >>> model = BiLM(10, dim=4, seed=0)
        >>> loss, grads = model.loss_and_grads([[1, 5, 6, 2], [1, 7, 2]])
        >>> round(loss, 4), grads["embedding"].shape
        (2.3114, (10, 4))
        """
        loss, grads, _ = self._loss(self._check_sequences(sequences), with_grads=True)
        return loss, grads

    def loss(self, sequences: Sequence[Sequence[int]]) -> tuple[float, float]:
        """The forward and the backward model's mean cross-entropy (nats per token) on ``sequences``."""
        _, _, per_direction = self._loss(self._check_sequences(sequences), with_grads=False)
        return per_direction["forward"], per_direction["backward"]

    def _loss(self, seqs: list[np.ndarray], with_grads: bool) -> tuple[float, dict, dict]:
        D = self.dim
        grads = {k: np.zeros_like(v) for k, v in self.parameters().items()} if with_grads else {}
        per_direction = {}
        for direction, (inputs, targets, mask) in self._directions(seqs).items():
            outputs = self._run(direction, inputs)
            top = outputs[-1].reshape(-1, D)
            logits = top @ self.softmax_weight.T + self.softmax_bias
            loss, d_logits = softmax_cross_entropy(logits, targets.ravel(), mask.ravel())
            per_direction[direction] = loss
            if not with_grads:
                continue
            d_logits *= 0.5  # the loss is the mean of two directions
            grads["softmax.weight"] += d_logits.T @ top
            grads["softmax.bias"] += d_logits.sum(axis=0)
            d_h = (d_logits @ self.softmax_weight).reshape(outputs[-1].shape)
            for layer in range(self.num_layers - 1, -1, -1):
                g = self.lstms[direction][layer].backward(d_h)
                for key, attr in _KEYS.items():
                    grads[f"{direction}.{layer}.{attr}"] += g[key]
                d_h = g["x"]
            np.add.at(grads["embedding"], inputs.ravel(), d_h.reshape(-1, D))
        loss = 0.5 * (per_direction["forward"] + per_direction["backward"])
        return loss, grads, per_direction

    # ------------------------------------------------------------------ representations

    def static_vector(self, token_id: int) -> np.ndarray:
        """The token's row of the table: the same whatever sentence it is in (a copy)."""
        if (
            isinstance(token_id, bool)
            or not isinstance(token_id, (int, np.integer))
            or not 0 <= token_id < self.vocab_size
        ):
            raise ValueError(f"token_id must be a whole number from 0 to {self.vocab_size - 1}, got {token_id!r}")
        return self.embedding[int(token_id)].copy()

    def layers_batch(self, sequences: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """:meth:`layers` of several sequences at once (one padded pass per direction)."""
        seqs = self._check_sequences(sequences)
        dirs = self._directions(seqs)
        forward = self._run("forward", dirs["forward"][0])
        backward = self._run("backward", dirs["backward"][0])
        out = []
        for b, s in enumerate(seqs):
            n = s.size - 2  # the words s_1 .. s_n
            k = np.arange(1, n + 1)
            static = self.embedding[s[1 : n + 1]]
            stack = [np.concatenate([static, static], axis=1)]
            for layer in range(self.num_layers):
                # forward input index of s_k is k; backward input index is n + 1 - k
                stack.append(np.concatenate([forward[layer][k, b], backward[layer][n + 1 - k, b]], axis=1))
            out.append(np.stack(stack))
        return out

    def layers(self, sequence: Sequence[int]) -> np.ndarray:
        """Every layer's representation of every word of one sequence: ``(L + 1, n, 2 * dim)``.

        Layer 0 is ``[row; row]`` of the token table; layer ``j`` is the
        forward state (first ``dim`` entries) followed by the backward state
        (last ``dim``) of LSTM layer ``j``. The ``n`` words are the tokens
        between ``<s>`` and ``</s>``.
        """
        return self.layers_batch([sequence])[0]

    def layers_at(self, sequences: Sequence[Sequence[int]], positions: Sequence[int]) -> np.ndarray:
        """The layers of one word in each sequence: ``(L + 1, N, 2 * dim)``.

        ``positions[i]`` is the index of the word among the words of
        ``sequences[i]`` (0 for the word after ``<s>``), as
        :attr:`rnnmem.corpus.Sentence.position` gives it. The result has the
        layers first, ready for :func:`scalar_mix`.
        """
        seqs = self._check_sequences(sequences)
        positions = list(positions) if isinstance(positions, Sequence) else positions
        if not isinstance(positions, list) or len(positions) != len(seqs):
            raise ValueError(f"positions must give one word index per sequence ({len(seqs)}), got {positions!r}")
        n = np.array([s.size - 2 for s in seqs])
        for i, p in enumerate(positions):
            if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not 0 <= p < n[i]:
                raise ValueError(f"positions[{i}] must be a word index from 0 to {n[i] - 1}, got {p!r}")
        p = np.array(positions, dtype=np.int64)
        b = np.arange(len(seqs))
        forward = self._run("forward", pad_batch([s[:-1] for s in seqs], self.pad_id)[0])
        backward = self._run("backward", pad_batch([s[::-1][:-1] for s in seqs], self.pad_id)[0])
        static = self.embedding[np.array([s[q + 1] for s, q in zip(seqs, p)])]
        stack = [np.concatenate([static, static], axis=1)]
        for layer in range(self.num_layers):
            # word p is forward input p + 1 and backward input n - p (as in layers_batch)
            stack.append(np.concatenate([forward[layer][p + 1, b], backward[layer][n - p, b]], axis=1))
        return np.stack(stack)

    def bag_of_rows(self, sequences: Sequence[Sequence[int]], positions: Sequence[int], window: int) -> np.ndarray:
        """The mean of the table's rows over the words within ``window`` of one word per sequence: ``(N, dim)``.

        ``positions[i]`` indexes the words of ``sequences[i]`` as in
        :meth:`layers_at`; the bag holds the words ``positions[i] - window``
        to ``positions[i] + window`` that exist (the boundaries ``<s>`` and
        ``</s>`` excluded), the word itself included. It is context without
        order or memory: a cue inside the window counts, one outside does not.

        >>> model = BiLM(10, dim=2, seed=0)
        >>> bag = model.bag_of_rows([[1, 4, 5, 6, 2]], [0], window=1)
        >>> bool(np.allclose(bag[0], model.embedding[[4, 5]].mean(axis=0)))
        True
        """
        seqs = self._check_sequences(sequences)
        window = int(_check_count("window", window))
        positions = list(positions) if isinstance(positions, Sequence) else positions
        if not isinstance(positions, list) or len(positions) != len(seqs):
            raise ValueError(f"positions must give one word index per sequence ({len(seqs)}), got {positions!r}")
        out = np.empty((len(seqs), self.dim))
        for i, (s, p) in enumerate(zip(seqs, positions)):
            n = s.size - 2
            if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not 0 <= p < n:
                raise ValueError(f"positions[{i}] must be a word index from 0 to {n - 1}, got {p!r}")
            words = s[1 + max(0, p - window) : 1 + min(n, p + window + 1)]
            out[i] = self.embedding[words].mean(axis=0)
        return out

    def contextual(self, sequence: Sequence[int], weights: Any = None, gamma: float = 1.0) -> np.ndarray:
        """ELMo's vector of every word of one sequence, ``(n, 2 * dim)``: :func:`scalar_mix` of :meth:`layers`."""
        return scalar_mix(self.layers(sequence), weights, gamma)


def _check_count(name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class Recipe:
    """How the book trains a :class:`BiLM`: declared once, shared by the chapter, its builders and tests.

    ``dim`` and ``num_layers`` shape the model; :meth:`fit` trains it with
    :func:`rnnmem.train.fit` for ``steps`` Adam steps on minibatches of
    ``batch_size`` sequences at learning rate ``lr``, clipping the gradient to
    global norm ``max_norm``. The seed that draws the weights and the
    minibatches is an argument of :meth:`model` and :meth:`fit`, not of the
    recipe, so one recipe serves every seed.

    >>> recipe = Recipe(dim=4, num_layers=1, steps=3, batch_size=2)
    >>> model, history = recipe.fit([[1, 3, 4, 2], [1, 4, 3, 2]], vocab_size=5, seed=0)
    >>> model, history.steps
    (BiLM(vocab_size=5, dim=4, num_layers=1), 3)
    >>> Recipe(steps=0)
    Traceback (most recent call last):
    ...
    ValueError: steps must be a whole number >= 1, got 0
    """

    dim: int = 16
    num_layers: int = 2
    steps: int = 200
    batch_size: int = 32
    lr: float = 0.02
    max_norm: float = 1.0

    def __post_init__(self) -> None:
        for name in ("dim", "num_layers", "steps", "batch_size"):
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
        check_positive("lr", self.lr)
        check_positive("max_norm", self.max_norm)

    def model(self, vocab_size: int, seed: int = 0) -> BiLM:
        """An untrained :class:`BiLM` of this recipe's shape, its weights drawn with ``seed``."""
        return BiLM(vocab_size, dim=self.dim, num_layers=self.num_layers, seed=seed)

    def fit(self, sequences: Sequence[Sequence[int]], vocab_size: int, seed: int = 0) -> tuple[BiLM, History]:
        """A :class:`BiLM` drawn with ``seed`` and trained on ``sequences``; with the :class:`History`.

        The same seed draws the weights (:meth:`model`) and the order of the
        minibatches, so the same sequences and seed give the same model.
        """
        model = self.model(vocab_size, seed)
        history = fit(
            model.parameters(),
            model.loss_and_grads,
            sequences,
            steps=self.steps,
            batch_size=self.batch_size,
            lr=self.lr,
            max_norm=self.max_norm,
            seed=seed,
        )
        return model, history

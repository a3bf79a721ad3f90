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
:meth:`Recipe.fit` trains one model; :meth:`Recipe.fit_many` trains one
model per seed at once, their parameters stacked on a leading member axis so
that every step of every member is one batched product, in float64 or
float32, and keeps copies of every member at the steps it is asked for.

ELMo's context-free layer is computed from the characters of the word; here
a plain table of rows stands in for it. Sequences in a batch are padded at
the end with ``pad_id``, so padding never enters a real position's state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._recurrent import PARAMETER_NAMES, WEIGHT_NAMES
from .checks import check_dtype, check_finite, check_nonnegative_int, check_positive, check_positive_int, check_seed
from .lstm import LSTM
from .train import Adam, History, fit, minibatches, pad_batch, softmax_cross_entropy

__all__ = ["BiLM", "Recipe", "scalar_mix", "cosine_matrix", "mean_cosines"]

_KEYS = dict(zip(PARAMETER_NAMES, WEIGHT_NAMES))
"""torch's parameter name -> the model's attribute (:data:`rnnmem._recurrent.PARAMETER_NAMES`)."""


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


# ---------------------------------------------------------------------- many BiLMs at once


def _stacked_weights(params: dict, direction: str, layer: int) -> np.ndarray:
    """One layer's ``[W_ih, b_ih + b_hh, W_hh]`` of every member, rows reordered o|i|f|g: ``(E, 4H, K)``."""
    W = np.concatenate(
        [
            params[f"{direction}.{layer}.W_ih"],
            (params[f"{direction}.{layer}.b_ih"] + params[f"{direction}.{layer}.b_hh"])[:, :, None],
            params[f"{direction}.{layer}.W_hh"],
        ],
        axis=2,
    )
    H = W.shape[1] // 4
    return W[:, np.r_[3 * H : 4 * H, 0 : 2 * H, 2 * H : 3 * H]]


def _lanes_forward(W: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, dict]:
    r"""One LSTM layer for ``M`` lanes at once, from zero state: the equations of :func:`rnnmem.lstm.step`.

    ``W`` is ``(M, 4H, K)``, each lane's ``[W_ih, b_ih + b_hh, W_hh]`` with
    rows o|i|f|g; ``x`` is ``(T, M, D, B)``, feature-major. Step ``t`` is one
    batched product of ``W`` with ``[x_t; 1; h_{t-1}]`` ``(M, K, B)``; the
    sigmoid gates are :math:`\sigma(z) = (1 + \tanh(z/2))/2`, so one ``tanh``
    activates all four. Returns the outputs ``(T, M, H, B)`` and what
    :func:`_lanes_backward` needs.
    """
    T, M, D, B = x.shape
    H = W.shape[1] // 4
    K = D + 1 + H
    dtype = W.dtype
    half = dtype.type(0.5)
    scaled = W.copy()
    scaled[:, : 3 * H] *= half
    rows = np.empty((T + 1, M, K, B), dtype=dtype)  # rows[t] = [x_t; 1; h_{t-1}]
    rows[:T, :, :D] = x
    rows[:, :, D] = 1.0
    rows[0, :, D + 1 :] = 0.0
    gates = np.empty((T, M, 4 * H, B), dtype=dtype)  # o, i, f, g after activation
    cells = np.empty((T + 1, M, H, B), dtype=dtype)
    cells[0] = 0.0
    tanh_cell = np.empty((T, M, H, B), dtype=dtype)
    ig = np.empty((M, H, B), dtype=dtype)
    multiply, add, tanh, matmul = np.multiply, np.add, np.tanh, np.matmul
    for t in range(T):
        z = gates[t]
        matmul(scaled, rows[t], z)
        tanh(z, z)  # tanh(z/2) for o, i, f; tanh(z) for g
        sigmoids = z[:, : 3 * H]
        multiply(sigmoids, half, sigmoids)
        add(sigmoids, half, sigmoids)
        multiply(z[:, H : 2 * H], z[:, 3 * H :], ig)
        c = cells[t + 1]
        multiply(z[:, 2 * H : 3 * H], cells[t], c)
        add(c, ig, c)
        tanh(c, tanh_cell[t])
        multiply(z[:, :H], tanh_cell[t], rows[t + 1, :, D + 1 :])
    cache = {"W": W, "rows": rows, "gates": gates, "cells": cells, "tanh_cell": tanh_cell}
    return rows[1:, :, D + 1 :], cache


def _lanes_backward(cache: dict, dy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact backpropagation through :func:`_lanes_forward`: ``dy`` ``(T, M, H, B)`` -> (d\ ``W``, d\ ``x``).

    A gate's pre-activation gradient is :math:`\partial L/\partial h_t` (o) or
    :math:`\partial L/\partial c_t` (i, f, g) times a coefficient known from
    the forward pass, :math:`\tanh(c_t)\, o(1-o)`, :math:`g\, i(1-i)`,
    :math:`c_{t-1} f(1-f)`, :math:`i(1-g^2)`; and :math:`\partial L/\partial c_t`
    gains :math:`\partial L/\partial h_t\, o(1-\tanh^2 c_t)`. The coefficients of
    all steps are computed at once; the loop over the steps runs the recursion.
    """
    W, rows, gates, cells, tanh_cell = (cache[k] for k in ("W", "rows", "gates", "cells", "tanh_cell"))
    T, M, H, B = dy.shape
    K = W.shape[2]
    D = K - 1 - H
    dtype = W.dtype
    one = dtype.type(1.0)
    o, i, f, g = (gates[:, :, k * H : (k + 1) * H] for k in range(4))
    coef = np.empty((T, M, 4 * H, B), dtype=dtype)
    np.subtract(one, gates[:, :, : 3 * H], out=coef[:, :, : 3 * H])
    np.multiply(coef[:, :, : 3 * H], gates[:, :, : 3 * H], out=coef[:, :, : 3 * H])  # o(1-o), i(1-i), f(1-f)
    np.multiply(coef[:, :, :H], tanh_cell, out=coef[:, :, :H])
    np.multiply(coef[:, :, H : 2 * H], g, out=coef[:, :, H : 2 * H])
    np.multiply(coef[:, :, 2 * H : 3 * H], cells[:-1], out=coef[:, :, 2 * H : 3 * H])
    np.multiply(g, g, out=coef[:, :, 3 * H :])
    np.subtract(one, coef[:, :, 3 * H :], out=coef[:, :, 3 * H :])
    np.multiply(coef[:, :, 3 * H :], i, out=coef[:, :, 3 * H :])
    to_cell = np.multiply(tanh_cell, tanh_cell)
    np.subtract(one, to_cell, out=to_cell)
    np.multiply(to_cell, o, out=to_cell)
    W_hT = np.ascontiguousarray(W[:, :, D + 1 :].transpose(0, 2, 1))  # (M, H, 4H)
    W_xT = np.ascontiguousarray(W[:, :, :D].transpose(0, 2, 1))  # (M, D, 4H)
    d_recurrent = np.zeros((M, H, B), dtype=dtype)
    d_cell = np.zeros((M, H, B), dtype=dtype)
    d_hidden = np.empty((M, H, B), dtype=dtype)
    scratch = np.empty((M, H, B), dtype=dtype)
    dW = np.zeros((M, 4 * H, K), dtype=dtype)
    dW_t = np.empty((M, 4 * H, K), dtype=dtype)
    dx = np.empty((T, M, D, B), dtype=dtype)
    by_gate = coef.reshape(T, M, 4, H, B)
    multiply, add, matmul = np.multiply, np.add, np.matmul
    for t in range(T - 1, -1, -1):
        add(dy[t], d_recurrent, d_hidden)
        multiply(coef[t, :, :H], d_hidden, coef[t, :, :H])
        multiply(to_cell[t], d_hidden, scratch)
        add(d_cell, scratch, d_cell)
        multiply(by_gate[t, :, 1:], d_cell[:, None], by_gate[t, :, 1:])
        multiply(d_cell, f[t], d_cell)
        matmul(W_hT, coef[t], d_recurrent)
        matmul(W_xT, coef[t], dx[t])
        matmul(coef[t], rows[t].transpose(0, 2, 1), dW_t)
        add(dW, dW_t, dW)
    return dW, dx


class _Stack:
    """``E`` BiLMs of one shape, every parameter stacked on a leading member axis, in one ``dtype``.

    The parameters have :meth:`BiLM.parameters`' names, each with the member
    first (``embedding`` is ``(E, V, dim)``). The forward and backward LSTMs of
    every member run as ``2 E`` lanes of one batched pass per layer.
    """

    def __init__(self, models: Sequence[BiLM], dtype: Any) -> None:
        first = models[0]
        self.vocab_size, self.dim, self.num_layers, self.pad_id = (
            first.vocab_size,
            first.dim,
            first.num_layers,
            first.pad_id,
        )
        self.dtype = check_dtype("dtype", dtype)
        self.params = {k: np.stack([m.parameters()[k] for m in models]).astype(self.dtype) for k in first.parameters()}

    @property
    def size(self) -> int:
        return int(self.params["embedding"].shape[0])

    def member(self, e: int) -> BiLM:
        """Member ``e`` as a :class:`BiLM` of its own, in float64 (a copy)."""
        model = BiLM(self.vocab_size, dim=self.dim, num_layers=self.num_layers, pad_id=self.pad_id, seed=0)
        for k, p in model.parameters().items():
            p[...] = self.params[k][e]
        return model

    def loss_and_grads(self, batches: Sequence[Sequence[np.ndarray]]) -> tuple[np.ndarray, dict]:
        """Each member's :meth:`BiLM.loss_and_grads` on its own batch: losses ``(E,)`` and stacked gradients.

        ``batches[e]`` is member ``e``'s list of sequences; every member's
        batch holds the same number of sequences.
        """
        longest = max(len(s) for b in batches for s in b)
        seq = np.full((self.size, len(batches[0]), longest), self.pad_id, dtype=np.int64)
        for e, batch in enumerate(batches):
            for b, s in enumerate(batch):
                seq[e, b, : len(s)] = s
        lengths = np.array([[len(s) for s in batch] for batch in batches])
        return self.padded_loss_and_grads(seq, lengths)

    def padded_loss_and_grads(self, seq: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, dict]:
        """:meth:`loss_and_grads` of sequences already padded: ids ``(E, B, T + 1)``, ``lengths`` ``(E, B)``."""
        E, V, D, L, pad = self.size, self.vocab_size, self.dim, self.num_layers, self.pad_id
        params, dtype = self.params, self.dtype
        T = seq.shape[2] - 1
        seq = seq.transpose(0, 2, 1)  # (E, T + 1, B)
        step = np.arange(T + 1)[None, :, None]
        length = lengths[:, None, :]
        real = step < length
        # The backward model reads each sequence reversed, then padded at the end (as BiLM._directions).
        reverse = np.where(real, np.take_along_axis(seq, np.where(real, length - 1 - step, 0), axis=1), pad)
        both = np.stack([seq, reverse])  # (2, E, T + 1, B): lane d * E + e
        B = seq.shape[2]
        ids = both[:, :, :-1].transpose(2, 0, 1, 3).reshape(T, 2 * E, B)
        targets = both[:, :, 1:].transpose(2, 0, 1, 3).reshape(T, 2 * E, B)
        mask = np.broadcast_to(real[None, :, 1:], (2, E, T, B)).transpose(2, 0, 1, 3).reshape(T, 2 * E, B)
        member = np.tile(np.arange(E), 2)  # the member of each lane
        h = params["embedding"][member[None, :, None], ids].transpose(0, 1, 3, 2)  # (T, 2E, D, B)
        caches = []
        for layer in range(L):
            W = np.concatenate([_stacked_weights(params, d, layer) for d in ("forward", "backward")])
            h, cache = _lanes_forward(W, h)
            caches.append(cache)
        weight = params["softmax.weight"][member]  # (2E, V, D)
        logits = np.matmul(weight, h)  # (T, 2E, V, B)
        logits += params["softmax.bias"][member][None, :, :, None]
        logits -= logits.max(axis=2, keepdims=True)
        p = np.exp(logits)
        norm = p.sum(axis=2)
        chosen = np.take_along_axis(logits, targets[:, :, None, :], axis=2)[:, :, 0]
        count = mask.sum(axis=(0, 2))  # real tokens per lane
        per_lane = ((np.log(norm) - chosen) * mask).sum(axis=(0, 2), dtype=np.float64) / count
        losses = 0.5 * (per_lane[:E] + per_lane[E:])  # the mean of the two directions
        p /= norm[:, :, None, :]
        picked = np.take_along_axis(p, targets[:, :, None, :], axis=2)
        np.put_along_axis(p, targets[:, :, None, :], picked - 1.0, axis=2)
        p *= (mask / (2.0 * count)[None, :, None]).astype(dtype)[:, :, None, :]  # d loss / d logits
        d_weight = np.matmul(p, h.transpose(0, 1, 3, 2)).sum(axis=0)  # (2E, V, D)
        d_bias = p.sum(axis=(0, 3))
        grads = {"softmax.weight": d_weight[:E] + d_weight[E:], "softmax.bias": d_bias[:E] + d_bias[E:]}
        dh = np.matmul(weight.transpose(0, 2, 1), p)  # (T, 2E, D, B)
        H = D
        for layer in range(L - 1, -1, -1):
            dW, dh = _lanes_backward(caches[layer], dh)
            for k, direction in enumerate(("forward", "backward")):
                part = dW[k * E : (k + 1) * E]  # rows o|i|f|g, back to i|f|g|o
                torch = np.concatenate([part[:, H : 3 * H], part[:, 3 * H :], part[:, :H]], axis=1)
                grads[f"{direction}.{layer}.W_ih"] = torch[:, :, :D]
                grads[f"{direction}.{layer}.W_hh"] = torch[:, :, D + 1 :]
                grads[f"{direction}.{layer}.b_ih"] = torch[:, :, D].copy()
                grads[f"{direction}.{layer}.b_hh"] = torch[:, :, D].copy()
        rows = (ids + V * member[None, :, None])[:, :, None, :] * D + np.arange(D)[None, None, :, None]
        d_embedding = np.bincount(rows.ravel(), weights=dh.ravel(), minlength=E * V * D)  # sums rows by token
        grads["embedding"] = d_embedding.reshape(E, V, D).astype(dtype)
        return losses, grads


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

    ``steps`` is 5,000: long enough for the book's language models to learn to
    read a cue a few words from the noun (their loss on the noun falls well
    below that of a model that ignores the cue, :func:`rnnmem.probe.slot_loss`),
    which 200 steps are not. :meth:`fit_many` trains several seeds at once
    and keeps the models at chosen steps of the same run.

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
    steps: int = 5000
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

    def fit_many(
        self,
        sequences: Sequence[Sequence[Sequence[int]]],
        vocab_size: int,
        seeds: Sequence[int],
        *,
        checkpoints: Sequence[int] = (),
        dtype: Any = np.float64,
    ) -> tuple[list[dict[int, BiLM]], list[History]]:
        """One :meth:`fit` per seed, all trained at once; with copies of each model at ``checkpoints``.

        Member ``k`` is drawn with ``seeds[k]`` and trained on
        ``sequences[k]``, with the minibatches, Adam steps and clipping (by its
        own gradient's global norm) that :meth:`fit` gives that seed: in
        float64 it is :meth:`fit`'s model up to the rounding of a differently
        ordered sum. The parameters of all members are stacked, so one step of
        every member is one batched pass; ``dtype`` float32 halves the memory
        traffic and takes about half the time.

        Returns ``(models, histories)``: ``models[k][step]`` is member ``k``
        after ``step`` updates, as a float64 :class:`BiLM`, for each ``step``
        of ``checkpoints`` (0 is the untrained model; each at most
        :attr:`steps`); ``histories[k]`` its :class:`History`. Every member's
        sequences must be as many, so that the members' minibatches are the same
        size at every step.

        >>> recipe = Recipe(dim=4, num_layers=1, steps=3, batch_size=2)
        >>> data = [[[1, 3, 4, 2], [1, 4, 3, 2]], [[1, 4, 2], [1, 3, 3, 4, 2]]]
        >>> models, histories = recipe.fit_many(data, 5, seeds=[0, 1], checkpoints=[0, 3])
        >>> sorted(models[1]), histories[1].steps
        ([0, 3], 3)
        >>> alone, _ = recipe.fit(data[1], 5, seed=1)
        >>> bool(np.allclose(models[1][3].embedding, alone.embedding, atol=1e-12))
        True
        """
        if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or not seeds:
            raise ValueError(f"seeds must be a non-empty list of whole numbers >= 0, got {seeds!r}")
        seeds = [check_nonnegative_int(f"seeds[{k}]", s) for k, s in enumerate(seeds)]
        if isinstance(sequences, (str, bytes)) or not isinstance(sequences, Sequence) or len(sequences) != len(seeds):
            raise ValueError(f"sequences must hold one list of sequences per seed ({len(seeds)}), got {sequences!r}")
        if isinstance(checkpoints, (str, bytes)) or not isinstance(checkpoints, Sequence):
            raise ValueError(f"checkpoints must be a list of step counts, got {checkpoints!r}")
        marks = [check_nonnegative_int(f"checkpoints[{k}]", c) for k, c in enumerate(checkpoints)]
        for k, c in enumerate(marks):
            if c > self.steps:
                raise ValueError(f"checkpoints[{k}] must be at most steps = {self.steps}, got {c}")
        models = [self.model(vocab_size, s) for s in seeds]
        data = [[np.asarray(x) for x in models[0]._check_sequences(list(seqs))] for seqs in sequences]
        if len({len(d) for d in data}) != 1:
            raise ValueError(
                f"sequences must hold as many sequences for every seed (one minibatch size per step), "
                f"got {[len(d) for d in data]}"
            )
        stack = _Stack(models, dtype)
        E = stack.size
        longest = max(len(x) for d in data for x in d)
        padded = np.full((E, len(data[0]), longest), stack.pad_id, dtype=np.int64)
        for e, d in enumerate(data):
            for n, x in enumerate(d):
                padded[e, n, : len(x)] = x
        lengths = np.array([[len(x) for x in d] for d in data])
        batches = [minibatches(len(d), self.batch_size, s) for d, s in zip(data, seeds)]
        opt = Adam(stack.params, lr=self.lr)
        histories = [History() for _ in seeds]
        kept: list[dict[int, BiLM]] = [{} for _ in seeds]
        member = np.arange(E)[:, None]
        for step in range(self.steps + 1):
            if step in marks:
                for e in range(E):
                    kept[e][step] = stack.member(e)
            if step == self.steps:
                break
            chosen = np.stack([next(b) for b in batches])  # (E, B): each member's minibatch
            losses, grads = stack.padded_loss_and_grads(padded[member, chosen], lengths[member, chosen])
            if not np.isfinite(losses).all():
                bad = int(np.argmin(np.isfinite(losses)))
                raise ValueError(f"the loss of seed {seeds[bad]} is not finite, {losses[bad]}, at step {step}")
            norms = np.sqrt(sum((g.astype(np.float64) ** 2).reshape(E, -1).sum(axis=1) for g in grads.values()))
            scale = np.where(norms > self.max_norm, self.max_norm / np.maximum(norms, 1e-300), 1.0)
            for g in grads.values():
                g *= scale.astype(g.dtype).reshape((E,) + (1,) * (g.ndim - 1))
            opt.step(grads)
            for e, history in enumerate(histories):
                history.losses.append(float(losses[e]))
                history.grad_norms.append(float(norms[e]))
                history.clipped += int(norms[e] > self.max_norm)
        return kept, histories

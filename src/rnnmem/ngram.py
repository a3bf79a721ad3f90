r"""An interpolated modified Kneser–Ney character model: the counting model a network has to beat.

**The model** (Chen and Goodman 1999, their "interpolated modified
Kneser–Ney"; Kneser and Ney 1995 for the continuation counts). An order
:math:`n` model predicts symbol :math:`w` from the :math:`n - 1` symbols
before it, :math:`h`. Each order :math:`k = 1, \dots, n` has its counts
:math:`c_k(g)` of :math:`k`-grams :math:`g`:

* the highest order counts occurrences: :math:`c_n(g)` is the number of
  times :math:`g` occurs in the training text;
* a lower order :math:`k < n` counts **continuations**:
  :math:`c_k(g) = N_{1+}(\cdot\, g)`, the number of distinct symbols
  :math:`u` such that :math:`u g` occurs in the training text. A symbol that
  follows many different contexts gets a large lower-order count; one that
  occurs often but always after the same context (the ``f`` of ``self``),
  a small one.

From the counts of order :math:`k`, its **count-of-counts**
:math:`n_r` (how many :math:`k`-grams have count exactly :math:`r`,
:math:`r = 1, \dots, 4`) give three discounts (:func:`discounts`):

.. math::

    Y = \frac{n_1}{n_1 + 2 n_2}, \qquad
    D_1 = 1 - 2Y\frac{n_2}{n_1}, \quad
    D_2 = 2 - 3Y\frac{n_3}{n_2}, \quad
    D_{3+} = 3 - 4Y\frac{n_4}{n_3} ,

and :math:`D(c)` is :math:`0, D_1, D_2, D_{3+}` for :math:`c = 0, 1, 2,
\ge 3`. The probability of order :math:`k`, with :math:`h` the last
:math:`k - 1` symbols of the context and :math:`h'` its last :math:`k - 2`, is

.. math::

    p_k(w \mid h) = \frac{\max(c_k(hw) - D(c_k(hw)), 0)}{c_k(h\,\cdot)}
        + \gamma_k(h)\, p_{k-1}(w \mid h'), \qquad
    \gamma_k(h) = \frac{D_1 N_1(h\,\cdot) + D_2 N_2(h\,\cdot) + D_{3+} N_{3+}(h\,\cdot)}{c_k(h\,\cdot)} ,

with :math:`c_k(h\,\cdot) = \sum_w c_k(hw)` and :math:`N_r(h\,\cdot)` the
number of symbols :math:`w` with :math:`c_k(hw) = r` (:math:`\ge 3` for
:math:`N_{3+}`). A context never counted at order :math:`k`
(:math:`c_k(h\,\cdot) = 0`) passes the lower order's distribution through:
:math:`p_k(w \mid h) = p_{k-1}(w \mid h')`. The recursion ends in the
uniform distribution, :math:`p_0(w) = 1/V` over the
:data:`rnnmem.charlm.VOCAB_SIZE` symbols, so no symbol has probability zero
and every distribution sums to one.

Where the formula is undefined (a count-of-counts :math:`n_r = 0`) or gives
a discount outside :math:`0 < D_r < r`, which happens on tiny texts, that
order takes the fixed discounts :data:`FALLBACK_DISCOUNTS`, as KenLM does
when asked to. On a large text that is typically the lowest order alone:
few symbols follow only one or two different symbols, so its :math:`n_1`
and :math:`n_2` are zero.

**Scoring** (:meth:`KneserNey.nats`): the mean cross-entropy, in nats, of
every symbol of a text but the first, ``ids[1:]``, each predicted from the
symbols before it, at most :math:`n - 1`: the first :math:`n - 2` targets
are predicted from the shorter contexts they have, by the same recursion
stopped at the order their context allows. These are the symbols
:func:`rnnmem.charlm.ngram_nats` and :meth:`rnnmem.charlm.CharRNN.nats`
predict, so their losses compare.

**Counting is vectorized**: each :math:`k`-gram is one int64,
:math:`\sum_j g_j V^{k-1-j}` (base :math:`V`), counted with
:func:`numpy.unique` and looked up with :func:`numpy.searchsorted`; a text
is scored one order at a time, never one symbol at a time.

**The order** (:func:`choose_order`) is chosen on held-out text cut from the
training text: the last :data:`HELD_OUT_SHARE` of it. Each order of
:data:`ORDERS` is fitted on the rest and scored on that tail; the order with
the lowest cross-entropy is then fitted again on the whole training text.
The validation text plays no part in the choice.

Bad input raises :class:`ValueError` naming the argument, its value and what
is allowed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .charlm import VOCAB_SIZE, decode, encode, sample_next
from .checks import check_positive, check_positive_int, check_seed

__all__ = [
    "ORDERS",
    "HELD_OUT_SHARE",
    "MAX_ORDER",
    "FALLBACK_DISCOUNTS",
    "count_of_counts",
    "discounts",
    "KneserNey",
    "OrderChoice",
    "choose_order",
]

ORDERS = (3, 4, 5, 6, 7)
"""The orders :func:`choose_order` tries, fixed before any was scored."""

HELD_OUT_SHARE = 0.1
"""The share of the training text, at its end, held out to choose the order (fixed before any was scored)."""

FALLBACK_DISCOUNTS = (0.5, 1.0, 1.5)
"""The discounts of an order whose count-of-counts do not give valid ones (KenLM's ``--discount_fallback``)."""

MAX_ORDER = 9
"""The highest order a model may have: :math:`97^9 < 2^{63}`, so a 9-gram of the book's symbols fits one int64."""


def _text(name: str, ids: Any, vocab_size: int, shortest: int) -> np.ndarray:
    arr = np.asarray(ids)
    if arr.ndim != 1 or arr.size < shortest:
        raise ValueError(f"{name} must be one sequence of at least {shortest} ids, got shape {arr.shape}")
    if arr.dtype.kind not in "iu" or arr.min() < 0 or arr.max() >= vocab_size:
        raise ValueError(f"{name} must hold whole numbers from 0 to {vocab_size - 1} (symbol ids), got {ids!r}")
    return arr.astype(np.int64)


def _order(order: Any, vocab_size: int) -> int:
    k = check_positive_int("order", order)
    if k > MAX_ORDER or vocab_size**k >= 2**63:
        raise ValueError(
            f"order must be a whole number from 1 to {MAX_ORDER} with vocab_size**order < 2**63, got {order!r}"
        )
    return k


def _codes(ids: np.ndarray, k: int, vocab_size: int) -> np.ndarray:
    """The int64 code :math:`\\sum_j g_j V^{k-1-j}` of every ``k``-gram of ``ids``, by its starting position."""
    n = ids.size - k + 1
    out = np.zeros(max(n, 0), dtype=np.int64)
    for j in range(k):
        out = out * vocab_size + ids[j : j + n]
    return out


def _find(table: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of each query in the sorted ``table`` and whether it is there."""
    if table.size == 0:
        return np.zeros(queries.shape, dtype=np.int64), np.zeros(queries.shape, dtype=bool)
    idx = np.minimum(np.searchsorted(table, queries), table.size - 1)
    return idx, table[idx] == queries


def count_of_counts(counts: Any) -> tuple[int, int, int, int]:
    r"""``(n1, n2, n3, n4)``: how many of ``counts`` equal 1, 2, 3 and 4.

    The statistics :func:`discounts` reads, one set per order.

    >>> count_of_counts([1, 1, 2, 5, 3, 1])
    (3, 1, 1, 0)
    """
    c = np.asarray(counts)
    if c.ndim != 1 or (c.size and (c.dtype.kind not in "iu" or c.min() < 0)):
        raise ValueError(f"counts must be one sequence of whole numbers >= 0, got {counts!r}")
    found = np.bincount(c, minlength=5)
    return int(found[1]), int(found[2]), int(found[3]), int(found[4])


def discounts(n1: int, n2: int, n3: int, n4: int) -> tuple[float, float, float]:
    r"""``(D1, D2, D3+)`` of modified Kneser–Ney from the count-of-counts (Chen and Goodman 1999).

    :math:`Y = n_1/(n_1 + 2n_2)`, :math:`D_r = r - (r + 1)\,Y\,n_{r+1}/n_r`
    for :math:`r = 1, 2, 3`. The formula needs every :math:`n_r > 0` and
    gives discounts with :math:`0 < D_r < r` on text of any size; where it
    does not (a count-of-counts is zero, or a discount falls outside that
    range, as on a tiny text), the order gets :data:`FALLBACK_DISCOUNTS`,
    the fallback KenLM uses, so every discounted count stays positive and
    every context keeps some probability for the lower order.

    >>> [round(d, 4) for d in discounts(1, 1, 1, 1)]
    [0.3333, 1.0, 1.6667]
    >>> discounts(5, 0, 0, 0)
    (0.5, 1.0, 1.5)
    """
    n = [int(v) for v in (n1, n2, n3, n4)]
    for name, value in zip(("n1", "n2", "n3", "n4"), n):
        if value < 0:
            raise ValueError(f"{name} must be a count-of-counts, a whole number >= 0, got {value!r}")
    if min(n) == 0:
        return FALLBACK_DISCOUNTS
    y = n[0] / (n[0] + 2 * n[1])
    d = tuple(r - (r + 1) * y * n[r] / n[r - 1] for r in (1, 2, 3))
    if not all(0 < d[r - 1] < r for r in (1, 2, 3)):
        return FALLBACK_DISCOUNTS
    return d[0], d[1], d[2]


@dataclass(frozen=True)
class _Level:
    """One order's tables: sorted k-gram codes and discounted counts; sorted context codes, totals and gamma numerators."""

    grams: np.ndarray
    numerators: np.ndarray
    contexts: np.ndarray
    totals: np.ndarray
    backoff: np.ndarray
    count_of_counts: tuple[int, int, int, int]
    discounts: tuple[float, float, float]


def _level(grams: np.ndarray, counts: np.ndarray, vocab_size: int) -> _Level:
    """The tables of one order from its sorted unique k-gram codes and their (positive) counts."""
    n = count_of_counts(counts)
    d = discounts(*n)
    by_count = np.array([0.0, d[0], d[1], d[2]])[np.minimum(counts, 3)]
    contexts, first = np.unique(grams // vocab_size, return_index=True)
    totals = np.add.reduceat(counts, first) if grams.size else np.zeros(0, dtype=np.int64)
    backoff = np.add.reduceat(by_count, first) if grams.size else np.zeros(0)
    return _Level(
        grams=grams,
        numerators=np.maximum(counts - by_count, 0.0),
        contexts=contexts,
        totals=totals.astype(np.float64),
        backoff=backoff,
        count_of_counts=n,
        discounts=d,
    )


class KneserNey:
    r"""An interpolated modified Kneser–Ney model of ``order`` fitted on ``train_ids`` (the equations of :mod:`rnnmem.ngram`).

    ``KneserNey(train_ids, order, *, vocab_size=VOCAB_SIZE)`` counts the
    training text at once (:meth:`fit` is the same). ``discounts[k]`` and
    ``count_of_counts[k]`` hold order ``k``'s :math:`(D_1, D_2, D_{3+})` and
    :math:`(n_1, \dots, n_4)`, ``k = 1, ..., order``.

    >>> text = encode("she sells sea shells by the sea shore; "
    ...               "the shells she sells are sea shells")
    >>> model = KneserNey.fit(text, 3)
    >>> model.count_of_counts[3], [round(d, 3) for d in model.discounts[3]]
    ((14, 4, 4, 2), [0.636, 0.091, 1.727])
    >>> model.discounts[2] == FALLBACK_DISCOUNTS  # n4 = 0 at order 2
    True
    >>> p = model.probabilities(encode("se"))
    >>> round(float(p.sum()), 12), decode([int(p.argmax())])
    (1.0, 'l')
    >>> round(model.nats(encode("the shells")), 3)
    0.551
    """

    def __init__(self, train_ids: Any, order: int, *, vocab_size: int = VOCAB_SIZE) -> None:
        self.vocab_size = check_positive_int("vocab_size", vocab_size)
        self.order = _order(order, self.vocab_size)
        ids = _text("train_ids", train_ids, self.vocab_size, self.order)
        V, n = self.vocab_size, self.order
        grams, counts = np.unique(_codes(ids, n, V), return_counts=True)
        levels = {n: _level(grams, counts, V)}
        for k in range(n - 1, 0, -1):
            # continuation counts: distinct left extensions u of each k-gram g (the distinct (k+1)-grams u g)
            occurring = grams if k == n - 1 else np.unique(_codes(ids, k + 1, V))
            grams, counts = np.unique(occurring % V**k, return_counts=True)
            levels[k] = _level(grams, counts, V)
        self._levels = levels
        self.discounts = {k: lv.discounts for k, lv in sorted(levels.items())}
        self.count_of_counts = {k: lv.count_of_counts for k, lv in sorted(levels.items())}

    @classmethod
    def fit(cls, train_ids: Any, order: int, *, vocab_size: int = VOCAB_SIZE) -> KneserNey:
        """The model of ``order`` counted on ``train_ids`` (ids, :func:`rnnmem.charlm.encode`).

        >>> KneserNey.fit(encode("hello"), 2).order
        2
        """
        return cls(train_ids, order, vocab_size=vocab_size)

    def _step(self, k: int, context_codes: np.ndarray, gram_codes: np.ndarray, lower: np.ndarray) -> np.ndarray:
        """:math:`p_k` from :math:`p_{k-1}` (``lower``) for contexts and k-grams given by their codes."""
        lv = self._levels[k]
        ci, seen = _find(lv.contexts, context_codes)
        gi, counted = _find(lv.grams, gram_codes)
        numerator = np.where(counted, lv.numerators[gi], 0.0)
        total = np.where(seen, lv.totals[ci], 1.0)
        backoff = np.where(seen, lv.backoff[ci], 0.0)
        return np.where(seen, (numerator + backoff * lower) / total, lower)

    def probabilities(self, context: Any) -> np.ndarray:
        r"""The distribution :math:`p_n(\cdot \mid h)` over the ``vocab_size`` symbols after ``context`` (ids).

        Only the last ``order - 1`` symbols of ``context`` are read; a shorter
        context stops the recursion at the order it allows (an empty one: the
        lowest order, :math:`p_1`).

        >>> model = KneserNey.fit(encode("she sells sea shells"), 2)
        >>> p = model.probabilities(encode("sh"))
        >>> decode([int(p.argmax())]), round(float(p.sum()), 12)
        ('e', 1.0)
        """
        V = self.vocab_size
        h = np.asarray(context)
        h = _text("context", h, V, 0) if h.size else np.zeros(0, dtype=np.int64)
        h = h[max(h.size - (self.order - 1), 0) :]
        words = np.arange(V, dtype=np.int64)
        p = np.full(V, 1.0 / V)
        for k in range(1, h.size + 2):
            ctx = int(_codes(h[h.size - (k - 1) :], k - 1, V)[0]) if k > 1 else 0
            p = self._step(k, np.full(V, ctx, dtype=np.int64), ctx * V + words, p)
        return p

    def log_probabilities(self, ids: Any) -> np.ndarray:
        r""":math:`\log p(x_t \mid x_{t-n+1}, \dots, x_{t-1})` for every ``t`` from 1 (``ids[1:]``), fewer symbols of context at the start.

        >>> model = KneserNey.fit(encode("she sells sea shells"), 2)
        >>> model.log_probabilities(encode("sea")).shape
        (2,)
        """
        V = self.vocab_size
        x = _text("ids", ids, V, 2)
        N = x.size
        p = np.full(N - 1, 1.0 / V)  # position i predicts x[i + 1]
        for k in range(1, self.order + 1):
            last = max(k - 1, 1)  # the first target t with k - 1 symbols before it
            grams = _codes(x[last - k + 1 :], k, V)
            p[last - 1 :] = self._step(k, grams // V, grams, p[last - 1 :])
        return np.log(p)

    def nats(self, valid_ids: Any) -> float:
        r"""The mean cross-entropy, nats per symbol, of ``valid_ids[1:]``: :math:`-\frac{1}{N-1}\sum_{t\ge1} \log p(x_t \mid \cdot)`.

        Each symbol is predicted from at most ``order - 1`` symbols before it,
        the first few from the fewer they have (:meth:`log_probabilities`).

        >>> text = encode("she sells sea shells by the sea shore")
        >>> [round(KneserNey.fit(text, k).nats(text), 3) for k in (1, 2, 3)]
        [2.421, 1.225, 0.684]
        """
        return float(-self.log_probabilities(valid_ids).mean())

    def sample(self, length: int, prompt: str = "\n", seed: Any = 0, temperature: float = 1.0) -> str:
        r"""``length`` characters drawn one at a time after ``prompt``, each read back as context.

        Each draw is :func:`rnnmem.charlm.sample_next` on the logarithms of
        :meth:`probabilities` at ``temperature``, from one generator seeded
        with ``seed``: the draw the network's samples use. Returns the drawn
        text (without the prompt).

        >>> model = KneserNey.fit(encode("abcabcabc" * 20), 3)
        >>> model.sample(9, prompt="ab", temperature=0.5)
        'cabcabcab'
        """
        n = check_positive_int("length", length)
        tau = float(check_positive("temperature", temperature))
        rng = check_seed("seed", seed)
        if not isinstance(prompt, str) or not prompt:
            raise ValueError(f"prompt must be a non-empty string, got {prompt!r}")
        context = list(encode(prompt)[-(self.order - 1) :]) if self.order > 1 else []
        out = []
        for _ in range(n):
            p = self.probabilities(np.array(context, dtype=np.int64))
            v = sample_next(np.log(p), tau, rng)
            out.append(v)
            context = (context + [v])[-(self.order - 1) :] if self.order > 1 else []
        return decode(np.array(out, dtype=np.int64))


@dataclass(frozen=True)
class OrderChoice:
    """What :func:`choose_order` found.

    ``order``, the chosen order; ``held_out_nats[k]``, the held-out tail's
    nats per symbol under order ``k`` fitted on the rest of the training text;
    ``split``, how many symbols were fitted on (the tail is the rest);
    ``model``, the chosen order fitted again on the whole training text.
    """

    order: int
    held_out_nats: dict[int, float]
    split: int
    model: KneserNey = field(repr=False)


def choose_order(
    train_ids: Any,
    orders: Any = ORDERS,
    held_out_share: float = HELD_OUT_SHARE,
    *,
    vocab_size: int = VOCAB_SIZE,
) -> OrderChoice:
    r"""Choose the order on the last ``held_out_share`` of ``train_ids``, then fit it on all of ``train_ids``.

    The first :math:`N - \lceil sN \rceil` symbols are counted for each order of
    ``orders``; the tail is scored by :meth:`KneserNey.nats`; the order with
    the lowest held-out nats wins (the lowest such order on a tie).

    >>> text = encode("def f(x):\n    return x\n" * 30)
    >>> choice = choose_order(text, orders=(2, 3), held_out_share=0.2)
    >>> choice.order, choice.model.order, sorted(choice.held_out_nats)
    (3, 3, [2, 3])
    """
    V = check_positive_int("vocab_size", vocab_size)
    if isinstance(orders, (str, bytes)) or not isinstance(orders, (list, tuple, range)) or not orders:
        raise ValueError(f"orders must be a non-empty list of whole numbers from 1 to {MAX_ORDER}, got {orders!r}")
    ks = [_order(k, V) for k in orders]
    if len(set(ks)) != len(ks):
        raise ValueError(f"orders must not repeat an order, got {orders!r}")
    share = float(check_positive("held_out_share", held_out_share))
    if share >= 1:
        raise ValueError(f"held_out_share must lie strictly between 0 and 1, got {held_out_share!r}")
    ids = _text("train_ids", train_ids, V, 2)
    split = ids.size - math.ceil(share * ids.size)
    if split < max(ks) or ids.size - split < 2:
        raise ValueError(
            f"train_ids must be long enough that its head holds one {max(ks)}-gram and its held-out tail "
            f"at least 2 symbols, got {ids.size} symbols (held_out_share = {share!r})"
        )
    head, tail = ids[:split], ids[split:]
    held_out = {k: KneserNey(head, k, vocab_size=V).nats(tail) for k in ks}
    best = min(ks, key=lambda k: (held_out[k], k))
    return OrderChoice(order=best, held_out_nats=held_out, split=split, model=KneserNey(ids, best, vocab_size=V))

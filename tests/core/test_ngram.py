"""The modified Kneser–Ney model against a slow reference written from Chen and Goodman's equations."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from rnnmem import charlm, ngram
from rnnmem.ngram import KneserNey

# ---------------------------------------------------------------------------- the reference, one symbol at a time


def reference_discounts(n1, n2, n3, n4):
    """Chen and Goodman's discounts; KenLM's fallback (0.5, 1, 1.5) where it is undefined or out of range."""
    if 0 in (n1, n2, n3, n4):
        return (0.5, 1.0, 1.5)
    y = n1 / (n1 + 2 * n2)
    d1 = 1 - 2 * y * n2 / n1
    d2 = 2 - 3 * y * n3 / n2
    d3 = 3 - 4 * y * n4 / n3
    if not (0 < d1 < 1 and 0 < d2 < 2 and 0 < d3 < 3):
        return (0.5, 1.0, 1.5)
    return (d1, d2, d3)


class Reference:
    """Interpolated modified Kneser–Ney written plainly: dictionaries of tuples, a recursion per probability."""

    def __init__(self, text, order, vocab_size):
        text = [int(v) for v in text]
        self.order, self.V = order, vocab_size
        self.counts = {}
        occurring = {k: {tuple(text[i : i + k]) for i in range(len(text) - k + 1)} for k in range(1, order + 2)}
        # highest order: occurrences
        self.counts[order] = Counter(tuple(text[i : i + order]) for i in range(len(text) - order + 1))
        # lower orders: the number of distinct symbols u with u g in the text
        for k in range(1, order):
            cont: Counter = Counter()
            for gram in occurring[k + 1]:
                cont[gram[1:]] += 1
            self.counts[k] = cont
        self.discounts = {}
        for k, c in self.counts.items():
            values = list(c.values())
            n = [sum(1 for v in values if v == r) for r in (1, 2, 3, 4)]
            self.discounts[k] = reference_discounts(*n)

    def discount(self, k, c):
        if c == 0:
            return 0.0
        return self.discounts[k][min(c, 3) - 1]

    def p(self, k, history, w):
        if k == 0:
            return 1.0 / self.V
        h = tuple(history[len(history) - (k - 1) :]) if k > 1 else ()
        lower = self.p(k - 1, h[1:] if k > 1 else (), w)
        c = self.counts[k]
        total = sum(c.get(h + (v,), 0) for v in range(self.V))
        if total == 0:
            return lower
        backoff = sum(self.discount(k, c.get(h + (v,), 0)) for v in range(self.V))
        seen = c.get(h + (w,), 0)
        return max(seen - self.discount(k, seen), 0.0) / total + backoff / total * lower

    def prob(self, context, w):
        context = [int(v) for v in context]
        h = context[max(len(context) - (self.order - 1), 0) :] if self.order > 1 else []
        return self.p(len(h) + 1, tuple(h), w)

    def nats(self, text):
        text = [int(v) for v in text]
        losses = [-math.log(self.prob(text[:t], text[t])) for t in range(1, len(text))]
        return sum(losses) / len(losses)


def random_text(seed, length, symbols):
    """A text of ``length`` ids drawn from the first ``symbols`` ids, with some repetition so counts exceed one."""
    rng = np.random.default_rng(seed)
    motif = rng.integers(0, symbols, size=7)
    parts = [motif if rng.random() < 0.4 else rng.integers(0, symbols, size=7) for _ in range(length // 7 + 1)]
    return np.concatenate(parts)[:length].astype(np.int64)


# ---------------------------------------------------------------------------- agreement with the reference


@pytest.mark.parametrize("order", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_probabilities_and_nats_agree_with_the_reference(order, seed):
    V = 6
    train = random_text(seed, 150, 4)
    valid = random_text(seed + 100, 60, 5)  # symbol 4 never occurs in training
    model, ref = KneserNey.fit(train, order, vocab_size=V), Reference(train, order, V)
    for k in range(1, order + 1):
        assert model.discounts[k] == pytest.approx(ref.discounts[k], abs=1e-15)
    rng = np.random.default_rng(seed)
    for length in range(0, order + 2):
        context = rng.integers(0, V, size=length)
        got = model.probabilities(context)
        want = np.array([ref.prob(context, w) for w in range(V)])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert model.nats(valid) == pytest.approx(ref.nats(valid), abs=1e-12)
    logp = model.log_probabilities(valid)
    logs = [math.log(ref.prob(valid[:t], int(valid[t]))) for t in range(1, valid.size)]
    np.testing.assert_allclose(logp, logs, rtol=0, atol=1e-12)


def test_agrees_with_the_reference_over_the_book_alphabet():
    text = charlm.encode("def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b\n" * 2)
    valid = charlm.encode("def sub(a, b):\n    return a - b\n")
    model, ref = KneserNey.fit(text, 4), Reference(text, 4, charlm.VOCAB_SIZE)
    assert model.nats(valid) == pytest.approx(ref.nats(valid), abs=1e-12)
    for context in ("", "d", "re", "   ", "zz{"):
        want = [ref.prob(charlm.encode(context), w) for w in range(charlm.VOCAB_SIZE)]
        np.testing.assert_allclose(model.probabilities(charlm.encode(context)), want, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------- distributions


@pytest.mark.parametrize("order", [1, 2, 3, 5, 7])
def test_distributions_sum_to_one_for_seen_and_unseen_contexts(order):
    train = charlm.encode(charlm.stdlib_corpus(["textwrap"], ["colorsys"]).train)
    model = KneserNey.fit(train, order)
    rng = np.random.default_rng(order)
    contexts = [train[s : s + order - 1] for s in rng.integers(0, train.size - order, size=5)]  # seen
    contexts += [rng.integers(0, charlm.VOCAB_SIZE, size=order - 1) for _ in range(5)]  # mostly unseen
    contexts += [np.zeros(0, dtype=np.int64), np.full(order + 3, charlm.UNKNOWN)]
    for context in contexts:
        p = model.probabilities(context)
        assert p.shape == (charlm.VOCAB_SIZE,)
        assert p.min() > 0
        assert abs(float(p.sum()) - 1.0) < 1e-12


def test_an_unseen_context_falls_back_to_the_lower_order():
    model = KneserNey.fit(charlm.encode("she sells sea shells by the sea shore"), 3)
    unseen, shorter = charlm.encode("qs"), charlm.encode("s")
    np.testing.assert_array_equal(model.probabilities(unseen), model.probabilities(shorter))
    seen, its_tail = charlm.encode("ea"), charlm.encode("a")
    assert not np.array_equal(model.probabilities(seen), model.probabilities(its_tail))


def test_only_the_last_order_minus_one_symbols_are_read():
    model = KneserNey.fit(charlm.encode("she sells sea shells by the sea shore"), 3)
    np.testing.assert_array_equal(
        model.probabilities(charlm.encode("the sea sh")), model.probabilities(charlm.encode("sh"))
    )


# ---------------------------------------------------------------------------- discounts


def test_discounts_follow_the_formula_from_the_count_of_counts():
    train = charlm.encode(charlm.stdlib_corpus(["textwrap"], ["colorsys"]).train)
    model = KneserNey.fit(train, 5)
    ref = Reference(train[:3000], 5, charlm.VOCAB_SIZE)
    small = KneserNey.fit(train[:3000], 5)
    for k in range(1, 6):
        n1, n2, n3, n4 = model.count_of_counts[k]
        assert min(n1, n2, n3, n4) > 0  # the formula, no convention needed
        y = n1 / (n1 + 2 * n2)
        want = (1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3)
        assert model.discounts[k] == pytest.approx(want, abs=1e-15)
        assert small.count_of_counts[k] == tuple(sum(1 for v in ref.counts[k].values() if v == r) for r in (1, 2, 3, 4))


def test_discounts_fall_back_where_the_formula_fails():
    assert ngram.discounts(0, 0, 0, 0) == ngram.FALLBACK_DISCOUNTS
    assert ngram.discounts(7, 3, 0, 2) == ngram.FALLBACK_DISCOUNTS  # n3 = 0 divides
    assert ngram.discounts(10, 1, 50, 1) == ngram.FALLBACK_DISCOUNTS  # D2 = 2 - 3 Y 50 < 0
    d = ngram.discounts(10, 4, 2, 1)
    y = 10 / 18
    assert d == pytest.approx((1 - 2 * y * 4 / 10, 2 - 3 * y * 2 / 4, 3 - 4 * y * 1 / 2), abs=1e-15)
    assert ngram.count_of_counts([1, 1, 2, 5, 3, 1, 4, 4]) == (3, 1, 1, 2)


def test_every_probability_is_positive_even_on_a_tiny_text():
    for order in (1, 2, 3):
        model = KneserNey.fit(charlm.encode("abab"), order)
        assert model.probabilities(charlm.encode("a")).min() > 0


def test_a_unigram_model_by_hand():
    # counts a:1, b:2, c:3, d:4, so n1 = n2 = n3 = n4 = 1, Y = 1/3, D1 = 1/3, D2 = 1, D3+ = 5/3
    text = charlm.encode("abbcccdddd")
    model = KneserNey.fit(text, 1)
    assert model.count_of_counts == {1: (1, 1, 1, 1)}
    assert model.discounts[1] == pytest.approx((1 / 3, 1.0, 5 / 3), abs=1e-15)
    V = charlm.VOCAB_SIZE
    gamma = (Fraction(1, 3) + 1 + Fraction(5, 3) * 2) / 10  # the d's count 4 also takes D3+
    want = {
        "a": Fraction(2, 3) / 10 + gamma / V,
        "b": Fraction(1) / 10 + gamma / V,
        "c": Fraction(4, 3) / 10 + gamma / V,
        "d": Fraction(7, 3) / 10 + gamma / V,
        "x": gamma / V,
    }
    p = model.probabilities([])
    for ch, value in want.items():
        assert p[charlm.encode(ch)[0]] == pytest.approx(float(value), abs=1e-15)
    assert float(sum(want[c] for c in "abcd") + gamma * (V - 4) / V) == 1.0


def test_nats_predicts_every_symbol_after_the_first():
    text = charlm.encode("she sells sea shells by the sea shore")
    model = KneserNey.fit(text, 4)
    valid = charlm.encode("the shells")
    logp = model.log_probabilities(valid)
    assert logp.shape == (valid.size - 1,)
    first = math.log(model.probabilities(valid[:1])[valid[1]])  # one symbol of context, not three
    assert logp[0] == pytest.approx(first, abs=1e-15)
    assert model.nats(valid) == pytest.approx(-float(logp.mean()), abs=1e-15)


def test_a_longer_order_fits_its_own_training_text_better():
    train = charlm.encode(charlm.stdlib_corpus(["textwrap"], ["colorsys"]).train)
    nats = [KneserNey.fit(train, k).nats(train[:20000]) for k in (1, 3, 5, 7)]
    assert nats == sorted(nats, reverse=True)


# ---------------------------------------------------------------------------- the order, on held-out text


def test_choose_order_picks_the_lowest_held_out_nats_and_refits_on_everything():
    train = charlm.encode(charlm.stdlib_corpus(["textwrap"], ["colorsys"]).train)
    choice = ngram.choose_order(train, orders=(2, 3, 4), held_out_share=0.25)
    split = train.size - math.ceil(0.25 * train.size)
    assert choice.split == split
    for k in (2, 3, 4):
        assert choice.held_out_nats[k] == KneserNey.fit(train[:split], k).nats(train[split:])
    assert choice.order == min(choice.held_out_nats, key=lambda k: choice.held_out_nats[k])
    refit = KneserNey.fit(train, choice.order)
    np.testing.assert_array_equal(choice.model.probabilities(train[:10]), refit.probabilities(train[:10]))


def test_the_design_constants():
    assert ngram.ORDERS == (3, 4, 5, 6, 7)
    assert 0 < ngram.HELD_OUT_SHARE < 1
    assert charlm.VOCAB_SIZE**ngram.MAX_ORDER < 2**63


# ---------------------------------------------------------------------------- sampling


def test_sample_is_reproducible_and_follows_its_text():
    model = KneserNey.fit(charlm.encode("abcabcabc" * 20), 3)
    assert model.sample(12, prompt="ab", seed=3, temperature=0.3) == "cabcabcabcab"
    a = model.sample(50, prompt="x", seed=5)
    assert a == model.sample(50, prompt="x", seed=5)
    assert len(a) == 50


# ---------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: KneserNey.fit([0, 1, 2], 0), "order"),
        (lambda: KneserNey.fit([0, 1, 2], 10), "order"),
        (lambda: KneserNey.fit([0, 1, 2], 2.5), "order"),  # type: ignore[arg-type]
        (lambda: KneserNey.fit([0, 1, 2], 3, vocab_size=10**7), "order"),
        (lambda: KneserNey.fit([0, 1], 3), "train_ids"),
        (lambda: KneserNey.fit([0, 97], 1), "train_ids"),
        (lambda: KneserNey.fit([[0, 1], [1, 2]], 1), "train_ids"),
        (lambda: KneserNey.fit([0.5, 1.0], 1), "train_ids"),
        (lambda: KneserNey.fit([0, 1, 2], 2, vocab_size=0), "vocab_size"),
        (lambda: KneserNey.fit([0, 1, 2], 2).nats([1]), "ids"),
        (lambda: KneserNey.fit([0, 1, 2], 2).probabilities([-1]), "context"),
        (lambda: KneserNey.fit([0, 1, 2], 2).sample(0), "length"),
        (lambda: KneserNey.fit([0, 1, 2], 2).sample(5, prompt=""), "prompt"),
        (lambda: KneserNey.fit([0, 1, 2], 2).sample(5, temperature=0.0), "temperature"),
        (lambda: KneserNey.fit([0, 1, 2], 2).sample(5, seed=-1), "seed"),
        (lambda: ngram.choose_order(list(range(50)), orders=()), "orders"),
        (lambda: ngram.choose_order(list(range(50)), orders=(3, 3)), "orders"),
        (lambda: ngram.choose_order(list(range(50)), orders=(0,)), "order"),
        (lambda: ngram.choose_order(list(range(50)), held_out_share=0.0), "held_out_share"),
        (lambda: ngram.choose_order(list(range(50)), held_out_share=1.0), "held_out_share"),
        (lambda: ngram.choose_order(list(range(8)), orders=(7,), held_out_share=0.5), "train_ids"),
        (lambda: ngram.discounts(-1, 0, 0, 0), "n1"),
        (lambda: ngram.count_of_counts([1, -2]), "counts"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        call()

"""The paired tests of rnnmem.stats, the sign test and Wilcoxon's signed-rank test, against scipy.stats.

scipy is a test-only dependency: the core computes these in numpy and exact
integers, and each is held here to ``scipy.stats`` on random inputs and to a
published worked example.
"""

from __future__ import annotations

import importlib
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from rnnmem import stats

# scipy ships no type stubs; imported by name, it is typed as Any and mypy needs no override for it.
scipy_stats: Any = importlib.import_module("scipy.stats")

# -- the sign test -----------------------------------------------------------------------------------------


def test_the_sign_test_is_scipys_binomial_test_at_one_half_for_every_count_up_to_60():
    for n in range(1, 61):
        for k in range(n + 1):
            expected = scipy_stats.binomtest(k, n, 0.5).pvalue
            assert stats.sign_test(k, n) == pytest.approx(expected, rel=1e-12), (k, n)


def test_the_sign_test_is_twice_the_smaller_tail_exactly():
    for n in (1, 7, 20, 33):
        for k in range(n + 1):
            tail = sum(math.comb(n, i) for i in range(min(k, n - k) + 1))
            assert stats.sign_test(k, n) == float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def test_the_sign_test_on_arbuthnots_82_years():
    """Arbuthnot (1710), "An argument for Divine Providence, taken from the constant regularity observ'd in the
    births of both sexes", Phil. Trans. 27, 186-190: male christenings exceeded female ones in each of the 82 years
    1629-1710, and he put the chance of that, one way, at 1 in 4 8360 0000 0000 0000 0000 0000: 2**82 to four
    figures. The two-sided p-value doubles it."""
    p = stats.sign_test(82, 82)
    assert p == 2 * 2.0**-82
    assert round(2 / p / 1e21) == 4836  # Arbuthnot's 4 836(0) followed by twenty zeros
    assert stats.sign_test(0, 82) == p


def test_the_smallest_p_of_twenty_seeds():
    """The floor the chapter on words in context holds its printed p-values to."""
    assert stats.sign_test(20, 20) == 2.0**-19
    assert min(stats.sign_test(k, 20) for k in range(21)) == 2.0**-19


@pytest.mark.parametrize(
    "positive, n, name",
    [(-1, 5, "positive"), (6, 5, "positive"), (2.5, 5, "positive"), (1, 0, "n"), (True, 3, "positive")],
)
def test_the_sign_test_names_a_bad_argument(positive: Any, n: Any, name: str):
    with pytest.raises(ValueError, match=f"^{name} must be"):
        stats.sign_test(positive, n)


# -- Wilcoxon's signed-rank test ---------------------------------------------------------------------------


def test_wilcoxon_without_ties_is_scipys_exact_test():
    rng = np.random.default_rng(44)
    for _ in range(300):
        n = int(rng.integers(1, 51))
        d = rng.normal(rng.normal(0, 0.5), 1.0, size=n)
        ours = stats.wilcoxon_signed_rank(d)
        theirs = scipy_stats.wilcoxon(d, zero_method="wilcox", method="exact")
        assert ours.method == "exact" and ours.n == n
        assert ours.statistic == theirs.statistic
        assert ours.p == pytest.approx(theirs.pvalue, rel=1e-10, abs=1e-15)
        assert ours.r_plus == pytest.approx(float((scipy_stats.rankdata(np.abs(d))[d > 0]).sum()))


def test_wilcoxon_with_ties_or_zeros_is_scipys_normal_approximation_without_continuity_correction():
    rng = np.random.default_rng(45)
    for _ in range(300):
        n = int(rng.integers(2, 60))
        d = rng.integers(-4, 7, size=n).astype(float)  # ties and zeros, as accuracies of 20 seeds have
        if not (d != 0).any():
            continue
        ours = stats.wilcoxon_signed_rank(d)
        kept = d[d != 0]
        ties = np.unique(np.abs(kept)).size < kept.size
        theirs = scipy_stats.wilcoxon(kept, method="exact" if not ties and kept.size <= 50 else "asymptotic")
        assert ours.method == ("exact" if not ties and kept.size <= 50 else "normal")
        assert ours.n == kept.size and ours.statistic == theirs.statistic
        assert ours.p == pytest.approx(theirs.pvalue, rel=1e-10, abs=1e-15)
        # scipy's default method, given the zeros, drops them the same way
        if ours.method == "normal":
            whole = scipy_stats.wilcoxon(d, zero_method="wilcox", method="asymptotic", correction=False)
            assert ours.p == pytest.approx(whole.pvalue, rel=1e-10)


def test_wilcoxon_beyond_fifty_uses_the_normal_approximation_as_scipy_auto_does():
    rng = np.random.default_rng(46)
    d = rng.normal(0.3, 1.0, size=80)
    ours = stats.wilcoxon_signed_rank(d)
    assert ours.method == "normal"
    assert ours.p == pytest.approx(scipy_stats.wilcoxon(d).pvalue, rel=1e-10)


def test_wilcoxon_on_darwins_zea_mays():
    """Darwin's 15 pairs of cross- and self-fertilized Zea mays, as Fisher (1935), The Design of Experiments,
    §17, gives their differences of height in eighths of an inch. Two differences are negative, of ranks 10 and
    14, so T = R- = 24; the exact two-sided p-value is 2 P(T <= 24) = 1352/32768 = 0.0413 (the example of
    scipy.stats.wilcoxon's documentation)."""
    d = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]
    result = stats.wilcoxon_signed_rank(d)
    assert (result.statistic, result.method, result.n) == (24.0, "exact", 15)
    assert result.r_plus == 15 * 16 / 2 - 24
    assert result.p == 1352 / 32768
    assert round(result.p, 4) == 0.0413


def test_the_rank_sum_counts_are_those_of_every_sign_pattern():
    for n in (1, 4, 9):
        brute = [0] * (n * (n + 1) // 2 + 1)
        for mask in range(2**n):
            brute[sum(r for r in range(1, n + 1) if mask >> (r - 1) & 1)] += 1
        assert stats._rank_sum_counts(n) == brute


def test_wilcoxons_smallest_p_for_twenty_seeds_is_the_sign_tests():
    """All twenty of one sign: the exact test gives 2/2**20, and ties can only raise the floor."""
    assert stats.wilcoxon_signed_rank(np.arange(1, 21)).p == 2.0**-19
    tied = stats.wilcoxon_signed_rank(np.ones(20))
    assert tied.method == "normal" and tied.p > 2.0**-19


def test_wilcoxon_with_nothing_to_rank_finds_nothing():
    result = stats.wilcoxon_signed_rank([0.0, 0, 0])
    assert (result.n, result.p, result.statistic) == (0, 1.0, 0.0)


@pytest.mark.parametrize("bad", [[], [[1.0, 2.0]], [1.0, np.nan], [1.0, np.inf], ["a", "b"], [True, False]])
def test_wilcoxon_names_a_bad_argument(bad: Any):
    with pytest.raises(ValueError, match="^differences must"):
        stats.wilcoxon_signed_rank(bad)

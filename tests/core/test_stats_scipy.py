"""rnnmem.stats against scipy.stats (pinned, test-only) on seeded random inputs, and against published worked examples.

Each statistical function of the module is compared with what scipy computes for the same data, or, where
scipy has no such function (the stratified exact test, Newcombe's interval, Fisher's power), with a
computation written here from scipy's distributions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import scipy.stats

from rnnmem import stats

NOT_WHOLE: Any = 2.5
NOT_A_NUMBER: Any = "0.1"


def scipy_fisher(a: int, n_a: int, b: int, n_b: int) -> float:
    return float(scipy.stats.fisher_exact([[a, n_a - a], [b, n_b - b]]).pvalue)


def random_counts(rng: np.random.Generator, max_n: int) -> tuple[int, int]:
    n = int(rng.integers(1, max_n + 1))
    return int(rng.integers(0, n + 1)), n


# -- Wilson ------------------------------------------------------------------------------------------------


def test_wilson_is_scipys_wilson_interval():
    rng = np.random.default_rng(20261207)
    for _ in range(300):
        k, n = random_counts(rng, 200)
        level = float(rng.uniform(0.5, 0.999))
        ci = scipy.stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
        assert stats.wilson(k, n, level) == pytest.approx((ci.low, ci.high), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(
    "k, n, lower, upper",
    [
        # Newcombe RG (1998), "Two-sided confidence intervals for the single proportion: comparison of seven
        # methods", Statistics in Medicine 17:857-872, Table I, method 3 (score interval without continuity
        # correction), 95%.
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_reproduces_newcombes_single_proportion_examples(k, n, lower, upper):
    assert [round(v, 4) for v in stats.wilson(k, n)] == [lower, upper]


# -- Fisher ------------------------------------------------------------------------------------------------


def test_fisher_is_scipys_fisher_exact():
    rng = np.random.default_rng(1)
    for _ in range(300):
        (a, n_a), (b, n_b) = random_counts(rng, 60), random_counts(rng, 60)
        assert stats.fisher_exact(a, n_a, b, n_b) == pytest.approx(scipy_fisher(a, n_a, b, n_b), rel=1e-12)


def test_fisher_reproduces_the_tea_tasting_experiment():
    # Fisher RA (1935), The Design of Experiments, ch. II: four cups of each kind, three of the four
    # milk-first cups identified; the two-sided p is 34/70 = 0.4857.
    assert round(stats.fisher_exact(3, 4, 1, 4), 4) == 0.4857
    assert stats.fisher_exact(3, 4, 1, 4) == pytest.approx(scipy_fisher(3, 4, 1, 4), rel=1e-15)


# -- Mann-Whitney ------------------------------------------------------------------------------------------


def compare_mann_whitney(x: np.ndarray, y: np.ndarray) -> stats.MannWhitney:
    result = stats.mann_whitney(x, y)
    method = {"exact": "exact", "normal": "asymptotic"}[result.method]
    reference = scipy.stats.mannwhitneyu(x, y, alternative="two-sided", method=method)
    assert result.u == reference.statistic
    assert result.p == pytest.approx(reference.pvalue, rel=1e-12)
    return result


def test_mann_whitney_without_ties_is_scipys_exact_test():
    rng = np.random.default_rng(2)
    for _ in range(150):
        m, n = (int(v) for v in rng.integers(1, 51, size=2))
        x, y = rng.normal(size=m), rng.normal(float(rng.uniform(0, 1.5)), size=n)
        assert compare_mann_whitney(x, y).method == "exact"


def test_mann_whitney_with_ties_is_scipys_asymptotic_test():
    rng = np.random.default_rng(3)
    methods = set()
    for _ in range(150):
        m, n = (int(v) for v in rng.integers(2, 60, size=2))
        x, y = rng.integers(0, 6, size=m), rng.integers(0, 6, size=n) + int(rng.integers(0, 2))
        # Final accuracies: few distinct values, many ties.
        methods.add(compare_mann_whitney(x / 5.0, y / 5.0).method)
    assert methods == {"normal"}


def test_mann_whitney_above_fifty_runs_uses_the_normal_approximation():
    rng = np.random.default_rng(4)
    for m, n in [(51, 10), (3, 80), (60, 60)]:
        x, y = rng.normal(size=m), rng.normal(0.3, size=n)
        assert compare_mann_whitney(x, y).method == "normal"


def test_mann_whitney_at_the_centre_and_with_one_value_gives_one():
    assert compare_mann_whitney(np.array([1.0, 4.0]), np.array([2.0, 3.0])).p == 1.0
    assert stats.mann_whitney([0.5, 0.5], [0.5, 0.5, 0.5]) == stats.MannWhitney(3.0, 1.0, "normal")


def test_mann_whitney_reproduces_shiers_diagnosis_ages():
    # Shier R (2004), "Statistics: 2.3 The Mann-Whitney U Test", Mathematics Learning Support Centre
    # (the example of scipy.stats.mannwhitneyu's documentation): ages at diagnosis of five males and four
    # females, U_M = 17, U_F = 3, two-sided exact p = 0.11.
    males, females = [19, 22, 16, 29, 24], [20, 11, 17, 12]
    result = stats.mann_whitney(males, females)
    assert (result.u, round(result.p, 2), result.method) == (17.0, 0.11, "exact")
    assert stats.mann_whitney(females, males).u == 3.0
    compare_mann_whitney(np.array(males, dtype=float), np.array(females, dtype=float))


def test_mann_whitney_counts_are_the_orderings_of_two_samples():
    """The exact counts of U sum to C(m + n, m), are symmetric, and match a brute-force enumeration."""
    from itertools import combinations

    m, n = 4, 5
    counts = stats._mann_whitney_counts(m, n)
    brute = [0] * (m * n + 1)
    for positions in combinations(range(m + n), m):  # ranks 0..m+n-1 taken by x
        brute[sum(positions) - m * (m - 1) // 2] += 1
    assert list(counts) == brute
    assert sum(counts) == math.comb(m + n, m) and counts == counts[::-1]


# -- the stratified exact test ---------------------------------------------------------------------------


def scipy_stratified(tables: list[tuple[int, int, int, int]]) -> float:
    """The convolution of the strata's hypergeometric pmfs (scipy's), and the two-sided sum of Fisher's rule."""
    distribution, low = np.array([1.0]), 0
    for a, n_a, b, n_b in tables:
        m = a + b
        support = np.arange(max(0, m - n_b), min(n_a, m) + 1)
        pmf = scipy.stats.hypergeom.pmf(support, n_a + n_b, m, n_a)
        distribution = np.convolve(distribution, pmf)
        low += int(support[0])
    observed = distribution[sum(t[0] for t in tables) - low]
    return float(distribution[distribution <= observed * (1 + 1e-7)].sum())


def test_stratified_exact_is_the_convolution_of_scipys_hypergeometric_distributions():
    rng = np.random.default_rng(5)
    for _ in range(200):
        tables = [random_counts(rng, 25) + random_counts(rng, 25) for _ in range(int(rng.integers(1, 5)))]
        assert stats.stratified_exact(tables) == pytest.approx(scipy_stratified(tables), rel=1e-9)


def test_stratified_exact_with_one_stratum_is_fisher():
    rng = np.random.default_rng(6)
    for _ in range(200):
        (a, n_a), (b, n_b) = random_counts(rng, 40), random_counts(rng, 40)
        assert stats.stratified_exact([(a, n_a, b, n_b)]) == stats.fisher_exact(a, n_a, b, n_b)


def test_stratified_exact_ignores_strata_without_information_and_their_order():
    tables = [(6, 20, 0, 20), (3, 20, 1, 20), (2, 10, 0, 10)]
    p = stats.stratified_exact(tables)
    assert stats.stratified_exact(tables[::-1]) == p
    # A stratum whose successes are all or none has one possible table: it changes nothing.
    assert stats.stratified_exact([*tables, (0, 20, 0, 20), (5, 5, 7, 7)]) == p
    # Strata that agree in direction pool their evidence: the joint p is below each stratum's.
    assert p < min(stats.fisher_exact(*t) for t in tables)


# -- equivalence by Newcombe's interval ------------------------------------------------------------------


def scipy_newcombe(a: int, n_a: int, b: int, n_b: int, confidence: float) -> tuple[float, float]:
    """Newcombe's method 10 written from its definition, the Wilson bounds as roots of the score quadratic."""
    z = scipy.stats.norm.ppf(0.5 + confidence / 2)

    def score(k: int, n: int) -> tuple[float, float]:
        p = k / n
        centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)

    (l_a, u_a), (l_b, u_b) = score(a, n_a), score(b, n_b)
    p_a, p_b = a / n_a, b / n_b
    d = p_a - p_b
    return d - math.sqrt((p_a - l_a) ** 2 + (u_b - p_b) ** 2), d + math.sqrt((u_a - p_a) ** 2 + (p_b - l_b) ** 2)


@pytest.mark.parametrize(
    "a, n_a, b, n_b, lower, upper",
    [
        # Newcombe RG (1998), "Interval estimation for the difference between independent proportions:
        # comparison of eleven methods", Statistics in Medicine 17:873-890, Table II, method 10 (score
        # interval without continuity correction), 95%: examples (a), (b), (d), (e), (f), (g), (h).
        (56, 70, 48, 80, 0.0524, 0.3339),
        (9, 10, 3, 10, 0.1705, 0.8090),
        (5, 56, 0, 29, -0.0381, 0.1926),
        (0, 10, 0, 20, -0.1611, 0.2775),
        (0, 10, 0, 10, -0.2775, 0.2775),
        (10, 10, 0, 20, 0.6791, 1.0000),
        (10, 10, 0, 10, 0.6075, 1.0000),
    ],
)
def test_newcombe_reproduces_the_published_intervals(a, n_a, b, n_b, lower, upper):
    assert [round(v, 4) for v in stats.newcombe(a, n_a, b, n_b)] == [lower, upper]
    # TOST at 0.025 is read from the same 95% interval.
    result = stats.equivalence(a, n_a, b, n_b, margin=0.5, level=0.025)
    assert (round(result.lower, 4), round(result.upper, 4)) == (lower, upper)


def test_equivalence_is_newcombes_interval_at_one_minus_twice_the_level():
    rng = np.random.default_rng(7)
    for _ in range(300):
        (a, n_a), (b, n_b) = random_counts(rng, 100), random_counts(rng, 100)
        margin, level = float(rng.uniform(0.01, 0.5)), float(rng.choice([0.01, 0.025, 0.05, 0.1]))
        result = stats.equivalence(a, n_a, b, n_b, margin, level)
        lower, upper = scipy_newcombe(a, n_a, b, n_b, 1 - 2 * level)
        assert (result.lower, result.upper) == pytest.approx((lower, upper), rel=1e-12, abs=1e-14)
        assert result.equivalent == (-margin < result.lower and result.upper < margin)
        assert result.lower <= result.difference == a / n_a - b / n_b <= result.upper
        assert (result.margin, result.level) == (margin, level)


def test_equivalence_needs_counts_that_can_show_it():
    # 10 against 11 of 20 cannot show equivalence within 0.1; 500 against 510 of 1000 can.
    assert not stats.equivalence(10, 20, 11, 20, margin=0.1).equivalent
    assert stats.equivalence(500, 1000, 510, 1000, margin=0.1).equivalent
    # Each one-sided test at 0.05 is the 90% interval, narrower than the 95% one.
    at_05, at_025 = stats.equivalence(30, 60, 33, 60, 0.3), stats.equivalence(30, 60, 33, 60, 0.3, level=0.025)
    assert at_025.lower < at_05.lower and at_05.upper < at_025.upper


# -- Fisher's power ----------------------------------------------------------------------------------------


def brute_force_power(p_a: float, p_b: float, n_a: int, n_b: int, alpha: float) -> float:
    """Every outcome, its probability from scipy's binomial pmf, summed where scipy's Fisher p is below alpha.

    A p-value equal to alpha is not below it. scipy sums floats and can land one ulp under an exact p
    (1/5 as 0.19999999999999998 for 5 of 12 against 3 of 3): a p within 1e-12 of alpha counts as alpha.
    """
    return sum(
        scipy.stats.binom.pmf(k_a, n_a, p_a) * scipy.stats.binom.pmf(k_b, n_b, p_b)
        for k_a in range(n_a + 1)
        for k_b in range(n_b + 1)
        if (p := scipy_fisher(k_a, n_a, k_b, n_b)) < alpha and not math.isclose(p, alpha, rel_tol=1e-12)
    )


@pytest.mark.parametrize("n_a, n_b", [(8, 6), (5, 5), (12, 3)])
def test_fisher_power_is_the_brute_force_sum_over_outcomes(n_a, n_b):
    rng = np.random.default_rng(n_a * 100 + n_b)
    for p_a, p_b, alpha in [(0.1, 0.9, 0.05), (0.5, 0.5, 0.05), (0.0, 1.0, 0.05), (0.2, 0.7, 0.2)] + [
        (float(rng.uniform()), float(rng.uniform()), float(rng.uniform(0.01, 0.3))) for _ in range(8)
    ]:
        expected = brute_force_power(p_a, p_b, n_a, n_b, alpha)
        assert stats.fisher_power(p_a, p_b, n_a, n_b, alpha) == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_fisher_power_counts_only_p_values_below_alpha():
    """Four outcomes of 12 against 3 runs have p = 1/5 exactly: at alpha = 0.2 they do not count."""
    at_one_fifth = [(0, 1), (5, 3), (7, 0), (12, 2)]
    outcomes = [(k_a, k_b) for k_a in range(13) for k_b in range(4)]
    assert [o for o in outcomes if stats.fisher_exact(o[0], 12, o[1], 3) == 0.2] == at_one_fifth
    just_above = stats.fisher_power(0.2, 0.7, 12, 3, alpha=0.2 + 1e-9)
    at = stats.fisher_power(0.2, 0.7, 12, 3, alpha=0.2)
    missing = sum(
        math.comb(12, k_a) * 0.2**k_a * 0.8 ** (12 - k_a) * math.comb(3, k_b) * 0.7**k_b * 0.3 ** (3 - k_b)
        for k_a, k_b in at_one_fifth
    )
    assert just_above - at == pytest.approx(missing, rel=1e-9)


def test_fisher_power_at_no_difference_is_the_size_below_alpha():
    for p in (0.1, 0.5, 0.8):
        assert 0.0 < stats.fisher_power(p, p, 20, 20) < 0.05
    assert stats.fisher_power(0.5, 0.95, 20, 20) > stats.fisher_power(0.5, 0.8, 20, 20)


def test_fisher_power_computes_the_table_of_p_values_once():
    stats._fisher_table.cache_clear()
    for p_b in (0.6, 0.7, 0.8, 0.9):
        stats.fisher_power(0.5, p_b, 20, 20)
    info = stats._fisher_table.cache_info()
    assert (info.misses, info.hits) == (1, 3)


@pytest.mark.parametrize("p_ref, power", [(0.1, 0.5), (0.5, 0.3), (0.7, 0.4), (0.95, 0.2)])
def test_detectable_difference_is_the_first_grid_step_with_the_power(p_ref, power):
    """The grid walked here with the brute-force power; the difference goes toward the side with more room."""
    n_a, n_b, step = 8, 6, 0.05
    sign = 1 if p_ref <= 0.5 else -1
    expected = None
    for k in range(1, 21):
        other = round(p_ref + sign * k * step, 12)
        if not 0.0 <= other <= 1.0:
            break
        if brute_force_power(p_ref, other, n_a, n_b, 0.05) >= power:
            expected = round(k * step, 12)
            break
    assert stats.detectable_difference(p_ref, n_a, n_b, power=power, step=step) == expected
    assert expected is not None or p_ref == 0.95


def test_detectable_difference_moves_toward_the_side_with_more_room():
    d = stats.detectable_difference(0.7, 20, 20)
    assert d is not None
    assert stats.fisher_power(0.7, 0.7 - d, 20, 20) >= 0.8 > stats.fisher_power(0.7, 0.7 - d + 0.05, 20, 20)
    assert stats.detectable_difference(0.3, 20, 20) == d  # the mirror image
    assert stats.detectable_difference(0.5, 3, 3) is None  # no design this small reaches 80%


# -- arguments ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: stats.mann_whitney([], [1.0]), r"x must be a non-empty one-dimensional sequence"),
        (lambda: stats.mann_whitney([1.0], [np.nan]), r"y must hold finite numbers only"),
        (lambda: stats.mann_whitney(["a"], [1.0]), r"x must be a one-dimensional sequence of real numbers"),
        (lambda: stats.stratified_exact([]), r"tables must be a non-empty list of \(a, n_a, b, n_b\) tuples"),
        (lambda: stats.stratified_exact((3, 4, 1, 4)), r"tables\[0\] must be an \(a, n_a, b, n_b\) tuple.*got 3"),
        (lambda: stats.stratified_exact([(3, 4, 1)]), r"tables\[0\] must be an \(a, n_a, b, n_b\) tuple"),
        (
            lambda: stats.stratified_exact([(3, 4, 1, 4), (5, 4, 1, 4)]),
            r"tables\[1\].a must be a whole number from 0 to tables\[1\].n_a = 4, got 5",
        ),
        (lambda: stats.stratified_exact([(3, 4, 1, 0)]), r"tables\[0\].n_b must be a whole number >= 1, got 0"),
        (lambda: stats.newcombe(3, 4, 1, 4, level=1.5), r"level must be a number strictly between 0 and 1"),
        (lambda: stats.equivalence(3, 4, 5, 4, 0.1), r"b must be a whole number from 0 to n_b = 4, got 5"),
        (lambda: stats.equivalence(3, 4, 1, 4, 0), r"margin must be a number strictly between 0 and 1 .*, got 0"),
        (lambda: stats.equivalence(3, 4, 1, 4, NOT_A_NUMBER), r"margin must be .*, got '0.1'"),
        (
            lambda: stats.equivalence(3, 4, 1, 4, 0.1, level=0.95),
            r"level must be a number strictly between 0 and 0.5 \(the level of each one-sided test.*, got 0.95",
        ),
        (lambda: stats.fisher_power(1.5, 0.5, 4, 4), r"p_a must be a probability, a number from 0 to 1, got 1.5"),
        (lambda: stats.fisher_power(0.5, -0.1, 4, 4), r"p_b must be a probability.*, got -0.1"),
        (lambda: stats.fisher_power(0.5, 0.5, 0, 4), r"n_a must be a whole number >= 1, got 0"),
        (lambda: stats.fisher_power(0.5, 0.5, 4, NOT_WHOLE), r"n_b must be a whole number >= 1, got 2.5"),
        (lambda: stats.fisher_power(0.5, 0.5, 4, 4, alpha=1), r"alpha must be a number strictly between 0 and 1"),
        (lambda: stats.detectable_difference(True, 4, 4), r"p_ref must be a probability.*, got True"),
        (lambda: stats.detectable_difference(0.5, 4, 4, power=0), r"power must be a number strictly between 0 and 1"),
        (lambda: stats.detectable_difference(0.5, 4, 4, step=0), r"step must be a number strictly between 0 and 1"),
    ],
)
def test_bad_arguments_are_named_with_their_value_and_what_is_allowed(call, message):
    with pytest.raises(ValueError, match=message):
        call()

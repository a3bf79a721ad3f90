"""rnnmem.stats against values derived independently here: closed forms, brute-force sums, hand-worked examples."""

from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from rnnmem import stats

Z95 = NormalDist().inv_cdf(0.975)
NOT_WHOLE: Any = 2.5


@st.composite
def counts(draw, max_n: int = 60):
    n = draw(st.integers(1, max_n))
    return draw(st.integers(0, n)), n


# -- Wilson ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k, n", [(1, 20), (7, 20), (15, 20), (19, 20), (3, 5), (50, 101)])
@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_wilson_bounds_are_the_two_roots_of_the_score_test(k, n, level):
    """The interval is {p : (k/n - p)^2 <= z^2 p (1 - p) / n}: each bound is a root of the equality."""
    z = NormalDist().inv_cdf(0.5 + level / 2)
    # The quadratic (1 + z^2/n) p^2 - (2 phat + z^2/n) p + phat^2 = 0, solved here.
    phat = k / n
    a, b, c = 1 + z * z / n, -(2 * phat + z * z / n), phat * phat
    roots = sorted([(-b - math.sqrt(b * b - 4 * a * c)) / (2 * a), (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)])
    assert stats.wilson(k, n, level) == pytest.approx(roots, rel=1e-12, abs=1e-15)


def test_wilson_is_exact_at_the_edges():
    for n in (1, 5, 20, 1000):
        lower, upper = stats.wilson(0, n)
        assert lower == 0.0 and 0 < upper < 1
        lower, upper = stats.wilson(n, n)
        assert upper == 1.0 and 0 < lower < 1
    # One success in one: the lower bound solves p = z^2 (1 - p) => p = 1/(1 + z^2).
    assert stats.wilson(1, 1)[0] == pytest.approx(1 / (1 + Z95**2), rel=1e-12)


@pytest.mark.parametrize("n", [20, 50])
def test_wilson_covers_about_95_percent_on_average(n):
    """Its exact coverage, averaged over p, is near the nominal level (Brown, Cai and DasGupta 2001)."""
    bounds = [stats.wilson(k, n) for k in range(n + 1)]
    coverage = []
    for p in np.linspace(0.005, 0.995, 199):
        coverage.append(
            sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1) if bounds[k][0] <= p <= bounds[k][1])
        )
    assert abs(np.mean(coverage) - 0.95) < 0.01
    assert min(coverage) > 0.85


@settings(max_examples=200, deadline=None, derandomize=True)
@given(counts(), st.floats(0.5, 0.999))
def test_wilson_contains_the_share_and_stays_in_the_unit_interval(kn, level):
    k, n = kn
    lower, upper = stats.wilson(k, n, level)
    assert 0.0 <= lower <= k / n <= upper <= 1.0
    assert lower < upper
    # Successes and failures swap roles: the interval is mirrored.
    mirrored = stats.wilson(n - k, n, level)
    assert mirrored == pytest.approx((1 - upper, 1 - lower), abs=1e-12)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(counts())
def test_wilson_bounds_grow_with_the_successes_and_with_the_level(kn):
    k, n = kn
    assume(k < n)
    now, more = stats.wilson(k, n), stats.wilson(k + 1, n)
    assert more[0] > now[0] and more[1] > now[1]
    wide = stats.wilson(k, n, 0.99)
    assert wide[0] <= now[0] and wide[1] >= now[1]


# -- Fisher ------------------------------------------------------------------------------------------------


def brute_force_fisher(a: int, n_a: int, b: int, n_b: int) -> float:
    """Every table with the same margins, its probability from factorials, summed where no likelier than ours."""
    m, total = a + b, n_a + n_b

    def prob(x: int) -> float:
        ways = math.factorial(n_a) // (math.factorial(x) * math.factorial(n_a - x))
        ways *= math.factorial(n_b) // (math.factorial(m - x) * math.factorial(n_b - m + x))
        return ways / (math.factorial(total) // (math.factorial(m) * math.factorial(total - m)))

    tables = [x for x in range(0, n_a + 1) if 0 <= m - x <= n_b]
    observed = prob(a)
    return sum(prob(x) for x in tables if prob(x) <= observed * (1 + 1e-7))


@pytest.mark.parametrize(
    "a, n_a, b, n_b",
    [(3, 4, 1, 4), (20, 20, 5, 20), (12, 20, 7, 20), (0, 20, 20, 20), (10, 20, 10, 20), (4, 9, 11, 13), (1, 1, 0, 1)],
)
def test_fisher_is_the_brute_force_sum_over_tables(a, n_a, b, n_b):
    assert stats.fisher_exact(a, n_a, b, n_b) == pytest.approx(brute_force_fisher(a, n_a, b, n_b), rel=1e-12)


def test_fisher_tea_tasting_is_34_of_70_exactly():
    # The hypergeometric probabilities of 0..4 cups right are 1, 16, 36, 16, 1 in 70; three right is 16 in 70.
    assert stats.fisher_exact(3, 4, 1, 4) == 34 / 70
    assert stats.fisher_exact(4, 4, 0, 4) == 2 / 70


def test_fisher_keeps_tables_within_the_relative_tolerance():
    """Tables whose probability ties the observed one up to rounding count, as in R (relative 1e-7)."""
    # 6 of 12 against 6 of 12 is the symmetric centre: every table is no likelier, so p is 1.
    assert stats.fisher_exact(6, 12, 6, 12) == 1.0
    # Mirror tables have exactly equal probability and both count.
    p = stats.fisher_exact(2, 10, 8, 10)
    assert p == float(
        Fraction(2 * sum(math.comb(10, x) * math.comb(10, 10 - x) for x in range(0, 3)), math.comb(20, 10))
    )


@settings(max_examples=150, deadline=None, derandomize=True)
@given(counts(40), counts(40))
def test_fisher_p_is_a_probability_and_symmetric(first, second):
    (a, n_a), (b, n_b) = first, second
    p = stats.fisher_exact(a, n_a, b, n_b)
    assert 0.0 < p <= 1.0
    assert stats.fisher_exact(b, n_b, a, n_a) == p  # the groups swapped
    assert stats.fisher_exact(n_a - a, n_a, n_b - b, n_b) == p  # successes and failures swapped
    assert stats.fisher_exact(a, n_a, a, n_a) == 1.0  # two equal groups


def test_fisher_handles_large_counts_exactly():
    p = stats.fisher_exact(300, 500, 200, 500)
    assert 0.0 < p < 1e-9
    assert p == stats.fisher_exact(200, 500, 300, 500)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(1, 300), st.integers(1, 300), st.data())
def test_fisher_weights_are_the_products_of_binomials(n_a, n_b, data):
    """The recurrence gives exactly C(n_a, x) C(n_b, m - x) for every possible x, whatever the margins."""
    m = data.draw(st.integers(0, n_a + n_b))
    low, high = max(0, m - n_b), min(n_a, m)
    expected = [math.comb(n_a, x) * math.comb(n_b, m - x) for x in range(low, high + 1)]
    assert stats._hypergeometric_weights(n_a, n_b, m) == expected


def test_fisher_at_pooled_counts_in_the_thousands_is_the_exact_sum():
    """Counts pooled over seeds (thousands of occurrences): the p of the whole exact sum, rounded once."""
    a, n_a, b, n_b = 4100, 5200, 3950, 5100
    m = a + b
    weights = {x: math.comb(n_a, x) * math.comb(n_b, m - x) for x in range(max(0, m - n_b), min(n_a, m) + 1)}
    tail = sum(w for w in weights.values() if w * 10**7 <= weights[a] * (10**7 + 1))
    assert stats.fisher_exact(a, n_a, b, n_b) == float(Fraction(tail, math.comb(n_a + n_b, m)))


# -- quartiles and the bootstrap median ------------------------------------------------------------------


def test_quartiles_follow_the_linear_rule_worked_by_hand():
    # Position q (n - 1) from 0: for 1..8, 1.75, 3.5 and 5.25, between the neighbouring order statistics.
    assert stats.quartiles([8, 1, 7, 2, 6, 3, 5, 4]) == (2.75, 4.5, 6.25)
    # Five values: positions 1, 2, 3 fall on order statistics.
    assert stats.quartiles([10, 40, 20, 50, 30]) == (20.0, 30.0, 40.0)
    assert stats.quartiles([7]) == (7.0, 7.0, 7.0)


def test_bootstrap_median_is_deterministic_and_brackets_the_population_median():
    values = np.random.default_rng(11).normal(size=401)
    median, lower, upper = stats.bootstrap_median(values)
    assert (median, lower, upper) == stats.bootstrap_median(values)
    assert median == float(np.median(values))
    assert lower <= median <= upper and lower < 0.0 < upper
    # The median's asymptotic standard error for a standard normal is sqrt(pi/2)/sqrt(n).
    expected = 2 * Z95 * math.sqrt(math.pi / 2) / math.sqrt(values.size)
    assert 0.65 * expected < upper - lower < 1.35 * expected
    assert stats.bootstrap_median(values, seed=1) != (median, lower, upper)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=30), st.floats(0.5, 0.99))
def test_bootstrap_median_bounds_are_ordered_and_within_the_sample(values, level):
    median, lower, upper = stats.bootstrap_median(values, level=level, resamples=200)
    assert min(values) <= lower <= upper <= max(values)
    assert median == float(np.median(values))
    narrower = stats.bootstrap_median(values, level=level / 2, resamples=200)
    assert lower <= narrower[1] <= narrower[2] <= upper  # same draws, inner quantiles


def test_a_constant_sample_has_a_point_interval():
    assert stats.bootstrap_median([5, 5, 5, 5]) == (5.0, 5.0, 5.0)


# -- Kaplan-Meier -----------------------------------------------------------------------------------------

TIMES = [2, 3, 3, 5, 8]
OBSERVED = [True, True, False, True, False]


def test_kaplan_meier_against_a_hand_worked_example():
    # t=2: 5 at risk, 1 succeeds: 4/5. t=3: 4 at risk (the run censored at 3 counts), 1: 4/5 * 3/4 = 3/5.
    # t=5: 2 at risk, 1: 3/5 * 1/2 = 3/10. The run censored at 8 ends the data.
    km = stats.kaplan_meier(TIMES, OBSERVED)
    assert km.times.tolist() == [2.0, 3.0, 5.0]
    assert km.at_risk.tolist() == [5, 4, 2] and km.events.tolist() == [1, 1, 1] and km.n == 5
    assert km.survival.tolist() == [0.8, 0.6, 0.3]
    assert [km.survival_at(t) for t in (0, 1.99, 2, 4, 5, 8, 1e9)] == [1.0, 1.0, 0.8, 0.6, 0.3, 0.3, 0.3]
    assert km.success_by(4) == pytest.approx(0.4)
    assert km.median() == 5.0
    # Greenwood at t=2: 1/(5*4); the log-log bounds 0.8 ** exp(-+ z se), se = sqrt(0.05)/|ln 0.8|.
    se = math.sqrt(0.05) / abs(math.log(0.8))
    lower, upper = km.confidence_band()
    assert lower[0] == pytest.approx(0.8 ** math.exp(Z95 * se)) and upper[0] == pytest.approx(
        0.8 ** math.exp(-Z95 * se)
    )


def test_kaplan_meier_without_censoring_is_one_minus_the_empirical_cdf():
    times = np.random.default_rng(3).integers(1, 50, size=25)
    km = stats.kaplan_meier(times, np.ones(25, dtype=bool))
    grid = np.arange(0, 55, 0.5)
    assert km.survival_at(grid) == pytest.approx([(times > t).mean() for t in grid], abs=1e-12)
    assert km.success_by(grid) == pytest.approx([(times <= t).mean() for t in grid], abs=1e-12)
    # Greenwood's variance without censoring is the binomial one: var S = S (1 - S) / n.
    lower, upper = km.confidence_band()
    s = km.survival
    inner = s > 0
    se = np.sqrt((1 - s[inner]) / (25 * s[inner])) / np.abs(np.log(s[inner]))
    assert lower[inner] == pytest.approx(s[inner] ** np.exp(Z95 * se), rel=1e-10)
    assert upper[inner] == pytest.approx(s[inner] ** np.exp(-Z95 * se), rel=1e-10)
    assert (lower[~inner] == 0).all() and (upper[~inner] == 0).all()


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.integers(1, 30), min_size=1, max_size=25))
def test_without_censoring_the_median_is_the_lower_sample_median(times):
    km = stats.kaplan_meier(times, [True] * len(times))
    assert km.median() == sorted(times)[math.ceil(len(times) / 2) - 1]


def test_a_curve_that_lands_on_one_half_gives_that_time():
    # Ten single successes among 20 runs: S = 19/20 * 18/19 * ... * 10/11 = 1/2 exactly at t = 10.
    km = stats.kaplan_meier(list(range(1, 21)), [True] * 10 + [False] * 10)
    assert km.survival[9] == 0.5 and km.median() == 10.0


def test_runs_that_never_succeed_leave_the_median_unreached():
    km = stats.kaplan_meier([100, 100, 100], [False, False, False])
    assert km.times.size == 0 and km.survival_at(1e6) == 1.0
    assert km.median() is None and km.median_interval() == (None, None)
    km = stats.kaplan_meier([10, 100, 100, 100], [True, False, False, False])
    assert km.median() is None and km.median_interval()[1] is None


def risk_sets(times, observed):
    """(distinct success times, at risk, successes), counted directly from the runs."""
    out = []
    for t in sorted({t for t, o in zip(times, observed) if o}):
        out.append((t, sum(u >= t for u in times), sum(u == t and o for u, o in zip(times, observed))))
    return out


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(1, 40), st.booleans()), min_size=2, max_size=30), st.floats(0.8, 0.99))
def test_the_median_interval_inverts_the_log_log_test_and_holds_the_median(runs, level):
    """Brookmeyer-Crowley: the interval starts at the first time whose survival does not differ
    significantly from 1/2 (or is below it), and ends at the first time significantly below it."""
    times, observed = [t for t, _ in runs], [o for _, o in runs]
    km = stats.kaplan_meier(times, observed)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    s, greenwood, verdicts = 1.0, 0.0, []
    for t, r, d in risk_sets(times, observed):
        s *= 1 - d / r
        greenwood = greenwood + d / (r * (r - d)) if r > d else math.inf
        if s == 0 or math.isinf(greenwood):
            verdicts.append((t, "below"))
            continue
        stat = (math.log(-math.log(s)) - math.log(math.log(2))) / (math.sqrt(greenwood) / abs(math.log(s)))
        assume(abs(abs(stat) - z) > 1e-9)  # exactly on the boundary, rounding decides
        # log(-log S) grows as S falls: a large statistic means S significantly below 1/2.
        verdicts.append((t, "above" if stat < -z else "below" if stat > z else "same"))
    ambiguous = [t for t, v in verdicts if v != "above"]
    below = [t for t, v in verdicts if v == "below"]
    lower, upper = km.median_interval(level)
    assert lower == (float(ambiguous[0]) if ambiguous else None)
    assert upper == (float(below[0]) if below else None)
    median = km.median()
    if median is not None:
        assert lower is not None and lower <= median and (upper is None or median <= upper)
    lo, hi = km.confidence_band(level)
    assert (lo <= km.survival + 1e-12).all() and (km.survival <= hi + 1e-12).all()
    assert (np.diff(km.survival) <= 0).all()


# -- Firth's logistic fit ----------------------------------------------------------------------------------


def penalized(beta, x, k, n):
    """Firth's penalized log-likelihood, written with matrices: l(beta) + log det(X' W X) / 2."""
    X = np.column_stack([np.ones_like(x), x])
    eta = X @ beta
    p = 1 / (1 + np.exp(-eta))
    W = np.diag(n * p * (1 - p))
    loglik = np.sum(-k * np.logaddexp(0, -eta) - (n - k) * np.logaddexp(0, eta))
    return float(loglik + 0.5 * np.log(np.linalg.det(X.T @ W @ X)))


def modified_score(beta, x, k, n):
    """Firth's modified score X' (k - n p + h (1/2 - p)), h the diagonal of W^1/2 X (X'WX)^-1 X' W^1/2."""
    X = np.column_stack([np.ones_like(x), x])
    p = 1 / (1 + np.exp(-(X @ beta)))
    w = n * p * (1 - p)
    root = np.sqrt(w)[:, None] * X
    h = np.diag(root @ np.linalg.inv(X.T @ (w[:, None] * X)) @ root.T)
    return X.T @ (k - n * p + h * (0.5 - p))


DATA = [
    ([10, 20, 30, 40, 60, 80], [20, 19, 15, 8, 2, 0], [20] * 6),
    ([10, 20, 30, 40], [10, 10, 0, 0], [10] * 4),  # complete separation
    ([1, 2, 3, 4, 5], [0, 1, 3, 4, 5], [5, 5, 5, 5, 5]),  # rising
    ([5, 5, 9, 9, 14], [1, 1, 0, 1, 0], [1, 1, 1, 1, 1]),  # repeated x, one run each
]


@pytest.mark.parametrize("x, k, n", DATA)
def test_the_firth_estimate_solves_the_modified_score_equations(x, k, n):
    fit = stats.logistic_fit(x, k, n)
    x, k, n = (np.asarray(v, dtype=float) for v in (x, k, n))
    score = modified_score(np.array([fit.intercept, fit.slope]), x, k, n)
    assert np.abs(score) == pytest.approx([0, 0], abs=1e-7 * n.sum() * (1 + x.max()))
    # And it is the maximum of the penalized likelihood: no nearby point is higher.
    best = penalized(np.array([fit.intercept, fit.slope]), x, k, n)
    for step in ([1e-3, 0], [0, 1e-4], [-1e-3, 1e-5]):
        assert penalized(np.array([fit.intercept, fit.slope]) + step, x, k, n) < best


@pytest.mark.parametrize("k, n", [((7, 2), (10, 10)), ((20, 0), (20, 20)), ((0, 0), (5, 9)), ((3, 17), (20, 20))])
def test_with_two_lags_the_fit_is_the_add_a_half_share(k, n):
    """Two parameters for two groups: every hat value is 1, and the score gives p = (k + 1/2)/(n + 1)."""
    fit = stats.logistic_fit([10, 30], k, n)
    assert [fit.predict(10.0), fit.predict(30.0)] == pytest.approx(
        [(k[0] + 0.5) / (n[0] + 1), (k[1] + 0.5) / (n[1] + 1)]
    )


def test_grouped_counts_and_single_runs_give_the_same_fit():
    x, k, n = DATA[0]
    grouped = stats.logistic_fit(x, k, n)
    xs = [xi for xi, ni in zip(x, n) for _ in range(ni)]
    ks = [int(j < ki) for ki, ni in zip(k, n) for j in range(ni)]
    single = stats.logistic_fit(xs, ks, [1] * len(xs))
    assert (single.intercept, single.slope) == pytest.approx((grouped.intercept, grouped.slope), rel=1e-8)
    assert single.x50_interval == pytest.approx(grouped.x50_interval, rel=1e-7)


def test_a_symmetric_design_has_its_x50_at_the_centre_and_a_symmetric_interval():
    fit = stats.logistic_fit([10, 20, 30, 40], [10, 10, 0, 0], [10] * 4)
    assert fit.x50 == pytest.approx(25.0, abs=1e-9) and fit.slope < 0
    lower, upper = fit.x50_interval
    assert lower is not None and upper is not None
    assert 25 - lower == pytest.approx(upper - 25, rel=1e-6)
    # Separation: every run succeeds up to 20 and none from 30; the estimates stay finite, the interval inside.
    assert math.isfinite(fit.intercept) and math.isfinite(fit.slope) and 20 < lower < 25 < upper < 30
    assert fit.slope_p < 1e-6


def golden_max(f, a: float, b: float) -> float:
    """The maximum of a unimodal f between a and b by golden-section search."""
    a, b = min(a, b), max(a, b)
    g = (math.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    for _ in range(200):
        if f(c) > f(d):
            b, d = d, c
            c = b - g * (b - a)
        else:
            a, c = c, d
            d = a + g * (b - a)
    return f((a + b) / 2)


@pytest.mark.parametrize("x, k, n", DATA[:3])
def test_the_x50_bounds_are_where_the_profile_falls_by_the_chi_square_quantile(x, k, n):
    fit = stats.logistic_fit(x, k, n)
    x, k, n = (np.asarray(v, dtype=float) for v in (x, k, n))
    best = penalized(np.array([fit.intercept, fit.slope]), x, k, n)
    for bound in fit.x50_interval:
        assert bound is not None
        # Constrained to x50 = bound: b0 = -b1 * bound; maximize over b1 (of the fit's sign) by a search of its own.
        top = golden_max(
            lambda b1, c=bound: penalized(np.array([-b1 * c, b1]), x, k, n), 0.2 * fit.slope, 3 * fit.slope
        )
        assert 2 * (best - top) == pytest.approx(Z95**2, abs=1e-5)
    lower, upper = fit.x50_interval
    assert fit.x50 is not None and lower is not None and upper is not None and lower < fit.x50 < upper


def test_the_fit_moves_with_the_axis():
    x, k, n = DATA[0]
    fit = stats.logistic_fit(x, k, n)
    moved = stats.logistic_fit([2 * v + 5 for v in x], k, n)
    assert fit.x50 is not None and None not in fit.x50_interval
    assert moved.x50 == pytest.approx(2 * fit.x50 + 5, rel=1e-9)
    assert moved.x50_interval == pytest.approx([2 * b + 5 for b in fit.x50_interval if b is not None], rel=1e-7)
    assert moved.predict(2 * 33.0 + 5) == pytest.approx(fit.predict(33.0), rel=1e-9)
    assert moved.slope_p == pytest.approx(fit.slope_p, rel=1e-6)


def test_outside_the_grid_x50_is_none_and_a_flag_says_where():
    every = stats.logistic_fit([10, 20, 30], [20, 20, 20], [20, 20, 20])
    assert every.x50 is None and every.above_grid and not every.below_grid and every.x50_interval == (None, None)
    assert all(every.predict(float(x)) > 0.5 for x in (10, 20, 30))
    none = stats.logistic_fit([10, 20, 30], [0, 0, 0], [20, 20, 20])
    assert none.x50 is None and none.below_grid and not none.above_grid
    # Falling, but not to one half within the lags tried.
    late = stats.logistic_fit([10, 20, 30], [20, 19, 14], [20, 20, 20])
    assert late.slope < 0 and late.x50 is None and late.above_grid and -late.intercept / late.slope > 30


def test_flat_data_have_no_slope_and_an_unbounded_x50():
    flat = stats.logistic_fit([1, 2, 3], [5, 5, 5], [10, 10, 10])
    assert flat.slope == pytest.approx(0, abs=1e-10) and flat.slope_p == pytest.approx(1.0)
    weak = stats.logistic_fit([10, 20, 30], [12, 10, 9], [20, 20, 20])
    assert weak.x50 is not None and weak.slope_p > 0.05
    assert weak.x50_interval == (None, None)  # a slope this uncertain does not bound where it crosses 1/2


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 10), min_size=3, max_size=6))
@example([0, 0, 10])  # separated: far from the data the fit's probability rounds to exactly 1.0
def test_fits_are_monotone_and_their_intervals_hold_the_estimate(k):
    x = [10 * (i + 1) for i in range(len(k))]
    fit = stats.logistic_fit(x, k, [10] * len(k))
    p = fit.predict(np.linspace(0, 100, 41))
    assert ((0 <= p) & (p <= 1)).all()  # a probability; 0 and 1 only where float64 rounds the tail
    assert (np.diff(p) <= 0).all() or (np.diff(p) >= 0).all()
    assert 0.0 <= fit.slope_p <= 1.0
    if fit.x50 is not None:
        assert fit.x_min <= fit.x50 <= fit.x_max and fit.predict(fit.x50) == pytest.approx(0.5)
        lower, upper = fit.x50_interval
        assert (lower is None or lower < fit.x50) and (upper is None or fit.x50 < upper)
    else:
        assert fit.above_grid != fit.below_grid or fit.slope == 0


# -- arguments ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: stats.wilson(21, 20), r"successes must be a whole number from 0 to n = 20, got 21"),
        (lambda: stats.wilson(-1, 20), r"successes must be a whole number >= 0, got -1"),
        (lambda: stats.wilson(NOT_WHOLE, 20), r"successes must be a whole number >= 0, got 2.5"),
        (lambda: stats.wilson(0, 0), r"n must be a whole number >= 1, got 0"),
        (lambda: stats.wilson(1, 2, level=1.0), r"level must be a number strictly between 0 and 1 .*, got 1.0"),
        (lambda: stats.wilson(1, 2, level=95), r"level must be .*, got 95"),
        (lambda: stats.fisher_exact(3, 2, 1, 4), r"a must be a whole number from 0 to n_a = 2, got 3"),
        (lambda: stats.fisher_exact(1, 2, 1, True), r"n_b must be a whole number >= 1, got True"),
        (lambda: stats.quartiles([]), r"values must be a non-empty one-dimensional sequence"),
        (lambda: stats.quartiles([1.0, float("nan")]), r"values must hold finite numbers only"),
        (lambda: stats.quartiles([[1, 2], [3, 4]]), r"values must be a non-empty one-dimensional .* shape \(2, 2\)"),
        (lambda: stats.bootstrap_median([1, 2], resamples=0), r"resamples must be a whole number >= 1, got 0"),
        (lambda: stats.bootstrap_median([1, 2], seed=-1), r"seed must be a whole number >= 0"),
        (lambda: stats.kaplan_meier([1, -2], [True, True]), r"times must be >= 0"),
        (lambda: stats.kaplan_meier([1, 2], [1, 0]), r"observed must hold True .* or False"),
        (
            lambda: stats.kaplan_meier([1, 2], [True]),
            r"observed must have the shape of times, \(2,\), got shape \(1,\)",
        ),
        (lambda: stats.kaplan_meier([1], [True]).median_interval(0), r"level must be"),
        (lambda: stats.kaplan_meier([1], [True]).survival_at("x"), r"t must be a real number"),
        (lambda: stats.logistic_fit([1, 1], [0, 1], [1, 1]), r"x must hold at least two distinct values"),
        (lambda: stats.logistic_fit([1, 2], [0, 3], [1, 2]), r"successes must hold whole numbers from 0 to n"),
        (lambda: stats.logistic_fit([1, 2], [0, 1.5], [1, 2]), r"successes must hold whole numbers, got"),
        (lambda: stats.logistic_fit([1, 2], [0, 1], [0, 2]), r"n must hold whole numbers >= 1"),
        (lambda: stats.logistic_fit([1, 2, 3], [0, 1], [1, 2]), r"successes must have the shape of x, \(3,\)"),
        (lambda: stats.logistic_fit([1, 2], [0, 1], [1, 2], level=0), r"level must be"),
    ],
)
def test_bad_arguments_are_named_with_their_value_and_what_is_allowed(call, message):
    with pytest.raises(ValueError, match=message):
        call()

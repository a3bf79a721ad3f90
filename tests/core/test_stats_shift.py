# mypy: disable-error-code="operator, arg-type"
# (a Shift's difference and interval ends are Optional; each test asserts the ones it reads are bounded)
"""The common-slope shift of two success curves and Spearman's exact test, checked against scipy.

``rnnmem.stats`` is numpy only; scipy (a test-only dependency) gives the
references: a direct maximization of the Firth-penalized likelihood, the
chi-square distribution, ``spearmanr`` and an exact ``permutation_test``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as sps

from rnnmem import stats

LAGS = [4, 8, 12, 16, 20]
A = ([4, 8, 12, 16, 20], [20, 17, 9, 2, 0], [20] * 5)
B = ([4, 8, 12, 16, 20], [20, 20, 17, 11, 3], [20] * 5)


def firth_loglik(beta, x, k, n):
    """The Firth-penalized log-likelihood of sigma(b0 + b1 x), written out with numpy."""
    eta = beta[0] + beta[1] * x
    p = 1.0 / (1.0 + np.exp(-eta))
    w = n * p * (1.0 - p)
    info = np.array([[w.sum(), (w * x).sum()], [(w * x).sum(), (w * x * x).sum()]])
    loglik = (k * np.log(p) + (n - k) * np.log1p(-p)).sum()
    return loglik + 0.5 * math.log(np.linalg.det(info))


def direct_profile(d, a, b):
    x = np.concatenate([np.asarray(a[0], float) - d, np.asarray(b[0], float)])
    k = np.concatenate([a[1], b[1]]).astype(float)
    n = np.concatenate([a[2], b[2]]).astype(float)
    best = optimize.minimize(
        lambda t: -firth_loglik(t, x, k, n),
        [3.0, -0.2],
        method="Nelder-Mead",
        options=dict(xatol=1e-10, fatol=1e-12, maxiter=20000),
    )
    return -best.fun


def profile(d, a, b):
    arm_a = (np.asarray(a[0], float), np.asarray(a[1], float), np.asarray(a[2], float))
    arm_b = (np.asarray(b[0], float), np.asarray(b[1], float), np.asarray(b[2], float))
    pooled = np.concatenate([arm_a[0], arm_b[0]])
    return stats._shift_profile(arm_a, arm_b, d, float(pooled.mean()), float(pooled.std()))


@pytest.mark.parametrize("d", [-6.0, -3.3, 0.0, 2.5])
def test_the_profile_is_the_firth_penalized_likelihood_maximized_directly(d):
    assert profile(d, A, B) == pytest.approx(direct_profile(d, A, B), abs=1e-6)


def test_the_estimate_maximizes_the_profile_and_the_test_is_chi_square_on_one_df():
    s = stats.lag_shift(*A, *B)
    best = profile(s.difference, A, B)
    for step in (-0.05, 0.05):
        assert profile(s.difference + step, A, B) < best
    assert s.statistic == pytest.approx(2 * (best - profile(0.0, A, B)), rel=1e-9)
    assert s.p == pytest.approx(sps.chi2.sf(s.statistic, 1), rel=1e-9)
    assert s.difference < 0 and s.p < 0.001  # arm a fails at shorter lags than arm b


@pytest.mark.parametrize("level", [0.95, 0.8])
def test_the_interval_ends_satisfy_the_profile_condition(level):
    s = stats.lag_shift(*A, *B, level=level)
    best = profile(s.difference, A, B)
    lo, hi = s.interval
    assert lo < s.difference < hi
    for end in (lo, hi):
        assert 2 * (best - profile(end, A, B)) == pytest.approx(sps.chi2.ppf(level, 1), abs=1e-6)
    wide = stats.lag_shift(*A, *B, level=0.99)
    assert wide.interval[0] < lo and wide.interval[1] > hi or level == 0.99


def test_swapping_the_arms_negates_the_shift_and_keeps_the_test():
    ab, ba = stats.lag_shift(*A, *B), stats.lag_shift(*B, *A)
    assert ba.difference == pytest.approx(-ab.difference, abs=1e-6)
    assert ba.interval[0] == pytest.approx(-ab.interval[1], abs=1e-6)
    assert ba.statistic == pytest.approx(ab.statistic, rel=1e-6)


def test_moving_one_arms_lags_moves_the_shift_by_as_much():
    moved = ([x + 5 for x in A[0]], A[1], A[2])
    s, t = stats.lag_shift(*A, *B), stats.lag_shift(*moved, *B)
    assert t.difference == pytest.approx(s.difference + 5, abs=1e-5)
    both = ([x + 100 for x in A[0]], A[1], A[2], [x + 100 for x in B[0]], B[1], B[2])
    assert stats.lag_shift(*both).difference == pytest.approx(s.difference, abs=1e-5)


def test_two_arms_with_the_same_counts_are_one_curve():
    s = stats.lag_shift(*A, *A)
    assert abs(s.difference) < 1e-6 and s.statistic < 1e-9 and s.p == pytest.approx(1.0)


def test_arms_at_different_lags_and_a_separated_arm_are_fitted():
    # the lab's long budget: b_f = 1 jumps from 20/20 to 0/20, b_f = 0 has 6/20 at its first lag
    s = stats.lag_shift([8, 24, 40], [20, 0, 0], [20] * 3, [8, 24, 40], [6, 0, 0], [20] * 3)
    assert s.difference > 0 and s.interval[0] > 0 and s.p < 0.001
    t = stats.lag_shift([4, 8], [20, 0], [20] * 2, [4, 8, 12, 16], [20, 20, 10, 0], [20] * 4)
    assert t.difference < 0 and t.interval[1] < 0


def test_an_arm_without_a_transition_bounds_the_shift_on_one_side_only():
    s = stats.lag_shift([4, 8, 12], [20, 20, 20], [20] * 3, [4, 8, 12], [20, 10, 0], [20] * 3)
    assert s.interval[0] > 0 and s.interval[1] is None and s.p < 0.001


@pytest.mark.parametrize(
    "args, name",
    [
        (([4, 8], [20, 21], [20, 20], [4, 8], [3, 0], [20, 20]), "successes_a"),
        (([4, 8], [20, 0], [20, 20], [4, 4], [3, 0], [20, 20]), "x_b"),
        (([4, 8], [20, 0], [20, 20], [4, 8], [3], [20, 20]), "successes_b"),
    ],
)
def test_a_bad_arm_fails_naming_it(args, name):
    with pytest.raises(ValueError, match=name):
        stats.lag_shift(*args)


def test_a_bad_level_fails_naming_it():
    with pytest.raises(ValueError, match="level"):
        stats.lag_shift(*A, *B, level=1.5)


# -- Spearman


def exact_permutation_p(x, y, alternative):
    def rho(yy):
        return sps.spearmanr(x, yy).statistic

    res = sps.permutation_test((y,), rho, permutation_type="pairings", n_resamples=np.inf, alternative=alternative)
    return res.pvalue


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_spearman_is_scipys_with_its_exact_permutation_p(seed, alternative):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 8))
    x = rng.integers(0, 5, n).astype(float) if seed % 2 else rng.normal(size=n)
    y = x + rng.normal(size=n) if seed % 3 else rng.integers(0, 4, n).astype(float)
    if np.unique(x).size < 2 or np.unique(y).size < 2:
        x[0], y[0] = x[0] + 10, y[0] - 10
    rho, p = stats.spearman(x, y, alternative)
    assert rho == pytest.approx(sps.spearmanr(x, y).statistic, abs=1e-12)
    assert p == pytest.approx(exact_permutation_p(x, y, alternative), rel=1e-9)


def test_a_perfect_order_of_four_has_a_p_of_one_in_twenty_four():
    rho, p = stats.spearman([6.6, 14.7, 36.3, 100.0], [6, 10, 15, 17], "greater")
    assert rho == 1.0 and p == pytest.approx(1 / 24)
    assert stats.spearman([6.6, 14.7, 36.3, 100.0], [6, 10, 15, 17])[1] == pytest.approx(2 / 24)
    assert stats.spearman([1, 2, 3, 4], [4, 3, 2, 1], "less") == (-1.0, pytest.approx(1 / 24))


def test_spearman_at_ten_values_is_scipys():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=10), rng.normal(size=10)
    rho, p = stats.spearman(x, y, "greater")
    assert rho == pytest.approx(sps.spearmanr(x, y).statistic)
    # no ties: the exact null of rho has a closed-form reference in scipy's exact method for n <= 9 only,
    # so compare with a large Monte Carlo permutation test
    ref = sps.permutation_test(
        (y,),
        lambda yy: sps.spearmanr(x, yy).statistic,
        permutation_type="pairings",
        n_resamples=20000,
        alternative="greater",
        rng=1,
    ).pvalue
    assert abs(p - ref) < 0.02


@pytest.mark.parametrize(
    "x, y, alternative, name",
    [
        ([1, 2], [1, 2], "greater", "x"),
        ([1, 2, 3], [1, 2], "greater", "y"),
        (list(range(11)), list(range(11)), "greater", "x"),
        ([1, 2, 3], [1, 2, 3], "up", "alternative"),
        ([1, 1, 1], [1, 2, 3], "greater", "x"),
    ],
)
def test_spearman_refuses_bad_input_naming_it(x, y, alternative, name):
    with pytest.raises(ValueError, match=name):
        stats.spearman(x, y, alternative)


# -- several arms at once


@pytest.mark.parametrize("df", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("x", [0.0, 0.01, 0.7, 2.0, 3.841, 9.5, 40.0, 250.0])
def test_the_chi_square_survival_function_is_scipys(x, df):
    assert stats.chi2_sf(x, df) == pytest.approx(sps.chi2.sf(x, df), rel=1e-9, abs=1e-300)


def test_two_arms_at_once_are_the_pairwise_shift():
    s, joint = stats.lag_shift(*A, *B), stats.lag_shifts([B, A])
    assert joint.df == 1 and joint.differences[0] == 0.0
    assert joint.differences[1] == pytest.approx(s.difference, abs=1e-5)
    assert joint.statistic == pytest.approx(s.statistic, rel=1e-6) and joint.p == pytest.approx(s.p, rel=1e-5)


def joint_profile(d, arms):
    """The common-slope profile at shifts d, maximized directly with scipy."""
    x = np.concatenate([np.asarray(a[0], float) - dm for a, dm in zip(arms, d)])
    k = np.concatenate([a[1] for a in arms]).astype(float)
    n = np.concatenate([a[2] for a in arms]).astype(float)
    best = optimize.minimize(
        lambda t: -firth_loglik(t, x, k, n),
        [3.0, -0.2],
        method="Nelder-Mead",
        options=dict(xatol=1e-10, fatol=1e-12, maxiter=20000),
    )
    return -best.fun


def test_three_arms_are_tested_on_two_degrees_of_freedom_at_the_maximum():
    C = ([4, 8, 12, 16, 20], [20, 20, 20, 16, 8], [20] * 5)
    arms = [A, B, C]
    joint = stats.lag_shifts(arms)
    d = list(joint.differences)
    assert d[0] == 0.0 and 0 < d[1] < d[2]  # A's curve first, then B's, then C's
    best = joint_profile(d, arms)
    assert joint.statistic == pytest.approx(2 * (best - joint_profile([0.0] * 3, arms)), rel=1e-5)
    for m in (1, 2):
        for step in (-0.1, 0.1):
            moved = d[:m] + [d[m] + step] + d[m + 1 :]
            assert joint_profile(moved, arms) < best
    assert joint.df == 2 and joint.p == pytest.approx(sps.chi2.sf(joint.statistic, 2), rel=1e-9)
    same = stats.lag_shifts([A, A, A])
    assert same.statistic < 1e-8 and same.p == pytest.approx(1.0)


@pytest.mark.parametrize(
    "arms, name",
    [
        ([A], "arms"),
        ("abc", "arms"),
        ([A, ([4, 8], [1, 2])], r"arms\[1\]"),
        ([A, ([4, 8], [1, 30], [20, 20])], "successes_1"),
    ],
)
def test_bad_arms_fail_naming_them(arms, name):
    with pytest.raises(ValueError, match=name):
        stats.lag_shifts(arms)


@pytest.mark.parametrize("x, df, name", [(-1.0, 1, "statistic"), (math.inf, 1, "statistic"), (1.0, 0, "df")])
def test_a_bad_chi_square_argument_fails_naming_it(x, df, name):
    with pytest.raises(ValueError, match=name):
        stats.chi2_sf(x, df)

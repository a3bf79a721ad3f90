r"""The statistics the lab reports: intervals for counts and times, tests of counts and ranks, power, a dose-response fit.

The lab trains 20 or more seeds per cell and reads, for each, whether and when
it succeeded. This module turns those readings into the numbers a chapter
states, each with its uncertainty:

* :func:`wilson`: a confidence interval for a share of successes (Wilson 1927);
* :func:`fisher_exact`: the two-sided p-value of Fisher's exact test on two
  counts, computed in exact integer arithmetic, so it is the same on every
  processor;
* :func:`sign_test` and :func:`wilcoxon_signed_rank`: paired tests on one
  value per seed, the exact binomial sign test and Wilcoxon's signed-rank
  test (exact without ties, normal with the tie correction otherwise);
* :func:`quartiles` and :func:`bootstrap_median`: the spread of a sample and an
  interval for its median (the percentile bootstrap, seeded);
* :func:`kaplan_meier`: the share of runs still without success after ``t``
  updates, when some runs never succeed within the budget (censored times),
  with its median and the median's interval (Brookmeyer and Crowley 1982);
* :func:`logistic_fit`: the share of successes against the lag, a logistic
  curve fitted by Firth's penalized likelihood (Firth 1993; Heinze and
  Schemper 2002), and the lag :math:`x_{50}` at which it crosses one half,
  with a profile-likelihood interval;
* :func:`mann_whitney`: the two-sided Mann-Whitney (rank-sum) test of two
  samples of a continuous outcome, exact when it can be, normal otherwise;
* :func:`stratified_exact`: the exact test of a common odds ratio of one over
  several two-by-two strata (Birch 1964, the exact Cochran-Mantel-Haenszel
  test), in exact integer arithmetic;
* :func:`newcombe` and :func:`equivalence`: Newcombe's interval for the
  difference of two shares (Newcombe 1998, method 10) and the two one-sided
  tests of equivalence within a margin that it carries out;
* :func:`fisher_power` and :func:`detectable_difference`: the exact power of
  Fisher's test against two rates, and the smallest difference it detects.

Normal quantiles come from :class:`statistics.NormalDist`; nothing here needs
scipy. No function calls BLAS or LAPACK (the two-by-two systems of the fit are
solved in closed form), so the numbers do not depend on the BLAS kernel.
Every function raises :class:`ValueError` naming the argument, its value and
what is allowed.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Any

import numpy as np

from .checks import (
    _show,
    check_nonnegative_int,
    check_positive_int,
    check_seed,
)
from .memory import sigmoid

__all__ = [
    "wilson",
    "fisher_exact",
    "sign_test",
    "Wilcoxon",
    "wilcoxon_signed_rank",
    "bootstrap_median",
    "quartiles",
    "KaplanMeier",
    "kaplan_meier",
    "LogisticFit",
    "logistic_fit",
    "MannWhitney",
    "mann_whitney",
    "stratified_exact",
    "newcombe",
    "Equivalence",
    "equivalence",
    "fisher_power",
    "detectable_difference",
    "Shift",
    "lag_shift",
    "spearman",
    "Shifts",
    "lag_shifts",
    "chi2_sf",
]


# -- argument checks -------------------------------------------------------------------------------------


def _level(level: Any) -> float:
    """A confidence level strictly inside (0, 1)."""
    ok = isinstance(level, (int, float, np.integer, np.floating)) and not isinstance(level, (bool, np.bool_))
    if not ok or not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be a number strictly between 0 and 1 (0.95 for 95%), got {_show(level)}")
    return float(level)


def _z(level: float) -> float:
    """The two-sided standard normal quantile of ``level``: 1.96 for 0.95."""
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def _count(name: str, successes: Any, trials_name: str, trials: Any) -> tuple[int, int]:
    """(successes, trials): whole numbers with 0 <= successes <= trials and trials >= 1."""
    n = check_positive_int(trials_name, trials)
    k = check_nonnegative_int(name, successes)
    if k > n:
        raise ValueError(f"{name} must be a whole number from 0 to {trials_name} = {n}, got {_show(successes)}")
    return k, n


def _sample(name: str, values: Any) -> np.ndarray:
    """A non-empty one-dimensional array of finite real numbers, as float64."""
    arr = np.asarray(values) if not isinstance(values, (str, bytes)) else np.asarray([values])
    if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
        raise ValueError(f"{name} must be a one-dimensional sequence of real numbers, got {_show(values)}")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"{name} must be a non-empty one-dimensional sequence of numbers, got shape {arr.shape}: {_show(values)}"
        )
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must hold finite numbers only, got {_show(values)}")
    return arr


# -- a share of successes ----------------------------------------------------------------------------------


def wilson(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    r"""The Wilson score interval for a proportion (Wilson 1927): ``successes`` of ``n``, at ``level``.

    The interval is the set of :math:`p` that a two-sided score test at
    ``level`` does not reject, with :math:`\hat p = k/n` and :math:`z` the
    normal quantile (1.96 at 95%):

    .. math::
        \frac{\hat p + z^2/2n \pm z\sqrt{\hat p(1-\hat p)/n + z^2/4n^2}}{1 + z^2/n}.

    Unlike the textbook :math:`\hat p \pm z\sqrt{\hat p(1-\hat p)/n}`, it stays
    inside [0, 1] and does not shrink to a point at 0 or ``n`` successes; the
    bounds are exactly 0 when ``successes`` is 0 and exactly 1 when it is
    ``n``. It always contains :math:`\hat p`.

    >>> [round(b, 3) for b in wilson(15, 20)]
    [0.531, 0.888]
    >>> wilson(0, 20)[0], wilson(20, 20)[1]
    (0.0, 1.0)
    """
    k, n = _count("successes", successes, "n", n)
    z = _z(_level(level))
    p = k / n
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denominator
    lower = 0.0 if k == 0 else min(max(centre - half, 0.0), p)
    upper = 1.0 if k == n else max(min(centre + half, 1.0), p)
    return lower, upper


# -- two shares compared -----------------------------------------------------------------------------------


def fisher_exact(a: int, n_a: int, b: int, n_b: int) -> float:
    r"""Two-sided p-value of Fisher's exact test: ``a`` successes of ``n_a`` against ``b`` of ``n_b``.

    With the margins fixed (``a + b`` successes among ``n_a + n_b`` runs), the
    number of successes in the first group is hypergeometric,
    :math:`P(x) = \binom{n_a}{x}\binom{n_b}{a+b-x} / \binom{n_a+n_b}{a+b}`.
    The p-value is the sum of :math:`P(x)` over every table no more probable
    than the one observed, :math:`P(x) \le P(a)\,(1 + 10^{-7})` (R's
    ``fisher.test`` and its relative tolerance). The sum is exact (integers,
    each table's :math:`\binom{n_a}{x}\binom{n_b}{a+b-x}` from the one before
    by an exact recurrence, and one :class:`fractions.Fraction`), rounded once
    to a float, so it is identical on every processor; counts pooled over
    seeds, in the thousands, take milliseconds. Each group needs at least one
    run (``n_a``, ``n_b`` >= 1).

    Fisher's tea-tasting table (3 of 4 against 1 of 4) gives 34/70:

    >>> round(fisher_exact(3, 4, 1, 4), 4)
    0.4857
    >>> f"{fisher_exact(20, 20, 5, 20):.1e}"
    '7.7e-07'
    """
    a, n_a = _count("a", a, "n_a", n_a)
    b, n_b = _count("b", b, "n_b", n_b)
    weights = _hypergeometric_weights(n_a, n_b, a + b)
    observed = weights[a - max(0, a + b - n_b)]
    # P(x) <= P(a) (1 + 1e-7), multiplied through by 10**7 C(N, m) to stay in integers.
    tail = sum(w for w in weights if w * 10**7 <= observed * (10**7 + 1))
    return float(Fraction(tail, math.comb(n_a + n_b, a + b)))


def _hypergeometric_weights(n_a: int, n_b: int, m: int) -> list[int]:
    r"""The integers :math:`\binom{n_a}{x}\binom{n_b}{m-x}` for every possible ``x``, smallest ``x`` first.

    Each from the one before by the exact recurrence
    :math:`w_{x+1} = w_x \, (n_a - x)(m - x) / ((x + 1)(n_b - m + x + 1))`, whose
    division leaves no remainder: one product and one division of a large
    integer by a small one per table, where :func:`math.comb` of each would
    cost a product per factor (the same integers, thousands of times faster
    for counts in the thousands).

    >>> _hypergeometric_weights(4, 4, 4) == [math.comb(4, x) * math.comb(4, 4 - x) for x in range(5)]
    True
    """
    low = max(0, m - n_b)
    w = math.comb(n_a, low) * math.comb(n_b, m - low)
    out = [w]
    for x in range(low, min(n_a, m)):
        w = w * ((n_a - x) * (m - x)) // ((x + 1) * (n_b - m + x + 1))
        out.append(w)
    return out


# -- a sample of times --------------------------------------------------------------------------------------


def sign_test(positive: int, n: int) -> float:
    r"""Two-sided p-value of the exact sign test: ``positive`` of ``n`` paired differences above zero.

    Under the null hypothesis each non-zero difference is positive with
    probability 1/2, so the count is binomial, :math:`P(k) = \binom{n}{k} / 2^n`.
    The p-value is the sum of :math:`P(i)` over every count no more probable
    than the one observed, :math:`\binom{n}{i} \le \binom{n}{k}` (the
    convention of R's ``binom.test`` and of ``scipy.stats.binomtest(k, n,
    0.5)``), which at 1/2 is :math:`\min(1, 2 P(X \le \min(k, n - k)))`.
    Zero differences are the caller's to drop before counting: ``n`` is the
    number of non-zero ones. The sum is exact (integers and one
    :class:`fractions.Fraction`), rounded once to a float. The smallest
    p-value ``n`` pairs can give is :math:`2^{1-n}`: about
    :math:`1.9 \times 10^{-6}` for 20.

    Arbuthnot (1710) found more boys than girls christened in London in each
    of 82 years, and put the chance of that, one way, at :math:`2^{-82}`:

    >>> sign_test(82, 82) == 2 * 2.0**-82
    True
    >>> round(sign_test(13, 15), 5), sign_test(10, 20)
    (0.00739, 1.0)
    """
    k, n = _count("positive", positive, "n", n)
    weight = math.comb(n, k)
    tail = sum(math.comb(n, i) for i in range(n + 1) if math.comb(n, i) <= weight)
    return float(Fraction(tail, 2**n))


@dataclass(frozen=True)
class Wilcoxon:
    """The result of :func:`wilcoxon_signed_rank`.

    ``statistic`` is the smaller of the two rank sums :math:`\\min(R^+, R^-)`
    (what ``scipy.stats.wilcoxon`` reports for a two-sided test), ``p`` the
    two-sided p-value, ``method`` ``"exact"`` or ``"normal"``, ``n`` the number
    of non-zero differences ranked and ``r_plus`` the sum of the ranks of the
    positive ones (:math:`R^- = n(n+1)/2 - R^+`).
    """

    statistic: float
    p: float
    method: str
    n: int
    r_plus: float


def wilcoxon_signed_rank(differences: Any) -> Wilcoxon:
    r"""The Wilcoxon signed-rank test (Wilcoxon 1945), two-sided, of paired ``differences`` about zero.

    Zero differences are dropped (Wilcoxon's own rule, ``zero_method="wilcox"``
    in scipy), the :math:`n` others ranked by absolute value, tied ones given
    the mean of their ranks, and :math:`R^+` is the sum of the ranks of the
    positive ones. Under the null hypothesis (differences symmetric about
    zero) each rank is positive or negative with probability 1/2.

    * With no ties among the :math:`|d|` and :math:`n \le 50`, the p-value is
      exact: :math:`2 P(T \le \min(R^+, R^-))`, at most 1, where the number of
      the :math:`2^n` sign patterns with each rank sum comes from an integer
      recursion over the ranks; the sum is a :class:`fractions.Fraction`
      rounded once to a float.
    * Otherwise, the normal approximation with the tie correction and without
      a continuity correction:
      :math:`z = (R^+ - n(n+1)/4) / \sigma`,
      :math:`\sigma^2 = (n(n+1)(2n+1) - \tfrac12 \sum_g (t_g^3 - t_g)) / 24`
      over the groups of :math:`t_g` tied :math:`|d|`, and
      :math:`p = 2\Phi(-|z|)`.

    These are the p-values of ``scipy.stats.wilcoxon(d, zero_method="wilcox",
    method="exact")`` and ``method="asymptotic"`` (its default
    ``correction=False``) respectively, which is what ``method="auto"`` picks
    for samples without ties or zeros of at most 50. Differences that are all
    zero leave nothing to rank: ``n`` is 0 and ``p`` is 1 (scipy returns NaN).
    The smallest p-value 20 pairs can give is :math:`2^{-19}`, about
    :math:`1.9 \times 10^{-6}`, when all 20 differences have the same sign.

    Darwin's 15 pairs of cross- and self-fertilized *Zea mays* (Fisher 1935,
    §17), the differences in eighths of an inch: the two negative ones have
    ranks 10 and 14, so :math:`R^- = 24`, and the exact two-sided p-value is
    1352/32768:

    >>> d = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]
    >>> result = wilcoxon_signed_rank(d)
    >>> result.statistic, result.method, result.p == 1352 / 32768
    (24.0, 'exact', True)
    """
    d = _sample("differences", differences)
    d = d[d != 0.0]
    n = int(d.size)
    if n == 0:
        return Wilcoxon(statistic=0.0, p=1.0, method="exact", n=0, r_plus=0.0)
    ranks, ties = _midranks(np.abs(d))
    r_plus = float(ranks[d > 0].sum())
    total = n * (n + 1) / 2
    statistic = min(r_plus, total - r_plus)
    if n <= 50 and all(t == 1 for t in ties):
        counts = _rank_sum_counts(n)
        tail = sum(counts[: int(statistic) + 1])
        p = float(min(Fraction(1), Fraction(2 * tail, 2**n)))
        return Wilcoxon(statistic=statistic, p=p, method="exact", n=n, r_plus=r_plus)
    variance = (n * (n + 1) * (2 * n + 1) - sum(t**3 - t for t in ties) / 2) / 24
    z = (r_plus - total / 2) / math.sqrt(variance)
    p = min(1.0, 2.0 * NormalDist().cdf(-abs(z)))
    return Wilcoxon(statistic=statistic, p=p, method="normal", n=n, r_plus=r_plus)


def _midranks(values: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """The ranks of ``values`` from 1, tied values given the mean of their ranks, and the size of each group of ties.

    >>> _midranks(np.array([3.0, 1.0, 3.0, 2.0]))
    (array([3.5, 1. , 3.5, 2. ]), [1, 1, 2])
    """
    order = np.argsort(values, kind="stable")
    ranks = np.empty(values.size, dtype=np.float64)
    ties = []
    start = 0
    while start < values.size:
        stop = start + 1
        while stop < values.size and values[order[stop]] == values[order[start]]:
            stop += 1
        ranks[order[start:stop]] = (start + 1 + stop) / 2
        ties.append(stop - start)
        start = stop
    return ranks, ties


def _rank_sum_counts(n: int) -> list[int]:
    """How many of the :math:`2^n` subsets of the ranks 1..n have each sum 0..n(n+1)/2: exact integers.

    >>> _rank_sum_counts(3)
    [1, 1, 1, 2, 1, 1, 1]
    """
    counts = [1] + [0] * (n * (n + 1) // 2)
    for rank in range(1, n + 1):
        for s in range(len(counts) - 1, rank - 1, -1):
            counts[s] += counts[s - rank]
    return counts


def quartiles(values: Any) -> tuple[float, float, float]:
    """The first quartile, the median and the third quartile of ``values``.

    Computed by :func:`numpy.quantile` with its default method, ``"linear"``
    (Hyndman and Fan's type 7, R's default as well): the quantile at
    :math:`q` interpolates linearly between the order statistics around
    position :math:`q(n-1)`, counted from 0.

    >>> quartiles([1, 2, 3, 4, 5, 6, 7, 8])
    (2.75, 4.5, 6.25)
    """
    arr = _sample("values", values)
    q1, q2, q3 = np.quantile(arr, [0.25, 0.5, 0.75])
    return float(q1), float(q2), float(q3)


def bootstrap_median(
    values: Any, level: float = 0.95, resamples: int = 2000, seed: Any = 0
) -> tuple[float, float, float]:
    """The median of ``values`` and a percentile bootstrap interval for it: (median, lower, upper).

    ``resamples`` samples of the same size are drawn from ``values`` with
    replacement by a :class:`numpy.random.Generator` made from ``seed``
    (:func:`rnnmem.checks.check_seed`; the default 0 makes the interval
    deterministic), and the interval runs between the ``(1 - level)/2`` and
    ``(1 + level)/2`` quantiles of their medians (Efron and Tibshirani 1993,
    ch. 13; quantiles by numpy's default linear method). The percentile
    interval of a median is coarse for small samples: its bounds are sample
    values or midpoints of two, and it need not be centred on the median.

    >>> median, lower, upper = bootstrap_median([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5])
    >>> median, lower <= median <= upper
    (4.0, True)
    """
    arr = _sample("values", values)
    level = _level(level)
    resamples = check_positive_int("resamples", resamples)
    rng = check_seed("seed", seed)
    medians = np.median(arr[rng.integers(0, arr.size, size=(resamples, arr.size))], axis=1)
    lower, upper = np.quantile(medians, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return float(np.median(arr)), float(lower), float(upper)


# -- times to success, some never reached: Kaplan-Meier -----------------------------------------------------


def _reals(name: str, value: Any) -> Any:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_ or np.isnan(arr).any():
        raise ValueError(f"{name} must be a real number or an array of them (not NaN), got {_show(value)}")
    return arr.astype(np.float64)


def _exact_survival(at_risk: np.ndarray, events: np.ndarray) -> list[Fraction]:
    """The survival after each time as an exact fraction, the running product of (n_j - d_j)/n_j."""
    out, s = [], Fraction(1)
    for r, d in zip(at_risk.tolist(), events.tolist()):
        s *= Fraction(r - d, r)
        out.append(s)
    return out


@dataclass(frozen=True, eq=False)
class KaplanMeier:
    r"""A Kaplan-Meier estimate of :math:`S(t)`, the share of runs without success after ``t`` updates.

    ``times`` are the distinct times at which at least one run succeeded,
    increasing; ``survival[j]`` is :math:`S` just after ``times[j]``;
    ``at_risk[j]`` is the number of runs not yet succeeded and not censored
    before ``times[j]`` (a run censored at ``times[j]`` counts as at risk
    there); ``events[j]`` is how many succeeded at ``times[j]``; ``n`` is the
    number of runs. :math:`S(t) = 1` before the first time.
    """

    times: np.ndarray
    survival: np.ndarray
    at_risk: np.ndarray
    events: np.ndarray
    n: int

    def survival_at(self, t: Any) -> Any:
        """:math:`S(t)`, the estimated share of runs without success after ``t`` updates (a step function).

        A scalar gives a float, an array an array.

        >>> km = kaplan_meier([2, 3, 3, 5, 8], [True, True, False, True, False])
        >>> km.survival_at(1), km.survival_at(3), km.survival_at([5, 100]).tolist()
        (1.0, 0.6, [0.3, 0.3])
        """
        arr = _reals("t", t)
        values = np.concatenate([[1.0], self.survival])[np.searchsorted(self.times, arr, side="right")]
        return float(values) if arr.ndim == 0 and not isinstance(t, np.ndarray) else values

    def success_by(self, t: Any) -> Any:
        """:math:`1 - S(t)`: the estimated share of runs that have succeeded by ``t`` updates.

        >>> kaplan_meier([2, 3, 3, 5, 8], [True, True, False, True, False]).success_by(3)
        0.4
        """
        return 1.0 - self.survival_at(t)

    def median(self) -> float | None:
        """The median time to success: the first time at which :math:`S(t) \\le 1/2`, or None if it never is.

        The comparison is exact (the survival as a fraction), so a curve that
        lands on one half exactly takes that time. (R's ``survfit`` takes the
        midpoint to the next time in that case; this module does not.)

        >>> kaplan_meier([2, 3, 3, 5, 8], [True, True, False, True, False]).median()
        5.0
        >>> kaplan_meier([4, 9, 9], [True, False, False]).median() is None
        True
        """
        for t, s in zip(self.times.tolist(), _exact_survival(self.at_risk, self.events)):
            if s <= Fraction(1, 2):
                return float(t)
        return None

    def confidence_band(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        r"""Pointwise (lower, upper) bounds of :math:`S` at each of ``times``, on the log-log scale.

        Greenwood's variance, :math:`\sum_{t_i \le t} d_i / (n_i (n_i - d_i))`
        for :math:`\widehat{\operatorname{var}} \log S(t)`, gives the standard
        error of :math:`\log(-\log S)` as its square root over
        :math:`|\log S|`, and the bounds :math:`S^{\exp(\pm z\,\mathrm{se})}`
        (Kalbfleisch and Prentice 1980; R's ``conf.type = "log-log"``). They
        stay inside [0, 1]. Where :math:`S = 0` (every run left has succeeded)
        both bounds are 0.

        >>> lower, upper = kaplan_meier([2, 3, 3, 5, 8], [True, True, False, True, False]).confidence_band()
        >>> lower.round(3).tolist(), upper.round(3).tolist()
        ([0.204, 0.126, 0.012], [0.969, 0.882, 0.719])
        """
        z = _z(_level(level))
        lower, upper, greenwood = [], [], 0.0
        for s, r, d in zip(self.survival.tolist(), self.at_risk.tolist(), self.events.tolist()):
            if r == d:
                greenwood = math.inf
            else:
                greenwood += d / (r * (r - d))
            if s == 0.0 or math.isinf(greenwood):
                lower.append(0.0)
                upper.append(0.0)
                continue
            se = math.sqrt(greenwood) / abs(math.log(s))
            lower.append(s ** math.exp(z * se))
            upper.append(s ** math.exp(-z * se))
        return np.array(lower), np.array(upper)

    def median_interval(self, level: float = 0.95) -> tuple[float | None, float | None]:
        """A confidence interval for :meth:`median` by the method of Brookmeyer and Crowley (1982).

        The interval holds the times whose survival is not significantly
        different from one half, read off the log-log band
        (:meth:`confidence_band`) as R's ``survival`` package does: the lower
        bound is the first time the band's lower curve is at or below one half,
        the upper bound the first time its upper curve is. A bound the data
        never reach is None ("not reached"): with few successes the upper
        bound, and with none, both.

        >>> km = kaplan_meier([3, 4, 5, 6, 7, 8, 9, 10, 12, 15], [True] * 8 + [False] * 2)
        >>> km.median(), km.median_interval()
        (7.0, (3.0, 10.0))
        """
        lower, upper = self.confidence_band(level)
        times = self.times.tolist()
        low = next((t for t, v in zip(times, lower.tolist()) if v <= 0.5), None)
        high = next((t for t, v in zip(times, upper.tolist()) if v <= 0.5), None)
        return (None if low is None else float(low)), (None if high is None else float(high))


def kaplan_meier(times: Any, observed: Any) -> KaplanMeier:
    """The Kaplan-Meier estimate (Kaplan and Meier 1958) of the share of runs without success after ``t`` updates.

    ``times[i]`` is when run ``i`` succeeded (``observed[i]`` True) or, for a
    run that never succeeded within its budget, the budget it was given
    (``observed[i]`` False: censored, known only to be longer). At each
    distinct time :math:`t_j` of success, with :math:`n_j` runs at risk and
    :math:`d_j` succeeding, :math:`S(t) = \\prod_{t_j \\le t} (1 - d_j/n_j)`.
    A run censored at a time of success counts as at risk there. Times must be
    finite and >= 0; ``observed`` holds booleans.

    >>> km = kaplan_meier([2, 3, 3, 5, 8], [True, True, False, True, False])
    >>> km.times.tolist(), km.at_risk.tolist(), km.events.tolist(), km.survival.round(2).tolist()
    ([2.0, 3.0, 5.0], [5, 4, 2], [1, 1, 1], [0.8, 0.6, 0.3])
    """
    t = _sample("times", times)
    if (t < 0).any():
        raise ValueError(f"times must be >= 0 (updates until success), got {_show(times)}")
    obs = np.asarray(observed)
    if obs.dtype != np.bool_:
        raise ValueError(f"observed must hold True (succeeded) or False (censored) values, got {_show(observed)}")
    if obs.shape != t.shape:
        raise ValueError(f"observed must have the shape of times, {t.shape}, got shape {obs.shape}")
    event_times = np.unique(t[obs])
    at_risk = np.array([int((t >= u).sum()) for u in event_times], dtype=np.int64)
    events = np.array([int(((t == u) & obs).sum()) for u in event_times], dtype=np.int64)
    # Exact products, rounded once: a curve that reaches 1/2 is 0.5, not one ulp off it.
    survival = np.array([float(v) for v in _exact_survival(at_risk, events)], dtype=np.float64)
    for arr in (event_times, survival, at_risk, events):
        arr.setflags(write=False)
    return KaplanMeier(event_times, survival, at_risk, events, int(t.size))


# -- a share of successes against the lag: Firth's logistic regression ------------------------------------


@dataclass(frozen=True)
class LogisticFit:
    r"""A logistic curve :math:`p(x) = \sigma(b_0 + b_1 x)` fitted by Firth's penalized likelihood.

    ``intercept`` and ``slope`` are :math:`b_0, b_1` in the units of ``x``.
    ``x50`` is :math:`-b_0/b_1`, the ``x`` at which :math:`p = 1/2`, when it
    lies within the ``x`` tried (between ``x_min`` and ``x_max``); otherwise
    None, and one flag says where the curve is:

    * ``above_grid``: the fitted :math:`p` is above one half at every ``x``
      tried (success at every lag, say). For a success that falls with ``x``,
      as the lab's does with the lag, its 50% point lies beyond the longest
      ``x`` tried.
    * ``below_grid``: the fitted :math:`p` is below one half at every ``x``
      tried: the 50% point lies before the shortest ``x`` (for a success that
      falls with ``x``).

    ``x50_interval`` is the ``level`` profile penalized-likelihood interval for
    :math:`x_{50}` (None, None when ``x50`` is None; a bound is None when the
    profile never leaves the interval on that side, that is the data do not
    bound :math:`x_{50}` there). ``slope_p`` is the two-sided p-value of the
    penalized likelihood-ratio test of :math:`b_1 = 0` (no change with
    ``x``). ``iterations`` counts the Newton steps of the fit.
    """

    intercept: float
    slope: float
    x50: float | None
    x50_interval: tuple[float | None, float | None]
    below_grid: bool
    above_grid: bool
    slope_p: float
    level: float
    x_min: float
    x_max: float
    iterations: int

    def predict(self, x: Any) -> Any:
        """The fitted success probability :math:`\\sigma(b_0 + b_1 x)` at ``x`` (a float, or an array for an array).

        >>> fit = logistic_fit([10, 20, 30, 40], [9, 7, 3, 1], [10, 10, 10, 10])
        >>> round(fit.predict(25.0), 2), fit.predict([10.0, 40.0]).round(2).tolist()
        (0.5, [0.89, 0.11])
        """
        arr = _reals("x", x)
        p = sigmoid(self.intercept + self.slope * arr)
        return float(p) if np.ndim(arr) == 0 and not isinstance(x, np.ndarray) else np.asarray(p)


class _Binomial:
    r"""Grouped binomial data on a centred and scaled axis, and Firth's penalized likelihood on it.

    The Firth estimate is equivariant under an affine change of ``x`` (the
    penalty, the Jeffreys prior, changes by a constant), so the fit runs on
    :math:`z = (x - c)/s` and is mapped back. The coefficients
    :math:`\beta = (a_0, a_1)` of :math:`\eta = a_0 + a_1 z` are a linear
    function of the parameters being fitted, :math:`\beta = J\theta`
    (:math:`J` the identity for the fit; one column for a profile), and
    :math:`\eta` is computed from :math:`\theta` directly (``columns``), so
    that a profile far from the data loses no digits to cancellation.
    """

    def __init__(self, z: np.ndarray, k: np.ndarray, n: np.ndarray):
        self.z, self.k, self.n = z, k, n

    def parts(self, eta: np.ndarray) -> tuple[float, tuple[float, float], tuple[float, float, float]]:
        """(penalized log-likelihood, Firth's modified score in (a0, a1), the information's entries (S0, S1, S2))."""
        p = sigmoid(eta)
        w = self.n * p * (1.0 - p)
        s0, s1, s2 = float(w.sum()), float((w * self.z).sum()), float((w * self.z * self.z).sum())
        det = s0 * s2 - s1 * s1
        if not (det > 0.0 and math.isfinite(det)):
            return -math.inf, (0.0, 0.0), (s0, s1, s2)
        # Hat values of the weighted fit: h_i = w_i (1, z_i) I^-1 (1, z_i)^T.
        h = w * (s2 - 2.0 * s1 * self.z + s0 * self.z * self.z) / det
        resid = self.k - self.n * p + h * (0.5 - p)
        score = (float(resid.sum()), float((resid * self.z).sum()))
        # log p and log(1 - p) without overflow.
        loglik = float((-self.k * np.logaddexp(0.0, -eta) - (self.n - self.k) * np.logaddexp(0.0, eta)).sum())
        return loglik + 0.5 * math.log(det), score, (s0, s1, s2)

    def maximize(
        self, theta: list[float], columns: list[np.ndarray], jacobian: list[tuple[float, float]]
    ) -> tuple[list[float], float, int]:
        r"""Newton's method with step halving for the penalized likelihood over ``theta``: (estimate, value, steps).

        :math:`\eta = \sum_j \theta_j\,\text{columns}_j` and
        :math:`\beta = \sum_j \theta_j\,\text{jacobian}_j`; one or two
        parameters. Steps use the expected information,
        :math:`(J^T I J)^{-1} J^T U^*` (as Firth and ``logistf`` do), and are
        halved until the penalized likelihood does not decrease. Raises
        ValueError if it does not converge.
        """

        def eta(t: list[float]) -> np.ndarray:
            return sum((tj * col for tj, col in zip(t, columns)), np.zeros_like(self.z))

        value, score, info = self.parts(eta(theta))
        for step in range(1, 201):
            s0, s1, s2 = info
            # J^T U* and J^T I J for the columns of J.
            g = [d0 * score[0] + d1 * score[1] for d0, d1 in jacobian]
            m = [[d0 * e0 * s0 + (d0 * e1 + d1 * e0) * s1 + d1 * e1 * s2 for e0, e1 in jacobian] for d0, d1 in jacobian]
            if len(theta) == 1:
                delta = [g[0] / m[0][0]]
            else:
                det = m[0][0] * m[1][1] - m[0][1] * m[1][0]
                delta = [(m[1][1] * g[0] - m[0][1] * g[1]) / det, (m[0][0] * g[1] - m[1][0] * g[0]) / det]
            tolerance = 1e-10 * (1.0 + max(abs(t) for t in theta))
            for _ in range(100):
                trial = [t + d for t, d in zip(theta, delta)]
                trial_value, trial_score, trial_info = self.parts(eta(trial))
                if trial_value >= value - 1e-12 * (1.0 + abs(value)):
                    break
                delta = [d / 2.0 for d in delta]
            else:
                if max(abs(d) for d in delta) * 2.0**100 < tolerance:  # at the top, up to rounding
                    return theta, value, step
                raise ValueError("the logistic fit did not converge: step halving found no ascent")
            theta, value, score, info = trial, trial_value, trial_score, trial_info
            if max(abs(d) for d in delta) < tolerance:
                return theta, value, step
        raise ValueError("the logistic fit did not converge in 200 Newton steps")


# -- two curves compared over every lag: a common slope and a shift of the 50% point ---------------------


@dataclass(frozen=True)
class Shift:
    r"""The shift between two success curves with a common slope (:func:`lag_shift`).

    ``difference`` is the penalized-likelihood estimate of
    :math:`d = x_{50,a} - x_{50,b}` (None when the profile keeps rising as
    :math:`|d|` grows: an arm with no transition anywhere); ``interval`` its
    ``level`` profile-likelihood interval (a bound is None when the data do
    not bound it on that side); ``statistic`` the penalized likelihood-ratio
    statistic of :math:`d = 0` (one curve) against a shift, on one degree of
    freedom, and ``p`` its p-value.
    """

    difference: float | None
    interval: tuple[float | None, float | None]
    statistic: float
    p: float
    level: float


def _arm(arm: str, x: Any, successes: Any, n: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One arm's counts (:func:`_counts`), an error naming the arm's arguments."""
    try:
        return _counts(x, successes, n)
    except ValueError as err:
        raise ValueError(f"arm {arm} (x_{arm}, successes_{arm}, n_{arm}): {err}") from None


def _shift_profile(
    a: tuple[np.ndarray, np.ndarray, np.ndarray],
    b: tuple[np.ndarray, np.ndarray, np.ndarray],
    d: float,
    centre: float,
    scale: float,
) -> float:
    r"""The profile penalized log-likelihood :math:`\ell(d)` of the common-slope model at a shift ``d``.

    With :math:`d` fixed, arm ``a`` at :math:`x - d` and arm ``b`` at
    :math:`x` follow one curve :math:`\sigma(\beta_0 + \beta_1 x')`:
    :math:`\ell(d)` is the maximum over :math:`\beta` of
    :math:`\sum_i [k_i \log p_i + (n_i - k_i)\log(1 - p_i)] + \tfrac12\log\det I(\beta)`,
    the Firth-penalized log-likelihood of that two-parameter fit in the
    units of ``x`` (the fit runs on :math:`z = (x' - c)/s` with ``centre``
    and ``scale`` fixed for every ``d``, and :math:`\log s` is added back).
    """
    (xa, ka, na), (xb, kb, nb) = a, b
    data = _Binomial(
        (np.concatenate([xa - d, xb]) - centre) / scale, np.concatenate([ka, kb]), np.concatenate([na, nb])
    )
    return _penalized_maximum(data) + math.log(scale)


def _penalized_maximum(data: _Binomial) -> float:
    """The maximum of the Firth-penalized likelihood of :math:`a_0 + a_1 z`: Fisher scoring with step halving.

    The steps of :meth:`_Binomial.maximize`; it stops when a step is below 1e-10 or when ten steps in a
    row raise the penalized likelihood by less than 1e-12 of itself (near quasi-separation the scoring
    converges linearly: the value is settled long before the coefficients)."""
    theta, flat = [0.0, 0.0], 0
    value, score, (s0, s1, s2) = data.parts(np.zeros_like(data.z))
    for _ in range(2000):
        det = s0 * s2 - s1 * s1
        delta = [(s2 * score[0] - s1 * score[1]) / det, (s0 * score[1] - s1 * score[0]) / det]
        for _ in range(100):
            trial = [theta[0] + delta[0], theta[1] + delta[1]]
            trial_value, trial_score, trial_info = data.parts(trial[0] + trial[1] * data.z)
            if trial_value >= value - 1e-12 * (1.0 + abs(value)):
                break
            delta = [delta[0] / 2.0, delta[1] / 2.0]
        else:
            return value
        flat = flat + 1 if trial_value - value < 1e-12 * (1.0 + abs(value)) else 0
        theta, value, score, (s0, s1, s2) = trial, trial_value, trial_score, trial_info
        if max(abs(delta[0]), abs(delta[1])) < 1e-10 * (1.0 + max(abs(theta[0]), abs(theta[1]))) or flat >= 10:
            return value
    raise ValueError("the common-slope fit did not converge in 2000 steps")


def _golden(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The maximizer of ``f`` on [lo, hi] by golden-section search, to 1e-10 of the bracket's scale."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fc, fd = f(c), f(d)
    while hi - lo > 1e-10 * (1.0 + abs(lo) + abs(hi)):
        if fc >= fd:
            hi, d, fd = d, c, fc
            c = hi - ratio * (hi - lo)
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + ratio * (hi - lo)
            fd = f(d)
    return 0.5 * (lo + hi)


def _or_minus_infinity(f: Callable[[float], float], u: float) -> float:
    """``f(u)``, or minus infinity where its fit does not converge (far shifts of separated data)."""
    try:
        return f(u)
    except ValueError:
        return -math.inf


def _root_within(excess: Callable[[float], float], start: float, sign: float, reach: float) -> float | None:
    """Where ``excess`` turns positive going from ``start`` in the direction ``sign``, within ``reach`` of 0.

    Steps outward, doubling from 0.25, then bisects to 1e-10; None if ``excess`` stays at or below 0 up to
    ``reach`` (or a fit there does not converge): the data do not bound that side.
    """
    inner, step = start, 0.25
    while True:
        outer = start + sign * step
        if abs(outer) > reach:
            outer = sign * reach
        try:
            if excess(outer) > 0.0:
                break
        except ValueError:
            return None
        if abs(outer) >= reach:
            return None
        inner, step = outer, 2.0 * step
    for _ in range(200):
        mid = 0.5 * (inner + outer)
        if abs(outer - inner) < 1e-10 * (1.0 + abs(mid)):
            break
        if excess(mid) > 0.0:
            outer = mid
        else:
            inner = mid
    return 0.5 * (inner + outer)


def lag_shift(x_a: Any, successes_a: Any, n_a: Any, x_b: Any, successes_b: Any, n_b: Any, level: float = 0.95) -> Shift:
    r"""How far arm ``a``'s 50% point lies from arm ``b``'s, from every ``x`` of both: a common-slope Firth fit.

    The model gives both arms one slope and each its own 50% point,
    :math:`\operatorname{logit} p_m(x) = \beta\,(x - x_{50,m})`. For a fixed
    difference :math:`d = x_{50,a} - x_{50,b}` it is an ordinary two-parameter
    logistic regression in a shifted covariate (arm ``a``'s ``x`` minus
    :math:`d`, arm ``b``'s ``x``), fitted by Firth's penalized likelihood as
    :func:`logistic_fit` is; its maximum is the profile :math:`\ell(d)`. Then

    * the estimate :math:`\hat d` maximizes :math:`\ell` (a grid over four
      times the pooled range of ``x`` each way, refined by golden section;
      None when the maximum is at the grid's edge);
    * the ``level`` interval is
      :math:`\{d : 2(\ell(\hat d) - \ell(d)) \le \chi^2_1(\text{level})\}`,
      searched within the same range (a bound is None beyond it);
    * the penalized likelihood-ratio test of one curve (:math:`d = 0`)
      against shifted curves is :math:`2(\ell(\hat d) - \ell(0))` on one
      degree of freedom, :math:`p = \operatorname{erfc}(\sqrt{\text{stat}/2})`.

    The penalty is that of the two-parameter fit at each :math:`d` (the
    Jeffreys prior of :math:`\beta` given :math:`d`), not of the three
    parameters jointly. Swapping the arms negates :math:`\hat d` and its
    interval and leaves the test unchanged.

    >>> s = lag_shift([4, 8, 12, 16], [20, 15, 5, 0], [20] * 4,
    ...               [4, 8, 12, 16], [20, 20, 15, 5], [20] * 4)
    >>> round(s.difference), s.p < 0.001
    (-4, True)
    """
    a = _arm("a", x_a, successes_a, n_a)
    b = _arm("b", x_b, successes_b, n_b)
    level = _level(level)
    pooled = np.concatenate([a[0], b[0]])
    centre, scale = float(pooled.mean()), float(pooled.std())
    span = float(pooled.max() - pooled.min()) / scale

    def profile(u: float) -> float:  # u: the shift in units of scale
        return _shift_profile(a, b, u * scale, centre, scale)

    reach = 4.0 * span
    grid = np.linspace(-reach, reach, 161)
    values = [_or_minus_infinity(profile, float(u)) for u in grid]
    top = int(np.argmax(values))
    if top in (0, len(grid) - 1):  # the profile still rises at the edge: no finite estimate
        statistic = max(0.0, 2.0 * (values[top] - profile(0.0)))
        edge = float(grid[top]) * scale
        open_ = (edge, None) if edge > 0 else (None, edge)
        return Shift(None, open_, statistic, math.erfc(math.sqrt(statistic / 2.0)), level)
    u_hat = _golden(profile, float(grid[top - 1]), float(grid[top + 1]))
    best = profile(u_hat)
    limit = _z(level) ** 2

    def excess(u: float) -> float:
        return 2.0 * (best - profile(u)) - limit

    lower, upper = _root_within(excess, u_hat, -1.0, reach), _root_within(excess, u_hat, 1.0, reach)
    statistic = max(0.0, 2.0 * (best - profile(0.0)))
    return Shift(
        u_hat * scale,
        (None if lower is None else lower * scale, None if upper is None else upper * scale),
        statistic,
        math.erfc(math.sqrt(statistic / 2.0)),
        level,
    )


# -- a rank correlation with its exact permutation p ---------------------------------------------------------

SPEARMAN_EXACT_MAX = 10
"""The largest sample :func:`spearman` enumerates every permutation of (10! = 3,628,800, by subsets)."""


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties given the mean of the ranks they share."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[order[j + 1]] == values[order[i]]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def _permutation_counts(rx: list[int], ry: list[int]) -> dict[int, int]:
    """How many of the n! pairings give each value of :math:`\\sum_i rx_i\\, ry_{\\pi(i)}` (integers), by subsets."""
    n = len(rx)
    layer: dict[int, dict[int, int]] = {0: {0: 1}}
    for i in range(n):
        following: dict[int, dict[int, int]] = {}
        for used, counts in layer.items():
            for j in range(n):
                if used >> j & 1:
                    continue
                add, target = rx[i] * ry[j], following.setdefault(used | 1 << j, {})
                for total, count in counts.items():
                    target[total + add] = target.get(total + add, 0) + count
        layer = following
    return layer[(1 << n) - 1]


def spearman(x: Any, y: Any, alternative: str = "two-sided") -> tuple[float, float]:
    r"""Spearman's rank correlation of ``x`` and ``y`` and its exact permutation p-value: (rho, p).

    :math:`\rho` is Pearson's correlation of the ranks (ties get their mean
    rank). Under the null hypothesis every pairing of the ``y`` with the
    ``x`` is equally likely; p is the share of the :math:`n!` pairings whose
    :math:`\rho` is at least the observed (``alternative="greater"``), at most
    it (``"less"``), or twice the smaller of the two, at most 1
    (``"two-sided"``, as ``scipy.stats.permutation_test`` does). The pairings
    are counted exactly, in integers, for :math:`3 \le n \le` 10. With
    :math:`n` values the smallest one-sided p is :math:`1/n!` (1/24 for four).

    >>> spearman([1, 2, 3, 4], [10, 20, 30, 40], "greater")
    (1.0, 0.041666666666666664)
    """
    xs, ys = _sample("x", x), _sample("y", y)
    if xs.shape != ys.shape:
        raise ValueError(f"y must have the shape of x, {xs.shape}, got shape {ys.shape}")
    n = xs.size
    if not 3 <= n <= SPEARMAN_EXACT_MAX:
        raise ValueError(f"x must hold from 3 to {SPEARMAN_EXACT_MAX} values (exact enumeration), got {n}")
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(f"alternative must be 'two-sided', 'greater' or 'less', got {_show(alternative)}")
    rx, ry = _ranks(xs), _ranks(ys)
    if np.unique(rx).size < 2 or np.unique(ry).size < 2:
        raise ValueError(f"x and y must each hold two distinct values at least, got {_show(x)} and {_show(y)}")
    dx, dy = rx - rx.mean(), ry - ry.mean()
    rho = float((dx * dy).sum() / math.sqrt(float((dx * dx).sum()) * float((dy * dy).sum())))
    # rho rises with sum(rx * ry) over the pairings: count those on either side of the observed sum.
    ix, iy = [int(round(2 * r)) for r in rx], [int(round(2 * r)) for r in ry]
    observed = sum(a * b for a, b in zip(ix, iy))
    counts = _permutation_counts(ix, iy)
    total = math.factorial(n)
    greater = Fraction(sum(c for t, c in counts.items() if t >= observed), total)
    less = Fraction(sum(c for t, c in counts.items() if t <= observed), total)
    p = {"greater": greater, "less": less, "two-sided": min(Fraction(1), 2 * min(greater, less))}[alternative]
    return rho, float(p)


def chi2_sf(statistic: float, df: int) -> float:
    r"""The chi-square survival function :math:`\Pr(\chi^2_{df} \ge` ``statistic``:math:`)`.

    It is the regularized upper incomplete gamma function
    :math:`Q(df/2, \text{statistic}/2)`: by its series below
    :math:`x = a + 1` and by its continued fraction above (Numerical Recipes,
    §6.2), with :func:`math.lgamma`.

    >>> round(chi2_sf(3.841458820694124, 1), 6), round(chi2_sf(7.814727903251178, 3), 6)
    (0.05, 0.05)
    """
    df = check_positive_int("df", df)
    ok = isinstance(statistic, (int, float, np.integer, np.floating)) and not isinstance(statistic, bool)
    if not ok or not math.isfinite(float(statistic)) or float(statistic) < 0:
        raise ValueError(f"statistic must be a finite number >= 0, got {_show(statistic)}")
    a, x = df / 2.0, float(statistic) / 2.0
    if x == 0.0:
        return 1.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1.0:  # P(a, x) by its series; Q = 1 - P
        term = total = 1.0 / a
        k = a
        while abs(term) > 1e-17 * abs(total):
            k += 1.0
            term *= x / k
            total += term
        return max(0.0, 1.0 - total * math.exp(log_front))
    # Q(a, x) by Lentz's continued fraction
    tiny = 1e-300
    b = x + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return min(1.0, math.exp(log_front) * h)


@dataclass(frozen=True)
class Shifts:
    r"""Several success curves with a common slope compared at once (:func:`lag_shifts`).

    ``differences[m]`` is the estimate of :math:`x_{50,m} - x_{50,0}` (0 for
    the first arm); ``statistic`` the penalized likelihood-ratio statistic of
    one curve for every arm against a curve per arm, on ``df`` = arms - 1
    degrees of freedom, and ``p`` its p-value (:func:`chi2_sf`).
    """

    differences: tuple[float, ...]
    statistic: float
    df: int
    p: float


def lag_shifts(arms: Any) -> Shifts:
    r"""The joint test of :func:`lag_shift` for two or more arms: one curve against a shifted curve per arm.

    ``arms`` is a sequence of ``(x, successes, n)``, one per model. The model
    is :math:`\operatorname{logit} p_m(x) = \beta\,(x - x_{50,m})`; with the
    shifts :math:`d_m = x_{50,m} - x_{50,0}` fixed it is a two-parameter
    logistic regression in :math:`x - d_m`, fitted by Firth's penalized
    likelihood, whose maximum is the profile :math:`\ell(d)`. The shifts are
    found by coordinate ascent from the pairwise estimates
    (:func:`lag_shift` of each arm against the first), one golden-section
    search per shift and cycle, until no shift moves by more than 1e-7 of
    the pooled spread of ``x``. The statistic is
    :math:`2(\ell(\hat d) - \ell(0))` on arms - 1 degrees of freedom. With two
    arms it is :func:`lag_shift`'s test.

    >>> s = lag_shifts([([4, 8, 12], [20, 10, 0], [20] * 3),
    ...                 ([4, 8, 12], [20, 20, 10], [20] * 3),
    ...                 ([4, 8, 12], [20, 10, 0], [20] * 3)])
    >>> [round(d) for d in s.differences], s.df, s.p < 0.001
    ([0, 4, 0], 2, True)
    """
    if isinstance(arms, (str, bytes)) or not hasattr(arms, "__len__") or len(arms) < 2:
        raise ValueError(f"arms must be a sequence of two or more (x, successes, n), got {_show(arms)}")
    data = []
    for i, arm in enumerate(arms):
        if isinstance(arm, (str, bytes)) or not hasattr(arm, "__len__") or len(arm) != 3:
            raise ValueError(f"arms[{i}] must be (x, successes, n), got {_show(arm)}")
        data.append(_arm(str(i), *arm))
    pooled = np.concatenate([x for x, _, _ in data])
    centre, scale = float(pooled.mean()), float(pooled.std())
    ks, ns = np.concatenate([k for _, k, _ in data]), np.concatenate([n for _, _, n in data])

    def profile(d: list[float]) -> float:
        x = np.concatenate([xs - dm for (xs, _, _), dm in zip(data, d)])
        return _penalized_maximum(_Binomial((x - centre) / scale, ks, ns)) + math.log(scale)

    d = [0.0]
    for xs, k, n in data[1:]:
        first = lag_shift(xs, k, n, *data[0])
        d.append(0.0 if first.difference is None else first.difference)
    for _ in range(100):
        moved = 0.0
        for m in range(1, len(d)):

            def along(v: float, m: int = m) -> float:
                return profile(d[:m] + [v] + d[m + 1 :])

            new = _golden(along, d[m] - scale, d[m] + scale)
            moved, d[m] = max(moved, abs(new - d[m])), new
        if moved < 1e-7 * scale:
            break
    statistic = max(0.0, 2.0 * (profile(d) - profile([0.0] * len(d))))
    df = len(d) - 1
    return Shifts(tuple(d), statistic, df, chi2_sf(statistic, df))


def _counts(x: Any, successes: Any, n: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xs = _sample("x", x)
    arrays = []
    for name, value in (("successes", successes), ("n", n)):
        arr = np.asarray(value)
        if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_ or arr.ndim != 1:
            raise ValueError(f"{name} must be a one-dimensional sequence of whole numbers, got {_show(value)}")
        if arr.shape != xs.shape:
            raise ValueError(f"{name} must have the shape of x, {xs.shape}, got shape {arr.shape}")
        if not (np.isfinite(arr).all() and (arr == np.floor(arr)).all()):
            raise ValueError(f"{name} must hold whole numbers, got {_show(value)}")
        arrays.append(arr.astype(np.float64))
    k, m = arrays
    if (m < 1).any():
        raise ValueError(f"n must hold whole numbers >= 1 (runs at each x), got {_show(n)}")
    if (k < 0).any() or (k > m).any():
        raise ValueError(f"successes must hold whole numbers from 0 to n at each x, got {_show(successes)}")
    if np.unique(xs).size < 2:
        raise ValueError(f"x must hold at least two distinct values to fit a slope, got {_show(x)}")
    return xs, k, m


def logistic_fit(x: Any, successes: Any, n: Any, level: float = 0.95) -> LogisticFit:
    r"""Binomial logistic regression of success on ``x`` by Firth's penalized likelihood, and its 50% point.

    ``successes[i]`` of ``n[i]`` runs succeed at ``x[i]`` (here the lag; an
    ``x`` may repeat). The model is :math:`p(x) = \sigma(b_0 + b_1 x)`. Plain
    maximum likelihood has no finite estimate when the data are separated
    (every seed succeeds up to some lag and none beyond), which is the lab's
    common case; Firth's penalty :math:`\tfrac12 \log\det I(\beta)` (the
    Jeffreys prior; Firth 1993, Heinze and Schemper 2002) keeps the estimate
    finite and removes its first-order bias. The estimate solves the modified
    score equations

    .. math::
        \sum_i \bigl(k_i - n_i p_i + h_i (\tfrac12 - p_i)\bigr) (1, x_i) = 0,

    with :math:`h_i` the hat values of the weighted fit (weights
    :math:`n_i p_i (1 - p_i)`), found by Newton's method with the expected
    information and step halving; ValueError if it does not converge.

    :math:`x_{50} = -b_0/b_1` and its ``level`` interval by the profile
    penalized likelihood: the :math:`x_{50}` whose best constrained fit is
    within :math:`\chi^2_1(\text{level})/2` of the maximum (found by bisection),
    as ``logistf`` does for a coefficient. When the fitted curve stays above
    (or below) one half at every ``x`` tried, ``x50`` is None and
    ``above_grid`` (or ``below_grid``) is True: see :class:`LogisticFit`.

    >>> fit = logistic_fit([10, 20, 30, 40], [10, 10, 0, 0], [10, 10, 10, 10])
    >>> round(fit.x50, 1), [round(b, 1) for b in fit.x50_interval], fit.slope < 0
    (25.0, [22.0, 28.0], True)
    >>> fit = logistic_fit([10, 20, 30], [20, 20, 20], [20, 20, 20])
    >>> fit.x50, fit.above_grid, fit.below_grid
    (None, True, False)
    """
    xs, k, m = _counts(x, successes, n)
    level = _level(level)
    centre = float(xs.mean())
    scale = float(xs.std())
    data = _Binomial((xs - centre) / scale, k, m)
    ones = np.ones_like(data.z)
    (a0, a1), best, steps = data.maximize([0.0, 0.0], [ones, data.z], [(1.0, 0.0), (0.0, 1.0)])
    # Map back from z = (x - c)/s: b1 = a1/s, b0 = a0 - a1 c/s.
    intercept, slope = a0 - a1 * centre / scale, a1 / scale
    x_min, x_max = float(xs.min()), float(xs.max())
    _, null_value, _ = data.maximize([a0], [ones], [(1.0, 0.0)])  # b1 = 0
    statistic = max(0.0, 2.0 * (best - null_value))
    slope_p = math.erfc(math.sqrt(statistic / 2.0))

    z50 = -a0 / a1 if a1 != 0.0 else None
    inside = z50 is not None and x_min <= centre + scale * z50 <= x_max
    if not inside:
        p_grid = float(sigmoid(a0 + a1 * float(data.z[0])))
        return LogisticFit(
            intercept, slope, None, (None, None), p_grid < 0.5, p_grid > 0.5, slope_p, level, x_min, x_max, steps
        )
    assert z50 is not None
    limit = _z(level) ** 2  # the chi-square(1) quantile at level

    def excess(c: float) -> float:
        """2 (best - profile(c)) - chi2: below 0 inside the interval."""
        # eta = a (z - c), from a = 0 (p = 1/2 everywhere: weights that are never 0).
        _, value, _ = data.maximize([0.0], [data.z - c], [(-c, 1.0)])
        return 2.0 * (best - value) - limit

    lower, upper = _root(excess, z50, -1.0), _root(excess, z50, 1.0)
    bounds = tuple(None if b is None else centre + scale * b for b in (lower, upper))
    return LogisticFit(
        intercept,
        slope,
        centre + scale * z50,
        (bounds[0], bounds[1]),
        False,
        False,
        slope_p,
        level,
        x_min,
        x_max,
        steps,
    )


def _root(excess: Callable[[float], float], start: float, sign: float) -> float | None:
    """Where ``excess`` turns positive going from ``start`` in the direction ``sign``; None if not within 1e4.

    Steps outward, doubling from 0.25 (the axis is scaled to unit spread),
    then bisects to 1e-10.
    """
    inner, step = start, 0.25
    while True:
        outer = start + sign * step
        if excess(outer) > 0.0:
            break
        inner, step = outer, 2.0 * step
        if step > 1e4:
            return None
    for _ in range(200):
        mid = 0.5 * (inner + outer)
        if abs(outer - inner) < 1e-10 * (1.0 + abs(mid)):
            break
        if excess(mid) > 0.0:
            outer = mid
        else:
            inner = mid
    return 0.5 * (inner + outer)


# -- ranks, strata, equivalence and power ------------------------------------------------------------------------


@dataclass(frozen=True)
class MannWhitney:
    """The Mann-Whitney test of two samples: :func:`mann_whitney`'s result.

    ``u`` is the U statistic of the first sample (pairs in which its value is
    the larger, ties counting one half), ``p`` the two-sided p-value, and
    ``method`` how it was computed: ``"exact"`` (the permutation distribution
    of U) or ``"normal"`` (the normal approximation with tie and continuity
    corrections).
    """

    u: float
    p: float
    method: str


_EXACT_MANN_WHITNEY = 50  # the exact distribution when there are no ties and both samples are this size or smaller


@functools.lru_cache(maxsize=64)
def _mann_whitney_counts(m: int, n: int) -> tuple[int, ...]:
    r"""How many of the :math:`\binom{m+n}{m}` orderings of two untied samples give U = 0, 1, ..., mn.

    The generating function of these counts is the Gaussian binomial
    coefficient :math:`\prod_{i=1}^{m} (1 - q^{n+i}) / (1 - q^i)` (Mann and
    Whitney 1947), built factor by factor: a product by :math:`1 - q^{n+i}`
    and an exact division by :math:`1 - q^i` (a running sum with stride
    :math:`i`), in integers.

    >>> _mann_whitney_counts(2, 2)
    (1, 1, 2, 1, 1)
    """
    top = m * n
    counts = [1] + [0] * top
    for i in range(1, m + 1):
        for u in range(top, n + i - 1, -1):  # times (1 - q^(n+i))
            counts[u] -= counts[u - n - i]
        for u in range(i, top + 1):  # divided by (1 - q^i)
            counts[u] += counts[u - i]
    return tuple(counts)


def mann_whitney(x: Any, y: Any) -> MannWhitney:
    r"""The two-sided Mann-Whitney (Wilcoxon rank-sum) test that ``x`` and ``y`` come from one distribution.

    :math:`U = \#\{(i, j) : x_i > y_j\} + \tfrac12 \#\{(i, j) : x_i = y_j\}`,
    the U of ``x`` (:math:`R_x - m(m+1)/2` with midranks, where :math:`R_x` is
    the sum of ``x``'s ranks among all :math:`m + n` values). With
    :math:`U^* = \max(U, mn - U)`:

    * with no ties and both samples of 50 or fewer, the exact p-value
      :math:`\min(1, 2 P(U \ge U^*))` under the permutation distribution of U,
      counted in integers (:func:`_mann_whitney_counts`) and rounded once;
    * otherwise the normal approximation,
      :math:`p = \min(1, 2\,\bar\Phi(z))` with
      :math:`z = (U^* - mn/2 - \tfrac12)/\sigma`, the tie-corrected
      :math:`\sigma^2 = \tfrac{mn}{12}\bigl(m + n + 1 - \sum_k (t_k^3 - t_k)/((m+n)(m+n-1))\bigr)`
      (:math:`t_k` the sizes of the groups of tied values) and the continuity
      correction of one half. When every value is the same, :math:`\sigma = 0`
      and nothing separates the samples: p is 1.

    These are ``scipy.stats.mannwhitneyu(x, y, alternative="two-sided")``
    with ``method="exact"`` and ``method="asymptotic"`` (and its default
    continuity correction); R's ``wilcox.test(x, y)`` decides the same way at
    its own size limit.

    >>> result = mann_whitney([1.1, 2.3, 3.0, 4.2], [5.0, 6.1, 7.7])
    >>> result.u, round(result.p, 4), result.method
    (0.0, 0.0571, 'exact')
    """
    xs, ys = _sample("x", x), _sample("y", y)
    m, n = xs.size, ys.size
    ordered = np.sort(ys)
    below = int(np.searchsorted(ordered, xs, side="left").sum())
    at_or_below = int(np.searchsorted(ordered, xs, side="right").sum())
    doubled = below + at_or_below  # 2U: each pair x > y counts 2, each tie 1
    u = doubled / 2.0
    doubled_star = max(doubled, 2 * m * n - doubled)
    _, ties = np.unique(np.concatenate([xs, ys]), return_counts=True)
    if ties.max() == 1 and max(m, n) <= _EXACT_MANN_WHITNEY:
        counts = _mann_whitney_counts(min(m, n), max(m, n))
        tail = sum(counts[doubled_star // 2 :])
        p = min(Fraction(1), Fraction(2 * tail, math.comb(m + n, m)))
        return MannWhitney(u, float(p), "exact")
    total = m + n
    tie_term = int((ties.astype(np.int64) ** 3 - ties).sum())
    variance = m * n / 12.0 * ((total + 1) - tie_term / (total * (total - 1)))
    if variance <= 0.0:
        return MannWhitney(u, 1.0, "normal")
    z = (doubled_star / 2.0 - m * n / 2.0 - 0.5) / math.sqrt(variance)
    return MannWhitney(u, min(1.0, math.erfc(z / math.sqrt(2.0))), "normal")


def _strata(tables: Any) -> list[tuple[int, int, int, int]]:
    """The checked (a, n_a, b, n_b) of every stratum."""
    if isinstance(tables, (str, bytes)) or not isinstance(tables, (list, tuple)) or len(tables) == 0:
        raise ValueError(
            f"tables must be a non-empty list of (a, n_a, b, n_b) tuples, one per stratum, got {_show(tables)}"
        )
    out = []
    for i, table in enumerate(tables):
        if isinstance(table, (str, bytes)) or not isinstance(table, (list, tuple, np.ndarray)) or len(table) != 4:
            raise ValueError(f"tables[{i}] must be an (a, n_a, b, n_b) tuple of whole numbers, got {_show(table)}")
        a, n_a = _count(f"tables[{i}].a", table[0], f"tables[{i}].n_a", table[1])
        b, n_b = _count(f"tables[{i}].b", table[2], f"tables[{i}].n_b", table[3])
        out.append((a, n_a, b, n_b))
    return out


def stratified_exact(tables: Any) -> float:
    r"""Two-sided p-value of the exact test of a common odds ratio of one across 2×2 strata.

    ``tables`` holds one ``(a, n_a, b, n_b)`` per stratum, as
    :func:`fisher_exact` takes them: ``a`` successes of ``n_a`` runs against
    ``b`` of ``n_b`` (for instance one stratum per learning rate). With every
    stratum's margins fixed, its first cell is hypergeometric
    (:func:`fisher_exact`), and under the null of no association in any
    stratum the sum :math:`S = \sum_i a_i` has the convolution of those
    distributions. This is the exact conditional test of Birch (1964), the
    exact Cochran-Mantel-Haenszel test (R's ``mantelhaen.test(exact =
    TRUE)``): p sums :math:`P(s)` over every :math:`s` no more probable than
    the observed sum, :math:`P(s) \le P(S)\,(1 + 10^{-7})`, the relative
    tolerance of :func:`fisher_exact`. The convolution is of the integer
    weights :math:`\binom{n_a}{x}\binom{n_b}{m-x}`, over the product of the
    strata's :math:`\binom{N}{m}`, exact and rounded once: its cost grows with
    the product of the strata's numbers of possible tables (milliseconds for
    strata of tens of runs, not meant for counts pooled in the thousands). With
    one stratum it is :func:`fisher_exact`.

    >>> stratified_exact([(3, 4, 1, 4)]) == fisher_exact(3, 4, 1, 4)
    True
    >>> round(stratified_exact([(3, 4, 1, 4), (3, 4, 1, 4)]), 4)
    0.1473
    """
    distribution = [1]
    low, observed, denominator = 0, 0, 1
    for a, n_a, b, n_b in _strata(tables):
        weights = _hypergeometric_weights(n_a, n_b, a + b)
        merged = [0] * (len(distribution) + len(weights) - 1)
        for i, d in enumerate(distribution):
            if d:
                for j, w in enumerate(weights):
                    merged[i + j] += d * w
        distribution = merged
        low += max(0, a + b - n_b)
        observed += a
        denominator *= math.comb(n_a + n_b, a + b)
    at = distribution[observed - low]
    tail = sum(w for w in distribution if w * 10**7 <= at * (10**7 + 1))
    return float(Fraction(tail, denominator))


@dataclass(frozen=True)
class Equivalence:
    r"""Two one-sided tests of the difference of two shares: :func:`equivalence`'s result.

    ``lower`` and ``upper`` bound :math:`p_a - p_b` (the Newcombe interval at
    confidence :math:`1 - 2\,\text{level}`), ``difference`` is
    :math:`\hat p_a - \hat p_b`, ``margin`` the equivalence margin and
    ``level`` the level of each one-sided test. ``equivalent`` is True when
    the interval lies inside :math:`(-\text{margin}, \text{margin})`: both
    one-sided tests reject at ``level``.
    """

    lower: float
    upper: float
    difference: float
    margin: float
    level: float
    equivalent: bool


def _unit_open(name: str, value: Any, top: float = 1.0, what: str = "") -> float:
    """A real number strictly between 0 and ``top``."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if not ok or not 0.0 < float(value) < top:
        raise ValueError(f"{name} must be a number strictly between 0 and {top:g}{what}, got {_show(value)}")
    return float(value)


def _probability(name: str, value: Any) -> float:
    """A real number from 0 to 1, ends included."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if not ok or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be a probability, a number from 0 to 1, got {_show(value)}")
    return float(value)


def newcombe(a: int, n_a: int, b: int, n_b: int, level: float = 0.95) -> tuple[float, float]:
    r"""Newcombe's hybrid score interval for :math:`p_a - p_b` at confidence ``level`` (Newcombe 1998, method 10).

    From the Wilson intervals :math:`(l_a, u_a)` of ``a`` of ``n_a`` and
    :math:`(l_b, u_b)` of ``b`` of ``n_b`` (:func:`wilson`, at ``level``), with
    :math:`D = \hat p_a - \hat p_b`:

    .. math::
        D - \sqrt{(\hat p_a - l_a)^2 + (u_b - \hat p_b)^2},\quad
        D + \sqrt{(u_a - \hat p_a)^2 + (\hat p_b - l_b)^2}.

    Newcombe's first worked example, 56 of 70 against 48 of 80:

    >>> [round(v, 4) for v in newcombe(56, 70, 48, 80)]
    [0.0524, 0.3339]
    """
    a, n_a = _count("a", a, "n_a", n_a)
    b, n_b = _count("b", b, "n_b", n_b)
    level = _level(level)
    p_a, p_b = a / n_a, b / n_b
    l_a, u_a = wilson(a, n_a, level)
    l_b, u_b = wilson(b, n_b, level)
    d = p_a - p_b
    return d - math.hypot(p_a - l_a, u_b - p_b), d + math.hypot(u_a - p_a, p_b - l_b)


def equivalence(a: int, n_a: int, b: int, n_b: int, margin: float, level: float = 0.05) -> Equivalence:
    r"""Whether ``a`` of ``n_a`` and ``b`` of ``n_b`` succeed at rates within ``margin`` of each other.

    Two one-sided tests (TOST; Schuirmann 1987) of :math:`p_a - p_b \le
    -\text{margin}` and of :math:`p_a - p_b \ge \text{margin}`, each at
    ``level`` (a significance level, 0.05 by default, not a confidence), are
    carried out together by the :math:`1 - 2\,\text{level}` interval for
    :math:`p_a - p_b` (90% at 0.05): equivalence is declared when it lies
    strictly inside :math:`(-\text{margin}, \text{margin})`. The interval is
    Newcombe's hybrid score interval (:func:`newcombe`; Newcombe 1998, method
    10), built from the two Wilson intervals. The margin must be stated in the
    design, before the counts are seen.

    >>> result = equivalence(10, 20, 11, 20, margin=0.2)
    >>> [round(v, 3) for v in (result.lower, result.upper)], result.equivalent
    ([-0.289, 0.198], False)
    """
    a, n_a = _count("a", a, "n_a", n_a)
    b, n_b = _count("b", b, "n_b", n_b)
    margin = _unit_open("margin", margin, 1.0, " (plus or minus, on the scale of a share)")
    level = _unit_open("level", level, 0.5, " (the level of each one-sided test, 0.05 for a 90% interval)")
    lower, upper = newcombe(a, n_a, b, n_b, 1.0 - 2.0 * level)
    return Equivalence(lower, upper, a / n_a - b / n_b, margin, level, -margin < lower and upper < margin)


@functools.lru_cache(maxsize=64)
def _fisher_table(n_a: int, n_b: int) -> tuple[tuple[float, ...], ...]:
    """``table[k_a][k_b]`` is :func:`fisher_exact` of ``k_a`` of ``n_a`` against ``k_b`` of ``n_b``, for every outcome."""
    return tuple(tuple(fisher_exact(k_a, n_a, k_b, n_b) for k_b in range(n_b + 1)) for k_a in range(n_a + 1))


def _binomial_pmf(n: int, p: float) -> list[float]:
    """:math:`\\binom{n}{k} p^k (1-p)^{n-k}` for k = 0..n, from logarithms (exact zeros at p = 0 and 1)."""
    if p == 0.0 or p == 1.0:
        return [1.0 if k == (0 if p == 0.0 else n) else 0.0 for k in range(n + 1)]
    log_p, log_q, log_n = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    return [
        math.exp(log_n - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p + (n - k) * log_q)
        for k in range(n + 1)
    ]


def fisher_power(p_a: float, p_b: float, n_a: int, n_b: int, alpha: float = 0.05) -> float:
    r"""The exact power of the two-sided Fisher test at ``alpha`` for true rates ``p_a`` and ``p_b``.

    The probability, over the outcomes :math:`(k_a, k_b)` of two independent
    binomials :math:`B(n_a, p_a)` and :math:`B(n_b, p_b)`, that
    :func:`fisher_exact` gives p < ``alpha``:

    .. math::
        \sum_{k_a, k_b} \binom{n_a}{k_a} p_a^{k_a} (1-p_a)^{n_a-k_a}
        \binom{n_b}{k_b} p_b^{k_b} (1-p_b)^{n_b-k_b}\,
        [\,\text{Fisher}(k_a, k_b) < \alpha\,].

    With ``p_a == p_b`` it is the test's actual size (below ``alpha``: the
    test is conservative). The table of Fisher p-values of every outcome is
    computed once per ``(n_a, n_b)`` and kept; the sum is exactly rounded
    (:func:`math.fsum`).

    >>> round(fisher_power(0.5, 0.9, 20, 20), 3)
    0.742
    """
    p_a, p_b = _probability("p_a", p_a), _probability("p_b", p_b)
    n_a, n_b = check_positive_int("n_a", n_a), check_positive_int("n_b", n_b)
    alpha = _unit_open("alpha", alpha, 1.0, " (the significance level)")
    table = _fisher_table(n_a, n_b)
    prob_a, prob_b = _binomial_pmf(n_a, p_a), _binomial_pmf(n_b, p_b)
    return math.fsum(
        pa * pb for row, pa in zip(table, prob_a) for p, pb in zip(row, prob_b) if p < alpha and pa * pb > 0.0
    )


def detectable_difference(
    p_ref: float, n_a: int, n_b: int, alpha: float = 0.05, power: float = 0.8, step: float = 0.05
) -> float | None:
    r"""The smallest difference in rates that Fisher's test at ``alpha`` detects with at least ``power``.

    The first arm (``n_a`` runs) succeeds at ``p_ref``, the second (``n_b``
    runs) at ``p_ref + d`` when ``p_ref`` <= 1/2 and at ``p_ref - d`` when it
    is above: the difference moves toward the side with more room (upward at
    exactly one half). ``d`` runs over the grid ``step``, ``2 step``, ... up to
    the room there is (the other rate reaching 0 or 1), and the first ``d``
    whose :func:`fisher_power` is at least ``power`` is returned (rounded to
    12 decimals, to drop the grid's rounding); None when no ``d`` on the grid
    reaches it.

    >>> detectable_difference(0.5, 20, 20)
    0.45
    >>> detectable_difference(0.5, 3, 3) is None
    True
    """
    p_ref = _probability("p_ref", p_ref)
    n_a, n_b = check_positive_int("n_a", n_a), check_positive_int("n_b", n_b)
    alpha = _unit_open("alpha", alpha, 1.0, " (the significance level)")
    power = _unit_open("power", power, 1.0)
    step = _unit_open("step", step, 1.0, " (the grid of differences)")
    sign = 1.0 if p_ref <= 0.5 else -1.0
    room = 1.0 - p_ref if sign > 0 else p_ref
    for k in range(1, math.floor(room / step + 1e-9) + 1):
        d = round(k * step, 12)
        other = min(1.0, max(0.0, p_ref + sign * d))
        if fisher_power(p_ref, other, n_a, n_b, alpha) >= power:
            return d
    return None

"""How the lab prints a lag learned and picks the lag of a single-lag contrast (rnnmem.experiments)."""

from __future__ import annotations

import pytest

from rnnmem import experiments as ex


@pytest.mark.parametrize(
    "lags, counts, want",
    [
        ([4, 8, 12, 16], [20, 0, 0, 0], ("between 4 and 8", "")),  # 100% then 0%, nothing tried between
        ([8, 24, 40], [20, 2, 0], ("between 8 and 24", "")),  # 10% counts as clear
        ([4, 8, 12], [0, 0, 20], ("between 8 and 12", "")),  # a rising curve too
        ([8, 24, 40], [20, 19, 13], ("beyond 40", "")),  # above one half at every lag tried
        ([8, 24, 40], [6, 0, 0], ("below 8", "")),
    ],
)
def test_a_lag_learned_the_counts_do_not_place_is_a_range_or_a_bound(lags, counts, want):
    assert ex.lag_learned_text(lags, counts, 20) == want


def test_a_lag_learned_between_lags_tried_is_the_fits_point_and_interval():
    fit = ex.lag_learned([4, 8, 12, 16], [20, 15, 5, 0], 20)
    value, interval = ex.lag_learned_text([4, 8, 12, 16], [20, 15, 5, 0], 20)
    lo, hi = fit.x50_interval
    assert value == f"{fit.x50:.0f}" and interval == f"[{lo:.0f}, {hi:.0f}]"
    # 85% then 10%: not a clear jump, so the fit speaks
    assert ex.lag_learned_text([8, 24, 40], [17, 2, 0], 20)[1].startswith("[")


def test_an_interval_end_beyond_the_last_lag_tried_is_a_bound():
    lags, counts = [8, 24, 40, 48, 56, 64], [20, 19, 13, 12, 11, 10]
    fit = ex.lag_learned(lags, counts, 20)
    assert fit.x50 < 64 < fit.x50_interval[1]
    value, interval = ex.lag_learned_text(lags, counts, 20)
    assert value == f"{fit.x50:.0f}" and interval.endswith(", beyond 64]")


@pytest.mark.parametrize(
    "a, b, want",
    [
        ([19, 15, 7, 3], [20, 0, 0, 0], 8),  # pooled 15/40 is nearest one half
        ([20, 20, 17, 7], [20, 17, 2, 0], 12),  # 19/40
        ([20, 10, 0, 0], [0, 10, 0, 20], 4),  # a tie (20/40 at 4, 8 and 16) goes to the smaller lag
        ([0, 0, 0, 0], [0, 0, 0, 1], 16),  # at the floor, the least far from one half
    ],
)
def test_the_contrast_lag_is_where_the_pooled_rate_is_nearest_one_half(a, b, want):
    assert ex.contrast_lag([4, 8, 12, 16], a, b, 20) == want


@pytest.mark.parametrize(
    "args, name",
    [
        (([4, 8], [1, 2, 3], [1, 2], 20), "counts_a"),
        (([4, 8], [1, 2], [1, 21], 20), "counts_b"),
        (([4, 8], [1, 2], [1, 2], 0), "n"),
        (([8, 4], [1, 2], [1, 2], 20), "lags"),
    ],
)
def test_a_bad_contrast_argument_fails_naming_it(args, name):
    with pytest.raises(ValueError, match=name):
        ex.contrast_lag(*args)

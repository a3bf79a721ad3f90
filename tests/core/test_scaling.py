"""Power laws in data: exponents, halving multiples, data needed."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnmem import scaling


def test_exponent_from_forty_percent_per_tenfold():
    beta = scaling.exponent_per_tenfold(0.4)
    assert beta == pytest.approx(math.log10(0.6), rel=1e-14)
    assert round(beta, 3) == -0.222
    assert scaling.improvement_per_tenfold(beta) == pytest.approx(0.4, rel=1e-12)


def test_halving_costs_22_7_times_the_data():
    beta = scaling.exponent_per_tenfold(0.4)
    x = scaling.decades_for(0.5, beta)
    assert x == pytest.approx(math.log10(0.5) / math.log10(0.6), rel=1e-14)
    assert round(x, 2) == 1.36
    m = scaling.data_multiple(0.5, beta)
    assert round(m, 1) == 22.7
    # the power law itself confirms it: that much more data halves the error
    assert scaling.error_at(m, beta) == pytest.approx(0.5, rel=1e-12)


def test_the_sign_slip_is_refused():
    # "log10(0.5)/0.222" with a positive 0.222 gives a negative number of decades
    assert math.log10(0.5) / 0.222 < 0
    with pytest.raises(ValueError, match=r"^beta must be negative"):
        scaling.decades_for(0.5, 0.222)


def test_thirty_percent_needs_88_times():
    beta = scaling.exponent_per_tenfold(0.3)
    assert round(beta, 3) == -0.155
    assert round(scaling.decades_for(0.5, beta), 2) == 1.94
    assert round(scaling.data_multiple(0.5, beta)) == 88


def test_twelve_thousand_hours_to_half_the_error():
    beta = scaling.exponent_per_tenfold(0.4)
    hours = scaling.data_needed(12_000, 0.10, 0.05, beta)
    assert hours == pytest.approx(12_000 * scaling.data_multiple(0.5, beta), rel=1e-12)
    assert round(hours, -3) == 273_000
    assert scaling.error_at(hours, beta, 12_000, 0.10) == pytest.approx(0.05, rel=1e-12)


def test_error_curves_fall_by_the_stated_factor_per_decade():
    c = scaling.error_curves((0.3, 0.4), data0=1000, error0=0.2, decades=3, points=4)
    assert c["data"].tolist() == pytest.approx([1e3, 1e4, 1e5, 1e6])
    np.testing.assert_allclose(c["curves"][0.4], 0.2 * 0.6 ** np.arange(4), rtol=1e-12)
    np.testing.assert_allclose(c["curves"][0.3], 0.2 * 0.7 ** np.arange(4), rtol=1e-12)


@settings(max_examples=50, deadline=None)
@given(st.floats(0.01, 0.9), st.floats(1.0, 1e6), st.floats(0.01, 0.5), st.floats(0.05, 0.99))
def test_data_needed_inverts_the_power_law(r, d0, e0, ratio):
    beta = scaling.exponent_per_tenfold(r)
    d = scaling.data_needed(d0, e0, e0 * ratio, beta)
    assert scaling.error_at(d, beta, d0, e0) == pytest.approx(e0 * ratio, rel=1e-9)


def test_arrays_in_arrays_out():
    out = scaling.exponent_per_tenfold(np.array([0.1, 0.5]))
    assert isinstance(out, np.ndarray) and out.tolist() == pytest.approx([math.log10(0.9), math.log10(0.5)])
    assert isinstance(scaling.data_multiple(0.5, -0.2), float)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: scaling.exponent_per_tenfold(0.0), "improvement"),
        (lambda: scaling.exponent_per_tenfold(1.0), "improvement"),
        (lambda: scaling.decades_for(0.5, 0.0), "beta"),
        (lambda: scaling.decades_for(0.5, float("nan")), "beta"),
        (lambda: scaling.decades_for(0.0, -0.2), "error_ratio"),
        (lambda: scaling.data_needed(0, 0.1, 0.05, -0.2), "data"),
        (lambda: scaling.data_needed(10, -0.1, 0.05, -0.2), "error"),
        (lambda: scaling.data_needed(10, 0.1, 0.0, -0.2), "target_error"),
        (lambda: scaling.error_at(-1.0, -0.2), "data"),
        (lambda: scaling.error_curves(points=1), "points"),
        (lambda: scaling.error_curves(improvements=()), "improvements"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()

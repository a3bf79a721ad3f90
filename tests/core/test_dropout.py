"""Dropout on the carried state: Monte Carlo against the variance algebra."""

import math

import numpy as np
import pytest

from rnnmem import dropout


def test_untouched_after_100_steps():
    p = dropout.untouched_probability(0.9, 100)
    assert p == pytest.approx(math.exp(100 * math.log(0.9)), rel=1e-12)
    assert math.log(0.9) * 100 == pytest.approx(-10.54, abs=0.005)
    assert f"{p:.2g}" == "2.7e-05"


def test_one_mask_has_mean_one_and_variance_one_over_p_minus_one():
    m = dropout.inverted_mask(1_000_000, 0.8, seed=4)
    assert set(np.unique(m).tolist()) == {0.0, 1.25}
    assert m.mean() == pytest.approx(1.0, abs=0.005)
    assert m.var() == pytest.approx(1 / 0.8 - 1, rel=0.02)


@pytest.mark.parametrize("keep, n", [(0.9, 1), (0.9, 5), (0.8, 8), (0.5, 3)])
def test_product_of_masks_monte_carlo(keep, n):
    masks = dropout.per_step_masks(n, 200_000, 1, keep, seed=n)
    product = masks[:, :, 0].prod(axis=0)
    exact = dropout.mask_product_variance(keep, n)
    assert exact == pytest.approx((1 / keep) ** n - 1)
    assert product.mean() == pytest.approx(1.0, abs=0.05 * math.sqrt(exact + 1))
    assert product.var() == pytest.approx(exact, rel=0.08)


@pytest.mark.parametrize("scheme", dropout.SCHEMES)
def test_simulation_against_the_analytic_spread(scheme):
    sim = dropout.simulate_carried_state(scheme, 10, 0.8, runs=200_000, depth=3, seed=11)
    assert sim.steps.tolist() == list(range(1, 11))
    np.testing.assert_allclose(sim.mean, 1.0, atol=0.03)
    np.testing.assert_allclose(sim.variance, sim.analytic_variance, rtol=0.08)
    np.testing.assert_allclose(sim.untouched, sim.analytic_untouched, atol=0.005)
    np.testing.assert_allclose(sim.std, np.sqrt(sim.variance))


def test_where_the_masks_sit_decides_the_growth():
    keep, depth = 0.9, 2
    rec = [dropout.spread_variance("recurrent", t, keep, depth) for t in (1, 10, 100)]
    ver = [dropout.spread_variance("vertical", t, keep, depth) for t in (1, 10, 100)]
    var = [dropout.spread_variance("variational", t, keep, depth) for t in (1, 10, 100)]
    assert rec[0] < rec[1] < rec[2] and rec[2] > 1e4  # compounds in time
    assert ver[0] == ver[1] == ver[2] == pytest.approx((1 / keep) ** depth - 1)  # compounds in depth only
    assert var[0] == var[1] == var[2] == pytest.approx(1 / keep - 1)  # one perturbation per sequence
    table = dropout.survival_table(keep, (100,), depth)
    assert table[0][1] == pytest.approx(keep**100) and table[0][2] == pytest.approx(keep**depth)


def test_variational_masks_are_reused_per_step_masks_are_not():
    m = dropout.variational_masks(4, 50, 0.5, seed=0)
    assert m.shape == (4, 50)
    steps = dropout.per_step_masks(30, 4, 50, 0.5, seed=0)
    assert not np.all(steps[0] == steps[1])
    # a binary mask applied at every step is the mask itself (m^t = m): a unit is in or out for the sequence
    binary = m * 0.5
    assert np.array_equal(binary**7, binary)


def test_inverted_dropout_keeps_the_mean():
    x = np.full(500_000, 3.0)
    y = dropout.inverted_dropout(x, 0.7, seed=2)
    assert y.mean() == pytest.approx(3.0, rel=0.01)
    assert set(np.unique(y).round(12).tolist()) == {0.0, round(3.0 / 0.7, 12)}


def test_keep_one_is_no_dropout():
    assert dropout.mask_product_variance(1.0, 50) == 0.0
    assert np.all(dropout.inverted_mask(10, 1.0) == 1.0)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: dropout.untouched_probability(0.0, 3), "keep"),
        (lambda: dropout.untouched_probability(1.5, 3), "keep"),
        (lambda: dropout.untouched_probability(float("nan"), 3), "keep"),
        (lambda: dropout.untouched_probability(0.9, -1), "steps"),
        (lambda: dropout.mask_product_variance(0.9, 2.5), "n"),  # type: ignore[arg-type]  # a bad value on purpose
        (lambda: dropout.perturbation_count("horizontal", 3), "scheme"),
        (lambda: dropout.perturbation_count("vertical", 3, depth=0), "depth"),
        (lambda: dropout.simulate_carried_state("recurrent", 0, 0.9), "steps"),
        (lambda: dropout.simulate_carried_state("recurrent", 3, 0.9, runs=0), "runs"),
        (lambda: dropout.variational_masks(0, 3, 0.5), "batch"),
        (lambda: dropout.per_step_masks(2, 2, 0, 0.5), "units"),
        (lambda: dropout.inverted_dropout([1.0, np.inf], 0.5), "x"),
        (lambda: dropout.inverted_mask(3, 0.5, seed=-2), "seed"),
        (lambda: dropout.inverted_mask((2, -1), 0.5), "shape"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()

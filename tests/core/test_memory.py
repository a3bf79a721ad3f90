"""rnnmem.memory against independent computations, and its errors."""

import math

import numpy as np
import pytest

from rnnmem import memory


@pytest.mark.parametrize("f", [0.3, 0.5, 0.9, 0.95, 0.99, 0.999])
def test_level_horizon_is_where_the_product_crosses_the_level(f):
    n = memory.horizon(f, level=0.01)
    # One step before the horizon the product is still above 1%, one step after it is below.
    assert f ** math.floor(n) >= 0.01 > f ** (math.floor(n) + 1)


@pytest.mark.parametrize("f", [0.1, 0.5, 0.731, 0.9, 0.99, 0.9999])
def test_efold_horizon_divides_by_e_and_sits_inside_its_bounds(f):
    m = memory.efold_horizon(f)
    assert f**m == pytest.approx(math.exp(-1), rel=1e-12)
    lower, upper = memory.efold_bounds(f)
    assert lower < m < upper
    assert upper - lower == pytest.approx(1.0)


def test_inversions_round_trip():
    for f in (0.2, 0.5, 0.95, 0.9848):
        assert memory.sigmoid(memory.bias_for_gate(f)) == pytest.approx(f, rel=1e-12)
    for steps in (7, 90, 300):
        assert memory.horizon(memory.gate_for_horizon(steps)) == pytest.approx(steps, rel=1e-12)
        assert memory.efold_horizon(memory.gate_for_efold_horizon(steps)) == pytest.approx(steps, rel=1e-12)
    for m in (1.5, 3.72, 100.0):
        assert memory.mean_lifetime(memory.sigmoid(memory.bias_for_mean_lifetime(m))) == pytest.approx(m)
        assert memory.mean_lifetime(memory.gate_for_mean_lifetime(m)) == pytest.approx(m)


def test_sources_numbers():
    assert round(memory.horizon(0.95), 1) == 89.8
    assert round(memory.horizon(0.5), 1) == 6.6
    assert round(memory.bias_for_gate(0.95), 2) == round(math.log(19), 2) == 2.94
    f = memory.gate_for_horizon(300)
    assert (round(f, 4), round(memory.bias_for_gate(f), 2)) == (0.9848, 4.17)
    assert [round(memory.efold_horizon(f), 3) for f in (0.9, 0.99, 0.999)] == [9.491, 99.499, 999.5]
    assert [f"{memory.decay(f, 100):.6f}" for f in (0.9, 0.99, 0.999)] == ["0.000027", "0.366032", "0.904792"]
    assert round(1 / memory.efold_horizon(0.5), 6) == round(math.log(2), 6)


def test_sigmoid_is_stable_for_large_arguments():
    z = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0])
    s = memory.sigmoid(z)
    assert np.all(np.isfinite(s))
    assert s[0] == 0.0 and s[-1] == 1.0 and s[2] == 0.5
    np.testing.assert_allclose(s[1:4], 1 / (1 + np.exp(-z[1:4])), rtol=1e-15)


def test_arrays_in_arrays_out_and_scalars_in_floats_out():
    out = memory.horizon(np.array([0.5, 0.9]))
    assert isinstance(out, np.ndarray) and out.shape == (2,)
    assert type(memory.horizon(0.9)) is float
    assert type(memory.decay(0.9, 3)) is float
    np.testing.assert_allclose(memory.decay(0.5, np.arange(4)), [1, 0.5, 0.25, 0.125])


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: memory.horizon(1.5), "f"),
        (lambda: memory.horizon(0.0), "f"),
        (lambda: memory.horizon(1.0), "f"),
        (lambda: memory.horizon(0.9, level=0), "level"),
        (lambda: memory.horizon(0.9, level=-0.1), "level"),
        (lambda: memory.horizon(float("nan")), "f"),
        (lambda: memory.efold_horizon(np.array([0.5, 1.2])), "f"),
        (lambda: memory.bias_for_gate(1.0), "f"),
        (lambda: memory.decay(0.9, -1), "n"),
        (lambda: memory.decay(0.9, 2.5), "n"),
        (lambda: memory.decay(-0.9, 2), "f"),
        (lambda: memory.gate_for_horizon(0), "steps"),
        (lambda: memory.bias_for_mean_lifetime(1.0), "lifetime"),
        (lambda: memory.gate_for_mean_lifetime(0.5), "lifetime"),
        (lambda: memory.gate_for_efold_horizon(0.0), "tau"),
        (lambda: memory.sigmoid("x"), "z"),
        (lambda: memory.logit(True), "p"),
        (lambda: memory.horizon("0.9"), "f"),
        (lambda: memory.horizon([0.5, "0.9"]), "f"),
        (lambda: memory.efold_horizon(np.array([True, False])), "f"),
    ],
)
def test_bad_input_names_the_argument(call, argument):
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert message.startswith(argument + " "), message
    assert "got" in message

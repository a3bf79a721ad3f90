"""rnnmem.carry.default_forget_gates: default LSTMs fed noise, their forget gates against the zero-input gates."""

from __future__ import annotations

import numpy as np
import pytest

from rnnmem import LSTM, carry, memory


def test_the_gates_are_the_last_steps_carry_factors_of_each_seeds_model():
    g = carry.default_forget_gates(hidden=6, steps=4, batch=3, seeds=[2, 5], data_seed=7)
    assert g.on_data.shape == (2 * 3 * 6,) and g.zero_input.shape == (2 * 6,)
    noise = np.random.default_rng(7).standard_normal((4, 3, 6))
    second = LSTM(6, 6, seed=5)
    np.testing.assert_array_equal(g.on_data[18:], carry.carry_factors(second, noise)[-1].ravel())
    # At zero input and zero state the first step's gate is the bias's alone.
    first_step = carry.carry_factors(second, np.zeros((1, 1, 6)))[0, 0]
    np.testing.assert_allclose(g.zero_input[6:], first_step, rtol=1e-15)


def test_the_summary_describes_the_two_samples():
    g = carry.default_forget_gates(hidden=8, steps=5, batch=4, seeds=[0, 1])
    s = g.summary()
    assert s["min"] <= s["median"] <= s["max"] and s["sd"] > 0
    assert s["zero_min"] <= s["zero_max"]
    assert s["tau_data"] == pytest.approx(-1 / np.mean(np.log(g.on_data)), rel=1e-12)
    # PyTorch's draw puts every zero-input gate within sigma(+-2/sqrt(H)) of one half.
    a = 2 / np.sqrt(8)
    assert memory.sigmoid(-a) <= s["zero_min"] and s["zero_max"] <= memory.sigmoid(a)
    # Fed data, the gates spread wider than their biases alone allow.
    assert s["max"] - s["min"] > s["zero_max"] - s["zero_min"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"hidden": 0}, "hidden must be a whole number >= 1, got 0"),
        ({"seeds": []}, "seeds must be a non-empty list of seeds (whole numbers >= 0), got []"),
        ({"seeds": [0, -1]}, "seeds[1] must be a whole number >= 0, got -1"),
        ({"data_seed": 1.5}, "data_seed must be a whole number >= 0, got 1.5"),
    ],
)
def test_bad_input_names_the_argument(kwargs, message):
    with pytest.raises(ValueError) as info:
        carry.default_forget_gates(**kwargs)
    assert str(info.value) == message

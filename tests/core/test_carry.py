"""rnnmem.carry: carry factors read from the cells' own steps, and their errors."""

import math

import numpy as np
import pytest

from rnnmem import GRU, LSTM, memory
from rnnmem.carry import carry_factors, efold_of_factors


def test_lstm_factors_are_the_forget_gates_of_the_step_function():
    model = LSTM(3, 5, seed=2)
    x = np.random.default_rng(1).normal(size=(6, 2, 3))
    f = carry_factors(model, x)
    H = 5
    h = c = np.zeros((2, H))
    for t in range(6):
        pre = x[t] @ model.W_ih.T + model.b_ih + h @ model.W_hh.T + model.b_hh
        gates = memory.sigmoid(pre)
        np.testing.assert_allclose(f[t], gates[:, H : 2 * H], rtol=1e-12)
        c = gates[:, H : 2 * H] * c + gates[:, :H] * np.tanh(pre[:, 2 * H : 3 * H])
        h = gates[:, 3 * H :] * np.tanh(c)


def test_lstm_factors_match_the_sequence_path_states():
    model = LSTM(4, 3, seed=0)
    x = np.random.default_rng(5).normal(size=(8, 2, 4))
    outputs, _ = model.forward(x)
    f = carry_factors(model, x)
    # The last step's forget gate, recomputed from the sequence path's previous state.
    pre = x[-1] @ model.W_ih.T + model.b_ih + outputs[-2] @ model.W_hh.T + model.b_hh
    np.testing.assert_allclose(f[-1], memory.sigmoid(pre[:, 3:6]), rtol=1e-10)


@pytest.mark.parametrize("update", ["z_keeps", "z_writes"])
def test_gru_factor_is_what_keeps_the_state(update):
    model = GRU(2, 3, seed=1, update=update)
    x = np.random.default_rng(2).normal(size=(5, 4, 2))
    k = carry_factors(model, x)
    z0 = memory.sigmoid(x[0] @ model.W_ih[3:6].T + model.b_ih[3:6] + model.b_hh[3:6])
    np.testing.assert_allclose(k[0], z0 if update == "z_keeps" else 1 - z0, rtol=1e-12)


def test_efold_of_factors_uses_the_mean_log():
    f = np.array([0.3, 0.6, 0.9])
    product = float(np.prod(f))
    tau = efold_of_factors(f)
    assert math.exp(-3 / tau) == pytest.approx(product, rel=1e-12)
    assert tau < memory.efold_horizon(float(f.mean()))  # Jensen: log is concave


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: carry_factors("lstm", np.zeros((2, 1, 3))), "model"),
        (lambda: carry_factors(LSTM(3, 2, seed=0), np.zeros((2, 1, 4))), "x"),
        (lambda: carry_factors(LSTM(3, 2, seed=0), np.zeros((0, 1, 3))), "x"),
        (lambda: carry_factors(GRU(3, 2, seed=0), np.full((2, 1, 3), np.nan)), "x"),
        (lambda: efold_of_factors([]), "factors"),
        (lambda: efold_of_factors([0.5, 1.0]), "factors"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=f"^{name} must"):
        call()

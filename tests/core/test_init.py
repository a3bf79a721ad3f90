"""Forget-bias initialization: the bias table, Keras, PyTorch, chrono."""

import math

import numpy as np
import pytest

from rnnmem import init


def _sig(b):
    return 1.0 / (1.0 + math.exp(-b))


# --------------------------------------------------------------------------- the forget-bias table


def test_zero_bias_row():
    r = init.forget_bias_row(0.0)
    assert r.gate == 0.5
    assert r.efold_horizon == pytest.approx(1 / math.log(2), rel=1e-14)
    assert round(r.efold_horizon, 2) == 1.44
    assert r.horizon == pytest.approx(math.log(0.01) / math.log(0.5), rel=1e-14)
    assert round(r.horizon, 1) == 6.6


def test_bias_one_row():
    r = init.forget_bias_row(1.0)
    assert r.gate == pytest.approx(1 / (1 + math.exp(-1.0)), rel=1e-15)  # sigma(1)
    assert r.mean_lifetime == pytest.approx(1 + math.e, rel=1e-14)
    assert round(r.mean_lifetime, 2) == 3.72


def test_bias_two_after_47_steps():
    kept2, kept0 = init.retained_gradient(2.0, 47), init.retained_gradient(0.0, 47)
    assert round(init.forget_gate(2.0), 4) == 0.8808
    assert kept2 == pytest.approx(_sig(2.0) ** 47, rel=1e-12)
    assert kept0 == 2.0**-47
    assert kept2 / kept0 == pytest.approx((2 * _sig(2.0)) ** 47, rel=1e-12)


def test_bias_near_three_gives_point_95_and_about_90_steps():
    b = init.forget_bias(gate=0.95)
    assert b == pytest.approx(math.log(19), rel=1e-14)
    row = init.forget_bias_table()[-1]
    assert row.gate == pytest.approx(0.95, rel=1e-14)
    assert round(row.horizon) == 90 and round(row.horizon, 1) == 89.8
    assert abs(round(b) - 3) == 0


def test_three_hundred_step_exercise():
    f = 0.01 ** (1 / 300)
    assert round(f, 4) == 0.9848
    assert init.forget_bias(horizon=300) == pytest.approx(math.log(f / (1 - f)), rel=1e-12)
    assert round(init.forget_bias(horizon=300), 2) == 4.17


def test_forget_bias_other_targets():
    b = init.forget_bias(mean_lifetime=100)
    assert 1 / (1 - _sig(b)) == pytest.approx(100, rel=1e-12)
    b = init.forget_bias(efold_horizon=50)
    assert -1 / math.log(_sig(b)) == pytest.approx(50, rel=1e-12)


# --------------------------------------------------------------------------- layer bias vectors


def test_keras_unit_forget_bias_layout():
    b = init.keras_unit_forget_bias(5)
    assert b.shape == (20,)
    assert b[5:10].tolist() == [1.0] * 5
    assert np.count_nonzero(b) == 5


def test_gate_slices():
    assert init.gate_slice("o", 4) == slice(12, 16)
    assert init.gate_slice("c", 4, "keras") == slice(8, 12)
    assert init.gate_slice("n", 4, "gru") == slice(8, 12)


def test_pytorch_biases_bounded_and_forget_sum_triangular():
    H = 64
    a = 1 / math.sqrt(H)
    b_ih, b_hh = init.pytorch_default_biases(H, seed=1)
    assert b_ih.shape == b_hh.shape == (4 * H,)
    assert np.abs(b_ih).max() <= a and np.abs(b_hh).max() <= a
    s = init.pytorch_forget_bias_samples(H, 400_000, seed=2)
    assert np.abs(s).max() < 2 * a
    assert s.mean() == pytest.approx(0.0, abs=3 * math.sqrt(2 * a * a / 3 / s.size) + 1e-12)
    assert s.var() == pytest.approx(2 * a * a / 3, rel=0.01)  # two independent U(-a, a): variance a^2/3 each
    hist, edges = np.histogram(s, bins=40, range=(-2 * a, 2 * a), density=True)
    centers = 0.5 * (edges[1:] + edges[:-1])
    dens = init.pytorch_forget_bias_density(centers, H)
    assert np.max(np.abs(hist - dens)) < 0.05 * dens.max()


def test_triangular_density_integrates_to_one():
    H = 25
    x = np.linspace(-1, 1, 200_001)
    d = init.pytorch_forget_bias_density(x, H)
    assert np.trapezoid(d, x) == pytest.approx(1.0, abs=1e-6)
    assert init.pytorch_forget_bias_density(0.4, H) == 0.0  # outside (-2/sqrt H, 2/sqrt H)
    assert init.pytorch_forget_bias_density(0.0, H) == pytest.approx(math.sqrt(H) / 2)


@pytest.mark.torch
def test_torch_lstm_biases_follow_the_same_draw(torch):
    torch.manual_seed(0)
    H = 100
    m = torch.nn.LSTM(8, H)
    a = 1 / math.sqrt(H)
    b_ih, b_hh = m.bias_ih_l0.detach().numpy(), m.bias_hh_l0.detach().numpy()
    assert b_ih.shape == (4 * H,) and np.abs(b_ih).max() <= a and np.abs(b_hh).max() <= a
    forget = b_ih[H : 2 * H] + b_hh[H : 2 * H]
    assert np.abs(forget).max() <= 2 * a
    assert np.abs(b_ih).max() > 0.9 * a  # uniform over the whole interval, not a narrower one


def test_chrono_lifetimes_are_uniform_between_two_and_t_max():
    t_max = 200
    b_f, b_i = init.chrono_biases(50_000, t_max, seed=3)
    assert np.all(b_i == -b_f)
    life = 1 / (1 - 1 / (1 + np.exp(-b_f)))
    assert life.min() >= 2 - 1e-9 and life.max() <= t_max + 1e-9
    # Kolmogorov-Smirnov distance to U[2, t_max]
    xs = np.sort(life)
    cdf = (xs - 2) / (t_max - 2)
    ks = np.max(np.abs(np.arange(1, xs.size + 1) / xs.size - cdf))
    assert ks < 1.63 / math.sqrt(xs.size)  # the 1% critical value
    efold = init.initial_horizons("chrono", 50_000, seed=3, t_max=t_max)
    assert efold.min() >= 1 / math.log(2) - 1e-9 and efold.max() < t_max
    assert np.all(efold < life)


def test_scheme_horizons():
    hs = init.sample_initial_horizons(300, t_max=1000, seed=0)
    assert list(hs) == list(init.SCHEMES)
    assert np.allclose(hs["zero"], 1 / math.log(2))
    assert np.allclose(hs["keras"], -1 / math.log(_sig(1.0)))
    assert hs["pytorch"].std() > 0 and abs(np.median(hs["pytorch"]) - 1 / math.log(2)) < 0.1
    assert hs["chrono"].max() > 10 * hs["keras"].max()
    levels = init.initial_horizons("zero", 2, measure="level")
    assert levels == pytest.approx(math.log(0.01) / math.log(0.5))


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: init.forget_bias(), "forget_bias"),
        (lambda: init.forget_bias(gate=0.5, horizon=3), "forget_bias"),
        (lambda: init.forget_bias(gate=1.2), "f"),
        (lambda: init.forget_bias(horizon=-3), "steps"),
        (lambda: init.forget_bias(mean_lifetime=1), "mean_lifetime"),
        (lambda: init.forget_bias(efold_horizon=0), "efold_horizon"),
        (lambda: init.forget_bias_row(float("nan")), "bias"),
        (lambda: init.keras_unit_forget_bias(0), "hidden"),
        (lambda: init.gate_slice("x", 3), "gate"),
        (lambda: init.gate_slice("f", 3, order="tf"), "order"),
        (lambda: init.pytorch_default_biases(3, seed=-1), "seed"),
        (lambda: init.pytorch_forget_bias_samples(3, 0), "size"),
        (lambda: init.chrono_biases(3, 2), "t_max"),
        (lambda: init.chrono_biases(3, -5), "t_max"),
        (lambda: init.initial_forget_biases("chrono", 3), "t_max"),
        (lambda: init.initial_forget_biases("xavier", 3), "scheme"),
        (lambda: init.initial_horizons("zero", 3, measure="half"), "measure"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()


def test_keras_lstm_weights_follow_keras_initializers():
    D, H = 5, 7
    W = init.keras_lstm_weights(D, H, seed=3)
    limit = (6 / (D + 4 * H)) ** 0.5
    assert W["W_ih"].shape == (4 * H, D) and np.abs(W["W_ih"]).max() <= limit
    assert np.abs(W["W_ih"]).max() > 0.8 * limit  # uses the whole Glorot range
    np.testing.assert_allclose(W["W_hh"].T @ W["W_hh"], np.eye(H), atol=1e-12)
    assert W["b_ih"].tolist() == init.keras_unit_forget_bias(H).tolist()
    assert not W["b_hh"].any()
    with pytest.raises(ValueError, match="^hidden must"):
        init.keras_lstm_weights(D, 0)


def test_recurrent_matrices():
    from rnnmem.init import recurrent_matrix

    Q = recurrent_matrix("orthogonal", 16, seed=2)
    np.testing.assert_allclose(Q.T @ Q, np.eye(16), atol=1e-12)
    np.testing.assert_array_equal(Q, recurrent_matrix("orthogonal", 16, seed=2))
    np.testing.assert_allclose(np.linalg.svd(Q, compute_uv=False), np.ones(16), atol=1e-12)
    np.testing.assert_array_equal(recurrent_matrix("identity", 3), np.eye(3))
    W = recurrent_matrix("pytorch", 16, seed=2)
    assert np.abs(W).max() <= 0.25 and not np.allclose(W, W.T)
    with pytest.raises(ValueError, match="kind must be one of"):
        recurrent_matrix("glorot", 4)
    with pytest.raises(ValueError, match="hidden must be a whole number >= 1"):
        recurrent_matrix("identity", 0)

"""rnnmem.leaky against independent computations, and its errors."""

import math

import numpy as np
import pytest

from rnnmem import init, lstm, memory
from rnnmem.leaky import gate_biases, leak, run, time_constant


@pytest.mark.parametrize("tau", [1.5, 4.0, 37.0, 1000.0])
def test_exact_leak_divides_by_e_every_tau_steps(tau):
    alpha = leak(tau)
    assert alpha**tau == pytest.approx(math.exp(-1), rel=1e-12)
    assert time_constant(alpha) == pytest.approx(memory.efold_horizon(alpha), rel=1e-12)


@pytest.mark.parametrize("tau", [1.5, 4.0, 37.0, 1000.0])
def test_euler_time_constant_is_the_mean_lifetime_and_inverts(tau):
    alpha = leak(tau, "euler")
    assert sum(alpha**n for n in range(200_000)) == pytest.approx(tau, rel=1e-9)
    assert time_constant(alpha, "euler") == pytest.approx(tau, rel=1e-12)


@pytest.mark.parametrize("alpha", [0.05, 0.5, 0.9, 0.999])
def test_the_two_readings_differ_by_less_than_a_step(alpha):
    gap = time_constant(alpha, "euler") - time_constant(alpha)
    assert 0 < gap < 1


def test_run_is_the_recursion_written_out():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(30, 4))
    tau = np.array([1.5, 3.0, 10.0, 50.0])
    h = run(x, tau, h0=0.7, discretization="euler")
    expected, state = [], np.full(4, 0.7)
    for x_t in x:
        state = (1 - 1 / tau) * state + x_t / tau
        expected.append(state)
    assert h.shape == (30, 4)
    np.testing.assert_allclose(h, np.array(expected), rtol=1e-13)


def test_gate_biases_make_an_lstm_at_zero_weights_a_leaky_unit():
    tau = np.array([2.0, 5.0, 80.0])
    b_f, b_i = gate_biases(tau)
    n = tau.size
    b_ih = np.concatenate([b_i, b_f, np.zeros(n), np.zeros(n)])
    W_ih = np.vstack([np.zeros((n, n)), np.zeros((n, n)), np.eye(n), np.zeros((n, n))])
    x = np.random.default_rng(0).normal(size=(40, n))
    h = c = np.zeros(n)
    cells = []
    for x_t in x:
        s = lstm.step(x_t, h, c, W_ih, np.zeros((4 * n, n)), b_ih, np.zeros(4 * n))
        h, c = s.h, s.c
        cells.append(c)
    np.testing.assert_allclose(np.array(cells), run(np.tanh(x), tau, discretization="euler"), rtol=1e-12)


def test_chrono_is_gate_biases_of_uniform_time_constants():
    b_f, b_i = init.chrono_biases(500, t_max=300, seed=4)
    tau = 1 + np.exp(b_f)  # the draws u = tau - 1
    again_f, again_i = gate_biases(tau)
    np.testing.assert_allclose(again_f, b_f, rtol=1e-12)
    np.testing.assert_allclose(again_i, b_i, rtol=1e-12)
    assert tau.min() >= 2 and tau.max() <= 300


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: leak(0.0), "tau"),
        (lambda: leak(1.0, "euler"), "tau"),
        (lambda: leak(3.0, "midpoint"), "discretization"),
        (lambda: time_constant(1.0), "alpha"),
        (lambda: run(np.zeros(0), 3.0), "x"),
        (lambda: run([1.0, float("nan")], 3.0), "x"),
        (lambda: run([1.0], -2.0), "tau"),
        (lambda: gate_biases(0.5), "tau"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=f"^{name} must"):
        call()

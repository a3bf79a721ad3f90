"""Jacobians of the cells, checked against finite differences; products, paths, growth, bounds."""

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnmem import cell_bound, cell_paths, growth_cell, gru, lstm, rnn
from rnnmem import jacobians as jac

FD: dict[str, Any] = dict(rtol=1e-6, atol=1e-8)


def _weights(gates, D, H, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    a = scale / math.sqrt(H)
    return {
        "W_ih": rng.uniform(-a, a, (gates * H, D)),
        "W_hh": rng.uniform(-a, a, (gates * H, H)),
        "b_ih": rng.uniform(-a, a, gates * H),
        "b_hh": rng.uniform(-a, a, gates * H),
    }


# --------------------------------------------------------------------------- one step against finite differences


@pytest.mark.parametrize("seed, scale", [(0, 1.0), (1, 3.0), (2, 0.3)])
def test_rnn_jacobian_matches_finite_differences(seed, scale):
    W = _weights(1, 3, 5, seed, scale)
    rng = np.random.default_rng(seed + 10)
    x, h = rng.standard_normal(3), rng.uniform(-1, 1, 5)
    h_new, J = jac.rnn_jacobian(x, h, **W)
    np.testing.assert_allclose(h_new, rnn.step(x, h, **W))
    fd = jac.finite_difference_jacobian(lambda v: rnn.step(x, v, **W), h)
    np.testing.assert_allclose(J, fd, **FD)
    np.testing.assert_allclose(J, np.diag(1 - h_new**2) @ W["W_hh"], rtol=1e-14)


@pytest.mark.parametrize("seed, scale", [(0, 1.0), (1, 2.5), (2, 0.5), (3, 4.0)])
def test_lstm_blocks_match_finite_differences(seed, scale):
    H, D = 4, 3
    W = _weights(4, D, H, seed, scale)
    rng = np.random.default_rng(seed + 20)
    x, h, c = rng.standard_normal(D), rng.uniform(-1, 1, H), rng.normal(0, 2, H)
    J = jac.lstm_jacobian(x, h, c, **W)

    def new_state(v):
        s = lstm.step(x, v[H:], v[:H], **W)
        return np.concatenate([s.c, s.h])

    fd = jac.finite_difference_jacobian(new_state, np.concatenate([c, h]))
    np.testing.assert_allclose(J.full, fd, **FD)
    np.testing.assert_allclose(J.dc_dc, fd[:H, :H], **FD)
    np.testing.assert_allclose(J.dc_dh, fd[:H, H:], **FD)
    np.testing.assert_allclose(J.dh_dc, fd[H:, :H], **FD)
    np.testing.assert_allclose(J.dh_dh, fd[H:, H:], **FD)
    # the carry line block is the forget gate and nothing else
    np.testing.assert_array_equal(J.dc_dc, np.diag(J.step.f))


@pytest.mark.parametrize("update", gru.UPDATE_CONVENTIONS)
@pytest.mark.parametrize("reset", gru.RESET_CONVENTIONS)
@pytest.mark.parametrize("seed", [0, 1])
def test_gru_jacobian_matches_finite_differences(update, reset, seed):
    H, D = 5, 2
    W = _weights(3, D, H, seed, scale=2.0)
    rng = np.random.default_rng(seed + 30)
    x, h = rng.standard_normal(D), rng.uniform(-1, 1, H)
    J = jac.gru_jacobian(x, h, **W, update=update, reset=reset)
    fd = jac.finite_difference_jacobian(lambda v: gru.step(x, v, **W, update=update, reset=reset).h, h)
    np.testing.assert_allclose(J.J, fd, **FD)


# --------------------------------------------------------------------------- along trajectories


def test_lstm_products_match_finite_differences_of_the_whole_run():
    H, D, T = 3, 2, 6
    W = _weights(4, D, H, 5, scale=1.5)
    xs = np.random.default_rng(6).standard_normal((T, D))
    h0, c0 = np.array([0.1, -0.3, 0.2]), np.array([0.5, 1.0, -0.7])
    steps = jac.lstm_trajectory(xs, h0, c0, **W)
    P = jac.jacobian_products(steps)
    assert P.shape == (T + 1, 2 * H, 2 * H)

    def run(v):
        c, h = v[:H], v[H:]
        for x in xs:
            s = lstm.step(x, h, c, **W)
            c, h = s.c, s.h
        return np.concatenate([c, h])

    fd = jac.finite_difference_jacobian(run, np.concatenate([c0, h0]))
    np.testing.assert_allclose(P[-1], fd, **FD)
    norms = jac.distance_norms(steps)
    assert norms[-1] == pytest.approx(np.linalg.norm(fd, 2), rel=1e-6)


def test_rnn_and_gru_trajectories_match_finite_differences():
    T = 5
    W1, W3 = _weights(1, 2, 4, 7, 1.5), _weights(3, 2, 4, 8, 1.5)
    xs = np.random.default_rng(9).standard_normal((T, 2))
    h0 = np.array([0.2, -0.1, 0.4, 0.0])
    states, Js = jac.rnn_trajectory(xs, h0, **W1)

    def run_rnn(h):
        for x in xs:
            h = rnn.step(x, h, **W1)
        return h

    np.testing.assert_allclose(states[-1], run_rnn(h0))
    np.testing.assert_allclose(jac.jacobian_products(Js)[-1], jac.finite_difference_jacobian(run_rnn, h0), **FD)

    def run_gru(h):
        for x in xs:
            h = gru.step(x, h, **W3, reset="before").h
        return h

    steps = jac.gru_trajectory(xs, h0, **W3, reset="before")
    np.testing.assert_allclose(jac.jacobian_products(steps)[-1], jac.finite_difference_jacobian(run_gru, h0), **FD)


def test_distance_norms_measure_from_the_last_step():
    Js = np.array([[[2.0]], [[3.0]], [[0.5]]])
    # from the end: |0.5|, |0.5*3|, |0.5*3*2|
    assert jac.distance_norms(Js).tolist() == [1.0, 0.5, 1.5, 3.0]
    assert jac.jacobian_products(Js)[:, 0, 0].tolist() == [1.0, 2.0, 6.0, 3.0]


# --------------------------------------------------------------------------- tanh RNN on a random network


def test_spectral_radius_and_rescaling():
    W = np.random.default_rng(0).standard_normal((6, 6))
    for rho in (0.5, 1.0, 1.7):
        V = jac.with_spectral_radius(W, rho)
        assert np.max(np.abs(np.linalg.eigvals(V))) == pytest.approx(rho, rel=1e-12)
    net = jac.random_rnn(3, 20, radius=0.8, seed=1)
    assert jac.spectral_radius(net["W_hh"]) == pytest.approx(0.8, rel=1e-12)
    assert np.abs(net["W_ih"]).max() <= 1 / math.sqrt(20)


@pytest.mark.parametrize("radius", [0.5, 1.0, 1.5])
def test_rnn_norms_are_bounded_by_powers_of_the_weight_norm(radius):
    norms = jac.rnn_norms_by_distance(radius, hidden=24, steps=30, seed=2)
    W = jac.random_rnn(4, 24, radius, np.random.default_rng(2))["W_hh"]
    s = np.linalg.norm(W, 2)
    k = np.arange(31)
    assert np.all(norms <= s**k * (1 + 1e-9))  # tanh' <= 1 can only shrink
    assert norms[0] == 1.0


@pytest.mark.parametrize("radius, input_scale, seed", [(0.8, 0.1, 0), (1.2, 1.0, 3)])
def test_a_random_run_keeps_the_network_rnn_norms_by_distance_measures(radius, input_scale, seed):
    run = jac.random_rnn_run(radius, hidden=12, steps=15, input_scale=input_scale, seed=seed)
    assert np.array_equal(
        run.norms, jac.rnn_norms_by_distance(radius, hidden=12, steps=15, input_scale=input_scale, seed=seed)
    )
    assert jac.spectral_radius(run.weights["W_hh"]) == pytest.approx(radius, rel=1e-12)
    assert run.states.shape == (16, 12) and not run.states[0].any()
    # The norms are those of the Jacobians diag(1 - h_t^2) W_hh of the states it keeps.
    slopes = 1 - run.states[1:] ** 2
    Js = slopes[:, :, None] * run.weights["W_hh"][None]
    np.testing.assert_allclose(run.norms, jac.distance_norms(Js), rtol=1e-12)
    assert run.mean_slope == pytest.approx(slopes.mean(), rel=1e-12)
    assert run.mean_factor == pytest.approx(run.norms[15] ** (1 / 15), rel=1e-12)


def test_a_random_run_refuses_bad_arguments_by_name():
    for kwargs, name in (({"steps": 0}, "steps"), ({"input_scale": -1.0}, "input_scale"), ({"hidden": 0}, "hidden")):
        with pytest.raises(ValueError, match=f"^{name}"):
            jac.random_rnn_run(0.8, **kwargs)


def test_small_radius_vanishes_geometrically():
    norms = jac.rnn_norms_by_distance(0.5, hidden=32, steps=40, seed=0)
    assert norms[40] < 1e-9
    rate = (norms[40] / norms[20]) ** (1 / 20)
    assert rate < 0.6  # about the radius, times tanh'


def test_nonnormal_matrix_grows_before_it_decays():
    W, v, curve = jac.nonnormal_growth(radius=0.5, size=4, coupling=1.0, steps=40)
    assert np.all(np.abs(np.linalg.eigvals(W)) == 0.5)
    direct = [np.linalg.norm(np.linalg.matrix_power(W, k) @ v) for k in range(41)]
    np.testing.assert_allclose(curve, direct, rtol=1e-12)
    assert np.all(np.diff(curve[:6]) > 0)  # grows for five steps
    assert curve.max() > 2.5 and curve[40] < 1e-6
    normal = 0.5 * np.eye(4)  # same spectrum, normal: decays at once
    assert np.linalg.norm(normal @ v) == 0.5


# --------------------------------------------------------------------------- LSTM: carry line against other paths


def test_cell_paths_total_is_the_finite_difference_of_the_cell():
    H, D, T = 3, 2, 8
    W = _weights(4, D, H, 3, scale=2.0)
    xs = np.random.default_rng(4).standard_normal((T, D))
    h0, c0 = np.zeros(H), np.array([0.3, -0.2, 0.9])
    paths = cell_paths.lstm_cell_paths(xs, h0, c0, **W)

    def cell_T(c):
        h = h0
        for x in xs:
            s = lstm.step(x, h, c, **W)
            c, h = s.c, s.h
        return c

    np.testing.assert_allclose(paths.total, jac.finite_difference_jacobian(cell_T, c0), **FD)
    fs = [s.step.f for s in jac.lstm_trajectory(xs, h0, c0, **W)]
    np.testing.assert_allclose(np.diag(paths.carry_line), np.prod(fs, axis=0), rtol=1e-14)
    np.testing.assert_allclose(paths.other, paths.total - paths.carry_line, rtol=1e-14)
    assert paths.total_norm.shape == (T + 1,) and paths.carry_share[0] == 1.0


def test_without_recurrent_weights_only_the_carry_line_is_left():
    W = _weights(4, 2, 3, 5)
    W["W_hh"][:] = 0.0  # every other path passes through W_hh
    xs = np.random.default_rng(1).standard_normal((10, 2))
    paths = cell_paths.lstm_cell_paths(xs, np.zeros(3), np.ones(3), **W)
    assert np.all(paths.other == 0.0)
    np.testing.assert_allclose(paths.total_norm, paths.carry_norm, rtol=1e-14)


def test_which_path_dominates_depends_on_saturation():
    xs = np.random.default_rng(1).standard_normal((30, 2))
    start = np.zeros(8), np.zeros(8)
    sat = cell_paths.lstm_cell_paths(
        xs, *start, **jac.random_lstm(2, 8, seed=0, forget_bias=6, input_bias=-6, candidate_bias=4)
    )
    strong = cell_paths.lstm_cell_paths(xs, *start, **jac.random_lstm(2, 8, seed=0, scale=5.0, forget_bias=5.0))
    assert np.all(sat.other_norm[1:] < 0.05 * sat.carry_norm[1:])
    assert strong.other_norm[30] > 5 * strong.carry_norm[30]
    assert strong.total_norm[30] > 1.0  # grows although every forget value is below one


# --------------------------------------------------------------------------- the scalar growth cell


def test_growth_example_factors_and_product():
    g = growth_cell.growth_trajectory(0.4)
    assert [round(v, 6) for v in g.factors] == [1.221326, 1.078827]
    assert round(g.product, 6) == 1.317600
    assert g.carry_line == 0.75**2 == 0.5625
    assert g.product > 1 > g.carry_line


def test_growth_factor_is_the_lstm_jacobian_along_h_equal_o_tanh_c():
    W = growth_cell.growth_cell_weights()
    for c in (-1.3, 0.0, 0.4, 2.0):
        h = 0.75 * math.tanh(c)
        J = jac.lstm_jacobian(np.zeros(1), [h], [c], **W)
        total = J.dc_dc[0, 0] + J.dc_dh[0, 0] * 0.75 * (1 - math.tanh(c) ** 2)
        assert growth_cell.growth_factor(c) == pytest.approx(total, rel=1e-12)


def test_growth_product_matches_finite_differences_of_the_run():
    def c3(c1):
        return growth_cell.growth_trajectory(c1, steps=2).cells[-1]

    eps = 1e-6
    fd = (c3(0.4 + eps) - c3(0.4 - eps)) / (2 * eps)
    assert fd == pytest.approx(growth_cell.growth_trajectory(0.4).product, rel=1e-8)
    assert round(fd, 6) == 1.317600


def test_find_growth_start():
    s = growth_cell.find_growth_start()
    assert f"{s.c_start:.6f}" == "0.400000"
    assert all(abs(r) < 5e-7 for r in s.residuals)
    mirrored = growth_cell.growth_trajectory(-s.c_start)
    assert mirrored.factors == pytest.approx(s.trajectory.factors, rel=1e-12)
    # any reachable first factor is found again
    for c in (0.05, 0.9, 2.5):
        target = growth_cell.growth_trajectory(c, steps=3).factors
        assert growth_cell.find_growth_start(target).c_start == pytest.approx(c, rel=1e-9)


def test_the_one_point_625_cell():
    assert growth_cell.weight_for_zero_state_growth(1.625, f=0.5, i=0.5, o=0.75) == 3.0
    assert growth_cell.zero_state_growth(0.5, 0.5, 0.75, 3.0) == 1.625
    ratios = growth_cell.perturbation_growth(eps=1e-9, steps=12)
    np.testing.assert_allclose(ratios, 1.625, rtol=1e-6)
    # independently: the LSTM Jacobian of (c, h) at the zero state has eigenvalues 0 and 1.625
    J = jac.lstm_jacobian(np.zeros(1), [0.0], [0.0], **growth_cell.growth_cell_weights(0.5, 0.5, 0.75, 3.0))
    assert sorted(np.abs(np.linalg.eigvals(J.full)).round(12).tolist()) == [0.0, 1.625]
    # and it stops once the perturbation is large enough to saturate tanh
    late = growth_cell.perturbation_growth(eps=1e-3, steps=40)
    assert late[-1] < 1.01


# --------------------------------------------------------------------------- the cell bound


def test_cell_bound_formula():
    assert cell_bound.cell_bound(0, 0.9, 3.0) == 3.0
    assert cell_bound.cell_bound(5, 1.0, -2.0) == 7.0
    t = np.arange(50)
    b = cell_bound.cell_bound(t, 0.8, 1.0)
    assert b[-1] == pytest.approx(0.8**49 + (1 - 0.8**49) / 0.2)
    assert np.all(b <= max(1.0, 1 / 0.2) + 1e-12)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.05, 1.0), st.floats(-20, 20), st.integers(0, 2**32 - 1))
def test_random_gates_never_break_the_bound(phi, c0, seed):
    rng = np.random.default_rng(seed)
    c = c0
    for t in range(1, 60):
        f = rng.uniform(0, phi)
        i, g = rng.uniform(0, 1), rng.uniform(-1, 1)
        c = f * c + i * g
        assert abs(c) <= cell_bound.cell_bound(t, phi, c0) * (1 + 1e-12)


def test_the_bound_is_approached_by_the_worst_case():
    phi, c = 0.9, 0.0
    for _ in range(100):
        c = phi * c + 0.999999 * math.tanh(20.0)  # f = phi, i and g as close to 1 as floats allow
    assert c == pytest.approx(cell_bound.cell_bound(100, phi), rel=1e-5)


@pytest.mark.parametrize("forget_bias", [0.0, 3.0, 8.0])
def test_simulated_lstm_respects_the_bound(forget_bias):
    chk = cell_bound.simulate_cell_bound(hidden=12, steps=150, seed=1, forget_bias=forget_bias)
    assert chk.holds and chk.tightness <= 1.0
    assert np.all(chk.cells <= chk.bounds)


# --------------------------------------------------------------------------- bad input

W4 = _weights(4, 2, 3, 0)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: jac.lstm_jacobian(np.zeros((2, 2)), np.zeros(3), np.zeros(3), **W4), "x"),
        (lambda: jac.lstm_jacobian(np.zeros(2), np.zeros((1, 3)), np.zeros(3), **W4), "h_prev"),
        (lambda: jac.lstm_jacobian(np.zeros(2), np.zeros(3), [np.nan] * 3, **W4), "c_prev"),
        (lambda: jac.lstm_trajectory(np.zeros(2), np.zeros(3), np.zeros(3), **W4), "xs"),
        (lambda: jac.gru_jacobian(np.zeros(2), np.zeros(3), **_weights(3, 2, 3, 0), update="z_both"), "update"),
        (lambda: jac.spectral_radius(np.ones((2, 3))), "W"),
        (lambda: jac.with_spectral_radius(np.eye(2), 0.0), "radius"),
        (lambda: jac.with_spectral_radius(np.eye(2, k=1), 0.5), "W"),
        (lambda: jac.random_rnn(0, 3, 0.5), "input_size"),
        (lambda: jac.random_lstm(2, 3, scale=-1.0), "scale"),
        (lambda: jac.jacobian_products(np.ones((2, 2, 3))), "jacobians"),
        (lambda: jac.nonnormal_growth(radius=-0.5), "radius"),
        (lambda: growth_cell.growth_factor(0.4, f=1.0), "f"),
        (lambda: growth_cell.find_growth_start((2.0,)), r"factors\[0\] must"),
        (lambda: growth_cell.find_growth_start(()), "factors"),
        (lambda: growth_cell.find_growth_start((0.75,)), r"factors\[0\] must"),
        (lambda: growth_cell.perturbation_growth(eps=0.0), "eps"),
        (lambda: cell_bound.cell_bound(3, 1.5), "phi"),
        (lambda: cell_bound.cell_bound(-1, 0.5), "t"),
        (lambda: cell_bound.simulate_cell_bound(hidden=0), "hidden"),
        (lambda: jac.finite_difference_jacobian(lambda v: v, [1.0], eps=0.0), "eps"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name}(\b| )"):
        call()


# --------------------------------------------------------------------------- ReLU steps, BPTT with a loss at every step, growth rates


def test_relu_jacobian_matches_finite_differences_away_from_the_corner():
    W = _weights(1, 3, 6, 4, 2.0)
    rng = np.random.default_rng(7)
    x, h = rng.standard_normal(3), rng.uniform(0, 1, 6)
    h_new, J = jac.rnn_jacobian(x, h, **W, nonlinearity="relu")
    a = W["W_ih"] @ x + W["b_ih"] + W["W_hh"] @ h + W["b_hh"]
    assert np.min(np.abs(a)) > 1e-3 and 0 < np.sum(a > 0) < 6  # both sides of the corner, none on it
    np.testing.assert_array_equal(h_new, np.maximum(a, 0))
    fd = jac.finite_difference_jacobian(lambda v: jac.rnn_jacobian(x, v, **W, nonlinearity="relu")[0], h)
    np.testing.assert_allclose(J, fd, **FD)


def test_an_unknown_nonlinearity_is_named():
    W = _weights(1, 2, 2, 0)
    with pytest.raises(ValueError, match="nonlinearity must be one of"):
        jac.rnn_trajectory(np.zeros((2, 2)), np.zeros(2), **W, nonlinearity="sigmoid")


def _loss_every_step(seed, T=6, D=3, H=4):
    """A tanh RNN with the loss sum_t |h_t - y_t|^2 / 2: its weights, inputs, targets, states and Jacobians."""
    model = rnn.RNN(D, H, seed=seed)
    rng = np.random.default_rng(seed + 100)
    xs, ys = rng.standard_normal((T, D)), rng.uniform(-1, 1, (T, H))
    states, Js = jac.rnn_trajectory(xs, np.zeros(H), **model.weights)
    return model, xs, ys, states, Js


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_loss_rates_are_the_gradients_the_model_backpropagates(seed):
    model, xs, ys, states, Js = _loss_every_step(seed)
    errors = states[1:] - ys
    delta = jac.loss_rates(Js, errors)
    outputs, _ = model.forward(xs[:, None, :])
    grads = model.backward(errors[:, None, :])
    slopes = 1 - states[1:] ** 2
    by_rates = sum(np.outer(slopes[t] * delta[t], states[t]) for t in range(len(xs)))
    np.testing.assert_allclose(by_rates, grads["weight_hh_l0"], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(jac.path_terms(Js, errors).sum(axis=1), delta, rtol=1e-12, atol=1e-14)

    # delta_1 against a finite difference of the whole loss in h_1
    def loss_from(h1):
        later, _ = jac.rnn_trajectory(xs[1:], h1, **model.weights)
        return 0.5 * np.sum((h1 - ys[0]) ** 2) + 0.5 * np.sum((later[1:] - ys[1:]) ** 2)

    fd = np.array([(loss_from(states[1] + e) - loss_from(states[1] - e)) / 2e-6 for e in 1e-6 * np.eye(4)])
    np.testing.assert_allclose(delta[0], fd, rtol=1e-6, atol=1e-9)


def test_path_terms_are_zero_before_their_loss_and_its_own_error_at_it():
    _, _, ys, states, Js = _loss_every_step(3)
    errors = states[1:] - ys
    terms = jac.path_terms(Js, errors)
    for s in range(6):
        np.testing.assert_array_equal(terms[s, s], errors[s])
        assert not terms[s, :s].any()
    np.testing.assert_allclose(terms[0, 5], np.linalg.multi_dot([J.T for J in Js[1:6]]) @ errors[5], rtol=1e-12)


def test_loss_rates_reject_errors_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"errors must have shape \(T, n\) = \(3, 1\)"):
        jac.loss_rates(np.ones((3, 1, 1)), np.ones((2, 1)))


def test_growth_rate_is_the_top_rate_of_a_long_product():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 5))
    Js = np.stack([A] * 200)
    assert jac.growth_rate(Js, burn_in=50) == pytest.approx(jac.spectral_radius(A), rel=1e-6)
    with pytest.raises(ValueError, match="burn_in must be below the number of steps"):
        jac.growth_rate(Js, burn_in=200)


def test_a_free_run_dies_below_radius_one_and_saturates_above_it():
    quiet, Js = jac.free_run(0.9, hidden=16, steps=150)
    assert np.abs(quiet[-1]).max() < 1e-6 * np.abs(quiet[0]).max()
    assert jac.growth_rate(Js, burn_in=50) == pytest.approx(0.9, abs=0.02)  # slopes are 1 at zero
    loud, _ = jac.free_run(2.0, hidden=16, steps=150)
    assert np.sqrt(np.mean(loud[-1] ** 2)) > 0.3 > 50 * np.abs(loud[0]).max()


@pytest.mark.parametrize("init", ["pytorch", "orthogonal", "identity"])
def test_init_norms_are_the_products_of_the_run_they_describe(init):
    from rnnmem.init import pytorch_weights, recurrent_matrix

    n = jac.init_norms_by_distance(init, hidden=8, steps=12, seed=3)
    rng = np.random.default_rng(3)
    W = pytorch_weights(4, 8, seed=rng)
    if init != "pytorch":
        W["W_hh"] = recurrent_matrix(init, 8, rng)
    xs = rng.standard_normal((12, 4))
    _, Js = jac.rnn_trajectory(xs, np.zeros(8), W["W_ih"], W["W_hh"], W["b_ih"], W["b_hh"])
    np.testing.assert_array_equal(n, jac.distance_norms(Js))
    if init != "pytorch":  # an orthogonal W_hh stretches nothing: only the slopes of tanh shrink
        assert np.all(np.diff(n) <= 1e-12)


def test_init_norms_reject_a_bad_flag():
    with pytest.raises(ValueError, match="zero_biases must be True or False, got 'yes'"):
        jac.init_norms_by_distance("identity", zero_biases="yes")  # type: ignore[arg-type]  # a bad value on purpose
    with pytest.raises(ValueError, match="kind must be one of"):
        jac.init_norms_by_distance("xavier")

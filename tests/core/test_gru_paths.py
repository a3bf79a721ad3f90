"""The GRU's state gradient split into its weight-free path and the rest (rnnmem.cell_paths)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from rnnmem import cell_paths, gru
from rnnmem import jacobians as jac

FD: dict[str, Any] = dict(rtol=1e-6, atol=1e-8)


def arrays(W: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    """A dict of the four arrays as the step functions' positional W_ih, W_hh, b_ih, b_hh (its conventions by keyword)."""
    return W["W_ih"], W["W_hh"], W["b_ih"], W["b_hh"]


def _run(xs, h0, W, **conventions):
    h = h0
    for x in xs:
        h = gru.step(x, h, **W, **conventions).h
    return h


@pytest.mark.parametrize("update", ["z_keeps", "z_writes"])
@pytest.mark.parametrize("reset", ["after", "before"])
def test_total_is_the_finite_difference_and_the_carry_line_the_product_of_kept_shares(update, reset):
    W = cell_paths.random_gru(2, 3, seed=5, scale=2.0, update_bias=1.0)
    xs = np.random.default_rng(6).standard_normal((7, 2))
    h0 = np.array([0.2, -0.5, 0.1])
    paths = cell_paths.gru_state_paths(xs, h0, **W, update=update, reset=reset)
    numeric = jac.finite_difference_jacobian(lambda h: _run(xs, h, W, update=update, reset=reset), h0)
    np.testing.assert_allclose(paths.total, numeric, **FD)
    zs = np.array([J.step.z for J in jac.gru_trajectory(xs, h0, **W, update=update, reset=reset)])
    kept = zs if update == "z_keeps" else 1.0 - zs
    np.testing.assert_allclose(np.diag(paths.carry_line), kept.prod(axis=0), rtol=1e-14)
    np.testing.assert_allclose(paths.other, paths.total - paths.carry_line, rtol=1e-14)
    assert paths.total_norm[0] == 1.0 and paths.other_norm[0] == 0.0


def test_every_weight_path_carries_the_write_share():
    # dh_t/dh_{t-1} = diag(z) + diag(1 - z) B, B from the chapter's formula (reset after the product)
    H = 4
    W = cell_paths.random_gru(3, H, seed=2, scale=3.0)
    rng = np.random.default_rng(3)
    x, h = rng.standard_normal(3), 0.5 * rng.standard_normal(H)
    step = jac.gru_jacobian(x, h, *arrays(W))
    r, z, n = step.step.r, step.step.z, step.step.n
    U_r, U_z, U_n = np.split(W["W_hh"], 3)
    b_hn = W["b_hh"][2 * H :]
    da_n = (U_n @ h + b_hn)[:, None] * (r * (1 - r))[:, None] * U_r + r[:, None] * U_n
    B = (z * (h - n))[:, None] * U_z + (1 - n**2)[:, None] * da_n
    np.testing.assert_allclose(step.J, np.diag(z) + (1 - z)[:, None] * B, rtol=1e-12, atol=1e-14)


def test_holding_the_gate_that_keeps_removes_the_other_paths_in_the_gru_not_in_the_lstm():
    xs = np.random.default_rng(1).standard_normal((30, 2))
    zero = np.zeros(8)
    g = cell_paths.gru_state_paths(xs, zero, *arrays(cell_paths.random_gru(2, 8, seed=0, scale=5.0, update_bias=30)))
    lw = jac.random_lstm(2, 8, seed=0, scale=5.0, forget_bias=30)
    lc = cell_paths.lstm_cell_paths(xs, zero, zero, **lw)
    assert g.carry_norm[30] == pytest.approx(1.0, abs=1e-9) and lc.carry_norm[30] == pytest.approx(1.0, abs=1e-9)
    assert g.other_norm[30] < 1e-8
    assert lc.other_norm[30] > 1.0


def test_the_state_stays_inside_minus_one_one():
    W = cell_paths.random_gru(2, 8, seed=0, scale=5.0)
    run = jac.gru_trajectory(np.random.default_rng(2).standard_normal((200, 2)), np.zeros(8), *arrays(W))
    assert max(float(np.abs(J.step.h).max()) for J in run) < 1.0


def test_random_gru_is_pytorchs_draw_with_the_update_offset():
    base = cell_paths.random_gru(2, 3, seed=4)
    moved = cell_paths.random_gru(2, 3, seed=4, update_bias=2.5)
    np.testing.assert_array_equal(moved["b_ih"] - base["b_ih"], [0, 0, 0, 2.5, 2.5, 2.5, 0, 0, 0])
    assert np.abs(base["W_hh"]).max() <= 1 / np.sqrt(3)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(input_size=0, hidden=3), "input_size"),
        (dict(input_size=2, hidden=-1), "hidden"),
        (dict(input_size=2, hidden=3, scale=0.0), "scale"),
        (dict(input_size=2, hidden=3, update_bias=float("nan")), "update_bias"),
        (dict(input_size=2, hidden=3, seed=-1), "seed"),
    ],
)
def test_random_gru_names_a_bad_argument(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        cell_paths.random_gru(**kwargs)


def test_the_two_regimes_split_the_lstm_paths_the_other_way_round():
    # hidden and input_size named, so the settings (floats) can only be the regime's
    sat = cell_paths.random_lstm_paths(30, hidden=8, input_size=2, **cell_paths.REGIMES["saturated"])
    strong = cell_paths.random_lstm_paths(30, hidden=8, input_size=2, **cell_paths.REGIMES["strong"])
    assert sat.other_norm[30] < 0.05 * sat.carry_norm[30]
    assert strong.other_norm[30] > 5 * strong.carry_norm[30]
    # The same draw as lstm_cell_paths on random_lstm's weights, from the zero state.
    xs = np.random.default_rng(1).standard_normal((30, 2))
    again = cell_paths.lstm_cell_paths(
        xs, np.zeros(8), np.zeros(8), **jac.random_lstm(2, 8, 0, scale=5.0, forget_bias=5.0)
    )
    np.testing.assert_array_equal(strong.total_norm, again.total_norm)


def test_a_bias_that_keeps_silences_only_the_grus_other_paths():
    for bias in (0.0, 30.0):
        lp, gp = cell_paths.keep_bias_paths(bias, steps=12)
        assert lp.carry_norm.shape == gp.carry_norm.shape == (13,)
    lp, gp = cell_paths.keep_bias_paths(30.0, steps=12)
    assert gp.other_norm[12] < 1e-3 < lp.other_norm[12]
    assert gp.carry_norm[12] == pytest.approx(1.0, abs=1e-9)  # z held at one keeps all of the state

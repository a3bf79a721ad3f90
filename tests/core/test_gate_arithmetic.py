"""rnnmem.gate_arithmetic: supplied-activation updates agree with the cells, solved weights hit their targets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnnmem import gate_arithmetic, gru, lstm, memory


def test_lstm_update_is_the_cell_equation():
    u = gate_arithmetic.lstm_update(0.8, f=0.9, i=0.2, g=0.5, o=0.75)
    assert u.kept == pytest.approx(0.72) and u.written == pytest.approx(0.1)
    assert u.c == pytest.approx(0.82) and u.h == pytest.approx(0.75 * math.tanh(0.82))
    assert isinstance(u.h, float)


def test_lstm_update_agrees_with_lstm_step_fed_biases_for_the_same_activations():
    b = np.array([memory.logit(0.2), memory.logit(0.9), math.atanh(0.5), memory.logit(0.75)])
    s = lstm.step(np.zeros(1), np.zeros(1), np.array([0.8]), np.zeros((4, 1)), np.zeros((4, 1)), b, np.zeros(4))
    u = gate_arithmetic.lstm_update(0.8, f=0.9, i=0.2, g=0.5, o=0.75)
    assert float(s.c[0]) == pytest.approx(u.c, abs=1e-14)
    assert float(s.h[0]) == pytest.approx(u.h, abs=1e-14)


def test_lstm_update_broadcasts_arrays():
    u = gate_arithmetic.lstm_update(np.array([0.5, 0.3]), f=np.array([0.8, 0.7]), i=0.5, g=0.0, o=1.0)
    assert isinstance(u.c, np.ndarray) and u.c.tolist() == pytest.approx([0.4, 0.21])


@pytest.mark.parametrize("update", ["z_keeps", "z_writes"])
@pytest.mark.parametrize("reset", ["after", "before"])
def test_gru_update_agrees_with_gru_step(update, reset):
    r, z, h, u, a_x, b_hn = 0.3, 0.7, -0.6, 1.7, 0.2, -0.4
    W_ih = np.zeros((3, 1))
    W_hh = np.array([[0.0], [0.0], [u]])
    b_ih = np.array([memory.logit(r), memory.logit(z), a_x])
    b_hh = np.array([0.0, 0.0, b_hn])
    s = gru.step(np.zeros(1), np.array([h]), W_ih, W_hh, b_ih, b_hh, update=update, reset=reset)
    w = gate_arithmetic.gru_update(h, z=z, r=r, u=u, a_x=a_x, b_hn=b_hn, update=update, reset=reset)
    assert float(s.n[0]) == pytest.approx(w.n, abs=1e-14)
    assert float(s.h[0]) == pytest.approx(w.h, abs=1e-14)
    assert w.kept + w.written == pytest.approx(w.h)


def test_gru_limits_update_one_reset_zero():
    keeps = gate_arithmetic.gru_update(0.8, z=1.0, r=0.0)
    writes = gate_arithmetic.gru_update(0.8, z=1.0, r=0.0, update="z_writes")
    assert keeps.h == 0.8 and keeps.n == 0.0
    assert writes.h == 0.0


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: gate_arithmetic.lstm_update(0.8, f=-0.1, i=0.2, g=0.5, o=0.75), "f"),
        (lambda: gate_arithmetic.lstm_update(0.8, f=0.9, i=0.2, g=1.5, o=0.75), "g"),
        (lambda: gate_arithmetic.lstm_update(float("nan"), f=0.9, i=0.2, g=0.5, o=0.75), "c_prev"),
        (lambda: gate_arithmetic.gru_update(0.8, z=1.1, r=0.2), "z"),
        (lambda: gate_arithmetic.gru_update(0.8, z=0.9, r=0.2, update="keeps"), "update"),
        (lambda: gate_arithmetic.gru_update(0.8, z=0.9, r=0.2, reset="inside"), "reset"),
        (lambda: gate_arithmetic.gate_rows([1.0, 2.0], [1.0]), "targets"),
        (lambda: gate_arithmetic.gate_rows([1.0, 2.0], [0.5], activation="relu"), "activation"),
        (lambda: gate_arithmetic.gate_rows([[1.0, 2.0]], [0.5]), "q"),
        (lambda: gate_arithmetic.gate_rows([1.0, 2.0], [0.5, 0.6], bias=[1.0, 2.0, 3.0]), "bias"),
        (lambda: gate_arithmetic.solved_lstm([1.0], [0.5, 0.1], [2.0], i=[0.5], f=[0.9], g=[0.2], o=[0.5]), "c_prev"),
        (lambda: gate_arithmetic.solved_lstm([1.0], [0.5], [2.0], i=[0.5, 0.5], f=[0.9], g=[0.2], o=[0.5]), "i"),
        (lambda: gate_arithmetic.solved_gru([1.0], [0.5], r=[0.5], z=[0.9], W_in=[[1.0, 1.0]], W_hn=[[1.0]]), "W_in"),
        (lambda: gate_arithmetic.solved_gru([1.0], [0.5], r=[0.5], z=[0.9], W_in=[[1.0]], W_hn=[[1.0, 0.0]]), "W_hn"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()


def test_gate_rows_hit_their_targets_and_are_the_shortest():
    q = np.array([0.6, 0.4, 0.1, -0.2])
    W = gate_arithmetic.gate_rows(q, [0.8, 0.7], bias=1.0)
    assert memory.sigmoid(W @ q + 1.0).tolist() == pytest.approx([0.8, 0.7], abs=1e-15)
    other = W[0] + np.array([0.4, -0.6, 0.0, 0.0])  # orthogonal to q: same gate, longer row
    assert float(other @ q) == pytest.approx(float(W[0] @ q))
    assert np.linalg.norm(other) > np.linalg.norm(W[0])
    g = gate_arithmetic.gate_rows(q, [-0.4], activation="tanh")
    assert math.tanh(float(g[0] @ q)) == pytest.approx(-0.4)


def test_two_unit_lstm_reproduces_the_forget_gates_with_bias_one():
    case = gate_arithmetic.two_unit_lstm()
    s = lstm.step(*case)
    assert s.f.tolist() == pytest.approx([0.8, 0.7], abs=1e-12)
    assert case.b_ih[2:4].tolist() == [1.0, 1.0] and not case.b_hh.any()
    assert np.delete(case.b_ih, [2, 3]).tolist() == [0.0] * 6
    assert s.c.tolist() == pytest.approx((s.f * case.c_prev + s.i * s.g).tolist())


def test_two_unit_gru_reset_placement_changes_the_candidate():
    case = gate_arithmetic.two_unit_gru()
    before = gru.step(*case, reset="before")
    after = gru.step(*case, reset="after")
    assert before.r.tolist() == pytest.approx([0.25, 0.75]) and before.z.tolist() == pytest.approx([0.9, 0.6])
    assert not np.allclose(before.n, after.n)


def test_the_four_grus_are_each_conventions_step():
    rows = gate_arithmetic.gru_conventions(0.8, z=0.9, r=0.25)
    assert [(row.update, row.reset) for row in rows] == list(gate_arithmetic.GRU_USED_BY)
    assert {(row.update, row.reset) for row in rows} == {
        (u, r) for u in gru.UPDATE_CONVENTIONS for r in gru.RESET_CONVENTIONS
    }
    case = gate_arithmetic.two_unit_gru()
    for row in rows:
        assert row.used_by == gate_arithmetic.GRU_USED_BY[row.update, row.reset]
        np.testing.assert_array_equal(row.two.h, gru.step(*case, update=row.update, reset=row.reset).h)
        # One unit, no input: the update convention decides which share of the old state is kept.
        keep = 0.9 if row.update == "z_keeps" else 0.1
        assert row.one.h == pytest.approx(keep * 0.8 + (1 - keep) * math.tanh(0.25 * 0.8), rel=1e-14)

"""Scalar BPTT: the three-reading example, the distance table, local rates, truncation."""

import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnmem import bptt

EXAMPLE: dict[str, Any] = dict(inputs=[1, 0, 0], target=1.0, w=0.5)

reals = st.floats(min_value=-1.5, max_value=1.5, allow_nan=False)


# --------------------------------------------------------------------------- the worked example


def test_example_forward_and_loss():
    r = bptt.scalar_bptt(**EXAMPLE)
    assert r.states == (1.0, 0.5, 0.25)
    assert r.previous == (0.0, 1.0, 0.5)
    assert r.loss == 0.5 * (0.25 - 1) ** 2 == 0.28125


def test_example_rates_contributions_and_gradient():
    r = bptt.scalar_bptt(**EXAMPLE)
    # last error, then one factor w = 0.5 per edge crossed backward
    assert r.rates == (-0.75 * 0.5 * 0.5, -0.75 * 0.5, -0.75)
    assert r.contributions == (0.0, -0.375, -0.375)
    assert math.copysign(1.0, r.contributions[0]) == 1.0  # no signed zero in a printed table
    assert r.gradient == -0.75
    assert r.rows[1] == (2, 1.0, 0.5, -0.375, -0.375)


def test_example_gradient_matches_the_polynomial():
    # h_3 = w^2 for these inputs, so L = (w^2 - 1)^2 / 2 and dL/dw = 2 w (w^2 - 1)
    for w in (0.5, -0.3, 1.2, 2.0):
        r = bptt.scalar_bptt([1, 0, 0], 1.0, w)
        assert r.gradient == pytest.approx(2 * w * (w * w - 1), rel=1e-12, abs=1e-15)


def test_example_update_and_new_forward_pass():
    r = bptt.scalar_bptt(**EXAMPLE, learning_rate=0.1)
    assert r.updated_w == pytest.approx(0.575, abs=1e-15)
    assert r.updated_states[-1] == pytest.approx(0.575**2, abs=1e-15)
    assert r.updated_states[-1] == pytest.approx(0.330625, abs=1e-15)
    assert r.updated_loss == pytest.approx(float(Fraction(1, 2) * (Fraction(330625, 10**6) - 1) ** 2), abs=1e-15)
    assert r.updated_loss == pytest.approx(0.2240314453125, abs=1e-15)
    assert r.updated_loss < r.loss


def test_finite_difference_agrees_on_the_example():
    assert bptt.finite_difference_gradient(**EXAMPLE) == pytest.approx(-0.75, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(reals, min_size=1, max_size=7),
    reals,
    st.floats(min_value=-1.2, max_value=1.2),
    reals,
    st.floats(min_value=-2, max_value=2),
)
def test_gradient_matches_finite_differences(xs, y, w, h0, u):
    r = bptt.scalar_bptt(xs, y, w, h0=h0, u=u)
    fd = bptt.finite_difference_gradient(xs, y, w, h0=h0, u=u, eps=1e-6)
    assert r.gradient == pytest.approx(fd, rel=1e-6, abs=1e-6)
    assert r.gradient == pytest.approx(sum(r.contributions), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(reals, st.one_of(st.none(), reals)), min_size=1, max_size=6),
    st.floats(min_value=-1.2, max_value=1.2),
)
def test_targets_at_several_steps_match_finite_differences(pairs, w):
    xs = [x for x, _ in pairs]
    ys = [y for _, y in pairs]
    if all(y is None for y in ys):
        ys[-1] = 0.5
    r = bptt.scalar_bptt(xs, ys, w)
    assert r.gradient == pytest.approx(bptt.finite_difference_gradient(xs, ys, w), rel=1e-6, abs=1e-6)


# --------------------------------------------------------------------------- distance, tanh, ReLU


def test_distance_table():
    rows = bptt.distance_multipliers()
    assert [r[0] for r in rows] == [0, 1, 2, 4, 8, 16]
    for n, small, large in rows:
        assert Fraction(small) == Fraction(1, 2) ** n
        assert Fraction(large) == Fraction(3, 2) ** n
    assert rows[-1][1:] == (0.0000152587890625, 656.8408355712891)
    assert rows[4][1] == 1 / 256 and rows[5][1] == 1 / 65536
    assert rows[3][2] == 5.0625 and rows[4][2] == 25.62890625


def test_exercise_one_transport():
    assert bptt.transported_rate(2, 0.5, 4) == 0.125
    assert bptt.transported_rate(2, 1.5, 4) == 10.125
    assert bptt.transported_rate(-0.75, 0.5, 0) == -0.75


def test_tanh_and_its_rate():
    a = 2.0
    by_definition = (math.exp(a) - math.exp(-a)) / (math.exp(a) + math.exp(-a))
    assert round(by_definition, 3) == 0.964
    assert round(bptt.tanh_rate(2.0), 3) == 0.071
    eps = 1e-6
    for a in (-3.0, -0.5, 0.0, 0.7, 2.0):
        fd = (math.tanh(a + eps) - math.tanh(a - eps)) / (2 * eps)
        assert bptt.tanh_rate(a) == pytest.approx(fd, abs=1e-9)
    assert bptt.tanh_rate(0) == 1.0


def test_relu_rates_and_array_input():
    import numpy as np

    out = bptt.relu_rate(np.array([-1.0, 0.0, 3.0]), at_zero=0.5)
    assert isinstance(out, np.ndarray) and out.tolist() == [0.0, 0.5, 1.0]
    assert isinstance(bptt.relu_rate(2), float)


# --------------------------------------------------------------------------- truncation


def test_exercise_two_missing_contribution():
    g = bptt.truncated_gradient([1, 0, 0], 1.0, 0.5, k1=3, k2=1)
    assert g.truncated == -0.375 and g.full == -0.75
    assert [(c.use, c.loss) for c in g.kept] == [(3, 3)]
    nonzero_cut = [c for c in g.cut if c.value != 0]
    assert [(c.use, c.value) for c in nonzero_cut] == [(2, -0.375)]
    corrected = 0.5 - 0.1 * (g.truncated + g.missing)
    assert corrected == pytest.approx(0.575, abs=1e-15)
    assert 0.5 - 0.1 * g.truncated == pytest.approx(0.5375)


def test_exercise_three_detached_chunk_boundary():
    # a clue at step 1, a target at step 4, chunks of two with the state passed on but detached
    g = bptt.truncated_gradient([1, 0, 0, 0], 1.0, 0.5, k1=2, k2=2)
    assert g.plan.boundaries == (2,)
    assert g.states[-1] == 0.125  # the value still crosses the boundary ...
    assert {c.use for c in g.kept} == {3, 4}  # ... but credit stops at it
    assert {(c.use, c.loss) for c in g.cut} == {(1, 4), (2, 4)}
    full = bptt.scalar_bptt([1, 0, 0, 0], 1.0, 0.5)
    assert g.full == pytest.approx(full.gradient, abs=1e-15)
    # the cut use at step 2 (w * h_1) is the only nonzero missing term
    assert g.missing == pytest.approx(full.contributions[1], abs=1e-15)
    assert g.truncated == pytest.approx(full.contributions[2] + full.contributions[3], abs=1e-15)


def test_plan_covers_every_pair_exactly_once():
    plan = bptt.truncation_plan(7, 3, 5, loss_steps="all")
    pairs = {(s, t) for t in range(1, 8) for s in range(1, t + 1)}
    assert set(plan.kept) | set(plan.cut) == pairs
    assert not set(plan.kept) & set(plan.cut)
    assert [u[0] for u in plan.updates] == [3, 6, 7]
    assert plan.updates[1] == (6, 2, (4, 5, 6))
    assert plan.boundaries == ()


def test_chunks_keep_exactly_the_pairs_inside_a_chunk():
    k = 3
    plan = bptt.truncation_plan(10, k, k, loss_steps="all")
    for s, t in plan.kept:
        assert (s - 1) // k == (t - 1) // k
    for s, t in plan.cut:
        assert (s - 1) // k != (t - 1) // k
    assert plan.boundaries == (3, 6, 9)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(reals, min_size=1, max_size=6),
    st.floats(min_value=-1.2, max_value=1.2),
    st.integers(1, 6),
    st.integers(1, 8),
)
def test_truncation_sums_and_limits(xs, w, k1, k2):
    ys = [0.3] * len(xs)
    g = bptt.truncated_gradient(xs, ys, w, k1=k1, k2=k2)
    full = bptt.scalar_bptt(xs, ys, w)
    assert g.full == pytest.approx(full.gradient, rel=1e-9, abs=1e-12)
    assert g.truncated + g.missing == pytest.approx(g.full, rel=1e-9, abs=1e-12)
    if k2 >= k1 * math.ceil(len(xs) / k1):  # every window reaches step 1
        assert not g.cut
    for c in g.kept:  # kept pairs lie in the window of the chunk end k1 * ceil(loss / k1)
        assert c.use >= k1 * math.ceil(c.loss / k1) - k2 + 1


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: bptt.scalar_bptt([], 1.0, 0.5), "inputs"),
        (lambda: bptt.scalar_bptt([1, float("nan")], 1.0, 0.5), "inputs"),
        (lambda: bptt.scalar_bptt([[1, 2]], 1.0, 0.5), "inputs"),  # type: ignore[list-item]  # a bad value on purpose
        (lambda: bptt.scalar_bptt("abc", 1.0, 0.5), "inputs"),  # type: ignore[arg-type]  # a bad value on purpose
        (lambda: bptt.scalar_bptt([1, 0], 1.0, float("inf")), "w"),
        (lambda: bptt.scalar_bptt([1, 0], [1.0], 0.5), "target"),
        (lambda: bptt.scalar_bptt([1, 0], [None, None], 0.5), "target"),
        (lambda: bptt.scalar_bptt([1, 0], 1.0, 0.5, learning_rate=0), "learning_rate"),
        (lambda: bptt.scalar_bptt([1, 0], 1.0, 0.5, h0=float("nan")), "h0"),
        (lambda: bptt.finite_difference_gradient([1], 1.0, 0.5, eps=-1), "eps"),
        (lambda: bptt.transported_rate(2, 0.5, -1), "distance"),
        (lambda: bptt.transported_rate(2, 0.5, 1.5), "distance"),  # type: ignore[arg-type]  # a bad value on purpose
        (lambda: bptt.distance_multipliers(factors=()), "factors"),
        (lambda: bptt.relu_rate(1.0, at_zero=2.0), "at_zero"),
        (lambda: bptt.tanh_rate(float("nan")), "a"),
        (lambda: bptt.truncation_plan(4, 0, 2), "k1"),
        (lambda: bptt.truncation_plan(4, 2, 0), "k2"),
        (lambda: bptt.truncation_plan(0, 1, 1), "length"),
        (lambda: bptt.truncation_plan(4, 2, 2, loss_steps=[5]), "loss_steps"),
        (lambda: bptt.truncation_plan(4, 2, 2, loss_steps="some"), "loss_steps"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()

"""Gradient clipping: global norm keeps the direction, clipping by value turns it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from rnnmem import clipping

finite = st.floats(min_value=-50, max_value=50, allow_nan=False)
grad_lists = st.lists(arrays(np.float64, st.integers(1, 6), elements=finite), min_size=1, max_size=4)


def test_global_norm_is_the_norm_of_everything():
    g = [np.array([[1.0, 2.0], [2.0, 0.0]]), np.array([4.0])]
    assert clipping.global_norm(g) == 5.0


def test_global_norm_clipping_caps_the_norm_and_keeps_direction():
    g = {"W": np.array([[3.0, -4.0]]), "b": np.array([12.0])}
    r = clipping.clip_by_global_norm(g, max_norm=1.3)
    assert set(r.grads) == {"W", "b"}
    assert r.norm_before == 13.0
    assert r.norm_after == pytest.approx(1.3, rel=1e-14)
    assert r.clipped
    assert r.cosine == pytest.approx(1.0, abs=1e-14)
    np.testing.assert_allclose(r.grads["W"], g["W"] * 0.1, rtol=1e-14)
    np.testing.assert_allclose(r.grads["b"], g["b"] * 0.1, rtol=1e-14)


def test_global_norm_clipping_leaves_small_gradients_alone():
    g = (np.array([0.3, 0.4]),)
    r = clipping.clip_by_global_norm(g, max_norm=1.0)
    assert isinstance(r.grads, tuple)
    assert not r.clipped and r.cosine == 1.0
    assert r.grads[0].tolist() == [0.3, 0.4]


def test_value_clipping_turns_the_direction():
    r = clipping.clip_by_value([np.array([3.0, 1.0])], clip_value=1.0)
    assert r.grads[0].tolist() == [1.0, 1.0]
    # cosine between (3, 1) and (1, 1), worked by hand
    assert r.cosine == pytest.approx(4 / (np.sqrt(10) * np.sqrt(2)), rel=1e-14)
    assert r.cosine < 0.9


def test_compare_clipping_rows():
    g = [np.array([10.0, 0.5, -0.2])]
    rows = clipping.compare_clipping(g, max_norm=1.0, clip_value=1.0)
    (m1, b1, a1, c1), (m2, b2, a2, c2) = rows
    assert (m1, m2) == ("global norm", "value")
    assert b1 == b2 == pytest.approx(np.sqrt(100.25 + 0.04))
    assert a1 == pytest.approx(1.0) and c1 == pytest.approx(1.0)
    clipped = np.array([1.0, 0.5, -0.2])
    assert a2 == pytest.approx(np.linalg.norm(clipped))
    assert c2 == pytest.approx(g[0] @ clipped / (np.linalg.norm(g[0]) * np.linalg.norm(clipped)), rel=1e-12)
    assert c2 < 0.95


def test_zero_gradient_has_no_direction():
    r = clipping.clip_by_global_norm([np.zeros(3)], 1.0)
    assert np.isnan(r.cosine) and r.norm_after == 0.0
    with pytest.raises(ValueError, match="^before"):
        clipping.direction_cosine([np.zeros(2)], [np.ones(2)])


@settings(max_examples=60, deadline=None)
@given(grad_lists, st.floats(min_value=0.01, max_value=100))
def test_global_norm_property(grads, theta):
    r = clipping.clip_by_global_norm(grads, theta)
    norm = clipping.global_norm(grads)
    assert r.norm_after == pytest.approx(min(norm, theta), rel=1e-12, abs=1e-300)
    if norm > 0:
        assert r.cosine == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(grad_lists, st.floats(min_value=0.01, max_value=100))
def test_value_clipping_property(grads, theta):
    r = clipping.clip_by_value(grads, theta)
    for before, after in zip(grads, r.grads):
        assert np.all(np.abs(after) <= theta)
        assert np.all(np.sign(after) == np.sign(before))  # never flips a sign
    assert r.norm_after <= r.norm_before + 1e-12
    if r.norm_before > 0:
        assert 0 < r.cosine <= 1.0


@pytest.mark.torch
def test_matches_torch_utilities(torch):
    rng = np.random.default_rng(3)
    grads = [rng.normal(0, 5, (4, 3)), rng.normal(0, 5, (3,))]
    params = [torch.nn.Parameter(torch.zeros(g.shape, dtype=torch.float64)) for g in grads]
    for p, g in zip(params, grads):
        p.grad = torch.from_numpy(g.copy())
    total = torch.nn.utils.clip_grad_norm_(params, max_norm=2.0)
    r = clipping.clip_by_global_norm(grads, 2.0)
    assert float(total) == pytest.approx(r.norm_before, rel=1e-12)
    for p, mine in zip(params, r.grads):  # torch divides by norm + 1e-6
        np.testing.assert_allclose(p.grad.numpy(), mine, rtol=1e-6)
    for p, g in zip(params, grads):
        p.grad = torch.from_numpy(g.copy())
    torch.nn.utils.clip_grad_value_(params, clip_value=1.5)
    for p, mine in zip(params, clipping.clip_by_value(grads, 1.5).grads):
        np.testing.assert_array_equal(p.grad.numpy(), mine)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: clipping.clip_by_global_norm([np.ones(2)], 0.0), "max_norm"),
        (lambda: clipping.clip_by_global_norm([np.ones(2)], -1.0), "max_norm"),
        (lambda: clipping.clip_by_global_norm([np.ones(2)], float("inf")), "max_norm"),
        (lambda: clipping.clip_by_value([np.ones(2)], 0), "clip_value"),
        (lambda: clipping.clip_by_value([np.ones(2)], float("nan")), "clip_value"),
        (lambda: clipping.clip_by_global_norm([], 1.0), "grads"),
        (lambda: clipping.clip_by_global_norm(np.ones(2), 1.0), "grads"),
        (lambda: clipping.clip_by_global_norm([np.array([1.0, np.nan])], 1.0), r"grads\[0\]"),
        (lambda: clipping.global_norm({"W": np.array([np.inf])}), r"grads\['W'\]"),
        (lambda: clipping.direction_cosine([np.ones(2)], [np.ones(3)]), "after"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name}"):
        call()

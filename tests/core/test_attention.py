"""The attention readout of :mod:`rnnmem.attention` against its definition, finite differences, and the counts.

The examples are drawn from a fixed seed (``derandomize``) so that CI sees the same cases on every run.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnmem import attention, cells

CASES = dict(
    T=st.integers(1, 40),
    B=st.integers(1, 3),
    H=st.integers(1, 5),
    scale=st.floats(0.0, 4.0),
    seed=st.integers(0, 2**32 - 1),
)


def _case(T, B, H, scale, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((T, B, H)), scale * rng.standard_normal(H), rng.standard_normal((B, H))


@settings(derandomize=True, max_examples=60, deadline=None)
@given(**CASES)
def test_attend_is_its_definition(T, B, H, scale, seed):
    """Scores q . h_t, weights exp(e_t) / sum_u exp(e_u), context sum_t alpha_t h_t, one sequence at a time."""
    h, q, _ = _case(T, B, H, scale, seed)
    out = attention.attend(h, q)
    for b in range(B):
        e = np.array([h[t, b] @ q for t in range(T)])
        w = np.exp(e) / np.exp(e).sum()
        assert np.allclose(out.scores[:, b], e)
        assert np.allclose(out.weights[:, b], w)
        assert np.allclose(out.context[b], sum(w[t] * h[t, b] for t in range(T)))
    assert np.allclose(out.weights.sum(axis=0), 1.0) and (out.weights >= 0).all()


@settings(derandomize=True, max_examples=40, deadline=None)
@given(**CASES)
def test_attend_backward_matches_central_differences(T, B, H, scale, seed):
    """Every entry of d_states and d_query against a central difference of L = sum_b g_b . h_bar_b."""
    h, q, g = _case(T, B, H, scale, seed)
    d_h, d_q = attention.attend_backward(h, q, attention.attend(h, q).weights, g)
    eps = 1e-6

    def loss(states, query):
        return float((attention.attend(states, query).context * g).sum())

    numeric_h = np.empty_like(h)
    for index in np.ndindex(h.shape):
        up, down = h.copy(), h.copy()
        up[index] += eps
        down[index] -= eps
        numeric_h[index] = (loss(up, q) - loss(down, q)) / (2 * eps)
    numeric_q = np.empty_like(q)
    for j in range(H):
        up, down = q.copy(), q.copy()
        up[j] += eps
        down[j] -= eps
        numeric_q[j] = (loss(h, up) - loss(h, down)) / (2 * eps)
    assert np.allclose(d_h, numeric_h, atol=1e-6, rtol=1e-5)
    assert np.allclose(d_q, numeric_q, atol=1e-6, rtol=1e-5)


@settings(derandomize=True, max_examples=30, deadline=None)
@given(**CASES)
def test_a_zero_query_averages_and_reaches_every_state_alike(T, B, H, scale, seed):
    """q = 0: alpha_t = 1/T, the context is the mean state, and every state's direct gradient is g / T."""
    h, _, g = _case(T, B, H, scale, seed)
    out = attention.attend(h, np.zeros(H))
    assert np.allclose(out.weights, 1.0 / T) and np.allclose(out.context, h.mean(axis=0))
    d_h, _ = attention.attend_backward(h, np.zeros(H), out.weights, g)
    assert np.allclose(d_h, np.broadcast_to(g / T, h.shape))


def test_the_weights_do_not_overflow_and_shift_freely():
    w = attention.attention_weights(np.array([800.0, 799.0, -1e3]))
    assert np.isfinite(w).all() and math.isclose(w[0] / w[1], math.e)
    e = np.random.default_rng(1).normal(size=(7, 3))
    assert np.allclose(attention.attention_weights(e), attention.attention_weights(e + 123.0))


def test_the_gradient_reaches_every_step_in_one_hop_whatever_the_distance():
    """The direct gradient at step 1 is alpha_1 g (plus the query's term): no product over the steps between."""
    rng = np.random.default_rng(2)
    for T in (3, 30, 300):
        h, g = rng.standard_normal((T, 1, 4)), rng.standard_normal((1, 4))
        q = np.zeros(4)
        out = attention.attend(h, q)
        d_h, _ = attention.attend_backward(h, q, out.weights, g)
        assert np.allclose(d_h[0], out.weights[0, :, None] * g)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: attention.attend(np.ones(3), np.ones(3)), "states must have shape"),
        (lambda: attention.attend(np.ones((3, 2)), np.ones(3)), "query must be 2 real numbers"),
        (lambda: attention.attend(np.full((3, 2), np.nan), np.ones(2)), "states must be finite"),
        (lambda: attention.attend(np.ones((3, 2)), np.array([np.inf, 0.0])), "query must be finite"),
        (lambda: attention.attend(np.array([["a"]]), np.ones(1)), "states must hold real numbers"),
        (lambda: attention.attention_weights([]), "scores must be real numbers"),
        (lambda: attention.attention_weights([1.0, np.nan]), "scores must be finite"),
        (
            lambda: attention.attend_backward(np.ones((3, 2)), np.ones(2), np.ones(2), np.ones(2)),
            "weights must have the states' shape",
        ),
        (
            lambda: attention.attend_backward(np.ones((3, 2)), np.ones(2), np.ones(3), np.ones(3)),
            "d_context must have the context's shape",
        ),
        (lambda: attention.state_numbers("transformer", 4), "cell must be one of"),
        (lambda: attention.cache_numbers(0, 4), "steps must be"),
        (lambda: attention.step_work("lstm", 3, -1), "hidden must be"),
        (lambda: attention.attention_work(0, 4), "step must be a whole number >= 1"),
        (lambda: attention.attention_work(1.5, 4), "step must be a whole number >= 1"),
        (lambda: attention.total_attention_work(10, 0), "hidden must be"),
    ],
)
def test_bad_input_is_refused_by_name(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_the_counts():
    """The recurrence: H or 2H numbers and G H (d + H) multiply-adds whatever the step; attention: T H numbers,
    2 t H multiply-adds at step t, H T (T + 1) in all."""
    for cell in cells.NAMES:
        assert attention.state_numbers(cell, 8) == (16 if cell == "lstm" else 8)
        assert attention.step_work(cell, 3, 8) == cells.GATES[cell] * 8 * 11
    steps = np.arange(1, 51)
    assert (attention.attention_work(steps, 8) == 16 * steps).all()
    assert attention.total_attention_work(50, 8) == int(attention.attention_work(steps, 8).sum())
    assert attention.cache_numbers(50, 8) == 400
    # Quadratic against linear: ten times the steps, about a hundred times the attention's work.
    ratio = attention.total_attention_work(1000, 8) / attention.total_attention_work(100, 8)
    assert 99 < ratio < 100

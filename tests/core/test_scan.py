"""The parallel scan of :mod:`rnnmem.scan` against the loop, a reverse loop and finite differences.

The examples are drawn from a fixed seed (``derandomize``) so that CI sees
the same cases on every run. Decays have modulus at most one, as in every
model of the chapter, so that the scan's regrouped products stay within
rounding of the loop's.
"""

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnmem.scan import (
    by_method,
    linear_scan,
    linear_scan_backward,
    scan_levels,
    sequential_scan,
    sequential_scan_backward,
)

CASES = dict(
    T=st.integers(1, 300),
    B=st.integers(1, 3),
    N=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    is_complex=st.booleans(),
    broadcast=st.booleans(),
    with_h0=st.booleans(),
)


def _case(T, B, N, seed, is_complex, broadcast, with_h0, dtype=np.float64):
    """Decays with |a| <= 1 (shape (T, 1, N) when broadcast, else (T, B, N)), inputs (T, B, N), h0 (B, N) or None."""
    rng = np.random.default_rng(seed)
    a_shape = (T, 1, N) if broadcast else (T, B, N)
    a = rng.uniform(0.0, 1.0, a_shape)
    b = rng.standard_normal((T, B, N))
    h0 = rng.standard_normal((B, N)) if with_h0 else None
    if is_complex:
        a = a * np.exp(1j * rng.uniform(-np.pi, np.pi, a_shape))
        b = b + 1j * rng.standard_normal((T, B, N))
        h0 = None if h0 is None else h0 + 1j * rng.standard_normal((B, N))
        dtype = np.result_type(dtype, np.complex64)
    return (
        a.astype(dtype),
        b.astype(dtype),
        None if h0 is None else h0.astype(dtype),
    )


def _reverse_loop(a, h, dh, h0):
    """The backward pass one step at a time, written from the chain rule (PyTorch's complex convention)."""
    T = dh.shape[0]
    a = np.broadcast_to(a, dh.shape)
    g = np.zeros_like(dh)
    later = np.zeros_like(dh[0])
    for t in range(T - 1, -1, -1):
        later = g[t] = dh[t] + (np.conj(a[t + 1]) * later if t + 1 < T else 0)
    h_prev = np.concatenate([(np.zeros_like(dh[:1]) if h0 is None else h0[None]), h[:-1]])
    return g * np.conj(h_prev), g, np.conj(a[0]) * g[0]


# --------------------------------------------------------------------------- forward


@settings(max_examples=60, deadline=None, derandomize=True)
@given(**CASES)
def test_scan_matches_loop_float64(T, B, N, seed, is_complex, broadcast, with_h0):
    a, b, h0 = _case(T, B, N, seed, is_complex, broadcast, with_h0)
    expected = sequential_scan(a, b, h0)
    got = linear_scan(a, b, h0)
    assert got.shape == b.shape and got.dtype == b.dtype
    scale = max(1.0, float(np.max(np.abs(expected))))
    assert np.max(np.abs(got - expected)) <= 1e-12 * scale


@settings(max_examples=30, deadline=None, derandomize=True)
@given(**CASES)
def test_scan_matches_loop_float32(T, B, N, seed, is_complex, broadcast, with_h0):
    a, b, h0 = _case(T, B, N, seed, is_complex, broadcast, with_h0, dtype=np.float32)
    got = linear_scan(a, b, h0)
    assert got.dtype == b.dtype
    # The loop in float64 on the same float32 inputs: the scan's error is rounding of float32 products and sums.
    exact = sequential_scan(a.astype(np.complex128 if is_complex else np.float64), b, h0)
    scale = max(1.0, float(np.max(np.abs(exact))))
    assert np.max(np.abs(got - exact)) <= 50 * np.finfo(np.float32).eps * math.log2(T + 1) * scale


def test_scan_on_a_decay_with_fewer_axes():
    """``a`` of shape (T,) or (T, N) against ``b`` (T, B, N) broadcasts on trailing axes, as numpy's does."""
    rng = np.random.default_rng(3)
    b = rng.standard_normal((6, 3, 3))
    for a in (rng.uniform(0, 1, 6), rng.uniform(0, 1, (6, 3))):
        np.testing.assert_allclose(linear_scan(a, b), sequential_scan(a, b), rtol=1e-14)
        h = np.empty_like(b)
        prev = np.zeros((3, 3))
        for t in range(6):
            prev = h[t] = a[t] * prev + b[t]
        np.testing.assert_allclose(linear_scan(a, b), h, rtol=1e-14)


# --------------------------------------------------------------------------- backward


def _backward_case(T, B, N, seed, is_complex, broadcast, with_h0):
    """A case of _case with its states h and a gradient dh to send back through them: (a, h, dh, h0)."""
    a, b, h0 = _case(T, B, N, seed, is_complex, broadcast, with_h0)
    h = sequential_scan(a, b, h0)
    dh = np.random.default_rng(seed + 1).standard_normal(b.shape).astype(b.dtype)
    return a, h, dh, h0


def _assert_within_rounding(got, want, h):
    """Gradients (da, db, dh0) within 1e-12 of ``want``, relative to the size of db (and of h, for da)."""
    (da, db, dh0), (da_want, db_want, dh0_want) = got, want
    scale = max(1.0, float(np.max(np.abs(db_want))))
    assert np.max(np.abs(db - db_want)) <= 1e-12 * scale
    assert np.max(np.abs(da - da_want)) <= 1e-12 * scale * max(1.0, float(np.max(np.abs(h)))) * h.shape[1]
    assert np.max(np.abs(dh0 - dh0_want)) <= 1e-12 * scale


@settings(max_examples=40, deadline=None, derandomize=True)
@given(**CASES)
def test_backward_matches_reverse_loop(T, B, N, seed, is_complex, broadcast, with_h0):
    a, h, dh, h0 = _backward_case(T, B, N, seed, is_complex, broadcast, with_h0)
    da, db, dh0 = linear_scan_backward(a, h, dh, h0)
    da_full, db_loop, dh0_loop = _reverse_loop(a, h, dh, h0)
    # da is summed over the batch axis along which a was broadcast.
    da_loop = da_full.sum(axis=1, keepdims=True) if broadcast else da_full
    assert da.shape == a.shape and db.shape == h.shape and dh0.shape == (B, N)
    _assert_within_rounding((da, db, dh0), (da_loop, db_loop, dh0_loop), h)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(**CASES)
def test_loop_backward_is_the_chain_rule_and_matches_the_scan(T, B, N, seed, is_complex, broadcast, with_h0):
    """sequential_scan_backward: the test's own reverse loop to the last bit, the scan's backward to 1e-12."""
    a, h, dh, h0 = _backward_case(T, B, N, seed, is_complex, broadcast, with_h0)
    da, db, dh0 = sequential_scan_backward(a, h, dh, h0)
    assert da.shape == a.shape and db.shape == h.shape and dh0.shape == (B, N)
    assert da.dtype == db.dtype == h.dtype
    da_full, db_loop, dh0_loop = _reverse_loop(a, h, dh, h0)
    assert np.array_equal(db, db_loop) and np.array_equal(dh0, dh0_loop)
    assert np.array_equal(da, da_full.sum(axis=1, keepdims=True) if broadcast else da_full)
    _assert_within_rounding((da, db, dh0), linear_scan_backward(a, h, dh, h0), h)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(**CASES, cut=st.floats(0.0, 1.0))
def test_loop_backward_in_two_spans_is_bitwise_one_span(T, B, N, seed, is_complex, broadcast, with_h0, cut):
    """Steps s..T-1 first (from h_{s-1}), then 0..s-1 with the carry dh0 added to dh_{s-1}: the same bits."""
    a, h, dh, h0 = _backward_case(T, B, N, seed, is_complex, broadcast, with_h0)
    _, whole, whole_dh0 = sequential_scan_backward(a, h, dh, h0)
    s = min(T - 1, max(1, round(cut * T))) if T > 1 else 0
    if s == 0:
        return  # one step: no boundary to cut at
    _, late, carry = sequential_scan_backward(a[s:], h[s:], dh[s:], h[s - 1])
    early_dh = dh[:s].copy()
    early_dh[-1] += carry
    _, early, early_dh0 = sequential_scan_backward(a[:s], h[:s], early_dh, h0)
    assert np.array_equal(np.concatenate([early, late]), whole)
    assert np.array_equal(early_dh0, whole_dh0)


def _loss(w, a, b, h0):
    """L = sum Re(conj(w) h): real, and linear in h, so every entry of dL/dh_t is w_t."""
    return float(np.sum(np.real(np.conj(w) * sequential_scan(a, b, h0))))


def _finite_difference(f, z, eps=1e-6):
    """dL/dRe z + i dL/dIm z, by central differences on each entry (PyTorch's convention)."""
    grad = np.zeros_like(z)
    for k in np.ndindex(z.shape):
        for unit in (1.0, 1j) if np.iscomplexobj(z) else (1.0,):
            zp, zm = z.copy(), z.copy()
            zp[k] += unit * eps
            zm[k] -= unit * eps
            grad[k] += unit * (f(zp) - f(zm)) / (2 * eps)
    return grad


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    T=st.integers(1, 9),
    B=st.integers(1, 2),
    N=st.integers(1, 3),
    seed=st.integers(0, 2**32 - 1),
    is_complex=st.booleans(),
    broadcast=st.booleans(),
)
def test_backward_matches_finite_differences(T, B, N, seed, is_complex, broadcast):
    a, b, h0 = _case(T, B, N, seed, is_complex, broadcast, True)
    w = _case(T, B, N, seed + 7, is_complex, False, False)[1]
    h = linear_scan(a, b, h0)
    FD: dict[str, Any] = dict(rtol=1e-6, atol=1e-8)
    expected = (
        _finite_difference(lambda x: _loss(w, x, b, h0), a),
        _finite_difference(lambda x: _loss(w, a, x, h0), b),
        _finite_difference(lambda x: _loss(w, a, b, x), h0),
    )
    for backward in (linear_scan_backward, sequential_scan_backward):
        for got, want, name in zip(backward(a, h, w, h0), expected, ("da", "db", "dh0")):
            np.testing.assert_allclose(got, want, **FD, err_msg=f"{backward.__name__}: {name}")


def test_backward_sums_over_broadcast_axes():
    """``a`` (T, N) against ``b`` (T, B, N), and a scalar ``h0``: gradients come back in their own shapes."""
    rng = np.random.default_rng(5)
    a, b, w = rng.uniform(0, 1, (4, 3)), rng.standard_normal((4, 2, 3)), rng.standard_normal((4, 2, 3))
    h = linear_scan(a, b, 0.5)
    da, db, dh0 = linear_scan_backward(a, h, w, 0.5)
    assert da.shape == (4, 3) and db.shape == (4, 2, 3) and np.shape(dh0) == ()
    np.testing.assert_allclose(da, _finite_difference(lambda x: _loss(w, x, b, 0.5), a), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(
        dh0, _finite_difference(lambda x: _loss(w, a, b, x), np.array(0.5)), rtol=1e-6, atol=1e-8
    )


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "args, name",
    [
        ((np.array(["x", "y"]), np.ones(2)), "a must"),
        ((np.ones(2), np.array([True, False])), "b must"),
        ((np.ones(2), np.ones(2), "zero"), "h0 must"),
        ((np.ones(3), np.ones(2)), "same number of steps"),
        ((np.ones((2, 3)), np.ones((2, 4))), "broadcast"),
        ((np.ones((2, 4, 3)), np.ones((2, 3))), "a must broadcast"),
        ((np.ones((2, 3)), np.ones((2, 3)), np.ones(4)), "h0 must broadcast"),
        ((np.ones(0), np.ones(0)), "T >= 1"),
    ],
)
def test_bad_input_names_the_argument(args, name):
    for scan in (linear_scan, sequential_scan):
        with pytest.raises(ValueError, match=name):
            scan(*args)


def test_by_method_pairs_each_forward_with_its_backward():
    assert by_method("scan") == (linear_scan, linear_scan_backward)
    assert by_method("loop") == (sequential_scan, sequential_scan_backward)


@pytest.mark.parametrize("method", ["Scan", "", None, "tree"])
def test_by_method_refuses_other_methods(method):
    with pytest.raises(ValueError, match=f"method must be 'scan' or 'loop', got {method!r}"):
        by_method(method)


@pytest.mark.parametrize("backward", [linear_scan_backward, sequential_scan_backward])
def test_backward_bad_input_names_the_argument(backward):
    with pytest.raises(ValueError, match="h must"):
        backward(np.ones(3), np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match=r"dh must hold the steps from first = 0 on, 2 of them, got shape \(3,\)"):
        backward(np.ones(2), np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="h0 must"):
        backward(np.ones((2, 3)), np.ones((2, 3)), np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match=r"first must be a step from 0 to T = 3, got 4"):
        backward(np.ones(3), np.ones(3), np.ones(0), first=4)
    with pytest.raises(ValueError, match=r"dh must hold the steps from first = 1 on, 2 of them, got shape \(3,\)"):
        backward(np.ones(3), np.ones(3), np.ones(3), first=1)
    with pytest.raises(ValueError, match="dh must be an array of real or complex numbers, got dtype bool"):
        backward(np.ones(3), np.ones(3), np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match=r"carry must have one step's shape \(2,\), got shape \(3,\)"):
        backward(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), carry=np.ones(3))


@pytest.mark.parametrize("backward", [linear_scan_backward, sequential_scan_backward])
@pytest.mark.parametrize("is_complex", [False, True])
@pytest.mark.parametrize("broadcast", [False, True])
@pytest.mark.parametrize("first", [0, 4, 6, 7])  # every step, the last three, the last, none
@pytest.mark.parametrize("with_carry", [False, True])
def test_backward_from_the_last_steps_is_the_backward_of_the_whole_dh(
    backward, is_complex, broadcast, first, with_carry
):
    """dh given from ``first`` on, with a carry: the same numbers as the whole dh, zeros before and carry added."""
    rng = np.random.default_rng(first)
    T, B, N = 7, 3, 4

    def draw(*shape):
        x = rng.standard_normal(shape)
        return x + 1j * rng.standard_normal(shape) if is_complex else x

    a = 0.9 * draw(T, 1 if broadcast else B, N)
    h, h0 = draw(T, B, N), draw(B, N)
    rows, carry = draw(T - first, B, N), draw(B, N) if with_carry else None
    whole = np.zeros_like(h)
    whole[first:] = rows
    if carry is not None:
        whole[-1] += carry
    expected = backward(a, h, whole, h0)
    got = backward(a, h, rows, h0, first=first, carry=carry)
    for name, e, g in zip(("da", "g", "dh0"), expected, got):
        assert g.shape == e.shape and g.dtype == e.dtype and np.array_equal(g, e), name


@pytest.mark.parametrize("T", [0, -1, 2.0, True, "8"])
def test_scan_levels_refuses_bad_T(T):
    with pytest.raises(ValueError, match="T must"):
        scan_levels(T)


# --------------------------------------------------------------------------- the tree


def _halvings(T):
    """The lengths of the recursion: T, T // 2, ... down to 1."""
    lengths = [T]
    while lengths[-1] > 1:
        lengths.append(lengths[-1] // 2)
    return lengths


@pytest.mark.parametrize("T", list(range(1, 70)) + [255, 256, 257, 1000])
def test_scan_levels_count(T):
    levels = scan_levels(T)
    up = sum(1 for n in _halvings(T) if n >= 2)  # one level of pairs per halving
    down = sum(1 for n in _halvings(T) if n >= 3)  # a step left between pairs only when three or more
    assert len(levels) == up + down
    assert all(levels)
    if T >= 2:
        assert up == math.floor(math.log2(T))
        assert len(levels) <= 2 * math.ceil(math.log2(T)) - 1
        if T & (T - 1) == 0:
            assert len(levels) == 2 * round(math.log2(T)) - 1


@pytest.mark.parametrize("T", list(range(1, 40)) + [100, 257])
def test_scan_levels_replay_every_prefix(T):
    """Replayed on intervals, the combines leave each step t covering steps 0..t exactly, each once."""
    covers = {t: (t, t) for t in range(T)}  # step t's current result covers steps first..last
    for level in scan_levels(T):
        written = set()
        for left, right in level:
            assert left < right, "a combine pairs an earlier step with a later one"
            assert right not in written, "two combines of one level write the same step"
            assert covers[left][1] + 1 == covers[right][0], "only adjacent intervals compose"
            written.add(right)
        for left, right in level:  # one level reads the previous level's results, then writes
            covers[right] = (covers[left][0], covers[right][1])
        assert not written & {left for left, _ in level}, "a level reads a step it writes"
    assert covers == {t: (0, t) for t in range(T)}


@pytest.mark.parametrize("T", list(range(2, 70)) + [1000, 1024])
def test_scan_levels_work_is_linear(T):
    """Pairs halve each up level; the work is under 2T combines, 2T - log2 T - 2 when T is a power of two."""
    levels = scan_levels(T)
    up = [len(level) for level in levels[: math.floor(math.log2(T))]]
    assert up == [n // 2 for n in _halvings(T)[:-1]]
    work = sum(len(level) for level in levels)
    assert work < 2 * T
    if T & (T - 1) == 0:
        assert work == 2 * T - round(math.log2(T)) - 2

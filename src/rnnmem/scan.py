r"""The linear recurrence :math:`h_t = a_t \odot h_{t-1} + b_t`, by a parallel scan, and its exact backward pass.

Every model of the chapter "Remembering by design" is this recurrence with a
different :math:`a_t` and :math:`b_t`: the LSTM's carry line
:math:`c_t = f_t \odot c_{t-1} + i_t \odot g_t` is it whenever the gates do
not read the state. Two steps compose into one of the same form,

.. math::

    (a_2, b_2) \circ (a_1, b_1) = (a_2 a_1,\; a_2 b_1 + b_2),

and the composition is associative, so the whole sequence can be computed in
a tree (Blelloch 1990; Martin and Cundy 2018) rather than one step after the
other. :func:`linear_scan` is the odd–even form of that tree: combine the
pairs :math:`(1, 2), (3, 4), \dots`, solve the half-length recurrence the
pairs make (the same function, recursively), then fill in the steps between,
one vectorized numpy pass per level: at most :math:`\lceil \log_2 T \rceil`
levels down and as many back up, :math:`O(T)` work in all, any :math:`T` (not only
powers of two). :func:`sequential_scan` is the loop, the definition.

Conventions:

* time is axis 0: ``a`` and ``b`` are ``(T, ...)``; ``a`` may have fewer
  trailing entries and broadcasts against ``b`` (a time-invariant decay is
  ``a`` of shape ``(T, N)`` against ``b`` ``(T, B, N)`` only if you give it
  as ``(T, 1, N)``: the shapes broadcast as numpy's do);
* ``h0`` is the state before step 1 (``None``: zeros);
* real or complex; the result has the common dtype of ``a``, ``b``, ``h0``;
* gradients of a real loss :math:`L` with respect to a complex array are
  given as :math:`\partial L/\partial \operatorname{Re} z + i\,\partial
  L/\partial \operatorname{Im} z` (PyTorch's convention). Then, with
  :math:`g_t = \partial L/\partial h_t` in total (through every later step),

  .. math::

      g_t = \delta h_t + \bar a_{t+1} g_{t+1}, \qquad
      \frac{\partial L}{\partial b_t} = g_t, \qquad
      \frac{\partial L}{\partial a_t} = g_t\, \bar h_{t-1}, \qquad
      \frac{\partial L}{\partial h_0} = \bar a_1 g_1 ,

  a linear recurrence again, run backwards: :func:`linear_scan_backward`
  computes it with the same scan, :func:`sequential_scan_backward` with
  the reverse loop.

>>> a = np.full(5, 0.5); b = np.ones(5)
>>> linear_scan(a, b).tolist()
[1.0, 1.5, 1.75, 1.875, 1.9375]
>>> bool(np.allclose(linear_scan(a, b), sequential_scan(a, b)))
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "linear_scan",
    "sequential_scan",
    "linear_scan_backward",
    "sequential_scan_backward",
    "by_method",
    "scan_levels",
]


def _arrays(a: Any, b: Any, h0: Any) -> tuple:
    """``a``, ``b`` and ``h0`` as arrays of one floating dtype, with their shapes checked."""
    arrays = {"a": a, "b": b} if h0 is None else {"a": a, "b": b, "h0": h0}
    out = {}
    for name, value in arrays.items():
        arr = np.asarray(value)
        if arr.dtype.kind not in "iufc" or arr.dtype == np.bool_:
            raise ValueError(f"{name} must be an array of real or complex numbers, got dtype {arr.dtype}")
        out[name] = arr
    a, b = out["a"], out["b"]
    if a.ndim < 1 or b.ndim < 1 or a.shape[0] < 1:
        raise ValueError(f"a and b must have time on axis 0 with T >= 1 steps, got shapes {a.shape} and {b.shape}")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"a and b must have the same number of steps, got {a.shape[0]} and {b.shape[0]}")
    try:
        step = np.broadcast_shapes(a.shape[1:], b.shape[1:])
    except ValueError:
        raise ValueError(f"a's and b's entries must broadcast, got shapes {a.shape} and {b.shape}") from None
    if step != b.shape[1:]:
        raise ValueError(f"a must broadcast to b's shape {b.shape}, got shape {a.shape}")
    # Give a b's number of axes (numpy aligns trailing axes), so that the scan's slices along time line up.
    a = a.reshape(a.shape[:1] + (1,) * (b.ndim - a.ndim) + a.shape[1:])
    dtype = np.result_type(*out.values(), np.float32)
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)
    h0 = out.get("h0")
    if h0 is not None:
        try:
            np.broadcast_to(h0, step)
        except ValueError:
            raise ValueError(f"h0 must broadcast to one step's shape {step}, got shape {h0.shape}") from None
        h0 = np.broadcast_to(h0, step).astype(dtype)
    return a.astype(dtype, copy=False), b.astype(dtype, copy=False), h0


def sequential_scan(a: Any, b: Any, h0: Any = None) -> np.ndarray:
    r"""The recurrence :math:`h_t = a_t \odot h_{t-1} + b_t` one step after the other: the definition.

    >>> sequential_scan([2.0, 2.0, 2.0], [1.0, 0.0, 0.0], h0=1.0).tolist()
    [3.0, 6.0, 12.0]
    """
    a, b, h0 = _arrays(a, b, h0)
    h = np.empty(b.shape, dtype=b.dtype)
    prev = np.zeros(b.shape[1:], dtype=b.dtype) if h0 is None else h0
    for t in range(b.shape[0]):
        prev = h[t] = a[t] * prev + b[t]
    return h


def _scan(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The odd–even scan from a zero state: ``a`` broadcasts against ``b``; returns a new array like ``b``."""
    T = b.shape[0]
    h = np.empty(b.shape, dtype=b.dtype)
    if T == 1:
        h[0] = b[0]
        return h
    n = T // 2
    a_even, a_odd = a[0 : 2 * n : 2], a[1 : 2 * n : 2]  # steps 1, 3, 5, ... and 2, 4, 6, ... (counting from 1)
    # Pair (2k+1, 2k+2) as one step: A = a_odd a_even, B = a_odd b_even + b_odd.
    pair_b = a_odd * b[0 : 2 * n : 2]
    pair_b += b[1 : 2 * n : 2]
    h[1 : 2 * n : 2] = _scan(a_odd * a_even, pair_b)  # the state after every pair
    h[0] = b[0]
    if T > 2:  # the steps between: h_{2k+1} = a_{2k+1} h_{2k} + b_{2k+1}
        rest = h[2::2]
        np.multiply(a[2::2], h[1 : 2 * ((T - 1) // 2) : 2], out=rest)
        rest += b[2::2]
    return h


def linear_scan(a: Any, b: Any, h0: Any = None) -> np.ndarray:
    r"""Every state of :math:`h_t = a_t \odot h_{t-1} + b_t`, ``(T, ...)``, by the odd–even parallel scan.

    ``a`` ``(T, ...)`` broadcasts against ``b`` ``(T, ...)``; ``h0`` is the
    state before the first step (zeros when ``None``). It computes what
    :func:`sequential_scan` computes, to rounding (the products are grouped
    differently): within ``1e-12`` relative in float64 for decays of size at
    most one.

    >>> T = 1000
    >>> rng = np.random.default_rng(0)
    >>> lam = 0.99 * np.exp(1j * rng.uniform(0, np.pi, 16))         # a complex decay per state
    >>> b = rng.standard_normal((T, 16)) + 0j
    >>> h = linear_scan(np.broadcast_to(lam, (T, 16)), b)
    >>> bool(np.max(np.abs(h - sequential_scan(np.broadcast_to(lam, (T, 16)), b))) < 1e-12)
    True
    """
    a, b, h0 = _arrays(a, b, h0)
    if h0 is not None:
        b = b.copy()
        b[0] += a[0] * h0
    return _scan(a, b)


def linear_scan_backward(
    a: Any, h: Any, dh: Any, h0: Any = None, *, first: int = 0, carry: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The gradients ``(da, db, dh0)`` of a loss through :math:`h_t = a_t \odot h_{t-1} + b_t`, by the scan.

    ``a`` is the forward pass's decay, ``h`` its states (:func:`linear_scan`'s
    result), ``dh`` :math:`\partial L/\partial h_t` for each step *directly*
    (not through later steps), ``h0`` the initial state (zeros when
    ``None``). The total gradient :math:`g_t = \delta h_t + \bar a_{t+1}
    g_{t+1}` is a linear recurrence in reverse time, computed by the same
    scan; then :math:`\partial L/\partial b_t = g_t`, :math:`\partial
    L/\partial a_t = g_t \bar h_{t-1}` (summed over the axes on which ``a``
    was broadcast, so ``da`` has ``a``'s shape) and :math:`\partial
    L/\partial h_0 = \bar a_1 g_1` (likewise summed to ``h0``'s shape; the
    module gives the convention for complex values).
    :func:`sequential_scan_backward` computes the same by the reverse loop;
    ``first`` and ``carry`` are as there.

    >>> a, b = np.array([0.5, 0.5]), np.array([1.0, 1.0])
    >>> h = linear_scan(a, b)                                  # [1, 1.5]
    >>> da, db, dh0 = linear_scan_backward(a, h, np.array([0.0, 1.0]))   # L = h_2 = a_2 (a_1 h_0 + b_1) + b_2
    >>> da.tolist(), db.tolist(), float(dh0)
    ([0.0, 1.0], [0.5, 1.0], 0.25)
    """
    return _backward(a, h, dh, h0, _reverse_by_scan, first, carry)


def sequential_scan_backward(
    a: Any, h: Any, dh: Any, h0: Any = None, *, first: int = 0, carry: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""What :func:`linear_scan_backward` computes, with :math:`g_t = \delta h_t + \bar a_{t+1} g_{t+1}` one step at a time.

    The backward pass of :func:`sequential_scan`: the reverse loop, one
    vectorized step per time step, the definition. Where the per-step cost
    is small beside the arrays' (wide rows: many sequences, or many members
    of an ensemble), it is the faster of the two (``make bench``). Across
    spans of steps it is exact: running it on steps ``s..e`` with the carry
    :math:`\bar a_{e+1} g_{e+1}` added to ``dh[e]`` gives the same numbers,
    bit for bit, as one run over the whole sequence.

    A loss often reads only the last steps (a readout of the last state).
    Then ``dh`` may hold only the steps from ``first`` on, ``(T - first,
    ...)``, the steps before it having no direct gradient, and ``carry``
    (one step's shape) is added to the last step's: the results are those of
    the whole ``dh``, zeros before ``first`` and ``carry`` added, bit for bit,
    without that array (a step with none adds zero, as the whole loop does).

    >>> a, b = np.array([0.5, 0.5]), np.array([1.0, 1.0])
    >>> h = sequential_scan(a, b)
    >>> [g.tolist() for g in sequential_scan_backward(a, h, np.array([0.0, 1.0]))]
    [[0.0, 1.0], [0.5, 1.0], 0.25]
    >>> [g.tolist() for g in sequential_scan_backward(a, h, np.array([1.0]), first=1)]
    [[0.0, 1.0], [0.5, 1.0], 0.25]
    """
    return _backward(a, h, dh, h0, _reverse_by_loop, first, carry)


def _reverse_by_scan(ca: np.ndarray, dh: np.ndarray, first: int, carry: np.ndarray | None) -> np.ndarray:
    """g_t = dh_t + ca_{t+1} g_{t+1} (``ca`` the decay, conjugated; ``dh`` the steps from ``first`` on, ``carry``
    added to the last), by the odd–even scan on the reversed sequence."""
    T = ca.shape[0]
    whole = np.zeros((T,) + dh.shape[1:], dtype=dh.dtype)
    whole[first:] = dh
    if carry is not None:
        whole[-1] += carry
    a_next = np.zeros((T,) + np.broadcast_shapes(ca.shape[1:], dh.shape[1:]), dtype=dh.dtype)
    a_next[: T - 1] = ca[1:]
    return np.ascontiguousarray(_scan(a_next[::-1], whole[::-1])[::-1])


def _reverse_by_loop(ca: np.ndarray, dh: np.ndarray, first: int, carry: np.ndarray | None) -> np.ndarray:
    """g_t = dh_t + ca_{t+1} g_{t+1} (``ca`` the decay, conjugated; ``dh`` the steps from ``first`` on, ``carry``
    added to the last), one step at a time from the last."""
    T = ca.shape[0]
    g = np.empty((T,) + dh.shape[1:], dtype=dh.dtype)
    last = g[T - 1 :]  # slices, not entries, so that a step is an array even when it is one number
    last[...] = dh[T - 1 - first :] if first < T else 0.0
    if carry is not None:
        last += carry
    for t in range(T - 2, -1, -1):
        step = g[t : t + 1]
        np.multiply(ca[t + 1 : t + 2], g[t + 1 : t + 2], out=step)
        if t >= first:
            step += dh[t - first : t - first + 1]
        else:
            np.add(step, 0.0, out=step)  # the step's zero, added as the whole dh adds it (-0 + 0 is +0)
    return g


def _backward(
    a: Any, h: Any, dh: Any, h0: Any, reverse, first: int = 0, carry: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The gradients of the recurrence, with the total gradient g computed by ``reverse`` (scan or loop)."""
    a_arr = np.asarray(a)
    h0_shape = None if h0 is None else np.shape(h0)
    dh = np.asarray(dh)
    T = a_arr.shape[0] if a_arr.ndim else 0
    if isinstance(first, bool) or not isinstance(first, (int, np.integer)) or not 0 <= first <= max(T, 0):
        raise ValueError(f"first must be a step from 0 to T = {T}, got {first!r}")
    if dh.ndim < 1 or dh.shape[0] != T - first:
        raise ValueError(f"dh must hold the steps from first = {first} on, {T - first} of them, got shape {dh.shape}")
    if dh.dtype.kind not in "iufc" or dh.dtype == np.bool_:
        raise ValueError(f"dh must be an array of real or complex numbers, got dtype {dh.dtype}")
    # a and h0 checked against every step's shape (a zero-cost stand-in for the whole dh, which is never made)
    a, _, h0 = _arrays(a, np.broadcast_to(np.zeros((), dtype=dh.dtype), (T,) + dh.shape[1:]), h0)
    h = np.asarray(h)
    if h.shape != (T,) + dh.shape[1:]:
        raise ValueError(f"h must have the shape of every step's dh, {(T,) + dh.shape[1:]}, got shape {h.shape}")
    dtype = np.result_type(a, dh, h)
    conj = np.conj if dtype.kind == "c" else (lambda z: z)
    if carry is not None:
        carry = np.asarray(carry)
        if carry.shape != dh.shape[1:]:
            raise ValueError(f"carry must have one step's shape {dh.shape[1:]}, got shape {carry.shape}")
        carry = carry.astype(dtype, copy=False)
    ca = conj(a).astype(dtype, copy=False)
    g = reverse(ca, dh.astype(dtype, copy=False), first, carry)
    if dtype.kind == "c":  # g_t conj(h_{t-1}): a product into a new array (numpy's complex product, written
        h_prev = np.empty_like(g)  # over one of its operands, can round another way)
        h_prev[1:] = h[:-1]
        h_prev[0] = 0.0 if h0 is None else h0
        da = g * conj(h_prev)
    else:  # g_t h_{t-1}, written in place: a real product rounds one way
        da = np.empty_like(g)
        da[1:] = h[:-1]
        da[0] = 0.0 if h0 is None else h0
        np.multiply(g, da, out=da)
    # Sum over the axes a was broadcast along, so that da has a's own shape.
    while da.ndim > a_arr.ndim:
        da = da.sum(axis=1)
    axes = tuple(k for k in range(1, a_arr.ndim) if a_arr.shape[k] == 1 and da.shape[k] != 1)
    if axes:
        da = da.sum(axis=axes, keepdims=True)
    dh0 = ca[0] * g[0]
    if h0_shape is not None:  # summed over the axes h0 was broadcast along, so that dh0 has h0's own shape
        dh0 = dh0.sum(axis=tuple(range(dh0.ndim - len(h0_shape))))
        dh0 = dh0.sum(axis=tuple(k for k, n in enumerate(h0_shape) if n == 1 and dh0.shape[k] != 1), keepdims=True)
    return da.astype(dtype, copy=False), g, dh0


def by_method(method: str) -> tuple[Callable, Callable]:
    """The forward and backward functions of ``method``: the scan's, ``"scan"``, or the loop's, ``"loop"``.

    >>> [f.__name__ for f in by_method("loop")]
    ['sequential_scan', 'sequential_scan_backward']
    >>> by_method("tree")
    Traceback (most recent call last):
    ...
    ValueError: method must be 'scan' or 'loop', got 'tree'
    """
    if method == "scan":
        return linear_scan, linear_scan_backward
    if method == "loop":
        return sequential_scan, sequential_scan_backward
    raise ValueError(f"method must be 'scan' or 'loop', got {method!r}")


def scan_levels(T: int) -> list[list[tuple[int, int]]]:
    """The combines of :func:`linear_scan` on ``T`` steps, level by level: for the diagram of its tree.

    Each level is a list of ``(left, right)`` pairs of step indices (from 0,
    in the original sequence) whose partial results that level combines: the
    up-sweep levels first (pairs of pairs), then the down-sweep levels (a
    step filled in from the state before it). The up-sweep has
    :math:`\\lfloor \\log_2 T\\rfloor` levels and the down-sweep
    :math:`\\lfloor \\log_2 (T/3)\\rfloor + 1` (none for :math:`T \\le 2`):
    at most :math:`2\\lceil \\log_2 T\\rceil - 1` in all, exactly that when
    :math:`T` is a power of two.

    >>> [len(level) for level in scan_levels(8)]
    [4, 2, 1, 1, 3]
    """
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1:
        raise ValueError(f"T must be a whole number of steps >= 1, got {T!r}")
    up: list[list[tuple[int, int]]] = []
    down: list[list[tuple[int, int]]] = []
    ends = list(range(T))  # the last original step each current entry covers
    while len(ends) > 1:
        n = len(ends) // 2
        up.append([(ends[2 * k], ends[2 * k + 1]) for k in range(n)])
        between = [(ends[2 * k + 1], ends[2 * k + 2]) for k in range((len(ends) - 1) // 2)]
        if between:
            down.append(between)
        ends = [ends[2 * k + 1] for k in range(n)]
    return up + down[::-1]

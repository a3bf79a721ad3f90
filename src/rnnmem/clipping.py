r"""Gradient clipping: capping a large gradient before the optimizer uses it.

A model's gradient is a collection of arrays :math:`g = (g_1, \dots, g_K)`,
one per parameter, given as a list/tuple or a dict of arrays. Treated as one
long vector it has the *global norm*

.. math::

    \|g\| = \sqrt{\textstyle\sum_k \sum_j g_{k,j}^2}.

**Clipping by global norm** (Pascanu, Mikolov and Bengio, 2013) rescales every
array by the same factor when the norm exceeds the threshold :math:`\theta`:

.. math::

    g \leftarrow g \cdot \min\!\left(1, \frac{\theta}{\|g\|}\right),

so the direction is kept exactly (cosine 1 between before and after).

**Clipping by value** caps each entry on its own,
:math:`g_{k,j} \leftarrow \min(\theta, \max(-\theta, g_{k,j}))`; large
entries lose more than small ones, so the direction turns.

Neither restores a gradient that has already vanished: clipping only shrinks.
The *direction cosine* of two gradients is
:math:`\langle a, b\rangle / (\|a\|\,\|b\|)` over all entries. Arrays in are
float64 arrays out, in the same container (list, tuple or dict, same keys).
Thresholds must be positive; bad input raises :class:`ValueError` naming the
argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .checks import check_finite, check_positive

__all__ = [
    "ClipResult",
    "global_norm",
    "direction_cosine",
    "clip_by_global_norm",
    "clip_by_value",
    "compare_clipping",
]


def _arrays(name: str, grads: Any) -> tuple[list, list[np.ndarray]]:
    """Split ``grads`` into its keys (or positions) and float64 arrays, checked finite."""
    if isinstance(grads, dict):
        keys = list(grads)
        values = [grads[k] for k in keys]
    elif isinstance(grads, (list, tuple)):
        keys = list(range(len(grads)))
        values = list(grads)
    else:
        raise ValueError(f"{name} must be a list, tuple or dict of arrays, got {type(grads).__name__}")
    if not values:
        raise ValueError(f"{name} must hold at least one array, got an empty {type(grads).__name__}")
    arrays = [np.array(check_finite(f"{name}[{k!r}]", np.asarray(v)), dtype=np.float64) for k, v in zip(keys, values)]
    return keys, arrays


def _rebuild(grads: Any, keys: list, arrays: list[np.ndarray]) -> Any:
    if isinstance(grads, dict):
        return dict(zip(keys, arrays))
    return type(grads)(arrays) if isinstance(grads, tuple) else list(arrays)


def _norm(arrays: list[np.ndarray]) -> float:
    return float(math.sqrt(math.fsum(float(np.sum(a * a)) for a in arrays)))


def global_norm(grads: Any) -> float:
    r"""The norm of all entries of all arrays together, :math:`\sqrt{\sum g^2}`.

    >>> global_norm([np.array([3.0]), np.array([4.0])])
    5.0
    """
    _, arrays = _arrays("grads", grads)
    return _norm(arrays)


def direction_cosine(before: Any, after: Any) -> float:
    r"""The cosine :math:`\langle a, b\rangle/(\|a\|\|b\|)` between two gradients of the same shapes.

    1 means the same direction. Both gradients must be nonzero.

    >>> round(direction_cosine([np.array([1.0, 1.0])], [np.array([2.0, 2.0])]), 12)
    1.0
    >>> round(direction_cosine([np.array([1.0, 0.0])], [np.array([1.0, 1.0])]), 6)
    0.707107
    """
    kb, a = _arrays("before", before)
    ka, b = _arrays("after", after)
    if kb != ka or [x.shape for x in a] != [y.shape for y in b]:
        raise ValueError(
            "after must hold arrays of the same keys and shapes as before, got "
            f"{[(k, y.shape) for k, y in zip(ka, b)]} against {[(k, x.shape) for k, x in zip(kb, a)]}"
        )
    if _norm(a) == 0.0:
        raise ValueError("before must be a nonzero gradient (a zero vector has no direction), got all zeros")
    if _norm(b) == 0.0:
        raise ValueError("after must be a nonzero gradient (a zero vector has no direction), got all zeros")
    return _cosine(a, b)


def _cosine(a: list[np.ndarray], b: list[np.ndarray]) -> float:
    dot = math.fsum(float(np.sum(x * y)) for x, y in zip(a, b))
    return float(min(1.0, max(-1.0, dot / (_norm(a) * _norm(b)))))


@dataclass(frozen=True)
class ClipResult:
    """What a clipping rule did.

    ``grads`` are the clipped arrays (same container as the input);
    ``norm_before`` and ``norm_after`` the global norms; ``clipped`` whether
    anything changed; ``cosine`` the direction cosine between before and after
    (``nan`` for an all-zero gradient, which has no direction).
    """

    method: str
    threshold: float
    grads: Any
    norm_before: float
    norm_after: float
    clipped: bool
    cosine: float


def _result(method: str, threshold: float, grads: Any, keys: list, before: list, after: list) -> ClipResult:
    nb, na = _norm(before), _norm(after)
    changed = any(not np.array_equal(x, y) for x, y in zip(before, after))
    cos = float("nan") if nb == 0.0 else (_cosine(before, after) if changed else 1.0)
    return ClipResult(
        method=method,
        threshold=threshold,
        grads=_rebuild(grads, keys, after),
        norm_before=nb,
        norm_after=na,
        clipped=changed,
        cosine=cos,
    )


def clip_by_global_norm(grads: Any, max_norm: float) -> ClipResult:
    r"""Scale all arrays by :math:`\min(1, \theta/\|g\|)`: the norm is capped, the direction kept.

    >>> r = clip_by_global_norm([np.array([3.0, 4.0])], max_norm=1.0)
    >>> r.grads[0].round(12).tolist(), r.norm_before, round(r.norm_after, 12), round(r.cosine, 12)
    ([0.6, 0.8], 5.0, 1.0, 1.0)
    """
    theta = float(check_positive("max_norm", max_norm))
    keys, before = _arrays("grads", grads)
    norm = _norm(before)
    scale = theta / norm if norm > theta else 1.0
    after = [a * scale for a in before]
    return _result("global norm", theta, grads, keys, before, after)


def clip_by_value(grads: Any, clip_value: float) -> ClipResult:
    r"""Cap every entry to :math:`[-\theta, \theta]` on its own: the direction turns.

    >>> r = clip_by_value([np.array([3.0, 1.0])], clip_value=1.0)
    >>> r.grads[0].tolist(), round(r.cosine, 4)
    ([1.0, 1.0], 0.8944)
    """
    theta = float(check_positive("clip_value", clip_value))
    keys, before = _arrays("grads", grads)
    after = [np.clip(a, -theta, theta) for a in before]
    return _result("value", theta, grads, keys, before, after)


def compare_clipping(grads: Any, max_norm: float, clip_value: float) -> list[tuple[str, float, float, float]]:
    """Rows ``(method, norm before, norm after, cosine)`` for both rules on one gradient.

    For a table: global-norm clipping keeps cosine 1, clipping by value does not.

    >>> g = {"W_hh": np.array([[8.0, 0.5], [0.2, -6.0]]), "b": np.array([0.1, 0.3])}
    >>> for method, nb, na, cos in compare_clipping(g, max_norm=1.0, clip_value=1.0):
    ...     print(f"{method:12s} {nb:6.3f} {na:6.3f} {cos:6.3f}")
    global norm  10.019  1.000  1.000
    value        10.019  1.546  0.929
    """
    rows = []
    for result in (clip_by_global_norm(grads, max_norm), clip_by_value(grads, clip_value)):
        rows.append((result.method, result.norm_before, result.norm_after, result.cosine))
    return rows

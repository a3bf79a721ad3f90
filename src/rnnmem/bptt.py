r"""Backpropagation through time, worked by hand on a scalar recurrence.

The model is the scalar linear recurrence

.. math::

    h_t = w\,h_{t-1} + u\,x_t, \qquad t = 1, \dots, T,

with a fixed starting state :math:`h_0` (zero unless told otherwise), an input
weight :math:`u` (one unless told otherwise) and the squared-error loss

.. math::

    L = \sum_{t \in \mathcal{T}} \tfrac12 (h_t - y_t)^2 ,

where :math:`\mathcal{T}` is the set of steps that carry a target: by default
the last step alone, as in the chapter's three-reading example.

**Backward.** The loss rate of a state, :math:`\delta_t = \partial L/\partial h_t`,
collects the state's own error (if step :math:`t` has a target) and what
flows back from the next state, starting from :math:`\delta_{T+1} = 0`:

.. math::

    \delta_t = [t \in \mathcal{T}]\,(h_t - y_t) + w\,\delta_{t+1}.

**Shared weight.** The weight :math:`w` is used once per step. Holding the
previous state fixed, the use at step :math:`t` contributes
:math:`\delta_t\,h_{t-1}`, and all uses of the one weight add:

.. math::

    \frac{\partial L}{\partial w} = \sum_{t=1}^{T} \delta_t\, h_{t-1}.

**Distance.** A small change that crosses :math:`n` edges of local rate
:math:`a` is multiplied by :math:`a^n`; for a ``tanh`` unit the local rate is
:math:`1 - \tanh^2(a)`, for a ReLU it is 1 above zero and 0 below.

**Truncation.** BPTT(:math:`k_1`, :math:`k_2`) (Williams and Peng, 1990): the
forward pass runs over the whole sequence, and every :math:`k_1` steps (and at
the last step) the losses of those steps are sent back through the :math:`k_2`
most recent steps only. A pair (use step :math:`s`, loss step :math:`t'`),
whose contribution to the gradient is :math:`(h_{t'} - y_{t'})\,w^{t'-s}\,h_{s-1}`,
is kept when :math:`s \ge e_{t'} - k_2 + 1`, with :math:`e_{t'} = k_1\lceil t'/k_1\rceil`
the end of the chunk that holds :math:`t'`; otherwise it is cut. Chunks whose
hidden state is passed on but detached are the case :math:`k_1 = k_2`.

Steps are numbered from 1; :math:`h_0` is the starting state. Scalars in give
Python floats out. Bad input raises :class:`ValueError` naming the argument.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .checks import (
    check_finite,
    check_nonnegative_int,
    check_positive,
    check_positive_int,
)

__all__ = [
    "ScalarBPTT",
    "Contribution",
    "TruncationPlan",
    "TruncatedGradient",
    "forward_states",
    "scalar_loss",
    "scalar_bptt",
    "finite_difference_gradient",
    "transported_rate",
    "distance_multipliers",
    "tanh_rate",
    "relu_rate",
    "truncation_plan",
    "truncated_gradient",
]


# --------------------------------------------------------------------------- checks


def _inputs(inputs: Any) -> tuple[float, ...]:
    try:
        one_d = not isinstance(inputs, (str, bytes)) and np.ndim(inputs) == 1
    except ValueError:
        one_d = False
    if not one_d:
        raise ValueError(f"inputs must be a non-empty sequence of real numbers, got {inputs!r}")
    arr = np.asarray(check_finite("inputs", np.asarray(inputs, dtype=object)), dtype=np.float64)
    if arr.size == 0:
        raise ValueError("inputs must be a non-empty sequence of real numbers, got an empty sequence")
    return tuple(float(v) for v in arr)


def _targets(target: Any, length: int) -> tuple[float | None, ...]:
    """A terminal target (one number) or one target per step (``None`` where there is none)."""
    if np.ndim(target) == 0 and not isinstance(target, (list, tuple)):
        y = check_finite("target", target)
        if isinstance(y, np.ndarray):
            y = float(y)
        return (None,) * (length - 1) + (float(y),)
    values = list(target)
    if len(values) != length:
        raise ValueError(
            f"target must be one number or a sequence of {length} entries (one per input), got {len(values)} entries"
        )
    out: list[float | None] = []
    for k, v in enumerate(values):
        out.append(None if v is None else float(check_finite(f"target[{k}]", v)))
    if all(v is None for v in out):
        raise ValueError(f"target must hold at least one number, got {values!r}")
    return tuple(out)


def _real(name: str, value: Any) -> float:
    if np.ndim(value) != 0:
        raise ValueError(f"{name} must be a single real number, got {value!r}")
    return float(check_finite(name, value))


# --------------------------------------------------------------------------- forward and backward


def forward_states(inputs: Sequence[float], w: float, *, h0: float = 0.0, u: float = 1.0) -> tuple[float, ...]:
    r"""The states :math:`h_1, \dots, h_T` of :math:`h_t = w h_{t-1} + u x_t`.

    >>> forward_states([1, 0, 0], 0.5)
    (1.0, 0.5, 0.25)
    """
    xs = _inputs(inputs)
    w, h0, u = _real("w", w), _real("h0", h0), _real("u", u)
    states, h = [], h0
    for x in xs:
        h = w * h + u * x
        states.append(h)
    return tuple(states)


def scalar_loss(inputs: Sequence[float], target: Any, w: float, *, h0: float = 0.0, u: float = 1.0) -> float:
    r"""The loss :math:`L = \sum_t \tfrac12 (h_t - y_t)^2` over the steps that carry a target.

    ``target`` is one number (a target for the last state only) or one entry
    per step, ``None`` where a step has no target.

    >>> scalar_loss([1, 0, 0], 1.0, 0.5)
    0.28125
    """
    states = forward_states(inputs, w, h0=h0, u=u)
    ys = _targets(target, len(states))
    return float(sum(0.5 * (h - y) ** 2 for h, y in zip(states, ys) if y is not None))


@dataclass(frozen=True)
class ScalarBPTT:
    """The whole worked example: forward states, loss rates, per-use credit, one update.

    ``previous[t-1]`` is :math:`h_{t-1}`, ``states[t-1]`` is :math:`h_t`,
    ``rates[t-1]`` is :math:`\\partial L/\\partial h_t` and ``contributions[t-1]``
    is :math:`\\delta_t h_{t-1}`, the credit of the use of :math:`w` at step ``t``.
    ``updated_w`` is :math:`w - \\eta\\,\\partial L/\\partial w`; ``updated_states``
    and ``updated_loss`` come from a fresh forward pass with it.
    """

    inputs: tuple[float, ...]
    targets: tuple[float | None, ...]
    w: float
    h0: float
    u: float
    previous: tuple[float, ...]
    states: tuple[float, ...]
    loss: float
    rates: tuple[float, ...]
    contributions: tuple[float, ...]
    gradient: float
    learning_rate: float
    updated_w: float
    updated_states: tuple[float, ...]
    updated_loss: float

    @property
    def rows(self) -> list[tuple[int, float, float, float, float]]:
        """Table rows: (reading, previous state, new state, loss rate, contribution)."""
        return [
            (t + 1, self.previous[t], self.states[t], self.rates[t], self.contributions[t])
            for t in range(len(self.states))
        ]


def scalar_bptt(
    inputs: Sequence[float], target: Any, w: float, *, h0: float = 0.0, u: float = 1.0, learning_rate: float = 0.1
) -> ScalarBPTT:
    r"""Forward, backward and one gradient step for :math:`h_t = w h_{t-1} + u x_t`.

    Follows the module's equations: rates :math:`\delta_t` by the backward
    recursion, contributions :math:`\delta_t h_{t-1}` per use of the shared
    weight, their sum as :math:`\partial L/\partial w`, and the update
    :math:`w - \eta\,\partial L/\partial w`.

    The chapter's three readings (inputs 1, 0, 0; target 1 for the last state;
    :math:`w = 0.5`; learning rate 0.1):

    >>> r = scalar_bptt([1, 0, 0], 1.0, 0.5)
    >>> r.states, r.loss
    ((1.0, 0.5, 0.25), 0.28125)
    >>> r.rates
    (-0.1875, -0.375, -0.75)
    >>> r.contributions, r.gradient
    ((0.0, -0.375, -0.375), -0.75)
    >>> r.updated_w, round(r.updated_states[-1], 12), round(r.updated_loss, 13)
    (0.575, 0.330625, 0.2240314453125)
    """
    xs = _inputs(inputs)
    ys = _targets(target, len(xs))
    w, h0, u = _real("w", w), _real("h0", h0), _real("u", u)
    eta = float(check_positive("learning_rate", learning_rate))
    states = forward_states(xs, w, h0=h0, u=u)
    previous = (h0,) + states[:-1]
    rates = [0.0] * len(states)
    after = 0.0
    for t in reversed(range(len(states))):
        y = ys[t]
        own = states[t] - y if y is not None else 0.0
        rates[t] = own + w * after
        after = rates[t]
    contributions = tuple(r * p + 0.0 for r, p in zip(rates, previous))  # + 0.0: no signed zeros
    gradient = float(sum(contributions))
    new_w = w - eta * gradient
    return ScalarBPTT(
        inputs=xs,
        targets=ys,
        w=w,
        h0=h0,
        u=u,
        previous=previous,
        states=states,
        loss=scalar_loss(xs, list(ys), w, h0=h0, u=u),
        rates=tuple(rates),
        contributions=contributions,
        gradient=gradient,
        learning_rate=eta,
        updated_w=new_w,
        updated_states=forward_states(xs, new_w, h0=h0, u=u),
        updated_loss=scalar_loss(xs, list(ys), new_w, h0=h0, u=u),
    )


def finite_difference_gradient(
    inputs: Sequence[float], target: Any, w: float, *, h0: float = 0.0, u: float = 1.0, eps: float = 1e-6
) -> float:
    r"""The central difference :math:`(L(w+\epsilon) - L(w-\epsilon)) / 2\epsilon`.

    An independent check of :func:`scalar_bptt`'s gradient: it never looks at
    a loss rate, only at two forward passes.

    >>> round(finite_difference_gradient([1, 0, 0], 1.0, 0.5), 9)
    -0.75
    """
    w = _real("w", w)
    eps = float(check_positive("eps", eps))
    up = scalar_loss(inputs, target, w + eps, h0=h0, u=u)
    down = scalar_loss(inputs, target, w - eps, h0=h0, u=u)
    return (up - down) / (2.0 * eps)


# --------------------------------------------------------------------------- distance and local rates


def transported_rate(rate: float, factor: float, distance: int) -> float:
    r"""A loss rate after crossing ``distance`` edges of local rate ``factor``: :math:`r\,a^n`.

    The chapter's first exercise, a rate of 2 crossing four edges:

    >>> transported_rate(2, 0.5, 4), transported_rate(2, 1.5, 4)
    (0.125, 10.125)
    """
    rate, factor = _real("rate", rate), _real("factor", factor)
    n = check_nonnegative_int("distance", distance)
    return float(rate * factor**n)


def distance_multipliers(
    factors: Sequence[float] = (0.5, 1.5), distances: Sequence[int] = (0, 1, 2, 4, 8, 16)
) -> list[tuple]:
    r"""Rows ``(distance, a_1^n, a_2^n, ...)``: the multiplier :math:`a^n` per edge factor.

    With the defaults this is the chapter's distance table.

    >>> for row in distance_multipliers(distances=(0, 2, 16)):
    ...     print(row)
    (0, 1.0, 1.0)
    (2, 0.25, 2.25)
    (16, 1.52587890625e-05, 656.8408355712891)
    """
    fs = [_real(f"factors[{k}]", a) for k, a in enumerate(factors)]
    if not fs:
        raise ValueError("factors must hold at least one local rate, got an empty sequence")
    ns = [check_nonnegative_int(f"distances[{k}]", n) for k, n in enumerate(distances)]
    return [(n, *(float(a**n) for a in fs)) for n in ns]


def _out(x: Any, value: Any) -> Any:
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        return float(value)
    return np.asarray(value, dtype=np.float64)


def tanh_rate(a: Any) -> Any:
    r"""The local rate of ``tanh``: :math:`1 - \tanh^2(a)`, at most 1 and only at 0.

    >>> round(math.tanh(2), 3), round(tanh_rate(2), 3)
    (0.964, 0.071)
    >>> tanh_rate(0)
    1.0
    """
    a = check_finite("a", a)
    t = np.tanh(np.asarray(a, dtype=np.float64))
    return _out(a, 1.0 - t * t)


def relu_rate(a: Any, at_zero: float = 0.0) -> Any:
    r"""The local rate of ReLU: 1 above zero, 0 below, ``at_zero`` at the corner.

    The corner value is a convention of the implementation (PyTorch and
    JAX use 0); any value in [0, 1] is a valid subgradient.

    >>> relu_rate(2.0), relu_rate(-2.0), relu_rate(0.0), relu_rate(0.0, at_zero=1.0)
    (1.0, 0.0, 0.0, 1.0)
    """
    a = check_finite("a", a)
    z = float(check_finite("at_zero", at_zero))
    if not 0.0 <= z <= 1.0:
        raise ValueError(f"at_zero must be a number in [0, 1] (a subgradient of ReLU at 0), got {at_zero!r}")
    aa = np.asarray(a, dtype=np.float64)
    return _out(a, np.where(aa > 0, 1.0, np.where(aa < 0, 0.0, z)))


# --------------------------------------------------------------------------- truncation


@dataclass(frozen=True)
class TruncationPlan:
    """Which (use step, loss step) pairs BPTT(k1, k2) keeps and which it cuts.

    ``updates`` lists, per update, ``(t, first_use, loss_steps)``: the update
    happens after step ``t``, handles the losses of ``loss_steps`` and sends
    them back to the uses at steps ``first_use .. t``. ``kept`` and ``cut``
    are sorted ``(use, loss)`` pairs with ``use <= loss``.
    ``boundaries`` are the steps after which the gradient is detached when
    ``k1 == k2`` (chunks); empty otherwise.
    """

    length: int
    k1: int
    k2: int
    updates: tuple[tuple[int, int, tuple[int, ...]], ...]
    kept: tuple[tuple[int, int], ...]
    cut: tuple[tuple[int, int], ...]
    boundaries: tuple[int, ...]


def _loss_steps(loss_steps: Any, length: int) -> tuple[int, ...]:
    if loss_steps is None:
        return (length,)
    if isinstance(loss_steps, str):
        if loss_steps != "all":
            raise ValueError(f"loss_steps must be None, 'all' or a collection of steps, got {loss_steps!r}")
        return tuple(range(1, length + 1))
    steps = sorted({check_positive_int("loss_steps", s) for s in loss_steps})
    if not steps or steps[-1] > length:
        raise ValueError(f"loss_steps must be steps between 1 and {length} (or 'all' or None), got {loss_steps!r}")
    return tuple(steps)


def truncation_plan(length: int, k1: int, k2: int, loss_steps: Any = None) -> TruncationPlan:
    r"""The bookkeeping of BPTT(:math:`k_1`, :math:`k_2`) over a sequence of ``length`` steps.

    Updates come after steps :math:`k_1, 2k_1, \dots` and after the last step.
    The update after step :math:`t = m k_1` handles the losses since the
    previous update and credits the uses at steps
    :math:`\max(1, m k_1 - k_2 + 1), \dots, t`. A shorter last chunk (the
    sequence ends at :math:`T < m k_1`) reaches back as a full one would, to
    step :math:`m k_1 - k_2 + 1`; so with :math:`k_1 = k_2` every chunk is
    credited within itself.
    ``loss_steps`` is ``None`` (the last step only), ``"all"``, or a
    collection of steps.

    Chunks of two over four steps, a loss at every step: the pairs that cross
    the detached boundary after step 2 are cut.

    >>> plan = truncation_plan(4, 2, 2, loss_steps="all")
    >>> plan.boundaries, plan.cut
    ((2,), ((1, 3), (1, 4), (2, 3), (2, 4)))
    """
    n = check_positive_int("length", length)
    k1 = check_positive_int("k1", k1)
    k2 = check_positive_int("k2", k2)
    losses = _loss_steps(loss_steps, n)
    updates: list[tuple[int, int, tuple[int, ...]]] = []
    kept: list[tuple[int, int]] = []
    cut: list[tuple[int, int]] = []
    previous = 0
    for m in range(1, -(-n // k1) + 1):
        t = min(m * k1, n)
        first = max(1, m * k1 - k2 + 1)
        handled = tuple(tau for tau in losses if previous < tau <= t)
        updates.append((t, first, handled))
        for tau in handled:
            for s in range(1, tau + 1):
                (kept if s >= first else cut).append((s, tau))
        previous = t
    times = [u[0] for u in updates]
    boundaries = tuple(t for t in times if t < n) if k1 == k2 else ()
    return TruncationPlan(
        length=n,
        k1=k1,
        k2=k2,
        updates=tuple(updates),
        kept=tuple(sorted(kept)),
        cut=tuple(sorted(cut)),
        boundaries=boundaries,
    )


@dataclass(frozen=True)
class Contribution:
    """One term of the gradient: the use of ``w`` at step ``use``, credited by the loss at step ``loss``.

    ``value`` is :math:`(h_{t'} - y_{t'})\\,w^{t' - s}\\,h_{s-1}`.
    """

    use: int
    loss: int
    value: float


@dataclass(frozen=True)
class TruncatedGradient:
    """The truncated gradient against the full one, term by term.

    ``states`` are the forward values, computed over the whole sequence: a
    value crosses a detached boundary even when credit does not.
    ``missing`` is ``full - truncated``, the sum of the ``cut`` terms.
    """

    plan: TruncationPlan
    states: tuple[float, ...]
    full: float
    truncated: float
    missing: float
    kept: tuple[Contribution, ...]
    cut: tuple[Contribution, ...]


def truncated_gradient(
    inputs: Sequence[float], target: Any, w: float, k1: int, k2: int, *, h0: float = 0.0, u: float = 1.0
) -> TruncatedGradient:
    r"""BPTT(:math:`k_1`, :math:`k_2`) on the scalar recurrence, against full BPTT.

    Every pair (use :math:`s`, loss :math:`t'`) contributes
    :math:`(h_{t'} - y_{t'})\,w^{t'-s}\,h_{s-1}`; the full gradient sums all
    of them, the truncated one only those that :func:`truncation_plan` keeps.

    The chapter's second exercise: a program that follows the last
    multiplication only (:math:`k_2 = 1`) misses the second reading's term.

    >>> g = truncated_gradient([1, 0, 0], 1.0, 0.5, k1=3, k2=1)
    >>> g.full, g.truncated, g.missing
    (-0.75, -0.375, -0.375)
    >>> [(c.use, c.loss, c.value) for c in g.cut]
    [(1, 3, 0.0), (2, 3, -0.375)]
    """
    xs = _inputs(inputs)
    ys = _targets(target, len(xs))
    w, h0, u = _real("w", w), _real("h0", h0), _real("u", u)
    states = forward_states(xs, w, h0=h0, u=u)
    previous = (h0,) + states[:-1]
    targets = {t + 1: y for t, y in enumerate(ys) if y is not None}  # loss step -> its target
    plan = truncation_plan(len(xs), k1, k2, loss_steps=list(targets))

    def term(s: int, tau: int) -> Contribution:
        error = states[tau - 1] - targets[tau]
        return Contribution(s, tau, float(error * w ** (tau - s) * previous[s - 1]) + 0.0)

    kept = tuple(term(s, tau) for s, tau in plan.kept)
    cut = tuple(term(s, tau) for s, tau in plan.cut)
    truncated = float(math.fsum(c.value for c in kept))
    missing = float(math.fsum(c.value for c in cut))
    full = float(math.fsum([c.value for c in kept] + [c.value for c in cut]))
    return TruncatedGradient(
        plan=plan, states=states, full=full, truncated=truncated, missing=missing, kept=kept, cut=cut
    )

r"""An attention readout over a recurrence's states, its backward pass, and what attention keeps and computes.

A recurrent layer leaves one state per step, :math:`h_1, \dots, h_T`. A
readout of the last state reads :math:`h_T` only; an **attention readout**
reads all of them, weighted by how well each matches a learned query
:math:`q \in \mathbb{R}^H` (the chapter "Looking back: attention"):

.. math::

    e_t = q^\top h_t, \qquad
    \alpha_t = \frac{\exp e_t}{\sum_{u=1}^{T} \exp e_u}, \qquad
    \bar h = \sum_{t=1}^{T} \alpha_t h_t .

With the gradient :math:`g = \partial\mathcal{L}/\partial \bar h` of a loss
read from the context :math:`\bar h`, the backward pass is

.. math::

    \frac{\partial \mathcal{L}}{\partial e_t} = \alpha_t\, g^\top (h_t - \bar h), \qquad
    \frac{\partial \mathcal{L}}{\partial h_t}\Big|_{\text{direct}}
        = \alpha_t\, g + \frac{\partial \mathcal{L}}{\partial e_t}\, q, \qquad
    \frac{\partial \mathcal{L}}{\partial q} = \sum_t \frac{\partial \mathcal{L}}{\partial e_t}\, h_t ,

each state's share reaching it in one step, whatever :math:`t`
(:func:`attend`, :func:`attend_backward`). Arrays are time first, as
everywhere in the book: states ``(T, ..., H)``, a query ``(H,)``.

**Counts.** What must be kept to go on from step :math:`T`, and the work of
a step, in numbers and multiply-adds (exact counts, not timings): a
recurrence carries its state, :math:`H` numbers (:math:`2H` for the LSTM,
:func:`state_numbers`), and does the same work at every step
(:func:`step_work`); a causal attention readout keeps every state,
:math:`TH` numbers (:func:`cache_numbers`), and at step :math:`t` scores and
sums :math:`t` of them (:func:`attention_work`, :func:`total_attention_work`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from . import cells
from .checks import check_positive_int

__all__ = [
    "Attended",
    "attention_weights",
    "attend",
    "attend_backward",
    "state_numbers",
    "cache_numbers",
    "step_work",
    "attention_work",
    "total_attention_work",
]


class Attended(NamedTuple):
    """What :func:`attend` computes: the context and the weights and scores it came from."""

    context: np.ndarray
    r"""``(..., H)``: :math:`\bar h = \sum_t \alpha_t h_t`."""
    weights: np.ndarray
    r"""``(T, ...)``: :math:`\alpha_t`, summing to one over the steps."""
    scores: np.ndarray
    r"""``(T, ...)``: :math:`e_t = q^\top h_t`."""


def _states(states: Any) -> np.ndarray:
    arr = np.asarray(states)
    if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
        raise ValueError(f"states must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim < 2 or min(arr.shape) < 1:
        raise ValueError(
            f"states must have shape (T, ..., H), time first, with T >= 1 and H >= 1, got shape {arr.shape}"
        )
    if not np.isfinite(arr).all():
        raise ValueError("states must be finite numbers, got a NaN or an infinity")
    return arr if arr.dtype.kind == "f" else arr.astype(np.float64)


def _query(query: Any, hidden: int) -> np.ndarray:
    q = np.asarray(query)
    if q.dtype.kind not in "iuf" or q.dtype == np.bool_ or q.shape != (hidden,):
        raise ValueError(f"query must be {hidden} real numbers, one per unit of the states, got shape {q.shape}")
    if not np.isfinite(q).all():
        raise ValueError("query must be finite numbers, got a NaN or an infinity")
    return q


def attention_weights(scores: Any) -> np.ndarray:
    r"""The softmax over steps (axis 0) of ``scores`` ``(T, ...)``: :math:`\alpha_t = e^{e_t} / \sum_u e^{e_u}`.

    Computed from :math:`e_t - \max_u e_u`, so that large scores do not
    overflow (the shift cancels in the ratio).

    >>> [round(float(a), 4) for a in attention_weights([0.0, 1.0, 2.0])]
    [0.09, 0.2447, 0.6652]
    >>> attention_weights([1000.0, 1000.0]).tolist()
    [0.5, 0.5]
    """
    e = np.asarray(scores)
    if e.dtype.kind not in "iuf" or e.dtype == np.bool_ or e.ndim < 1 or e.shape[0] < 1:
        raise ValueError(f"scores must be real numbers with an axis of steps first (T >= 1), got shape {e.shape}")
    if not np.isfinite(e).all():
        raise ValueError("scores must be finite numbers, got a NaN or an infinity")
    e = e if e.dtype.kind == "f" else e.astype(np.float64)
    w = np.exp(e - e.max(axis=0, keepdims=True))
    w /= w.sum(axis=0, keepdims=True)
    return w


def attend(states: Any, query: Any) -> Attended:
    r"""The attention readout's forward pass over ``states`` ``(T, ..., H)`` with ``query`` ``(H,)``.

    Scores :math:`e_t = q^\top h_t`, weights :math:`\alpha =
    \operatorname{softmax}(e)` over the steps, context :math:`\bar h =
    \sum_t \alpha_t h_t` (the module's equations). A zero query weighs every
    step alike, :math:`\alpha_t = 1/T`: the context is the mean state.

    >>> h = np.array([[[1.0, 0.0]], [[0.0, 1.0]], [[1.0, 1.0]]])   # T=3, B=1, H=2
    >>> out = attend(h, np.zeros(2))
    >>> out.weights[:, 0].tolist(), out.context.round(4).tolist()
    ([0.3333333333333333, 0.3333333333333333, 0.3333333333333333], [[0.6667, 0.6667]])
    >>> [round(float(a), 3) for a in attend(h, np.array([5.0, -5.0])).weights[:, 0]]
    [0.993, 0.0, 0.007]
    """
    h = _states(states)
    q = _query(query, h.shape[-1])
    e = h @ q
    w = attention_weights(e)
    context = np.einsum("t...,t...h->...h", w, h)
    return Attended(context, w, e)


def attend_backward(states: Any, query: Any, weights: Any, d_context: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""The attention readout's backward pass: ``(d_states, d_query)`` from ``d_context`` ``(..., H)``.

    ``weights`` are the forward pass's :math:`\alpha_t` (:func:`attend`);
    ``d_context`` is :math:`g = \partial\mathcal{L}/\partial\bar h`. Returns
    the direct gradient of every state, :math:`\alpha_t g +
    (\partial\mathcal{L}/\partial e_t)\, q`, ``(T, ..., H)`` (a recurrence
    below adds what reaches :math:`h_t` through later steps), and
    :math:`\partial\mathcal{L}/\partial q = \sum_t
    (\partial\mathcal{L}/\partial e_t)\, h_t` summed over every sequence,
    ``(H,)``, with :math:`\partial\mathcal{L}/\partial e_t = \alpha_t\,
    g^\top(h_t - \bar h)` (the module's equations).

    A central difference of :math:`\mathcal{L} = g^\top \bar h` agrees:

    >>> rng = np.random.default_rng(0)
    >>> h, q, g = rng.normal(size=(5, 2, 3)), rng.normal(size=3), rng.normal(size=(2, 3))
    >>> d_h, d_q = attend_backward(h, q, attend(h, q).weights, g)
    >>> up, down = h.copy(), h.copy()
    >>> up[0, 1, 2] += 1e-6
    >>> down[0, 1, 2] -= 1e-6
    >>> slope = ((attend(up, q).context - attend(down, q).context) * g).sum() / 2e-6
    >>> bool(np.isclose(slope, d_h[0, 1, 2]))
    True
    """
    h = _states(states)
    q = _query(query, h.shape[-1])
    w = np.asarray(weights)
    if w.shape != h.shape[:-1]:
        raise ValueError(f"weights must have the states' shape without the units, {h.shape[:-1]}, got {w.shape}")
    g = np.asarray(d_context)
    if g.shape != h.shape[1:]:
        raise ValueError(f"d_context must have the context's shape {h.shape[1:]}, got {g.shape}")
    d_alpha = np.einsum("t...h,...h->t...", h, g)  # g . h_t
    d_scores = w * (d_alpha - (w * d_alpha).sum(axis=0))  # alpha_t g . (h_t - h_bar)
    d_states = w[..., None] * g + d_scores[..., None] * q
    d_query = (d_scores[..., None] * h).reshape(-1, h.shape[-1]).sum(axis=0)
    return d_states, d_query


def state_numbers(cell: str, hidden: int) -> int:
    """The numbers a recurrence carries from one step to the next: :math:`H`, or :math:`2H` for the LSTM (:math:`h, c`).

    This is all it needs to go on, however long the sequence.

    >>> state_numbers("gru", 16), state_numbers("lstm", 16)
    (16, 32)
    """
    cell = cells.check_cell(cell)
    return (2 if cell == "lstm" else 1) * check_positive_int("hidden", hidden)


def cache_numbers(steps: int, hidden: int) -> int:
    r"""The numbers an attention readout must keep to read at step :math:`T`: every state, :math:`TH`.

    >>> cache_numbers(1000, 16)
    16000
    """
    return check_positive_int("steps", steps) * check_positive_int("hidden", hidden)


def step_work(cell: str, input_size: int, hidden: int) -> int:
    r"""Multiply-adds of one step of a recurrence: its :math:`G` blocks' products, :math:`G H (d + H)`.

    :math:`G` is 1 (tanh RNN), 3 (GRU) or 4 (LSTM) (:data:`rnnmem.cells.GATES`);
    biases and the elementwise operations of the gates are not counted. The
    count does not depend on the step: the recurrence does the same work at
    step 1 and at step 10,000.

    >>> step_work("lstm", 10, 16)
    1664
    """
    cell = cells.check_cell(cell)
    d, hidden = check_positive_int("input_size", input_size), check_positive_int("hidden", hidden)
    return cells.GATES[cell] * hidden * (d + hidden)


def attention_work(step: Any, hidden: int) -> Any:
    r"""Multiply-adds of a causal attention readout at step :math:`t`: :math:`t` scores and a sum of :math:`t` states, :math:`2tH`.

    ``step`` is a whole number >= 1 or an array of them. The :math:`t`
    exponentials of the softmax are not counted.

    >>> attention_work(1000, 16), attention_work(np.array([1, 2]), 16).tolist()
    (32000, [32, 64])
    """
    hidden = check_positive_int("hidden", hidden)
    t = np.asarray(step)
    if t.dtype.kind not in "iu" or t.size == 0 or (t < 1).any():
        raise ValueError(f"step must be a whole number >= 1 or an array of them, got {step!r}")
    work = 2 * t * hidden
    return int(work) if work.ndim == 0 else work


def total_attention_work(steps: int, hidden: int) -> int:
    r"""Multiply-adds of a causal attention readout over steps 1 to :math:`T`: :math:`\sum_t 2tH = H\,T(T+1)`.

    It grows as :math:`T^2`, where the recurrence's :math:`T` steps of
    :func:`step_work` grow as :math:`T`.

    >>> total_attention_work(1000, 16) == int(attention_work(np.arange(1, 1001), 16).sum())
    True
    """
    steps, hidden = check_positive_int("steps", steps), check_positive_int("hidden", hidden)
    return hidden * steps * (steps + 1)

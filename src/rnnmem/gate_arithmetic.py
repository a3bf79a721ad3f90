r"""Worked gate arithmetic: cells fed supplied activations, and weights solved to produce them.

Two kinds of worked example recur in the chapter on gates.

**Supplied activations.** The gates and the candidate are given as numbers,
and only the state update is computed. For the LSTM (gates ``i, f, o``,
candidate ``g``, as in :mod:`rnnmem.lstm`):

.. math::

    c_t = \underbrace{f\,c_{t-1}}_{\text{kept}} + \underbrace{i\,g}_{\text{written}},
    \qquad h_t = o \tanh(c_t).

For the GRU (reset gate ``r``, update gate ``z``, as in :mod:`rnnmem.gru`),
with the candidate's input part :math:`a_x` (its input weights times the input,
plus its input bias), a recurrent weight :math:`u` and a recurrent bias
:math:`b_{hn}`:

.. math::

    n_t &= \tanh(a_x + u\,(r\,h_{t-1}) + b_{hn})   &\text{reset "before"}\\
    n_t &= \tanh(a_x + r\,(u\,h_{t-1} + b_{hn}))   &\text{reset "after"}\\
    h_t &= k\,h_{t-1} + (1 - k)\,n_t,\quad k = z \text{ ("z_keeps") or } 1 - z \text{ ("z_writes")}.

Here a gate may sit exactly at 0 or 1 (the limits the sigmoid only
approaches), so that the limiting cases can be read off.

**Solved weights.** A worked cell in a textbook often states its gate values
but not the weights that give them. A gate row :math:`w` reads the joined
vector :math:`q = [x_t; h_{t-1}]` and produces :math:`\phi(w^\top q + b)`
(:math:`\phi` the logistic function or tanh). Of all rows that produce a
target activation :math:`a`, the shortest is

.. math::

    w = \frac{\phi^{-1}(a) - b}{q^\top q}\; q ,

since any other solution adds a vector orthogonal to :math:`q`.
:func:`gate_rows` computes it; :func:`solved_lstm` and :func:`solved_gru`
assemble whole cells from such rows, in torch layout (``W_ih`` holds the
columns that read :math:`x_t`, ``W_hh`` those that read :math:`h_{t-1}`, gates
stacked ``i|f|g|o`` and ``r|z|n``; the biases go in ``b_ih``, ``b_hh`` is zero).

Scalars in give Python floats out; arrays in give float64 arrays out. Bad
input raises :class:`ValueError` naming the argument.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from . import cells, gru, lstm, memory
from .checks import check_choice, check_finite

__all__ = [
    "ACTIVATIONS",
    "LSTMUpdate",
    "GRUUpdate",
    "LSTMCase",
    "GRUCase",
    "lstm_update",
    "gru_update",
    "gate_rows",
    "solved_lstm",
    "solved_gru",
    "two_unit_lstm",
    "two_unit_gru",
    "WeightRow",
    "two_unit_rows",
    "GRU_USED_BY",
    "ConventionRow",
    "gru_conventions",
]

ACTIVATIONS = ("sigmoid", "tanh")
"""The activations a solved gate row may feed: a gate's logistic function, or the candidate's tanh."""


# --------------------------------------------------------------------------- helpers


def _closed(name: str, value: Any, low: float, high: float, what: str) -> Any:
    value = check_finite(name, value)
    arr = np.asarray(value, dtype=np.float64)
    if np.any(arr < low) or np.any(arr > high):
        raise ValueError(f"{name} must be {what} between {low:g} and {high:g} (inclusive), got {value!r}")
    return value


def _gate(name: str, value: Any) -> Any:
    return _closed(name, value, 0.0, 1.0, "a gate value")


def _out(*inputs: Any, value: Any) -> Any:
    """Python float when every input is a scalar; float64 array otherwise."""
    if all(np.ndim(x) == 0 and not isinstance(x, np.ndarray) for x in inputs):
        return float(value)
    return np.asarray(value, dtype=np.float64)


def _vector(name: str, value: Any) -> np.ndarray:
    arr = np.asarray(check_finite(name, value), dtype=np.float64)
    if arr.ndim != 1 or arr.size < 1:
        raise ValueError(f"{name} must be a non-empty vector (one dimension), got shape {arr.shape}")
    return arr


# --------------------------------------------------------------------------- supplied activations


class LSTMUpdate(NamedTuple):
    """An LSTM state update from supplied activations: the two terms of the cell, the cell, the output."""

    kept: Any
    """:math:`f\\,c_{t-1}`, what survives of the old cell."""
    written: Any
    """:math:`i\\,g`, what the input gate lets in."""
    c: Any
    """The new cell, ``kept + written``."""
    h: Any
    """The new hidden state, :math:`o \\tanh(c)`."""


def lstm_update(c_prev: Any, f: Any, i: Any, g: Any, o: Any) -> LSTMUpdate:
    r"""The LSTM cell and hidden state from supplied gate values and candidate.

    ``f``, ``i`` and ``o`` are gate values in [0, 1] (the limits included),
    ``g`` a candidate in [-1, 1]; ``c_prev`` any finite cell value. Scalars or
    arrays that broadcast together.

    An old cell of 0.8 kept at 0.9, a candidate 0.5 let in at 0.2, exposed at 0.75:

    >>> u = lstm_update(0.8, f=0.9, i=0.2, g=0.5, o=0.75)
    >>> round(u.kept, 6), round(u.written, 6), round(u.c, 6), round(u.h, 6)
    (0.72, 0.1, 0.82, 0.506302)

    An output gate at 0 hides the cell without changing it:

    >>> u = lstm_update(0.8, f=0.5, i=0.25, g=-0.4, o=0.0)
    >>> round(u.c, 6), u.h
    (0.3, 0.0)
    >>> lstm_update(0.8, f=1.2, i=0.2, g=0.5, o=0.75)
    Traceback (most recent call last):
    ...
    ValueError: f must be a gate value between 0 and 1 (inclusive), got 1.2
    """
    c_prev = check_finite("c_prev", c_prev)
    f, i, o = _gate("f", f), _gate("i", i), _gate("o", o)
    g = _closed("g", g, -1.0, 1.0, "a candidate value")
    kept = np.multiply(f, c_prev)
    written = np.multiply(i, g)
    c = kept + written
    h = np.multiply(o, np.tanh(c))
    args = (c_prev, f, i, g, o)
    return LSTMUpdate(_out(*args, value=kept), _out(*args, value=written), _out(*args, value=c), _out(*args, value=h))


class GRUUpdate(NamedTuple):
    """A GRU state update from supplied gate values: the candidate, the two shares, the new state."""

    n: Any
    """The candidate :math:`n_t`."""
    kept: Any
    """:math:`k\\,h_{t-1}`, the share of the old state carried over."""
    written: Any
    """:math:`(1 - k)\\,n_t`, the share of the candidate written in."""
    h: Any
    """The new state, ``kept + written``."""


def gru_update(
    h_prev: Any,
    z: Any,
    r: Any,
    *,
    u: Any = 1.0,
    a_x: Any = 0.0,
    b_hn: Any = 0.0,
    update: str = "z_keeps",
    reset: str = "after",
) -> GRUUpdate:
    r"""The GRU candidate and new state from supplied gate values, in either convention.

    ``z`` and ``r`` are gate values in [0, 1] (the limits included); ``u`` is
    the candidate's recurrent weight, ``a_x`` its input part (weights times
    input, plus the input bias), ``b_hn`` its recurrent bias. ``update`` is
    ``"z_keeps"`` or ``"z_writes"`` and ``reset`` ``"after"`` or ``"before"``,
    the options of :func:`rnnmem.gru.step`, with the same defaults (the module
    docstring gives the equations). Scalars, or arrays that broadcast together (one unit each:
    ``u`` is a per-unit weight here, not a matrix).

    An old state 0.8, update gate 0.9 and reset gate 0.25, no input, recurrent
    weight 1:

    >>> s = gru_update(0.8, z=0.9, r=0.25)
    >>> round(s.n, 6), round(s.kept, 6), round(s.h, 6)
    (0.197375, 0.72, 0.739738)
    >>> round(gru_update(0.8, z=0.9, r=0.25, update="z_writes").h, 6)
    0.257638

    For one unit the placement of the reset matters only through the bias:

    >>> before = gru_update(0.8, z=0.9, r=0.25, b_hn=0.5, reset="before")
    >>> after = gru_update(0.8, z=0.9, r=0.25, b_hn=0.5)
    >>> round(before.n, 6), round(after.n, 6)
    (0.604368, 0.314021)
    """
    h_prev = check_finite("h_prev", h_prev)
    z, r = _gate("z", z), _gate("r", r)
    u, a_x, b_hn = check_finite("u", u), check_finite("a_x", a_x), check_finite("b_hn", b_hn)
    update = check_choice("update", update, ("z_keeps", "z_writes"))
    reset = check_choice("reset", reset, ("after", "before"))
    hp = np.asarray(h_prev, dtype=np.float64)
    if reset == "before":
        pre = np.add(a_x, np.multiply(u, np.multiply(r, hp))) + b_hn
    else:
        pre = np.add(a_x, np.multiply(r, np.multiply(u, hp) + b_hn))
    n = np.tanh(pre)
    keep = np.asarray(z, dtype=np.float64) if update == "z_keeps" else 1.0 - np.asarray(z, dtype=np.float64)
    kept = keep * hp
    written = (1.0 - keep) * n
    args = (h_prev, z, r, u, a_x, b_hn)
    return GRUUpdate(
        _out(*args, value=n), _out(*args, value=kept), _out(*args, value=written), _out(*args, value=kept + written)
    )


# --------------------------------------------------------------------------- solved weights


def gate_rows(q: Any, targets: Any, bias: Any = 0.0, activation: str = "sigmoid") -> np.ndarray:
    r"""The shortest weight rows that turn ``q`` into the ``targets`` activations.

    Row :math:`j` is :math:`w_j = (\phi^{-1}(a_j) - b_j)\,q / q^\top q`, where
    :math:`\phi` is the logistic function (``activation="sigmoid"``, targets
    in (0, 1)) or tanh (``"tanh"``, targets in (-1, 1)), :math:`a_j` the
    target and :math:`b_j` the bias (a scalar, or one per target). Returns an
    array of shape ``(len(targets), len(q))``.

    A forget gate of 0.8 with bias 1, reading a joined vector of four entries:

    >>> q = np.array([0.6, 0.4, 0.1, -0.2])
    >>> w = gate_rows(q, [0.8], bias=1.0)
    >>> w.round(6).tolist()
    [[0.406626, 0.271084, 0.067771, -0.135542]]
    >>> round(memory.sigmoid(float(w[0] @ q) + 1.0), 12)
    0.8
    >>> gate_rows(np.zeros(4), [0.8])
    Traceback (most recent call last):
    ...
    ValueError: q must not be all zeros: no weights can move a gate that reads only zeros
    """
    q = _vector("q", q)
    activation = check_choice("activation", activation, ACTIVATIONS)
    targets = _vector("targets", targets)
    if activation == "sigmoid":
        if np.any(targets <= 0) or np.any(targets >= 1):
            raise ValueError(
                f"targets must be gate values strictly between 0 and 1 for a sigmoid row, got {targets.tolist()}"
            )
        pre = memory.logit(targets)
    else:
        if np.any(targets <= -1) or np.any(targets >= 1):
            raise ValueError(f"targets must be strictly between -1 and 1 for a tanh row, got {targets.tolist()}")
        pre = np.arctanh(targets)
    bias = np.asarray(check_finite("bias", bias), dtype=np.float64)
    if bias.ndim > 1 or (bias.ndim == 1 and bias.shape != targets.shape):
        raise ValueError(f"bias must be a number or one per target ({targets.size}), got shape {bias.shape}")
    qq = float(q @ q)
    if qq == 0.0:
        raise ValueError("q must not be all zeros: no weights can move a gate that reads only zeros")
    return np.outer(pre - bias, q) / qq


class LSTMCase(NamedTuple):
    """An LSTM step's inputs and parameters (torch layout, gates ``i|f|g|o``), ready for :func:`rnnmem.lstm.step`."""

    x: np.ndarray
    h_prev: np.ndarray
    c_prev: np.ndarray
    W_ih: np.ndarray
    W_hh: np.ndarray
    b_ih: np.ndarray
    b_hh: np.ndarray


class GRUCase(NamedTuple):
    """A GRU step's inputs and parameters (torch layout, gates ``r|z|n``), ready for :func:`rnnmem.gru.step`."""

    x: np.ndarray
    h_prev: np.ndarray
    W_ih: np.ndarray
    W_hh: np.ndarray
    b_ih: np.ndarray
    b_hh: np.ndarray


def _split(rows: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    return rows[:, :d], rows[:, d:]


def solved_lstm(
    x: Any, h_prev: Any, c_prev: Any, *, i: Any, f: Any, g: Any, o: Any, forget_bias: Any = 0.0
) -> LSTMCase:
    r"""An LSTM step whose gates come out at the given values, with the shortest weights that do it.

    Every gate row is :func:`gate_rows` of :math:`q = [x; h_{t-1}]`; the
    forget rows have bias ``forget_bias``, every other bias is zero. ``i``,
    ``f``, ``o`` are targets in (0, 1), ``g`` in (-1, 1), one per unit.

    >>> case = solved_lstm([1.0], [0.5], [2.0], i=[0.5], f=[0.9], g=[0.2], o=[0.5], forget_bias=1.0)
    >>> s = lstm.step(*case)
    >>> [round(float(v[0]), 6) for v in (s.i, s.f, s.g, s.o, s.c)]
    [0.5, 0.9, 0.2, 0.5, 1.9]
    """
    x, h_prev, c_prev = _vector("x", x), _vector("h_prev", h_prev), _vector("c_prev", c_prev)
    H, d = h_prev.size, x.size
    if c_prev.size != H:
        raise ValueError(f"c_prev must have as many entries as h_prev ({H}), got {c_prev.size}")
    targets = {"i": i, "f": f, "g": g, "o": o}
    for name, value in targets.items():
        if _vector(name, value).size != H:
            raise ValueError(f"{name} must give one value per unit ({H}), got {np.size(value)}")
    forget_bias = float(check_finite("forget_bias", forget_bias))
    q = np.concatenate([x, h_prev])
    rows = np.vstack(
        [
            gate_rows(q, i),
            gate_rows(q, f, bias=forget_bias),
            gate_rows(q, g, activation="tanh"),
            gate_rows(q, o),
        ]
    )
    W_ih, W_hh = _split(rows, d)
    b_ih = np.zeros(cells.GATES["lstm"] * H)
    b_ih[cells.gate_slice("lstm", "f", H)] = forget_bias
    return LSTMCase(x, h_prev, c_prev, W_ih, W_hh, b_ih, np.zeros_like(b_ih))


def solved_gru(x: Any, h_prev: Any, *, r: Any, z: Any, W_in: Any, W_hn: Any) -> GRUCase:
    r"""A GRU step whose reset and update gates come out at the given values; the candidate's weights as given.

    The ``r`` and ``z`` rows are :func:`gate_rows` of :math:`q = [x; h_{t-1}]`
    with zero bias; ``W_in`` ``(H, D)`` and ``W_hn`` ``(H, H)`` are the
    candidate's input and recurrent weights, whose result depends on where the
    reset gate acts. Every bias is zero.

    >>> case = solved_gru([0.0], [0.8], r=[0.25], z=[0.9], W_in=[[0.0]], W_hn=[[1.0]])
    >>> s = gru.step(*case, reset="before")
    >>> round(float(s.r[0]), 6), round(float(s.z[0]), 6)
    (0.25, 0.9)
    """
    x, h_prev = _vector("x", x), _vector("h_prev", h_prev)
    H, d = h_prev.size, x.size
    for name, value in (("r", r), ("z", z)):
        if _vector(name, value).size != H:
            raise ValueError(f"{name} must give one value per unit ({H}), got {np.size(value)}")
    W_in = np.asarray(check_finite("W_in", W_in), dtype=np.float64)
    W_hn = np.asarray(check_finite("W_hn", W_hn), dtype=np.float64)
    if W_in.shape != (H, d):
        raise ValueError(f"W_in must have shape ({H}, {d}), got shape {W_in.shape}")
    if W_hn.shape != (H, H):
        raise ValueError(f"W_hn must have shape ({H}, {H}), got shape {W_hn.shape}")
    q = np.concatenate([x, h_prev])
    rows = np.vstack([gate_rows(q, r), gate_rows(q, z)])
    W_ih_rz, W_hh_rz = _split(rows, d)
    W_ih = np.vstack([W_ih_rz, W_in])
    W_hh = np.vstack([W_hh_rz, W_hn])
    return GRUCase(x, h_prev, W_ih, W_hh, np.zeros(cells.GATES["gru"] * H), np.zeros(cells.GATES["gru"] * H))


def two_unit_lstm() -> LSTMCase:
    r"""The chapter's two-unit LSTM cell: forget gates 0.80 and 0.70 with :math:`b_f = 1`.

    Inputs :math:`x = (0.6, 0.4)`, :math:`h_{t-1} = (0.1, -0.2)`,
    :math:`c_{t-1} = (0.5, 0.3)`. The forget gates (0.80, 0.70) are the
    textbook's; the other activations are this book's choice, round numbers
    that keep the arithmetic readable: :math:`i = (0.6, 0.4)`,
    :math:`g = (0.5, -0.4)`, :math:`o = (0.9, 0.6)`. Weights from
    :func:`solved_lstm`.

    >>> s = lstm.step(*two_unit_lstm())
    >>> s.f.round(6).tolist(), s.c.round(6).tolist()
    ([0.8, 0.7], [0.7, 0.05])
    """
    return solved_lstm(
        [0.6, 0.4], [0.1, -0.2], [0.5, 0.3], i=[0.6, 0.4], f=[0.8, 0.7], g=[0.5, -0.4], o=[0.9, 0.6], forget_bias=1.0
    )


def two_unit_gru() -> GRUCase:
    r"""The same inputs through a two-unit GRU: reset gates (0.25, 0.75), update gates (0.9, 0.6).

    :math:`x = (0.6, 0.4)`, :math:`h_{t-1} = (0.1, -0.2)`; the candidate reads
    the input through :math:`W_{in} = I` and the state through
    :math:`W_{hn} = \begin{pmatrix} 1 & 2 \\ -2 & 1 \end{pmatrix}`, which mixes
    the two units, so that where the reset gate acts changes the candidate.
    All this book's choice; the gate rows from :func:`solved_gru`.

    >>> case = two_unit_gru()
    >>> [gru.step(*case, reset=p).n.round(6).tolist() for p in ("before", "after")]
    [[0.314021, 0.197375], [0.48155, 0.099668]]
    """
    return solved_gru(
        [0.6, 0.4],
        [0.1, -0.2],
        r=[0.25, 0.75],
        z=[0.9, 0.6],
        W_in=[[1.0, 0.0], [0.0, 1.0]],
        W_hn=[[1.0, 2.0], [-2.0, 1.0]],
    )


class WeightRow(NamedTuple):
    """One weight row of a two-unit cell: the gate it computes and the unit (from 1), its weights on
    :math:`x_1, x_2, h_1, h_2`, its bias (``b_ih + b_hh``), and the gate's value on the chapter's step
    (``None`` for the GRU's candidate, whose value depends on where the reset acts)."""

    gate: str
    unit: int
    weights: tuple
    bias: float
    value: float | None


def two_unit_rows(cell: str = "lstm") -> list[WeightRow]:
    """Every weight row of :func:`two_unit_lstm` (gates ``i, f, g, o``) or :func:`two_unit_gru` (``r, z, n``).

    The rows in torch layout order, each with the value its gate takes on the
    step (from :func:`rnnmem.lstm.step` or :func:`rnnmem.gru.step`).

    >>> row = two_unit_rows("lstm")[2]
    >>> row.gate, row.unit, round(row.bias, 6), round(row.value, 6)
    ('f', 1, 1.0, 0.8)
    >>> [r.value for r in two_unit_rows("gru")][-2:]
    [None, None]
    """
    cell = check_choice("cell", cell, ("lstm", "gru"))
    names = cells.gate_names(cell)
    case: LSTMCase | GRUCase
    if cell == "lstm":
        case = two_unit_lstm()
        lstm_step = lstm.step(*case)
        values = tuple(getattr(lstm_step, name) for name in names)
    else:
        case = two_unit_gru()
        gru_step = gru.step(*case)
        values = tuple(None if name == "n" else getattr(gru_step, name) for name in names)
    H = case.h_prev.size
    bias = case.b_ih + case.b_hh
    return [
        WeightRow(
            name,
            j + 1,
            tuple(float(w) for w in (*case.W_ih[k * H + j], *case.W_hh[k * H + j])),
            float(bias[k * H + j]),
            None if values[k] is None else float(values[k][j]),
        )
        for k, name in enumerate(names)
        for j in range(H)
    ]


# --------------------------------------------------------------------------- the four GRUs

GRU_USED_BY = {
    ("z_keeps", "after"): "PyTorch, cuDNN, Keras (default)",
    ("z_keeps", "before"): "Cho et al. (2014); Keras with `reset_after=False`",
    ("z_writes", "before"): "Chung et al. (2014), Olah (2015), textbooks",
    ("z_writes", "after"): "none of these",
}
"""The four GRUs, ``(update, reset)`` as :func:`rnnmem.gru.step` names them, and who uses each.

In the order the book lists them; code (an option's name) between backticks.
"""


class ConventionRow(NamedTuple):
    """One GRU convention: its options, who uses it, the one-unit update and the two-unit step."""

    update: str
    reset: str
    used_by: str
    one: GRUUpdate
    """:func:`gru_update` of the one-unit example."""
    two: Any
    """:func:`rnnmem.gru.step` of :func:`two_unit_gru` (a :class:`rnnmem.gru.GRUStep`)."""


def gru_conventions(h_prev: Any = 0.8, z: Any = 0.9, r: Any = 0.25) -> list[ConventionRow]:
    """Each of the four GRUs of :data:`GRU_USED_BY` on the one-unit example and on the two-unit cell.

    The one-unit example is :func:`gru_update` of ``h_prev``, ``z`` and ``r``
    (no input, recurrent weight 1); the two-unit cell is :func:`two_unit_gru`.
    Both update conventions see the same candidate; the reset placement moves
    the two-unit candidate, where the units mix.

    >>> rows = gru_conventions()
    >>> [(row.update, row.reset, round(row.one.h, 6)) for row in rows[:3]]
    [('z_keeps', 'after', 0.739738), ('z_keeps', 'before', 0.739738), ('z_writes', 'before', 0.257638)]
    >>> rows[0].used_by
    'PyTorch, cuDNN, Keras (default)'
    """
    case = two_unit_gru()
    return [
        ConventionRow(
            update,
            reset,
            used_by,
            gru_update(h_prev, z=z, r=r, update=update, reset=reset),
            gru.step(*case, update=update, reset=reset),
        )
        for (update, reset), used_by in GRU_USED_BY.items()
    ]

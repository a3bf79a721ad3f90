"""The recurrent cells by name: the one place that says which cells there are and what each is made of.

A cell is named ``"rnn"`` (the tanh RNN), ``"gru"`` or ``"lstm"``. Its model
class (:class:`rnnmem.RNN`, :class:`rnnmem.GRU`, :class:`rnnmem.LSTM`) lists
its gates in :attr:`~rnnmem._recurrent.Recurrent.gate_names`, in the order
their blocks of rows are stacked in torch layout (``h``; ``r|z|n``;
``i|f|g|o``); the number of blocks :math:`G` that every parameter count
(:math:`G d_h (d_{in} + d_h + n_b)`, :mod:`rnnmem.params`) and every stacked
weight array (``(G*H, D)``, :mod:`rnnmem.ensemble`) uses is the length of that
tuple, and is read here rather than written again.

>>> GATES
{'rnn': 1, 'gru': 3, 'lstm': 4}
>>> LABELS["rnn"], MODELS["gru"].gate_names
('tanh RNN', ('r', 'z', 'n'))

A new cell is a :class:`~rnnmem._recurrent.Recurrent` subclass with its
``gate_names``, added to :data:`MODELS` and :data:`LABELS`.
"""

from __future__ import annotations

from ._recurrent import Recurrent
from .checks import check_choice, check_positive_int
from .gru import GRU
from .lstm import LSTM
from .rnn import RNN

__all__ = ["NAMES", "MODELS", "LABELS", "GATES", "gate_names", "gate_slice"]

MODELS: dict[str, type[Recurrent]] = {"rnn": RNN, "gru": GRU, "lstm": LSTM}
"""Cell name -> model class."""

NAMES = tuple(MODELS)
"""The cells' names, in the order the book lists them: ``("rnn", "gru", "lstm")``."""

LABELS = {"rnn": "tanh RNN", "gru": "GRU", "lstm": "LSTM"}
"""How the book names each cell in a table or a legend."""

GATES = {name: len(model.gate_names) for name, model in MODELS.items()}
"""Blocks per cell, :math:`G`: the gates and the candidate, each a :math:`d_h`-wide map of the input and the state."""


def gate_names(cell: str) -> tuple[str, ...]:
    """The gates of ``cell`` in the order their blocks of rows are stacked (torch layout).

    >>> gate_names("lstm")
    ('i', 'f', 'g', 'o')
    """
    return MODELS[check_choice("cell", cell, NAMES)].gate_names


def gate_slice(cell: str, gate: str, hidden: int) -> slice:
    """The rows of ``gate``'s block in a stacked ``(G*H, ...)`` array of ``cell`` with ``hidden`` units.

    >>> gate_slice("gru", "z", hidden=4)
    slice(4, 8, None)
    """
    names = gate_names(cell)
    k = names.index(check_choice("gate", gate, names))
    H = check_positive_int("hidden", hidden)
    return slice(k * H, (k + 1) * H)

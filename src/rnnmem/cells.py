r"""The recurrent cells by name: the one place that says which cells there are, what each is made of and its protocol.

Every model the lab trains is registered here once, under one of two protocols.

**The classic protocol** (:data:`CLASSIC`): ``"rnn"`` (the tanh RNN),
``"gru"`` and ``"lstm"``. A classic cell is a
:class:`~rnnmem._recurrent.Recurrent` subclass (:class:`rnnmem.RNN`,
:class:`rnnmem.GRU`, :class:`rnnmem.LSTM`): one layer with the four arrays of
:data:`~rnnmem._recurrent.PARAMETER_NAMES`, ``forward`` and an exact
``backward``. It lists its gates in
:attr:`~rnnmem._recurrent.Recurrent.gate_names`, in the order their blocks of
rows are stacked in torch layout (``h``; ``r|z|n``; ``i|f|g|o``); the number
of blocks :math:`G` that every parameter count (:math:`G d_h (d_{in} + d_h +
n_b)`, :mod:`rnnmem.params`) and every stacked weight array (``(G*H, D)``,
:mod:`rnnmem.ensemble`) uses is the length of that tuple, and is read here
(:data:`GATES`) rather than written again. The lab stacks a classic cell in
an :class:`~rnnmem.ensemble.Ensemble` once it has stacked kernels, an entry
of :data:`rnnmem.ensemble.KERNELS`; until then the ensemble refuses it by name.

**The linear protocol** (:data:`LINEAR`): ``"lru"``, ``"mingru"``,
``"selective"`` (the selective scan S6 alone) and ``"mamba"`` (Mamba's whole
block around it), recurrences linear in the state, :math:`h_t = a_t \odot
h_{t-1} + b_t`, that :class:`~rnnmem.linear_ensemble.LinearEnsemble` stacks
in layers. A linear cell is a module (:mod:`rnnmem.lru`, :mod:`rnnmem.mingru`,
:mod:`rnnmem.selective`, :mod:`rnnmem.mamba`) with ``PROJECTION`` and ``PROJECTION_BIASES`` (the
names of its input weights and biases, stacked into one projection of the
input), ``shapes(input_size, hidden, state)`` and ``draw(rng, input_size,
hidden, state)`` (its arrays and their initialization; the minGRU's take no
``state``, its state being its hidden vector, and the LRU's draw takes its
ring), ``forward(p, proj, *, last_only, method)`` and ``backward(p, cache,
dy, *, norms)``. A new linear model that follows it is one module, one entry
in :data:`LINEAR` and one in :data:`LABELS`.

>>> GATES
{'rnn': 1, 'gru': 3, 'lstm': 4}
>>> LABELS["rnn"], MODELS["gru"].gate_names, protocol("mingru")
('tanh RNN', ('r', 'z', 'n'), 'linear')

A new classic cell is a :class:`~rnnmem._recurrent.Recurrent` subclass with
its ``gate_names``, added to :data:`CLASSIC` and :data:`LABELS`
(ARCHITECTURE.md, "A new recurrent cell"); the chapters teach the cells of
:data:`TAUGHT`, so a new cell grows no published table.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any

from . import lru, mamba, mingru, selective
from ._recurrent import Recurrent
from .checks import check_choice, check_positive_int
from .gru import GRU
from .lstm import LSTM
from .rnn import RNN

__all__ = [
    "CLASSIC",
    "LINEAR",
    "PROTOCOLS",
    "MODELS",
    "NAMES",
    "LABELS",
    "GATES",
    "TAUGHT",
    "protocol",
    "check_cell",
    "gate_names",
    "gate_slice",
]

CLASSIC: dict[str, type[Recurrent]] = {"rnn": RNN, "gru": GRU, "lstm": LSTM}
"""The classic protocol: cell name -> its :class:`~rnnmem._recurrent.Recurrent` model class."""

LINEAR: dict[str, ModuleType] = {"lru": lru, "mingru": mingru, "selective": selective, "mamba": mamba}
"""The linear protocol: model name -> its module (``PROJECTION``, ``shapes``, ``draw``, ``forward``, ``backward``)."""

PROTOCOLS: dict[str, Mapping[str, Any]] = {"classic": CLASSIC, "linear": LINEAR}
"""Each protocol's name -> its part of the registry."""

MODELS = CLASSIC
"""Cell name -> model class: :data:`CLASSIC` itself (the same dict), by the name the book's code reads."""

NAMES = tuple(CLASSIC)
"""The classic cells' names, in the order the book lists them: ``("rnn", "gru", "lstm")``."""

LABELS = {
    "rnn": "tanh RNN",
    "gru": "GRU",
    "lstm": "LSTM",
    "lru": "LRU",
    "mingru": "minGRU",
    "selective": "S6 without its convolution",
    "mamba": "Mamba block",
}
"""How the book names each registered model, of either protocol, in a table or a legend."""

TAUGHT = ("rnn", "gru", "lstm")
"""The cells the chapters teach and tabulate, in the order they list them; a cell registered later is not among them."""


class _Gates(Mapping[str, int]):
    """Blocks per classic cell, read from the model classes in :data:`CLASSIC` each time it is asked."""

    def __getitem__(self, cell: str) -> int:
        return len(CLASSIC[cell].gate_names)

    def __iter__(self) -> Iterator[str]:
        return iter(CLASSIC)

    def __len__(self) -> int:
        return len(CLASSIC)

    def __repr__(self) -> str:
        return repr(dict(self))


GATES: Mapping[str, int] = _Gates()
"""Blocks per cell, :math:`G`: the gates and the candidate, each a :math:`d_h`-wide map of the input and the state."""


def protocol(model: str) -> str:
    """The protocol ``model`` is registered under: ``"classic"`` or ``"linear"``.

    >>> protocol("gru"), protocol("lru")
    ('classic', 'linear')
    """
    allowed = tuple(name for part in PROTOCOLS.values() for name in part)
    check_choice("model", model, allowed)
    return next(kind for kind, part in PROTOCOLS.items() if model in part)


def check_cell(cell: str, name: str = "cell") -> str:
    """``cell``, a classic cell of the registry as it is now; else a ValueError naming ``name`` and the cells.

    >>> check_cell("lstm")
    'lstm'
    """
    return check_choice(name, cell, tuple(CLASSIC))


def gate_names(cell: str) -> tuple[str, ...]:
    """The gates of ``cell`` in the order their blocks of rows are stacked (torch layout).

    >>> gate_names("lstm")
    ('i', 'f', 'g', 'o')
    """
    return CLASSIC[check_cell(cell)].gate_names


def gate_slice(cell: str, gate: str, hidden: int) -> slice:
    """The rows of ``gate``'s block in a stacked ``(G*H, ...)`` array of ``cell`` with ``hidden`` units.

    >>> gate_slice("gru", "z", hidden=4)
    slice(4, 8, None)
    """
    names = gate_names(cell)
    k = names.index(check_choice("gate", gate, names))
    H = check_positive_int("hidden", hidden)
    return slice(k * H, (k + 1) * H)

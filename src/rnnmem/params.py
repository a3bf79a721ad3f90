r"""Counting parameters: recurrent layers and whole language models.

A recurrent layer with :math:`G` blocks (:math:`G = 1` for a plain RNN, 3 for
a GRU's r|z|n, 4 for an LSTM's i|f|g|o), input width :math:`d_{in}` and
hidden width :math:`d_h` holds

.. math::

    \underbrace{G\,d_h\,d_{in}}_{\text{input weights}}
    + \underbrace{G\,d_h\,d_h}_{\text{recurrent weights}}
    + \underbrace{n_b\,G\,d_h}_{\text{biases}}
    = G\,d_h\,(d_{in} + d_h + n_b),

where :math:`n_b` is the number of bias vectors, which is where the
conventions differ:

* ``"textbook"``: one bias per gate, :math:`n_b = 1`; an LSTM layer holds
  :math:`4\,d_h\,(d_{in} + d_h + 1)`;
* ``"pytorch"``: two, :math:`b_{ih}` and :math:`b_{hh}`, for every cell;
* ``"keras"``: one for ``SimpleRNN`` and ``LSTM``; two for ``GRU`` with
  ``reset_after=True`` (its default since Keras 2.3), one with ``reset_after=False``.

A language model adds an embedding table (:math:`V \times d_{emb}`), feeds it
to the first of a stack of layers (each later layer reads the one below, of
width :math:`d_h`), and reads out with a projection back to the vocabulary
(:math:`d_h V` weights plus :math:`V` biases). *Tying* reuses the embedding
table as the readout matrix (it needs :math:`d_h = d_{emb}`), leaving only
the readout bias. The *vocabulary tables* are the embedding and the readout;
everything else is the *non-embedding* count used in scaling studies.

All counts are Python ints. Bad input raises :class:`ValueError` naming the
argument.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import cells
from .checks import check_choice, check_positive_int

__all__ = [
    "CELLS",
    "CONVENTIONS",
    "GATES",
    "Tally",
    "ModelTally",
    "bias_vectors",
    "layer_parameters",
    "layer_count",
    "stack_parameters",
    "embedding_count",
    "linear_count",
    "model_parameters",
    "cell_comparison",
]

CELLS = cells.NAMES
"""The recurrent cells counted here, those of the classic protocol (:data:`rnnmem.cells.NAMES`); every function
here takes any cell registered in :data:`rnnmem.cells.CLASSIC`."""

CONVENTIONS = ("textbook", "pytorch", "keras")
"""The bias conventions: one vector, PyTorch's two, Keras' per-layer choice."""

GATES = cells.GATES
"""Blocks per cell: the number of :math:`d_h`-wide linear maps of the input and the state (:data:`rnnmem.cells.GATES`)."""


@dataclass(frozen=True)
class Tally:
    """A parameter count as table rows ``(part, count)``; ``total`` is their sum."""

    rows: tuple[tuple[str, int], ...]

    @property
    def total(self) -> int:
        """The sum of all rows."""
        return sum(n for _, n in self.rows)

    def table(self) -> list[tuple[str, int]]:
        """The rows followed by ``("total", total)``, ready to print."""
        return [*self.rows, ("total", self.total)]


@dataclass(frozen=True)
class ModelTally(Tally):
    """A whole model's count; ``vocabulary`` is the embedding plus the readout (weights and bias)."""

    vocabulary: int = 0

    @property
    def non_embedding(self) -> int:
        """Everything but the vocabulary tables: the recurrent stack."""
        return self.total - self.vocabulary

    @property
    def vocabulary_share(self) -> float:
        """The fraction of the model in the embedding and readout."""
        return self.vocabulary / self.total

    @property
    def non_embedding_share(self) -> float:
        """The fraction of the model outside the vocabulary tables."""
        return self.non_embedding / self.total


def bias_vectors(cell: str, convention: str = "textbook", reset_after: bool = True) -> int:
    """How many :math:`G d_h`-long bias vectors a layer of ``cell`` has under ``convention``.

    >>> bias_vectors("lstm"), bias_vectors("lstm", "pytorch"), bias_vectors("gru", "keras")
    (1, 2, 2)
    """
    cell = cells.check_cell(cell)
    convention = check_choice("convention", convention, CONVENTIONS)
    reset_after = check_choice("reset_after", reset_after, (True, False))
    if convention == "pytorch":
        return 2
    if convention == "keras" and cell == "gru" and reset_after:
        return 2
    return 1


def layer_parameters(cell: str, d_in: int, d_h: int, convention: str = "textbook", reset_after: bool = True) -> Tally:
    r"""One layer's count, split into input weights, recurrent weights and biases.

    Follows :math:`G d_h (d_{in} + d_h + n_b)` of the module docstring.

    >>> layer_parameters("lstm", 512, 512).table()
    [('input weights', 1048576), ('recurrent weights', 1048576), ('biases', 2048), ('total', 2099200)]
    """
    cell = cells.check_cell(cell)
    d_in = check_positive_int("d_in", d_in)
    d_h = check_positive_int("d_h", d_h)
    g = GATES[cell]
    nb = bias_vectors(cell, convention, reset_after)
    return Tally((("input weights", g * d_h * d_in), ("recurrent weights", g * d_h * d_h), ("biases", nb * g * d_h)))


def layer_count(cell: str, d_in: int, d_h: int, convention: str = "textbook", reset_after: bool = True) -> int:
    r"""One layer's total, :math:`G d_h (d_{in} + d_h + n_b)`.

    >>> layer_count("lstm", 512, 512), layer_count("lstm", 512, 512, "pytorch")
    (2099200, 2101248)
    """
    return layer_parameters(cell, d_in, d_h, convention, reset_after).total


def stack_parameters(
    cell: str, d_in: int, d_h: int, layers: int, convention: str = "textbook", reset_after: bool = True
) -> Tally:
    """A stack of ``layers`` layers, one row each; the first reads ``d_in``, the others ``d_h``.

    >>> stack_parameters("lstm", 1500, 1500, 2).rows
    (('layer 1 (lstm)', 18006000), ('layer 2 (lstm)', 18006000))
    """
    n = check_positive_int("layers", layers)
    rows = tuple(
        (f"layer {k + 1} ({cell})", layer_count(cell, d_in if k == 0 else d_h, d_h, convention, reset_after))
        for k in range(n)
    )
    return Tally(rows)


def embedding_count(vocab: int, d_emb: int) -> int:
    r"""An embedding table: :math:`V d_{emb}`.

    >>> embedding_count(10_000, 1500)
    15000000
    """
    return check_positive_int("vocab", vocab) * check_positive_int("d_emb", d_emb)


def linear_count(d_in: int, d_out: int, bias: bool = True) -> int:
    r"""A linear map: :math:`d_{in} d_{out}` weights, plus :math:`d_{out}` biases if ``bias``.

    >>> linear_count(1500, 10_000)
    15010000
    """
    d_in = check_positive_int("d_in", d_in)
    d_out = check_positive_int("d_out", d_out)
    bias = check_choice("bias", bias, (True, False))
    return d_in * d_out + (d_out if bias else 0)


def model_parameters(
    vocab: int,
    d_emb: int,
    d_h: int,
    layers: int,
    cell: str = "lstm",
    convention: str = "textbook",
    reset_after: bool = True,
    tied: bool = False,
    output_bias: bool = True,
) -> ModelTally:
    r"""A recurrent language model: embedding, stacked layers, readout.

    The chapter's model (vocabulary 10,000, embedding 1500, two LSTM layers of
    1500, untied readout with bias):

    >>> m = model_parameters(10_000, 1500, 1500, layers=2)
    >>> for part, n in m.table():
    ...     print(f"{part:18s} {n:>11,}")
    embedding           15,000,000
    layer 1 (lstm)      18,006,000
    layer 2 (lstm)      18,006,000
    output projection   15,010,000
    total               66,022,000
    >>> round(m.vocabulary_share, 4), m.non_embedding
    (0.4545, 36012000)
    """
    vocab = check_positive_int("vocab", vocab)
    d_emb = check_positive_int("d_emb", d_emb)
    d_h = check_positive_int("d_h", d_h)
    tied = check_choice("tied", tied, (True, False))
    output_bias = check_choice("output_bias", output_bias, (True, False))
    if tied and d_h != d_emb:
        raise ValueError(f"d_h must equal d_emb ({d_emb}) for a tied readout, got {d_h}")
    embedding = embedding_count(vocab, d_emb)
    stack = stack_parameters(cell, d_emb, d_h, layers, convention, reset_after)
    if tied:
        readout = (
            "output projection (tied: bias only)" if output_bias else "output projection (tied)",
            vocab if output_bias else 0,
        )
    else:
        readout = ("output projection", linear_count(d_h, vocab, output_bias))
    rows = (("embedding", embedding), *stack.rows, readout)
    return ModelTally(rows=rows, vocabulary=embedding + readout[1])


def cell_comparison(
    d_in: int, d_h: int, convention: str = "textbook", reset_after: bool = True
) -> list[tuple[str, int]]:
    """Rows ``(cell, count)`` for one layer of each cell the book teaches (:data:`rnnmem.cells.TAUGHT`), plus the
    GRU's saving against the LSTM.

    >>> cell_comparison(100, 500)
    [('rnn', 300500), ('gru', 901500), ('lstm', 1202000), ('lstm - gru', 300500)]
    >>> cell_comparison(100, 500, "pytorch")[-1]
    ('lstm - gru', 301000)
    """
    rows = [(c, layer_count(c, d_in, d_h, convention, reset_after)) for c in cells.TAUGHT]
    counts = dict(rows)
    return [*rows, ("lstm - gru", counts["lstm"] - counts["gru"])]

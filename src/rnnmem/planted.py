r"""A dependency of known length planted in real text, and what truncated BPTT learns of it.

Python source is full of dependencies, a bracket and its closer, a name and
its next use, but their lengths are not known in advance. This module plants
one whose length is: into the standard library's text (:mod:`rnnmem.charlm`)
it inserts, between stretches of ordinary text, pairs

.. code-block:: text

    CLUE c  t_1 ... t_(n-1)  RECALL c

where ``CLUE`` and ``RECALL`` are two symbols of their own (ids
:data:`CLUE` and :data:`RECALL`, after the 97 of the text), ``c`` is a digit
drawn at random, and :math:`t_1, \dots, t_{n-1}` are the next :math:`n - 1`
characters of the text. The step that reads ``RECALL`` has read the digit
:math:`n` steps earlier, and the symbol it must predict is that digit: a
dependency at **distance** :math:`n`. Between one pair and the next stand
between 0 and :data:`GAP` characters of text, uniformly drawn, so the pairs
fall anywhere relative to the boundaries of a truncation.

**Truncation and credit.** Trained with truncation :math:`k`
(:meth:`rnnmem.charlm.CharRNN.loss_and_grads`), the loss at the step that
reads ``RECALL`` reaches the step that read the digit only when the two lie in
the same chunk of :math:`k` steps, which happens for a share
:math:`\max(0, k - n)/k` of the pairs (:func:`credited_share`): never when
:math:`n \ge k`. The forward state is not cut: the digit's trace reaches the
recall step whatever :math:`k` is.

**The first design** (:data:`FIRST_DESIGN`, :data:`FIRST_GRID`), fixed
before any run: the truncations :data:`FIRST_TRUNCATIONS` and distances
:data:`FIRST_DISTANCES` (each truncation but the longest has a distance at
:math:`k/2`, credited on half the pairs, and one at :math:`2k`, never
credited; the longest, the whole window, credits some pairs at every
distance), 300 updates. Three cells were added, with the same design, after
that grid had been read (:data:`FOLLOW_UP`, with the reason). In it only
distance 1 was learned, even under the whole window: the budget, not the
truncation, may have decided it.

**The design** (:data:`DESIGN`, :data:`GRID`), fixed after the first
design's results had been read and before any of its own runs: the same
network, text, rule and seeds, with the budget raised from 300 updates to
:attr:`Design.updates` = 1,500, the budget at which an independent run had
seen the untruncated network learn distance 2 (and truncation 2 not), so
that a distance can be learned under the whole window within the budget
and the experiment can show what cutting its gradient does. The
truncations :data:`TRUNCATIONS` and distances :data:`DISTANCES`, every one
with every other (:data:`GRID`): each distance :math:`n` but the longest
meets the truncation :math:`k = n`, the longest that credits none of its
pairs, and every distance meets the whole window, which credits some; the
comparisons are :data:`CONTRASTS`. The grid's size was chosen by its cost
before any run: one cell of 20 seeds at 1,500 updates took 17 seconds on
one core of the machine that builds the book, so 25 cells train in about
four minutes on two.

In both designs: 20 seeds per cell (:data:`SEEDS`), each member with its
own planted stream and weights; a member **succeeds** when its held-out
recall accuracy, the share of recall steps whose most likely next symbol is
the right digit, is at least :attr:`Design.threshold`; a distance counts as
**learned** under a truncation when at least :data:`LEARNED_RATE` of the
seeds succeed. The held-out text is the validation modules'
(:data:`rnnmem.charlm.VALID_MODULES`), planted once with :data:`EVAL_SEED`
for every member. **Chance** is the share of the most frequent digit among
the held-out recall steps (:attr:`CellResult.chance`,
:func:`most_frequent_share`): the accuracy of a member that ignores the
clue and always names the likeliest digit. :class:`Cell` is one
(truncation, distance, design) cell as a frozen value, whose ``repr``
carries the corpus's digest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .charlm import TRAIN_MODULES, VALID_MODULES, VOCAB_SIZE, CharRNN, encode, split_streams, stdlib_corpus, train
from .checks import check_nonnegative_int, check_positive, check_positive_int, check_seed

__all__ = [
    "CLUE",
    "RECALL",
    "PLANTED_VOCAB",
    "DIGITS",
    "GAP",
    "TRUNCATIONS",
    "DISTANCES",
    "GRID",
    "CONTRASTS",
    "FIRST_TRUNCATIONS",
    "FIRST_DISTANCES",
    "FIRST_GRID",
    "FOLLOW_UP",
    "SEEDS",
    "LEARNED_RATE",
    "EVAL_SEED",
    "Design",
    "DESIGN",
    "FIRST_DESIGN",
    "Planted",
    "plant",
    "credited_share",
    "most_frequent_share",
    "Cell",
    "CellResult",
]

CLUE = VOCAB_SIZE
"""The id of the symbol that announces the digit to remember: 97."""

RECALL = VOCAB_SIZE + 1
"""The id of the symbol after which the digit is due: 98."""

PLANTED_VOCAB = VOCAB_SIZE + 2
"""The symbols of a planted stream: the text's 97 and the two markers."""

DIGITS = tuple(int(i) for i in encode("0123456789"))
"""The ids of the digits a clue may carry."""

GAP = 16
"""The most characters of text between one pair and the next (drawn uniformly from 0 to this)."""

TRUNCATIONS = (1, 2, 4, 8, 32)
"""The truncation lengths :math:`k` of the design (32 is the whole window)."""

DISTANCES = (1, 2, 4, 8, 16)
"""The planted distances :math:`n` of the design: each but the longest is one of the truncations, the
longest that credits none of its pairs; 16 is half the window."""

GRID = tuple((k, d) for k in TRUNCATIONS for d in DISTANCES)
"""The cells of the design, (truncation, distance): every truncation with every distance."""

CONTRASTS = {d: (max(k for k in TRUNCATIONS if k <= d), TRUNCATIONS[-1]) for d in DISTANCES}
"""For each distance, the two truncations compared: the longest of the design that credits none of its pairs
against the whole window, which credits some: ``{1: (1, 32), 2: (2, 32), 4: (4, 32), 8: (8, 32),
16: (8, 32)}``."""

FIRST_TRUNCATIONS = (2, 8, 32)
"""The truncation lengths :math:`k` of the first design."""

FIRST_DISTANCES = (1, 4, 16)
"""The planted distances :math:`n` of the first design: for the two shorter truncations one at :math:`k/2`,
credited on half the pairs, and one at :math:`2k`, never credited (1 and 4 for :math:`k = 2`, 4 and 16 for 8);
for 32, the whole window, 16 is at :math:`k/2`."""

FIRST_GRID = tuple((k, d) for k in FIRST_TRUNCATIONS for d in FIRST_DISTANCES)
"""The cells of the first design, (truncation, distance): every truncation with every distance."""

FOLLOW_UP = ((1, 1), (2, 2), (32, 2))
"""Three cells added to the first design after its grid had been trained and read, with the same design. In
the grid only distance 1 was learned, under every truncation, so no truncation was ever shorter than a
distance the model could learn. These cells put one there: distance 1 with truncation 1, which credits no
pair; and distance 2, the next one, with truncation 2, which credits none, and 32, which credits nearly all."""

SEEDS = tuple(range(20))
"""The seeds of every cell: 0 to 19."""

LEARNED_RATE = 0.5
"""A distance is read as learned under a truncation when at least this share of its seeds succeed."""

EVAL_SEED = 1_000_000
"""The seed that plants the held-out text, the same for every member and cell."""


@dataclass(frozen=True)
class Design:
    """How each member of a cell is trained and judged.

    ``hidden`` units, windows of ``window`` steps from ``batch`` streams per
    update, Adam at ``lr`` with each member's gradient clipped to global norm
    ``max_norm``, ``updates`` updates; success at a held-out recall accuracy
    of at least ``threshold``, measured on the first ``eval_symbols``
    characters of the validation text, planted, read in ``eval_streams``
    streams.
    """

    hidden: int = 32
    window: int = 32
    batch: int = 8
    lr: float = 0.01
    max_norm: float = 1.0
    updates: int = 1500
    threshold: float = 0.9
    eval_streams: int = 32
    eval_symbols: int = 32768

    def __post_init__(self) -> None:
        for name in ("hidden", "window", "batch", "updates", "eval_streams", "eval_symbols"):
            check_positive_int(name, getattr(self, name))
        check_positive("lr", self.lr)
        check_positive("max_norm", self.max_norm)
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"threshold must be an accuracy in (0, 1], got {self.threshold!r}")


DESIGN = Design()
"""The design of every cell of :data:`GRID`: 32 units, windows of 32 steps from 8 streams, Adam at 0.01 with
clipping at 1 (the lab's), 1,500 updates, success at 0.9 held-out accuracy."""

FIRST_DESIGN = Design(updates=300)
"""The first design, of :data:`FIRST_GRID` and :data:`FOLLOW_UP`: the same with 300 updates (the lab's short
budget)."""


@dataclass(frozen=True)
class Planted:
    """A planted stream: ``ids``, and for each pair the index of its ``RECALL`` step in ``recalls`` and its digit in ``digits``."""

    ids: np.ndarray
    recalls: np.ndarray
    digits: np.ndarray
    distance: int


def plant(text: Any, distance: int, seed: Any, gap: int = GAP) -> Planted:
    """``text`` (ids) with pairs ``CLUE c t_1 .. t_(d-1) RECALL c`` planted at distance ``distance``.

    Walking through the text: between 0 and ``gap`` characters of text
    (uniformly drawn), then ``CLUE`` and a random digit, the next
    ``distance - 1`` characters of text, ``RECALL`` and the digit again;
    repeated while the text lasts (what is left after the last pair is
    dropped). The draws come from ``seed``.

    >>> p = plant(encode("abcdefghijkl"), 3, seed=0, gap=2)
    >>> from rnnmem.charlm import decode
    >>> "".join("<" if i == CLUE else ">" if i == RECALL else decode([i]) for i in p.ids)
    'ab<0cd>0e<1fg>1h<8ij>8<6kl>6'
    >>> p.recalls.tolist(), [int(p.ids[r - 3]) == int(d) for r, d in zip(p.recalls, p.digits)]
    ([6, 13, 20, 26], [True, True, True, True])
    """
    ids = np.asarray(text)
    if ids.ndim != 1 or ids.dtype.kind not in "iu" or ids.size == 0:
        raise ValueError(f"text must be one non-empty sequence of ids, got shape {ids.shape}")
    d = check_positive_int("distance", distance)
    g = check_nonnegative_int("gap", gap)
    rng = check_seed("seed", seed)
    n_max = ids.size // max(1, d - 1) + 1
    gaps = rng.integers(0, g + 1, size=n_max)
    digits = np.asarray(DIGITS)[rng.integers(0, len(DIGITS), size=n_max)]
    used = np.cumsum(gaps + d - 1)
    n = int(np.searchsorted(used, ids.size, side="right"))
    if n == 0:
        raise ValueError(f"text must hold at least distance - 1 = {d - 1} characters to plant one pair, got {ids.size}")
    gaps, digits, used = gaps[:n], digits[:n], used[:n]
    clue_at = used - (d - 1)  # text index before which each CLUE goes
    positions = np.stack([clue_at, clue_at, used, used], axis=1).reshape(-1)
    values = np.stack([np.full(n, CLUE), digits, np.full(n, RECALL), digits], axis=1).reshape(-1)
    out = np.insert(ids[: used[-1]], positions, values).astype(np.int64)
    recalls = np.flatnonzero(out == RECALL)
    return Planted(out, recalls, digits.astype(np.int64), d)


def credited_share(truncation: int, distance: int) -> float:
    r"""The share of pairs whose recall loss reaches the clue under truncation :math:`k`: :math:`\max(0, k - n)/k`.

    The recall step :math:`t` and the step :math:`t - n` that read the digit
    lie in one chunk exactly when :math:`t \bmod k \ge n`; a pair falls at
    every :math:`t \bmod k` equally often (up to the draw).

    >>> [credited_share(8, d) for d in (1, 4, 8, 16)]
    [0.875, 0.5, 0.0, 0.0]
    """
    k = check_positive_int("truncation", truncation)
    d = check_positive_int("distance", distance)
    return max(0, k - d) / k


def most_frequent_share(digits: Any) -> float:
    """The share of the most frequent digit among ``digits``: the recall accuracy of always naming it.

    A member that does not read the clue can at best name the digit most
    frequent at the recall steps; this is chance for the recall accuracy,
    not one in ten, since a finite planting is never exactly uniform.

    >>> most_frequent_share(encode("1121"))
    0.75
    """
    arr = np.asarray(digits)
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu":
        raise ValueError(f"digits must be one non-empty sequence of ids, got shape {arr.shape}")
    return float(np.unique(arr, return_counts=True)[1].max() / arr.size)


@dataclass(frozen=True)
class CellResult:
    """What a :class:`Cell` measured: each member's held-out recall ``accuracy`` (in seed order), the
    ``recalls`` it was measured on, the ``successes`` (accuracy at least the design's threshold) out of
    ``n`` members, each member's mean training loss over its last 50 updates, ``final_loss``, and
    ``chance``, the share of the most frequent digit among the ``recalls`` (:func:`most_frequent_share`)."""

    accuracy: tuple[float, ...]
    recalls: int
    successes: int
    n: int
    final_loss: tuple[float, ...]
    chance: float


@dataclass(frozen=True)
class Cell:
    """One cell of the experiment: ``seeds`` members trained at ``truncation`` on text planted at ``distance``.

    A pure value: its fields and the corpus's digest (computed when the cell
    is made, :func:`rnnmem.charlm.stdlib_corpus`); :meth:`execute` trains
    and measures it.

    >>> cell = Cell(2, 1, seeds=(0, 1), design=Design(hidden=8, updates=5, eval_streams=4))
    >>> result = cell.execute()
    >>> result.n, len(result.accuracy), 0 <= result.successes <= 2
    (2, 2, True)
    """

    truncation: int
    distance: int
    seeds: tuple[int, ...] = SEEDS
    design: Design = DESIGN
    train_modules: tuple[str, ...] = TRAIN_MODULES
    valid_modules: tuple[str, ...] = VALID_MODULES
    digest: str = field(init=False)

    def __post_init__(self) -> None:
        check_positive_int("truncation", self.truncation)
        check_positive_int("distance", self.distance)
        if isinstance(self.seeds, range):
            object.__setattr__(self, "seeds", tuple(self.seeds))
        if not isinstance(self.seeds, tuple) or not self.seeds:
            raise ValueError(f"seeds must be a non-empty tuple of whole numbers >= 0, got {self.seeds!r}")
        for k, s in enumerate(self.seeds):
            check_nonnegative_int(f"seeds[{k}]", s)
        if not isinstance(self.design, Design):
            raise ValueError(f"design must be a Design, got {self.design!r}")
        if self.design.window % self.truncation:
            raise ValueError(
                f"truncation must divide the design's window ({self.design.window}), got {self.truncation}"
            )
        corpus = stdlib_corpus(self.train_modules, self.valid_modules)
        object.__setattr__(self, "train_modules", corpus.train_modules)
        object.__setattr__(self, "valid_modules", corpus.valid_modules)
        object.__setattr__(self, "digest", corpus.digest)

    @property
    def cost(self) -> float:
        """A relative cost: members times updates times symbols per update."""
        d = self.design
        return float(len(self.seeds) * d.updates * d.window * d.batch)

    def execute(self) -> CellResult:
        """Train every member and measure it on the held-out text; a pure function of the cell."""
        corpus = stdlib_corpus(self.train_modules, self.valid_modules)
        if corpus.digest != self.digest:
            raise ValueError(
                f"the standard library's sources changed since the cell was made: digest {corpus.digest}, "
                f"the cell's {self.digest}"
            )
        d = self.design
        text = encode(corpus.train)
        # Stream b of every member starts at the b-th of `batch` equal parts of the text; each member plants
        # its own pairs (its seed) into as much of each part as its updates read.
        need = d.updates * d.window + 1
        part = text.size // d.batch
        if part < need + GAP + self.distance:
            raise ValueError(f"the training text must hold {d.batch} parts of {need + GAP + self.distance} symbols")
        pieces = np.empty((len(self.seeds), d.batch, need), dtype=np.int64)
        for e, seed in enumerate(self.seeds):
            rng = np.random.default_rng(seed)
            for b in range(d.batch):
                start = b * part
                pieces[e, b] = plant(text[start : start + need + GAP + self.distance], self.distance, rng).ids[:need]
        model = CharRNN(PLANTED_VOCAB, d.hidden, seeds=list(self.seeds))
        losses = train(
            model,
            pieces,
            window=d.window,
            updates=d.updates,
            lr=d.lr,
            max_norm=d.max_norm,
            truncation=self.truncation,
        )
        held = plant(encode(corpus.valid)[: d.eval_symbols], self.distance, EVAL_SEED)
        accuracy, recalls, chance = _recall_accuracy(model, held, d)
        return CellResult(
            accuracy=tuple(float(a) for a in accuracy),
            recalls=recalls,
            successes=int((accuracy >= d.threshold).sum()),
            n=len(self.seeds),
            final_loss=tuple(float(v) for v in losses[-50:].mean(axis=0)),
            chance=chance,
        )


def _recall_steps(held: Planted, streams: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(x, piece, step, target)``: the held-out stream in ``streams`` pieces (:func:`rnnmem.charlm.split_streams`),
    and for each recall step whose clue lies in its own piece, the piece, the step at which it reads ``RECALL``,
    and the digit due next."""
    x, _, mask = split_streams(held.ids, streams, PLANTED_VOCAB)
    T, S = x.shape
    N = held.ids.size
    starts = np.array([1 + (s * (N - 1)) // S for s in range(S)])
    # piece s reads ids[starts[s] - 1 + t] at step t: a recall at index r is step r - starts[s] + 1
    piece = np.searchsorted(starts, held.recalls + 1, side="right") - 1
    step = held.recalls - (starts[piece] - 1)
    keep = (piece >= 0) & (step - held.distance >= 0) & (step < T)
    keep &= mask[np.clip(step, 0, T - 1), np.clip(piece, 0, S - 1)]
    return x, piece[keep], step[keep], held.ids[held.recalls[keep] + 1]


def _recall_accuracy(model: CharRNN, held: Planted, design: Design) -> tuple[np.ndarray, int, float]:
    """Each member's share of held-out recall steps whose most likely next symbol is the digit, their count,
    and the share of the most frequent digit among them (chance).

    The held-out stream is read in ``design.eval_streams`` pieces from the zero state; a recall step counts
    when its clue lies in the same piece."""
    x, piece, step, target = _recall_steps(held, design.eval_streams)
    hits = np.zeros((step.size, model.size), dtype=bool)
    for start, states in model.chunks(x):
        here = (step >= start) & (step < start + states.shape[0] - 1)
        h = states[step[here] - start + 1, :, piece[here]]  # (n, E, H): the state after reading RECALL
        z = model.logits(h[:, :, None, :])[:, :, 0]  # (n, E, V)
        hits[here] = z.argmax(axis=2) == target[here, None]
    return hits.mean(axis=0), int(step.size), most_frequent_share(target)

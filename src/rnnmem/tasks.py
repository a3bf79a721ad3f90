r"""Tasks with a dependency at a known distance: recall, blank recall, first-token recall, the adding problem.

Each task makes batches of sequences, time first as the models take them:
inputs ``(T, N, D)`` (steps, sequences, input size) and one target per
sequence, read from the last step. A :class:`Task` says what its batches look
like; :meth:`Task.sample` draws ``n`` sequences, the same ones for the same
seed (:func:`rnnmem.checks.check_seed`: an int, or a ``numpy.random.Generator``
whose stream it continues).

* :func:`recall`: a token :math:`a_0` from an alphabet of :math:`K`, then
  ``lag`` distractors drawn from the same alphabet, then a query marker; the
  target is :math:`a_0`. Tokens are one-hot vectors of size :math:`K + 2`
  (the :math:`K` tokens, the blank, the query), so :math:`T = \text{lag} + 2`
  and chance accuracy is :math:`1/K`.
* recall with ``distractors="blank"``: the same, with every distractor the
  blank token. The distance is the same but nothing interferes: what a model
  must resist is only time, not the writing of other tokens into its memory.
* :func:`first_recall`: recall with a prefix of blanks of random length in
  front, so that the token to recall is the first one that is not blank and
  its position varies from sequence to sequence. A gate that reads only the
  current input cannot tell :math:`a_0` from a later copy of it; a gate that
  reads the state can write once, then hold.
* :func:`adding`, the adding problem in the form of Le, Jaitly and Hinton (2015)
  and Arjovsky, Shah and Bengio (2016), after Hochreiter and Schmidhuber (1997): each
  step is a pair (value :math:`u_t \sim U[0, 1]`, marker), two steps are
  marked, one in the first half of the sequence and one in the second; the
  target is the sum of the two marked values. Predicting the constant
  :math:`\mathbb E[y] = 1` costs :math:`\operatorname{Var}(u + u') = 2/12 = 1/6
  \approx 0.167` in mean squared error, the baseline a trained model must
  beat (:attr:`Task.baseline_mse`).

Bad arguments raise :class:`ValueError` naming the argument, its value and
what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .checks import check_choice, check_positive_int, check_seed

__all__ = ["TASKS", "DISTRACTORS", "Batch", "Task", "recall", "first_recall", "adding", "make_task"]

TASKS = ("recall", "blank-recall", "first-recall", "adding")
"""The task names :func:`make_task` (and ``python -m rnnmem lab``) knows."""

DISTRACTORS = ("random", "blank")
"""What fills the gap in :func:`recall`: tokens of the alphabet, or the blank token."""


class Batch(NamedTuple):
    """Sequences of a task and their targets."""

    inputs: np.ndarray
    """``(T, N, D)`` float64, time first."""
    targets: np.ndarray
    """``(N,)``: class indices (int64) for recall, sums (float64) for the adding problem."""


@dataclass(frozen=True)
class Task:
    """A task: the shape of its sequences, what its target is, and what guessing scores.

    ``kind`` is ``"classification"`` (the target is one of ``output_size``
    classes, scored by accuracy against ``chance``) or ``"regression"`` (a
    number, scored by mean squared error against ``baseline_mse``, the error
    of the best constant prediction). ``length`` is :math:`T`, ``lag`` the
    number of steps between the step that holds the answer and the query.
    """

    name: str
    """``"recall"``, ``"blank-recall"``, ``"first-recall"`` or ``"adding"``."""
    kind: str
    """``"classification"`` or ``"regression"``."""
    lag: int
    """The distance the task is about: the steps between the token to recall and the query (for first-recall
    the most there are, with no blank prefix; for the adding problem, the sequence length)."""
    length: int
    """Steps per sequence, :math:`T`."""
    input_size: int
    """:math:`D`, the size of one step's input vector."""
    output_size: int
    """Classes for classification, 1 for regression."""
    chance: float
    """Accuracy of a uniform guess (classification), NaN for regression."""
    baseline_mse: float
    """Mean squared error of the best constant prediction (regression), NaN for classification."""
    alphabet: int = 0
    """:math:`K`, the number of tokens to recall (0 for the adding problem)."""

    def sample(self, n: int, seed: Any = 0) -> Batch:
        """``n`` sequences of the task and their targets, the same for the same ``seed``.

        >>> batch = recall(lag=3, alphabet=4).sample(2, seed=0)
        >>> batch.inputs.shape, batch.targets.shape
        ((5, 2, 6), (2,))
        """
        n = check_positive_int("n", n)
        rng = check_seed("seed", seed)
        if self.name == "adding":
            return _adding_batch(n, self.length, rng)
        tokens, targets = self._tokens_each(n, [rng])
        inputs = np.eye(self.input_size)[tokens[0]]  # one-hot rows, (T, n, K + 2)
        return Batch(inputs, targets[0])

    def sample_each(self, n: int, seeds: Any) -> Batch:
        """``n`` sequences for each of several streams at once: inputs ``(T, S, n, D)``, targets ``(S, n)``.

        ``seeds`` is a non-empty list, one seed per stream (each as
        :func:`rnnmem.checks.check_seed` takes it; a generator's stream goes
        on). Stream ``s`` gets exactly what ``sample(n, seed=seeds[s])`` gives,
        drawn in the same order from it; only the arrays are built once for
        all the streams.

        >>> task = recall(lag=3, alphabet=4)
        >>> both = task.sample_each(2, [0, 1])
        >>> both.inputs.shape, both.targets.shape
        ((5, 2, 2, 6), (2, 2))
        >>> one = task.sample(2, seed=1)
        >>> bool((both.inputs[:, 1] == one.inputs).all() and (both.targets[1] == one.targets).all())
        True
        """
        n = check_positive_int("n", n)
        if isinstance(seeds, (str, bytes)) or not isinstance(seeds, (list, tuple)) or not seeds:
            raise ValueError(f"seeds must be a non-empty list of seeds, one per stream, got {seeds!r}")
        rngs = [check_seed(f"seeds[{k}]", s) for k, s in enumerate(seeds)]
        if self.name == "adding":
            return _adding_batches(n, self.length, rngs)
        tokens, targets = self._tokens_each(n, rngs)
        inputs = np.eye(self.input_size)[tokens.transpose(1, 0, 2)]  # one-hot rows, (T, S, n, K + 2)
        return Batch(inputs, targets)

    @property
    def one_hot(self) -> bool:
        """Whether every input vector is one-hot (the recall tasks: a token), so that it can be given by its index."""
        return self.name != "adding"

    def sample_ids_each(self, n: int, seeds: Any) -> Batch:
        """:meth:`sample_each` with each one-hot input vector given by the index of its 1 (:attr:`one_hot` tasks).

        Returns ``Batch(ids (T, S, n) int64, targets (S, n))``, drawn from the
        streams exactly as :meth:`sample_each` draws: its inputs are
        ``np.eye(input_size)[ids]``, without the vectors being built.

        >>> task = recall(lag=3, alphabet=4)
        >>> ids, targets = task.sample_ids_each(2, [0, 1])
        >>> ids.shape, bool((np.eye(task.input_size)[ids] == task.sample_each(2, [0, 1]).inputs).all())
        ((5, 2, 2), True)
        >>> adding(5).sample_ids_each(2, [0])
        Traceback (most recent call last):
        ...
        ValueError: sample_ids_each needs one-hot inputs; the adding problem's are real numbers
        """
        if not self.one_hot:
            raise ValueError("sample_ids_each needs one-hot inputs; the adding problem's are real numbers")
        n = check_positive_int("n", n)
        if isinstance(seeds, (str, bytes)) or not isinstance(seeds, (list, tuple)) or not seeds:
            raise ValueError(f"seeds must be a non-empty list of seeds, one per stream, got {seeds!r}")
        rngs = [check_seed(f"seeds[{k}]", s) for k, s in enumerate(seeds)]
        tokens, targets = self._tokens_each(n, rngs)
        return Batch(tokens.transpose(1, 0, 2), targets)

    def _tokens_each(self, n: int, rngs: list) -> tuple[np.ndarray, np.ndarray]:
        """Token ids ``(S, T, n)`` and targets ``(S, n)`` of a one-hot task, stream ``s`` drawn from ``rngs[s]``."""
        tokens = np.empty((len(rngs), self.length, n), dtype=np.int64)
        if self.name == "first-recall":
            targets = np.stack(
                [_first_recall_tokens(tokens[k], self.lag, self.alphabet, rng) for k, rng in enumerate(rngs)]
            )
            return tokens, targets
        for k, rng in enumerate(rngs):
            _recall_tokens(tokens[k], self.lag, self.alphabet, self.name == "blank-recall", rng)
        return tokens, tokens[:, 0].copy()


def recall(lag: int, alphabet: int = 8, distractors: str = "random") -> Task:
    r"""Recall the first token after ``lag`` distractors: chance is ``1/alphabet``.

    A sequence is :math:`a_0, d_1, \dots, d_{\text{lag}}, q`: a token from
    ``alphabet`` :math:`= K` tokens, ``lag`` distractors (tokens drawn
    uniformly from the same alphabet, or the blank token when
    ``distractors="blank"``), and the query marker :math:`q`. Each is a
    one-hot vector of size :math:`K + 2` (indices :math:`0..K-1` the tokens,
    :math:`K` the blank, :math:`K + 1` the query). The target is
    :math:`a_0`, read at the query step.

    >>> task = recall(lag=2, alphabet=3)
    >>> task.length, task.input_size, task.output_size, round(task.chance, 3)
    (4, 5, 3, 0.333)
    >>> batch = task.sample(1, seed=1)
    >>> batch.inputs[:, 0].argmax(axis=1).tolist(), batch.targets.tolist()
    ([1, 1, 2, 4], [1])
    >>> recall(lag=0)
    Traceback (most recent call last):
    ...
    ValueError: lag must be a whole number >= 1, got 0
    """
    lag = check_positive_int("lag", lag)
    alphabet = _check_alphabet(alphabet)
    distractors = check_choice("distractors", distractors, DISTRACTORS)
    name = "recall" if distractors == "random" else "blank-recall"
    return Task(
        name=name,
        kind="classification",
        lag=lag,
        length=lag + 2,
        input_size=alphabet + 2,
        output_size=alphabet,
        chance=1.0 / alphabet,
        baseline_mse=float("nan"),
        alphabet=alphabet,
    )


def first_recall(lag: int, alphabet: int = 8) -> Task:
    r"""Recall the first token that is not blank, whose position varies: chance is ``1/alphabet``.

    A sequence of :math:`T = \text{lag} + 2` steps is
    :math:`\underbrace{b, \dots, b}_{p}, a_0, d_1, \dots, d_{\text{lag} - p}, q`:
    :math:`p` blanks, with :math:`p` drawn uniformly from
    :math:`0, \dots, \lfloor \text{lag}/2 \rfloor` for each sequence, the
    token :math:`a_0` from ``alphabet`` :math:`= K` tokens, distractors drawn
    uniformly from the same alphabet (so :math:`a_0`'s value may come again),
    and the query marker :math:`q`. The target is :math:`a_0`. The one-hot
    layout is recall's (indices :math:`0..K-1` the tokens, :math:`K` the
    blank, :math:`K + 1` the query). Between :math:`a_0` and the query lie
    :math:`\text{lag} - p` distractors, from :math:`\lceil \text{lag}/2
    \rceil` to ``lag`` (the query is :math:`\lceil \text{lag}/2 \rceil + 1` to
    :math:`\text{lag} + 1` steps after :math:`a_0`); :attr:`Task.lag` is the
    largest, as in :func:`recall`, which is this task with :math:`p = 0`.

    Why it separates two kinds of gate. A gate that reads only the current
    input treats :math:`a_0` as it treats every later copy of the same value,
    and since :math:`a_0`'s position varies, a decay that does not read the
    state cannot be timed to it either: where it holds everything, the state
    counts the tokens and loses their order; where it decays, :math:`a_0`,
    the oldest token written, has decayed the most. A gate that reads the
    state can write once, then hold: open while the state says nothing has
    been written, closed after. This is the contrast Merrill, Petty and
    Sabharwal (2024, "The illusion of state in state-space models") draw, on
    tasks of state tracking, between recurrences linear in their state, whose
    transitions the input alone chooses, and recurrences whose update reads
    the state.

    >>> task = first_recall(lag=4, alphabet=3)
    >>> task.name, task.length, task.input_size, task.lag
    ('first-recall', 6, 5, 4)
    >>> batch = task.sample(3, seed=2)
    >>> for tokens, target in zip(batch.inputs.argmax(axis=2).T.tolist(), batch.targets.tolist()):
    ...     print(tokens, "->", target)
    [3, 3, 0, 1, 1, 4] -> 0
    [1, 0, 2, 0, 1, 4] -> 1
    [2, 1, 2, 2, 0, 4] -> 2
    >>> first_recall(lag=4, alphabet=1)
    Traceback (most recent call last):
    ...
    ValueError: alphabet must be a whole number >= 2 (tokens to tell apart), got 1
    """
    lag = check_positive_int("lag", lag)
    alphabet = _check_alphabet(alphabet)
    return Task(
        name="first-recall",
        kind="classification",
        lag=lag,
        length=lag + 2,
        input_size=alphabet + 2,
        output_size=alphabet,
        chance=1.0 / alphabet,
        baseline_mse=float("nan"),
        alphabet=alphabet,
    )


def adding(length: int) -> Task:
    r"""The adding problem over ``length`` steps, as Le, Jaitly and Hinton (2015) and Arjovsky, Shah and Bengio
    (2016) pose it.

    Hochreiter and Schmidhuber (1997) posed the original, with values in
    :math:`[-1, 1]`, both marks in the first half of the sequence and a
    rescaled target; this is the variant later papers benchmark on.

    Step :math:`t` is the pair :math:`(u_t, m_t)` with :math:`u_t \sim U[0, 1]`
    and the marker :math:`m_t \in \{0, 1\}`; exactly two steps are marked, one
    drawn from the first :math:`\lfloor T/2 \rfloor` steps and one from the
    rest. The target is :math:`u_{t_1} + u_{t_2}`. The best constant
    prediction, :math:`1`, has mean squared error
    :math:`\operatorname{Var}(u_{t_1} + u_{t_2}) = 1/12 + 1/12 = 1/6`.

    >>> task = adding(length=10)
    >>> task.input_size, task.output_size, round(task.baseline_mse, 3)
    (2, 1, 0.167)
    >>> batch = task.sample(10000, seed=0)
    >>> markers = batch.inputs[:, :, 1].sum(axis=0)       # two marked steps per sequence
    >>> int(markers.min()), int(markers.max()), round(float(np.mean((batch.targets - 1.0) ** 2)), 3)
    (2, 2, 0.167)
    """
    length = check_positive_int("length", length)
    if length < 2:
        raise ValueError(f"length must be a whole number >= 2 (one marked step in each half), got {length!r}")
    return Task(
        name="adding",
        kind="regression",
        lag=length,
        length=length,
        input_size=2,
        output_size=1,
        chance=float("nan"),
        baseline_mse=2.0 / 12.0,
    )


def make_task(name: str, lag: int, alphabet: int = 8) -> Task:
    """The task called ``name`` (one of :data:`TASKS`) at distance ``lag``.

    For ``"adding"``, ``lag`` is the sequence length and ``alphabet`` is not
    used.

    >>> make_task("blank-recall", lag=5).length
    7
    >>> make_task("copy", lag=5)
    Traceback (most recent call last):
    ...
    ValueError: task must be one of 'recall', 'blank-recall', 'first-recall', 'adding', got 'copy'
    """
    name = check_choice("task", name, TASKS)
    if name == "adding":
        return adding(lag)
    if name == "first-recall":
        return first_recall(lag, alphabet)
    return recall(lag, alphabet, "random" if name == "recall" else "blank")


def _check_alphabet(alphabet: Any) -> int:
    allowed = "a whole number >= 2 (tokens to tell apart)"
    try:
        k = check_positive_int("alphabet", alphabet)
    except ValueError:
        raise ValueError(f"alphabet must be {allowed}, got {alphabet!r}") from None
    if k < 2:
        raise ValueError(f"alphabet must be {allowed}, got {alphabet!r}")
    return k


def _recall_tokens(tokens: np.ndarray, lag: int, alphabet: int, blank: bool, rng: np.random.Generator) -> None:
    """Fill ``tokens`` (T, n) with one batch of recall token ids drawn from ``rng``."""
    T, n = tokens.shape
    tokens[0] = rng.integers(0, alphabet, size=n)
    if blank:
        tokens[1 : T - 1] = alphabet
    else:
        tokens[1 : T - 1] = rng.integers(0, alphabet, size=(lag, n))
    tokens[T - 1] = alphabet + 1


def _first_recall_tokens(tokens: np.ndarray, lag: int, alphabet: int, rng: np.random.Generator) -> np.ndarray:
    """Fill ``tokens`` (T, n) with one batch of first-recall token ids drawn from ``rng``; return the targets (n,).

    Drawn in this order: the prefix lengths :math:`p`, the tokens
    :math:`a_0`, then ``lag`` distractors per sequence, of which the last
    :math:`p` fall off the end (the draws do not depend on :math:`p`).
    """
    T, n = tokens.shape
    prefix = rng.integers(0, lag // 2 + 1, size=n)
    first = rng.integers(0, alphabet, size=n)
    body = np.empty((lag + 1, n), dtype=np.int64)  # a_0, then the distractors, as if p were 0
    body[0] = first
    body[1:] = rng.integers(0, alphabet, size=(lag, n))
    shift = np.arange(T - 1)[:, None] - prefix  # step t holds body[t - p], or a blank before p
    tokens[: T - 1] = np.where(shift >= 0, np.take_along_axis(body, np.maximum(shift, 0), axis=0), alphabet)
    tokens[T - 1] = alphabet + 1
    return body[0].copy()


def _adding_draw(n: int, length: int, rng: np.random.Generator) -> tuple:
    """One batch of the adding problem's draws from ``rng``: values (T, n), both marked steps (n,)."""
    half = length // 2
    values = rng.random((length, n))
    first = rng.integers(0, half, size=n)
    second = rng.integers(half, length, size=n)
    return values, first, second


def _adding_inputs(inputs: np.ndarray, values: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Fill ``inputs`` (T, n, 2) from the draws; return the targets (n,)."""
    columns = np.arange(inputs.shape[1])
    inputs[:, :, 0] = values
    inputs[first, columns, 1] = 1.0
    inputs[second, columns, 1] = 1.0
    return inputs[first, columns, 0] + inputs[second, columns, 0]


def _adding_batch(n: int, length: int, rng: np.random.Generator) -> Batch:
    inputs = np.zeros((length, n, 2))
    targets = _adding_inputs(inputs, *_adding_draw(n, length, rng))
    return Batch(inputs, targets)


def _adding_batches(n: int, length: int, rngs: list) -> Batch:
    inputs = np.zeros((length, len(rngs), n, 2))
    targets = np.stack([_adding_inputs(inputs[:, k], *_adding_draw(n, length, rng)) for k, rng in enumerate(rngs)])
    return Batch(inputs, targets)

r"""The lab: train an ensemble of recurrent models on a task and measure when they succeed.

:func:`train` takes a :class:`~rnnmem.tasks.Task` and trains one member per
seed, all at once (:class:`~rnnmem.ensemble.Ensemble`): a recurrent layer and
a readout of its last hidden state, softmax cross-entropy for classification,
squared error for regression. What it trains is a :class:`Model` (a cell, its
sizes, its start) or any ensemble that follows the same protocol, and how it
trains is a :class:`Schedule`, whose fields the names below are. Each
update, every member

1. draws a fresh batch of ``batch`` sequences from its own stream,
   ``numpy.random.default_rng((seed, 1))`` (its weights come from
   ``default_rng(seed)``, as a single model with that seed draws them);
2. computes its loss and exact gradients (backpropagation through time);
3. records the loss and the global gradient norm :math:`\|g\|` over all its
   parameter arrays, *before* clipping;
4. clips by global norm, :math:`g \leftarrow g \min(1, \theta/\|g\|)` with
   :math:`\theta` = ``clip`` (``None``: no clipping), and takes one Adam step
   (:class:`rnnmem.train.Adam`, Kingma and Ba 2015) with learning rate ``lr``.

Every ``eval_every`` updates (and before the first) every member is scored on
one **held-out** set of ``eval_size`` sequences drawn from
``default_rng((eval_seed, 2))``, a stream no member trains on. **Success** is

* classification: held-out accuracy :math:`\ge` ``threshold`` (default 0.9;
  recall's chance is :math:`1/K`);
* regression: held-out mean squared error :math:`\le (1 -` ``threshold``
  :math:`)` times the task's constant-prediction baseline (the fraction of
  variance explained, :math:`R^2`, at least ``threshold``).

A member's *updates to success* is the first evaluation at which it
succeeds (a multiple of ``eval_every``), or ``None``: never within the budget.
A member whose loss or gradient norm stops being finite is **diverged**: it
is frozen from that update on (its parameters no longer change), reported
with the update it diverged at, and never counted as a success. With
``retire=True`` a member leaves the stack at its first success (and a
diverged one at once), and the others train on in a smaller one, each
computing what it computes in the full stack; the run's cost then falls as
members finish.

Members never mix: member :math:`e` of an ensemble computes the same numbers,
bit for bit, as the same seed trained alone (the batched product computes each
member's matrix product by itself, and every other operation is elementwise
or a sum within one member), and the ensemble is faster because each step is
one batched matrix product for all of them.

**Precision.** Training runs in float64 unless the :class:`Model` asks for
``dtype=np.float32``. float32 is about twice as fast (its products halve, and its
nonlinearities go through numpy's float32 tanh, faster than float64's exp),
but training is chaotic: a difference in the last bit of one product,
such as another BLAS kernel produces, grows from update to update until, after
some hundreds of updates, a member's accuracy and even whether it succeeds
can differ. In float64 that difference starts about :math:`10^9` times
smaller and stays invisible for longer, so printed counts and rounded scores
agree across kernels in more runs; on one machine and kernel every run is
reproducible exactly. Report counts over seeds, not single runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Literal, overload

import numpy as np

from . import cells
from .checks import check_choice, check_finite, check_nonnegative_int, check_positive, check_positive_int
from .ensemble import INITS, KERNELS, MODELS, Ensemble, OneHot
from .linear_ensemble import LINEAR_MODELS, LinearEnsemble
from .tasks import Task
from .train import Adam

__all__ = [
    "ALL_MODELS",
    "OPTIMIZERS",
    "CARRY_MASKS",
    "HIDDEN_MASKS",
    "LabResult",
    "make_ensemble",
    "Dropout",
    "Schedule",
    "Model",
    "train",
    "evaluate",
    "gradient_by_step",
    "check_threshold",
]

ALL_MODELS = MODELS + LINEAR_MODELS
"""Every model the lab trains, read from the registry (:mod:`rnnmem.cells`): the classic cells with stacked
kernels (:data:`rnnmem.ensemble.KERNELS`), which :class:`~rnnmem.ensemble.Ensemble` stacks, and the models
of the linear protocol (:data:`rnnmem.cells.LINEAR`), which :class:`~rnnmem.linear_ensemble.LinearEnsemble`
stacks: ``"rnn"``, ``"gru"``, ``"lstm"``, ``"lru"``, ``"mingru"``, ``"selective"``."""


def _lab_models() -> tuple[str, ...]:
    """:data:`ALL_MODELS` as the registry and the kernel table hold them now."""
    return tuple(KERNELS) + tuple(cells.LINEAR)


AnyEnsemble = Ensemble | LinearEnsemble
"""What :func:`make_ensemble` returns: an :class:`Ensemble` for a cell, a :class:`LinearEnsemble` otherwise."""

OPTIMIZERS = ("adam", "sgd")
"""The update rules :func:`train` knows: Adam (Kingma and Ba 2015), or plain gradient descent."""

CARRY_MASKS = ("step", "sequence")
"""Dropout masks on the LSTM's carry line: a fresh one at every step, or one per sequence."""

HIDDEN_MASKS = ("sequence", "step")
"""Dropout masks on the hidden state entering the recurrent product: one per sequence (Gal and Ghahramani
2016), or a fresh one at every step."""


class _SGD:
    """Plain gradient descent, each member's gradient scaled (clipping) and frozen members left as they are."""

    def __init__(self, ens: AnyEnsemble, *, lr: float) -> None:
        self.params, self.lr = ens.params, lr

    def select(self, ens: AnyEnsemble, rows: np.ndarray) -> _SGD:
        """The optimizer of ``ens``, the members at ``rows`` of this one's ensemble (it has no state)."""
        return _SGD(ens, lr=self.lr)

    def step(self, grads: dict, scale: np.ndarray, frozen: np.ndarray) -> None:
        E = scale.size
        for k, p in self.params.items():
            g = grads[k]
            g *= scale.reshape((E,) + (1,) * (g.ndim - 1)).astype(g.dtype)
            g[frozen] = 0.0
            p -= self.lr * g


class _Adam:
    r"""Adam on every parameter of an ensemble at once, in place: :class:`rnnmem.train.Adam`'s update.

    The same arithmetic as :meth:`rnnmem.train.Adam.step`, operation for
    operation, so every number is the same, but on the ensemble's parameters
    as one ``(E, P)`` block (each member a row), with preallocated buffers:
    :math:`m \leftarrow \beta_1 m + (1-\beta_1) g`, :math:`v \leftarrow
    \beta_2 v + (1-\beta_2) g^2`, :math:`\theta \leftarrow \theta -
    \eta\,(m/(1-\beta_1^t)) / (\sqrt{v/(1-\beta_2^t)} + \epsilon)`. A
    frozen member's gradient and moments are zeroed, so it does not move.
    """

    def __init__(self, ens: AnyEnsemble, *, lr: float) -> None:
        defaults = Adam({"p": np.zeros(1)}, lr=lr)  # the learning rate checked, betas and eps as rnnmem.train has them
        self.lr, self.beta1, self.beta2, self.eps = defaults.lr, defaults.beta1, defaults.beta2, defaults.eps
        self.flat = ens._flat
        self.t = 0
        self.m, self.v, self.g, self.work, self.work2 = (np.zeros_like(self.flat) for _ in range(5))
        E = ens.size
        start, self.grad_views = 0, {}
        for name, p in ens.params.items():  # the gradient block, laid out like the parameters
            self.grad_views[name] = self.g[:, start : start + p[0].size].reshape(p.shape)
            start += p[0].size
        assert start == self.flat.shape[1] and self.flat.shape[0] == E

    def select(self, ens: AnyEnsemble, rows: np.ndarray) -> _Adam:
        """The optimizer of ``ens``, made of the members at ``rows`` of this one's: their moments and step count."""
        new = _Adam(ens, lr=self.lr)
        new.t = self.t
        new.m[...] = self.m[rows]
        new.v[...] = self.v[rows]
        return new

    def step(self, grads: dict, scale: np.ndarray, frozen: np.ndarray) -> None:
        g, m, v, a, b = self.g, self.m, self.v, self.work, self.work2
        for name, view in self.grad_views.items():
            view[...] = grads[name]
        g *= scale[:, None].astype(g.dtype)
        if frozen.any():
            g[frozen] = 0.0
            m[frozen] = 0.0
            v[frozen] = 0.0
        self.t += 1
        b1, b2 = self.beta1, self.beta2
        correction1 = 1.0 - b1**self.t
        correction2 = 1.0 - b2**self.t
        m *= b1
        np.multiply(g, 1.0 - b1, out=a)
        m += a  # m += (1 - b1) g
        v *= b2
        np.multiply(g, g, out=a)
        a *= 1.0 - b2
        v += a  # v += (1 - b2) g^2
        np.divide(m, correction1, out=a)
        a *= self.lr  # lr m_hat
        np.divide(v, correction2, out=b)
        np.sqrt(b, out=b)
        b += self.eps  # sqrt(v_hat) + eps
        a /= b
        self.flat -= a


class _GlobalNorm:
    """The lab's update rule: each member's global gradient norm, clipping by it at ``clip``, and ``opt``'s step.

    The update protocol :func:`train` drives (an optimizer of :class:`Schedule` follows it too):
    ``update(loss, grads, frozen)`` steps every member of the stack that is not ``frozen`` and returns
    each member's gradient norm, as recorded, and which members diverged at this update (they take no
    step); ``select(ensemble, rows)`` is the optimizer of the smaller stack ``ensemble``, made of the
    members at ``rows``. Here a member diverges when its loss or gradient norm is not finite.
    """

    def __init__(self, opt: Any, clip: float | None) -> None:
        self.opt, self.clip = opt, clip

    def select(self, ens: Any, rows: np.ndarray) -> _GlobalNorm:
        """The update rule of ``ens``, the members at ``rows`` of this one's stack."""
        return _GlobalNorm(self.opt.select(ens, rows), self.clip)

    def update(self, loss: np.ndarray, grads: dict, frozen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Step every member not ``frozen``; return each member's global norm before clipping, and which diverged."""
        E = loss.size
        norm = np.sqrt(sum(_squares(g.reshape(E, -1)) for g in grads.values()))
        diverged = ~(np.isfinite(loss) & np.isfinite(norm))
        scale = np.ones(E) if self.clip is None else np.where(norm > self.clip, self.clip / norm, 1.0)
        self.opt.step(grads, scale, frozen | diverged)
        return norm, diverged


@dataclass
class LabResult:
    """What :func:`train` measured, member by member (axis 0 is the member, in the order of ``seeds``)."""

    task: Task
    """The task trained on."""
    model: str
    """One of :data:`ALL_MODELS`: ``"rnn"``, ``"gru"``, ``"lstm"``, ``"lru"``, ``"mingru"`` or ``"selective"``."""
    seeds: tuple
    """One seed per member."""
    threshold: float
    """Accuracy (classification) or fraction of variance explained (regression) that counts as success."""
    eval_steps: np.ndarray
    """Updates done at each evaluation: ``0, eval_every, 2 eval_every, ...`` and the last update."""
    scores: np.ndarray
    """``(E, evaluations)``: held-out accuracy, or held-out mean squared error."""
    losses: np.ndarray
    """``(E, updates)``: each update's training loss (NaN once a member has diverged)."""
    grad_norms: np.ndarray
    """``(E, updates)``: each update's global gradient norm before clipping (NaN once diverged)."""
    success_step: list
    """Per member: updates to success (int), or ``None``."""
    diverged_at: list
    """Per member: the update at which the loss or gradient stopped being finite, or ``None``."""
    ensemble: AnyEnsemble
    """The trained models."""

    @property
    def final_scores(self) -> np.ndarray:
        """``(E,)``: each member's held-out score at the last evaluation."""
        return self.scores[:, -1]

    @property
    def succeeded(self) -> np.ndarray:
        """``(E,)`` booleans: reached success and did not diverge."""
        return np.array([s is not None and d is None for s, d in zip(self.success_step, self.diverged_at)])

    @property
    def successes(self) -> int:
        """How many members succeeded."""
        return int(self.succeeded.sum())

    def outcome(self, e: int) -> str:
        """Member ``e``'s outcome in words: ``"diverged at update U"``, ``"U updates"`` or ``"never"``."""
        if self.diverged_at[e] is not None:
            return f"diverged at update {self.diverged_at[e]}"
        if self.success_step[e] is None:
            return "never"
        return f"{self.success_step[e]} updates"


def check_threshold(threshold: Any) -> float:
    """A success threshold: a number in (0, 1].

    >>> check_threshold(0.9)
    0.9
    >>> check_threshold(1.5)
    Traceback (most recent call last):
    ...
    ValueError: threshold must be a number in (0, 1] (an accuracy, or a fraction of variance explained), got 1.5
    """
    value = float(check_finite("threshold", threshold))
    if not 0.0 < value <= 1.0:
        raise ValueError(
            f"threshold must be a number in (0, 1] (an accuracy, or a fraction of variance "
            f"explained), got {threshold!r}"
        )
    return value


@overload
def make_ensemble(
    task: Task,
    model: Literal["rnn", "gru", "lstm"],
    seeds: Any,
    *,
    hidden: int = ...,
    forget_bias: Any = ...,
    init: Any = ...,
    t_max: float | None = ...,
    input_bias: float | None = ...,
    dtype: Any = ...,
    layers: int = ...,
    state_size: int | None = ...,
    r_min: float = ...,
    r_max: float = ...,
) -> Ensemble: ...


@overload
def make_ensemble(
    task: Task,
    model: Literal["lru", "mingru", "selective", "mamba"],
    seeds: Any,
    *,
    hidden: int = ...,
    forget_bias: Any = ...,
    init: Any = ...,
    t_max: float | None = ...,
    input_bias: float | None = ...,
    dtype: Any = ...,
    layers: int = ...,
    state_size: int | None = ...,
    r_min: float = ...,
    r_max: float = ...,
) -> LinearEnsemble: ...


@overload
def make_ensemble(
    task: Task,
    model: str,
    seeds: Any,
    *,
    hidden: int = ...,
    forget_bias: Any = ...,
    init: Any = ...,
    t_max: float | None = ...,
    input_bias: float | None = ...,
    dtype: Any = ...,
    layers: int = ...,
    state_size: int | None = ...,
    r_min: float = ...,
    r_max: float = ...,
) -> AnyEnsemble: ...


def make_ensemble(
    task: Task,
    model: str,
    seeds: Any,
    *,
    hidden: int = 32,
    forget_bias: Any = None,
    init: Any = "default",
    t_max: float | None = None,
    input_bias: float | None = None,
    dtype: Any = np.float64,
    layers: int = 1,
    state_size: int | None = None,
    r_min: float = 0.9,
    r_max: float = 0.999,
) -> AnyEnsemble:
    r"""The untrained ensemble :func:`train` starts from: sizes from ``task``, one member per seed.

    With ``init="chrono"`` (for every member, or for some, ``init`` being a
    list) and no ``t_max``, :math:`T_{\max}` is the task's sequence length.

    >>> from rnnmem.tasks import recall
    >>> ens = make_ensemble(recall(lag=10), "lstm", seeds=[0, 1], hidden=8, init="chrono")
    >>> ens.t_max, ens.params["weight_ih_l0"].shape
    (12.0, (2, 32, 10))

    A model of :data:`~rnnmem.linear_ensemble.LINEAR_MODELS` gives a
    :class:`~rnnmem.linear_ensemble.LinearEnsemble` of ``layers`` layers,
    with ``state_size`` (default: ``hidden`` for ``"lru"`` and ``"mingru"``,
    8 for ``"selective"``) and the LRU's ring ``r_min <= |lambda| <= r_max``;
    the LSTM's options (``forget_bias``, ``init``, ``t_max``,
    ``input_bias``) are refused for it, and these for the three cells.

    >>> make_ensemble(recall(lag=10), "lru", seeds=[0, 1], hidden=8, layers=2).params["nu_log_l1"].shape
    (2, 8)
    """
    if not isinstance(task, Task):
        raise ValueError(f"task must be a Task (from rnnmem.tasks), got {type(task).__name__}")
    model = check_choice("model", model, _lab_models())
    if cells.protocol(model) == "linear":
        for name, value, unset in (
            ("forget_bias", forget_bias, None),
            ("init", init, "default"),
            ("t_max", t_max, None),
            ("input_bias", input_bias, None),
        ):
            if not (value is unset or (isinstance(value, str) and value == unset)):
                raise ValueError(
                    f"{name} sets the LSTM's gates; model must be 'lstm', got {model!r} with {name}={value!r}"
                )
        return LinearEnsemble(
            model,
            task.input_size,
            check_positive_int("hidden", hidden),
            task.output_size,
            seeds,
            layers=layers,
            state_size=state_size,
            r_min=r_min,
            r_max=r_max,
            dtype=dtype,
        )
    linear_options: tuple[tuple[str, Any, Any], ...] = (
        ("layers", layers, 1),
        ("state_size", state_size, None),
        ("r_min", r_min, 0.9),
        ("r_max", r_max, 0.999),
    )
    for name, value, unset in linear_options:
        if not (value is unset or value == unset):
            raise ValueError(
                f"{name} is an option of the models {', '.join(map(repr, LINEAR_MODELS))}; "
                f"got {name}={value!r} with model {model!r}"
            )
    if isinstance(init, str):
        init = check_choice("init", init, INITS)
    hidden = check_positive_int("hidden", hidden)
    chrono = init == "chrono" if isinstance(init, str) else "chrono" in list(init)
    if chrono and t_max is None:
        t_max = task.length
    return Ensemble(
        model,
        task.input_size,
        hidden,
        task.output_size,
        seeds,
        forget_bias=forget_bias,
        init=init,
        t_max=t_max,
        input_bias=input_bias,
        dtype=dtype,
    )


def evaluate(
    ensemble: AnyEnsemble, task: Task, inputs: Any, targets: np.ndarray, chunk: int | None = None
) -> np.ndarray:
    """Each member's score on one set of sequences, ``(E,)``: accuracy, or mean squared error.

    ``inputs`` ``(T, N, D)`` (or a :class:`~rnnmem.ensemble.OneHot` of ids
    ``(T, N)``) and ``targets`` ``(N,)`` are shared by every member; they are
    run ``chunk`` sequences at a time. The default depends
    on the sequences' length and the model's size, never on the number of
    members, so that a member scores the same, bit for bit, in any ensemble
    (a regression's sum of squares is summed chunk by chunk).

    >>> from rnnmem.tasks import recall
    >>> task = recall(lag=2, alphabet=4)
    >>> batch = task.sample(100, seed=0)
    >>> evaluate(make_ensemble(task, "rnn", [0, 1], hidden=4), task, *batch).shape
    (2,)
    """
    T, N = (inputs.ids if isinstance(inputs, OneHot) else inputs).shape[:2]
    if chunk is None and isinstance(ensemble, LinearEnsemble):
        chunk = ensemble.evaluation_chunk(T, N)
    if chunk is None:
        gates = cells.GATES[ensemble.model]
        chunk = max(1, min(N, 2**17 // (T * gates * ensemble.hidden_size)))
    chunk = check_positive_int("chunk", chunk)
    total = np.zeros(ensemble.size)
    for start in range(0, N, chunk):
        part = (
            OneHot(inputs.ids[:, start : start + chunk])
            if isinstance(inputs, OneHot)
            else inputs[:, start : start + chunk]
        )
        out = ensemble.predict(part)
        y = targets[start : start + chunk]
        with np.errstate(invalid="ignore", over="ignore"):
            if task.kind == "classification":
                total += (out.argmax(axis=2) == y).sum(axis=1)
            else:
                total += ((out[:, :, 0] - y) ** 2).sum(axis=1)
    return total / N


@dataclass(frozen=True)
class Dropout:
    r"""Inverted dropout while training (evaluation uses no mask): on the LSTM's carry line, on the hidden state, or both.

    ``carry_keep=p`` (LSTM only) trains with inverted dropout on the carry
    line, :math:`c_t = f_t \odot (M_t \odot c_{t-1}) + i_t \odot g_t` with
    :math:`M_t = m_t / p`, :math:`m_t \sim \text{Bernoulli}(p)` per unit and
    sequence: a fresh mask at every step (``carry_mask="step"``) or one mask
    per sequence used at every step (``"sequence"``: RNNDrop, Moon et al.
    2015, scaled at every step; Gal and Ghahramani 2016 and Keras'
    ``recurrent_dropout`` mask the hidden state instead, see
    ``hidden_keep``). The masks come from the member's own stream
    ``default_rng((seed, 3))``.

    ``hidden_keep=p`` (RNN, GRU and LSTM) trains with inverted dropout on the
    previous hidden state where it enters the recurrent product (Gal and
    Ghahramani 2016): :math:`W_{hh} h_{t-1} \to W_{hh} (M_t \odot h_{t-1})`,
    :math:`M_t = m_t / p`, one mask shared by every gate's recurrent input
    (the LSTM's four, the GRU's three, the reset gate's product included);
    the state's other paths (the GRU's interpolation) and the readout are not
    masked. One mask per sequence (``hidden_mask="sequence"``, the default,
    as Gal and Ghahramani) or a fresh one at every step (``"step"``), from the
    member's own stream ``default_rng((seed, 4))``, drawn as the carry masks
    are. Both dropouts can be on at once.

    >>> Dropout(carry_keep=0.9, carry_mask="sequence")
    Dropout(carry_keep=0.9, carry_mask='sequence', hidden_keep=None, hidden_mask='sequence')
    >>> Dropout(hidden_keep=0)
    Traceback (most recent call last):
    ...
    ValueError: hidden_keep must be a keep probability in (0, 1], got 0.0
    """

    carry_keep: float | None = None
    carry_mask: str = "step"
    hidden_keep: float | None = None
    hidden_mask: str = "sequence"

    def __post_init__(self) -> None:
        check_choice("carry_mask", self.carry_mask, CARRY_MASKS)
        check_choice("hidden_mask", self.hidden_mask, HIDDEN_MASKS)
        for name in ("carry_keep", "hidden_keep"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _check_keep(name, getattr(self, name)))


@dataclass(frozen=True)
class Schedule:
    r"""How :func:`train` trains and judges: the budget, the updates, the evaluations and the success rule.

    ``steps`` updates at most, each on ``batch`` sequences per member;
    learning rate ``lr``; clipping by global norm at ``clip`` (``None``: no
    clipping); ``optimizer`` ``"adam"`` or ``"sgd"`` (:data:`OPTIMIZERS`:
    plain gradient descent, :math:`\theta \leftarrow \theta - \eta g`; with
    Adam the step size is about ``lr`` whatever the gradient's size, so a
    gradient that explodes shows in its norm but hardly moves the weights;
    with SGD it does). ``optimizer`` may instead be an update rule of one's
    own: a function of the untrained ensemble that returns an object with
    ``update(loss, grads, frozen)``, which steps every member of the stack
    not ``frozen`` and returns each member's gradient norm (recorded as
    ``grad_norms``) and which members diverged at this update (they take no
    step), and ``select(ensemble, rows)``, the rule of a smaller stack made of
    the members at ``rows``; ``lr`` and ``clip`` are then its own, not
    these. Every ``eval_every`` updates (and before the first)
    every member is scored on ``eval_size`` held-out sequences drawn from
    ``default_rng((eval_seed, 2))``, ``eval_chunk`` at a time (``None``:
    :func:`evaluate`'s default), and succeeds at ``threshold`` (as the module
    says), or when ``succeeds(score)`` is true if that function is given.
    ``stop_when_done`` stops at the first evaluation at which every member
    has succeeded or diverged (the remaining columns of ``losses`` and
    ``grad_norms`` are NaN); ``retire`` takes each member out of the stack at
    its first success (see :func:`train`). ``dropout`` is :class:`Dropout`'s.

    >>> Schedule(steps=200, lr=0.02).eval_every
    50
    >>> Schedule(optimizer="rmsprop")
    Traceback (most recent call last):
    ...
    ValueError: optimizer must be one of 'adam', 'sgd', got 'rmsprop'
    """

    steps: int = 1000
    batch: int = 64
    lr: float = 1e-2
    clip: float | None = 1.0
    optimizer: str | Callable[[Any], Any] = "adam"
    eval_every: int = 50
    eval_size: int = 512
    eval_seed: int = 0
    eval_chunk: int | None = None
    threshold: float = 0.9
    succeeds: Callable[[float], bool] | None = None
    stop_when_done: bool = False
    retire: bool = False
    dropout: Dropout = Dropout()

    def __post_init__(self) -> None:
        for name in ("steps", "batch", "eval_every", "eval_size"):
            object.__setattr__(self, name, check_positive_int(name, getattr(self, name)))
        object.__setattr__(self, "eval_seed", check_nonnegative_int("eval_seed", self.eval_seed))
        if self.eval_chunk is not None:
            object.__setattr__(self, "eval_chunk", check_positive_int("eval_chunk", self.eval_chunk))
        object.__setattr__(self, "lr", float(check_positive("lr", self.lr)))
        if self.clip is not None:
            object.__setattr__(self, "clip", float(check_positive("clip", self.clip)))
        object.__setattr__(self, "threshold", check_threshold(self.threshold))
        if not callable(self.optimizer):
            check_choice("optimizer", self.optimizer, OPTIMIZERS)
        if self.succeeds is not None and not callable(self.succeeds):
            raise ValueError(f"succeeds must be a function of a score, or None, got {self.succeeds!r}")
        for name in ("stop_when_done", "retire"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if not isinstance(self.dropout, Dropout):
            raise ValueError(f"dropout must be a Dropout, got {self.dropout!r}")


@dataclass(frozen=True)
class Model:
    """What makes the ensemble :func:`train` starts from: :func:`make_ensemble`'s arguments but the task.

    >>> from rnnmem.tasks import recall
    >>> Model("lstm", seeds=[0, 1], hidden=8, init="chrono").make(recall(lag=10)).t_max
    12.0
    """

    model: str = "lstm"
    seeds: Any = (0,)
    hidden: int = 32
    forget_bias: Any = None
    init: Any = "default"
    t_max: float | None = None
    input_bias: float | None = None
    dtype: Any = np.float64
    layers: int = 1
    state_size: int | None = None
    r_min: float = 0.9
    r_max: float = 0.999

    def make(self, task: Task) -> AnyEnsemble:
        """The untrained ensemble on ``task`` (:func:`make_ensemble`)."""
        options = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("model", "seeds")}
        return make_ensemble(task, self.model, self.seeds, **options)


def train(
    task: Task,
    model: Any,
    schedule: Schedule = Schedule(),
    *,
    progress: Callable[[int], object] | None = None,
    on_evaluation: Callable[[int, Any], object] | None = None,
) -> LabResult:
    r"""Train one member per seed on ``task`` by the ``schedule``; return the :class:`LabResult`.

    See the module for the procedure and the definition of success.
    ``model`` is a :class:`Model` (``train`` makes its ensemble on ``task``)
    or an untrained ensemble, which ``train`` trains in place: anything that
    follows the ensemble's protocol, as :class:`~rnnmem.ensemble.Ensemble`,
    :class:`~rnnmem.linear_ensemble.LinearEnsemble` and
    :class:`rnnmem.attention_lab.AttentionEnsemble` do: ``size``,
    ``hidden_size``, ``seeds``, ``model``, ``params`` (views into one
    ``(E, P)`` block ``_flat``), ``loss_and_grads``, ``predict`` and
    ``select``. The :class:`Schedule` holds everything else.

    With ``schedule.retire``: a member leaves training at its first
    successful evaluation, and a diverged member at the update it diverged
    at; the others go on in a smaller stack (so an update costs less as
    members finish), each computing exactly the numbers it computes in the
    full stack or alone (its parameters, Adam moments and streams move with
    it). A retired member's parameters stay those it retired with (those of
    the returned ``ensemble``, in the order of ``seeds``); its ``losses`` and
    ``grad_norms`` are NaN from its retirement on, and its ``scores`` repeat
    its score at retirement (for a diverged member, the score of its frozen
    parameters, as without ``retire``), so ``final_scores`` is its score when
    it stopped. Its ``success_step`` is the same as without ``retire``.

    The models of :data:`~rnnmem.linear_ensemble.LINEAR_MODELS` take no
    dropout; the carry line's is the LSTM's alone.

    ``progress``, if given, is called after every update with the number of
    updates done so far (a progress bar's hook; it does not change the result).
    ``on_evaluation``, if given, is called at every evaluation, after the
    scores are recorded (and after the members that succeeded there retired),
    with the number of updates done and an ensemble of **every** member, in
    the order of ``seeds``, whose parameters are every member's at that point
    (a retired member's: those it retired with). With ``retire``, it is the
    ensemble returned at the end, its rows refreshed from the smaller stack
    just before the call (only when a hook is given). The hook may record
    checkpoints or measure the models; it must not change the parameters.

    >>> from rnnmem.tasks import recall
    >>> lstm = Model("lstm", seeds=[0, 1, 2], hidden=16)
    >>> result = train(recall(lag=2, alphabet=4), lstm, Schedule(steps=200, lr=0.02, eval_every=25, eval_size=256))
    >>> result.scores.shape, result.losses.shape, result.successes
    ((3, 9), (3, 200), 3)
    >>> [result.outcome(e) for e in range(3)]
    ['25 updates', '25 updates', '25 updates']
    >>> retired = train(recall(lag=2, alphabet=4), lstm,
    ...                 Schedule(steps=200, lr=0.02, eval_every=25, eval_size=256, retire=True))
    >>> retired.success_step == result.success_step, bool(np.isnan(retired.losses[:, 25:]).all())
    (True, True)
    """
    if not isinstance(task, Task):
        raise ValueError(f"task must be a Task (from rnnmem.tasks), got {type(task).__name__}")
    if not isinstance(schedule, Schedule):
        raise ValueError(f"schedule must be a Schedule, got {schedule!r}")
    if isinstance(model, str):
        raise ValueError(f"model must be a Model or an ensemble, got the string {model!r}: use Model({model!r}, ...)")
    full = model.make(task) if isinstance(model, Model) else model
    if not callable(getattr(full, "loss_and_grads", None)) or not hasattr(full, "_flat"):
        raise ValueError(f"model must be a Model or an ensemble (Ensemble, LinearEnsemble, ...), got {model!r}")
    s, dropout = schedule, schedule.dropout
    if dropout.carry_keep is not None and full.model != "lstm":
        raise ValueError(f"carry_keep drops the LSTM's cell state; model must be 'lstm', got {full.model!r}")
    if dropout.hidden_keep is not None and full.model not in KERNELS:
        raise ValueError(
            f"hidden_keep drops the hidden state entering a recurrent product; model must be one of "
            f"{', '.join(map(repr, KERNELS))}, got {full.model!r}"
        )
    E, H = full.size, full.hidden_size
    held_out = task.sample(s.eval_size, seed=np.random.default_rng((s.eval_seed, 2)))
    # One-hot inputs (recall) go to the ensemble as their indices: the same numbers, without the vectors.
    held_out_x = OneHot(held_out.inputs.argmax(axis=2)) if task.one_hot else held_out.inputs
    if s.succeeds is not None:
        passed = s.succeeds
    elif task.kind == "classification":

        def passed(score):
            return score >= s.threshold
    else:
        limit = (1.0 - s.threshold) * task.baseline_mse

        def passed(score):
            return score <= limit

    # The stack in training: `ens` holds the members `members` (indices into `seeds`, in order), each
    # with its data stream, mask streams and optimizer rows; with `retire` it shrinks, else it is `full`.
    ens: Any = full
    members = np.arange(E)
    streams = [np.random.default_rng((seed, 1)) for seed in full.seeds]
    carry_streams = [np.random.default_rng((seed, 3)) for seed in full.seeds]
    hidden_streams = [np.random.default_rng((seed, 4)) for seed in full.seeds]
    if callable(s.optimizer):
        opt: Any = s.optimizer(full)
    else:
        opt = _GlobalNorm(_Adam(full, lr=s.lr) if s.optimizer == "adam" else _SGD(full, lr=s.lr), s.clip)
    losses = np.full((E, s.steps), np.nan)
    grad_norms = np.full((E, s.steps), np.nan)
    success_step: list = [None] * E
    diverged_at: list = [None] * E
    live = np.ones(E, dtype=bool)  # not diverged
    retired_score = np.full(E, np.nan)  # a retired member's score, repeated at every later evaluation
    eval_steps, scores = [], []

    def score_of(stack: Any) -> np.ndarray:
        return evaluate(stack, task, held_out_x, held_out.targets, s.eval_chunk)

    def leave(rows: np.ndarray) -> None:
        """Retire the members at positions `rows` of the stack: keep their parameters, shrink the rest."""
        nonlocal ens, members, streams, carry_streams, hidden_streams, opt
        assert ens is not None
        if ens is not full:
            full._flat[members] = ens._flat
        elif isinstance(full, (Ensemble, LinearEnsemble)):  # from here on `full` only holds parameters
            full._workspace.clear()
            full._cache = None
        stay = np.setdiff1d(np.arange(ens.size), rows)
        members = members[stay]
        streams, carry_streams, hidden_streams = (
            [stream[k] for k in stay] for stream in (streams, carry_streams, hidden_streams)
        )
        if stay.size == 0:
            ens = None
        else:
            ens = ens.select(stay)
            opt = opt.select(ens, stay)

    def evaluation(done: int) -> None:
        score = retired_score.copy()
        if ens is not None:
            score[members] = score_of(ens)
        eval_steps.append(done)
        scores.append(score)
        for e in range(E):
            if live[e] and success_step[e] is None and passed(score[e]):
                success_step[e] = done
        if s.retire and ens is not None:
            done_rows = np.flatnonzero([success_step[e] is not None for e in members])
            if done_rows.size:
                retired_score[members[done_rows]] = score[members[done_rows]]
                leave(done_rows)
        if on_evaluation is not None:
            if ens is not None and ens is not full:
                full._flat[members] = ens._flat
            on_evaluation(done, full)

    evaluation(0)
    done = 0
    while done < s.steps:
        if ens is not None:
            # each member's batch from its own stream: inputs (T, E, B, D) or their one-hot indices (T, E, B)
            if task.one_hot:
                ids, y = task.sample_ids_each(s.batch, streams)
                x: Any = OneHot(ids)
            else:
                x, y = task.sample_each(s.batch, streams)
            carry_masks = _masks(dropout.carry_keep, dropout.carry_mask, carry_streams, task.length, s.batch, H)
            hidden_masks = _masks(dropout.hidden_keep, dropout.hidden_mask, hidden_streams, task.length, s.batch, H)
            loss, norm, diverged = _update(ens, opt, x, y, task.kind, live[members], carry_masks, hidden_masks)
            bad = np.flatnonzero(live[members] & diverged)
            for k in bad:
                diverged_at[members[k]] = done  # frozen from here on
                live[members[k]] = False
            ok = live[members]
            losses[members[ok], done] = loss[ok]
            grad_norms[members[ok], done] = norm[ok]
            if s.retire and bad.size:  # a diverged member leaves at once, with its score as it stopped
                retired_score[members[bad]] = score_of(ens.select(bad))
                leave(bad)
        done += 1
        if progress is not None:
            progress(done)
        if done % s.eval_every == 0 or done == s.steps:
            evaluation(done)
            if s.stop_when_done and all(at is not None or not a for at, a in zip(success_step, live)):
                break
    if ens is not None and ens is not full:
        full._flat[members] = ens._flat
    return LabResult(
        task=task,
        model=full.model,
        seeds=full.seeds,
        threshold=s.threshold,
        eval_steps=np.array(eval_steps),
        scores=np.array(scores).T,
        losses=losses,
        grad_norms=grad_norms,
        success_step=success_step,
        diverged_at=diverged_at,
        ensemble=full,
    )


def _check_keep(name: str, keep: Any) -> float:
    value = float(check_finite(name, keep))
    if not 0.0 < value <= 1.0:
        raise ValueError(f"{name} must be a keep probability in (0, 1], got {value!r}")
    return value


def _masks(keep: float | None, kind: str, streams: list, T: int, B: int, H: int) -> np.ndarray | None:
    """Inverted-dropout masks (T, E, B, H), m / keep with m ~ Bernoulli(keep), each member's from its stream.

    ``kind="step"``: each stream draws ``(T, B, H)`` uniforms, a fresh mask per step; ``"sequence"``:
    ``(1, B, H)``, one mask per sequence, used at every step.
    """
    if keep is None:
        return None
    drawn = [rng.random((T if kind == "step" else 1, B, H)) < keep for rng in streams]
    return np.broadcast_to(np.stack(drawn, axis=1) / keep, (T, len(streams), B, H))


def _update(
    ens: Any,
    opt: Any,
    x: np.ndarray,
    y: np.ndarray,
    kind: str,
    live: np.ndarray,
    carry_masks: Any = None,
    hidden_masks: Any = None,
) -> tuple:
    """One update of every live member by the rule ``opt``; returns each member's loss, gradient norm, and divergence.

    A member that diverges at this update gets no step; the caller marks it diverged.
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        loss, grads = ens.loss_and_grads(x, y, kind, carry_masks=carry_masks, hidden_masks=hidden_masks)
        norm, diverged = opt.update(loss, grads, ~live)
    return loss, norm, diverged


def _squares(g: np.ndarray) -> np.ndarray:
    """Each row's sum of squares, in float64: one member's share of its squared gradient norm."""
    g = g if g.dtype == np.float64 else g.astype(np.float64)
    return (g * g).sum(axis=1)


def gradient_by_step(ensemble: AnyEnsemble, task: Task, *, n: int = 256, seed: int = 0) -> np.ndarray:
    r"""The gradient that reaches each step from the loss at the end: ``(E, T)``.

    Entry ``[e, s - 1]`` is member ``e``'s :math:`\|\partial \ell / \partial
    h_s\|`, averaged over ``n`` sequences drawn with ``seed`` (the same for
    every member), where :math:`\ell` is a sequence's loss, read at step
    :math:`T`; the last entry is the gradient at the readout. Works on a
    fresh ensemble (:func:`make_ensemble`) or a trained one
    (``result.ensemble``).

    >>> from rnnmem.tasks import recall
    >>> task = recall(lag=20)
    >>> norms = gradient_by_step(make_ensemble(task, "rnn", [0], hidden=16), task)
    >>> norms.shape, bool(norms[0, 0] < norms[0, -1])
    ((1, 22), True)
    """
    if not isinstance(ensemble, (Ensemble, LinearEnsemble)):
        raise ValueError(f"ensemble must be an Ensemble or a LinearEnsemble, got {type(ensemble).__name__}")
    n = check_positive_int("n", n)
    b = task.sample(n, seed=check_nonnegative_int("seed", seed))
    _, grads = ensemble.loss_and_grads(b.inputs, b.targets, task.kind, step_norms=True)
    return grads["step_norms"]

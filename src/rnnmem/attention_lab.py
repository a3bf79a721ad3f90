r"""The lab of "Looking back: attention": the lab's LSTM with an attention readout, trained beside its last-state readout.

Three **arms** (:data:`ARMS`) share the recurrent layer of the lab, the LSTM
of :class:`rnnmem.ensemble.Ensemble` with chrono initialization
(:data:`MODEL`), and differ in what the readout :math:`\hat y = W_y x + b_y`
reads:

* ``"last"``: the last state, :math:`x = h_T`: the lab's model itself;
* ``"attention"``: the context :math:`x = \bar h = \sum_t \alpha_t h_t` of
  :func:`rnnmem.attention.attend`, with a learned query :math:`q` that starts
  at zero (so every arm starts from the same weights, and the attention from
  the mean state);
* ``"uniform"``: the control, the same context with the query held at zero,
  :math:`\alpha_t = 1/T`: the mean state. It has the attention's one-step
  path to every state but cannot choose among them.

:class:`AttentionEnsemble` builds the attention readout by composition around
the lab's :class:`~rnnmem.ensemble.Ensemble`: the ensemble runs the LSTM
forward (its own code, so its states are the lab's to the last bit) and
keeps every state; the readout and its backward pass are computed here, and
the readout's gradient at every state flows into the ensemble's own backward
pass (:meth:`rnnmem.ensemble.Ensemble.backward`, whose ``d_steps`` takes a
gradient entering at every step). Its parameters live in one ``(E, P)`` block, member by member,
the ensemble's arrays first and the query last, so that the lab's optimizer
updates them as it updates the ensemble's.

:func:`train` trains any arm with the lab's trainer, :func:`rnnmem.lab.train`
(which trains anything that follows the ensemble's protocol), with members
retiring at their first success and training stopping when none is left: on
the ``"last"`` arm it is the lab's own run.

**The design**, fixed in this module before any of its runs: recall across
random tokens (:data:`TASK`, alphabet :data:`rnnmem.experiments.ALPHABET`) at
the lags :data:`LAGS` (:data:`LAGS_DESIGNED` less its last, by cost, and with
:data:`LAG_ADDED`, added after the first runs), the
seeds :data:`SEEDS` (20 per cell), the lab's settings :data:`DESIGN` (those
of "Remembering by design": 16 units, batches of 32, Adam at 0.01, clipping
at 1, at most :data:`BUDGET` updates, held-out accuracy of 0.9 on 256
sequences scored every 25), in float32 (:data:`PRECISION`). Every cell of
the grid is trained for every arm.

**What the state keeps of the token** (:func:`token_memory`), a measurement
added after the first runs, its design fixed here before any of its
values was read: the memory :math:`M_t` of "Memory, measured"
(:func:`rnnmem.inside.token_memory`, eq. inside-memory) of every trained
member of every arm, on :data:`MEMORY_GROUPS` held-out recall sequences in
the versions of every token (:func:`rnnmem.inside.token_variants`, seed
:data:`MEMORY_SEED`), at the lags :data:`MEMORY_LAGS`; it is read
:data:`HOLD` steps after the token and at the query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from . import by_design, experiments, inside, lab, tasks
from .checks import check_choice, check_positive_int
from .ensemble import Ensemble, check_targets
from .experiments import Design, RunResult
from .tasks import Task

__all__ = [
    "ARMS",
    "MODEL",
    "TASK",
    "LAGS_DESIGNED",
    "LAGS",
    "LAG_ADDED",
    "SEEDS",
    "BUDGET",
    "DESIGN",
    "PRECISION",
    "REACH_SEQUENCES",
    "AttentionEnsemble",
    "make_model",
    "train",
    "AttentionRun",
    "clue_share",
    "Profile",
    "attention_profile",
    "MEMORY_LAGS",
    "MEMORY_GROUPS",
    "MEMORY_SEED",
    "HOLD",
    "token_memory",
]

ARMS = ("last", "attention", "uniform")
"""The readouts: the last state; attention with a learned query (zero at the start); the query held at zero."""

MODEL = "lstm:chrono"
"""The recurrent layer of every arm: the lab's LSTM with chrono initialization, :math:`T_{\\max}` the sequence length."""

TASK = "recall"
"""Recall across random tokens: the lab's task, where the first token must outlast ``lag`` others."""

LAGS_DESIGNED = (10, 30, 100, 300)
"""The lags of the grid as designed: about threefold apart, the ladder of "Remembering by design". Every arm
is trained at every lag (no climbing rule), so that every cell has a partner to compare with. The whole grid
had to train cold within 300 s on one process of a two-core machine, or lose its last lag, by its cost alone,
before any result was read."""

LAG_ADDED = 50
"""The lag added to the grid after its first runs, to fill the gap between 30 and 100 (where those runs left
the question of where the readouts stop learning open). Chosen before any run at it, as the rung midway between
them on the lag's logarithmic axis, rounded down to a ten (:math:`\\sqrt{30 \\cdot 100} \\approx 55`), with the
seeds, budget and settings of every other cell."""

LAGS = (10, 30, LAG_ADDED, 100)
"""The lags as trained: :data:`LAGS_DESIGNED` without 300, and with :data:`LAG_ADDED`. Trained cold on the
build machine (two cores, shared with other work), the designed grid took 298 s of processor time, about four
fifths of its wall time at lag 300, where each attention arm cost about one and a half times the last-state
readout; with the chapter's gradient measurements that is over the budget, so the last lag was dropped as the
design said, and no result of it was read. Lag 50 was added afterwards (:data:`LAG_ADDED`)."""

SEEDS = tuple(range(20))
"""The seeds of every cell: 0 to 19."""

BUDGET = by_design.BUDGET
"""Updates per member at most (a member retires at its first success): 300."""

DESIGN = by_design.DESIGN
"""The lab's settings (:data:`rnnmem.by_design.DESIGN`), with the budget :data:`BUDGET`."""

PRECISION = "float32"
"""The arithmetic of the runs."""

MEMORY_LAGS = (10, 30, LAG_ADDED)
"""The lags at which :func:`token_memory` measures the trained models: those where some readout learned, and
the added one."""

MEMORY_GROUPS = 32
"""Held-out base sequences of :func:`token_memory`, each in one version per token: 256 sequences in all."""

MEMORY_SEED = (0, 5)
"""The seed of :func:`token_memory`'s sequences, ``default_rng((0, 5))``: a stream that neither the training nor the scoring of these runs draws."""

HOLD = 5
"""The steps after the token at which :math:`M_t` is read as "a few steps" (step :math:`1 + 5`)."""

REACH_SEQUENCES = 128
"""Sequences (drawn with seed 1) on which :func:`clue_share` measures the gradient at initialization."""


def _check_arm(arm: Any) -> str:
    return check_choice("arm", arm, ARMS)


def _sequence_norms(d: np.ndarray) -> np.ndarray:
    """``(E,)``: the mean over the batch of each sequence's gradient norm, from ``d`` (H, E, B) of a batch-mean loss.

    As :meth:`rnnmem.ensemble.Ensemble.backward` measures its ``step_norms``.
    """
    return np.sqrt((d * d).sum(axis=0)).mean(axis=1) * d.shape[2]


class AttentionEnsemble:
    r"""``E`` LSTMs of the lab, each read out by attention over its states: ``"attention"`` or ``"uniform"``.

    ``AttentionEnsemble(ensemble, arm)`` takes over ``ensemble`` (an LSTM
    :class:`~rnnmem.ensemble.Ensemble`, such as :func:`rnnmem.lab.make_ensemble`
    draws), whose weights it keeps and whose readout :math:`W_y, b_y` reads
    the context :math:`\bar h` instead of :math:`h_T`. The ``"attention"``
    arm adds a query :math:`q` per member, ``params["query"]`` ``(E, H)``,
    zero at the start; the ``"uniform"`` arm has none: its weights are
    :math:`1/T` at every step. It offers what the lab's loop uses of an
    ensemble: ``size``, ``hidden_size``, ``params``, :meth:`loss_and_grads`,
    :meth:`predict` and :meth:`select`; :meth:`weights` gives the
    :math:`\alpha_t`.

    >>> from rnnmem.tasks import recall
    >>> task = recall(lag=3)
    >>> model = AttentionEnsemble(lab.make_ensemble(task, "lstm", seeds=[0, 1], hidden=4), "attention")
    >>> model.params["query"].shape, model.predict(task.sample(5).inputs).shape
    ((2, 4), (2, 5, 8))
    >>> model.weights(task.sample(5).inputs)[0, 0].tolist()           # zero query: 1/T each
    [0.2, 0.2, 0.2, 0.2, 0.2]
    """

    model = "lstm"

    def __init__(self, ensemble: Ensemble, arm: str) -> None:
        if not isinstance(ensemble, Ensemble) or ensemble.model != "lstm":
            raise ValueError(f"ensemble must be an LSTM Ensemble, got {ensemble!r}")
        arm = _check_arm(arm)
        if arm == "last":
            raise ValueError("arm must be 'attention' or 'uniform' (the 'last' arm is the Ensemble itself), got 'last'")
        self.arm = arm
        E, H = ensemble.size, ensemble.hidden_size
        inner = ensemble._flat.shape[1]
        flat = np.zeros((E, inner + (H if arm == "attention" else 0)), dtype=ensemble.dtype)
        flat[:, :inner] = ensemble._flat
        self._adopt(ensemble, flat)

    def _adopt(self, ensemble: Ensemble, flat: np.ndarray) -> None:
        """Make ``flat`` hold every parameter: the ensemble's arrays become views into its first columns."""
        inner = ensemble._flat.shape[1]
        ensemble._flat = flat[:, :inner]
        ensemble._bind()
        self.ensemble, self._flat = ensemble, flat
        self.params = dict(ensemble.params)
        if self.arm == "attention":
            self.params["query"] = flat[:, inner:]

    @property
    def size(self) -> int:
        """The number of members, :math:`E`."""
        return self.ensemble.size

    @property
    def hidden_size(self) -> int:
        """:math:`H`."""
        return self.ensemble.hidden_size

    @property
    def seeds(self) -> tuple:
        """One seed per member."""
        return self.ensemble.seeds

    @property
    def dtype(self) -> np.dtype:
        """The arithmetic."""
        return self.ensemble.dtype

    def __repr__(self) -> str:
        return f"AttentionEnsemble({self.ensemble!r}, arm={self.arm!r})"

    def select(self, members: Any) -> AttentionEnsemble:
        """A new model of the given members, in the given order, with copies of their parameters.

        >>> from rnnmem.tasks import recall
        >>> model = AttentionEnsemble(lab.make_ensemble(recall(lag=3), "lstm", seeds=[4, 5], hidden=4), "uniform")
        >>> model.select([1]).seeds
        (5,)
        """
        inner = self.ensemble.select(members)  # checks the members
        rows = [int(e) for e in members]
        new = object.__new__(AttentionEnsemble)
        new.arm = self.arm
        new._adopt(inner, self._flat[rows])
        return new

    def _query(self) -> np.ndarray:
        """(H, E): each member's query as a column (zeros for the uniform arm)."""
        if self.arm == "attention":
            return self.params["query"].T
        return np.zeros((self.hidden_size, self.size), dtype=self.dtype)

    def _attend(self, x: Any, keep: bool = True) -> tuple:
        """The forward pass: every state (T, H, E, B), the weights (T, E, B) and the context (H, E, B)."""
        ens = self.ensemble
        ens._forward(x)
        cache = ens._cache
        states = cache["rows"][1 : cache["T"] + 1, : self.hidden_size]
        if self.arm == "attention":
            scores = np.einsum("theb,he->teb", states, self._query())
            weights = np.exp(scores - scores.max(axis=0))  # the softmax of rnnmem.attention.attention_weights,
            weights /= weights.sum(axis=0)  # without its checks: a diverging member's NaN is the lab's to catch
        else:
            weights = np.full(states.shape[:1] + states.shape[2:], 1.0 / states.shape[0], dtype=self.dtype)
        context = np.einsum("teb,theb->heb", weights, states)
        if not keep:
            ens._cache = None
        return states, weights, context

    def weights(self, x: Any) -> np.ndarray:
        r"""The weights :math:`\alpha_t` each member gives each step of ``x``: ``(E, B, T)``.

        ``x`` is what :meth:`predict` takes.
        """
        with np.errstate(over="ignore", invalid="ignore"):
            _, w, _ = self._attend(x, keep=False)
        return w.transpose(1, 2, 0).copy()

    def predict(self, x: Any) -> np.ndarray:
        """The readout of every member on ``x``: ``(E, B, O)``, as :meth:`rnnmem.ensemble.Ensemble.predict`.

        ``x`` is ``(T, B, D)``, ``(T, E, B, D)`` or a :class:`~rnnmem.ensemble.OneHot`.
        """
        with np.errstate(over="ignore", invalid="ignore"):
            _, _, context = self._attend(x, keep=False)
            return self.ensemble._readout(context).transpose(0, 2, 1)

    def loss_and_grads(
        self,
        x: Any,
        targets: Any,
        kind: str,
        *,
        step_norms: bool = False,
        carry_masks: Any = None,
        hidden_masks: Any = None,
    ) -> tuple:
        r"""Each member's loss on its batch and the gradients of every parameter array, as the ensemble's.

        The loss is the lab's (softmax cross-entropy, or squared error, on
        :math:`W_y \bar h + b_y`); the gradients are exact: the readout's,
        then the states' and the query's by the equations of
        :func:`rnnmem.attention.attend_backward` (every member and sequence
        at once), then the ensemble's backward pass with the states' gradients
        entering at every step. With ``step_norms=True`` the
        gradients also hold ``"step_norms"`` ``(E, T)``, the mean over the
        batch of each sequence's :math:`\|\delta_t\|`, and ``"readout_norms"``
        ``(E,)``, the same of :math:`\|\partial\mathcal{L}/\partial\bar h\|`.
        No dropout: ``carry_masks`` and ``hidden_masks`` must be ``None``.

        >>> from rnnmem.tasks import recall
        >>> task = recall(lag=3)
        >>> model = AttentionEnsemble(lab.make_ensemble(task, "lstm", seeds=[0], hidden=4), "attention")
        >>> b = task.sample(8)
        >>> losses, grads = model.loss_and_grads(b.inputs, b.targets, "classification")
        >>> losses.shape, grads["query"].shape
        ((1,), (1, 4))
        """
        kind = check_choice("kind", kind, ("classification", "regression"))
        if carry_masks is not None or hidden_masks is not None:
            raise ValueError("an AttentionEnsemble trains without dropout: carry_masks and hidden_masks must be None")
        E = self.size
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            states, w, context = self._attend(x)
            B = states.shape[3]
            y = check_targets(targets, kind, E, B, self.ensemble.output_size, self.dtype)
            out = self.ensemble._readout(context)  # (E, O, B)
            if kind == "classification":
                shifted = out - out.max(axis=1, keepdims=True)
                log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
                losses = -np.take_along_axis(log_p, y[:, None, :], axis=1)[:, 0].mean(axis=1)
                d_out = np.exp(log_p)  # softmax - onehot, over B
                np.put_along_axis(d_out, y[:, None, :], np.take_along_axis(d_out, y[:, None, :], axis=1) - 1.0, axis=1)
                d_out /= B
            else:
                err = out[:, 0] - y
                losses = (err * err).mean(axis=1)
                d_out = (2.0 / B) * err[:, None, :]
            V = self.params["readout_weight"]
            d_context = np.matmul(V.transpose(0, 2, 1), d_out).transpose(1, 0, 2)  # g = W_y^T d_out, (H, E, B)
            d_alpha = np.einsum("theb,heb->teb", states, d_context)  # g . h_t
            d_scores = w * (d_alpha - (w * d_alpha).sum(axis=0))  # alpha_t g . (h_t - h_bar)
            d_states = self.ensemble._buffer("attention_d_states", states.shape)
            np.multiply(w[:, None], d_context[None], out=d_states)  # alpha_t g
            if self.arm == "attention":
                d_states += d_scores[:, None] * self._query()[None, :, :, None]  # + (dL/de_t) q
            dh = np.zeros(d_context.shape, dtype=self.dtype)  # nothing enters at the last state but d_states[-1]
            grads = self.ensemble._backward(dh, step_norms, d_states)
            grads.pop("cell_step_norms", None)
            grads["readout_weight"] = np.matmul(d_out, context.transpose(1, 2, 0))
            grads["readout_bias"] = d_out.sum(axis=2)
            if self.arm == "attention":
                grads["query"] = np.einsum("teb,theb->eh", d_scores, states)
        if step_norms:
            grads["readout_norms"] = _sequence_norms(d_context)
        return losses, grads


def make_model(
    task: Task, arm: str, seeds: Any, *, hidden: int = 16, dtype: Any = np.float64, model: str = MODEL
) -> Any:
    """The untrained model of an arm: the lab's LSTM (:func:`rnnmem.lab.make_ensemble`), read out by ``arm``.

    ``model`` is an LSTM spec of the lab (:data:`rnnmem.experiments.MODEL_SPECS`),
    chrono by default (:data:`MODEL`). Every arm starts from the same weights
    for the same seed: the ``"last"`` arm is the ensemble itself, the others
    an :class:`AttentionEnsemble` around it (whose query starts at zero).

    >>> from rnnmem.tasks import recall
    >>> a, b = (make_model(recall(lag=3), arm, [0], hidden=4) for arm in ("last", "attention"))
    >>> bool(np.array_equal(a.params["weight_hh_l0"], b.params["weight_hh_l0"]))
    True
    """
    arm = _check_arm(arm)
    spec = by_design.Spec.parse(model, "model")
    if spec.cell != "lstm":
        raise ValueError(f"model must be an LSTM of the lab ('lstm', 'lstm:B', 'lstm:chrono', ...), got {model!r}")
    options = spec.options()
    ens = lab.make_ensemble(task, options.pop("model"), seeds, hidden=hidden, dtype=dtype, **options)
    return ens if arm == "last" else AttentionEnsemble(ens, arm)


def train(task: Task, arm: str, *, seeds: Any = (0,), design: Design = DESIGN, dtype: Any = np.float64) -> RunResult:
    r"""Train one member per seed of the ``arm`` on ``task`` with the lab's trainer, :func:`rnnmem.lab.train`.

    The arm's model (:func:`make_model`, ``design.hidden`` units) goes to the
    lab's trainer with the ``design``'s :class:`rnnmem.lab.Schedule`, members
    retiring at their first success (or at once if they diverge) and
    training stopping when none is left (``retire=True, stop_when_done=True``).
    The attention readouts keep every step's values in their forward pass,
    and are scored in larger chunks (of a size set by the task and the model,
    never by the members). On the ``"last"`` arm it is :func:`rnnmem.lab.train`
    on the lab's own LSTM.

    >>> from rnnmem.tasks import recall
    >>> result = train(recall(lag=2, alphabet=4), "attention", seeds=[0, 1], design=Design(hidden=8, steps=50))
    >>> result.scores.shape[0], result.params["query"].shape
    (2, (2, 8))
    """
    if not isinstance(task, Task):
        raise ValueError(f"task must be a Task (from rnnmem.tasks), got {type(task).__name__}")
    arm = _check_arm(arm)
    if not isinstance(design, Design):
        raise ValueError(f"design must be a Design, got {design!r}")
    model = make_model(task, arm, seeds, hidden=design.hidden, dtype=dtype)
    chunk = None if arm == "last" else max(1, min(design.eval_size, 2**19 // (task.length * 4 * design.hidden)))
    return RunResult.of(lab.train(task, model, design.schedule(retire=True, stop_when_done=True, eval_chunk=chunk)))


@dataclass(frozen=True)
class AttentionRun:
    """One arm, one seed per member, trained on recall at ``lag`` with the ``design`` (:func:`train`).

    A pure value: everything the run depends on, so that it can key a cache;
    :meth:`execute` trains it and returns the lab's :class:`rnnmem.experiments.RunResult`.

    >>> run = AttentionRun("attention", lag=2, seeds=(0, 1), design=Design(hidden=8, steps=20))
    >>> result = run.execute()
    >>> result.scores.shape[0], len(result.success_step)
    (2, 2)
    """

    arm: str
    lag: int
    seeds: tuple[int, ...] = SEEDS
    design: Design = DESIGN
    dtype: str = PRECISION

    def __post_init__(self) -> None:
        _check_arm(self.arm)
        object.__setattr__(self, "lag", check_positive_int("lag", self.lag))
        if isinstance(self.seeds, range):
            object.__setattr__(self, "seeds", tuple(self.seeds))
        if not isinstance(self.seeds, tuple) or not self.seeds:
            raise ValueError(f"seeds must be a non-empty tuple of whole numbers >= 0, got {self.seeds!r}")
        if not isinstance(self.design, Design):
            raise ValueError(f"design must be a Design, got {self.design!r}")
        check_choice("dtype", self.dtype, ("float32", "float64"))

    @property
    def cost(self) -> float:
        """A relative cost, to train the costliest runs first: steps times members times updates (attention a little more)."""
        per_step = 4 if self.arm == "last" else 5
        return per_step * (self.lag + 2) * len(self.seeds) * self.design.steps

    def execute(self) -> RunResult:
        """Train the run; a pure function of the run."""
        task = tasks.make_task(TASK, self.lag, experiments.ALPHABET)
        return train(task, self.arm, seeds=list(self.seeds), design=self.design, dtype=np.dtype(self.dtype))


def _models(arm: str, lag: int, seeds: Any, hidden: int, params: dict | None, model: str = MODEL, group: int = 4):
    """The task, and the models of ``seeds`` a few members at a time (float64; members never mix), with ``params``."""
    task = tasks.make_task(TASK, check_positive_int("lag", lag), experiments.ALPHABET)
    seeds = list(seeds)
    hidden = check_positive_int("hidden", hidden)
    models = []
    for start in range(0, len(seeds), group):
        part = make_model(task, arm, seeds[start : start + group], hidden=hidden, model=model)
        if params is not None:
            for name, value in params.items():
                part.params[name][...] = value[start : start + group]
        models.append(part)
    return task, models


def clue_share(
    arm: str,
    lag: int,
    seeds: Any,
    hidden: int,
    *,
    params: dict | None = None,
    sequences: int = REACH_SEQUENCES,
    model: str = MODEL,
) -> float:
    r"""The share of the readout's gradient that reaches the clue's step: :math:`\|\delta_1\| / \|\partial\mathcal{L}/\partial x\|`, median over seeds.

    :math:`x` is what the readout reads (:math:`h_T`, or the context
    :math:`\bar h`) and :math:`\delta_1` the total derivative at step 1, where
    the token to recall is read; each norm is the mean over ``sequences``
    sequences of recall (drawn with seed 1) of one sequence's norm. The
    models are drawn as :func:`make_model` draws them (the LSTM ``model``,
    chrono by default), in float64, or carry ``params`` (trained ones,
    :attr:`rnnmem.experiments.RunResult.params`). The ``"attention"`` and ``"uniform"`` arms coincide at initialization,
    where the query is zero.

    >>> share = clue_share("attention", lag=8, seeds=[0, 1], hidden=8, sequences=16)
    >>> round(share * 10, 1)                      # about alpha_1 = 1/T, T = 10
    1.0
    """
    arm = _check_arm(arm)
    task, models = _models(arm, lag, seeds, hidden, params, model)
    b = task.sample(check_positive_int("sequences", sequences), seed=1)
    shares = []
    for part in models:
        _, grads = part.loss_and_grads(b.inputs, b.targets, task.kind, step_norms=True)
        norms = grads["step_norms"]
        readout = norms[:, -1] if arm == "last" else grads["readout_norms"]
        shares.append(norms[:, 0] / readout)
    return float(np.median(np.concatenate(shares)))


class Profile(NamedTuple):
    """Where each member of a trained attention readout looks (:func:`attention_profile`)."""

    weights: np.ndarray
    r"""``(E, T)``: the mean over the sequences of each step's weight :math:`\alpha_t`."""
    effective: np.ndarray
    r"""``(E,)``: the mean over the sequences of :math:`\exp(-\sum_t \alpha_t \ln \alpha_t)`, the number of
    steps the weights are spread over (:math:`T` for uniform weights, 1 for one step)."""


def attention_profile(lag: int, seeds: Any, hidden: int, params: dict, *, sequences: int = 256) -> Profile:
    r"""Where a trained attention readout looks on held-out recall at ``lag``: its mean weights and their spread.

    The first ``sequences`` sequences of the set :func:`train` scores on
    (``default_rng((0, 2))``), in float64, with the members' ``params``
    (those of an ``"attention"`` run). Step 1 holds the token to recall;
    a query that never moved gives :math:`\alpha_t = 1/T` and a spread of
    :math:`T`.

    >>> p = attention_profile(3, [0], 4, {"query": np.zeros((1, 4))}, sequences=8)
    >>> p.weights.round(3).tolist(), p.effective.round(3).tolist()
    ([[0.2, 0.2, 0.2, 0.2, 0.2]], [5.0])
    """
    task, models = _models("attention", lag, seeds, hidden, params)
    held_out = task.sample(check_positive_int("sequences", sequences), seed=np.random.default_rng((0, 2)))
    weights, effective = [], []
    for part in models:
        w = part.weights(held_out.inputs)  # (E, B, T)
        weights.append(w.mean(axis=1))
        log_w = np.log(np.where(w > 0, w, 1.0))  # 0 ln 0 = 0
        effective.append(np.exp(-(w * log_w).sum(axis=2)).mean(axis=1))
    return Profile(np.concatenate(weights), np.concatenate(effective))


def token_memory(
    arm: str, lag: int, seeds: Any, hidden: int, params: dict, *, groups: int = MEMORY_GROUPS
) -> np.ndarray:
    r"""What the trained recurrent layer of an arm keeps of the token: :math:`M_t` per member, ``(E, T)``.

    :math:`M_t = \sqrt{S_t / S_1}` of "Memory, measured" (eq.
    inside-memory, :func:`rnnmem.inside.token_memory`): the spread of the
    hidden states :math:`h_t` over the versions of a sequence that differ
    only in the token, relative to the spread just after the token was read.
    The sequences are ``groups`` recall sequences at ``lag`` drawn with
    ``default_rng(MEMORY_SEED)``, each in one version per token
    (:func:`rnnmem.inside.token_variants`); the members carry ``params``
    (those of a run of ``arm``, :attr:`rnnmem.experiments.RunResult.params`)
    and compute in float64. Only the LSTM's states are measured: the
    readout, whichever it is, reads them. Entry ``[e, 0]`` is 1 and entry
    ``[e, T - 1]`` is :math:`M_T`, at the query.

    >>> start = make_model(tasks.recall(lag=4), "last", [0], hidden=4).params
    >>> kept = token_memory("last", 4, [0], 4, start, groups=2)
    >>> kept.shape, float(kept[0, 0]), bool(0 < kept[0, -1] < 1)
    ((1, 6), 1.0, True)
    """
    arm = _check_arm(arm)
    task, models = _models(arm, lag, seeds, hidden, params)
    n = check_positive_int("groups", groups)
    batch = inside.token_variants(task, n, seed=np.random.default_rng(MEMORY_SEED))
    parts = [part if arm == "last" else part.ensemble for part in models]
    return np.concatenate([inside.token_memory(part, batch.inputs, task.alphabet) for part in parts])

r"""Memory inside one sequence: where the gradient from the query lands, and what the state keeps of a token.

The lab (:mod:`rnnmem.lab`) counts which models learn recall; this module
looks inside the sequences of recall (:func:`rnnmem.tasks.recall`: a token
:math:`a_0`, ``lag`` distractors, a query; the target is :math:`a_0`) at two
things, for every member of an :class:`~rnnmem.ensemble.Ensemble`, trained or
not. Steps are numbered :math:`s = 1, \dots, T` (the token is read at step 1,
the query at step :math:`T`), and :math:`\ell_n` is sequence :math:`n`'s own
loss, read at the query, :math:`\ell_n = -\log \operatorname{softmax}(V h_T +
c)_{y_n}` (or :math:`(\hat y_n - y_n)^2` for regression), not divided by the
number of sequences.

* **Where the gradient lands** (:func:`input_gradient_norms`,
  :func:`gradient_landing`): the norm of the gradient of the loss with respect
  to the *input* at each step, :math:`\|\partial \ell_n / \partial x_{n,s}\|`,
  by exact backpropagation through time (the models' own ``backward``). At
  step :math:`s` it is :math:`W_{ih}^\top \delta_s`, with :math:`\delta_s`
  the gradient of the pre-activations of step :math:`s` (all gate blocks), so
  it is the signal that step :math:`s`'s input weights receive. The landing
  share is its mean over the sequences, relative to the query step,

  .. math::

      g_s = \frac{\tfrac1N \sum_n \|\partial \ell_n / \partial x_{n,s}\|}
                 {\tfrac1N \sum_n \|\partial \ell_n / \partial x_{n,T}\|},
      \qquad g_T = 1,

  so :math:`g_1` is how much of what the query sends back reaches the token
  itself. (:func:`rnnmem.lab.gradient_by_step` measures the hidden state's
  :math:`\|\partial \ell / \partial h_s\|` instead; for the tanh RNN,
  :math:`\partial \ell / \partial x_s = W_{ih}^\top \operatorname{diag}(1 -
  h_s^2)\, \partial \ell / \partial h_s` and :math:`\partial \ell / \partial
  h_{s-1} = W_{hh}^\top \operatorname{diag}(1 - h_s^2)\, \partial \ell /
  \partial h_s`, so the two coincide, one step apart, when :math:`W_{ih} =
  W_{hh}`.)

* **What the state keeps of a token** (:func:`token_memory`): sequences come
  in groups of :math:`K` (:func:`token_variants`) that are identical except
  for the token at one step :math:`p` (recall's first token, :math:`p = 1`),
  one sequence per token of the alphabet. The spread of the hidden states of a
  group at step :math:`t` is :math:`S_t = \sum_g \sum_a \|h^{g,a}_t - \bar
  h^g_t\|^2` (summed over the groups :math:`g` and the tokens :math:`a`,
  :math:`\bar h^g_t` the group's mean state), and the memory of the token is
  the root of its share of the spread just after the token was read,

  .. math::  M_t = \sqrt{S_t / S_p}, \qquad M_t = 0 \text{ for } t < p, \quad M_p = 1.

  Why this measure. Within a group only the token differs, so every
  difference between the states is the token's doing: :math:`M_t = 0` exactly
  when the states of the :math:`K` tokens coincide, and then nothing at all
  of the token is left for any readout to find. Before step :math:`p` the
  sequences are the same, and their states are computed once per group and
  shared, so their spread is zero by construction. The square root makes
  :math:`M_t` a ratio of distances, as :math:`g_s` is a ratio of norms: the
  forward counterpart of the backward share. It costs one forward pass of
  :math:`G K` sequences and fits nothing (a linear read-out's accuracy would
  need a training set and a held-out set at every step and checkpoint, and
  would be noisy at a few dozen sequences). What it does not say: a spread
  larger than zero can still be too small, or too tangled with what the
  distractors write, for the readout to separate the tokens; the held-out
  accuracy says that. Only the hidden state :math:`h_t` is measured (the
  LSTM's cell :math:`c_t` is not): it is what the recurrence passes on and
  what the readout reads at the query. :math:`M_t` may exceed 1 where a model
  amplifies the token's imprint.

* **Watching it form** (:class:`InsideRun`): one model of the lab trained on
  recall with a checkpoint of every member at every evaluation (the
  ``on_evaluation`` hook of :func:`rnnmem.lab.train`), one member chosen by
  :func:`shown_member`, and both measures at every checkpoint.

Bad arguments raise :class:`ValueError` naming the argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import cells, lab, tasks
from .checks import check_choice, check_dtype, check_nonnegative_int, check_positive_int
from .ensemble import KINDS, Ensemble
from .experiments import ALPHABET, DESIGN, Design, ModelSpec

__all__ = [
    "token_variants",
    "input_gradient_norms",
    "gradient_landing",
    "token_memory",
    "shown_member",
    "InsideResult",
    "InsideRun",
]


def token_variants(task: tasks.Task, n: int, seed: Any = 0) -> tasks.Batch:
    r"""``n`` recall sequences, each in :math:`K` versions that differ only in the first token.

    The ``n`` base sequences are ``task.sample(n, seed)``; version :math:`a`
    of base :math:`g` has token :math:`a` at step 1 and is sequence
    :math:`g K + a` of the batch (groups of :math:`K` consecutive sequences,
    as :func:`token_memory` reads them). The target of each is its token.
    Inputs ``(T, n K, D)``, targets ``(n K,)``.

    >>> task = tasks.recall(lag=3, alphabet=4)
    >>> batch = token_variants(task, 2, seed=0)
    >>> batch.inputs.shape, batch.targets.tolist()
    ((5, 8, 6), [0, 1, 2, 3, 0, 1, 2, 3])
    >>> tokens = batch.inputs.argmax(axis=2).T            # one row per sequence
    >>> tokens[:4, 0].tolist(), bool((tokens[:4, 1:] == tokens[0, 1:]).all())
    ([0, 1, 2, 3], True)
    """
    if not isinstance(task, tasks.Task) or task.name not in ("recall", "blank-recall"):
        got = task.name if isinstance(task, tasks.Task) else type(task).__name__
        raise ValueError(f"task must be a recall task (rnnmem.tasks.recall), got {got!r}")
    n = check_positive_int("n", n)
    base = task.sample(n, seed=seed)
    T, _, D = base.inputs.shape
    K = task.alphabet
    inputs = np.repeat(base.inputs[:, :, None, :], K, axis=2)  # (T, n, K, D)
    inputs[0] = 0.0
    inputs[0, :, np.arange(K), np.arange(K)] = 1.0  # version a reads token a first
    return tasks.Batch(inputs.reshape(T, n * K, D), np.tile(np.arange(K, dtype=np.int64), n))


def _check_ensemble(ensemble: Any) -> Ensemble:
    if not isinstance(ensemble, Ensemble):
        raise ValueError(f"ensemble must be an Ensemble (rnnmem.ensemble), got {type(ensemble).__name__}")
    return ensemble


def _check_inputs(ensemble: Ensemble, inputs: Any) -> np.ndarray:
    x = np.asarray(inputs)
    if x.ndim != 3 or x.shape[0] < 1 or x.shape[1] < 1 or x.shape[2] != ensemble.input_size:
        raise ValueError(
            f"inputs must have shape (T, N, {ensemble.input_size}), time first, with T >= 1 and N >= 1, "
            f"got shape {x.shape}"
        )
    return x


def input_gradient_norms(ensemble: Ensemble, inputs: Any, targets: Any, kind: str = "classification") -> np.ndarray:
    r"""Each sequence's :math:`\|\partial \ell_n / \partial x_{n,s}\|` at every step: ``(E, N, T)``.

    :math:`\ell_n` is sequence :math:`n`'s own loss at the last step (see the
    module; softmax cross-entropy for ``kind="classification"``, squared
    error for ``"regression"``), entry ``[e, n, s - 1]`` member ``e``'s
    gradient norm at step :math:`s`, computed in the ensemble's dtype by the
    member's exact backward pass (:meth:`rnnmem.ensemble.Ensemble.member`).

    >>> from rnnmem import lab
    >>> task = tasks.recall(lag=4, alphabet=4)
    >>> batch = task.sample(3, seed=0)
    >>> ens = lab.make_ensemble(task, "lstm", seeds=[0, 1], hidden=8)
    >>> norms = input_gradient_norms(ens, *batch)
    >>> norms.shape, bool((norms[:, :, 0] < norms[:, :, -1]).all())
    ((2, 3, 6), True)
    """
    ensemble = _check_ensemble(ensemble)
    kind = check_choice("kind", kind, KINDS)
    x = _check_inputs(ensemble, inputs)
    T, N = x.shape[:2]
    y = np.asarray(targets)
    if y.shape != (N,):
        raise ValueError(f"targets must have shape ({N},), one per sequence, got shape {y.shape}")
    if kind == "classification" and (y.dtype.kind not in "iu" or y.min() < 0 or y.max() >= ensemble.output_size):
        raise ValueError(f"targets must be class indices from 0 to {ensemble.output_size - 1}, got {y.tolist()}")
    if kind == "regression" and ensemble.output_size != 1:
        raise ValueError(f"kind='regression' reads one number: output_size must be 1, got {ensemble.output_size}")
    norms = np.empty((ensemble.size, N, T))
    for e in range(ensemble.size):
        model = ensemble.member(e)
        outputs, _ = model.forward(x)
        V, c = ensemble.params["readout_weight"][e], ensemble.params["readout_bias"][e]
        out = outputs[-1] @ V.T + c  # (N, O)
        if kind == "classification":
            d_out = np.exp(out - out.max(axis=1, keepdims=True))
            d_out /= d_out.sum(axis=1, keepdims=True)
            d_out[np.arange(N), y] -= 1.0  # softmax - one-hot: each sequence's own loss
        else:
            d_out = 2.0 * (out - y[:, None])
        d_outputs = np.zeros_like(outputs)
        d_outputs[-1] = d_out @ V
        d_x = model.backward(d_outputs)["x"]  # (T, N, D)
        norms[e] = np.sqrt((d_x.astype(np.float64) ** 2).sum(axis=2)).T
    return norms


def gradient_landing(ensemble: Ensemble, inputs: Any, targets: Any, kind: str = "classification") -> np.ndarray:
    r"""The landing share :math:`g_s`, the mean input-gradient norm at step :math:`s` over that at the query: ``(E, T)``.

    :math:`g_s = \sum_n \|\partial \ell_n/\partial x_{n,s}\| / \sum_n
    \|\partial \ell_n/\partial x_{n,T}\|` (:func:`input_gradient_norms`), so
    the last entry is 1 and the first is the share that lands on the token.

    >>> from rnnmem import lab
    >>> task = tasks.recall(lag=20)
    >>> batch = token_variants(task, 4, seed=0)
    >>> share = gradient_landing(lab.make_ensemble(task, "rnn", [0], hidden=16), *batch)
    >>> share.shape, float(share[0, -1]), bool(share[0, 0] < 1e-3)
    ((1, 22), 1.0, True)
    """
    norms = input_gradient_norms(ensemble, inputs, targets, kind)
    total = norms.sum(axis=1)  # (E, T)
    return total / total[:, -1:]


def token_memory(ensemble: Ensemble, inputs: Any, tokens: int, position: int = 1) -> np.ndarray:
    r"""The memory :math:`M_t = \sqrt{S_t / S_p}` of the token read at step :math:`p` = ``position``: ``(E, T)``.

    ``inputs`` ``(T, G K, D)`` holds :math:`G` groups of :math:`K` =
    ``tokens`` consecutive sequences, the sequences of a group identical at
    every step but :math:`p` (:func:`token_variants` makes them for recall's
    first token; anything else raises :class:`ValueError`). Entry ``[e, t -
    1]`` is member ``e``'s :math:`M_t` (see the module for the definition and
    why): 0 before step :math:`p` (the states there are computed once per
    group, so they cannot differ), 1 at :math:`p`, NaN everywhere if every
    token leaves the same state at :math:`p` (:math:`S_p = 0`).

    >>> from rnnmem import lab
    >>> task = tasks.recall(lag=20)
    >>> batch = token_variants(task, 4, seed=0)
    >>> kept = token_memory(lab.make_ensemble(task, "rnn", [0], hidden=16), batch.inputs, task.alphabet)
    >>> kept.shape, float(kept[0, 0]), bool(kept[0, -1] < 1e-3)
    ((1, 22), 1.0, True)
    """
    ensemble = _check_ensemble(ensemble)
    x = _check_inputs(ensemble, inputs)
    T, N, D = x.shape
    K = check_positive_int("tokens", tokens)
    if K < 2 or N % K:
        raise ValueError(
            f"tokens must be a whole number >= 2 that divides the {N} sequences into groups, got {tokens!r}"
        )
    p = check_positive_int("position", position)
    if p > T:
        raise ValueError(f"position must be a step from 1 to {T}, got {position!r}")
    G = N // K
    grouped = x.reshape(T, G, K, D)
    others = np.delete(grouped, p - 1, axis=0)
    if not (others == others[:, :, :1]).all():
        raise ValueError(
            f"inputs must come in groups of {K} sequences that differ only at step {p} (position), "
            "as rnnmem.inside.token_variants makes them; some group differs elsewhere"
        )
    memory = np.zeros((ensemble.size, T))
    for e in range(ensemble.size):
        model = ensemble.member(e)
        state = None
        if p > 1:  # the shared prefix: one run per group, its final state handed to each of its K sequences
            _, prefix_state = model.forward(grouped[: p - 1, :, 0])
            parts = prefix_state if isinstance(prefix_state, tuple) else (prefix_state,)
            repeated = tuple(np.repeat(s, K, axis=0) for s in parts)
            state = repeated if isinstance(prefix_state, tuple) else repeated[0]
        outputs, _ = model.forward(x[p - 1 :], state)  # (T - p + 1, G K, H)
        h = outputs.astype(np.float64).reshape(T - p + 1, G, K, -1)
        spread = ((h - h.mean(axis=2, keepdims=True)) ** 2).sum(axis=(1, 2, 3))
        if spread[0] > 0:
            memory[e, p - 1 :] = np.sqrt(spread / spread[0])
        else:  # every token leaves the same state: there is no imprint to keep
            memory[e] = np.nan
    return memory


def shown_member(succeeded: Any) -> int:
    """The member to show of an ensemble trained with seeds in increasing order: the first that succeeded, else 0.

    The rule is part of the design, stated here rather than chosen from the
    measurements: among the seeds trained (in increasing order), the lowest
    that succeeds within the budget, so that a model that can learn within it
    is shown learning; if none succeeds, the lowest seed. ``succeeded`` is one boolean per member
    (:attr:`rnnmem.lab.LabResult.succeeded`).

    >>> shown_member([False, True, True]), shown_member([False, False])
    (1, 0)
    """
    flags = [bool(s) for s in succeeded]
    if not flags:
        raise ValueError("succeeded must hold one boolean per member, got none")
    return flags.index(True) if any(flags) else 0


@dataclass(frozen=True)
class InsideResult:
    """One model watched over training: the member shown, its held-out accuracy and both measures per checkpoint.

    Axis 0 of ``scores``, ``memory`` and ``landing`` is the checkpoint (the
    evaluations of :func:`rnnmem.lab.train`, ``eval_steps``); axis 1 of
    ``memory`` and ``landing`` is the step :math:`t = 1, \\dots, T`.
    """

    model: str
    """The model spec (:class:`rnnmem.experiments.ModelSpec`'s text), e.g. ``"lstm:chrono"``."""
    seeds: tuple
    """The seeds trained, in increasing order."""
    seed: int
    """The seed shown (:func:`shown_member`)."""
    succeeded: bool
    """Whether the seed shown reached the threshold (then some seed did; else none did)."""
    success_step: int | None
    """The first evaluation at which the seed shown succeeded, or ``None``."""
    eval_steps: np.ndarray
    """``(C,)``: updates done at each checkpoint."""
    scores: np.ndarray
    """``(C,)``: the seed shown's held-out accuracy at each checkpoint."""
    memory: np.ndarray
    """``(C, T)``: :func:`token_memory` of the first token at each checkpoint."""
    landing: np.ndarray
    """``(C, T)``: :func:`gradient_landing` at each checkpoint."""


@dataclass(frozen=True)
class InsideRun:
    r"""One lab model on recall at ``lag``, watched: trained, checkpointed at every evaluation and measured.

    ``model`` is a spec (``"rnn"``, ``"lstm:0"``, ``"lstm:chrono"``, ...),
    ``seeds`` the members trained together, in increasing order, with the
    ``design`` (:class:`rnnmem.experiments.Design`: 16 units, batches of 32,
    Adam 0.01, clipping at 1, an evaluation every 25 updates on 256 held-out
    sequences) over the whole budget, in ``dtype`` (the lab's float32 is
    about twice as fast as float64). :meth:`execute` then chooses the member
    to show (:func:`shown_member`) and measures it at every checkpoint, in
    float64, on ``sequences`` base sequences drawn with ``seed``, each in its
    :math:`K` versions (:func:`token_variants`): :func:`token_memory` of the
    first token and :func:`gradient_landing`.

    >>> run = InsideRun("lstm:chrono", lag=3, seeds=(0, 1), design=Design(steps=50), sequences=2)
    >>> result = run.execute()
    >>> result.eval_steps.tolist(), result.memory.shape, result.landing.shape
    ([0, 25, 50], (3, 5), (3, 5))
    >>> result.seed in run.seeds, result.succeeded == (result.success_step is not None)
    (True, True)
    """

    model: str
    lag: int
    seeds: tuple[int, ...]
    design: Design = DESIGN
    alphabet: int = ALPHABET
    dtype: str = "float32"
    sequences: int = 4
    seed: int = 0

    def __post_init__(self) -> None:
        spec = ModelSpec.parse(self.model, "model")
        object.__setattr__(self, "model", str(spec))
        object.__setattr__(self, "lag", check_positive_int("lag", self.lag))
        if isinstance(self.seeds, range):
            object.__setattr__(self, "seeds", tuple(self.seeds))
        if not isinstance(self.seeds, (list, tuple)) or not self.seeds:
            raise ValueError(f"seeds must be a non-empty list of whole numbers >= 0, got {self.seeds!r}")
        seeds = tuple(check_nonnegative_int(f"seeds[{k}]", s) for k, s in enumerate(self.seeds))
        if list(seeds) != sorted(set(seeds)):
            raise ValueError(f"seeds must be distinct and in increasing order (the lowest is shown first), got {seeds}")
        object.__setattr__(self, "seeds", seeds)
        if not isinstance(self.design, Design):
            raise ValueError(f"design must be a Design (rnnmem.experiments), got {self.design!r}")
        object.__setattr__(self, "alphabet", check_positive_int("alphabet", self.alphabet))
        object.__setattr__(self, "dtype", check_dtype("dtype", self.dtype).name)
        object.__setattr__(self, "sequences", check_positive_int("sequences", self.sequences))
        object.__setattr__(self, "seed", check_nonnegative_int("seed", self.seed))

    @property
    def cost(self) -> float:
        """A relative cost, to train the costliest runs first: gates times steps per sequence times members times updates."""
        cell = ModelSpec.parse(self.model).cell
        return cells.GATES[cell] * (self.lag + 2) * len(self.seeds) * self.design.steps

    def execute(self) -> InsideResult:
        """Train, choose the member shown, measure it at every checkpoint; a pure function of the run."""
        spec = ModelSpec.parse(self.model)
        task = tasks.recall(self.lag, self.alphabet)
        checkpoints: list[tuple[int, dict]] = []

        def keep(done: int, ens: lab.AnyEnsemble) -> None:
            checkpoints.append((done, {name: p.copy() for name, p in ens.params.items()}))

        model = lab.Model(
            spec.cell,
            seeds=list(self.seeds),
            hidden=self.design.hidden,
            forget_bias=spec.forget_bias,
            init=spec.init,
            dtype=np.dtype(self.dtype),
        )
        result = lab.train(task, model, self.design.schedule(), on_evaluation=keep)
        k = shown_member(result.succeeded)
        batch = token_variants(task, self.sequences, seed=self.seed)
        probe = lab.make_ensemble(
            task,
            spec.cell,
            [self.seeds[k]],
            hidden=self.design.hidden,
            forget_bias=spec.forget_bias,
            init=spec.init,
            dtype=np.float64,
        )
        assert isinstance(probe, Ensemble)  # a gated cell of the lab (ModelSpec names no other)
        memory, landing = [], []
        for _, params in checkpoints:
            for name, p in params.items():
                probe.params[name][...] = p[k : k + 1]
            memory.append(token_memory(probe, batch.inputs, task.alphabet)[0])
            landing.append(gradient_landing(probe, batch.inputs, batch.targets)[0])
        succeeded = bool(result.succeeded[k])
        return InsideResult(
            model=self.model,
            seeds=self.seeds,
            seed=self.seeds[k],
            succeeded=succeeded,
            success_step=result.success_step[k] if succeeded else None,
            eval_steps=np.array([done for done, _ in checkpoints]),
            scores=result.scores[k].copy(),
            memory=np.array(memory),
            landing=np.array(landing),
        )

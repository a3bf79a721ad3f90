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
keeps every state; the readout, its backward pass and the LSTM's backward
pass with a gradient entering at every step (:func:`lstm_backward`) are
computed here. Its parameters live in one ``(E, P)`` block, member by member,
the ensemble's arrays first and the query last, so that the lab's optimizer
updates them as it updates the ensemble's.

:func:`train` trains any arm by the procedure of :func:`rnnmem.lab.train`,
step for step (its batches, held-out evaluation, success rule, global-norm
clipping, Adam, divergence and retirement), with members retiring at their
first success and training stopping when none is left: on the ``"last"`` arm
it returns exactly what :func:`rnnmem.lab.train` returns (the tests hold the
two equal).

**The design**, fixed in this module before any of its runs: recall across
random tokens (:data:`TASK`, alphabet :data:`rnnmem.experiments.ALPHABET`) at
the lags :data:`LAGS` (:data:`LAGS_DESIGNED` less its last, by cost), the
seeds :data:`SEEDS` (20 per cell), the lab's settings :data:`DESIGN` (those
of "Remembering by design": 16 units, batches of 32, Adam at 0.01, clipping
at 1, at most :data:`BUDGET` updates, held-out accuracy of 0.9 on 256
sequences scored every 25), in float32 (:data:`PRECISION`). Every cell of
the grid is trained for every arm.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from . import by_design, experiments, lab, tasks
from .checks import check_choice, check_nonnegative_int, check_positive_int
from .ensemble import Ensemble, OneHot, check_targets
from .experiments import Design, RunResult
from .tasks import Task

__all__ = [
    "ARMS",
    "MODEL",
    "TASK",
    "LAGS_DESIGNED",
    "LAGS",
    "SEEDS",
    "BUDGET",
    "DESIGN",
    "PRECISION",
    "REACH_SEQUENCES",
    "AttentionEnsemble",
    "lstm_backward",
    "make_model",
    "train",
    "AttentionRun",
    "clue_share",
    "Profile",
    "attention_profile",
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

LAGS = (10, 30, 100)
"""The lags as trained: :data:`LAGS_DESIGNED` without 300. Trained cold on the build machine (two cores, shared
with other work), the designed grid took 298 s of processor time, about four fifths of its wall time at lag 300,
where each attention arm cost about one and a half times the last-state readout; with the chapter's gradient
measurements that is over the budget, so the last lag was dropped as the design said, and no result of it was
read."""

SEEDS = tuple(range(20))
"""The seeds of every cell: 0 to 19."""

BUDGET = by_design.BUDGET
"""Updates per member at most (a member retires at its first success): 300."""

DESIGN = by_design.DESIGN
"""The lab's settings (:data:`rnnmem.by_design.DESIGN`), with the budget :data:`BUDGET`."""

PRECISION = "float32"
"""The arithmetic of the runs."""

REACH_SEQUENCES = 128
"""Sequences (drawn with seed 1) on which :func:`clue_share` measures the gradient at initialization."""


def _check_arm(arm: Any) -> str:
    return check_choice("arm", arm, ARMS)


def _sequence_norms(d: np.ndarray) -> np.ndarray:
    """``(E,)``: the mean over the batch of each sequence's gradient norm, from ``d`` (H, E, B) of a batch-mean loss.

    As :meth:`rnnmem.ensemble.Ensemble.backward` measures its ``step_norms``.
    """
    return np.sqrt((d * d).sum(axis=0)).mean(axis=1) * d.shape[2]


def lstm_backward(ensemble: Ensemble, d_states: np.ndarray, norms: np.ndarray | None = None) -> dict:
    r"""Backpropagation through the LSTM of ``ensemble``'s latest forward pass, a gradient entering at every step.

    ``d_states`` ``(T, H, E, B)`` (feature-major, as the ensemble keeps its
    states) holds :math:`\partial\mathcal{L}/\partial h_t` through the readout
    alone, for every step; the total derivative :math:`\delta_t` adds what
    comes back through step :math:`t + 1`:

    .. math::

        \delta_t = \frac{\partial\mathcal{L}}{\partial h_t}\Big|_{\text{readout}}
            + W_{hh}^\top\, \frac{\partial\mathcal{L}}{\partial z_{t+1}}, \qquad
        \bar g_{c,t} = \delta_t \odot o_t \odot (1 - \tanh^2 c_t) + f_{t+1} \odot \bar g_{c,t+1},

    with :math:`z_{t+1}` the pre-activations of step :math:`t + 1`, from
    which the weights' gradients follow as in :meth:`rnnmem.ensemble.Ensemble.backward`
    (which is this with a gradient at the last step only). Returns the
    gradients of the four recurrent arrays, stacked like the ensemble's
    ``params``. ``norms`` ``(E, T)``, if given, receives the mean over the
    batch of each sequence's :math:`\|\delta_t\|`.

    The ensemble's forward pass must have kept its values (``loss_and_grads``
    or :meth:`AttentionEnsemble.loss_and_grads` run it), without dropout
    masks; it is an LSTM.

    >>> from rnnmem.tasks import recall
    >>> ens = lab.make_ensemble(recall(lag=3), "lstm", seeds=[0, 1], hidden=4)
    >>> x = recall(lag=3).sample(6, seed=0).inputs
    >>> h_T = ens.forward(x)
    >>> d = np.zeros((5, 4, 2, 6))
    >>> d[-1] = 1.0
    >>> mine, theirs = lstm_backward(ens, d), ens.backward(np.ones_like(h_T))
    >>> all(np.allclose(mine[k], theirs[k]) for k in theirs)
    True
    """
    if not isinstance(ensemble, Ensemble) or ensemble.model != "lstm":
        raise ValueError(f"ensemble must be an LSTM Ensemble, got {ensemble!r}")
    cache = ensemble._cache
    if cache is None or "cell" not in cache or cache["masks"] is not None or cache["hidden"] is not None:
        raise ValueError("ensemble must have run a forward pass that kept its values, without dropout masks")
    E, H, D = ensemble.size, ensemble.hidden_size, ensemble.input_size
    T, B = cache["T"], cache["B"]
    if np.shape(d_states) != (T, H, E, B):
        raise ValueError(f"d_states must have shape ({T}, {H}, {E}, {B}), got shape {np.shape(d_states)}")
    dtype = ensemble.dtype
    rows, gates, cell, tanh_cell = cache["rows"], cache["gates"], cache["cell"], cache["tanh_cell"]
    o, i, f, g = (gates[:, k * H : (k + 1) * H] for k in range(4))  # the forward pass keeps o|i|f|g
    # Every step's coefficients at once, torch's order i|f|g|o: what multiplies the cell's gradient
    # (i, f, g) or the state's (o) to give each pre-activation's gradient. The loop below turns each
    # step's block into those gradients, in place.
    coef = ensemble._buffer("attention_coef", (T, 4 * H, E, B))  # kept by the ensemble from call to call
    slope = ensemble._buffer("attention_slope", (T, H, E, B))
    for k, (gate, times) in enumerate(((i, g), (f, cell[:T]), (o, tanh_cell))):
        block = coef[:, (3 * H if k == 2 else k * H) : (4 * H if k == 2 else (k + 1) * H)]
        np.subtract(1.0, gate, out=slope)
        slope *= gate  # sigma' = s (1 - s)
        np.multiply(slope, times, out=block)  # i multiplies g, f multiplies c_{t-1}, o multiplies tanh(c_t)
    c_g = coef[:, 2 * H : 3 * H]
    np.multiply(g, g, out=c_g)
    np.subtract(1.0, c_g, out=c_g)
    c_g *= i  # g = tanh(.) is multiplied by i
    to_cell = slope  # dc_t += delta_t o (1 - tanh^2 c_t)
    np.multiply(tanh_cell, tanh_cell, out=to_cell)
    np.subtract(1.0, to_cell, out=to_cell)
    to_cell *= o
    W_hhT = ensemble.params["weight_hh_l0"].transpose(0, 2, 1)
    dh = np.zeros((H, E, B), dtype=dtype)
    dc = np.zeros((H, E, B), dtype=dtype)
    scratch = np.empty((H, E, B), dtype=dtype)
    # Every weight and bias gradient: the sum over steps and sequences of d(pre-activation) times the
    # rows [h_{t-1}; x_t; 1] that entered the step, one product per member and step (each member's
    # rows copied member-major first, which the product reads faster).
    total = np.zeros((E, 4 * H, H + D + 1), dtype=dtype)
    product = np.empty_like(total)
    member_rows = np.empty((E, B, H + D + 1), dtype=dtype)
    for t in range(T - 1, -1, -1):
        dh += d_states[t]
        if norms is not None:
            norms[:, t] = _sequence_norms(dh)
        np.multiply(dh, to_cell[t], out=scratch)
        dc += scratch
        step = coef[t]
        by_cell = step[: 3 * H].reshape(3, H, E, B)  # a view: the block of i, f, g
        by_cell *= dc
        step[3 * H :] *= dh
        dc *= f[t]
        np.matmul(W_hhT, step.transpose(1, 0, 2), out=dh.transpose(1, 0, 2))
        np.copyto(member_rows, rows[t].transpose(1, 2, 0))
        np.matmul(step.transpose(1, 0, 2), member_rows, out=product)
        total += product
    d_b = total[:, :, H + D].copy()
    return {
        "weight_ih_l0": total[:, :, H : H + D].copy(),
        "weight_hh_l0": total[:, :, :H].copy(),
        "bias_ih_l0": d_b,
        "bias_hh_l0": d_b.copy(),
    }


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
        at once), then :func:`lstm_backward`. With ``step_norms=True`` the
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
            norms = np.zeros((E, states.shape[0])) if step_norms else None
            grads = lstm_backward(self.ensemble, d_states, norms)
            grads["readout_weight"] = np.matmul(d_out, context.transpose(1, 2, 0))
            grads["readout_bias"] = d_out.sum(axis=2)
            if self.arm == "attention":
                grads["query"] = np.einsum("teb,theb->eh", d_scores, states)
        if norms is not None:
            grads["step_norms"] = norms
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


def train(
    task: Task,
    arm: str,
    *,
    seeds: Any = (0,),
    hidden: int = 16,
    steps: int = 300,
    batch: int = 32,
    lr: float = 1e-2,
    clip: float | None = 1.0,
    eval_every: int = 25,
    eval_size: int = 256,
    eval_seed: int = 0,
    threshold: float = 0.9,
    optimizer: str = "adam",
    dtype: Any = np.float64,
) -> RunResult:
    r"""Train one member per seed of the ``arm`` on ``task``, by :func:`rnnmem.lab.train`'s procedure.

    The same steps in the same order, with the lab's own optimizer, update,
    evaluation and success rule: each member's batches from
    ``default_rng((seed, 1))``, the held-out set from ``default_rng((eval_seed,
    2))``, the global gradient norm before clipping, Adam (or ``"sgd"``), a
    score every ``eval_every`` updates; a member retires at its first
    success (or at once if it diverges), and training stops when none is
    left (``retire=True, stop_when_done=True`` in :func:`rnnmem.lab.train`).
    On the ``"last"`` arm every number equals :func:`rnnmem.lab.train`'s.

    >>> from rnnmem.tasks import recall
    >>> result = train(recall(lag=2, alphabet=4), "attention", seeds=[0, 1], hidden=8, steps=50)
    >>> result.scores.shape[0], result.params["query"].shape
    (2, (2, 8))
    """
    if not isinstance(task, Task):
        raise ValueError(f"task must be a Task (from rnnmem.tasks), got {type(task).__name__}")
    arm = _check_arm(arm)
    steps, batch = check_positive_int("steps", steps), check_positive_int("batch", batch)
    eval_every, eval_size = check_positive_int("eval_every", eval_every), check_positive_int("eval_size", eval_size)
    eval_seed = check_nonnegative_int("eval_seed", eval_seed)
    design = Design(hidden, batch, lr, clip, steps, eval_every, eval_size, threshold, optimizer)  # checks the rest
    full = make_model(task, arm, seeds, hidden=design.hidden, dtype=dtype)
    E = full.size
    held_out = task.sample(eval_size, seed=np.random.default_rng((eval_seed, 2)))
    held_out_x = OneHot(held_out.inputs.argmax(axis=2)) if task.one_hot else held_out.inputs
    # The last arm is scored as rnnmem.lab scores it; the attention readouts keep every step's values in their
    # forward pass, and score larger chunks (of a size set by the task and the model, never by the members).
    chunk = None if arm == "last" else max(1, min(eval_size, 2**19 // (task.length * 4 * design.hidden)))
    if task.kind == "classification":

        def passed(score):
            return score >= design.threshold
    else:
        limit = (1.0 - design.threshold) * task.baseline_mse

        def passed(score):
            return score <= limit

    ens: Any = full
    members = np.arange(E)
    streams = [np.random.default_rng((seed, 1)) for seed in full.seeds]
    opt: Any = lab._Adam(full, lr=design.lr) if design.optimizer == "adam" else lab._SGD(full, lr=design.lr)
    losses = np.full((E, steps), np.nan)
    grad_norms = np.full((E, steps), np.nan)
    success_step: list = [None] * E
    diverged_at: list = [None] * E
    live = np.ones(E, dtype=bool)
    retired_score = np.full(E, np.nan)
    eval_steps, scores = [], []

    def leave(rows: np.ndarray) -> None:
        """Retire the members at positions ``rows`` of the stack: keep their parameters, shrink the rest."""
        nonlocal ens, members, streams, opt
        if ens is not full:
            full._flat[members] = ens._flat
        stay = np.setdiff1d(np.arange(ens.size), rows)
        members = members[stay]
        streams = [streams[k] for k in stay]
        if stay.size == 0:
            ens = None
        else:
            ens = ens.select(stay)
            opt = opt.select(ens, stay)

    def evaluation(done: int) -> None:
        score = retired_score.copy()
        if ens is not None:
            score[members] = lab.evaluate(ens, task, held_out_x, held_out.targets, chunk)
        eval_steps.append(done)
        scores.append(score)
        for e in range(E):
            if live[e] and success_step[e] is None and passed(score[e]):
                success_step[e] = done
        if ens is not None:
            done_rows = np.flatnonzero([success_step[e] is not None for e in members])
            if done_rows.size:
                retired_score[members[done_rows]] = score[members[done_rows]]
                leave(done_rows)

    evaluation(0)
    done = 0
    while done < steps:
        if ens is not None:
            if task.one_hot:
                ids, y = task.sample_ids_each(design.batch, streams)
                x: Any = OneHot(ids)
            else:
                x, y = task.sample_each(design.batch, streams)
            loss, norm = lab._update(ens, opt, x, y, task.kind, design.clip, live[members])
            bad = np.flatnonzero(live[members] & ~(np.isfinite(loss) & np.isfinite(norm)))
            for k in bad:
                diverged_at[members[k]] = done
                live[members[k]] = False
            ok = live[members]
            losses[members[ok], done] = loss[ok]
            grad_norms[members[ok], done] = norm[ok]
            if bad.size:
                retired_score[members[bad]] = lab.evaluate(ens.select(bad), task, held_out_x, held_out.targets, chunk)
                leave(bad)
        done += 1
        if done % eval_every == 0 or done == steps:
            evaluation(done)
            if all(s is not None or not a for s, a in zip(success_step, live)):
                break
    if ens is not None and ens is not full:
        full._flat[members] = ens._flat
    return RunResult(
        eval_steps=np.array(eval_steps),
        scores=np.array(scores).T,
        losses=losses,
        grad_norms=grad_norms,
        success_step=tuple(success_step),
        diverged_at=tuple(diverged_at),
        params={k: v.copy() for k, v in full.params.items()},
    )


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
        return train(
            task, self.arm, seeds=list(self.seeds), dtype=np.dtype(self.dtype), **dataclasses.asdict(self.design)
        )


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

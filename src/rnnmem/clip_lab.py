r"""Clipping, measured: plain gradient descent with and without clipping, on a ladder of learning rates.

The clipping experiment of the chapter "Controls and clipping, measured". Many
networks are trained by plain gradient descent on the adding problem, at
several learning rates, half of them with their gradient clipped by global
norm; the experiment counts, per rate and arm, the networks that diverge and
the networks that learn, and logs each update's gradient by parameter group,
so that a gradient exploding through time (the recurrent weights' share)
can be told from a step that merely overshoots (the readout's).

**The design** (:data:`DESIGN`, a :class:`ClipDesign`) was fixed before any
run was looked at. Each choice and the rule that made it:

* *Model*: the tanh RNN, 16 units (the lab's size), PyTorch's uniform draw,
  with the readout's bias moved up by the targets' mean, 1
  (:func:`untrained`). Drawn as PyTorch draws it, an untrained network
  predicts numbers near 0 for targets whose mean is 1, and its error is
  already several times the baseline (above ten times for some seeds): the
  divergence rule below would count networks that have not taken a step.
  Moved, it starts near the constant prediction.
  Gradients exploding through time are the tanh RNN's classic case (Pascanu,
  Mikolov and Bengio, 2013). The LSTM costs about three and a half times as
  much per member and update (measured on the lab's ensemble, float32,
  batches of 16), and the two together do not fit the budget below.
* *Task*: the adding problem of length :math:`T = 100`
  (:func:`rnnmem.tasks.adding`), in the variant of Le, Jaitly and Hinton
  (2015); baseline error :math:`1/6`, the constant prediction's.
* *A second task* (:data:`LATE`), the same in every other choice: the
  adding problem of the same length with both marks in its last tenth,
  :math:`w = T/10 = 10` steps (:func:`late_adding`). The first task asks a
  network to carry a number 50 to 99 steps; no network learned it at any
  rate within the budget, so it could not show whether clipping changes
  learning. The second keeps the 100 steps a gradient crosses, where it can
  explode, and shrinks the memory asked for to 5 to 9 steps. The tenth was
  fixed before the second design ran, and both designs are reported.
* *Budget* (by cost only): 1,500 updates of batches of 16, in float32.
* *Seeds*: 20 per arm. The unclipped arm trains seeds 0 to 19, the clipped
  arm seeds 20 to 39: disjoint, so that the two arms are independent samples,
  as Fisher's exact test assumes. Every rung trains the same seeds, and a
  member draws its batches from ``default_rng((seed, 1))`` as in
  :mod:`rnnmem.lab`.
* *The ladder* (:func:`calibrate`, :func:`ladder`), measured at
  initialization, never from outcomes: gradient descent on a quadratic of
  curvature :math:`\lambda` is stable if and only if :math:`\eta < 2/\lambda`.
  :math:`\hat\lambda` is the median, over the 40 untrained networks of both
  arms, of the largest eigenvalue of the Hessian of the loss on one batch of
  64 sequences; the *edge* is :math:`\eta^* = 2/\hat\lambda`, and the rungs
  are doublings :math:`\eta^* 2^k`, :math:`k = -2, -1, 0, 1`: a quarter and a
  half of the edge, at which descent is stable at the start with a margin,
  the edge itself, and twice the edge, above it.
* *Clipping* by global norm, :math:`g \leftarrow g \min(1, \theta/\|g\|)`, at
  :math:`\theta` = the median global gradient norm of the same 40 untrained
  networks on the same batch: a threshold at the norm's typical size, as
  Pascanu, Mikolov and Bengio (2013, §3.2) advise.
* *Divergence*: a loss or gradient that is not finite, or a training loss
  above 10 times the baseline. A member that diverges takes no step from that
  gradient and leaves the stack at once.
* *Success*: held-out error at most 0.4 times the baseline (:math:`R^2 \ge
  0.6`) at a check, every 100 updates and after the last, on 512 sequences
  from the lab's held-out stream ``default_rng((0, 2))``. The rule: a model
  that knows the second marked number but not the first can at best predict
  :math:`u_2 + 1/2`, whose error :math:`\operatorname{Var}(u_1) = 1/12` is half
  the baseline; 0.4 lies five standard errors of the held-out estimate below
  that half (:func:`one_number_ratio`, :func:`held_out_se`), so a success must
  carry the first number, 50 to 100 steps back, to the end. A member that
  succeeds leaves the stack at that check.
* *Cost*: the whole experiment must train in at most 40 s of wall time on
  two processes, even if no member left early. The members are split into
  :attr:`ClipDesign.parts` runs (:class:`ClipRun`, seeds dealt alternately),
  each with every rung and both arms, so the two processes get equal
  shares. Measured on the lab's ensemble (float32, batches of 16, 80 to 100
  members in a stack), an update costs about 0.16 ms per member, the
  held-out checks about a tenth more: five rungs would take about 30 s per
  process if no member left, four about 24 s, which leaves room for the
  calibration, the start of the processes and the figure. Hence four rungs
  and float32 (float64 costs about one and a half times as much). Members that diverge
  or succeed leave, so the real cost is lower.

**Reading** (:meth:`ClipLadder.read`): per rung and arm, the members that
diverged and that succeeded, each with a 95% Wilson interval, and the
held-out error ratio's median and quartiles over the members that did not
diverge; Fisher's exact test compares the arms at
each rung (:class:`Rung`). :func:`figure_rung` picks the rung a figure shows.

The members train with the lab's trainer, :func:`rnnmem.lab.train`
(:func:`train_members`), with this experiment's update rule in place of the
lab's: plain gradient descent at each member's own rate and threshold,
:math:`\theta \leftarrow \theta - \eta\, g \min(1, \theta_c/\|g\|)`, the
divergence rule above, and a log of each update's loss and gradient norm by
group (the lab records only the global norm, and not the update a member
diverged at); its success rule is the error ratio's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from . import cells, lab, stats, tasks
from .checks import check_choice, check_list, check_positive, check_positive_int, check_seed
from .experiments import ModelSpec

__all__ = [
    "GROUPS",
    "PARAM_GROUPS",
    "ARMS",
    "HIGH_ARM",
    "HIGH_MULTIPLE",
    "ClipDesign",
    "DESIGN",
    "LATE",
    "LateAdding",
    "late_adding",
    "Member",
    "Calibration",
    "ClipResult",
    "ClipRun",
    "ArmReading",
    "Rung",
    "ClipLadder",
    "group_norms",
    "one_number_ratio",
    "held_out_se",
    "TARGET_MEAN",
    "untrained",
    "calibrate",
    "ladder",
    "train_members",
    "figure_rung",
    "PILOT_BAND",
    "PILOT_STEPS",
    "Pilot",
    "in_band",
    "pilot",
    "clipped_share",
    "stratified",
    "null_power",
    "top_singular_value",
    "ALPHA",
    "EXPLOSION",
    "detection_level",
    "Divergence",
    "divergences",
    "gradient_reach",
    "window_quantiles",
    "log_windows",
]

GROUPS = ("recurrent", "biases", "input", "readout")
"""The parameter groups whose gradient norms are logged apart: :math:`W_{hh}`; the recurrent
layer's biases; :math:`W_{ih}`; the readout :math:`V, c`."""

PARAM_GROUPS = {
    "weight_hh_l0": "recurrent",
    "bias_ih_l0": "biases",
    "bias_hh_l0": "biases",
    "weight_ih_l0": "input",
    "readout_weight": "readout",
    "readout_bias": "readout",
}
"""Each parameter array of an :class:`~rnnmem.ensemble.Ensemble` and its group of :data:`GROUPS`."""

ARMS = ("unclipped", "clipped")
"""The two arms of every rung."""

HIGH_ARM = "clipped-high"
"""A third arm, added after the first two had been read: clipped at :data:`HIGH_MULTIPLE` times the threshold,
seeds ``2 seeds .. 3 seeds - 1`` (independent of both arms of :data:`ARMS`), in runs of its own
(:meth:`ClipLadder.high_runs`), so that the first two arms' runs are unchanged."""

HIGH_MULTIPLE = 5.0
"""The second threshold over the first, fixed before its runs: five times the median initial gradient norm,
a cap that only the large gradients of the start's upper tail reach, as a safeguard against spikes."""

_HELD_OUT_STREAM = 2  # the lab's held-out stream, default_rng((0, 2))
_CALIBRATION_STREAM = 4  # the calibration batch, default_rng((0, 4))
_LANCZOS_STREAM = 5  # a member's Lanczos start vector, default_rng((seed, 5))
_EVAL_CHUNK = 64  # held-out sequences per forward pass: fixed, so a score does not depend on the stack


# ---------------------------------------------------------------------------- the design


@dataclass(frozen=True)
class ClipDesign:
    """Everything the clipping experiment is, fixed before it runs (the module says why each value).

    ``model`` is a model spec (:data:`rnnmem.experiments.MODEL_SPECS`),
    ``length`` the adding problem's :math:`T`, ``window`` the last steps
    both marks lie in (``None``: the whole sequence, one mark in each half;
    see :func:`late_adding`), ``seeds`` the members per arm
    and rung, ``exponents`` the rungs :math:`\\eta^* 2^k`; ``success`` is the
    held-out error ratio at or below which a member succeeds, ``diverge`` the
    training-loss ratio above which it diverges; ``calibration`` the
    sequences of the batch the ladder and the threshold are measured on,
    ``lanczos`` the Lanczos steps of that measurement; ``parts`` the runs the
    members are split into.

    >>> DESIGN.model, DESIGN.length, DESIGN.updates, DESIGN.seeds
    (ModelSpec(cell='rnn', forget_bias=None, init='default', input_bias=None), 100, 1500, 20)
    >>> ClipDesign(exponents=(0, -1))
    Traceback (most recent call last):
    ...
    ValueError: exponents must be increasing and distinct, got (0, -1)
    >>> ClipDesign(length=100, window=101)
    Traceback (most recent call last):
    ...
    ValueError: window must be a whole number from 2 to length (100), or None for the whole sequence, got 101
    """

    model: ModelSpec = ModelSpec("rnn")
    length: int = 100
    window: int | None = None
    hidden: int = 16
    batch: int = 16
    updates: int = 1500
    seeds: int = 20
    exponents: tuple[int, ...] = (-2, -1, 0, 1)
    eval_every: int = 100
    eval_size: int = 512
    success: float = 0.4
    diverge: float = 10.0
    calibration: int = 64
    lanczos: int = 20
    dtype: str = "float32"
    parts: int = 2

    def __post_init__(self) -> None:
        object.__setattr__(self, "model", ModelSpec.parse(self.model))
        length = check_positive_int("length", self.length)
        if length < 2:
            raise ValueError(f"length must be a whole number >= 2, got {self.length!r}")
        object.__setattr__(self, "length", length)
        if self.window is not None:
            object.__setattr__(self, "window", _check_window(self.window, length))
        for name in ("hidden", "batch", "updates", "seeds", "eval_every", "eval_size", "calibration", "lanczos"):
            object.__setattr__(self, name, check_positive_int(name, getattr(self, name)))
        exponents = check_list("exponents", self.exponents, _check_int, "whole numbers")
        if sorted(set(exponents)) != exponents:
            raise ValueError(f"exponents must be increasing and distinct, got {self.exponents!r}")
        object.__setattr__(self, "exponents", tuple(exponents))
        success = float(check_positive("success", self.success))
        if success >= 1:
            raise ValueError(f"success must be a ratio to the baseline in (0, 1), got {self.success!r}")
        object.__setattr__(self, "success", success)
        diverge = float(check_positive("diverge", self.diverge))
        if diverge <= 1:
            raise ValueError(f"diverge must be a ratio to the baseline above 1, got {self.diverge!r}")
        object.__setattr__(self, "diverge", diverge)
        check_choice("dtype", self.dtype, ("float32", "float64"))
        parts = check_positive_int("parts", self.parts)
        if parts > self.seeds:
            raise ValueError(f"parts must be at most seeds ({self.seeds}), got {self.parts!r}")
        object.__setattr__(self, "parts", parts)

    @property
    def task(self) -> tasks.Task:
        """The adding problem of :attr:`length`, its marks in the last :attr:`window` steps if one is set."""
        return tasks.adding(self.length) if self.window is None else late_adding(self.length, self.window)

    @property
    def first_back(self) -> tuple[int, int]:
        """The nearest and the farthest the first marked value lies from the last step, where the target is read.

        >>> DESIGN.first_back, LATE.first_back
        ((50, 99), (5, 9))
        """
        span = self.length if self.window is None else self.window
        return span - span // 2, span - 1

    @property
    def checks(self) -> tuple[int, ...]:
        """The updates after which the held-out error is measured: 0, every :attr:`eval_every`, and the last."""
        return tuple(sorted(set(range(0, self.updates, self.eval_every)) | {self.updates}))

    def arm_seeds(self, arm: str) -> tuple[int, ...]:
        """The seeds of one arm of :data:`ARMS`: ``0..seeds-1`` unclipped, ``seeds..2 seeds-1`` clipped.

        >>> ClipDesign(seeds=3).arm_seeds("clipped")
        (3, 4, 5)
        """
        k = ARMS.index(check_choice("arm", arm, ARMS))
        return tuple(range(k * self.seeds, (k + 1) * self.seeds))


def _check_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    return int(value)


DESIGN = ClipDesign()
"""The clipping experiment's design: tanh RNN, adding problem of length 100, 1,500 updates, 20 seeds per arm."""


def _check_window(window: Any, length: int) -> int:
    allowed = f"a whole number from 2 to length ({length}), or None for the whole sequence"
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or not 2 <= window <= length:
        raise ValueError(f"window must be {allowed}, got {window!r}")
    return int(window)


@dataclass(frozen=True)
class LateAdding(tasks.Task):
    r"""The adding problem with both marks in the last :attr:`window` steps (:func:`late_adding` makes one).

    Drawn as :func:`rnnmem.tasks.adding` draws, in the same order from the
    same stream: the values of every step, then the first marked step, then
    the second; only the steps the marks are drawn from differ.
    """

    window: int = 2
    r""":math:`w`: the first mark lies in steps :math:`T - w` to :math:`T - w + \lfloor w/2 \rfloor - 1`,
    the second in the rest of the last :math:`w` steps."""

    def _draw(self, n: int, rng: np.random.Generator) -> tuple:
        T, w = self.length, self.window
        values = rng.random((T, n))
        first = rng.integers(T - w, T - w + w // 2, size=n)
        second = rng.integers(T - w + w // 2, T, size=n)
        return values, first, second

    def sample(self, n: int, seed: Any = 0) -> tasks.Batch:
        """``n`` sequences and their targets, as :meth:`rnnmem.tasks.Task.sample` gives them."""
        n = check_positive_int("n", n)
        inputs = np.zeros((self.length, n, 2))
        targets = tasks._adding_inputs(inputs, *self._draw(n, check_seed("seed", seed)))
        return tasks.Batch(inputs, targets)

    def sample_each(self, n: int, seeds: Any) -> tasks.Batch:
        """``n`` sequences per stream, ``(T, S, n, 2)``, as :meth:`rnnmem.tasks.Task.sample_each` gives them."""
        n = check_positive_int("n", n)
        if isinstance(seeds, (str, bytes)) or not isinstance(seeds, (list, tuple)) or not seeds:
            raise ValueError(f"seeds must be a non-empty list of seeds, one per stream, got {seeds!r}")
        rngs = [check_seed(f"seeds[{k}]", s) for k, s in enumerate(seeds)]
        inputs = np.zeros((self.length, len(rngs), n, 2))
        targets = np.stack([tasks._adding_inputs(inputs[:, k], *self._draw(n, r)) for k, r in enumerate(rngs)])
        return tasks.Batch(inputs, targets)


def late_adding(length: int, window: int) -> LateAdding:
    r"""The adding problem over ``length`` steps with both marks in the last ``window`` steps.

    As :func:`rnnmem.tasks.adding`, one mark in each half, but of the last
    :math:`w` steps instead of the whole sequence: the first in steps
    :math:`T - w` to :math:`T - w + \lfloor w/2 \rfloor - 1`, the second
    after it. The steps before carry values no target depends on. A
    gradient still crosses all :math:`T` steps of the recurrence; the memory
    the target asks for is at most :math:`w - 1` steps. Baseline error
    :math:`1/6`, as for the adding problem.

    >>> task = late_adding(100, 10)
    >>> batch = task.sample(1000, seed=0)
    >>> marked = np.nonzero(batch.inputs[:, :, 1].T)[1].reshape(1000, 2)
    >>> int(marked[:, 0].min()), int(marked[:, 0].max()), int(marked[:, 1].min()), int(marked[:, 1].max())
    (90, 94, 95, 99)
    >>> late_adding(100, 1)
    Traceback (most recent call last):
    ...
    ValueError: window must be a whole number from 2 to length (100), or None for the whole sequence, got 1
    """
    base = tasks.adding(length)
    return LateAdding(**{f.name: getattr(base, f.name) for f in fields(base)}, window=_check_window(window, length))


LATE = ClipDesign(window=DESIGN.length // 10)
"""The second design: :data:`DESIGN` with both marks in the last tenth of the sequence (:func:`late_adding`)."""


def one_number_ratio() -> float:
    r"""The adding problem's best error ratio without the first marked number: :math:`\tfrac{1/12}{1/6}`.

    Predicting :math:`u_2 + \mathbb E[u_1]` leaves the error
    :math:`\operatorname{Var}(u_1) = 1/12`; the baseline (the constant
    prediction) is :math:`\operatorname{Var}(u_1 + u_2) = 1/6`.

    >>> one_number_ratio()
    0.5
    """
    return (1.0 / 12.0) / tasks.adding(2).baseline_mse


def held_out_se(ratio: float, sequences: int) -> float:
    r"""The standard error of a held-out error ratio near ``ratio`` measured on ``sequences`` sequences.

    For a model that predicts :math:`u_2 + 1/2`, the squared error of one
    sequence is :math:`(u_1 - 1/2)^2` with variance :math:`1/80 - 1/144 =
    1/180`; its mean over :math:`n` sequences, over the baseline :math:`1/6`,
    has standard error :math:`6 \sqrt{1/(180 n)}`. Only ``ratio = 0.5`` (that
    model) is supported.

    >>> round(held_out_se(0.5, 512), 4)
    0.0198
    """
    if ratio != one_number_ratio():
        raise ValueError(f"ratio must be {one_number_ratio()} (the one-number model), got {ratio!r}")
    n = check_positive_int("sequences", sequences)
    return math.sqrt(1.0 / (180.0 * n)) / tasks.adding(2).baseline_mse


# ---------------------------------------------------------------------------- gradients by group


def group_norms(grads: Mapping[str, np.ndarray]) -> np.ndarray:
    r"""Each member's gradient norm per group of :data:`GROUPS`: ``(E, 4)``, summed in float64.

    ``grads`` maps each parameter name of :data:`PARAM_GROUPS` to its
    gradient, members on axis 0 (what
    :meth:`rnnmem.ensemble.Ensemble.loss_and_grads` returns). The global norm
    is the root of the sum of the squared group norms.

    >>> g = {name: np.ones((1, 2)) for name in PARAM_GROUPS}
    >>> group_norms(g).round(3).tolist()
    [[1.414, 2.0, 1.414, 2.0]]
    """
    E = next(iter(grads.values())).shape[0]
    squares = np.zeros((E, len(GROUPS)))
    for name, group in PARAM_GROUPS.items():
        g = np.asarray(grads[name]).reshape(E, -1).astype(np.float64)
        squares[:, GROUPS.index(group)] += (g * g).sum(axis=1)
    return np.sqrt(squares)


def top_singular_value(W: np.ndarray) -> np.ndarray:
    r"""The largest singular value of each matrix of a stack ``(E, H, H)``, in float64: ``(E,)``.

    For the tanh RNN, :math:`\|W_{hh}\|_2 > 1` is necessary for a gradient to
    explode through time (Pascanu, Mikolov and Bengio, 2013, §2.1), since
    :math:`\tanh' \le 1`.

    >>> top_singular_value(np.array([[[3.0, 0.0], [0.0, 0.5]]])).tolist()
    [3.0]
    """
    W = np.asarray(W, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(W).all(axis=(1, 2))
        out = np.full(W.shape[0], np.nan)
        if finite.any():
            out[finite] = np.linalg.norm(W[finite], ord=2, axis=(1, 2))
    return out


# ---------------------------------------------------------------------------- the networks


def untrained(design: ClipDesign, seeds: Sequence[int], dtype: Any = np.float64) -> Any:
    r"""The untrained networks of ``seeds``: :func:`rnnmem.lab.make_ensemble`, readout bias moved by the mean target.

    The adding problem's targets have mean :math:`\mathbb E[u_1 + u_2] = 1`;
    adding it to PyTorch's draw of the readout's bias :math:`c` starts each
    network near the constant prediction, whose error is the baseline.

    >>> d = ClipDesign(length=6, hidden=4)
    >>> ens = untrained(d, [0, 1])
    >>> plain = lab.make_ensemble(d.task, "rnn", [0, 1], hidden=4)
    >>> (ens.params["readout_bias"] - plain.params["readout_bias"]).tolist()
    [[1.0], [1.0]]
    """
    spec, task = design.model, design.task
    ens = lab.make_ensemble(
        task, spec.cell, list(seeds), hidden=design.hidden, forget_bias=spec.forget_bias, init=spec.init, dtype=dtype
    )
    ens.params["readout_bias"][...] += TARGET_MEAN
    return ens


TARGET_MEAN = 1.0
r"""The adding problem's mean target, :math:`\mathbb E[u_1 + u_2] = 1/2 + 1/2`."""


# ---------------------------------------------------------------------------- calibration


@dataclass(frozen=True)
class Calibration:
    """What :func:`calibrate` measured on the untrained networks, one entry per seed (both arms)."""

    seeds: tuple[int, ...]
    """The seeds measured, ``0..2 seeds - 1``."""
    sharpness: tuple[float, ...]
    """Per seed: the largest eigenvalue of the Hessian of the loss on the calibration batch."""
    norms: tuple[float, ...]
    """Per seed: the global gradient norm on the calibration batch."""

    @property
    def sharpness_median(self) -> float:
        r""":math:`\hat\lambda`, the median of :attr:`sharpness`."""
        return float(np.median(self.sharpness))

    @property
    def edge(self) -> float:
        r"""The edge of stability at the start, :math:`\eta^* = 2/\hat\lambda`."""
        return 2.0 / self.sharpness_median

    @property
    def clip(self) -> float:
        r"""The clipping threshold :math:`\theta`, the median of :attr:`norms`."""
        return float(np.median(self.norms))


def _flat(params: Mapping[str, np.ndarray], E: int) -> np.ndarray:
    return np.concatenate([np.asarray(p).reshape(E, -1) for p in params.values()], axis=1).astype(np.float64)


def _assign(ens: Any, flat: np.ndarray) -> None:
    start = 0
    for p in ens.params.values():
        size = p[0].size
        p[...] = flat[:, start : start + size].reshape(p.shape)
        start += size


def calibrate(design: ClipDesign = DESIGN) -> Calibration:
    r"""The ladder's and the threshold's measurements, on the untrained networks of both arms.

    For each seed of both arms, drawn in float64 by :func:`untrained`, on one batch of
    ``design.calibration`` sequences from ``default_rng((0, 4))``: the global
    gradient norm, and the largest eigenvalue of the Hessian of the loss by
    ``design.lanczos`` steps of Lanczos with full reorthogonalization
    (start vector from ``default_rng((seed, 5))``), each Hessian-vector product
    a difference of gradients, :math:`Hv \approx (g(\theta + \epsilon v) -
    g(\theta))/\epsilon` with :math:`\epsilon = 10^{-6}` and :math:`\|v\| = 1`.

    >>> cal = calibrate(ClipDesign(length=6, hidden=4, seeds=2, calibration=8, lanczos=6))
    >>> cal.seeds, bool(cal.edge > 0 and cal.clip > 0)
    ((0, 1, 2, 3), True)
    """
    if not isinstance(design, ClipDesign):
        raise ValueError(f"design must be a ClipDesign, got {design!r}")
    task = design.task
    seeds = design.arm_seeds("unclipped") + design.arm_seeds("clipped")
    ens = untrained(design, seeds)
    E = ens.size
    batch = task.sample(design.calibration, seed=np.random.default_rng((0, _CALIBRATION_STREAM)))
    theta = _flat(ens.params, E)
    _, grads = ens.loss_and_grads(batch.inputs, batch.targets, task.kind)
    g0 = _flat(grads, E)
    eps = 1e-6

    def hvp(v: np.ndarray) -> np.ndarray:
        _assign(ens, theta + eps * v)
        _, g = ens.loss_and_grads(batch.inputs, batch.targets, task.kind)
        return (_flat(g, E) - g0) / eps

    P = theta.shape[1]
    k = min(design.lanczos, P)
    Q = np.zeros((k, E, P))
    alpha, beta = np.zeros((k, E)), np.zeros((k, E))
    q = np.stack([np.random.default_rng((s, _LANCZOS_STREAM)).standard_normal(P) for s in seeds])
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    steps = k
    for j in range(k):
        Q[j] = q
        w = hvp(q)
        alpha[j] = (w * q).sum(axis=1)
        for _ in range(2):  # full reorthogonalization, twice for safety
            w -= np.einsum("je,jep->ep", np.einsum("jep,ep->je", Q[: j + 1], w), Q[: j + 1])
        beta[j] = np.linalg.norm(w, axis=1)
        if j + 1 < k:
            if np.any(beta[j] <= 1e-12 * max(1.0, float(np.abs(alpha[: j + 1]).max()))):
                steps = j + 1  # an invariant subspace: its Ritz values are exact
                break
            q = w / beta[j][:, None]
    _assign(ens, theta)
    sharpness = []
    for e in range(E):
        T = np.diag(alpha[:steps, e]) + np.diag(beta[: steps - 1, e], 1) + np.diag(beta[: steps - 1, e], -1)
        sharpness.append(float(np.linalg.eigvalsh(T)[-1]))
    if np.median(sharpness) <= 0:
        raise ValueError(f"the loss has no positive curvature at the start (median {np.median(sharpness)!r})")
    norms = tuple(float(v) for v in np.linalg.norm(g0, axis=1))
    return Calibration(seeds=tuple(seeds), sharpness=tuple(sharpness), norms=norms)


# ---------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class Member:
    """One network of the experiment: its seed, its learning rate, and its clipping threshold (``None``: none).

    >>> Member(3, 0.1, None)
    Member(seed=3, lr=0.1, clip=None)
    """

    seed: int
    lr: float
    clip: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ValueError(f"seed must be a whole number >= 0, got {self.seed!r}")
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(self, "lr", float(check_positive("lr", self.lr)))
        if self.clip is not None:
            object.__setattr__(self, "clip", float(check_positive("clip", self.clip)))


@dataclass(frozen=True)
class ClipResult:
    """What :func:`train_members` measured, member by member (axis 0, in the order of ``members``).

    Updates are counted from 1; column ``u - 1`` of :attr:`losses` and
    :attr:`norms` is update ``u``, NaN once the member has left.
    """

    members: tuple[Member, ...]
    """The members trained."""
    losses: np.ndarray
    """``(E, updates)``: the training loss of each update, the one that made a member diverge included."""
    norms: np.ndarray
    """``(E, 4, updates)``: each update's gradient norm per group of :data:`GROUPS`, before clipping."""
    outcome: tuple[str, ...]
    """Per member: ``"diverged"``, ``"succeeded"`` or ``"trained"`` (the whole budget, neither)."""
    left_at: tuple[int, ...]
    """Per member: the update at which it diverged (it took no step from it), the updates done when it
    succeeded, or the budget."""
    checks: np.ndarray
    """``(C,)``: updates done at each held-out check."""
    check_ratios: np.ndarray
    """``(E, C)``: held-out error over the baseline at each check (NaN once the member has left)."""
    ratio: np.ndarray
    """``(E,)``: the last held-out error ratio measured (at success, at the end, or before diverging)."""
    sigma: np.ndarray
    """``(E, 2)``: the largest singular value of :math:`W_{hh}` at the start and when the member left."""
    params: dict
    """Each parameter array, stacked over the members, as each member was when it left (float64)."""

    def index(self, member: Member) -> int:
        """The row of ``member``.

        >>> r = ClipRun(ClipDesign(length=4, hidden=2, updates=2, seeds=1, parts=1), (Member(0, 0.1),)).execute()
        >>> r.index(Member(0, 0.1)), r.outcome
        (0, ('trained',))
        """
        return self.members.index(member)


def train_members(design: ClipDesign, members: Sequence[Member]) -> ClipResult:
    r"""Train each member by plain gradient descent on the adding problem; members leave as they finish.

    The lab's trainer, :func:`rnnmem.lab.train`, trains them with this
    experiment's update rule, members retiring at success or divergence.
    All members sit in one :class:`~rnnmem.ensemble.Ensemble` (float32 or
    float64, ``design.dtype``), drawn by :func:`untrained`. Each update, every member in the stack draws
    ``design.batch`` sequences from ``default_rng((seed, 1))``, computes its
    loss and exact gradient, records the loss and the gradient norm of each
    group of :data:`GROUPS`, and takes the step :math:`\theta \leftarrow
    \theta - \eta\, g \min(1, \theta_c / \|g\|)` (no factor without a
    threshold). A member whose loss or global norm is not finite, or whose
    loss exceeds ``design.diverge`` times the baseline, takes no step and
    leaves at once (*diverged*); at each check a member whose held-out error
    ratio is at most ``design.success`` leaves (*succeeded*).

    In float64 a member computes the same numbers whichever members share
    its stack. In float32 the batched products can round differently in
    their last bit with the stack's memory layout (as they do with the
    processor's kernel), so a member's numbers depend, that finely, on the
    members beside it and on when they leave; a run is still a pure function
    of its members.

    >>> m = [Member(0, 0.05), Member(0, 1e6, 1e-8), Member(1, 1e6)]
    >>> r = train_members(ClipDesign(length=6, hidden=4, updates=4, eval_every=2, eval_size=16), m)
    >>> r.outcome, r.left_at
    (('trained', 'trained', 'diverged'), (4, 4, 2))
    """
    if not isinstance(design, ClipDesign):
        raise ValueError(f"design must be a ClipDesign, got {design!r}")
    members = tuple(members)
    if not members or not all(isinstance(m, Member) for m in members):
        raise ValueError(f"members must be a non-empty list of Member, got {members!r}")
    task = design.task
    baseline = task.baseline_mse
    E, U = len(members), design.updates
    ens = untrained(design, [m.seed for m in members], np.dtype(design.dtype))
    sigma = np.full((E, 2), np.nan)
    sigma[:, 0] = top_singular_value(ens.params["weight_hh_l0"])
    log = _Log(np.full((E, U), np.nan), np.full((E, len(GROUPS), U), np.nan))
    lr = np.array([m.lr for m in members])
    clip = np.array([math.inf if m.clip is None else m.clip for m in members])

    def descent(full: Any) -> _Descent:
        return _Descent(full, np.arange(E), lr, clip, design.diverge * baseline, log)

    def succeeds(mse: float) -> bool:
        return bool(mse / baseline <= design.success)

    schedule = lab.Schedule(
        steps=U,
        batch=design.batch,
        optimizer=descent,
        eval_every=design.eval_every,
        eval_size=design.eval_size,
        eval_chunk=_EVAL_CHUNK,
        succeeds=succeeds,
        stop_when_done=True,
        retire=True,
    )
    result = lab.train(task, ens, schedule)
    # Each member's held-out error ratio at the checks it was in the stack for: those up to its success,
    # those before the update it diverged at, or all of them.
    checks = np.array(design.checks)
    outcome, left_at = [], []
    check_ratios = np.full((E, checks.size), np.nan)
    ratio = np.full(E, np.nan)
    for i in range(E):
        succeeded, diverged = result.success_step[i], result.diverged_at[i]
        if succeeded is not None:
            outcome.append("succeeded")
            left_at.append(succeeded)
            present = result.eval_steps <= succeeded
        elif diverged is not None:
            outcome.append("diverged")
            left_at.append(diverged + 1)
            present = result.eval_steps <= diverged
        else:
            outcome.append("trained")
            left_at.append(U)
            present = np.ones(result.eval_steps.size, dtype=bool)
        seen = np.flatnonzero(present)
        check_ratios[i, np.searchsorted(checks, result.eval_steps[seen])] = result.scores[i, seen] / baseline
        ratio[i] = check_ratios[i, np.searchsorted(checks, result.eval_steps[seen[-1]])]
    params = {name: p.astype(np.float64) for name, p in result.ensemble.params.items()}
    sigma[:, 1] = top_singular_value(result.ensemble.params["weight_hh_l0"])
    return ClipResult(
        members=members,
        losses=log.losses,
        norms=log.norms,
        outcome=tuple(outcome),
        left_at=tuple(left_at),
        checks=checks,
        check_ratios=check_ratios,
        ratio=ratio,
        sigma=sigma,
        params=params,
    )


@dataclass
class _Log:
    """What the experiment logs of every update: the training loss, and the gradient norm of each group."""

    losses: np.ndarray  # (E, updates)
    norms: np.ndarray  # (E, len(GROUPS), updates)
    done: int = 0  # updates taken so far


class _Descent:
    r"""The experiment's update rule, in the protocol of :func:`rnnmem.lab.train` (see :class:`rnnmem.lab.Schedule`).

    Plain gradient descent, each member at its own rate and clipping threshold,
    :math:`\theta \leftarrow \theta - \eta\, g \min(1, \theta_c/\|g\|)`; a member
    whose loss or global norm is not finite, or whose loss exceeds ``max_loss``,
    diverges and takes no step. Every update's loss and group norms go to the
    ``log``, in the rows of the members of the stack (``rows``).
    """

    def __init__(self, ens: Any, rows: np.ndarray, lr: np.ndarray, clip: np.ndarray, max_loss: float, log: _Log):
        self.ens, self.rows, self.lr, self.clip, self.max_loss, self.log = ens, rows, lr, clip, max_loss, log

    def select(self, ens: Any, rows: np.ndarray) -> _Descent:
        """The rule of ``ens``, the members at ``rows`` of this one's stack."""
        return _Descent(ens, self.rows[rows], self.lr, self.clip, self.max_loss, self.log)

    def update(self, loss: np.ndarray, grads: dict, frozen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Log the update, step every member that neither diverged nor is ``frozen``; the global norms and divergence."""
        rows, u = self.rows, self.log.done
        by_group = group_norms(grads)
        total = np.sqrt((by_group**2).sum(axis=1))
        self.log.losses[rows, u] = loss
        self.log.norms[rows, :, u] = by_group
        bad = ~np.isfinite(loss) | ~np.isfinite(total) | (loss > self.max_loss)
        scale = self.lr[rows] * np.where(total > self.clip[rows], self.clip[rows] / total, 1.0)
        stay = bad | frozen
        scale[stay] = 0.0
        for name, p in self.ens.params.items():
            g = grads[name]
            g[stay] = 0.0
            g *= scale.reshape((-1,) + (1,) * (g.ndim - 1)).astype(p.dtype)
            p -= g
        self.log.done += 1
        return total, bad


@dataclass(frozen=True)
class ClipRun:
    """Some members of the experiment trained together, as a value: ``run.execute()`` is pure.

    A frozen value (:class:`rnnmem.engine.Run`), so the lab's engine can key its results by it.

    >>> run = ClipRun(ClipDesign(length=4, hidden=2, updates=3, seeds=1, parts=1), [Member(0, 0.1)])
    >>> run.cost, run.execute().losses.shape
    (8, (1, 3))
    """

    design: ClipDesign
    members: tuple[Member, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.design, ClipDesign):
            raise ValueError(f"design must be a ClipDesign, got {self.design!r}")
        members = tuple(self.members) if isinstance(self.members, (list, tuple)) else ()
        if not members or not all(isinstance(m, Member) for m in members):
            raise ValueError(f"members must be a non-empty list of Member, got {self.members!r}")
        object.__setattr__(self, "members", members)

    @property
    def cost(self) -> float:
        """A relative cost, to train the costliest runs first: members times steps times gate blocks, times two."""
        return 2 * len(self.members) * self.design.length * cells.GATES[self.design.model.cell]

    def execute(self) -> ClipResult:
        """Train the members (:func:`train_members`); a pure function of the run."""
        return train_members(self.design, self.members)


# ---------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class ArmReading:
    """One arm of one rung, read: counts with 95% Wilson intervals, and the held-out error ratios."""

    arm: str
    """``"unclipped"`` or ``"clipped"``."""
    n: int
    """Members."""
    diverged: int
    """Members that diverged."""
    succeeded: int
    """Members that succeeded."""
    diverged_interval: tuple[float, float]
    """95% Wilson interval of the diverged share."""
    success_interval: tuple[float, float]
    """95% Wilson interval of the success share."""
    ratios: np.ndarray
    """Sorted: the held-out error over the baseline of each member that did not diverge (at success, or at
    the end of the budget)."""
    quartiles: tuple[float, float, float] | None
    """Lower quartile, median and upper quartile of :attr:`ratios` (:func:`rnnmem.stats.quartiles`);
    ``None`` when every member diverged."""
    outcomes: tuple[str, ...]
    """Each member's outcome, ``"diverged"``, ``"succeeded"`` or ``"trained"``."""
    members: tuple[Member, ...]
    """The members, in the order of their seeds."""


@dataclass(frozen=True)
class Rung:
    """One learning rate of the ladder: its two arms and Fisher's exact test between them."""

    exponent: int
    """:math:`k` in :math:`\\eta = \\eta^* 2^k`."""
    rate: float
    """The learning rate."""
    unclipped: ArmReading
    """The arm without clipping."""
    clipped: ArmReading
    """The arm clipped at the threshold."""
    p_diverged: float
    """Two-sided Fisher's exact test of the diverged counts."""
    p_success: float
    """Two-sided Fisher's exact test of the success counts."""


def _reading(arm: str, members: tuple[Member, ...], results: Mapping[Any, ClipResult]) -> ArmReading:
    by_member = {m: r for r in results.values() for m in r.members}
    outcome, ratios = [], []
    for m in members:
        r = by_member[m]
        i = r.index(m)
        outcome.append(r.outcome[i])
        if r.outcome[i] != "diverged":
            ratios.append(float(r.ratio[i]))
    n = len(members)
    diverged, succeeded = outcome.count("diverged"), outcome.count("succeeded")
    values = np.sort(np.array(ratios))
    return ArmReading(
        arm=arm,
        n=n,
        diverged=diverged,
        succeeded=succeeded,
        diverged_interval=stats.wilson(diverged, n),
        success_interval=stats.wilson(succeeded, n),
        ratios=values,
        quartiles=stats.quartiles(values) if values.size else None,
        outcomes=tuple(outcome),
        members=members,
    )


@dataclass(frozen=True)
class ClipLadder:
    """The experiment: its design, its learning rates and its threshold, and how its results are read.

    Made by :func:`ladder` from a :class:`Calibration`, which it keeps.

    >>> d = ClipDesign(length=4, hidden=2, updates=2, seeds=2, exponents=(0,), parts=2)
    >>> lad = ClipLadder(d, rates=(0.1,), clip=1.0)
    >>> [len(run.members) for run in lad.runs()]
    [2, 2]
    >>> results = {run: run.execute() for run in lad.runs()}
    >>> [(r.unclipped.n, r.clipped.n) for r in lad.read(results)]
    [(2, 2)]
    """

    design: ClipDesign
    rates: tuple[float, ...]
    clip: float
    calibration: Calibration | None = None

    def __post_init__(self) -> None:
        if self.calibration is not None and not isinstance(self.calibration, Calibration):
            raise ValueError(f"calibration must be a Calibration or None, got {self.calibration!r}")
        if not isinstance(self.design, ClipDesign):
            raise ValueError(f"design must be a ClipDesign, got {self.design!r}")
        rates = tuple(float(r) for r in check_list("rates", self.rates, check_positive, "learning rates"))
        if len(rates) != len(self.design.exponents):
            raise ValueError(
                f"rates must give one learning rate per exponent ({len(self.design.exponents)}), got {len(rates)}"
            )
        object.__setattr__(self, "rates", rates)
        object.__setattr__(self, "clip", float(check_positive("clip", self.clip)))

    def members(self, rate: float, arm: str) -> tuple[Member, ...]:
        """The members of one rung and arm, in the order of their seeds."""
        clip = None if check_choice("arm", arm, ARMS) == "unclipped" else self.clip
        return tuple(Member(s, rate, clip) for s in self.design.arm_seeds(arm))

    def runs(self) -> list[ClipRun]:
        """Every member in :attr:`ClipDesign.parts` runs: seed ``i`` of each arm goes to run ``i mod parts``."""
        parts: list[list[Member]] = [[] for _ in range(self.design.parts)]
        for rate in self.rates:
            for arm in ARMS:
                for i, m in enumerate(self.members(rate, arm)):
                    parts[i % self.design.parts].append(m)
        return [ClipRun(self.design, tuple(p)) for p in parts]

    @property
    def high_clip(self) -> float:
        """The second threshold: :data:`HIGH_MULTIPLE` times :attr:`clip`."""
        return HIGH_MULTIPLE * self.clip

    def high_members(self, rate: float) -> tuple[Member, ...]:
        """The members of :data:`HIGH_ARM` at one rung: seeds ``2 seeds .. 3 seeds - 1``, clipped at :attr:`high_clip`.

        >>> lad = ClipLadder(ClipDesign(seeds=2, exponents=(0,), parts=1), rates=(0.1,), clip=1.0)
        >>> lad.high_members(0.1)
        (Member(seed=4, lr=0.1, clip=5.0), Member(seed=5, lr=0.1, clip=5.0))
        """
        d = self.design
        return tuple(Member(s, rate, self.high_clip) for s in range(2 * d.seeds, 3 * d.seeds))

    def high_runs(self) -> list[ClipRun]:
        """The members of :data:`HIGH_ARM` in :attr:`ClipDesign.parts` runs of their own (seed ``i`` to run
        ``i mod parts``)."""
        parts: list[list[Member]] = [[] for _ in range(self.design.parts)]
        for rate in self.rates:
            for i, m in enumerate(self.high_members(rate)):
                parts[i % self.design.parts].append(m)
        return [ClipRun(self.design, tuple(p)) for p in parts]

    def read_high(self, results: Mapping[Any, ClipResult]) -> list[Rung]:
        """Every rung with :data:`HIGH_ARM` in place of the clipped arm, against the same unclipped arm."""
        rungs = []
        for k, rate in zip(self.design.exponents, self.rates):
            free = _reading("unclipped", self.members(rate, "unclipped"), results)
            high = _reading(HIGH_ARM, self.high_members(rate), results)
            rungs.append(
                Rung(
                    exponent=k,
                    rate=rate,
                    unclipped=free,
                    clipped=high,
                    p_diverged=stats.fisher_exact(free.diverged, free.n, high.diverged, high.n),
                    p_success=stats.fisher_exact(free.succeeded, free.n, high.succeeded, high.n),
                )
            )
        return rungs

    def split(self, members: Sequence[Member]) -> list[ClipRun]:
        """``members`` (one arm or more, at one rate) in :attr:`ClipDesign.parts` runs: the ``i``-th member of
        each arm to run ``i mod parts``, as :meth:`runs` deals them.

        >>> lad = ClipLadder(ClipDesign(seeds=2, exponents=(0,), parts=2), rates=(0.1,), clip=1.0)
        >>> [run.members for run in lad.split(lad.members(0.3, "unclipped"))]
        [(Member(seed=0, lr=0.3, clip=None),), (Member(seed=1, lr=0.3, clip=None),)]
        """
        parts: list[list[Member]] = [[] for _ in range(self.design.parts)]
        for i, m in enumerate(members):
            parts[(i % self.design.seeds) % self.design.parts].append(m)
        return [ClipRun(self.design, tuple(p)) for p in parts if p]

    def read_rate(self, rate: float, results: Mapping[Any, ClipResult]) -> tuple[ArmReading, ...]:
        """The unclipped arm, the clipped arm and :data:`HIGH_ARM` at ``rate``, read from ``results``."""
        return (
            _reading("unclipped", self.members(rate, "unclipped"), results),
            _reading("clipped", self.members(rate, "clipped"), results),
            _reading(HIGH_ARM, self.high_members(rate), results),
        )

    def read(self, results: Mapping[Any, ClipResult]) -> list[Rung]:
        """Every rung, read from ``results`` (the results of :meth:`runs`, keyed by run)."""
        rungs = []
        for k, rate in zip(self.design.exponents, self.rates):
            free = _reading("unclipped", self.members(rate, "unclipped"), results)
            clipped = _reading("clipped", self.members(rate, "clipped"), results)
            rungs.append(
                Rung(
                    exponent=k,
                    rate=rate,
                    unclipped=free,
                    clipped=clipped,
                    p_diverged=stats.fisher_exact(free.diverged, free.n, clipped.diverged, clipped.n),
                    p_success=stats.fisher_exact(free.succeeded, free.n, clipped.succeeded, clipped.n),
                )
            )
        return rungs


def ladder(design: ClipDesign = DESIGN, calibration: Calibration | None = None) -> ClipLadder:
    r"""The experiment: rates :math:`\eta^* 2^k` for ``design.exponents``, threshold :math:`\theta`.

    Both from ``calibration`` (:func:`calibrate` of ``design`` if not given).

    >>> d = ClipDesign(exponents=(-1, 0))
    >>> cal = Calibration(seeds=(0, 1), sharpness=(4.0, 4.0), norms=(2.0, 3.0))
    >>> lad = ladder(d, cal)
    >>> lad.rates, lad.clip
    ((0.25, 0.5), 2.5)
    """
    cal = calibrate(design) if calibration is None else calibration
    return ClipLadder(design, tuple(cal.edge * 2.0**k for k in design.exponents), cal.clip, cal)


def figure_rung(rungs: Sequence[Rung]) -> int:
    """The rung a figure shows: the smallest Fisher p of the diverged counts; among equal p, the lowest rate.

    That is the rung where clipping changes most clearly whether networks
    diverge; with no difference anywhere (every p is 1), the lowest rate.

    >>> from types import SimpleNamespace as Rung_
    >>> figure_rung([Rung_(p_diverged=p, rate=r) for p, r in ((1.0, 0.1), (0.01, 0.4), (0.01, 0.2))])
    2
    """
    if not rungs:
        raise ValueError("rungs must hold at least one rung, got none")
    return min(range(len(rungs)), key=lambda k: (rungs[k].p_diverged, rungs[k].rate))


# ---------------------------------------------------------------------------- the pilot rule

PILOT_BAND = (0.3, 0.7)
"""The band the reference arm's divergence rate must lie in at the rate :func:`pilot` picks, ends included:
away from the floor and the ceiling, where a comparison of counts cannot tell."""

PILOT_STEPS = 3
"""The most bisections :func:`pilot` makes."""


@dataclass(frozen=True)
class Pilot:
    """The rate :func:`pilot` picked, and how."""

    rate: float
    """The learning rate picked."""
    rung: int | None
    """The ladder's rung picked, or ``None`` when the rate is a midpoint of the bisection."""
    tried: tuple[tuple[float, int], ...]
    """Each midpoint trained, in order, with the reference arm's diverged count there."""
    found: bool
    """Whether the reference arm's divergence rate at :attr:`rate` lies in :data:`PILOT_BAND`."""


def in_band(diverged: int, n: int) -> bool:
    """Whether ``diverged`` of ``n`` lies in :data:`PILOT_BAND`, ends included.

    >>> in_band(6, 20), in_band(5, 20), in_band(14, 20), in_band(15, 20)
    (True, False, True, False)
    """
    n = check_positive_int("n", n)
    if isinstance(diverged, bool) or not isinstance(diverged, (int, np.integer)) or not 0 <= diverged <= n:
        raise ValueError(f"diverged must be a count from 0 to n ({n}), got {diverged!r}")
    return PILOT_BAND[0] <= diverged / n <= PILOT_BAND[1]


def pilot(rates: Sequence[float], diverged: Sequence[int], n: int, train: Any, steps: int = PILOT_STEPS) -> Pilot:
    r"""The pilot rule: a learning rate at which the reference arm diverges 30% to 70% of the time.

    The reference arm is the unclipped network; ``diverged[k]`` of its ``n``
    networks diverged at the ladder's rung ``rates[k]`` (increasing). If some
    rung lies in :data:`PILOT_BAND`, the rule takes it (the nearest to 50%,
    ties to the smaller rate) and trains nothing. Otherwise it brackets: the
    highest rung below the band and the next, above it; and bisects in
    :math:`\log \eta`, training the reference arm at the geometric midpoint
    :math:`\sqrt{\eta_- \eta_+}` (``train(rate)`` returns its diverged
    count), at most ``steps`` times, stopping at the first midpoint in the
    band. If none is, the last midpoint is taken (:attr:`Pilot.found` false).

    >>> pilot((0.1, 0.2), (0, 9), 20, train=None)
    Pilot(rate=0.2, rung=1, tried=(), found=True)
    >>> p = pilot((0.1, 0.4), (1, 20), 20, train=lambda rate: 10)
    >>> round(p.rate, 3), p.rung, p.found, len(p.tried)
    (0.2, None, True, 1)
    >>> pilot((0.1, 0.4), (19, 20), 20, train=None)
    Traceback (most recent call last):
    ...
    ValueError: diverged must hold a rung below the band (0.3, 0.7) followed by one above it, got (19, 20) of 20
    """
    rates = tuple(float(r) for r in check_list("rates", rates, check_positive, "learning rates"))
    if sorted(set(rates)) != list(rates):
        raise ValueError(f"rates must be increasing and distinct, got {rates!r}")
    n, steps = check_positive_int("n", n), check_positive_int("steps", steps)
    counts = tuple(diverged) if isinstance(diverged, (list, tuple)) else None
    if counts is None or len(counts) != len(rates):
        raise ValueError(f"diverged must give one count per rate ({len(rates)}), got {diverged!r}")
    band = [k for k, d in enumerate(counts) if in_band(d, n)]
    if band:
        k = min(band, key=lambda k: (abs(2 * counts[k] - n), rates[k]))
        return Pilot(rates[k], k, (), True)
    below = [k for k, d in enumerate(counts) if d / n < PILOT_BAND[0]]
    if not below or below[-1] + 1 >= len(rates):
        raise ValueError(
            f"diverged must hold a rung below the band {PILOT_BAND} followed by one above it, got {counts!r} of {n}"
        )
    low, high = rates[below[-1]], rates[below[-1] + 1]
    tried: list[tuple[float, int]] = []
    for _ in range(steps):
        mid = math.sqrt(low * high)
        d = train(mid)
        tried.append((mid, d))
        if in_band(d, n):
            return Pilot(mid, None, tuple(tried), True)
        low, high = (mid, high) if d / n < PILOT_BAND[0] else (low, mid)
    return Pilot(tried[-1][0], None, tuple(tried), False)


# ---------------------------------------------------------------------------- what the page reads

ALPHA = 0.05
"""The family-wise level at which a difference between the arms is called detectable (see :func:`detection_level`)."""


EXPLOSION = 2.0
r"""A gradient *explodes through time* here when, going back, it reaches at least this many times its size at
the last step: an entry of :func:`gradient_reach` of 2 or more. Growth that compounds from step to step
passes any such factor within a few steps; a gradient that merely holds its size (entries near 1) does not."""


def detection_level(rungs: int) -> float:
    """The level at which one rung's Fisher p counts as a detectable difference: :data:`ALPHA` over the rungs.

    Bonferroni's correction: each outcome (divergence, success) is tested at
    every rung, so with ``rungs`` tests the chance of calling any difference
    where there is none stays at most :data:`ALPHA`.

    >>> detection_level(4)
    0.0125
    """
    return ALPHA / check_positive_int("rungs", rungs)


@dataclass(frozen=True)
class Divergence:
    """The members of one arm and rung that diverged, each seen at its first update and where it left.

    A group's *share* is its squared gradient norm over the squared global
    norm (the four shares sum to 1). "Where it left" is the update that made
    it diverge, or the last update before it whose norms were finite.
    """

    members: tuple[Member, ...]
    """The members that diverged."""
    updates: np.ndarray
    """``(n,)``: the update at which each diverged."""
    shares_first: np.ndarray
    """``(n, 4)``: the share of each group of :data:`GROUPS` at update 1."""
    shares_last: np.ndarray
    """``(n, 4)``: the share of each group where the member left."""
    sigma_start: np.ndarray
    """``(n,)``: the largest singular value of :math:`W_{hh}` at the start."""
    sigma_last: np.ndarray
    """``(n,)``: the largest singular value of :math:`W_{hh}` when the member left (before the step it did
    not take)."""
    reach_start: np.ndarray
    """``(n, T)``: :func:`gradient_reach` of each member at the start."""
    reach_last: np.ndarray
    """``(n, T)``: :func:`gradient_reach` of each member with the weights it had when it left."""


def _shares(norms: np.ndarray) -> np.ndarray:
    squares = norms.astype(np.float64) ** 2
    return squares / squares.sum()


def gradient_reach(
    design: ClipDesign, seeds: Sequence[int], params: Mapping[str, np.ndarray] | None = None
) -> np.ndarray:
    r"""How much of the gradient at the last step reaches each step back: ``(n, T)``, distance 0 first.

    Entry :math:`k` of row :math:`e` is :math:`\|\partial\ell/\partial h_{T-k}\| /
    \|\partial\ell/\partial h_T\|` for network :math:`e`
    (:func:`rnnmem.lab.gradient_by_step`, float64, on 256 sequences of the
    task drawn with seed 1, as :func:`rnnmem.experiments.gradient_reach`
    draws them). A gradient that explodes through time grows as it goes back
    (entries above 1); one that vanishes shrinks. The networks are those of
    ``seeds`` (:func:`untrained`), or carry ``params`` (stacked like
    :attr:`ClipResult.params`, one row per seed).

    >>> reach = gradient_reach(ClipDesign(length=5, hidden=3), [0, 1])
    >>> reach.shape, reach[:, 0].tolist()
    ((2, 5), [1.0, 1.0])
    """
    ens = untrained(design, list(seeds))
    if params is not None:
        for name, p in ens.params.items():
            p[...] = params[name]
    with np.errstate(over="ignore", invalid="ignore"):
        norms = lab.gradient_by_step(ens, design.task, n=256, seed=1)
        return norms[:, ::-1] / norms[:, -1:]


def divergences(reading: ArmReading, results: Mapping[Any, ClipResult]) -> Divergence:
    r"""The members of ``reading`` that diverged: gradient shares, :math:`\|W_{hh}\|_2` and :func:`gradient_reach`.

    ``results`` are the results of one design's runs, keyed by run (the
    design is read from the keys).

    >>> d = ClipDesign(length=4, hidden=2, updates=3, seeds=2, exponents=(0,), parts=1)
    >>> lad = ClipLadder(d, rates=(1e6,), clip=1.0)
    >>> results = {run: run.execute() for run in lad.runs()}
    >>> div = divergences(lad.read(results)[0].unclipped, results)
    >>> len(div.members), div.shares_first.shape, bool(np.allclose(div.shares_first.sum(axis=1), 1))
    (2, (2, 4), True)
    >>> div.reach_last.shape
    (2, 4)
    """
    by_member = {m: r for r in results.values() for m in r.members}
    designs = {run.design for run in results}
    if len(designs) != 1:
        raise ValueError(f"results must come from runs of one design, got {len(designs)} designs")
    (design,) = designs
    chosen = [m for m, o in zip(reading.members, reading.outcomes) if o == "diverged"]
    updates, first, last, s0, s1, left = [], [], [], [], [], []
    for m in chosen:
        r = by_member[m]
        i = r.index(m)
        u = r.left_at[i]
        updates.append(u)
        first.append(_shares(r.norms[i, :, 0]))
        finite = [v for v in range(u - 1, -1, -1) if np.isfinite(r.norms[i, :, v]).all()]
        last.append(_shares(r.norms[i, :, finite[0]]) if finite else np.full(len(GROUPS), np.nan))
        s0.append(r.sigma[i, 0])
        s1.append(r.sigma[i, 1])
        left.append({name: p[i] for name, p in r.params.items()})
    n = len(chosen)
    seeds = [m.seed for m in chosen]
    if n:
        reach_start = gradient_reach(design, seeds)
        reach_last = gradient_reach(design, seeds, {name: np.stack([p[name] for p in left]) for name in PARAM_GROUPS})
    else:
        reach_start = reach_last = np.zeros((0, design.length))
    return Divergence(
        members=tuple(chosen),
        updates=np.array(updates, dtype=int),
        shares_first=np.array(first).reshape(n, len(GROUPS)),
        shares_last=np.array(last).reshape(n, len(GROUPS)),
        sigma_start=np.array(s0, dtype=float),
        sigma_last=np.array(s1, dtype=float),
        reach_start=reach_start,
        reach_last=reach_last,
    )


def log_windows(updates: int, windows: int) -> np.ndarray:
    """Window edges for :func:`window_quantiles` that widen geometrically: about ``windows`` windows over
    updates 1 to ``updates``, each at least one update wide (so the first updates stay apart).

    >>> log_windows(100, 5).tolist()
    [1, 2, 3, 6, 16, 40, 101]
    """
    updates = check_positive_int("updates", updates)
    windows = check_positive_int("windows", windows)  # the first windows // 5 updates get one window each
    edges = np.unique(np.round(np.geomspace(1, updates + 1, windows + 1)).astype(int))
    return np.unique(np.concatenate([np.arange(1, min(updates + 1, windows // 5 + 1) + 1), edges]))


def window_quantiles(values: np.ndarray, edges: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quantiles of ``values`` ``(members, updates)`` over windows of updates: the window centres ``(W,)``
    and ``(W, 4)``: lower quartile, median, upper quartile and maximum.

    Updates are counted from 1 (column ``u - 1`` is update ``u``); window
    ``w`` holds updates ``edges[w]`` to ``edges[w + 1] - 1``. Each window
    pools every finite value of every member in it (NaN marks a member that
    has left); a window with none gives NaN.

    >>> centres, q = window_quantiles(np.arange(1.0, 9.0).reshape(2, 4), [1, 3, 5])
    >>> centres.tolist(), q[:, 1].tolist(), q[:, 3].tolist()
    ([1.5, 3.5], [3.5, 5.5], [6.0, 8.0])
    """
    values = np.asarray(values, dtype=np.float64)
    edges = [check_positive_int(f"edges[{k}]", e) for k, e in enumerate(edges)]
    if len(edges) < 2 or any(b <= a for a, b in zip(edges, edges[1:])):
        raise ValueError(f"edges must be at least two increasing update numbers, got {edges!r}")
    out = np.full((len(edges) - 1, 4), np.nan)
    for w, (a, b) in enumerate(zip(edges, edges[1:])):
        block = values[:, a - 1 : b - 1]
        block = block[np.isfinite(block)]
        if block.size:
            out[w, :3] = np.quantile(block, [0.25, 0.5, 0.75])
            out[w, 3] = block.max()
    centres = np.array([(a + b - 1) / 2 for a, b in zip(edges, edges[1:])])
    return centres, out


def clipped_share(results: Mapping[Any, ClipResult], members: Sequence[Member], first: bool = False) -> float:
    r"""The share of the updates of ``members`` at which clipping acted: the global gradient norm (before
    clipping, :attr:`ClipResult.norms` over the groups) above the member's threshold.

    Over every update each member took (its log up to where it left); with
    ``first``, over the members' first updates only. Members without a
    threshold never clip.

    >>> d = ClipDesign(length=4, hidden=2, updates=3, seeds=1, parts=1)
    >>> r = ClipRun(d, (Member(0, 0.1, 1e-9), Member(0, 0.1, 1e9))).execute()
    >>> clipped_share({0: r}, [Member(0, 0.1, 1e-9)]), clipped_share({0: r}, [Member(0, 0.1, 1e9)], first=True)
    (1.0, 0.0)
    """
    by_member = {m: r for r in results.values() for m in r.members}
    hit = total = 0
    for m in members:
        r = by_member[m]
        norms = np.sqrt((r.norms[r.index(m)] ** 2).sum(axis=0))  # (updates,)
        taken = norms[np.isfinite(norms)]
        if first:
            taken = taken[:1]
        limit = math.inf if m.clip is None else m.clip
        hit += int(np.sum(taken > limit))
        total += taken.size
    if total == 0:
        raise ValueError(f"members must have taken at least one update, got {len(members)} members with none")
    return hit / total


def stratified(rungs: Sequence[Rung], field: str) -> float:
    """The exact stratified test of the two arms across the rungs, one stratum per learning rate
    (:func:`rnnmem.stats.stratified_exact`): whether clipping changes ``field`` (``"diverged"`` or
    ``"succeeded"``) at any rate, in one test, where the per-rate tests share the level among the rates.

    >>> from types import SimpleNamespace as N
    >>> arm = lambda k: N(succeeded=k, diverged=0, n=20)
    >>> round(stratified([N(unclipped=arm(0), clipped=arm(3))] * 2, "succeeded"), 4)
    0.0266
    """
    field = check_choice("field", field, ("diverged", "succeeded"))
    tables = [(getattr(r.clipped, field), r.clipped.n, getattr(r.unclipped, field), r.unclipped.n) for r in rungs]
    return stats.stratified_exact(tables)


def null_power(rung: Rung, field: str, effect: float, level: float) -> float:
    """The power of one rung's Fisher test at ``level`` to find the clipped arm ``effect`` above the unclipped
    arm's observed share of ``field`` (below it, where above would pass 1): :func:`rnnmem.stats.fisher_power`.

    >>> from types import SimpleNamespace as N
    >>> rung = N(unclipped=N(succeeded=0, n=20), clipped=N(succeeded=0, n=20))
    >>> round(null_power(rung, "succeeded", 0.2, 0.0125), 2)
    0.09
    """
    field = check_choice("field", field, ("diverged", "succeeded"))
    base = getattr(rung.unclipped, field) / rung.unclipped.n
    other = base + effect if base + effect <= 1.0 else base - effect
    return stats.fisher_power(other, base, rung.clipped.n, rung.unclipped.n, alpha=level)

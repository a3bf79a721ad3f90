r"""The lab's experiments: models named by a spec, runs as values, and what is read from their results.

The chapter "Memory, measured by training" trains ensembles with
:func:`rnnmem.lab.train`; this module says what it trains and how the results
are read, so that a snippet or a notebook can repeat any of its experiments.

* **Models** are named by a spec, ``"rnn"``, ``"gru"``, ``"lstm"`` (PyTorch's
  draw), ``"lstm:B"`` (the LSTM with effective forget bias :math:`b_f = B`)
  or ``"lstm:chrono"`` (chrono initialization, Tallec and Ollivier 2018, with
  :math:`T_{\max}` the sequence length). :meth:`ModelSpec.parse` is the one
  parser of that language.
* **The design** fixed before any result was looked at: recall over an
  alphabet of :data:`ALPHABET` tokens, the models :data:`CONFIGS`, and the
  training settings :data:`DESIGN` (a :class:`Design`).
* **Runs** are frozen values, :class:`RecallRun`, :class:`DropoutRun` and
  :class:`SGDRun`: everything a run depends on, and nothing else, so a run can
  key a cache, and ``run.execute()`` is a pure function of it (the same
  numbers in any process).
* **Reading the results**: a member *succeeds* when it reaches the threshold
  and never diverges (:attr:`RunResult.successes`, the convention of
  :mod:`rnnmem.lab`); the *measured horizon* of a model is the longest lag at
  which at least half of its seeds succeed (:func:`measured_horizon`); the
  *starting factor* is the per-step factor a gradient starts with
  (:func:`starting_factor`); :func:`gradient_reach` is the share of the
  gradient at the query that reaches each distance back.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np

from . import lab, memory, tasks
from .checks import (
    Check,
    check_choice,
    check_finite,
    check_list,
    check_nonnegative_int,
    check_positive,
    check_positive_int,
)
from .dropout import check_keep
from .ensemble import MODELS

__all__ = [
    "ALPHABET",
    "CONFIGS",
    "DESIGN",
    "SCHEMES",
    "MODEL_SPECS",
    "Model",
    "Lags",
    "Threshold",
    "Keep",
    "AddingLength",
    "ModelSpec",
    "Design",
    "RunResult",
    "SGDResult",
    "RecallRun",
    "DropoutRun",
    "SGDRun",
    "Sweep",
    "check_model",
    "check_lags",
    "check_adding_length",
    "by_starting_horizon",
    "measured_horizon",
    "starting_factor",
    "gradient_reach",
    "carry_survival",
    "sgd_run",
    "clip_ladder",
    "figure_rung",
]

ALPHABET = 8
"""Tokens of the recall task (chance ``1/8``); the lag is the number of distractors."""

CONFIGS = ("rnn", "gru", "lstm:0", "lstm:1", "lstm:2", "lstm:chrono")
"""The models of the lab: the tanh RNN, the GRU, and the LSTM with forget bias 0, 1, 2 and chrono."""

SCHEMES: tuple[Literal["none", "per-step", "per-sequence"], ...] = ("none", "per-step", "per-sequence")
"""Dropout on the LSTM's carry line: none, a fresh mask at every step, one mask per sequence."""

MODEL_SPECS = "'rnn', 'gru', 'lstm', 'lstm:B' with B a forget bias (a finite number), or 'lstm:chrono'"
"""The model-spec language in words (what an error message says is allowed)."""


# ---------------------------------------------------------------------------- models


@dataclass(frozen=True)
class ModelSpec:
    """A model of the lab: the cell and how its gate biases start.

    ``cell`` is ``"rnn"``, ``"gru"`` or ``"lstm"``; ``forget_bias`` (LSTM only)
    sets the effective forget bias :math:`b_{if} + b_{hf}` of every unit, and
    ``init="chrono"`` (LSTM only, not with ``forget_bias``) draws chrono
    biases with :math:`T_{\\max}` the sequence length; otherwise PyTorch's
    uniform draw (:class:`rnnmem.ensemble.Ensemble`). ``str(spec)`` is the
    spec's text, :meth:`parse` reads it back.

    >>> ModelSpec.parse("lstm:2")
    ModelSpec(cell='lstm', forget_bias=2.0, init='default')
    >>> str(ModelSpec("lstm", init="chrono")), ModelSpec.parse("lstm:2").key
    ('lstm:chrono', 'lstm2')
    >>> ModelSpec("gru", forget_bias=1)
    Traceback (most recent call last):
    ...
    ValueError: forget_bias sets the LSTM's forget gate; cell must be 'lstm', got 'gru'
    """

    cell: str
    """``"rnn"``, ``"gru"`` or ``"lstm"``."""
    forget_bias: float | None = None
    """The LSTM's effective forget bias, or ``None``: drawn (or chrono)."""
    init: str = "default"
    """``"default"`` (PyTorch's draw) or ``"chrono"``."""

    def __post_init__(self) -> None:
        check_choice("cell", self.cell, MODELS)
        check_choice("init", self.init, ("default", "chrono"))
        if self.forget_bias is not None:
            object.__setattr__(self, "forget_bias", float(check_finite("forget_bias", self.forget_bias)))
            if self.cell != "lstm":
                raise ValueError(f"forget_bias sets the LSTM's forget gate; cell must be 'lstm', got {self.cell!r}")
            if self.init == "chrono":
                raise ValueError("forget_bias and init='chrono' both set the forget bias: give one of them")
        if self.init == "chrono" and self.cell != "lstm":
            raise ValueError(f"init='chrono' sets the LSTM's gate biases; cell must be 'lstm', got {self.cell!r}")

    @classmethod
    def parse(cls, value: Any, name: str = "model") -> ModelSpec:
        """The model a spec names (:data:`MODEL_SPECS`); a :class:`ModelSpec` is returned as it is.

        >>> [str(ModelSpec.parse(s)) for s in ("rnn", "lstm", "lstm:1.0", "lstm:chrono")]
        ['rnn', 'lstm', 'lstm:1', 'lstm:chrono']
        >>> ModelSpec.parse("lstm:x", "models[0]")
        Traceback (most recent call last):
        ...
        ValueError: models[0] must be a model: 'rnn', 'gru', 'lstm', 'lstm:B' with B a forget bias \
(a finite number), or 'lstm:chrono', got 'lstm:x'
        """
        if isinstance(value, ModelSpec):
            return value
        problem = ValueError(f"{name} must be a model: {MODEL_SPECS}, got {value!r}")
        if not isinstance(value, str):
            raise problem
        cell, colon, rest = value.partition(":")
        if cell not in MODELS or (colon and cell != "lstm"):
            raise problem
        if not colon:
            return cls(cell)
        if rest == "chrono":
            return cls("lstm", init="chrono")
        try:
            bias = float(rest)
        except ValueError:
            raise problem from None
        if not math.isfinite(bias):
            raise problem
        return cls("lstm", forget_bias=bias)

    def __str__(self) -> str:
        if self.init == "chrono":
            return "lstm:chrono"
        if self.forget_bias is None:
            return self.cell
        short = f"{self.forget_bias:g}"
        return f"lstm:{short if float(short) == self.forget_bias else repr(self.forget_bias)}"

    @property
    def key(self) -> str:
        """The model's name in a builder's values: ``rnn``, ``gru``, ``lstm``, ``lstm2`` (forget bias 2), ``chrono``.

        >>> ModelSpec.parse("lstm:chrono").key
        'chrono'
        """
        return "chrono" if self.init == "chrono" else str(self).replace(":", "")


def check_model(name: str, value: Any) -> ModelSpec:
    """A model spec (:data:`MODEL_SPECS`), parsed, with errors naming ``name``.

    >>> check_model("model", "gru")
    ModelSpec(cell='gru', forget_bias=None, init='default')
    """
    return ModelSpec.parse(value, name)


def by_starting_horizon(models: Any) -> list[ModelSpec]:
    r"""The LSTMs among ``models`` in the order of their starting horizons, shortest first (a stable sort).

    The forget gate starts near :math:`\sigma(b_f)`, which grows with
    :math:`b_f`; PyTorch's draw centres the effective bias at 0 and ranks as
    :math:`b_f = 0`; chrono, whose units start with lifetimes up to the
    sequence length, comes last.

    >>> [str(m) for m in by_starting_horizon(["lstm:chrono", "rnn", "lstm:2", "lstm", "lstm:0"])]
    ['lstm', 'lstm:0', 'lstm:2', 'lstm:chrono']
    """
    specs = [ModelSpec.parse(m, f"models[{i}]") for i, m in enumerate(models)]

    def rank(m: ModelSpec) -> float:
        return math.inf if m.init == "chrono" else (m.forget_bias or 0.0)

    return sorted((m for m in specs if m.cell == "lstm"), key=rank)


# ---------------------------------------------------------------------------- argument rules


def check_lags(name: str, values: Any) -> list[int]:
    """Lags: a non-empty list of whole numbers >= 1, increasing and distinct.

    >>> check_lags("lags", (2, 5.0))
    [2, 5]
    >>> check_lags("lags", [5, 2])
    Traceback (most recent call last):
    ...
    ValueError: lags must be increasing and distinct, got [5, 2]
    """
    lags = check_list(name, values, check_positive_int, "lags (whole numbers >= 1)")
    if sorted(set(lags)) != lags:
        raise ValueError(f"{name} must be increasing and distinct, got {values!r}")
    return lags


def check_adding_length(name: str, value: Any) -> int:
    """The adding problem's sequence length: a whole number >= 2 (one marked step in each half).

    >>> check_adding_length("length", 20)
    20
    """
    length = check_positive_int(name, value)
    if length < 2:
        raise ValueError(f"{name} must be a whole number >= 2, got {value!r}")
    return length


def _check_model_text(name: str, value: Any) -> Any:
    ModelSpec.parse(value, name)
    return value


def _check_threshold(name: str, value: Any) -> float:
    return lab.check_threshold(value)


#: A model spec (:data:`MODEL_SPECS`): checked by :meth:`ModelSpec.parse`, passed on as it was written.
Model = Annotated[str, Check(_check_model_text, f"models ({MODEL_SPECS})")]
#: Lags: whole numbers >= 1, increasing and distinct.
Lags = Annotated[Sequence[int], Check(check_lags, "lags")]
#: A success threshold in (0, 1] (:func:`rnnmem.lab.check_threshold`).
Threshold = Annotated[float, Check(_check_threshold, "thresholds in (0, 1]")]
#: A keep probability in (0, 1] (:func:`rnnmem.dropout.check_keep`).
Keep = Annotated[float, Check(check_keep, "keep probabilities in (0, 1]")]
#: The adding problem's length, a whole number >= 2.
AddingLength = Annotated[int, Check(check_adding_length, "whole numbers >= 2")]


def _seeds(name: str, values: Any) -> tuple[int, ...]:
    """Seeds: a non-empty list, tuple or range of whole numbers >= 0, as a tuple."""
    if isinstance(values, range):
        values = tuple(values)
    return tuple(check_list(name, values, check_nonnegative_int, "seeds (whole numbers >= 0)"))


# ---------------------------------------------------------------------------- the design


@dataclass(frozen=True)
class Design:
    """How every recall run of the lab is trained and judged (the arguments of :func:`rnnmem.lab.train`).

    Hidden units, batch, Adam's learning rate, clipping by global norm
    (``None``: none), the budget of updates, evaluation every ``eval_every``
    updates on ``eval_size`` held-out sequences, and the success threshold.
    """

    hidden: int = 16
    batch: int = 32
    lr: float = 0.01
    clip: float | None = 1.0
    steps: int = 300
    eval_every: int = 25
    eval_size: int = 256
    threshold: float = 0.9

    def __post_init__(self) -> None:
        for name in ("hidden", "batch", "steps", "eval_every", "eval_size"):
            object.__setattr__(self, name, check_positive_int(name, getattr(self, name)))
        object.__setattr__(self, "lr", float(check_positive("lr", self.lr)))
        if self.clip is not None:
            object.__setattr__(self, "clip", float(check_positive("clip", self.clip)))
        object.__setattr__(self, "threshold", lab.check_threshold(self.threshold))


DESIGN = Design()
"""The lab's design: 16 units, batches of 32, Adam 0.01, clipping at 1, 300 updates, success at 0.9."""


# ---------------------------------------------------------------------------- results


@dataclass(frozen=True)
class RunResult:
    """What the lab keeps of one trained ensemble (axis 0 is the member, in the order of the seeds).

    A member *succeeds* when it reached the threshold and never diverged, as
    :class:`rnnmem.lab.LabResult` counts it.
    """

    eval_steps: np.ndarray
    """Updates done at each evaluation."""
    scores: np.ndarray
    """``(E, evaluations)``: held-out accuracy (or mean squared error)."""
    losses: np.ndarray
    """``(E, updates)``: training loss per update (NaN after stopping or diverging)."""
    grad_norms: np.ndarray
    """``(E, updates)``: global gradient norm before clipping."""
    success_step: tuple
    """Per member: updates to success, or ``None``."""
    diverged_at: tuple
    """Per member: the update at which it diverged, or ``None``."""
    params: dict
    """The trained parameters, stacked over members, as :attr:`rnnmem.ensemble.Ensemble.params`."""

    @classmethod
    def of(cls, result: lab.LabResult) -> RunResult:
        """The record of a :func:`rnnmem.lab.train` result (the parameters copied, the ensemble dropped).

        >>> run = RecallRun("gru", lag=1, seeds=(0,), design=Design(hidden=4, steps=2, eval_every=1)).execute()
        >>> run.losses.shape, len(run.success_step)
        ((1, 2), 1)
        """
        return cls(
            eval_steps=result.eval_steps,
            scores=result.scores,
            losses=result.losses,
            grad_norms=result.grad_norms,
            success_step=tuple(result.success_step),
            diverged_at=tuple(result.diverged_at),
            params={k: v.copy() for k, v in result.ensemble.params.items()},
        )

    @property
    def succeeded(self) -> list[bool]:
        """Per member: reached the threshold and never diverged."""
        return [s is not None and d is None for s, d in zip(self.success_step, self.diverged_at)]

    @property
    def successes(self) -> int:
        """How many members succeeded."""
        return sum(self.succeeded)

    @property
    def updates_to_success(self) -> list[int]:
        """The updates to success of the members that succeeded, in increasing order."""
        return sorted(s for s, ok in zip(self.success_step, self.succeeded) if ok)

    @property
    def final_scores(self) -> np.ndarray:
        """``(E,)``: each member's held-out score at the last evaluation."""
        return self.scores[:, -1]


@dataclass(frozen=True)
class SGDResult:
    """One :func:`sgd_run`: curves, divergence and held-out error per member, and the baseline error."""

    losses: np.ndarray
    """``(E, steps)``: training loss per update (NaN once diverged)."""
    grad_norms: np.ndarray
    """``(E, steps)``: global gradient norm before clipping."""
    diverged_at: tuple
    """Per member: the update at which it diverged, or ``None``."""
    mse: np.ndarray
    """``(E,)``: held-out mean squared error at the end, NaN for a member that diverged."""
    baseline: float
    """The error of the best constant prediction (1/6 for the adding problem)."""

    @property
    def diverged(self) -> int:
        """How many members diverged."""
        return sum(d is not None for d in self.diverged_at)

    @property
    def error_ratio(self) -> np.ndarray:
        """``(E,)``: held-out error over the baseline (NaN for a member that diverged)."""
        return self.mse / self.baseline

    @property
    def median_ratio(self) -> float:
        """The median of :attr:`error_ratio` over the members that did not diverge (NaN if none)."""
        ok = self.error_ratio[np.isfinite(self.error_ratio)]
        return float(np.median(ok)) if ok.size else math.nan


# ---------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class RecallRun:
    """One ensemble, one seed per member, trained on recall at ``lag`` with the ``design``.

    Training stops early at the first evaluation at which every member has
    succeeded or diverged (``stop_when_done``).

    >>> run = RecallRun("lstm:1", lag=2, seeds=[0, 1], design=Design(hidden=8, steps=50))
    >>> run.model, run.seeds
    (ModelSpec(cell='lstm', forget_bias=1.0, init='default'), (0, 1))
    >>> run.execute().successes
    0
    """

    model: ModelSpec
    lag: int
    seeds: tuple[int, ...]
    design: Design = DESIGN
    alphabet: int = ALPHABET

    def __post_init__(self) -> None:
        object.__setattr__(self, "model", ModelSpec.parse(self.model))
        object.__setattr__(self, "lag", check_positive_int("lag", self.lag))
        object.__setattr__(self, "seeds", _seeds("seeds", self.seeds))
        object.__setattr__(self, "alphabet", check_positive_int("alphabet", self.alphabet))
        if not isinstance(self.design, Design):
            raise ValueError(f"design must be a Design, got {self.design!r}")

    @property
    def cost(self) -> float:
        """A relative cost, to train the costliest runs first: gates times steps times members."""
        return {"rnn": 1, "gru": 3}.get(self.model.cell, 4) * (self.lag + 2) * len(self.seeds)

    def execute(self) -> RunResult:
        """Train the run (:func:`rnnmem.lab.train`); a pure function of the run."""
        result = lab.train(
            tasks.recall(self.lag, self.alphabet),
            self.model.cell,
            seeds=list(self.seeds),
            forget_bias=self.model.forget_bias,
            init=self.model.init,
            stop_when_done=True,
            **dataclasses.asdict(self.design),
        )
        return RunResult.of(result)


@dataclass(frozen=True)
class DropoutRun:
    r"""The LSTM with forget bias ``forget_bias`` on recall at ``lag``, with inverted dropout on its carry line.

    ``scheme`` is one of :data:`SCHEMES`: no mask, a fresh mask at every step,
    or one mask per sequence, keep probability ``keep``
    (:func:`rnnmem.lab.train`'s ``carry_keep`` and ``carry_mask``). The whole
    budget is trained.

    >>> run = DropoutRun("per-step", keep=0.9, forget_bias=2, lag=2, seeds=[0], design=Design(hidden=4, steps=3))
    >>> run.execute().losses.shape
    (1, 3)
    """

    scheme: Literal["none", "per-step", "per-sequence"]
    keep: float
    forget_bias: float
    lag: int
    seeds: tuple[int, ...]
    design: Design = DESIGN
    alphabet: int = ALPHABET

    def __post_init__(self) -> None:
        check_choice("scheme", self.scheme, SCHEMES)
        object.__setattr__(self, "keep", check_keep("keep", self.keep))
        object.__setattr__(self, "forget_bias", float(check_finite("forget_bias", self.forget_bias)))
        object.__setattr__(self, "lag", check_positive_int("lag", self.lag))
        object.__setattr__(self, "seeds", _seeds("seeds", self.seeds))
        object.__setattr__(self, "alphabet", check_positive_int("alphabet", self.alphabet))
        if not isinstance(self.design, Design):
            raise ValueError(f"design must be a Design, got {self.design!r}")

    @property
    def cost(self) -> float:
        """A relative cost: the LSTM's four gates and the masks, times steps times members."""
        return 6 * (self.lag + 2) * len(self.seeds)

    def execute(self) -> RunResult:
        """Train the run (:func:`rnnmem.lab.train`); a pure function of the run."""
        result = lab.train(
            tasks.recall(self.lag, self.alphabet),
            "lstm",
            seeds=list(self.seeds),
            forget_bias=self.forget_bias,
            carry_keep=None if self.scheme == "none" else self.keep,
            carry_mask="sequence" if self.scheme == "per-sequence" else "step",
            **dataclasses.asdict(self.design),
        )
        return RunResult.of(result)


def sgd_run(
    model: Any,
    length: int,
    lr: float,
    clip: float | None,
    seeds: Any,
    *,
    hidden: int = 16,
    batch: int = 32,
    steps: int = 200,
    eval_size: int = 512,
) -> SGDResult:
    r"""Plain gradient descent (no Adam) on the adding problem of ``length``, with or without clipping.

    :func:`rnnmem.lab.train` with ``optimizer="sgd"``,
    :math:`\theta \leftarrow \theta - \eta\, g \min(1, \theta_c/\|g\|)` with
    :math:`\theta_c` = ``clip`` (``None``: no clipping): a member whose loss or
    gradient norm stops being finite is frozen and reported as diverged. The
    held-out error is measured once, after the last update, on ``eval_size``
    sequences; the baseline is the constant prediction's 1/6.

    >>> free = sgd_run("rnn", 6, 1e12, None, [0], hidden=4, batch=8, steps=20)
    >>> free.diverged, bool(np.isnan(free.mse[0])), round(free.baseline, 3)
    (1, True, 0.167)
    """
    spec = ModelSpec.parse(model)
    task = tasks.adding(length)
    result = lab.train(
        task,
        spec.cell,
        seeds=list(seeds),
        hidden=hidden,
        batch=batch,
        steps=steps,
        lr=lr,
        clip=clip,
        forget_bias=spec.forget_bias,
        init=spec.init,
        optimizer="sgd",
        eval_every=steps,
        eval_size=eval_size,
    )
    mse = np.where([d is None for d in result.diverged_at], result.scores[:, -1], np.nan)
    return SGDResult(
        losses=result.losses,
        grad_norms=result.grad_norms,
        diverged_at=tuple(result.diverged_at),
        mse=mse,
        baseline=task.baseline_mse,
    )


@dataclass(frozen=True)
class SGDRun:
    """One :func:`sgd_run` as a value: the model, the adding problem's length, the rate, the clipping norm.

    >>> SGDRun("rnn", 6, 1e12, None, [0], hidden=4, batch=8, steps=20).execute().diverged
    1
    """

    model: ModelSpec
    length: int
    lr: float
    clip: float | None
    seeds: tuple[int, ...]
    hidden: int = 16
    batch: int = 32
    steps: int = 200
    eval_size: int = 512

    def __post_init__(self) -> None:
        object.__setattr__(self, "model", ModelSpec.parse(self.model))
        object.__setattr__(self, "length", check_adding_length("length", self.length))
        object.__setattr__(self, "lr", float(check_positive("lr", self.lr)))
        if self.clip is not None:
            object.__setattr__(self, "clip", float(check_positive("clip", self.clip)))
        object.__setattr__(self, "seeds", _seeds("seeds", self.seeds))
        for name in ("hidden", "batch", "steps", "eval_size"):
            object.__setattr__(self, name, check_positive_int(name, getattr(self, name)))

    @property
    def cost(self) -> float:
        """A relative cost: steps times members (times four, to weigh against the recall runs)."""
        return 4 * self.length * len(self.seeds)

    def execute(self) -> SGDResult:
        """Train the run (:func:`sgd_run`); a pure function of the run."""
        return sgd_run(
            self.model,
            self.length,
            self.lr,
            self.clip,
            self.seeds,
            hidden=self.hidden,
            batch=self.batch,
            steps=self.steps,
            eval_size=self.eval_size,
        )


def clip_ladder(
    model: Any, length: int, rates: Any, clip: float, seeds: Any, *, hidden: int = 16, batch: int = 32, steps: int = 200
) -> list[tuple[SGDRun, SGDRun]]:
    """The clipping experiment's runs: per learning rate, the unclipped run and the run clipped at ``clip``.

    >>> [(a.lr, a.clip, b.clip) for a, b in clip_ladder("lstm:1", 20, [0.5, 1.0], 1.0, [0, 1])]
    [(0.5, None, 1.0), (1.0, None, 1.0)]
    """
    rates = check_list("rates", rates, check_positive, "learning rates")
    clip = float(check_positive("clip", clip))

    def run(lr: float, c: float | None) -> SGDRun:
        return SGDRun(model, length, lr, c, seeds, hidden=hidden, batch=batch, steps=steps)

    return [(run(lr, None), run(lr, clip)) for lr in rates]


def figure_rung(unclipped: list[SGDResult]) -> int:
    """The rung the clipping figure shows: the first at which every unclipped seed diverged, else the last.

    >>> ok = SGDResult(np.zeros((1, 1)), np.zeros((1, 1)), (None,), np.zeros(1), 1 / 6)
    >>> bad = SGDResult(np.zeros((1, 1)), np.zeros((1, 1)), (0,), np.full(1, np.nan), 1 / 6)
    >>> figure_rung([ok, bad, bad]), figure_rung([ok, ok])
    (1, 1)
    """
    return next((k for k, run in enumerate(unclipped) if run.diverged == len(run.diverged_at)), len(unclipped) - 1)


# ---------------------------------------------------------------------------- the sweep


@dataclass(frozen=True)
class Sweep:
    """Success against lag: every model trained at every lag, with the same seeds and design.

    >>> sweep = Sweep(["rnn", "lstm:2"], lags=[1, 3], seeds=[0, 1], design=Design(hidden=4, steps=6))
    >>> [(str(r.model), r.lag) for r in sweep.runs()]
    [('rnn', 1), ('rnn', 3), ('lstm:2', 1), ('lstm:2', 3)]
    >>> counts = sweep.counts({run: run.execute() for run in sweep.runs()})
    >>> {str(m): c for m, c in counts.items()}
    {'rnn': [0, 0], 'lstm:2': [0, 0]}
    """

    models: tuple[ModelSpec, ...]
    lags: tuple[int, ...]
    seeds: tuple[int, ...]
    design: Design = DESIGN

    def __post_init__(self) -> None:
        if not isinstance(self.models, (list, tuple)) or not self.models:
            raise ValueError(f"models must be a non-empty list of models ({MODEL_SPECS}), got {self.models!r}")
        object.__setattr__(self, "models", tuple(check_model(f"models[{i}]", m) for i, m in enumerate(self.models)))
        object.__setattr__(self, "lags", tuple(check_lags("lags", self.lags)))
        object.__setattr__(self, "seeds", _seeds("seeds", self.seeds))
        if not isinstance(self.design, Design):
            raise ValueError(f"design must be a Design, got {self.design!r}")

    def run(self, model: Any, lag: int) -> RecallRun:
        """The run of one model at one lag."""
        return RecallRun(model, lag, self.seeds, self.design)

    def runs(self) -> list[RecallRun]:
        """Every run of the sweep, model by model, lags in increasing order."""
        return [self.run(m, lag) for m in self.models for lag in self.lags]

    def counts(self, results: Any) -> dict[ModelSpec, list[int]]:
        """Per model, its successes at each lag, read from ``results`` (a mapping from run to result)."""
        return {m: [results[self.run(m, lag)].successes for lag in self.lags] for m in self.models}


def measured_horizon(lags: Any, counts: Any, seeds: int) -> int | None:
    """The longest lag at which at least half of the ``seeds`` succeed (``None``: not even the shortest).

    ``counts[i]`` is the number of seeds that succeeded at ``lags[i]``; a lag
    passes when ``2 * counts[i] >= seeds``. The longest passing lag is taken
    even if a shorter one fails.

    >>> measured_horizon([2, 5, 10], [3, 2, 1], 3), measured_horizon([2, 5], [0, 0], 3)
    (5, None)
    """
    passed = [lag for lag, k in zip(lags, counts) if 2 * k >= seeds]
    return max(passed) if passed else None


def starting_factor(model: Any, lag: int, seeds: Any, hidden: int, alphabet: int = ALPHABET) -> float:
    r"""The per-step factor a gradient starts with: the median over the seeds' units.

    LSTM and GRU: the forget (update) gate at zero input and state,
    :math:`\sigma(b_{i} + b_{h})` of its rows (rows :math:`H` to :math:`2H` of
    PyTorch's gate order). Tanh RNN: the spectral radius of :math:`W_{hh}`, an
    upper bound on the per-step factor since :math:`\tanh' \le 1`. Untrained
    models as :func:`rnnmem.lab.make_ensemble` draws them for recall at ``lag``.

    >>> round(starting_factor("lstm:2", 3, [0, 1], 8), 3), round(float(memory.sigmoid(2.0)), 3)
    (0.881, 0.881)
    """
    spec = ModelSpec.parse(model)
    ens = lab.make_ensemble(
        tasks.recall(lag, alphabet),
        spec.cell,
        list(seeds),
        hidden=hidden,
        forget_bias=spec.forget_bias,
        init=spec.init,
    )
    p = ens.params
    H = hidden
    if spec.cell == "rnn":
        return float(np.median([max(abs(np.linalg.eigvals(W))) for W in p["weight_hh_l0"]]))
    b = p["bias_ih_l0"] + p["bias_hh_l0"]
    return float(np.median(memory.sigmoid(b[:, H : 2 * H])))


def gradient_reach(
    model: Any,
    lag: int,
    seeds: Any,
    hidden: int,
    *,
    params: dict | None = None,
    sequences: int = 256,
    alphabet: int = ALPHABET,
) -> np.ndarray:
    r"""The share of the gradient at the query that reaches each distance back: ``(T,)``, distance 0 first.

    Entry :math:`k` is :math:`\|\partial\ell/\partial h_{T-k}\| / \|\partial\ell/\partial h_T\|`
    (:func:`rnnmem.lab.gradient_by_step` on ``sequences`` recall sequences
    drawn with seed 1), the median over the seeds. The models are drawn as
    :func:`rnnmem.lab.make_ensemble` draws them, or carry ``params`` (trained
    ones, :attr:`RunResult.params`).

    >>> share = gradient_reach("lstm:2", lag=3, seeds=[0, 1], hidden=8, sequences=16)
    >>> share.shape, float(share[0]), bool(share[-1] < 1)
    ((5,), 1.0, True)
    """
    spec = ModelSpec.parse(model)
    task = tasks.recall(lag, alphabet)
    ens = lab.make_ensemble(task, spec.cell, list(seeds), hidden=hidden, forget_bias=spec.forget_bias, init=spec.init)
    if params is not None:
        for name, value in params.items():
            ens.params[name][...] = value
    norms = lab.gradient_by_step(ens, task, n=sequences, seed=1)
    return np.median(norms[:, ::-1] / norms[:, -1:], axis=0)


def carry_survival(scheme: str, keep: float, lag: int) -> float:
    r"""The chance that a unit's carried value is kept across the ``lag + 1`` steps of recall.

    No dropout: 1; a fresh mask at every step: :math:`p^{\text{lag}+1}`; one
    mask per sequence: :math:`p` (the same mask at every step), with
    :math:`p` = ``keep``.

    >>> [round(carry_survival(s, 0.5, 2), 3) for s in SCHEMES]
    [1.0, 0.125, 0.5]
    """
    scheme = check_choice("scheme", scheme, SCHEMES)
    keep = check_keep("keep", keep)
    lag = check_positive_int("lag", lag)
    return {"none": 1.0, "per-step": keep ** (lag + 1), "per-sequence": keep}[scheme]

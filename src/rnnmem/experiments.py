r"""The lab's experiments: models named by a spec, runs as values, the recall design, and how results are read.

The chapters "Memory, measured by training" and "Controls and clipping, measured" train ensembles with
:func:`rnnmem.lab.train`; this module says what it trains and how the results
are read, so that a snippet or a notebook can repeat any of its experiments.

* **Models** are named by a spec, ``"rnn"``, ``"gru"``, ``"lstm"`` (PyTorch's
  draw), ``"lstm:B"`` (the LSTM with effective forget bias :math:`b_f = B`),
  ``"lstm:chrono"`` (chrono initialization, Tallec and Ollivier 2018, with
  :math:`T_{\max}` the sequence length, which also sets :math:`b_i = -b_f`),
  and any LSTM spec followed by ``":iB"`` (its effective input-gate bias set
  to :math:`b_i = B`). :meth:`ModelSpec.parse` is the one parser of that
  language.
* **The design**, fixed before any result was looked at (the constants
  below): recall over an alphabet of :data:`ALPHABET` tokens, the models
  :data:`CONFIGS`, the seeds :data:`SEEDS` in every cell, the training
  settings :data:`DESIGN`, in :data:`PRECISION`; two budgets
  (:data:`SHORT`, :data:`LONG`) over the lags :data:`SHORT_LAGS` and
  :data:`LONG_LAGS`, each extended by :data:`EXTEND_STEP` up to
  :data:`EXTEND_TO` by a rule stated before the runs (:class:`Sweep`); a
  member leaves training at its first success (``retire=True``).
* **Runs** are frozen values, :class:`RecallRun` and :class:`DropoutRun`
  (the clipping experiment's are in :mod:`rnnmem.clip_lab`): everything a run depends on, and nothing else, so a run can
  key a cache, and ``run.execute()`` is a pure function of it (the same
  numbers in any process).
* **One run, two budgets.** A member's first :data:`SHORT` updates are the
  same whatever the budget (its batches, its evaluations and, with
  ``retire=True``, its retirement depend on nothing later), so the outcome
  within :data:`SHORT` updates at a lag of the long grid is read from the
  long run (:meth:`RunResult.outcome`); the tests hold the two equal.
* **Reading the results** (:class:`Outcome`): successes out of the seeds with
  a Wilson interval, final held-out accuracy (a retired member's is its
  accuracy at retirement), updates to success as censored times
  (Kaplan-Meier); per model and budget, a Firth logistic fit of success
  against lag and its 50% lag, :func:`lag_learned`. Differences are tested
  with Fisher's exact test (:func:`rnnmem.stats.fisher_exact`).
* **The controls' second design**: each control runs at the lag where its
  reference arm's success rate in the pilot (the main grid at the short
  budget) lies in :data:`PILOT_BAND` and is nearest one half
  (:func:`pilot_lag`); its runs train without retirement, so every seed has
  a held-out score at the end of the budget (:meth:`RunResult.scores_at`,
  :meth:`RunResult.successes_at`); :func:`forget_biases` and
  :func:`masked_accuracy` measure how a carry mask acts.
* **Starting points**: the per-step factor a gradient starts with at zero
  input (:func:`starting_factor`), the horizon it predicts
  (:func:`starting_horizon`), the tanh RNN's spectral radius beside its
  spectral norm (:func:`rnn_spectra`), :func:`gradient_reach`, the share
  of the gradient at the query that reaches each distance back, and
  :func:`start_rates`, the per-step factor that share shrinks by, per member.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import numpy as np

from . import cells, diagnostics, lab, memory, stats, tasks
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
    "SEEDS",
    "PRECISION",
    "DESIGN",
    "SHORT",
    "LONG",
    "SHORT_LAGS",
    "LONG_LAGS",
    "LONG_LAGS_DESIGNED",
    "LONG_LAGS_FALLBACK",
    "EXTEND_STEP",
    "EXTEND_TO",
    "LONG_RATE",
    "SURVIVAL_LAGS",
    "DIAGNOSTIC_LAG",
    "PROBE_SIZE",
    "CONTROL_LAG",
    "BIASES",
    "INPUT_CONTROLS",
    "DROPOUT_KEEP",
    "DROPOUT_BIAS",
    "SGD_RATES",
    "SGD_CALIBRATION",
    "SGD_LAGS",
    "PILOT_BAND",
    "EQUIVALENCE_MARGIN",
    "INPUT_RERUNS",
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
    "Outcome",
    "RecallRun",
    "DropoutRun",
    "Sweep",
    "SweepResult",
    "SweepChains",
    "check_model",
    "check_lags",
    "check_adding_length",
    "by_starting_horizon",
    "dropout_equivalent_bias",
    "sgd_rate",
    "pilot_lag",
    "calibration_lag",
    "forget_biases",
    "masked_accuracy",
    "lag_learned",
    "lag_learned_text",
    "contrast_lag",
    "starting_factor",
    "starting_horizon",
    "rnn_spectra",
    "gradient_reach",
    "start_rates",
    "carry_survival",
]

ALPHABET = 8
"""Tokens of the recall task (chance ``1/8``); the lag is the number of distractors."""

CONFIGS = ("rnn", "gru", "lstm:0", "lstm:1", "lstm:2", "lstm:chrono")
"""The models of the lab: the tanh RNN, the GRU, and the LSTM with forget bias 0, 1, 2 and chrono."""

SEEDS = tuple(range(20))
"""The seeds of every cell of the design: 0 to 19."""

PRECISION = "float32"
"""The arithmetic of every training run of the chapter's builders (the page's snippets keep float64)."""

SHORT = 300
"""The short budget: updates per member."""

LONG = 1500
"""The long budget: updates per member."""

SHORT_LAGS = tuple(range(4, 41, 4))
"""The lags of the short budget before extension: 4, 8, ..., 40."""

LONG_LAGS_DESIGNED = (8, 16, 24, 32, 40)
"""The lags of the long budget the design asked for (a sub-grid of :data:`SHORT_LAGS`)."""

LONG_LAGS_FALLBACK = (8, 24, 40)
"""The long budget's lags if the whole design's cold cost exceeds the chapter's budget (decided by cost)."""

LONG_LAGS = LONG_LAGS_FALLBACK
"""The long budget's lags before extension, as trained: the fallback. A cold render of the sweep at the
designed grid had taken more than 600 s of wall time on the build machine's two worker processes, beyond the
chapter's budget of about 180 s, before any of its results was read."""

EXTEND_STEP = 8
"""Past the last lag of a grid, lags are added in steps of this many ..."""

EXTEND_TO = 64
"""... up to this lag, while the extension rule of :class:`Sweep` holds."""

LONG_RATE = 0.25
"""The long budget is extended past a lag while a model's success rate there is at least this."""

SURVIVAL_LAGS = (24, 40)
"""The lags whose updates to success the chapter draws as survival curves (long budget)."""

DIAGNOSTIC_LAG = 24
"""The lag whose diagnostics over training the chapter draws, successes against failures (long budget)."""

PROBE_SIZE = 64
"""Held-out sequences (the first of the evaluation set) on which the diagnostics are measured."""

CONTROL_LAG = 20
"""The lag of the controls (short budget)."""

BIASES = (0, 1, 2, 3, 4, 5)
"""The forget biases of the bias sweep at :data:`CONTROL_LAG`."""

INPUT_CONTROLS = (("lstm:chrono", "lstm:chrono:i0"), ("lstm:3:i-3", "lstm:3:i0"))
"""Pairs that differ in the input-gate bias only: chrono (which sets b_i = -b_f) and chrono with b_i = 0;
b_f = 3 with b_i = -3 and with b_i = 0."""

DROPOUT_KEEP = 0.9
"""Keep probability of the dropout controls."""

DROPOUT_BIAS = 2.0
"""Forget bias of the LSTM the dropout controls train."""

SGD_RATES = (0.1, 0.3, 1.0, 3.0)
"""The learning rates the SGD arm is calibrated over (most successes wins; a tie goes to the smaller)."""

SGD_CALIBRATION = ("lstm:1", 4)
"""The model and lag of the SGD arm's calibration."""

SGD_LAGS = (8, 16, 24)
"""The lags of the SGD arm, every model of :data:`CONFIGS`, short budget."""

PILOT_BAND = (0.3, 0.7)
"""A control is rerun at the lag where its reference arm's success rate in the pilot (the lab's main grid at
the short budget) lies in this band and is nearest 50% (:func:`pilot_lag`), so that either arm can move."""

INPUT_RERUNS = (("lstm:chrono", "lstm:chrono:i0"), ("lstm:3:i0", "lstm:3:i-3"))
"""The input-gate pairs rerun at the pilot's lag, the reference arm first: chrono (pilot: its row of the
main grid), and b_f = 3 with b_i = 0, which the main grid does not train (pilot: its neighbour ``lstm:3``,
the bias sweep's b_f = 3 at :data:`CONTROL_LAG`)."""

EQUIVALENCE_MARGIN = 0.25
"""Two arms are called equivalent only when the 90% interval of the difference of their success rates lies
inside plus or minus this share (two one-sided tests, :func:`rnnmem.stats.equivalence`)."""

SCHEMES: tuple[Literal["none", "carry-step", "carry-sequence", "hidden-sequence"], ...] = (
    "none",
    "carry-step",
    "carry-sequence",
    "hidden-sequence",
)
"""Dropout of the LSTM: none; on the carry line c_{t-1}, a fresh mask at every step or one mask per sequence
(RNNDrop, Moon et al. 2015); one mask per sequence on h_{t-1} in the recurrent product (Gal and Ghahramani 2016)."""

MODEL_SPECS = (
    "'rnn', 'gru', 'lstm', 'lstm:B' with B a forget bias (a finite number), or 'lstm:chrono', "
    "an LSTM spec optionally followed by ':iB' (input-gate bias B)"
)
"""The model-spec language in words (what an error message says is allowed)."""


# ---------------------------------------------------------------------------- models


def _number(text: str) -> float | None:
    """``text`` as a finite float, or ``None``."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _short(value: float) -> str:
    """A number as short as reads back exactly: ``2``, ``0.1234567``, ``3.8331...``."""
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


@dataclass(frozen=True)
class ModelSpec:
    """A model of the lab: the cell and how its gate biases start.

    ``cell`` is ``"rnn"``, ``"gru"`` or ``"lstm"``; ``forget_bias`` (LSTM only)
    sets the effective forget bias :math:`b_{if} + b_{hf}` of every unit, and
    ``init="chrono"`` (LSTM only, not with ``forget_bias``) draws chrono
    biases with :math:`T_{\\max}` the sequence length (and :math:`b_i = -b_f`);
    ``input_bias`` (LSTM only) then sets the effective input-gate bias of every
    unit; otherwise PyTorch's uniform draw (:class:`rnnmem.ensemble.Ensemble`).
    ``str(spec)`` is the spec's text, :meth:`parse` reads it back.

    >>> ModelSpec.parse("lstm:2")
    ModelSpec(cell='lstm', forget_bias=2.0, init='default', input_bias=None)
    >>> str(ModelSpec("lstm", init="chrono", input_bias=0)), ModelSpec.parse("lstm:3:i-3").key
    ('lstm:chrono:i0', 'lstm3_im3')
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
    input_bias: float | None = None
    """The LSTM's effective input-gate bias, or ``None``: as the draw (or chrono) sets it."""

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
        if self.input_bias is not None:
            object.__setattr__(self, "input_bias", float(check_finite("input_bias", self.input_bias)))
            if self.cell != "lstm":
                raise ValueError(f"input_bias sets the LSTM's input gate; cell must be 'lstm', got {self.cell!r}")

    @classmethod
    def parse(cls, value: Any, name: str = "model") -> ModelSpec:
        """The model a spec names (:data:`MODEL_SPECS`); a :class:`ModelSpec` is returned as it is.

        >>> [str(ModelSpec.parse(s)) for s in ("rnn", "lstm", "lstm:1.0", "lstm:chrono", "lstm:3:i-3.0")]
        ['rnn', 'lstm', 'lstm:1', 'lstm:chrono', 'lstm:3:i-3']
        >>> ModelSpec.parse("lstm:x", "models[0]")
        Traceback (most recent call last):
        ...
        ValueError: models[0] must be a model: 'rnn', 'gru', 'lstm', 'lstm:B' with B a forget bias \
(a finite number), or 'lstm:chrono', an LSTM spec optionally followed by ':iB' (input-gate bias B), got 'lstm:x'
        """
        if isinstance(value, ModelSpec):
            return value
        problem = ValueError(f"{name} must be a model: {MODEL_SPECS}, got {value!r}")
        if not isinstance(value, str):
            raise problem
        cell, *rest = value.split(":")
        if cell not in MODELS or (rest and cell != "lstm") or len(rest) > 2:
            raise problem
        input_bias = None
        if rest and rest[-1].startswith("i"):
            input_bias = _number(rest.pop()[1:])
            if input_bias is None:
                raise problem
        if not rest:
            return cls(cell, input_bias=input_bias)
        (first,) = rest if len(rest) == 1 else (None,)
        if first is None:
            raise problem
        if first == "chrono":
            return cls("lstm", init="chrono", input_bias=input_bias)
        bias = _number(first)
        if bias is None:
            raise problem
        return cls("lstm", forget_bias=bias, input_bias=input_bias)

    def __str__(self) -> str:
        if self.init == "chrono":
            text = "lstm:chrono"
        elif self.forget_bias is None:
            text = self.cell
        else:
            text = f"lstm:{_short(self.forget_bias)}"
        return text if self.input_bias is None else f"{text}:i{_short(self.input_bias)}"

    @property
    def key(self) -> str:
        """The model's name in a builder's values: ``rnn``, ``gru``, ``lstm2`` (forget bias 2), ``chrono``,
        ``chrono_i0`` (input bias 0), ``lstm3_im3`` (input bias -3).

        >>> ModelSpec.parse("lstm:chrono").key, ModelSpec.parse("lstm:chrono:i0").key
        ('chrono', 'chrono_i0')
        """
        if self.init == "chrono":
            base = "chrono"
        elif self.forget_bias is None:
            base = self.cell
        else:
            base = f"lstm{_short(self.forget_bias)}"
        if self.input_bias is None:
            return base
        return f"{base}_i{_short(self.input_bias)}".replace("-", "m")


def check_model(name: str, value: Any) -> ModelSpec:
    """A model spec (:data:`MODEL_SPECS`), parsed, with errors naming ``name``.

    >>> check_model("model", "gru")
    ModelSpec(cell='gru', forget_bias=None, init='default', input_bias=None)
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


def dropout_equivalent_bias(forget_bias: float, keep: float) -> float:
    r"""The forget bias whose gate equals :math:`\sigma(b_f)/p`: what a kept unit is carried by under a
    per-sequence mask on the carry line rescaled by :math:`1/p` at every step.

    >>> round(dropout_equivalent_bias(2.0, 0.9), 2)
    3.83
    """
    f = float(memory.sigmoid(float(check_finite("forget_bias", forget_bias)))) / check_keep("keep", keep)
    if not f < 1.0:
        raise ValueError(f"sigma(forget_bias) / keep must be below 1, got {f!r}")
    return float(memory.bias_for_gate(f))


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


def _check_precision(value: Any) -> str:
    return check_choice("dtype", value, ("float32", "float64"))


# ---------------------------------------------------------------------------- the design


@dataclass(frozen=True)
class Design:
    """How every recall run of the lab is trained and judged: the hidden size and a :class:`rnnmem.lab.Schedule`.

    Hidden units, batch, the learning rate, clipping by global norm
    (``None``: none), the budget of updates, evaluation every ``eval_every``
    updates on ``eval_size`` held-out sequences, the success threshold, and
    the update rule (``"adam"``, or ``"sgd"`` for the SGD arm).
    """

    hidden: int = 16
    batch: int = 32
    lr: float = 0.01
    clip: float | None = 1.0
    steps: int = SHORT
    eval_every: int = 25
    eval_size: int = 256
    threshold: float = 0.9
    optimizer: str = "adam"

    def __post_init__(self) -> None:
        for name in ("hidden", "batch", "steps", "eval_every", "eval_size"):
            object.__setattr__(self, name, check_positive_int(name, getattr(self, name)))
        object.__setattr__(self, "lr", float(check_positive("lr", self.lr)))
        if self.clip is not None:
            object.__setattr__(self, "clip", float(check_positive("clip", self.clip)))
        object.__setattr__(self, "threshold", lab.check_threshold(self.threshold))
        check_choice("optimizer", self.optimizer, lab.OPTIMIZERS)

    def schedule(self, **more: Any) -> lab.Schedule:
        """The :class:`rnnmem.lab.Schedule` of this design (all but ``hidden``), with ``more`` of its fields.

        >>> Design(steps=40).schedule(retire=True).steps
        40
        """
        mine = {k: v for k, v in dataclasses.asdict(self).items() if k != "hidden"}
        return lab.Schedule(**mine, **more)


DESIGN = Design()
"""The lab's design: 16 units, batches of 32, Adam 0.01, clipping at 1, 300 updates, success at 0.9."""


# ---------------------------------------------------------------------------- results


def _while_training(values: np.ndarray, result: lab.LabResult) -> np.ndarray:
    """``values`` ``(E, evaluations)`` with NaN after each member's success: a retired member is measured
    as it retired at later evaluations too, and those repeats are not training."""
    out = np.array(values, dtype=float)
    for e, s in enumerate(result.success_step):
        if s is not None:
            out[e, np.asarray(result.eval_steps) > s] = np.nan
    return out


@dataclass(frozen=True)
class RunResult:
    """What the lab keeps of one trained ensemble (axis 0 is the member, in the order of the seeds).

    A member *succeeds* when it reached the threshold and never diverged, as
    :class:`rnnmem.lab.LabResult` counts it. ``diagnostics`` holds, per
    quantity of :func:`rnnmem.diagnostics.checkpoint`, an ``(E, evaluations)``
    array measured at every evaluation (NaN where a member was no longer
    trained, or the quantity is not the cell's).
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
    """The trained parameters (a retired member's at retirement), stacked over members."""
    diagnostics: dict = field(default_factory=dict)
    """Per quantity, ``(E, evaluations)``: the diagnostics at every evaluation."""

    @classmethod
    def of(cls, result: lab.LabResult, diagnostics: dict | None = None) -> RunResult:
        """The record of a :func:`rnnmem.lab.train` result (the parameters copied, the ensemble dropped).

        >>> run = RecallRun("gru", lag=1, seeds=(0,), design=Design(hidden=4, steps=2, eval_every=1)).execute()
        >>> run.losses.shape, len(run.success_step), run.diagnostics["grad_h_first"].shape
        ((1, 2), 1, (1, 3))
        """
        return cls(
            eval_steps=result.eval_steps,
            scores=result.scores,
            losses=result.losses,
            grad_norms=result.grad_norms,
            success_step=tuple(result.success_step),
            diverged_at=tuple(result.diverged_at),
            params={k: v.copy() for k, v in result.ensemble.params.items()},
            diagnostics={name: _while_training(values, result) for name, values in (diagnostics or {}).items()},
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
        """``(E,)``: each member's held-out score at the end of its training (at retirement, for a retired one)."""
        return self.outcome(int(self.eval_steps[-1])).final

    def scores_at(self, budget: int) -> np.ndarray:
        """``(E,)``: each member's held-out score at the last evaluation within ``budget`` updates.

        For a run trained without retirement (``retire=False``) this is every
        member's score at a fixed update count, whether or not it succeeded
        earlier; a retired member's score is the one it retired with.

        >>> run = RecallRun("lstm:2", lag=1, seeds=(0, 1), design=Design(hidden=4, steps=50), retire=False)
        >>> run.execute().scores_at(50).shape
        (2,)
        """
        budget = check_positive_int("budget", budget)
        index = max(k for k, v in enumerate(self.eval_steps) if v <= budget)
        return np.array(self.scores[:, index], dtype=float)

    def successes_at(self, budget: int, threshold: float) -> int:
        """Members whose held-out score at the last evaluation within ``budget`` (:meth:`scores_at`) is at
        least ``threshold`` and that never diverged: success read once, at the end of the budget, not at the
        first of its evaluations.

        >>> run = RecallRun("lstm:2", lag=1, seeds=(0, 1), design=Design(hidden=4, steps=50), retire=False)
        >>> run.execute().successes_at(50, 0.9) in (0, 1, 2)
        True
        """
        threshold = lab.check_threshold(threshold)
        ok = (self.scores_at(budget) >= threshold) & np.array([d is None for d in self.diverged_at])
        return int(ok.sum())

    def outcome(self, budget: int) -> Outcome:
        """What the run shows within ``budget`` updates (at most the updates it trained).

        A member succeeded within the budget if its updates to success are at
        most ``budget``; its final accuracy is its held-out score at its
        success (where it retired) or else at ``budget``; its time is its
        updates to success, or ``budget``, censored.

        >>> run = RecallRun("lstm:2", lag=1, seeds=(0, 1), design=Design(hidden=4, steps=50, threshold=0.3))
        >>> full = run.execute()
        >>> full.outcome(25).n, full.outcome(50).successes == full.successes
        (2, True)
        """
        budget = check_positive_int("budget", budget)
        steps = [int(s) for s in self.eval_steps]
        done = all(s is not None or d is not None for s, d in zip(self.success_step, self.diverged_at))
        if budget > steps[-1] and not done:
            raise ValueError(f"budget must be at most the {steps[-1]} updates trained, got {budget}")
        within = tuple(s if ok and s <= budget else None for s, ok in zip(self.success_step, self.succeeded))
        final = np.empty(len(within))
        for e, s in enumerate(within):
            at = budget if s is None else s
            if self.diverged_at[e] is not None:
                at = min(at, steps[-1])
            index = max(k for k, v in enumerate(steps) if v <= at)
            final[e] = self.scores[e, index]
        return Outcome(budget, within, final)


@dataclass(frozen=True)
class Outcome:
    """One cell of the design read at one budget: who succeeded and when, and the final held-out accuracy.

    >>> o = Outcome(300, (25, None, 150), np.array([0.95, 0.4, 0.91]))
    >>> o.successes, o.n, [round(v, 2) for v in o.interval()]
    (2, 3, [0.21, 0.94])
    >>> o.times.tolist(), o.observed.tolist()
    ([25, 300, 150], [True, False, True])
    """

    budget: int
    """Updates allowed."""
    success_step: tuple
    """Per member: updates to success within the budget, or ``None``."""
    final: np.ndarray
    """``(E,)``: held-out accuracy at success (retirement), or at the budget."""

    @property
    def n(self) -> int:
        """Members (seeds)."""
        return len(self.success_step)

    @property
    def successes(self) -> int:
        """Members that succeeded within the budget."""
        return sum(s is not None for s in self.success_step)

    @property
    def rate(self) -> float:
        """The share of members that succeeded."""
        return self.successes / self.n

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """The Wilson interval of the success rate (:func:`rnnmem.stats.wilson`)."""
        return stats.wilson(self.successes, self.n, level)

    @property
    def times(self) -> np.ndarray:
        """``(E,)``: updates to success, or the budget for a member that did not succeed (censored)."""
        return np.array([self.budget if s is None else s for s in self.success_step])

    @property
    def observed(self) -> np.ndarray:
        """``(E,)``: whether each time is a success (``False``: censored at the budget)."""
        return np.array([s is not None for s in self.success_step])

    def survival(self) -> Any:
        """The Kaplan-Meier estimate of updates to success (:func:`rnnmem.stats.kaplan_meier`)."""
        return stats.kaplan_meier(self.times, self.observed)

    def accuracy(self) -> tuple[float, float, float]:
        """Quartiles of the final held-out accuracy: ``(q1, median, q3)`` (:func:`rnnmem.stats.quartiles`)."""
        return stats.quartiles(self.final)


# ---------------------------------------------------------------------------- runs


class _Probe:
    """The diagnostics of :func:`rnnmem.diagnostics.checkpoint` at every evaluation, kept per seed.

    Called by :func:`rnnmem.lab.train` (its ``on_evaluation`` hook) with the
    updates done and the ensemble of the members still training; measures
    them on ``inputs`` and ``targets`` and files each value under its
    member's seed. It changes nothing in the ensemble.
    """

    def __init__(self, task: tasks.Task, seeds: tuple[int, ...], inputs: np.ndarray, targets: np.ndarray) -> None:
        self.task, self.seeds, self.inputs, self.targets = task, seeds, inputs, targets
        self.values: dict[str, dict[tuple[int, int], float]] = {}

    def __call__(self, done: int, ens: Any) -> None:
        measured = diagnostics.checkpoint(ens, self.task, self.inputs, self.targets)
        for name, column in measured.items():
            kept = self.values.setdefault(name, {})
            for seed, value in zip(ens.seeds, np.asarray(column, dtype=float)):
                kept[(int(seed), int(done))] = float(value)

    def arrays(self, eval_steps: np.ndarray) -> dict[str, np.ndarray]:
        """Per quantity, ``(E, evaluations)`` in the order of the seeds, NaN where not measured."""
        out = {}
        for name, kept in self.values.items():
            grid = np.full((len(self.seeds), len(eval_steps)), np.nan)
            for e, seed in enumerate(self.seeds):
                for k, done in enumerate(eval_steps):
                    grid[e, k] = kept.get((seed, int(done)), np.nan)
            out[name] = grid
        return out


def _probe(task: tasks.Task, seeds: tuple[int, ...], size: int, eval_size: int) -> _Probe:
    """A probe on the first ``size`` sequences of the held-out set :func:`rnnmem.lab.train` evaluates on."""
    held_out = task.sample(eval_size, seed=np.random.default_rng((0, 2)))
    size = min(size, eval_size)
    return _Probe(task, seeds, held_out.inputs[:, :size], held_out.targets[:size])


@dataclass(frozen=True)
class RecallRun:
    """One ensemble, one seed per member, trained on recall at ``lag`` with the ``design``.

    Each member leaves training at its first success (``retire``, the
    default), and training stops when none is left. ``probe`` held-out
    sequences carry the diagnostics at every evaluation (0: none). ``dtype``
    is the arithmetic (:data:`PRECISION` for the chapter's builders).

    >>> run = RecallRun("lstm:1", lag=2, seeds=[0, 1], design=Design(hidden=8, steps=50))
    >>> run.model, run.seeds, run.dtype
    (ModelSpec(cell='lstm', forget_bias=1.0, init='default', input_bias=None), (0, 1), 'float32')
    >>> run.execute().successes
    0
    """

    model: ModelSpec
    lag: int
    seeds: tuple[int, ...]
    design: Design = DESIGN
    alphabet: int = ALPHABET
    dtype: str = PRECISION
    retire: bool = True
    probe: int = PROBE_SIZE

    def __post_init__(self) -> None:
        object.__setattr__(self, "model", ModelSpec.parse(self.model))
        object.__setattr__(self, "lag", check_positive_int("lag", self.lag))
        object.__setattr__(self, "seeds", _seeds("seeds", self.seeds))
        object.__setattr__(self, "alphabet", check_positive_int("alphabet", self.alphabet))
        object.__setattr__(self, "dtype", _check_precision(self.dtype))
        object.__setattr__(self, "probe", check_nonnegative_int("probe", self.probe))
        if not isinstance(self.design, Design):
            raise ValueError(f"design must be a Design, got {self.design!r}")
        if not isinstance(self.retire, bool):
            raise ValueError(f"retire must be True or False, got {self.retire!r}")

    @property
    def cost(self) -> float:
        """A relative cost, to train the costliest runs first: gates times steps times members times updates."""
        return cells.GATES[self.model.cell] * (self.lag + 2) * len(self.seeds) * self.design.steps

    def execute(self) -> RunResult:
        """Train the run (:func:`rnnmem.lab.train`); a pure function of the run."""
        task = tasks.recall(self.lag, self.alphabet)
        probe = _probe(task, self.seeds, self.probe, self.design.eval_size) if self.probe else None
        model = lab.Model(
            self.model.cell,
            seeds=list(self.seeds),
            hidden=self.design.hidden,
            forget_bias=self.model.forget_bias,
            init=self.model.init,
            input_bias=self.model.input_bias,
            dtype=np.dtype(self.dtype),
        )
        # without retirement every member trains the whole budget, so its score at the budget exists
        schedule = self.design.schedule(stop_when_done=self.retire, retire=self.retire)
        result = lab.train(task, model, schedule, on_evaluation=probe)
        return RunResult.of(result, None if probe is None else probe.arrays(result.eval_steps))


@dataclass(frozen=True)
class DropoutRun:
    r"""The LSTM with forget bias ``forget_bias`` on recall at ``lag``, trained with inverted dropout.

    ``scheme`` is one of :data:`SCHEMES`, keep probability ``keep``: on the
    carry line, :math:`c_t = f_t \odot (M_t \odot c_{t-1}) + i_t \odot g_t`
    with a fresh mask :math:`M_t = m_t/p` at every step (``"carry-step"``) or
    one per sequence (``"carry-sequence"``, RNNDrop, Moon et al. 2015); or on
    the hidden state in the recurrent product, one mask per sequence
    (``"hidden-sequence"``, Gal and Ghahramani 2016). Evaluation uses no
    mask. Members retire at their first success, as in :class:`RecallRun`
    (``retire=False``: every member trains the whole budget).

    >>> run = DropoutRun("carry-step", keep=0.9, forget_bias=2, lag=2, seeds=[0], design=Design(hidden=4, steps=3))
    >>> run.execute().losses.shape
    (1, 3)
    """

    scheme: Literal["none", "carry-step", "carry-sequence", "hidden-sequence"]
    keep: float
    forget_bias: float
    lag: int
    seeds: tuple[int, ...]
    design: Design = DESIGN
    alphabet: int = ALPHABET
    dtype: str = PRECISION
    retire: bool = True

    def __post_init__(self) -> None:
        check_choice("scheme", self.scheme, SCHEMES)
        if not isinstance(self.retire, bool):
            raise ValueError(f"retire must be True or False, got {self.retire!r}")
        object.__setattr__(self, "keep", check_keep("keep", self.keep))
        object.__setattr__(self, "forget_bias", float(check_finite("forget_bias", self.forget_bias)))
        object.__setattr__(self, "lag", check_positive_int("lag", self.lag))
        object.__setattr__(self, "seeds", _seeds("seeds", self.seeds))
        object.__setattr__(self, "alphabet", check_positive_int("alphabet", self.alphabet))
        object.__setattr__(self, "dtype", _check_precision(self.dtype))
        if not isinstance(self.design, Design):
            raise ValueError(f"design must be a Design, got {self.design!r}")

    @property
    def cost(self) -> float:
        """A relative cost: the LSTM's four gates and the masks, times steps, members and updates."""
        return 5 * (self.lag + 2) * len(self.seeds) * self.design.steps

    def execute(self) -> RunResult:
        """Train the run (:func:`rnnmem.lab.train`); a pure function of the run."""
        dropout = lab.Dropout()
        if self.scheme.startswith("carry"):
            dropout = lab.Dropout(carry_keep=self.keep, carry_mask=self.scheme.removeprefix("carry-"))
        elif self.scheme == "hidden-sequence":
            dropout = lab.Dropout(hidden_keep=self.keep, hidden_mask="sequence")
        model = lab.Model(
            "lstm",
            seeds=list(self.seeds),
            hidden=self.design.hidden,
            forget_bias=self.forget_bias,
            dtype=np.dtype(self.dtype),
        )
        schedule = self.design.schedule(stop_when_done=self.retire, retire=self.retire, dropout=dropout)
        result = lab.train(tasks.recall(self.lag, self.alphabet), model, schedule)
        return RunResult.of(result)


# ---------------------------------------------------------------------------- the sweep


Train = Callable[[list], list]
"""Trains a list of runs and returns their results in order (the builders pass a pool's)."""


def _train_here(keys: list) -> list:
    return [k.execute() for k in keys]


@dataclass(frozen=True)
class Sweep:
    """Success against lag at two budgets: every model, every lag of its grids, the same seeds and design.

    The grids, fixed before any run:

    * the short budget ``budgets[0]`` at ``short_lags``, then, for each model,
      ``extend_step`` further at a time up to ``extend_to`` while it has at
      least one success at the last lag tried;
    * the long budget ``budgets[1]`` at ``long_lags``, extended the same way
      while its success rate at the last lag tried is at least ``long_rate``.

    A lag of a model's long grid is trained once, for the long budget, and its
    short-budget outcome is read from that run (:meth:`RunResult.outcome`).

    >>> sweep = Sweep(["rnn"], short_lags=[1, 2], long_lags=[2], seeds=[0, 1],
    ...               design=Design(hidden=4), budgets=(4, 8), extend_step=1, extend_to=3)
    >>> [(r.lag, r.design.steps) for r in sweep.first_runs()]
    [(1, 4), (2, 8)]
    """

    models: tuple[ModelSpec, ...]
    short_lags: tuple[int, ...]
    long_lags: tuple[int, ...]
    seeds: tuple[int, ...] = SEEDS
    design: Design = DESIGN
    budgets: tuple[int, int] = (SHORT, LONG)
    extend_step: int = EXTEND_STEP
    extend_to: int = EXTEND_TO
    long_rate: float = LONG_RATE
    dtype: str = PRECISION

    def __post_init__(self) -> None:
        if not isinstance(self.models, (list, tuple)) or not self.models:
            raise ValueError(f"models must be a non-empty list of models ({MODEL_SPECS}), got {self.models!r}")
        object.__setattr__(self, "models", tuple(check_model(f"models[{i}]", m) for i, m in enumerate(self.models)))
        object.__setattr__(self, "short_lags", tuple(check_lags("short_lags", self.short_lags)))
        object.__setattr__(self, "long_lags", tuple(check_lags("long_lags", self.long_lags)))
        object.__setattr__(self, "seeds", _seeds("seeds", self.seeds))
        budgets = check_list("budgets", self.budgets, check_positive_int, "budgets (whole numbers >= 1)")
        if len(budgets) != 2 or budgets[0] >= budgets[1]:
            raise ValueError(f"budgets must be two numbers of updates, short then long, got {self.budgets!r}")
        object.__setattr__(self, "budgets", tuple(budgets))
        object.__setattr__(self, "extend_step", check_positive_int("extend_step", self.extend_step))
        object.__setattr__(self, "extend_to", check_positive_int("extend_to", self.extend_to))
        object.__setattr__(self, "long_rate", float(check_finite("long_rate", self.long_rate)))
        object.__setattr__(self, "dtype", _check_precision(self.dtype))
        if not isinstance(self.design, Design):
            raise ValueError(f"design must be a Design, got {self.design!r}")

    def run(self, model: Any, lag: int, budget: int) -> RecallRun:
        """The run of one model at one lag trained for ``budget`` updates."""
        return RecallRun(model, lag, self.seeds, dataclasses.replace(self.design, steps=budget), dtype=self.dtype)

    def first_runs(self) -> list[RecallRun]:
        """The runs of the grids before any extension: the long runs, and short runs at the other lags."""
        short, long = self.budgets
        return [
            self.run(m, lag, long if lag in self.long_lags else short)
            for m in self.models
            for lag in sorted(set(self.short_lags) | set(self.long_lags))
        ]

    def execute(self, train: Train = _train_here) -> SweepResult:
        """Train every run of the design, grid by grid, extending each model's grids by the rule."""
        short, long = self.budgets
        plan = {
            (m, b): list(lags) for m in self.models for b, lags in ((short, self.short_lags), (long, self.long_lags))
        }
        results: dict[RecallRun, RunResult] = {}
        result = SweepResult(self, plan, results)
        while True:
            keys = list(dict.fromkeys(result.source(m, lag, b) for (m, b), lags in plan.items() for lag in lags))
            missing = [k for k in keys if k not in results]
            if missing:
                results.update(zip(missing, train(missing)))
                continue
            grew = [self._grow(result, m) for m in self.models]
            if not any(grew):
                return result

    def _grow(self, result: SweepResult, model: ModelSpec) -> bool:
        """Extend the model's grids by the rules, each by one lag at most; whether any grew."""
        short = self.budgets[0]
        grew = False
        for b in self.budgets:
            lags = result.plan[(model, b)]
            last, nxt = lags[-1], lags[-1] + self.extend_step
            if nxt > self.extend_to:
                continue
            outcome = result.outcome(model, last, b)
            if outcome.successes >= 1 if b == short else outcome.rate >= self.long_rate:
                lags.append(nxt)
                grew = True
        return grew

    def chains(self) -> SweepChains:
        """The sweep as chains of runs, model by model (:class:`SweepChains`)."""
        return SweepChains(self)


class SweepChains:
    """A :class:`Sweep` trained model by model: a model's grids grow as soon as the runs they grow by have ended.

    :meth:`Sweep.execute` grows every model's grids once every run of a round
    has ended. A grid grows by the outcome at its last lag alone, so a model's
    grids can grow as soon as the runs of their last lags have ended: each
    model gets the same grids and the same runs, so the same
    :class:`SweepResult`, and the lab's engine
    (:func:`rnnmem.engine.train`) starts an extension
    while the rest of the round still trains. :meth:`first_runs` are the runs to
    start with, :meth:`follow` takes each ended run and gives the runs that
    follow, and :attr:`result` is the sweep's result once no run is left.

    >>> sweep = Sweep(["rnn"], short_lags=[1, 2], long_lags=[2], seeds=[0, 1],
    ...               design=Design(hidden=4), budgets=(4, 8), extend_step=1, extend_to=3)
    >>> chains = sweep.chains()
    >>> waiting = chains.first_runs()
    >>> while waiting:
    ...     run = waiting.pop()
    ...     waiting += chains.follow(run, run.execute())
    >>> chains.result.lags("rnn", 4) == sweep.execute().lags("rnn", 4)
    True
    """

    def __init__(self, sweep: Sweep) -> None:
        short, long = sweep.budgets
        self.sweep = sweep
        plan = {
            (m, b): list(lags) for m in sweep.models for b, lags in ((short, sweep.short_lags), (long, sweep.long_lags))
        }
        self.result = SweepResult(sweep, plan, {})
        self._started: set = set()

    def first_runs(self) -> list[RecallRun]:
        """The runs of every model's grids before any extension."""
        return [run for m in self.sweep.models for run in self._advance(m)]

    def follow(self, run: RecallRun, result: RunResult) -> list[RecallRun]:
        """Keep ``run``'s result; the model's runs that can start now (none while its grids wait for a run)."""
        self.result.results[run] = result
        return self._advance(run.model)

    def _advance(self, model: ModelSpec) -> list[RecallRun]:
        """Grow the model's grids while the runs of their last lags have ended; the runs they now read and that
        have not started."""
        result, budgets = self.result, self.sweep.budgets
        new: list[RecallRun] = []
        while True:
            keys = (result.source(model, lag, b) for b in budgets for lag in result.plan[(model, b)])
            for k in dict.fromkeys(keys):
                if k not in result.results and k not in self._started:
                    self._started.add(k)
                    new.append(k)
            lasts = {result.source(model, result.plan[(model, b)][-1], b) for b in budgets}
            if not lasts <= result.results.keys() or not self.sweep._grow(result, model):
                return new


@dataclass(frozen=True)
class SweepResult:
    """A trained :class:`Sweep`: per model and budget, the lags tried and what each shows."""

    sweep: Sweep
    plan: dict
    """``(model, budget) -> lags`` tried, in order."""
    results: dict
    """``RecallRun -> RunResult``."""

    def lags(self, model: Any, budget: int) -> list[int]:
        """The lags tried for ``model`` at ``budget``."""
        return list(self.plan[(ModelSpec.parse(model), budget)])

    def source(self, model: Any, lag: int, budget: int) -> RecallRun:
        """The run an outcome is read from: the long run where the lag is in the model's long grid."""
        spec, long = ModelSpec.parse(model), self.sweep.budgets[1]
        return self.sweep.run(spec, lag, long if lag in self.plan[(spec, long)] else budget)

    def result(self, model: Any, lag: int, budget: int) -> RunResult:
        """The trained run behind one cell."""
        return self.results[self.source(model, lag, budget)]

    def outcome(self, model: Any, lag: int, budget: int) -> Outcome:
        """One cell read at ``budget``."""
        return self.result(model, lag, budget).outcome(budget)

    def counts(self, model: Any, budget: int) -> list[int]:
        """Successes at each lag tried."""
        return [self.outcome(model, lag, budget).successes for lag in self.lags(model, budget)]

    def fit(self, model: Any, budget: int) -> Any:
        """The logistic fit of success against lag (:func:`lag_learned`)."""
        lags = self.lags(model, budget)
        return lag_learned(lags, self.counts(model, budget), len(self.sweep.seeds))


# ---------------------------------------------------------------------------- reading


def lag_learned(lags: Any, successes: Any, n: int) -> Any:
    r"""The lag learned within a budget: a Firth-penalized logistic fit of success against lag.

    :math:`\Pr(\text{success} \mid L) = 1/(1 + e^{-(a + bL)})`, fitted to
    ``successes[i]`` of ``n`` at ``lags[i]`` (:func:`rnnmem.stats.logistic_fit`);
    its ``x50`` is the lag of 50% success, :math:`L_{50} = -a/b`, with its
    interval. It measures what training finds within the budget, not a
    property of the gradient at initialization.

    >>> fit = lag_learned([4, 8, 12, 16], [20, 15, 5, 0], 20)
    >>> 8 < fit.x50 < 12
    True
    """
    lags = check_lags("lags", lags)
    counts = check_list("successes", successes, check_nonnegative_int, "counts (whole numbers >= 0)")
    n = check_positive_int("n", n)
    if len(counts) != len(lags) or max(counts) > n:
        raise ValueError(f"successes must be one count in 0..{n} per lag, got {successes!r} for lags {lags!r}")
    return stats.logistic_fit(lags, counts, [n] * len(lags))


CLEAR = (0.9, 0.1)
"""The rates at or above the first, and at or below the second, between which :func:`lag_learned_text`
prints the lag learned as a range when two adjacent lags tried hold them."""


def lag_learned_text(lags: Any, successes: Any, n: int) -> tuple[str, str]:
    """The lag learned within a budget as the counts allow it to be printed: (value, interval).

    The rule, one for every page:

    * counts that go from at least 90% at one lag tried to at most 10% at
      the next lag tried (or back), with the fitted 50% point between them,
      are printed as that range, ``("between 4 and 8", "")``: with no lag
      tried between, the fit's point and interval there come from its slope
      and penalty, not from the counts;
    * a 50% point beyond the last lag tried is a bound,
      ``("beyond 64", "")``, one before the first ``("below 4", "")``;
    * otherwise the fit's point (:func:`lag_learned`), rounded, and its 95%
      interval, an end beyond the last lag tried (or not bounded by the data
      on that side) printed ``beyond 64``, before the first ``below 4``.

    >>> lag_learned_text([4, 8, 12], [20, 0, 0], 20)
    ('between 4 and 8', '')
    >>> lag_learned_text([8, 24, 40], [20, 19, 13], 20)
    ('beyond 40', '')
    >>> lag_learned_text([4, 8, 12, 16], [20, 15, 5, 0], 20)
    ('10', '[9, 11]')
    """
    fit = lag_learned(lags, successes, n)
    lags, counts = list(lags), list(successes)
    first, last = lags[0], lags[-1]
    if fit.x50 is None:
        beyond = fit.above_grid == (fit.slope <= 0)
        return (f"beyond {last}" if beyond else f"below {first}"), ""
    high, low = CLEAR
    for i in range(len(lags) - 1):
        a, b = counts[i] / n, counts[i + 1] / n
        jump = (a >= high and b <= low) or (a <= low and b >= high)
        if jump and lags[i] <= fit.x50 <= lags[i + 1]:
            return f"between {lags[i]} and {lags[i + 1]}", ""

    def end(value: float | None, side: int) -> str:
        if value is None:  # the data do not bound this side
            return f"beyond {last}" if side > 0 else f"below {first}"
        if value > last:
            return f"beyond {last}"
        return f"below {first}" if value < first else f"{value:.0f}"

    lo, hi = fit.x50_interval
    return f"{fit.x50:.0f}", f"[{end(lo, -1)}, {end(hi, 1)}]"


def contrast_lag(lags: Any, counts_a: Any, counts_b: Any, n: int) -> int:
    """The lag at which a single-lag contrast of two arms is read, by a rule fixed before the runs.

    Of the lags both arms were trained at (``lags``, with their counts of
    ``n`` seeds each), the one where the pooled success rate of the two arms,
    :math:`(k_a + k_b)/2n`, is nearest 50%, a tie going to the smaller lag:
    there a count can move either way, and Fisher's exact test has the most
    room to see a difference. Compared in integers, :math:`|k_a + k_b - n|`.

    >>> contrast_lag([4, 8, 12], [19, 15, 7], [20, 0, 0], 20)
    8
    >>> contrast_lag([4, 8], [20, 10], [0, 10], 20)
    4
    """
    lags = check_lags("lags", lags)
    n = check_positive_int("n", n)
    arms = []
    for name, value in (("counts_a", counts_a), ("counts_b", counts_b)):
        counts = check_list(name, value, check_nonnegative_int, "counts (whole numbers >= 0)")
        if len(counts) != len(lags) or max(counts) > n:
            raise ValueError(f"{name} must be one count in 0..{n} per lag, got {value!r} for lags {lags!r}")
        arms.append(counts)
    distance = [abs(a + b - n) for a, b in zip(*arms)]
    return min(zip(distance, lags))[1]


def sgd_rate(rates: Any, successes: Any) -> float:
    """The SGD arm's learning rate: the rate with the most successes, a tie going to the smaller rate.

    >>> sgd_rate([0.1, 0.3, 1.0, 3.0], [4, 9, 9, 0])
    0.3
    """
    rates = check_list("rates", rates, check_positive, "learning rates")
    counts = check_list("successes", successes, check_nonnegative_int, "counts")
    if len(rates) != len(counts):
        raise ValueError(f"successes must give one count per rate, got {len(counts)} for {len(rates)} rates")
    best = max(counts)
    return float(min(r for r, k in zip(rates, counts) if k == best))


def pilot_lag(lags: Any, successes: Any, n: int, band: Any = PILOT_BAND) -> int:
    """The lag a control is run at: among the pilot's lags whose success rate lies in ``band``, the one
    nearest 50%, a tie going to the smaller lag.

    ``successes[i]`` of ``n`` succeeded at ``lags[i]`` in the pilot (the
    reference arm's runs); the band is closed, ``(low, high)`` with
    ``0 <= low <= 0.5 <= high <= 1``.

    >>> pilot_lag([4, 8, 12, 16, 20], [20, 20, 17, 13, 3], 20)
    16
    >>> pilot_lag([4, 8, 12], [20, 14, 6], 20)
    8
    >>> pilot_lag([4, 8], [20, 0], 20)
    Traceback (most recent call last):
    ...
    ValueError: successes must put at least one lag's rate in the band [0.3, 0.7], got [20, 0] of 20 at lags [4, 8]
    """
    lags = check_lags("lags", lags)
    counts = check_list("successes", successes, check_nonnegative_int, "counts (whole numbers >= 0)")
    n = check_positive_int("n", n)
    if len(counts) != len(lags) or max(counts) > n:
        raise ValueError(f"successes must be one count in 0..{n} per lag, got {successes!r} for lags {lags!r}")
    low, high = _band(band)
    inside = [(abs(k / n - 0.5), lag) for lag, k in zip(lags, counts) if low <= k / n <= high]
    if not inside:
        raise ValueError(
            f"successes must put at least one lag's rate in the band [{low:g}, {high:g}], "
            f"got {counts!r} of {n} at lags {lags!r}"
        )
    return min(inside)[1]


def calibration_lag(lags: Any, successes: Any, n: int) -> int:
    """Where a model's learning rate for plain gradient descent is calibrated: the largest lag of its pilot
    row (Adam, the main grid's short budget) at which at least half the seeds succeeded.

    Plain gradient descent learns less than Adam within a budget, so at this
    lag it sits off its ceiling, and the rates of the ladder can differ.

    >>> calibration_lag([4, 8, 12, 16], [20, 15, 7, 3], 20)
    8
    >>> calibration_lag([4, 8], [9, 2], 20)
    Traceback (most recent call last):
    ...
    ValueError: successes must reach half of 20 at one lag at least, got [9, 2] at lags [4, 8]
    """
    lags = check_lags("lags", lags)
    counts = check_list("successes", successes, check_nonnegative_int, "counts (whole numbers >= 0)")
    n = check_positive_int("n", n)
    if len(counts) != len(lags) or max(counts) > n:
        raise ValueError(f"successes must be one count in 0..{n} per lag, got {successes!r} for lags {lags!r}")
    half = [lag for lag, k in zip(lags, counts) if 2 * k >= n]
    if not half:
        raise ValueError(f"successes must reach half of {n} at one lag at least, got {counts!r} at lags {lags!r}")
    return max(half)


def _band(band: Any) -> tuple[float, float]:
    """A band of success rates ``(low, high)`` around one half."""
    ok = isinstance(band, (list, tuple)) and len(band) == 2
    ok = ok and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in band)
    if not ok or not 0.0 <= band[0] <= 0.5 <= band[1] <= 1.0:
        raise ValueError(f"band must be two rates (low, high) with 0 <= low <= 0.5 <= high <= 1, got {band!r}")
    return float(band[0]), float(band[1])


def forget_biases(params: dict, hidden: int) -> np.ndarray:
    r"""Per member, the median over its units of the effective forget bias :math:`b_{if} + b_{hf}`: ``(E,)``.

    ``params`` are an LSTM's, stacked over members in PyTorch's gate order
    (i, f, g, o): the forget rows are :math:`H` to :math:`2H` of
    ``bias_ih_l0 + bias_hh_l0`` (as :func:`starting_factor` reads them).

    >>> _, ens = _ensemble("lstm:2", 3, [0, 1], 4)
    >>> forget_biases(ens.params, 4).round(3).tolist()
    [2.0, 2.0]
    """
    hidden = check_positive_int("hidden", hidden)
    b = (np.asarray(params["bias_ih_l0"]) + np.asarray(params["bias_hh_l0"])).astype(np.float64)
    if b.ndim != 2 or b.shape[1] != 4 * hidden:
        raise ValueError(f"params must be an LSTM's with hidden={hidden} (4 * hidden bias rows), got {b.shape}")
    return np.median(b[:, hidden : 2 * hidden], axis=1)


def masked_accuracy(
    params: dict,
    forget_bias: float,
    lag: int,
    seeds: Any,
    hidden: int,
    keep: float,
    *,
    sequences: int = 256,
    alphabet: int = ALPHABET,
) -> np.ndarray:
    r"""Per member, held-out recall accuracy with one inverted-dropout mask per sequence on the carry line: ``(E,)``.

    The evaluation under the carry a per-sequence mask trains with,
    :math:`c_t = f_t \odot (M \odot c_{t-1}) + i_t \odot g_t` with
    :math:`M = m/p`, :math:`m \sim 	ext{Bernoulli}(p)` per unit and
    sequence (``keep`` = :math:`p`; :class:`DropoutRun`'s
    ``"carry-sequence"``), on the first ``sequences`` of the held-out set
    :func:`rnnmem.lab.train` scores on, the masks drawn from
    ``default_rng((seed, 5))`` for each member. ``params`` are the trained
    LSTMs' (:attr:`RunResult.params`), float64 here.

    >>> _, ens = _ensemble("lstm:2", 2, [0, 1], 4)
    >>> masked_accuracy(ens.params, 2.0, 2, [0, 1], 4, keep=1.0, sequences=32).shape
    (2,)
    """
    keep = check_keep("keep", keep)
    sequences = check_positive_int("sequences", sequences)
    spec, ens = _ensemble(ModelSpec("lstm", forget_bias=forget_bias), lag, seeds, hidden, alphabet)
    for name, value in params.items():
        ens.params[name][...] = value
    task = tasks.recall(lag, alphabet)
    held = task.sample(DESIGN.eval_size, seed=np.random.default_rng((0, 2)))
    inputs, targets = held.inputs[:, :sequences], held.targets[:sequences]
    T, H, sequences = task.length, hidden, targets.size
    drawn = [np.random.default_rng((seed, 5)).random((1, sequences, H)) < keep for seed in ens.seeds]
    masks = np.broadcast_to(np.stack(drawn, axis=1) / keep, (T, len(drawn), sequences, H))
    with np.errstate(over="ignore", invalid="ignore"):
        # the forward pass the training step runs (ensemble.loss_and_grads), without its gradients
        out = ens._readout(ens._forward(inputs, masks, keep=False))  # (E, O, B)
    return (out.argmax(axis=1) == targets[None, :]).mean(axis=1)


def _ensemble(model: Any, lag: int, seeds: Any, hidden: int, alphabet: int = ALPHABET) -> Any:
    spec = ModelSpec.parse(model)
    ens = lab.make_ensemble(
        tasks.recall(lag, alphabet),
        spec.cell,
        list(seeds),
        hidden=hidden,
        forget_bias=spec.forget_bias,
        init=spec.init,
        input_bias=spec.input_bias,
    )
    return spec, ens


def rnn_spectra(lag: int, seeds: Any, hidden: int, alphabet: int = ALPHABET) -> tuple[np.ndarray, np.ndarray]:
    r"""The tanh RNN's :math:`W_{hh}` at initialization, per seed: spectral radius :math:`\rho` and norm
    :math:`\|W_{hh}\|_2`.

    One step of the gradient is multiplied by
    :math:`\operatorname{diag}(\tanh')\,W_{hh}^\top`, whose size is at most
    :math:`\|W_{hh}\|_2` (as :math:`\tanh' \le 1`); over many steps at zero
    input the product shrinks like :math:`\rho^n` (Gelfand's formula), and
    :math:`\rho \le \|W_{hh}\|_2`.

    >>> rho, norm = rnn_spectra(3, [0, 1], 16)
    >>> bool(np.all(rho <= norm))
    True
    """
    _, ens = _ensemble("rnn", lag, seeds, hidden, alphabet)
    W = ens.params["weight_hh_l0"].astype(np.float64)
    rho = np.array([max(abs(np.linalg.eigvals(w))) for w in W])
    norm = np.array([np.linalg.norm(w, 2) for w in W])
    return rho, norm


def starting_factor(model: Any, lag: int, seeds: Any, hidden: int, alphabet: int = ALPHABET) -> float:
    r"""The per-step factor a gradient starts with at zero input: the median over the seeds' units.

    LSTM and GRU: the forget (update) gate at zero input and state,
    :math:`\sigma(b_{i} + b_{h})` of its rows (rows :math:`H` to :math:`2H` of
    PyTorch's gate order). Tanh RNN: the spectral radius of :math:`W_{hh}`,
    the rate per step at which :math:`W_{hh}^n` shrinks at zero input (where
    :math:`\tanh' = 1`); one step alone is bounded by :math:`\|W_{hh}\|_2`
    only (:func:`rnn_spectra`). Untrained models as
    :func:`rnnmem.lab.make_ensemble` draws them for recall at ``lag``.

    >>> round(starting_factor("lstm:2", 3, [0, 1], 8), 3), round(float(memory.sigmoid(2.0)), 3)
    (0.881, 0.881)
    """
    spec, ens = _ensemble(model, lag, seeds, hidden, alphabet)
    if spec.cell == "rnn":
        return float(np.median(rnn_spectra(lag, seeds, hidden, alphabet)[0]))
    p, H = ens.params, hidden
    b = (p["bias_ih_l0"] + p["bias_hh_l0"]).astype(np.float64)
    return float(np.median(memory.sigmoid(b[:, H : 2 * H])))


def starting_horizon(model: Any, lag: int, seeds: Any, hidden: int, alphabet: int = ALPHABET) -> float:
    """The 1% horizon the starting factor predicts at zero input (:func:`rnnmem.memory.horizon`), in steps.

    For chrono the gates, and so this horizon, grow with the sequence length
    ``lag + 2``.

    >>> round(starting_horizon("lstm:2", 3, [0, 1], 8), 1)
    36.3
    """
    return float(memory.horizon(starting_factor(model, lag, seeds, hidden, alphabet)))


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
    :func:`rnnmem.lab.make_ensemble` draws them (float64), or carry ``params``
    (trained ones, :attr:`RunResult.params`).

    >>> share = gradient_reach("lstm:2", lag=3, seeds=[0, 1], hidden=8, sequences=16)
    >>> share.shape, float(share[0]), bool(share[-1] < 1)
    ((5,), 1.0, True)
    """
    _, ens = _ensemble(model, lag, seeds, hidden, alphabet)
    if params is not None:
        for name, value in params.items():
            ens.params[name][...] = value
    norms = lab.gradient_by_step(ens, tasks.recall(lag, alphabet), n=sequences, seed=1)
    return np.median(norms[:, ::-1] / norms[:, -1:], axis=0)


def start_rates(
    model: Any, lag: int, seeds: Any, hidden: int, *, sequences: int = 256, alphabet: int = ALPHABET
) -> np.ndarray:
    r"""Per member, the per-step factor of the gradient at initialization on recall at ``lag``: ``(E,)``.

    With :math:`g_s = \partial\ell/\partial h_s` (:func:`rnnmem.lab.gradient_by_step`:
    its norm averaged over ``sequences`` recall sequences drawn with seed 1)
    and :math:`T = \text{lag} + 2` the length of a sequence, the factor is the
    geometric mean of the one-step ratios :math:`\|g_s\|/\|g_{s+1}\|` over
    the :math:`T - 1` steps from the query back to the first token,

    .. math::  r = \left(\|g_1\| / \|g_T\|\right)^{1/(T-1)},

    so that :math:`r^{T-1}` is the share of the gradient at the query that
    reaches the first token (the last entry of :func:`gradient_reach`, per
    member). The members are the untrained models of ``seeds``, drawn as
    :func:`rnnmem.lab.make_ensemble` draws the spec ``model`` (PyTorch's draw,
    a forget bias, or chrono), in float64.

    >>> rates = start_rates("lstm:2", lag=3, seeds=[0, 1], hidden=8, sequences=16)
    >>> rates.shape, bool(np.all((0 < rates) & (rates < 1)))
    ((2,), True)
    """
    _, ens = _ensemble(model, lag, seeds, hidden, alphabet)
    norms = lab.gradient_by_step(ens, tasks.recall(lag, alphabet), n=sequences, seed=1)
    return (norms[:, 0] / norms[:, -1]) ** (1.0 / (norms.shape[1] - 1))


def carry_survival(scheme: str, keep: float, lag: int) -> float:
    r"""The chance that a unit's value is kept across the ``lag + 1`` steps of recall under a scheme.

    No dropout: 1; a fresh mask at every step: :math:`p^{\text{lag}+1}`; one
    mask per sequence (on the carry line or on :math:`h`): :math:`p` (the
    same mask at every step), with :math:`p` = ``keep``.

    >>> [round(carry_survival(s, 0.5, 2), 3) for s in SCHEMES]
    [1.0, 0.125, 0.5, 0.5]
    """
    scheme = check_choice("scheme", scheme, SCHEMES)
    keep = check_keep("keep", keep)
    lag = check_positive_int("lag", lag)
    return 1.0 if scheme == "none" else keep ** (lag + 1) if scheme == "carry-step" else keep

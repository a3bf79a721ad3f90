r"""The lab of "Remembering by design": recurrences whose gates read only the input, trained beside the LSTM.

The chapter asks two questions of the models of :mod:`rnnmem.linear_ensemble`
(the linear recurrent unit, minGRU and a selective decay) and of the gated
cells of the earlier chapters, and answers them by training, with the lab's
ensembles, evaluation and success rule (:func:`rnnmem.lab.train`):

* **How far back can each remember?** Success against lag on three tasks
  (:data:`TASKS`), over a ladder of lags that grows threefold
  (:data:`LAGS`); a model climbs to the next lag only while its success rate
  at the last one is at least :data:`CLIMB_RATE` (:class:`Ladder`).
* **What does reading only the input cost?** The task ``first-recall``
  (:func:`rnnmem.tasks.make_task`), where the token to recall sits at a
  position that varies and may recur later: one layer against two
  (:data:`FIRST_MODELS`, :data:`FIRST_LAG`).

and measures two things the formulas predict: the LRU's ring (success
against :math:`r_{\max}`, :data:`RING_RADII`, beside the horizon each
predicts) and the gradient that reaches back (:func:`gradient_reach`).

Three controls, added after the first results, test readings of them: plain
recall beside first-token recall (:data:`PLAIN_TASK`, with the selective decay,
:data:`FIRST_SELECTIVE`); the LRU with real decays against the book's on
random recall (:data:`REAL_MODELS`); and minGRU with its decays started near
:data:`SHIFT_DECAY` against minGRU as drawn (:data:`SHIFT_MODELS`).

**The design**, fixed before any result was looked at, is the constants
below: :data:`SEEDS` (20 per cell), :data:`DESIGN` (the lab's settings of
the chapter "Memory, measured by training": 16 units, batches of 32, Adam at
0.01, clipping at 1, success at 0.9 held-out accuracy or :math:`R^2`) with
the budget :data:`BUDGET`, float32 arithmetic (:data:`PRECISION`); every
member retires at its first success.

**Models** are named by a spec: the lab's (``"gru"``, ``"lstm:chrono"``, any
:data:`rnnmem.experiments.MODEL_SPECS`), or ``"lru"``, ``"mingru"``,
``"selective"`` (S6 without its convolution), ``"mamba"`` (Mamba's block), optionally followed by ``":L"``, the number of layers, and
(LRU only) ``":rR"``, the ring's outer radius :math:`r_{\max}`, and ``":real"``
(the phases fixed at 0 and not trained: real decays) or ``":theta0"`` (the phases
started at 0 and trained); (minGRU only) ``":aA"``, its gate bias shifted so that
its decays :math:`1 - z` start at :math:`A` at a zero input
(:func:`rnnmem.mingru.gate_shift_for`): ``"lru:2"``, ``"lru:1:r0.99"``,
``"lru:real"``, ``"mingru:a0.95"`` (:class:`Spec`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from . import cells, experiments, lab, mingru, tasks
from .checks import Check, check_choice, check_positive_int
from .experiments import Design, RunResult
from .linear_ensemble import LINEAR_MODELS, LinearEnsemble

__all__ = [
    "MODELS",
    "TASKS",
    "LAGS_DESIGNED",
    "LAGS",
    "CLIMB_RATE",
    "SEEDS",
    "BUDGET",
    "DESIGN",
    "PRECISION",
    "RING_RADII",
    "RING_R_MIN",
    "RING_TASK",
    "RING_LAG",
    "FIRST_MODELS",
    "FIRST_LAG",
    "FIRST_SELECTIVE",
    "PLAIN_TASK",
    "BLOCK_MODELS",
    "BLOCK_TASK",
    "BLOCK_LAG",
    "FIRST_BLOCK",
    "REAL_MODELS",
    "REAL_TASK",
    "REAL_LAG",
    "SHIFT_DECAY",
    "SHIFT_MODELS",
    "SHIFT_TASK",
    "SHIFT_LAG",
    "REACH_MODELS",
    "REACH_LAG",
    "SPECS",
    "STEP_COST",
    "Spec",
    "ModelText",
    "DesignRun",
    "Ladder",
    "LadderResult",
    "check_spec",
    "make_ensemble",
    "gradient_reach",
]

MODELS = ("lstm:chrono", "gru", "mingru", "lru", "lru:2", "selective")
"""The models of the lag ladder: the LSTM with chrono initialization and the GRU (the earlier chapters'
best), minGRU, the LRU with one and two layers, and the selective decay."""

TASKS = ("blank-recall", "recall", "adding")
"""The ladder's tasks: recall across blanks, recall across random tokens, the adding problem."""

LAGS_DESIGNED = (10, 30, 100, 300, 1000)
"""The ladder as designed: each lag about three times the last."""

LAGS = (10, 30, 100, 300)
"""The ladder as trained: :data:`LAGS_DESIGNED` without its last rung, dropped by cost before any run of it.
A run of 20 members at lag 1000 costs about ten times one at lag 100, and the selective decay's (several
times the LSTM's cost per step) alone would have cost more than the whole chapter's budget: a cold build
of the site, which trains every run, must stay within minutes on a machine of two cores."""

CLIMB_RATE = 0.5
"""A model is trained at the next lag of the ladder while at least this share of its seeds succeeded at the last
(a cell that most seeds fail is where the model's reach ends; set by cost, before any run: every failing cell
trains its whole budget, and cells three times longer cost three times more)."""

SEEDS = tuple(range(20))
"""The seeds of every cell: 0 to 19."""

BUDGET = 300
"""Updates per member (a member retires at its first success): the short budget of the chapter "Memory,
measured by training" (:data:`rnnmem.experiments.SHORT`)."""

DESIGN = dataclasses.replace(experiments.DESIGN, steps=BUDGET)
"""The lab's design (:data:`rnnmem.experiments.DESIGN`) with the budget :data:`BUDGET`."""

PRECISION = "float32"
"""The arithmetic of every run of the chapter's builders."""

RING_RADII = (0.9, 0.99, 0.999)
r"""The LRU's outer ring radius :math:`r_{\max}` in the ring experiment."""

RING_R_MIN = 0.5
r"""The inner radius :math:`r_{\min}` of a spec that sets :math:`r_{\max}` (``"lru:1:r0.99"``): 0.5, below
every :data:`RING_RADII` (for an :math:`r_{\max}` at or below it, :math:`r_{\max}/2`)."""

RING_TASK = "blank-recall"
"""The ring experiment's task."""

RING_LAG = 100
r"""The ring experiment's lag: past the 1% horizon of :math:`r_{\max} = 0.9`, within those of 0.99 and 0.999."""

FIRST_MODELS = ("lstm:chrono", "mingru", "mingru:2", "lru", "lru:2")
"""The models trained on ``first-recall``: minGRU and the LRU with one layer and with two, and the LSTM, whose
gates read the state (the selective decay, several times costlier per step, was left out by cost; the control
:data:`FIRST_SELECTIVE` adds it, with one layer and with two)."""

FIRST_LAG = 20
"""The lag of ``first-recall``: the answer is between ``(FIRST_LAG + 1) // 2 + 1`` and ``FIRST_LAG + 1`` steps back."""

FIRST_SELECTIVE = ("selective", "selective:2")
"""The selective decay with one layer and with two, added to the first-token experiment after its first results
(its claim covered the selective decay without training it): trained, as every model of :data:`FIRST_MODELS`, on
``first-recall`` and on plain ``recall`` at :data:`FIRST_LAG`. The one-layer's two cells took 38 seconds to train
on a quiet machine of two cores (18 on ``recall``, 21 on ``first-recall``), and 236 while others ran; a second layer
doubles the cost of a step (:data:`STEP_COST` is per layer)."""

BLOCK_MODELS = ("selective", "mamba")
"""S6 without its convolution (the bare selective scan) beside Mamba's whole block (:mod:`rnnmem.mamba`: the
causal convolution of width 4, the SiLU and the gating branch around the same scan), one layer each, where reading
only the input is tested: recall across random tokens at :data:`BLOCK_LAG`, and the first token beside plain recall
at :data:`FIRST_LAG` (:data:`FIRST_BLOCK`). Added after the first results, when the bare scan had been named Mamba's;
fixed before any run of the block. The block is not climbed up the lag ladder: one step costs 2.0 to 2.6 times the
bare scan's (:data:`STEP_COST`), and a cell of 20 members at lag 300 that does not succeed would train for about ten
minutes on a machine of two cores."""

BLOCK_TASK = "recall"
"""The task of :data:`BLOCK_MODELS` beside the ladder: recall across random tokens."""

BLOCK_LAG = 10
"""The lag of :data:`BLOCK_TASK`: the ladder's first, where the bare scan and minGRU fail and the LRU succeeds."""

FIRST_BLOCK = ("mamba",)
"""Mamba's block, one layer, added to the first-token experiment (and its plain-recall control) with
:data:`BLOCK_MODELS`."""

PLAIN_TASK = "recall"
"""The control of ``first-recall``: recall across random tokens at the same lag, :data:`FIRST_LAG`. A model that
fails it too says nothing about the first token; the first token's failure is informative only where it succeeds."""

REAL_MODELS = ("lru", "lru:real", "lru:theta0")
"""The control of the LRU's success across random tokens: the book's LRU, its decays' phases drawn on the ring
and trained, against the same LRU with real decays (phases fixed at 0) and with phases started at 0 and trained.
The three draw the same numbers but the phases (:func:`rnnmem.lru.draw`)."""

REAL_TASK = "recall"
"""The task of :data:`REAL_MODELS`."""

REAL_LAG = 10
"""The lag of :data:`REAL_MODELS`: the ladder's first."""

SHIFT_DECAY = 0.95
r"""minGRU's gate bias shifted so that its decays :math:`1 - z` start at this value at a zero input and a zero
drawn bias: :math:`b_z` plus :math:`\ln(0.05/0.95)` (:func:`rnnmem.mingru.gate_shift_for`)."""

SHIFT_MODELS = ("mingru", f"mingru:a{SHIFT_DECAY:g}")
"""The causal test of "where training starts decides": minGRU as drawn against minGRU with its decays started near
:data:`SHIFT_DECAY`, on :data:`SHIFT_TASK` at :data:`SHIFT_LAG`."""

SHIFT_TASK = "blank-recall"
"""The task of :data:`SHIFT_MODELS`."""

SHIFT_LAG = 100
"""The lag of :data:`SHIFT_MODELS`: where minGRU as drawn and the selective decay differ on the ladder."""

REACH_MODELS = ("rnn", "lstm:chrono", "mingru", "lru")
"""The models whose gradient reach the chapter draws, at initialization and after training."""

REACH_LAG = 100
"""The lag (blank recall) of the gradient-reach measurement."""

STEP_COST = {"classic": 4, "mingru": 5, "lru": 8, "selective": 30, "mamba": 70}
"""The relative cost of one member's step in one layer, forward and backward, by cell (``classic``: the LSTM or
GRU): the lab's runs of the ladder at lags 100 and 300, timed on a machine of two cores (about 12 microseconds for
the LSTM and the GRU, 17 for minGRU, 26 for the LRU, 90 to 105 for the selective decay, whose state is 8 numbers
per channel). Mamba's block, timed beside the selective scan in one process (20 members, batches of 32, 16 units,
float32, the BLAS on one thread): 2.0 to 2.6 times its cost per step at lags 10, 100 and 300, its scan running
over twice the channels. Only the order in which runs are trained depends on it."""

SPECS = (
    f"{experiments.MODEL_SPECS}; or 'lru', 'mingru', 'selective', 'mamba', optionally followed by ':L' "
    "(layers, a whole number >= 1), for 'lru', ':rR' (the ring's outer radius, 0 < R < 1) and ':real' "
    "(phases fixed at 0) or ':theta0' (phases started at 0), and for 'mingru', ':aA' (its decays "
    "started at A, 0 < A < 1)"
)
"""The spec language in words (what an error message says is allowed)."""


@dataclass(frozen=True)
class Spec:
    """A model of the chapter: a gated cell of the lab (``classic``), or a linear recurrence and its options.

    >>> Spec.parse("lru:2:r0.99")
    Spec(cell='lru', layers=2, r_max=0.99, classic=None, phases='ring', decay0=None)
    >>> str(Spec.parse("lstm:chrono")), Spec.parse("lru:2").label
    ('lstm:chrono', 'LRU, 2 layers')
    >>> [(str(s), s.key, s.label) for s in map(Spec.parse, ("lru:real", "lru:theta0"))]
    [('lru:real', 'lru1_real', 'LRU, real decays (θ = 0, fixed)'), ('lru:theta0', 'lru1_theta0', 'LRU, phases from θ = 0')]
    >>> s = Spec.parse("mingru:a0.95")
    >>> str(s), s.key, s.label, round(s.options()["gate_shift"], 4)
    ('mingru:a0.95', 'mingru1_a0.95', 'minGRU, decays from 0.95', -2.9444)
    >>> Spec.parse("mingru:r0.9")
    Traceback (most recent call last):
    ...
    ValueError: model must be a model: ... got 'mingru:r0.9'
    >>> Spec.parse("lru:real:theta0")
    Traceback (most recent call last):
    ...
    ValueError: model must be a model: ... got 'lru:real:theta0'
    >>> Spec.parse("mingru:a1")
    Traceback (most recent call last):
    ...
    ValueError: model must be a model: ... got 'mingru:a1'
    """

    cell: str
    layers: int = 1
    r_max: float | None = None
    classic: experiments.ModelSpec | None = None
    phases: str = "ring"
    """The LRU's phases (:data:`rnnmem.lru.PHASES`): ``"ring"`` (drawn, trained), ``"zero"`` (``:theta0``),
    ``"frozen"`` (``:real``)."""
    decay0: float | None = None
    """minGRU's decay :math:`1 - z` at a zero input and a zero drawn bias (``:aA``), or ``None``: as drawn."""

    @classmethod
    def parse(cls, value: Any, name: str = "model") -> Spec:
        """The model a spec names (:data:`SPECS`); a :class:`Spec` is returned as it is."""
        if isinstance(value, Spec):
            return value
        problem = ValueError(f"{name} must be a model: {SPECS}, got {value!r}")
        if not isinstance(value, str):
            raise problem
        cell, *rest = value.split(":")
        if cell not in LINEAR_MODELS:
            try:
                classic = experiments.ModelSpec.parse(value, name)
            except ValueError:
                raise problem from None
            return cls(classic.cell, classic=classic)
        layers, r_max, phases, decay0 = 1, None, "ring", None
        for k, part in enumerate(rest):
            if part.isdigit() and int(part) >= 1 and k == 0:
                layers = int(part)
            elif part in _PHASE_PARTS and cell == "lru" and phases == "ring":
                phases = _PHASE_PARTS[part]
            elif part[:1] in ("r", "a") and (cell, part[0]) in (("lru", "r"), ("mingru", "a")):
                if (r_max if part[0] == "r" else decay0) is not None:
                    raise problem
                try:
                    number = float(part[1:])
                except ValueError:
                    raise problem from None
                if not 0.0 < number < 1.0:
                    raise problem
                r_max, decay0 = (number, decay0) if part[0] == "r" else (r_max, number)
            else:
                raise problem
        return cls(cell, layers, r_max, phases=phases, decay0=decay0)

    def __str__(self) -> str:
        if self.classic is not None:
            return str(self.classic)
        text = self.cell if self.layers == 1 and self.r_max is None else f"{self.cell}:{self.layers}"
        text = text if self.r_max is None else f"{text}:r{self.r_max:g}"
        if self.phases != "ring":
            text += ":" + _PHASE_TEXT[self.phases]
        return text if self.decay0 is None else f"{text}:a{self.decay0:g}"

    @property
    def label(self) -> str:
        """The model as a legend or a table names it: ``LSTM, chrono``, ``LRU, 2 layers``."""
        if self.classic is not None:
            text = str(self.classic)
            if text == "lstm:chrono":
                return "LSTM, chrono"
            return cells.LABELS[text] if text in ("gru", "rnn") else text
        name = cells.LABELS[self.cell]
        text = name if self.layers == 1 else f"{name}, {self.layers} layers"
        text = text if self.r_max is None else f"{text}, r_max {self.r_max:g}"
        if self.phases != "ring":
            text += {"frozen": ", real decays (θ = 0, fixed)", "zero": ", phases from θ = 0"}[self.phases]
        return text if self.decay0 is None else f"{text}, decays from {self.decay0:g}"

    @property
    def key(self) -> str:
        """The model's name in a builder's values: ``chrono``, ``gru``, ``lru2``, ``lru1_r0.99``."""
        if self.classic is not None:
            return self.classic.key
        base = f"{self.cell}{self.layers}"
        base = base if self.r_max is None else f"{base}_r{self.r_max:g}"
        if self.phases != "ring":
            base += "_" + _PHASE_TEXT[self.phases]
        return base if self.decay0 is None else f"{base}_a{self.decay0:g}"

    def options(self) -> dict[str, Any]:
        """The fields of :class:`rnnmem.lab.Model` that make this model (the seeds, size and arithmetic aside)."""
        if self.classic is not None:
            m = self.classic
            out: dict[str, Any] = {"model": m.cell, "forget_bias": m.forget_bias, "init": m.init}
            if m.input_bias is not None:
                out["input_bias"] = m.input_bias
            return out
        out = {"model": self.cell, "layers": self.layers}
        if self.r_max is not None:
            r_min = RING_R_MIN if self.r_max > RING_R_MIN else self.r_max / 2
            out.update(r_min=r_min, r_max=self.r_max)
        if self.phases != "ring":
            out["phases"] = self.phases
        if self.decay0 is not None:
            out["gate_shift"] = mingru.gate_shift_for(self.decay0)
        return out


_PHASE_PARTS = {"real": "frozen", "theta0": "zero"}
_PHASE_TEXT = {v: k for k, v in _PHASE_PARTS.items()}
_ENSEMBLE_ONLY = ("phases", "gate_shift")
"""The options :class:`rnnmem.linear_ensemble.LinearEnsemble` takes and :class:`rnnmem.lab.Model` does not."""


def make_ensemble(spec: Any, task: tasks.Task, seeds: Any, hidden: int, dtype: Any = np.float64) -> Any:
    """The untrained ensemble of ``spec`` on ``task``, one member per seed: :func:`rnnmem.lab.make_ensemble`, or
    for the options it does not take (``phases``, ``gate_shift``) a :class:`~rnnmem.linear_ensemble.LinearEnsemble`
    made as it makes one.

    >>> make_ensemble("lru:real", tasks.make_task("recall", 3, 4), [0, 1], 8).phases
    'frozen'
    """
    options = check_spec("model", spec).options()
    model = options.pop("model")
    extra = {k: options.pop(k) for k in _ENSEMBLE_ONLY if k in options}
    if not extra:
        return lab.make_ensemble(task, model, list(seeds), hidden=hidden, dtype=dtype, **options)
    return LinearEnsemble(
        model, task.input_size, hidden, task.output_size, list(seeds), dtype=dtype, **options, **extra
    )


def check_spec(name: str, value: Any) -> Spec:
    """A model spec (:data:`SPECS`), parsed, with errors naming ``name``.

    >>> check_spec("model", "selective:2").layers
    2
    """
    return Spec.parse(value, name)


def _check_spec_text(name: str, value: Any) -> Any:
    Spec.parse(value, name)
    return value


#: A model spec of the chapter (:data:`SPECS`): checked by :meth:`Spec.parse`, passed on as written.
ModelText = Annotated[str, Check(_check_spec_text, f"models ({SPECS})")]


@dataclass(frozen=True)
class DesignRun:
    """One ensemble, one seed per member, trained on ``task`` at ``lag`` with the ``design``.

    A pure value: everything the run depends on, so that it can key a cache;
    :meth:`execute` trains it (:func:`rnnmem.lab.train`, members retiring at
    their first success) and returns the lab's :class:`rnnmem.experiments.RunResult`.

    >>> run = DesignRun("lru", "blank-recall", lag=3, seeds=(0, 1), design=Design(hidden=8, steps=20))
    >>> result = run.execute()
    >>> result.scores.shape[0], len(result.success_step)
    (2, 2)
    """

    model: Spec
    task: str
    lag: int
    seeds: tuple[int, ...] = SEEDS
    design: Design = DESIGN
    dtype: str = PRECISION

    def __post_init__(self) -> None:
        object.__setattr__(self, "model", Spec.parse(self.model))
        object.__setattr__(self, "task", check_choice("task", self.task, tasks.TASKS))
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
        """A relative cost, to train the costliest runs first: :data:`STEP_COST` times steps, members and updates."""
        per_step = STEP_COST["classic"] if self.model.classic is not None else STEP_COST[self.model.cell]
        return per_step * self.model.layers * (self.lag + 2) * len(self.seeds) * self.design.steps

    def execute(self) -> RunResult:
        """Train the run; a pure function of the run."""
        task = tasks.make_task(self.task, self.lag, experiments.ALPHABET)
        if any(k in self.model.options() for k in _ENSEMBLE_ONLY):
            model: Any = make_ensemble(self.model, task, self.seeds, self.design.hidden, np.dtype(self.dtype))
        else:
            model = lab.Model(
                seeds=list(self.seeds), hidden=self.design.hidden, dtype=np.dtype(self.dtype), **self.model.options()
            )
        result = lab.train(task, model, self.design.schedule(stop_when_done=True, retire=True))
        return RunResult.of(result)


Train = experiments.Train


@dataclass(frozen=True)
class Ladder:
    """Success against lag: every model on every task, up the lags while it keeps succeeding.

    Each model starts at the first of ``lags`` and is trained at the next
    while its success rate at the last one was at least ``climb_rate``; a
    model that falls below it stops, and its later lags are read as not
    trained (the rule, fixed before any run, keeps the costliest cells, long
    lags that no model holds, from being trained at all).

    >>> ladder = Ladder(("lru",), ("blank-recall",), lags=(2, 4), seeds=(0, 1), design=Design(hidden=8, steps=10))
    >>> [(str(r.model), r.lag) for r in ladder.first_runs()]
    [('lru', 2)]
    """

    models: tuple
    tasks: tuple = TASKS
    lags: tuple = LAGS
    seeds: tuple = SEEDS
    design: Design = DESIGN
    climb_rate: float = CLIMB_RATE
    dtype: str = PRECISION

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", tuple(check_spec(f"models[{i}]", m) for i, m in enumerate(self.models)))
        object.__setattr__(
            self, "tasks", tuple(check_choice(f"tasks[{i}]", t, tasks.TASKS) for i, t in enumerate(self.tasks))
        )
        object.__setattr__(self, "lags", tuple(experiments.check_lags("lags", self.lags)))

    def run(self, model: Any, task: str, lag: int) -> DesignRun:
        """The run of one cell."""
        return DesignRun(model, task, lag, tuple(self.seeds), self.design, self.dtype)

    def first_runs(self) -> list[DesignRun]:
        """Every model on every task at the ladder's first lag."""
        return [self.run(m, t, self.lags[0]) for m in self.models for t in self.tasks]

    def next_run(self, run: DesignRun, result: RunResult) -> DesignRun | None:
        """The run after ``run`` up its model's and task's ladder, or ``None``: the last lag, or a rate below
        :attr:`climb_rate` at this one. Each (model, task) climbs on its own results alone.

        >>> ladder = Ladder(("lru",), ("blank-recall",), lags=(2, 4), seeds=(0, 1), design=Design(hidden=8, steps=10))
        >>> first = ladder.first_runs()[0]
        >>> ladder.next_run(first, first.execute()) in (None, ladder.run("lru", "blank-recall", 4))
        True
        """
        if result.successes / len(self.seeds) < self.climb_rate:
            return None
        k = self.lags.index(run.lag)
        return self.run(run.model, run.task, self.lags[k + 1]) if k + 1 < len(self.lags) else None

    def result(self, trained: Mapping[DesignRun, RunResult]) -> LadderResult:
        """The ladder read from its trained runs (those of :meth:`first_runs` and every :meth:`next_run` after)."""
        cells = [(m, t, lag) for lag in self.lags for m in self.models for t in self.tasks]
        return LadderResult(self, {cell: trained[run] for cell in cells if (run := self.run(*cell)) in trained})

    def execute(self, train: Train = experiments._train_here) -> LadderResult:
        """Train the ladder rung by rung: every cell of one rung at once (``train`` may use a pool).

        A pool can also train each (model, task) up its ladder as soon as its last run ends, from
        :meth:`first_runs` and :meth:`next_run` (:func:`rnnmem.engine.train`): the
        same runs, so the same result.
        """
        trained: dict[DesignRun, RunResult] = {}
        runs = self.first_runs()
        while runs:
            results = train(runs)
            trained.update(zip(runs, results))
            runs = [nxt for run, res in zip(runs, results) if (nxt := self.next_run(run, res)) is not None]
        return self.result(trained)


@dataclass(frozen=True)
class LadderResult:
    """The trained cells of a :class:`Ladder`, by ``(model, task, lag)``."""

    ladder: Ladder
    trained: dict

    def outcome(self, model: Any, task: str, lag: int) -> experiments.Outcome | None:
        """The cell's outcome at the design's budget, or ``None`` where the ladder did not train it."""
        result = self.trained.get((check_spec("model", model), task, lag))
        return None if result is None else result.outcome(self.ladder.design.steps)

    def longest(self, model: Any, task: str, rate: float = 0.5) -> int | None:
        """The longest lag at which the model's success rate is at least ``rate`` (``None``: none)."""
        held = [
            lag
            for lag in self.ladder.lags
            if (o := self.outcome(model, task, lag)) is not None and o.successes >= rate * o.n
        ]
        return max(held) if held else None


def gradient_reach(
    model: Any, lag: int, seeds: Any, hidden: int, *, params: dict | None = None, sequences: int = 256
) -> np.ndarray:
    r"""The share of the gradient at the query that reaches each distance back, on blank recall: ``(T,)``.

    Entry :math:`k` is :math:`\|\partial\ell/\partial h_{T-k}\| / \|\partial\ell/\partial h_T\|`
    (:func:`rnnmem.lab.gradient_by_step`: the state of the first layer, the complex
    modulus for the LRU), the median over the seeds, on ``sequences`` sequences drawn
    with seed 1. The models are drawn as :func:`rnnmem.lab.make_ensemble` draws them,
    in float64, or carry ``params`` (trained ones, :attr:`rnnmem.experiments.RunResult.params`).

    >>> share = gradient_reach("lru", lag=3, seeds=[0, 1], hidden=8, sequences=16)
    >>> share.shape, float(share[0])
    ((5,), 1.0)
    """
    spec = check_spec("model", model)
    task = tasks.make_task("blank-recall", check_positive_int("lag", lag), experiments.ALPHABET)
    ens = make_ensemble(spec, task, seeds, check_positive_int("hidden", hidden))
    if params is not None:
        for name, value in params.items():
            ens.params[name][...] = value
    norms = lab.gradient_by_step(ens, task, n=check_positive_int("sequences", sequences), seed=1)
    return np.median(norms[:, ::-1] / norms[:, -1:], axis=0)

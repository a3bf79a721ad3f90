"""A grid of the lab: every model at every lag, many seeds each, trained by the engine and counted.

The grid is the cross of ``models`` (the lab's spec strings,
:data:`rnnmem.by_design.SPECS`: ``"lstm:1"``, ``"gru"``, ``"lru:1:r0.9"``)
and ``lags``, trained on ``task`` for ``steps`` updates with seeds
``0 .. seeds-1``; everything else is the lab's design
(:data:`rnnmem.by_design.DESIGN`: its hidden size, batch, learning rate,
clipping, evaluations and success threshold), in float32 as the chapters train.

Each cell's seeds are trained in runs of at most :data:`SEEDS_PER_RUN`
members (:class:`rnnmem.by_design.DesignRun`, one ensemble each; members never mix,
so a seed's outcome is the same in any run), and the runs go to
:func:`rnnmem.engine.train`: on this machine's processes or on a Dask cluster,
with the same outcomes. A cell's count is the number of seeds that succeeded,
with its Wilson interval (:func:`rnnmem.stats.wilson`).

>>> grid = Grid(("gru", "lru"), lags=(2,), seeds=3, steps=20, hidden=8)
>>> [(str(r.model), r.lag, r.seeds) for r in grid.runs()]
[('gru', 2, (0, 1, 2)), ('lru', 2, (0, 1, 2))]
>>> Grid(("lstm:x",), lags=(2,), seeds=3, steps=20)
Traceback (most recent call last):
...
ValueError: models[0] must be a model: ... got 'lstm:x'
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import by_design, stats, tasks
from .checks import check_choice, check_positive_int

__all__ = ["SEEDS_PER_RUN", "Grid", "Cell", "GridResult"]

SEEDS_PER_RUN = 10
"""The most seeds one run trains as one ensemble: a cell of 100 seeds is ten runs, which a cluster trains side
by side. Fixed, so that the runs (and the keys a store keeps them under) do not depend on the workers."""


@dataclass(frozen=True)
class Grid:
    """Models × lags, ``seeds`` seeds a cell, ``steps`` updates, on ``task`` (a name of :data:`rnnmem.tasks.TASKS`).

    ``hidden``, if given, replaces the design's hidden size. Bad input raises ``ValueError`` naming the
    argument: an unknown spec, an empty list of models or lags, a lag or a count below 1.
    """

    models: tuple[str, ...]
    lags: tuple[int, ...]
    seeds: int
    steps: int
    task: str = "recall"
    hidden: int | None = None

    def __post_init__(self) -> None:
        models, lags = _sequence("models", self.models), _sequence("lags", self.lags)
        specs = [str(by_design.Spec.parse(m, f"models[{k}]")) for k, m in enumerate(models)]
        object.__setattr__(self, "models", tuple(dict.fromkeys(specs)))
        checked = [check_positive_int(f"lags[{k}]", lag) for k, lag in enumerate(lags)]
        object.__setattr__(self, "lags", tuple(sorted(set(checked))))
        object.__setattr__(self, "seeds", check_positive_int("seeds", self.seeds))
        object.__setattr__(self, "steps", check_positive_int("steps", self.steps))
        object.__setattr__(self, "task", check_choice("task", self.task, tasks.TASKS))
        if self.hidden is not None:
            object.__setattr__(self, "hidden", check_positive_int("hidden", self.hidden))

    @property
    def design(self) -> by_design.Design:
        """The lab's design with this grid's budget (and hidden size)."""
        hidden = by_design.DESIGN.hidden if self.hidden is None else self.hidden
        return dataclasses.replace(by_design.DESIGN, steps=self.steps, hidden=hidden)

    def runs(self) -> list[by_design.DesignRun]:
        """Every run of the grid: each (model, lag) in groups of at most :data:`SEEDS_PER_RUN` seeds."""
        groups = [
            tuple(range(start, min(start + SEEDS_PER_RUN, self.seeds))) for start in range(0, self.seeds, SEEDS_PER_RUN)
        ]
        design = self.design
        return [
            by_design.DesignRun(by_design.Spec.parse(model), self.task, lag, seeds, design, by_design.PRECISION)
            for model in self.models
            for lag in self.lags
            for seeds in groups
        ]

    def result(self, results: dict) -> GridResult:
        """The grid's counts from ``results`` (run -> the lab's result, for every run of :meth:`runs`)."""
        steps: dict[tuple[str, int], list] = {}
        diverged: dict[tuple[str, int], list] = {}
        for run in self.runs():
            r = results[run]
            key = (str(run.model), run.lag)
            steps.setdefault(key, []).extend(r.success_step)
            diverged.setdefault(key, []).extend(r.diverged_at)
        cells = tuple(
            Cell(model, lag, tuple(steps[model, lag]), tuple(diverged[model, lag]))
            for model in self.models
            for lag in self.lags
        )
        return GridResult(self, cells)


@dataclass(frozen=True)
class Cell:
    """One model at one lag: each seed's success step (``None``: it never succeeded) and divergence step."""

    model: str
    lag: int
    success_step: tuple
    diverged_at: tuple

    @property
    def n(self) -> int:
        return len(self.success_step)

    @property
    def successes(self) -> int:
        return sum(s is not None for s in self.success_step)

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """The Wilson interval of the success rate (:func:`rnnmem.stats.wilson`)."""
        return stats.wilson(self.successes, self.n, level)


@dataclass(frozen=True)
class GridResult:
    """The grid's cells, model by model and lag by lag, and their record as JSON."""

    grid: Grid
    cells: tuple[Cell, ...]

    def cell(self, model: str, lag: int) -> Cell:
        """The cell of ``model`` (a spec string) at ``lag``; a ``ValueError`` names a pair the grid lacks."""
        key = str(by_design.Spec.parse(model))
        for c in self.cells:
            if c.model == key and c.lag == lag:
                return c
        raise ValueError(
            f"model {model!r} at lag {lag!r} is not in the grid (models {list(self.grid.models)}, "
            f"lags {list(self.grid.lags)})"
        )

    def to_json(self) -> str:
        """The design and every seed's outcome, keys sorted: no time or host, so that two sweeps of one grid
        compare byte for byte wherever they were trained."""
        design = dataclasses.asdict(self.grid.design)
        record: dict[str, Any] = {
            "task": self.grid.task,
            "alphabet": by_design.experiments.ALPHABET,
            "precision": by_design.PRECISION,
            "design": design,
            "seeds": self.grid.seeds,
            "cells": [
                {
                    "model": c.model,
                    "lag": c.lag,
                    "n": c.n,
                    "successes": c.successes,
                    "wilson_95": [round(v, 6) for v in c.interval()],
                    "success_step": list(c.success_step),
                    "diverged_at": list(c.diverged_at),
                }
                for c in self.cells
            ],
        }
        return json.dumps(record, indent=1, sort_keys=True) + "\n"


def _sequence(name: str, value: Any) -> Sequence:
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or len(value) == 0:
        raise ValueError(f"{name} must be a non-empty list, got {value!r}")
    return value

"""Every kind of run of the core follows one protocol, :class:`rnnmem.engine.Run`.

The run classes are found, not listed: every frozen dataclass of a core module
(``src/rnnmem/*.py``) with an ``execute`` and a ``cost`` is one. Each needs an
example below (cheap to make: nothing is trained), so a new kind of run fails
here until it has one, and is then held to the protocol like the others.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pickle
import pkgutil
from typing import Any

import pytest

import rnnmem
from rnnmem import attention_lab, by_design, charlm, clip_lab, engine, experiments, inside, planted, probe

SMALL = experiments.Design(hidden=4, steps=10)

EXAMPLES = {
    experiments.RecallRun: lambda: experiments.RecallRun(
        experiments.ModelSpec.parse("lstm:1"), lag=3, seeds=(0, 1), design=SMALL
    ),
    experiments.DropoutRun: lambda: experiments.DropoutRun(
        "carry-step", keep=0.9, forget_bias=2, lag=3, seeds=(0, 1), design=SMALL
    ),
    inside.InsideRun: lambda: inside.InsideRun("lstm:chrono", lag=3, seeds=(0, 1), design=SMALL, sequences=2),
    attention_lab.AttentionRun: lambda: attention_lab.AttentionRun("attention", lag=3, seeds=(0, 1), design=SMALL),
    by_design.DesignRun: lambda: by_design.DesignRun(
        by_design.Spec.parse("lru"), "blank-recall", lag=3, seeds=(0, 1), design=SMALL
    ),
    clip_lab.ClipRun: lambda: clip_lab.ClipRun(
        clip_lab.ClipDesign(length=4, hidden=2, updates=3, seeds=1, parts=1), (clip_lab.Member(0, 0.1),)
    ),
    charlm.TextRun: lambda: charlm.TextRun(charlm.Recipe(hidden=8, window=16, batch=2, updates=3, checkpoints=(0, 3))),
    planted.Cell: lambda: planted.Cell(2, 1, seeds=(0, 1), design=planted.Design(hidden=8, updates=5, eval_streams=4)),
    probe.MeasureRun: lambda: probe.MeasureRun((0, 2)),
}


def _run_classes() -> list[type]:
    """Every dataclass of a core module with ``execute`` and ``cost``: the kinds of run."""
    found = []
    for info in pkgutil.iter_modules(rnnmem.__path__):
        if info.ispkg:
            continue
        module = importlib.import_module(f"rnnmem.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or not dataclasses.is_dataclass(cls):
                continue
            if callable(getattr(cls, "execute", None)) and hasattr(cls, "cost"):
                found.append(cls)
    return sorted(found, key=lambda c: (c.__module__, c.__qualname__))


RUN_CLASSES = _run_classes()


def test_the_walk_finds_the_run_classes():
    assert experiments.RecallRun in RUN_CLASSES and attention_lab.AttentionRun in RUN_CLASSES
    assert experiments.Design not in RUN_CLASSES  # a dataclass without execute and cost is no run


@pytest.mark.parametrize("cls", RUN_CLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_every_run_class_is_an_engine_run(cls):
    assert cls in EXAMPLES, f"{cls.__module__}.{cls.__qualname__} is a run: give it an example in EXAMPLES"
    assert cls.__dataclass_params__.frozen, f"{cls.__qualname__} must be a frozen dataclass"
    run: Any = EXAMPLES[cls]()
    assert type(run) is cls
    assert isinstance(run, engine.Run)
    assert isinstance(run.cost, (int, float)) and run.cost > 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(run, dataclasses.fields(cls)[0].name, None)
    assert hash(run) == hash(EXAMPLES[cls]()) and run == EXAMPLES[cls]()
    again = pickle.loads(pickle.dumps(run))
    assert again == run and hash(again) == hash(run)


def test_the_run_classes_have_distinct_names():
    names = [c.__qualname__ for c in RUN_CLASSES]
    assert len(set(names)) == len(names) and "Run" not in names


def test_every_example_is_a_run_the_walk_found():
    assert set(EXAMPLES) <= set(RUN_CLASSES)

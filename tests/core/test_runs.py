"""Every kind of run the core defines follows rnnmem.engine.Run: a frozen dataclass with a cost and execute().

The classes are found, not listed: any class of a core module with an ``execute`` method and a ``cost`` is
held to the whole protocol, so a new kind of run is checked the day it is written. (A plan that trains many
runs, such as ``experiments.Sweep``, has ``execute`` but no ``cost``: it is not a run.)
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil

import pytest

import rnnmem
from rnnmem import engine
from rnnmem.experiments import DESIGN, ModelSpec, RecallRun


def _core_classes():
    for info in pkgutil.iter_modules(rnnmem.__path__):
        if info.name.startswith("_") or info.name in ("site", "cli"):
            continue
        module = importlib.import_module(f"rnnmem.{info.name}")
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and obj.__module__ == module.__name__:
                yield f"{module.__name__}.{name}", obj


RUN_CLASSES = sorted(
    (
        (name, cls)
        for name, cls in _core_classes()
        if "execute" in vars(cls) and hasattr(cls, "cost") and not getattr(cls, "_is_protocol", False)
    ),
    key=lambda item: item[0],
)


def test_the_core_defines_runs_and_the_recall_run_is_one_of_them():
    names = [name for name, _ in RUN_CLASSES]
    assert "rnnmem.experiments.RecallRun" in names
    assert len(names) >= 5, names


@pytest.mark.parametrize(("name", "cls"), RUN_CLASSES, ids=[name for name, _ in RUN_CLASSES])
def test_a_run_is_a_frozen_dataclass_with_a_cost_and_execute(name, cls):
    assert dataclasses.is_dataclass(cls), f"{name} must be a dataclass"
    assert vars(cls)["__dataclass_params__"].frozen, f"{name} must be frozen (a run is the key of its result)"
    assert isinstance(inspect.getattr_static(cls, "cost"), property), f"{name}.cost must be a property"
    execute = inspect.getattr_static(cls, "execute", None)
    assert callable(execute), f"{name} must have execute()"
    required = [
        p
        for p in list(inspect.signature(execute).parameters.values())[1:]
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    assert not required, f"{name}.execute() must need no arguments, needs {[p.name for p in required]}"


def test_a_run_instance_passes_the_runtime_check_and_its_cost_is_a_positive_number():
    run = RecallRun(ModelSpec.parse("gru"), 2, (0, 1), DESIGN)
    assert isinstance(run, engine.Run)
    assert float(run.cost) > 0
    assert hash(run) == hash(RecallRun(ModelSpec.parse("gru"), 2, (0, 1), DESIGN))

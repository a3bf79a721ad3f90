"""Every public function of the core package documents itself with a runnable example.

Functions and model classes need an example (Sybil runs it); result containers
(named tuples and dataclasses, which the functions return) need a docstring
saying what they hold; public methods need a docstring.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil

import pytest

import rnnmem

MODULES = [
    importlib.import_module(f"rnnmem.{m.name}")
    for m in pkgutil.iter_modules(rnnmem.__path__)
    if not m.name.startswith("_") and m.name != "site"
]


def public_objects(module):
    names = getattr(module, "__all__", None)
    assert names is not None, f"{module.__name__} must list its public names in __all__"
    for name in names:
        obj = getattr(module, name)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__:
            yield name, obj


def is_container(cls) -> bool:
    return dataclasses.is_dataclass(cls) or (issubclass(cls, tuple) and hasattr(cls, "_fields"))


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_public_names_have_docstrings_and_examples(module):
    problems = []
    for name, obj in public_objects(module):
        doc = inspect.getdoc(obj) or ""
        if not doc.strip():
            problems.append(f"{name}: no docstring")
        elif not (inspect.isclass(obj) and is_container(obj)) and ">>>" not in doc:
            problems.append(f"{name}: no runnable example in its docstring")
        if inspect.isclass(obj):
            for attr, value in vars(obj).items():
                if not attr.startswith("_") and inspect.isfunction(value) and not inspect.getdoc(value):
                    problems.append(f"{name}.{attr}: no docstring")
    assert not problems, f"{module.__name__}:\n" + "\n".join(problems)

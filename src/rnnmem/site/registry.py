"""The registry of figure and table builders.

A builder is a plain function decorated with :func:`figure` or :func:`table`:

* a figure builder takes the directive's arguments (except ``caption``) and
  returns a matplotlib ``Figure``; the site saves it as SVG;
* a table builder takes the directive's arguments (except ``caption``) and
  returns a :class:`~rnnmem.site.tables.Table`.

Builders live in the modules of :mod:`rnnmem.site.builders`, one module per
chapter; every module there is imported when the registry is first used.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass
from typing import Callable

from .directives import KINDS


@dataclass(frozen=True)
class Builder:
    kind: str
    name: str
    func: Callable
    module: str

    @property
    def source(self) -> str:
        """The builder's own source text: part of every cache key."""
        return inspect.getsource(self.func)

    @property
    def parameters(self) -> dict[str, inspect.Parameter]:
        return dict(inspect.signature(self.func).parameters)


_BUILDERS: dict[tuple[str, str], Builder] = {}
_LOADED = False


def _register(kind: str, name: str | None) -> Callable[[Callable], Callable]:
    def decorate(func: Callable) -> Callable:
        key = (kind, name or func.__name__)
        if key in _BUILDERS and _BUILDERS[key].func.__qualname__ != func.__qualname__:
            raise ValueError(f"two {kind} builders are named {key[1]!r}: "
                             f"{_BUILDERS[key].module} and {func.__module__}")
        _BUILDERS[key] = Builder(kind, key[1], func, func.__module__)
        return func
    return decorate


def figure(name: str | None = None) -> Callable[[Callable], Callable]:
    """Register a figure builder under ``name`` (default: the function's name)."""
    return _register("figure", name)


def table(name: str | None = None) -> Callable[[Callable], Callable]:
    """Register a table builder under ``name`` (default: the function's name)."""
    return _register("table", name)


def load_builders() -> None:
    """Import every module of :mod:`rnnmem.site.builders` (once)."""
    global _LOADED
    if _LOADED:
        return
    from . import builders

    for info in sorted(pkgutil.iter_modules(builders.__path__), key=lambda m: m.name):
        importlib.import_module(f"{builders.__name__}.{info.name}")
    _LOADED = True


def get(kind: str, name: str) -> Builder:
    """The builder of that kind and name; KeyError listing the known ones if there is none."""
    load_builders()
    if kind not in KINDS:
        raise KeyError(f"unknown kind {kind!r}; the kinds are {', '.join(KINDS)}")
    try:
        return _BUILDERS[(kind, name)]
    except KeyError:
        known = ", ".join(sorted(n for k, n in _BUILDERS if k == kind)) or "(none)"
        raise KeyError(f"unknown {kind} {name!r}; the known {kind}s are: {known}") from None


def all_builders() -> list[Builder]:
    load_builders()
    return [_BUILDERS[k] for k in sorted(_BUILDERS)]

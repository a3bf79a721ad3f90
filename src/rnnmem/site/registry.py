"""The registry of figure and table builders.

A builder is a plain function decorated with :func:`figure` or :func:`table`:

* a figure builder takes the directive's arguments (except ``caption``) and
  returns a matplotlib ``Figure``; the site saves it as SVG;
* a table builder takes the directive's arguments (except ``caption``) and
  returns a :class:`~rnnmem.site.tables.Table`;
* a widget builder returns a :class:`~rnnmem.site.widgets.Widget` (a slider
  whose every state is computed at build time).

Builders live in the modules of :mod:`rnnmem.site.builders`, one module per
chapter; every module there is imported when the registry is first used, and
:func:`refresh` imports new and edited ones again (``mkdocs serve``). A name
belongs to one builder: a second builder of the same kind and name, in
another module, fails at registration naming both.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import pkgutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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
#: Builder module -> sha256 of the source it was imported from.
_IMPORTED: dict[str, str] = {}
#: Builder module -> the error its last import raised (shown when one of its builders is asked for).
_IMPORT_ERRORS: dict[str, str] = {}
#: Other rnnmem module -> sha256 of its source when this process first saw it loaded.
_SNAPSHOT: dict[str, str] = {}


class BuilderImportError(ImportError):
    """A builder module that cannot be imported (the message names its file and line)."""


def _where(func: Callable) -> str:
    code = getattr(func, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else func.__module__


def _register(kind: str, name: str | None) -> Callable[[Callable], Callable]:
    def decorate(func: Callable) -> Callable:
        key = (kind, name or func.__name__)
        old = _BUILDERS.get(key)
        # The same function of the same module again is a re-import (mkdocs serve reloading
        # an edited module): it replaces the old one. Anything else is a clash.
        if old is not None and (old.module != func.__module__ or old.func.__qualname__ != func.__qualname__):
            raise ValueError(
                f"two {kind} builders are named {key[1]!r}: {old.module}.{old.func.__qualname__} "
                f"({_where(old.func)}) and {func.__module__}.{func.__qualname__} ({_where(func)}); "
                "rename one (the name is what a directive asks for)"
            )
        _BUILDERS[key] = Builder(kind, key[1], func, func.__module__)
        return func

    return decorate


def figure(name: str | None = None) -> Callable[[Callable], Callable]:
    """Register a figure builder under ``name`` (default: the function's name)."""
    return _register("figure", name)


def table(name: str | None = None) -> Callable[[Callable], Callable]:
    """Register a table builder under ``name`` (default: the function's name)."""
    return _register("table", name)


def widget(name: str | None = None) -> Callable[[Callable], Callable]:
    """Register a widget builder (an interactive figure, :mod:`rnnmem.site.widgets`) under ``name``."""
    return _register("widget", name)


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def _drop(module: str) -> None:
    for key in [k for k, b in _BUILDERS.items() if b.module == module]:
        del _BUILDERS[key]


def _format_import_error(module: str, exc: BaseException) -> str:
    from .traces import describe

    return f"the builder module {module} failed to import: {describe(exc)}"


def refresh(package=None) -> list[str]:
    """Bring the registry up to date with the builder modules on disk; returns the modules (re)imported.

    A module not imported yet (a new chapter's builders) is imported; one whose
    source changed since it was imported is imported again, its old builders
    dropped first; one deleted is forgotten. A long-running ``mkdocs serve``
    calls this before each rebuild, so new and edited builders are used
    without a restart. Raises :class:`BuilderImportError` naming every module
    that failed; the others are loaded all the same.
    """
    global _LOADED
    if package is None:
        from . import builders as package

        _LOADED = True

    prefix = package.__name__ + "."
    folder = Path(package.__path__[0])
    on_disk = sorted(prefix + info.name for info in pkgutil.iter_modules([str(folder)]))
    done: list[str] = []
    failed: list[str] = []
    for module in on_disk:
        digest = _digest(folder / (module[len(prefix) :] + ".py"))
        if module in sys.modules and _IMPORTED.get(module) == digest:
            continue
        _drop(module)
        try:
            if module in sys.modules:
                importlib.reload(sys.modules[module])
            else:
                importlib.import_module(module)
        except Exception as exc:
            _drop(module)
            sys.modules.pop(module, None)
            _IMPORTED.pop(module, None)
            _IMPORT_ERRORS[module] = _format_import_error(module, exc)
            failed.append(_IMPORT_ERRORS[module])
            continue
        _IMPORT_ERRORS.pop(module, None)
        _IMPORTED[module] = digest
        done.append(module)
    for module in sorted(m for m in set(_IMPORTED) - set(on_disk) if m.startswith(prefix)):
        _drop(module)
        _IMPORTED.pop(module)
        sys.modules.pop(module, None)
    _snapshot()
    if failed:
        raise BuilderImportError("\n".join(failed))
    return done


def _snapshot() -> None:
    """Remember the source of every rnnmem module loaded here (builder modules are tracked apart)."""
    from .render import module_path

    for name in list(sys.modules):
        if (name == "rnnmem" or name.startswith("rnnmem.")) and name not in _SNAPSHOT and name not in _IMPORTED:
            path = module_path(name)
            if path is not None:
                _SNAPSHOT[name] = _digest(path)


def stale_modules() -> set[str]:
    """rnnmem modules (not builder modules) whose source changed since this process loaded them.

    Their code in this process is not the code on disk: an item that depends
    on one is rendered in a fresh interpreter (see :mod:`rnnmem.site.render`).
    """
    from .render import module_path

    _snapshot()
    stale = set()
    for name, digest in _SNAPSHOT.items():
        path = module_path(name)
        if path is not None and _digest(path) != digest:
            stale.add(name)
    return stale


def load_builders() -> None:
    """Import every module of :mod:`rnnmem.site.builders` (once; :func:`refresh` to look again)."""
    if not _LOADED:
        refresh()


def get(kind: str, name: str) -> Builder:
    """The builder of that kind and name; KeyError listing the known ones if there is none."""
    load_builders()
    if kind not in KINDS:
        raise KeyError(f"unknown kind {kind!r}; the kinds are {', '.join(KINDS)}")
    try:
        return _BUILDERS[(kind, name)]
    except KeyError:
        known = ", ".join(sorted(n for k, n in _BUILDERS if k == kind)) or "(none)"
        extra = "".join(f"\n  ({e})" for e in _IMPORT_ERRORS.values())
        raise KeyError(f"unknown {kind} {name!r}; the known {kind}s are: {known}{extra}") from None


def all_builders() -> list[Builder]:
    load_builders()
    return [_BUILDERS[k] for k in sorted(_BUILDERS)]

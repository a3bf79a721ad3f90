"""The registry of figure, table and widget builders.

A builder is a plain function decorated with its kind's decorator (:func:`figure`,
:func:`table` or :func:`widget`: :meth:`rnnmem.site.kinds.Kind.decorator`):

* a figure builder takes the directive's arguments (except ``caption``) and
  returns a matplotlib ``Figure``; the site saves it as SVG;
* a table builder takes the directive's arguments (except ``caption``) and
  returns a :class:`~rnnmem.site.tables.Table`;
* a widget builder returns a :class:`~rnnmem.site.widgets.Widget` (a slider
  whose every state is computed at build time).

The decorators only mark the function with its kind and name; a
:class:`Registry` collects the marked functions of the modules it imports.
Builders live in the modules of :mod:`rnnmem.site.builders`, one module per
chapter; :data:`default` imports every module there when it is first used,
and :meth:`Registry.refresh` imports new and edited ones again
(``mkdocs serve``). A name belongs to one builder: a second builder of the
same kind and name, in another module, fails naming both. A test makes a
registry of its own (``Registry(["tb"])``) instead of changing the default one.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from .kinds import FIGURE, KINDS, MARK, TABLE, WIDGET
from .sources import Snapshot, file_digest
from .suggest import did_you_mean

__all__ = [
    "BUILDER_PACKAGE",
    "Builder",
    "BuilderClash",
    "BuilderImportError",
    "ModuleFailure",
    "Registry",
    "all_builders",
    "default",
    "figure",
    "get",
    "load_builders",
    "refresh",
    "stale_modules",
    "table",
    "widget",
]

#: The package whose modules hold the book's builders.
BUILDER_PACKAGE = "rnnmem.site.builders"


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


class BuilderImportError(ImportError):
    """A builder module that cannot be imported (the message names its file and line)."""


@dataclass(frozen=True)
class ModuleFailure:
    """Why a builder module's builders are not registered: its import failed, or one of its names is taken.

    ``path`` and ``line``: where (the line of the syntax error, of the innermost frame of the module
    that raised, or of the builder whose name is taken); ``clash``: (kind, name) of a name two
    builders claim, else None.
    """

    module: str
    message: str
    path: str
    line: int | None
    clash: tuple[str, str] | None = None


class BuilderClash(ValueError):
    """Two builders of one kind claim one name: ``kind``, ``name`` and where the second is defined."""

    def __init__(self, message: str, kind: str, name: str, path: str, line: int | None) -> None:
        super().__init__(message)
        self.kind, self.name, self.path, self.line = kind, name, path, line


def _failure_place(module: str, exc: BaseException) -> tuple[str, int | None]:
    """(file, line) of a failed import: the syntax error's, else the innermost frame in the module's file."""
    import traceback

    if isinstance(exc, SyntaxError) and exc.filename:
        return exc.filename, exc.lineno
    spec = importlib.util.find_spec(module) if module not in sys.modules else None
    origin = spec.origin if spec is not None and spec.origin else ""
    frames = [fs for fs in traceback.extract_tb(exc.__traceback__) if origin and Path(fs.filename) == Path(origin)]
    if frames:
        return frames[-1].filename, frames[-1].lineno
    return origin or module, None


def _where(func: Callable) -> str:
    code = getattr(func, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else func.__module__


#: The decorators, one a kind (:meth:`rnnmem.site.kinds.Kind.decorator`): ``@figure()`` marks a figure
#: builder, registered under ``name`` (default: the function's name) when its module is read.
figure = FIGURE.decorator
table = TABLE.decorator
#: A widget builder: an interactive figure (:mod:`rnnmem.site.widgets`).
widget = WIDGET.decorator


def _format_import_error(module: str, exc: BaseException) -> str:
    from .traces import describe

    return f"the builder module {module} failed to import: {describe(exc)}"


class Registry:
    """The builders of some packages of builder modules, kept up to date with the modules on disk.

    ``packages`` names the packages whose every module holds builders
    (default: :data:`BUILDER_PACKAGE`). They are imported on first use
    (:meth:`load_builders`); :meth:`refresh` looks again.
    """

    def __init__(self, packages: Iterable[str] = (BUILDER_PACKAGE,)) -> None:
        self.packages = tuple(packages)
        self.loaded = False
        self._builders: dict[tuple[str, str], Builder] = {}
        #: Builder module -> sha256 of the source it was imported from.
        self.imported: dict[str, str] = {}
        #: Builder module -> the error its last import raised (shown when one of its builders is asked for).
        self.import_errors: dict[str, str] = {}
        #: Builder module -> why its builders are not registered, with the file and line (the page check's).
        self.failures: dict[str, ModuleFailure] = {}
        #: The other rnnmem modules' sources when this process loaded them (builder modules are tracked apart).
        self.snapshot = Snapshot()

    # -- registering -----------------------------------------------------------------
    def add(self, kind: str, name: str, func: Callable) -> Builder:
        """Register ``func`` as the builder of that kind and name; ValueError naming both if the name is taken.

        The same function of the same module again is a re-import (``mkdocs serve``
        reloading an edited module): it replaces the old one. Anything else is a clash.
        """
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        key = (kind, name)
        old = self._builders.get(key)
        if old is not None and (old.module != func.__module__ or old.func.__qualname__ != func.__qualname__):
            code = getattr(func, "__code__", None)
            raise BuilderClash(
                f"two {kind} builders are named {name!r}: {old.module}.{old.func.__qualname__} "
                f"({_where(old.func)}) and {func.__module__}.{func.__qualname__} ({_where(func)}); "
                "rename one (the name is what a directive asks for)",
                kind,
                name,
                code.co_filename if code else func.__module__,
                code.co_firstlineno if code else None,
            )
        builder = Builder(kind, name, func, func.__module__)
        self._builders[key] = builder
        return builder

    def remove(self, kind: str, name: str) -> None:
        """Forget the builder of that kind and name (nothing if there is none)."""
        self._builders.pop((kind, name), None)

    def add_module(self, module: ModuleType) -> list[Builder]:
        """Register every builder the decorators marked in ``module`` (defined there, not imported into it)."""
        added = []
        for value in list(vars(module).values()):
            if callable(value) and getattr(value, "__module__", None) == module.__name__:
                for kind, name in getattr(value, MARK, ()):
                    added.append(self.add(kind, name, value))
        return added

    def forget(self, module: str) -> None:
        """Drop a module's builders and what is known of its import."""
        for key in [k for k, b in self._builders.items() if b.module == module]:
            del self._builders[key]
        self.imported.pop(module, None)
        self.import_errors.pop(module, None)
        self.failures.pop(module, None)

    # -- reading the modules on disk -----------------------------------------------------
    def refresh(self, package: ModuleType | str | None = None) -> list[str]:
        """Bring the registry up to date with the builder modules on disk; returns the modules (re)imported.

        A module not imported yet (a new chapter's builders) is imported; one whose
        source changed since it was imported is imported again, its old builders
        dropped first; one deleted is forgotten. A long-running ``mkdocs serve``
        calls this before each rebuild, so new and edited builders are used
        without a restart. Raises :class:`BuilderImportError` naming every module
        that failed; the others are loaded all the same. ``package``: only that
        package (default: every package of the registry).
        """
        if package is None:
            self.loaded = True
            packages = [importlib.import_module(p) for p in self.packages]
        else:
            packages = [importlib.import_module(package) if isinstance(package, str) else package]
        done: list[str] = []
        failed: list[str] = []
        for pkg in packages:
            self._refresh_package(pkg, done, failed)
        self.snapshot.take(exclude=self.imported)
        if failed:
            raise BuilderImportError("\n".join(failed))
        return done

    def _refresh_package(self, package: ModuleType, done: list[str], failed: list[str]) -> None:
        prefix = package.__name__ + "."
        folder = Path(package.__path__[0])
        on_disk = sorted(prefix + info.name for info in pkgutil.iter_modules([str(folder)]))
        for module in on_disk:
            digest = file_digest(folder / (module[len(prefix) :] + ".py"))
            if module in sys.modules and self.imported.get(module) == digest:
                continue
            adopt = module in sys.modules and module not in self.imported
            self.forget(module)
            try:
                if adopt:
                    # Imported already by other code (a test, a snippet, another registry), not by this
                    # registry: its functions are taken as they are, so there is one copy of each (a
                    # process pool pickles a builder's helpers by their module's current name).
                    loaded = sys.modules[module]
                else:
                    # Imported anew, not reloaded: a reload keeps the old module's names, a builder
                    # renamed or deleted in the source among them.
                    sys.modules.pop(module, None)
                    loaded = importlib.import_module(module)
            except Exception as exc:
                sys.modules.pop(module, None)
                self.import_errors[module] = _format_import_error(module, exc)
                path, line = _failure_place(module, exc)
                self.failures[module] = ModuleFailure(module, self.import_errors[module], path, line)
                failed.append(self.import_errors[module])
                continue
            try:
                self.add_module(loaded)
            except ValueError as exc:
                self.forget(module)
                self.import_errors[module] = f"the builder module {module} failed to register its builders: {exc}"
                clash = exc if isinstance(exc, BuilderClash) else None
                self.failures[module] = ModuleFailure(
                    module,
                    self.import_errors[module],
                    clash.path if clash else str(getattr(loaded, "__file__", module)),
                    clash.line if clash else None,
                    (clash.kind, clash.name) if clash else None,
                )
                failed.append(self.import_errors[module])
                continue
            self.imported[module] = digest
            done.append(module)
        for module in sorted(m for m in set(self.imported) - set(on_disk) if m.startswith(prefix)):
            self.forget(module)
            sys.modules.pop(module, None)

    def stale_modules(self) -> set[str]:
        """rnnmem modules (not builder modules) whose source changed since this process loaded them.

        Their code in this process is not the code on disk: an item that depends
        on one is rendered in a fresh interpreter (see :mod:`rnnmem.site.render`).
        """
        return self.snapshot.stale(exclude=self.imported)

    def load_builders(self) -> None:
        """Import every module of the registry's packages (once; :meth:`refresh` to look again)."""
        if not self.loaded:
            self.refresh()

    # -- asking --------------------------------------------------------------------------
    def get(self, kind: str, name: str) -> Builder:
        """The builder of that kind and name; KeyError listing the known ones if there is none."""
        self.load_builders()
        if kind not in KINDS:
            raise KeyError(f"unknown kind {kind!r}; the kinds are {', '.join(KINDS)}{did_you_mean(kind, KINDS)}")
        try:
            return self._builders[(kind, name)]
        except KeyError:
            names = sorted(n for k, n in self._builders if k == kind)
            known = ", ".join(names) or "(none)"
            extra = "".join(f"\n  ({e})" for e in self.import_errors.values())
            guess = did_you_mean(name, names)
            raise KeyError(f"unknown {kind} {name!r}{guess}; the known {kind}s are: {known}{extra}") from None

    def all_builders(self) -> list[Builder]:
        self.load_builders()
        return [self._builders[k] for k in sorted(self._builders)]


#: The book's builders (every module of :data:`BUILDER_PACKAGE`).
default = Registry()


def refresh() -> list[str]:
    """:meth:`Registry.refresh` of the :data:`default` registry."""
    return default.refresh()


def load_builders() -> None:
    """:meth:`Registry.load_builders` of the :data:`default` registry."""
    default.load_builders()


def get(kind: str, name: str) -> Builder:
    """:meth:`Registry.get` of the :data:`default` registry."""
    return default.get(kind, name)


def all_builders() -> list[Builder]:
    """:meth:`Registry.all_builders` of the :data:`default` registry."""
    return default.all_builders()


def stale_modules() -> set[str]:
    """:meth:`Registry.stale_modules` of the :data:`default` registry."""
    return default.stale_modules()

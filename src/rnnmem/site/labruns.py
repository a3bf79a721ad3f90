"""The lab's runs as a build trains them: through :mod:`rnnmem.engine`, shared by the build and kept on disk.

A builder asks for the runs it draws (:func:`runs`, or :func:`chains` for runs
that follow others) and never starts a process itself. A run's result is kept

* in memory for the rest of the build (:data:`_RUNS`): the figures and tables
  of one design share their runs;
* on disk while a renderer renders (:mod:`rnnmem.site.runcache`), keyed by the
  run and the code that trains it, so that a builder edit trains nothing again.

The runs missing from both are trained by :func:`rnnmem.engine.train` on
:func:`rnnmem.engine.executor_for`'s executor: the Dask scheduler named by
``$RNNMEM_SCHEDULER`` when it is set, else up to two local processes (one inside
a pytest-xdist worker, ``$RNNMEM_LAB_WORKERS`` to cap them). Each run is a pure
function of itself, so a page does not depend on where its runs were trained.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from rnnmem import engine

from . import runcache

__all__ = ["runs", "chains"]

_RUNS: dict = {}
"""Run -> result, for the life of this process (a build, a server, a test session)."""


class _Kept:
    """The build's :class:`rnnmem.engine.Store`: :data:`_RUNS`, then the disk (read into memory when found)."""

    def load(self, run: Any) -> Any | None:
        if run in _RUNS:
            return _RUNS[run]
        kept = runcache.load(run)
        if kept is not None:
            _RUNS[run] = kept
        return kept

    def save(self, run: Any, result: Any) -> None:
        _RUNS[run] = result
        runcache.save(run, result)


def runs(keys: Iterable[Any]) -> list:
    """The results of the runs ``keys``, in their order, training those not kept (the costliest first)."""
    keys = list(keys)
    results = engine.train(keys, store=_Kept())
    return [results[k] for k in keys]


def chains(first: Iterable[Any], follow: Callable[[Any, Any], Any]) -> dict:
    """Train chains of runs, each run started as soon as the one before it in its chain has ended: run -> result.

    ``follow(run, result)`` gives the runs that follow a run (:func:`rnnmem.engine.train`); kept runs are
    read, and their chains followed, without training. A run may not recur across chains (a ``ValueError``
    names it).
    """
    return engine.train(first, follow, store=_Kept())

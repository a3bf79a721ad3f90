"""The lab's trained runs, kept on disk beside the render cache, so a builder edit does not retrain them.

A figure of the lab reads its numbers from training runs (:mod:`rnnmem.experiments`,
:mod:`rnnmem.clip_lab`): frozen values whose ``execute()`` is a pure function of the
run. Several figures and tables share a run, and editing how a builder draws or words
its result changes the builder's source, and so the key of every item it renders
(:mod:`rnnmem.site.render`), but not one number a run computes. So while
:class:`rnnmem.site.render.Renderer` renders an item, a run's result is kept in
``<cache>/runs/`` under a key made of

* the run's ``repr`` (every field it depends on: model, lag, seeds, design, precision), and
* the digest of the source of the module that defines the run and of every ``rnnmem``
  module it imports, transitively (:func:`rnnmem.site.sources.dependencies`), and the
  numpy version,

so a change to the training code, the run's definition or numpy trains it again, and
nothing else does. Outside a renderer (:func:`directory` not entered), nothing is read
or written: a test that renders an item again through
:func:`rnnmem.site.render.build_content` trains every run afresh.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .sources import dependencies, sources_digest, version

__all__ = ["directory", "key", "load", "save"]

_DIR: Path | None = None


@contextlib.contextmanager
def directory(path: Path | None) -> Iterator[None]:
    """Keep runs in ``path`` (``None``: keep none) while the block runs."""
    global _DIR
    before, _DIR = _DIR, path
    try:
        yield
    finally:
        _DIR = before


def key(run: Any) -> str:
    """The run's key: its ``repr`` with the digest of the code that trains it and numpy's version."""
    module = type(run).__module__
    parts = [repr(run), sources_digest(dependencies(module)), version("numpy")]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _path(run: Any) -> Path | None:
    return None if _DIR is None else _DIR / f"{type(run).__name__}-{key(run)}.pickle"


def load(run: Any) -> Any | None:
    """The kept result of ``run``, or ``None`` (none kept, or no directory in use)."""
    path = _path(run)
    if path is None or not path.is_file():
        return None
    with path.open("rb") as f:
        return pickle.load(f)


def save(run: Any, result: Any) -> None:
    """Keep ``result`` as the result of ``run`` (nothing without a directory in use)."""
    path = _path(run)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    tmp.replace(path)

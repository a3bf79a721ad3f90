"""A progress bar on standard error for the commands that train: a terminal sees it, a pipe or a log does not.

The bar is drawn by the optional package tqdm (it comes with the ``site``
extra; the core needs numpy only). Without it the run is quiet, unless the bar
was asked for with ``--progress``: then a ``ValueError`` says how to install it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["BAR_FORMAT", "progress_bar"]

#: The bar: units done and in all, the bar, time per unit and to go, then units left (the postfix).
BAR_FORMAT = "{desc} {n_fmt}/{total_fmt} |{bar:10}| {rate_inv_fmt}, {remaining} to go{postfix}"


@contextmanager
def progress_bar(force: bool | None, total: int, what: str, unit: str) -> Iterator[Callable[[int], object] | None]:
    """A hook ``hook(done)`` that moves a tqdm bar of ``total`` units (``unit``) on standard error, or None (quiet).

    ``force`` None: a bar when standard error is a terminal and tqdm can be
    imported. True: a bar wherever standard error goes (a ``ValueError``
    naming ``--progress`` if tqdm is missing). False: none.
    """
    stream = sys.stderr
    if force is False or (force is None and not _is_terminal(stream)):
        yield None
        return
    try:
        from tqdm import tqdm
    except ImportError:
        if force:
            raise ValueError(
                "--progress draws its bar with the optional package tqdm, which is not installed "
                "(pip install tqdm, or rnnmem[site]); leave --progress out for a quiet run"
            ) from None
        yield None
        return
    columns, lines = _terminal_size(stream)
    bar = tqdm(
        total=total,
        desc=what,
        unit=unit,
        file=stream,
        bar_format=BAR_FORMAT,
        ncols=columns,
        nrows=lines,
        mininterval=0.2,
        postfix=f"{total} left",
    )

    def hook(done: int) -> None:
        bar.postfix = f"{total - done} left"  # drawn at tqdm's next refresh (at most 5 times a second)
        bar.update(done - bar.n)

    try:
        yield hook
    finally:
        bar.close()


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _terminal_size(stream: Any) -> tuple[int, int]:
    """Columns and lines; 100 and 24 for what a stream does not report (a new pseudo-terminal reports 0 x 0)."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return 100, 24
    return size.columns or 100, size.lines or 24

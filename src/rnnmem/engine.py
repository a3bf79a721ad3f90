"""The lab's runs, and the one place that trains them.

A **run** is a frozen value that holds everything its result depends on (the
model, the task, the seeds, the design, the arithmetic), so that its result is
a pure function of the run: the same run gives the same result, bit for bit,
in whichever process or on whichever machine it is trained. Every kind of run
the lab trains follows :class:`Run`:

* it is a frozen dataclass, so it can be hashed, compared, pickled and kept as
  the key of its result;
* ``cost`` is a relative cost (a number, larger for a longer run), used only to
  train the costliest runs first;
* ``execute()`` trains it and returns its result.
"""

from __future__ import annotations

from typing import Protocol, TypeVar, runtime_checkable

__all__ = ["Run"]

R_co = TypeVar("R_co", covariant=True)


@runtime_checkable
class Run(Protocol[R_co]):
    """What the lab trains: a frozen spec with a relative ``cost`` and an ``execute()`` that returns its result.

    >>> from rnnmem.experiments import Design, RecallRun
    >>> run = RecallRun("gru", lag=1, seeds=(0,), design=Design(hidden=4, steps=2))
    >>> isinstance(run, Run), run.cost > 0
    (True, True)
    """

    @property
    def cost(self) -> float:
        """A relative cost, to train the costliest runs first (it never changes a result)."""
        ...

    def execute(self) -> R_co:
        """Train the run and return its result: a pure function of the run."""
        ...

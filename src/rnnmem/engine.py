"""The lab's runs, and the one place that trains them: on local processes, or on a Dask cluster.

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

A sweep is many independent runs, some of which are known only when others have
ended (a model is trained at a longer lag while it keeps succeeding). :func:`train`
takes the first runs and a rule ``follow(run, result)`` that names the runs that
follow one, and trains them on an :class:`Executor`:

* :class:`Local`: up to ``workers`` processes of this machine (the standard
  library's :mod:`concurrent.futures`), or this process alone for one worker;
* :class:`Cluster`: the workers of a Dask distributed scheduler
  (``dask.distributed``, the optional extra ``rnnmem[cluster]``), reached at an
  address such as ``tcp://10.0.0.5:8786``.

Whatever the executor and however many workers it has, the results are the
same, bit for bit: each run is trained whole by one process, with the BLAS on
one thread, and each result is a pure function of its run. Only the order in
which runs are trained changes: the costliest waiting run goes first (on a
cluster, as Dask's task ``priority``), so that no worker waits at the end for
one long run. A cluster's scheduler retries a run whose worker was lost (Dask
reschedules the task of a worker that died, up to its
``distributed.scheduler.allowed-failures``, 3 by default).

A :class:`Store` keeps results between calls (:class:`Memory` in a dictionary;
the site keeps them on disk too): a run it holds is read, not trained.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Square:
...     n: int
...     @property
...     def cost(self) -> float:
...         return self.n
...     def execute(self) -> int:
...         return self.n * self.n
>>> isinstance(Square(3), Run)
True
>>> train([Square(2), Square(3)], executor=Local(1))
{Square(n=3): 9, Square(n=2): 4}
>>> train([Square(1)], lambda run, result: Square(run.n + 1) if run.n < 3 else None, executor=Local(1))
{Square(n=1): 1, Square(n=2): 4, Square(n=3): 9}
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = [
    "Run",
    "Store",
    "Memory",
    "Executor",
    "Local",
    "Cluster",
    "train",
    "train_all",
    "executor_for",
    "local_workers",
    "digest_here",
    "SCHEDULER_VARIABLE",
    "WORKERS_VARIABLE",
    "CONNECT_TIMEOUT",
]

R_co = TypeVar("R_co", covariant=True)

SCHEDULER_VARIABLE = "RNNMEM_SCHEDULER"
"""The environment variable that sends a build's runs to a Dask scheduler: its address (``tcp://host:8786``)."""

WORKERS_VARIABLE = "RNNMEM_LAB_WORKERS"
"""The environment variable that caps the local processes (default: 2, or the cores if fewer)."""

CONNECT_TIMEOUT = 10.0
"""Seconds to wait for a Dask scheduler to answer before the address is reported unreachable."""


@runtime_checkable
class Run(Protocol[R_co]):
    """What the lab trains: a frozen spec with a relative ``cost`` and an ``execute()`` that returns its result.

    Every kind of lab run follows it (:class:`rnnmem.experiments.RecallRun`, for one):

    >>> from rnnmem.experiments import Design, RecallRun
    >>> isinstance(RecallRun("gru", 2, (0,), Design(hidden=4)), Run), isinstance(3, Run)
    (True, False)
    """

    @property
    def cost(self) -> float:
        """A relative cost, to train the costliest runs first (it never changes a result)."""
        ...

    def execute(self) -> R_co:
        """Train the run and return its result: a pure function of the run."""
        ...


@runtime_checkable
class Store(Protocol):
    """Where results are kept between calls of :func:`train`: ``load`` gives ``None`` for a run it does not hold.

    >>> isinstance(Memory(), Store)
    True
    """

    def load(self, run: Any) -> Any | None:
        """The result kept for ``run``, or ``None``."""
        ...

    def save(self, run: Any, result: Any) -> None:
        """Keep ``result`` as ``run``'s."""
        ...


class Memory:
    """A :class:`Store` in a dictionary, for the life of this process (``results``: run -> result).

    >>> kept = Memory()
    >>> kept.save("a run", 42)
    >>> kept.load("a run"), kept.load("another")
    (42, None)
    """

    def __init__(self) -> None:
        self.results: dict = {}

    def load(self, run: Any) -> Any | None:
        """The result kept for ``run``, or ``None``."""
        return self.results.get(run)

    def save(self, run: Any, result: Any) -> None:
        """Keep ``result`` as ``run``'s."""
        self.results[run] = result


# ---------------------------------------------------------------------------- in a worker


def _one_blas_thread() -> None:
    """The BLAS on one thread in this process, as the build holds it: a sum split over threads could add in
    another order. threadpoolctl comes with the site and cluster extras; without it, the BLAS keeps the
    threads its environment gives it (the Makefile and Dask's workers set ``OPENBLAS_NUM_THREADS=1``)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # the core alone: numpy only
        return
    threadpool_limits(limits=1, user_api="blas")


def _execute(run: Any) -> Any:
    """Train one run, in whichever process."""
    return run.execute()


def _execute_checked(run: Any, digest: str) -> Any:
    """Train one run on a cluster's worker, after checking that the worker computes as the caller does.

    A worker with other code, another numpy, or arithmetic that rounds otherwise (:func:`digest_here`) would
    return other numbers under the same run: refused, naming both digests.
    """
    mine = digest_here()
    if mine != digest:
        raise RuntimeError(
            f"this worker ({mine[:12]}: rnnmem at {Path(__file__).parent}) does not compute as the caller does "
            f"({digest[:12]}): install the same rnnmem and numpy on every worker, on machines whose arithmetic "
            "agrees (rnnmem.engine.digest_here)"
        )
    _one_blas_thread()
    return run.execute()


_DIGEST: str | None = None


def digest_here() -> str:
    """What a run's result depends on beside the run, in this process: a digest of the source of every module
    of the core package, numpy's version, and the bits of a few element-wise functions and a matrix product
    (which differ between processors whose vector instructions round otherwise). Two processes with the same
    digest train the same numbers from the same run. Computed once per process.

    >>> len(digest_here()), digest_here() == digest_here()
    (64, True)
    """
    global _DIGEST
    if _DIGEST is None:
        import numpy as np

        h = hashlib.sha256()
        for path in sorted(Path(__file__).parent.glob("*.py")):
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        h.update(np.__version__.encode())
        _one_blas_thread()
        for dtype in (np.float32, np.float64):
            x: np.ndarray = np.linspace(-3.0, 3.0, 97, dtype=dtype).reshape(1, 97)
            w = np.cos(np.arange(97 * 33, dtype=dtype)).reshape(33, 97)
            for y in (np.tanh(x), np.exp(x), 1 / (1 + np.exp(0 - x)), np.log1p(np.abs(x)), w @ x.T):
                h.update(np.ascontiguousarray(y).tobytes())
        _DIGEST = h.hexdigest()
    return _DIGEST


# ---------------------------------------------------------------------------- executors


class Executor:
    """Where runs are trained: ``submit`` starts one, ``wait`` gives back those that ended.

    ``slots`` is how many runs to keep in flight (a local pool's processes; a cluster takes every run at
    once and orders them itself by ``priority``). An executor is a context manager: leaving it stops what
    it started. :class:`Local` and :class:`Cluster` are the two there are.

    >>> with Local(1) as executor:
    ...     executor.slots, executor.name
    (1, 'this process')
    """

    slots: int | None = 1
    name = "executor"

    def submit(self, run: Any) -> Any:
        """Start training ``run``; return a handle that :meth:`wait` gives back with its result."""
        raise NotImplementedError

    def wait(self, handles: Iterable[Any]) -> list[tuple[Any, Any]]:
        """Block until at least one of ``handles`` has ended; ``(handle, result)`` for every one that has."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop what the executor started (nothing by default)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Local(Executor):
    """``workers`` processes of this machine; with one worker, this process (no pool, no new interpreter).

    The processes are started by ``forkserver`` where the platform has it, else ``spawn``; never ``fork``:
    ``mkdocs serve`` renders while its server and file-watcher threads run, and a child forked from a
    multi-threaded process can inherit a lock another thread held and hang. The fork server is one
    single-threaded process that has imported this module once, and forks each worker from itself. Each
    worker holds its BLAS to one thread before its first run.

    >>> Local(2).slots, Local(1).name
    (2, 'this process')
    >>> Local(0)
    Traceback (most recent call last):
    ...
    ValueError: workers must be a whole number >= 1, got 0
    """

    def __init__(self, workers: int = 1) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a whole number >= 1, got {workers!r}")
        self.slots = workers
        self.name = "this process" if workers == 1 else f"{workers} local processes"
        self._pool: Any = None

    def submit(self, run: Any) -> Any:
        """Train ``run`` here at once (one worker), or start it on the pool."""
        if self.slots == 1:
            return _Done(_execute(run))
        if self._pool is None:
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(self.slots, mp_context=_pool_context(), initializer=_one_blas_thread)
        return self._pool.submit(_execute, run)

    def wait(self, handles: Iterable[Any]) -> list[tuple[Any, Any]]:
        handles = list(handles)
        ended = [h for h in handles if isinstance(h, _Done)]
        if ended:
            return [(h, h.result) for h in ended]
        from concurrent.futures import FIRST_COMPLETED
        from concurrent.futures import wait as wait_futures

        done, _ = wait_futures(handles, return_when=FIRST_COMPLETED)
        return [(f, f.result()) for f in handles if f in done]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class _Done:
    """A run trained in this process as it was submitted: its result, kept by the handle."""

    __slots__ = ("result",)

    def __init__(self, result: Any) -> None:
        self.result = result


def _pool_context() -> Any:
    """The multiprocessing context of a local pool: ``forkserver`` where the platform has it, else ``spawn``."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


class Cluster(Executor):
    """The workers of the Dask distributed scheduler at ``address`` (``tcp://host:8786``, or a ``Client``).

    Every run is submitted at once, with its ``cost`` as the task's ``priority`` (the scheduler starts the
    costliest first) and a key made of the run's class and a digest of its ``repr``. Each worker checks that
    it computes as the caller does (:func:`digest_here`: the same code, numpy and arithmetic) before training. The scheduler reschedules the run
    of a worker that is lost. A scheduler that does not answer within :data:`CONNECT_TIMEOUT` seconds is a
    ``ValueError`` naming the address; without the optional package ``distributed``, a ``ValueError`` says
    how to install it. Docs: "Running the lab on a cluster".

    >>> Cluster("tcp://127.0.0.1:9", timeout=0.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: scheduler 'tcp://127.0.0.1:9': no Dask scheduler answered within 0.5 s (...)
    """

    slots = None

    def __init__(self, address: Any, *, timeout: float | None = None) -> None:
        timeout = CONNECT_TIMEOUT if timeout is None else timeout
        try:
            from distributed import Client
        except ImportError:
            raise ValueError(
                f"scheduler {address!r} is a Dask scheduler, and the optional package distributed is not "
                "installed: pip install 'rnnmem[cluster]'"
            ) from None
        if isinstance(address, Client):
            self.client, self._own = address, False
        else:
            if not isinstance(address, str) or not address.strip():
                raise ValueError(
                    f"scheduler must be the address of a Dask scheduler (tcp://host:8786), got {address!r}"
                )
            try:
                self.client = Client(address, timeout=timeout, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as exc:
                raise ValueError(
                    f"scheduler {address!r}: no Dask scheduler answered within {timeout:g} s ({exc})"
                ) from None
            self._own = True
        self.name = f"the Dask scheduler at {self.client.scheduler_info().get('address', address)}"
        self._digest = digest_here()

    def submit(self, run: Any) -> Any:
        """Send ``run`` to the scheduler, its ``cost`` as the task's priority; the future is the handle."""
        key = f"{type(run).__name__}-{hashlib.sha256(repr(run).encode()).hexdigest()[:20]}"
        return self.client.submit(_execute_checked, run, self._digest, key=key, priority=float(run.cost), pure=False)

    def wait(self, handles: Iterable[Any]) -> list[tuple[Any, Any]]:
        from distributed import wait as wait_futures

        handles = list(handles)
        with self.client.as_current():  # wait() asks for the current client; this one need not be the default
            done, _ = wait_futures(handles, return_when="FIRST_COMPLETED")
        return [(f, f.result()) for f in handles if f in done]

    def close(self) -> None:
        if self._own:
            self.client.close()


def local_workers() -> int:
    """How many local processes may train: :data:`WORKERS_VARIABLE` (default 2), at most the cores; one inside a
    pytest-xdist worker (``$PYTEST_XDIST_WORKER`` set), whose siblings already keep the cores busy.

    A value of :data:`WORKERS_VARIABLE` that is not a whole number >= 1 is a ``ValueError`` naming it.

    >>> 1 <= local_workers() <= (os.cpu_count() or 1)
    True
    """
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return 1
    text = os.environ.get(WORKERS_VARIABLE, "2")
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"{WORKERS_VARIABLE} must be a whole number >= 1, got {text!r}")
    return max(1, min(int(text), os.cpu_count() or 1))


def executor_for(scheduler: str | None = None, workers: int | None = None) -> Executor:
    """The executor for ``scheduler``: a :class:`Cluster` at that address, else :class:`Local`.

    ``scheduler`` ``None`` reads :data:`SCHEDULER_VARIABLE` (unset or empty: local); ``workers`` ``None``
    is :func:`local_workers`.

    >>> executor_for(None, workers=2).name
    '2 local processes'
    """
    if scheduler is None:
        scheduler = os.environ.get(SCHEDULER_VARIABLE) or None
    if scheduler is not None:
        return Cluster(scheduler)
    return Local(local_workers() if workers is None else workers)


# ---------------------------------------------------------------------------- the loop


def _order(run: Any) -> tuple[float, str]:
    return (-float(run.cost), repr(run))


def train(
    first: Iterable[Any],
    follow: Callable[[Any, Any], Any] | None = None,
    *,
    executor: Executor | None = None,
    store: Store | None = None,
    ended: Callable[[Any, Any], object] | None = None,
) -> dict:
    """Train ``first`` and the runs that follow them: a dictionary run -> result, in the order runs ended.

    ``follow(run, result)``, called as each run ends, gives the runs that follow it: one run, a list of
    runs, or ``None``. Runs the ``store`` holds are read, not trained, and their chains followed at once;
    each trained result is saved to it as soon as it arrives. The others are trained on ``executor``
    (default :func:`executor_for`: ``$RNNMEM_SCHEDULER``, else local processes), the costliest waiting first.
    ``ended(run, result)``, if given, is called for every run as it ends (a progress bar's hook). A run may
    not end twice (a ``ValueError`` names it). Each run is a pure function of itself, so the results are
    those of training every run alone, whatever the executor.

    >>> from rnnmem.experiments import Design, RecallRun
    >>> run = RecallRun("lstm:1", 2, (0, 1), Design(hidden=4, steps=20, eval_every=10, eval_size=32))
    >>> kept = Memory()
    >>> first = train([run], executor=Local(1), store=kept)
    >>> again = train([run], executor=Local(1), store=kept)  # read, not trained
    >>> again[run] is first[run]
    True
    """
    results: dict = {}
    first = list(first)
    for run in first:
        _check_run(run)
    waiting = list(dict.fromkeys(first))

    def finish(run: Any, result: Any) -> None:
        if run in results:
            raise ValueError(f"train: the run {run!r} recurs; a run may end only once")
        results[run] = result
        if ended is not None:
            ended(run, result)
        nxt = None if follow is None else follow(run, result)
        for new in [] if nxt is None else nxt if isinstance(nxt, list) else [nxt]:
            _check_run(new)
            waiting.append(new)

    def settle() -> None:  # read every waiting run the store holds, following its chain
        while store is not None and (kept := [(r, x) for r in waiting if (x := store.load(r)) is not None]):
            for run, result in kept:
                waiting.remove(run)
                finish(run, result)

    settle()
    if not waiting:
        return results
    own = executor is None
    pool = executor_for() if executor is None else executor
    try:
        running: dict = {}
        while waiting or running:
            waiting.sort(key=_order)
            while waiting and (pool.slots is None or len(running) < pool.slots):
                run = waiting.pop(0)
                running[pool.submit(run)] = run
            for handle, result in pool.wait(running):
                run = running.pop(handle)
                if store is not None:
                    store.save(run, result)
                finish(run, result)
            settle()
    finally:
        if own:
            pool.close()
    return results


def train_all(runs: Iterable[Any], **options: Any) -> list:
    """The results of ``runs``, in their order (a run named twice is trained once); options as :func:`train`.

    >>> from rnnmem.experiments import Design, RecallRun
    >>> design = Design(hidden=4, steps=20, eval_every=10, eval_size=32)
    >>> a, b = (RecallRun(model, 2, (0,), design) for model in ("rnn", "gru"))
    >>> results = train_all([a, b, a], executor=Local(1))
    >>> len(results), results[0] is results[2], results[0] is results[1]
    (3, True, False)
    """
    runs = list(runs)
    results = train(runs, **options)
    return [results[run] for run in runs]


def _check_run(run: Any) -> None:
    if not isinstance(run, Run):
        raise ValueError(f"a run must have a cost and an execute() (rnnmem.engine.Run), got {run!r}")
    try:
        hash(run)
    except TypeError:
        raise ValueError(f"a run must be hashable (a frozen dataclass), got {run!r}") from None

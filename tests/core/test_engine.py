"""rnnmem.engine: runs trained costliest first, read from a store, followed along chains; the same results on
this process, on local processes and on a Dask cluster, even when a worker is lost."""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass

import numpy as np
import pytest

from rnnmem import engine
from rnnmem.experiments import Design, ModelSpec, RecallRun


@dataclass(frozen=True)
class Counted:
    """A run that records, in this process, the order in which runs were trained."""

    n: int
    cost: float = 1.0

    def execute(self) -> dict:
        TRAINED.append(self.n)
        return {"n": self.n, "square": self.n * self.n}


TRAINED: list[int] = []


@pytest.fixture(autouse=True)
def fresh():
    TRAINED.clear()


def tiny_runs() -> list[RecallRun]:
    """Four short real runs: two cells, two lags, two seeds each (a few seconds in all)."""
    design = Design(hidden=8, steps=40, eval_every=10, eval_size=64, threshold=0.5)
    return [RecallRun(ModelSpec.parse(s), lag, (0, 1), design) for s in ("rnn", "lstm:1") for lag in (2, 4)]


def same(a, b) -> bool:
    """Two lab results equal bit for bit: losses, scores, outcomes and every trained parameter."""
    return (
        np.array_equal(a.losses, b.losses, equal_nan=True)
        and np.array_equal(a.scores, b.scores, equal_nan=True)
        and a.success_step == b.success_step
        and a.params.keys() == b.params.keys()
        and all(np.array_equal(a.params[k], b.params[k]) for k in a.params)
    )


def test_the_costliest_waiting_run_is_trained_first():
    runs = [Counted(1, cost=1.0), Counted(2, cost=5.0), Counted(3, cost=3.0)]
    results = engine.train(runs, executor=engine.Local(1))
    assert TRAINED == [2, 3, 1]
    assert results == {run: {"n": run.n, "square": run.n**2} for run in runs}
    assert engine.train_all(runs, executor=engine.Local(1)) == [{"n": n, "square": n * n} for n in (1, 2, 3)]


def test_a_kept_run_is_read_and_its_chain_followed_without_training_it():
    store = engine.Memory()
    store.save(Counted(2), "kept")
    follow = lambda run, result: Counted(run.n + 1) if run.n < 3 else None  # noqa: E731
    results = engine.train([Counted(2)], follow, executor=engine.Local(1), store=store)
    assert results == {Counted(2): "kept", Counted(3): {"n": 3, "square": 9}}
    assert TRAINED == [3] and store.results[Counted(3)] == {"n": 3, "square": 9}


def test_the_ended_hook_sees_every_run_once():
    seen: list = []
    engine.train([Counted(1), Counted(2)], executor=engine.Local(1), ended=lambda run, result: seen.append(run.n))
    assert sorted(seen) == [1, 2]


def test_a_run_that_recurs_across_chains_is_refused():
    with pytest.raises(ValueError, match="recurs"):
        engine.train(
            [Counted(1), Counted(2)],
            lambda run, result: Counted(2) if run.n == 1 else None,
            executor=engine.Local(1),
        )


@pytest.mark.parametrize("bad", [object(), "lstm", 3])
def test_what_is_not_a_run_is_refused_by_name(bad):
    with pytest.raises(ValueError, match=r"rnnmem\.engine\.Run"):
        engine.train([bad], executor=engine.Local(1))


def test_an_unhashable_run_is_refused():
    @dataclass
    class Loose:
        cost: float = 1.0

        def execute(self):
            return 1

    with pytest.raises(ValueError, match="hashable"):
        engine.train([Loose()], executor=engine.Local(1))


def test_local_workers_read_the_environment(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.setenv(engine.WORKERS_VARIABLE, "1")
    assert engine.local_workers() == 1
    monkeypatch.setenv(engine.WORKERS_VARIABLE, "64")
    assert engine.local_workers() == (os.cpu_count() or 1)
    monkeypatch.setenv(engine.WORKERS_VARIABLE, "two")
    with pytest.raises(ValueError, match=r"RNNMEM_LAB_WORKERS must be a whole number >= 1, got 'two'"):
        engine.local_workers()
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    assert engine.local_workers() == 1, "inside a pytest-xdist worker its siblings keep the cores busy"


def test_without_a_scheduler_the_executor_is_local(monkeypatch):
    monkeypatch.delenv(engine.SCHEDULER_VARIABLE, raising=False)
    with engine.executor_for(workers=2) as ex:
        assert isinstance(ex, engine.Local) and ex.slots == 2
    monkeypatch.setenv(engine.SCHEDULER_VARIABLE, "")
    assert isinstance(engine.executor_for(), engine.Local)


def test_the_local_pool_never_forks_this_process():
    import multiprocessing

    expected = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    assert engine._pool_context().get_start_method() == expected


def test_two_processes_train_what_one_does_even_beside_other_threads():
    """The pool is started from a thread while another thread runs, as under `mkdocs serve` (its server and
    file watcher): its workers are not forked from this process, and they train what one process trains."""
    runs = tiny_runs()
    alone = engine.train_all(runs, executor=engine.Local(1))
    served: dict[str, list] = {}
    stop = threading.Event()
    watcher = threading.Thread(target=stop.wait, name="watcher", daemon=True)

    def build() -> None:
        with engine.Local(2) as pool:
            served["runs"] = engine.train_all(runs, executor=pool)

    builder = threading.Thread(target=build, name="build")
    watcher.start()
    try:
        builder.start()
        builder.join(timeout=300)
    finally:
        stop.set()
    assert "runs" in served, "the pooled runs raised or did not finish (see the thread's traceback above)"
    assert all(same(a, b) for a, b in zip(served["runs"], alone))


def test_this_process_digest_names_code_numpy_and_arithmetic():
    digest = engine.digest_here()
    assert len(digest) == 64 and digest == engine.digest_here()
    with pytest.raises(RuntimeError, match="does not compute as the caller does"):
        engine._execute_checked(Counted(1), "0" * 64)
    assert engine._execute_checked(Counted(2), digest) == {"n": 2, "square": 4}


# ---------------------------------------------------------------------------- on a Dask cluster


@pytest.fixture(scope="module")
def cluster(distributed):
    """A LocalCluster of two worker processes of one thread each, as `dask worker --nthreads 1` would start."""
    import dask

    with (
        dask.config.set({"distributed.worker.daemon": False, "logging.distributed": "error"}),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as local,
        distributed.Client(local, set_as_default=False) as client,
    ):
        yield local, client


@pytest.mark.process
def test_a_cluster_trains_what_one_process_trains(cluster):
    local, client = cluster
    runs = tiny_runs()
    alone = engine.train_all(runs, executor=engine.Local(1))
    with engine.Cluster(local.scheduler_address) as ex:
        assert ex.slots is None and local.scheduler_address in ex.name
        on_cluster = engine.train_all(runs, executor=ex)
    assert all(same(a, b) for a, b in zip(on_cluster, alone))


@pytest.mark.process
def test_a_sweep_finishes_with_the_same_results_when_a_worker_is_killed(cluster):
    """One worker is killed (SIGKILL) as soon as the first run ends; the scheduler gives its run to another
    worker, its nanny starts a new one, and the results are those of one process."""
    local, client = cluster
    design = Design(hidden=16, steps=120, eval_every=20, eval_size=64, threshold=0.99)
    runs = [RecallRun(ModelSpec.parse("lstm:1"), lag, (0, 1, 2), design, probe=0) for lag in (3, 4, 5, 6, 7, 8)]
    alone = engine.train_all(runs, executor=engine.Local(1))
    before = client.run(os.getpid)
    killed: list[int] = []

    def kill_one(run, result) -> None:
        if not killed:
            busy = [addr for addr, tasks in client.processing().items() if tasks] or list(before)
            pid = before[busy[0]]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    on_cluster = engine.train_all(runs, executor=engine.Cluster(client), ended=kill_one)
    assert killed, "no worker was killed"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(client.scheduler_info()["workers"]) < 2:
        time.sleep(0.2)
    after = client.run(os.getpid)
    assert killed[0] not in after.values(), "the killed worker is gone, and its nanny started another"
    assert all(same(a, b) for a, b in zip(on_cluster, alone))


def test_an_unreachable_scheduler_is_named_within_the_timeout(monkeypatch, distributed):
    monkeypatch.setattr(engine, "CONNECT_TIMEOUT", 1.0)
    monkeypatch.setenv(engine.SCHEDULER_VARIABLE, "tcp://127.0.0.1:9")
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"scheduler 'tcp://127\.0\.0\.1:9': no Dask scheduler answered within 1 s"):
        engine.executor_for()
    assert time.monotonic() - start < 10


def test_a_scheduler_that_is_not_an_address_is_refused(distributed):
    with pytest.raises(ValueError, match="scheduler must be the address of a Dask scheduler"):
        engine.Cluster("")

"""Benchmark: one sweep on a Dask cluster of one worker, of two workers, and on the local pool of two processes.

Run as ``python tests/benchmarks/bench_cluster.py`` (``make bench-cluster`` runs it). The sweep is a
:class:`rnnmem.grid.Grid` (by default the LSTM with forget bias 1 and the GRU at lags 10 and 20, 40 seeds
a cell, 400 updates: 16 runs of ten seeds, long enough that few seeds retire early and each run trains for
seconds, as the lab's do), trained by :func:`rnnmem.engine.train` on three executors:

* ``dask 1``: a ``distributed.LocalCluster`` of one worker process with one thread;
* ``dask 2``: the same with two worker processes;
* ``local 2``: :class:`rnnmem.engine.Local` with two processes, the default executor of a build.

The clusters and the pool are started, and given one small run each to warm up, before any clock starts:
the times are those of the sweep alone. The executors take turns (the order rotates every round), and each
is timed by wall clock (a cluster's work happens in other processes). The script prints each executor's
fastest and median wall time, then the two ratios the engine is held to, from the fastest times and as the
median of the per-round ratios:

* the speed-up of two workers over one (``dask 1 / dask 2``; the aim is at least 1.7 on two cores);
* the cluster's overhead against the local pool (``dask 2 / local 2``; the aim is at most 1.1).

It also prints the SHA-256 of the sweep's JSON record from every executor and round, which must all be the
same (the script exits 1 if they are not), and the BLAS library and kernel threadpoolctl reports. Bad
arguments exit 2 with usage.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import statistics
import sys
import time
from typing import Any

from rnnmem import engine
from rnnmem.grid import Grid


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python tests/benchmarks/bench_cluster.py",
        description="Time one sweep on a Dask cluster of one and of two workers and on the local pool.",
    )
    parser.add_argument("--seeds", type=_positive, default=40, help="seeds a cell (default 40)")
    parser.add_argument("--steps", type=_positive, default=400, help="updates per seed (default 400)")
    parser.add_argument("--rounds", type=_positive, default=3, help="timed rounds of each executor (default 3)")
    return parser.parse_args(argv)


def blas_kernel() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    libs = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return "; ".join(f"{i.get('internal_api')} {i.get('version')} ({i.get('architecture')})" for i in libs)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    from distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)  # the scheduler's log of workers coming and going

    grid = Grid(("lstm:1", "gru"), lags=(10, 20), seeds=args.seeds, steps=args.steps)
    runs = grid.runs()
    warm = Grid(("gru",), lags=(2,), seeds=1, steps=5).runs()
    print(f"sweep: {len(runs)} runs ({grid.models}, lags {grid.lags}, {grid.seeds} seeds, {grid.steps} updates)")
    print(f"BLAS: {blas_kernel()}")

    executors: dict[str, Any] = {}
    clusters = []
    for workers in (1, 2):
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
        )
        clusters.append(cluster)
        executors[f"dask {workers}"] = engine.Cluster(Client(cluster, set_as_default=False))
    executors["local 2"] = engine.Local(2)
    try:
        for executor in executors.values():
            engine.train(warm, executor=executor)
        times: dict[str, list[float]] = {name: [] for name in executors}
        digests: set[str] = set()
        names = list(executors)
        for r in range(args.rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                start = time.perf_counter()
                results = engine.train(runs, executor=executors[name])
                times[name].append(time.perf_counter() - start)
                digests.add(hashlib.sha256(grid.result(results).to_json().encode()).hexdigest())
                print(f"  round {r + 1}, {name}: {times[name][-1]:.1f} s", flush=True)
    finally:
        for executor in executors.values():
            executor.close()
            if isinstance(executor, engine.Cluster):
                executor.client.close()
        for cluster in clusters:
            cluster.close()

    print(f"\n{'executor':<10} {'fastest s':>10} {'median s':>10}")
    for name, ts in times.items():
        print(f"{name:<10} {min(ts):>10.1f} {statistics.median(ts):>10.1f}")

    def ratio(a: str, b: str) -> tuple[float, float]:
        return min(times[a]) / min(times[b]), statistics.median(x / y for x, y in zip(times[a], times[b]))

    speedup, speedup_median = ratio("dask 1", "dask 2")
    overhead, overhead_median = ratio("dask 2", "local 2")
    print(f"\ntwo workers over one (dask 1 / dask 2): {speedup:.2f} fastest, {speedup_median:.2f} median (aim >= 1.7)")
    print(
        f"cluster over local pool (dask 2 / local 2): {overhead:.2f} fastest, {overhead_median:.2f} median (aim <= 1.1)"
    )
    print(f"\nJSON records: {len(digests)} distinct ({', '.join(sorted(d[:16] for d in digests))})")
    if len(digests) != 1:
        print("the executors gave different records", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

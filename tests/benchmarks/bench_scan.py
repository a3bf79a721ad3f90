"""Benchmark: the odd–even parallel scan against the loop, forward and backward, one thread, side by side.

Run as ``python tests/benchmarks/bench_scan.py`` (``make bench`` runs it).
For each length ``T`` and row size ``N`` (state entries per step), both sides
compute the same thing from the same complex128 data, the diagonal recurrence
of a linear recurrent unit :math:`h_t = \\lambda \\odot h_{t-1} + b_t` with
a decay per step ``(T, N)`` of modulus below one:

* ``fwd``: :func:`rnnmem.scan.linear_scan` against
  :func:`rnnmem.scan.sequential_scan` (the loop, one numpy operation per step);
* ``bwd``: :func:`rnnmem.scan.linear_scan_backward` (the gradients of ``a``,
  ``b`` and ``h0`` for given ``dL/dh``) against
  :func:`rnnmem.scan.sequential_scan_backward`, the same gradients by the
  reverse loop, :math:`g_t = \\delta h_t + \\bar a_{t+1} g_{t+1}`, one step
  at a time, then :math:`g_t \\bar h_{t-1}` in one pass.

The ratio is loop time / scan time (above 1: the scan is faster). For scale,
each ``T`` also times the forward+backward of :class:`rnnmem.lstm.LSTM`
(hidden 32, batch 32, input 32, float64) on a sequence of that length: a
nonlinear recurrence, which no scan can compute.

The two sides alternate (which goes first alternates too), after a warm-up;
each row prints both medians and the median of the per-pair ratios with its
interquartile range. Rows whose arrays would exceed ``--max-entries``
entries (``T * N``) are left out and listed. numpy's BLAS is held to one
thread (threadpoolctl where installed, else the environment, set before numpy
is imported); the script prints the BLAS library and its kernel.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

try:
    from threadpoolctl import threadpool_info, threadpool_limits
except ImportError:  # pragma: no cover - depends on the environment
    threadpool_info = threadpool_limits = None

from rnnmem.lstm import LSTM  # noqa: E402
from rnnmem.scan import (  # noqa: E402
    linear_scan,
    linear_scan_backward,
    sequential_scan,
    sequential_scan_backward,
)

LENGTHS = (64, 256, 1024, 4096, 16384)
ROWS = (64, 1024, 32768)
LSTM_SIZE = 32  # hidden, batch and input of the reference LSTM


def blas_report() -> str:
    """The BLAS numpy uses, its kernel (architecture) and threads, as threadpoolctl reports them."""
    if threadpool_info is None:
        return "threadpoolctl not installed: kernel unknown"
    pools = [p for p in threadpool_info() if p.get("user_api") == "blas"]
    return (
        "; ".join(
            f"{p.get('internal_api')} {p.get('version')}, kernel {p.get('architecture')}, "
            f"{p.get('num_threads')} thread(s)"
            for p in pools
        )
        or "no BLAS found by threadpoolctl"
    )


def scan_pairs(T: int, N: int) -> dict:
    """(scan, loop) functions per pass, on the same data."""
    rng = np.random.default_rng(0)
    a = np.exp(-np.exp(rng.uniform(-6, 0, (T, N))) + 1j * rng.uniform(-np.pi, np.pi, (T, N)))
    b = rng.standard_normal((T, N)) + 1j * rng.standard_normal((T, N))
    dh = rng.standard_normal((T, N)) + 1j * rng.standard_normal((T, N))
    h0 = rng.standard_normal(N) + 0j
    h = linear_scan(a, b, h0)
    return {
        "fwd": (lambda: linear_scan(a, b, h0), lambda: sequential_scan(a, b, h0)),
        "bwd": (lambda: linear_scan_backward(a, h, dh, h0), lambda: sequential_scan_backward(a, h, dh, h0)),
    }


def lstm_both(T: int):
    """The forward+backward of an LSTM (hidden, batch, input LSTM_SIZE) over T steps."""
    model = LSTM(LSTM_SIZE, LSTM_SIZE, seed=0)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((T, LSTM_SIZE, LSTM_SIZE))
    dy = rng.standard_normal((T, LSTM_SIZE, LSTM_SIZE))

    def both() -> None:
        model.forward(x)
        model.backward(dy)

    return both


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def compare(scan, loop, repeats: int, warmup: int) -> tuple:
    """Interleaved wall-clock timings of the two: (scan times, loop times)."""
    for _ in range(warmup):
        scan()
        loop()
    mine, other = [], []
    for i in range(repeats):
        if i % 2:
            mine.append(timed(scan))
            other.append(timed(loop))
        else:
            other.append(timed(loop))
            mine.append(timed(scan))
    return mine, other


def quartiles(values: list) -> tuple:
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def _sizes(text: str) -> list[int]:
    values = [int(v) for v in text.split(",") if v.strip()]
    if not values or min(values) < 1:
        raise ValueError(text)
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9, help="timed runs of each per row (default 9)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs of each first (default 1)")
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)), help="comma-separated sequence lengths T")
    parser.add_argument("--rows", default=",".join(map(str, ROWS)), help="comma-separated row sizes N (entries)")
    parser.add_argument(
        "--max-entries", type=int, default=2**25, help="leave out rows with T * N above this (default 2**25)"
    )
    args = parser.parse_args(argv)
    try:
        lengths, rows = _sizes(args.lengths), _sizes(args.rows)
    except ValueError:
        parser.error(
            f"--lengths and --rows must be comma-separated whole numbers >= 1, got {args.lengths!r}, {args.rows!r}"
        )
    if args.repeats < 4:
        parser.error(f"--repeats must be at least 4, got {args.repeats}")
    if args.warmup < 0:
        parser.error(f"--warmup must be at least 0, got {args.warmup}")

    limits = threadpool_limits(limits=1, user_api="blas") if threadpool_limits is not None else None
    load = os.getloadavg()
    table, left_out, reference = [], [], {}
    try:
        for T in lengths:
            for N in rows:
                if T * N > args.max_entries:
                    left_out.append(f"T{T} N{N}")
                    continue
                for mode, (scan, loop) in scan_pairs(T, N).items():
                    table.append((T, N, mode, *compare(scan, loop, args.repeats, args.warmup)))
            both = lstm_both(T)
            both()
            reference[T] = statistics.median(timed(both) for _ in range(max(3, args.repeats // 3)))
        blas = blas_report()
    finally:
        if limits is not None:
            limits.restore_original_limits()
    load_after = os.getloadavg()

    print(f"odd-even scan against the loop, complex128, {args.repeats} alternating runs of each per row")
    print(f"numpy {np.__version__}, BLAS: {blas}")
    print(f"load average: {load[0]:.2f} before, {load_after[0]:.2f} after (cores: {os.cpu_count()})")
    print("ratio = median over pairs of loop time / scan time (above 1: the scan is faster); IQR of those ratios")
    print()
    header = f"{'T':>6} {'N':>6} {'pass':<4} {'scan ms':>9} {'loop ms':>9} {'ratio':>7} {'IQR':>13} {'LSTM f+b ms':>11}"
    print(header)
    print("-" * len(header))
    for T, N, mode, mine, other in table:
        ratios = [b / a for a, b in zip(mine, other)]
        lo, hi = quartiles(ratios)
        print(
            f"{T:>6} {N:>6} {mode:<4} {statistics.median(mine) * 1e3:9.2f} {statistics.median(other) * 1e3:9.2f} "
            f"{statistics.median(ratios):7.2f} {lo:6.2f}-{hi:6.2f} {reference[T] * 1e3:11.2f}"
        )
    print()
    print(
        f"LSTM f+b: rnnmem.lstm.LSTM forward+backward, hidden {LSTM_SIZE}, batch {LSTM_SIZE}, "
        f"input {LSTM_SIZE}, float64, same T (median of {max(3, args.repeats // 3)} runs)"
    )
    if left_out:
        print(f"left out (T * N > --max-entries {args.max_entries}): {', '.join(left_out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

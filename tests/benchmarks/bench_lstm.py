"""Benchmark: rnnmem's LSTM forward plus backward against torch.nn.LSTM, one thread each.

Run as ``python tests/benchmarks/bench_lstm.py`` (or ``make bench``). Both
compute the same thing: outputs and final state of a batch of 32 sequences of
128 steps (input 64, hidden 128, float32), then the gradients of every
parameter, of the input and of both initial states. The two alternate, after a
warm-up, and the script prints both medians, the median of the per-pair time
ratios (rnnmem / torch; the target is at most 1.3) and the rate of each in
GFLOP/s, counting matrix-product FLOPs only: ``2 T B 4H (D + H)`` for the
forward pass and twice that for the backward pass.

Each run is timed twice: wall-clock time, and the CPU time of this process
(``time.process_time``), which leaves out the time other programs on a shared
machine take the core away; on a quiet machine the two agree.

numpy's BLAS is held to one thread with threadpoolctl where it is installed,
otherwise through ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` and
``MKL_NUM_THREADS`` set before numpy is imported; the script prints which
library and thread count numpy ran with.
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


def blas_report() -> str:
    """Which BLAS numpy uses and with how many threads."""
    if threadpool_info is not None:
        lines = []
        for pool in threadpool_info():
            if pool.get("user_api") == "blas":
                lines.append(f"{pool.get('internal_api')} {pool.get('version')} "
                             f"({pool.get('architecture')}), {pool.get('num_threads')} thread(s), "
                             f"{os.path.basename(pool.get('filepath', ''))}")
        return "; ".join(lines) or "no BLAS found by threadpoolctl"
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    return (f"{blas.get('name')} {blas.get('version')}, {openblas_threads()} "
            "(threadpoolctl not installed)")


def openblas_threads() -> str:
    """The thread count OpenBLAS reports, asked through ctypes; else the environment's setting."""
    import ctypes
    import glob

    pattern = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs", "*openblas*")
    for path in glob.glob(pattern):
        lib = ctypes.CDLL(path)
        core = ""
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                     "openblas_get_corename64_", "openblas_get_corename"):
            if hasattr(lib, name):
                getattr(lib, name).restype = ctypes.c_char_p
                core = f", kernel {getattr(lib, name)().decode()}"
                break
        for name in ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
                     "openblas_get_num_threads64_", "openblas_get_num_threads"):
            if hasattr(lib, name):
                return f"{getattr(lib, name)()} thread(s) reported by OpenBLAS{core}"
    return f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')} (thread count not queried)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=40, help="timed runs of each (default 40)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed runs of each first (default 5)")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    T, B, D, H = 128, 32, 64, 128
    forward_flops = 2 * T * B * 4 * H * (D + H)
    flops = 3 * forward_flops

    torch.manual_seed(0)
    reference = torch.nn.LSTM(D, H)
    sd = {k: v.detach().numpy() for k, v in reference.state_dict().items()}
    model = LSTM.from_torch_state_dict(sd, dtype=np.float32)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((T, B, D)).astype(np.float32)
    h0 = rng.standard_normal((B, H)).astype(np.float32) * 0.1
    c0 = rng.standard_normal((B, H)).astype(np.float32) * 0.1
    dy = rng.standard_normal((T, B, H)).astype(np.float32)

    x_t = torch.from_numpy(x).requires_grad_()
    h0_t = torch.from_numpy(h0[None]).requires_grad_()
    c0_t = torch.from_numpy(c0[None]).requires_grad_()
    dy_t = torch.from_numpy(dy)

    def run_numpy() -> None:
        outputs, _ = model.forward(x, (h0, c0))
        model.backward(dy)

    def run_torch() -> None:
        for p in (*reference.parameters(), x_t, h0_t, c0_t):
            p.grad = None
        outputs, _ = reference(x_t, (h0_t, c0_t))
        outputs.backward(dy_t)

    def timed(fn) -> tuple:
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        return time.perf_counter() - wall, time.process_time() - cpu

    load = os.getloadavg()
    limits = threadpool_limits(limits=1, user_api="blas") if threadpool_limits is not None else None
    try:
        for _ in range(args.warmup):
            run_numpy()
            run_torch()
        ours, theirs = [], []
        for i in range(args.repeats):
            if i % 2:
                ours.append(timed(run_numpy))
                theirs.append(timed(run_torch))
            else:
                theirs.append(timed(run_torch))
                ours.append(timed(run_numpy))
        blas = blas_report()
    finally:
        if limits is not None:
            limits.restore_original_limits()

    print(f"LSTM forward+backward, T={T} B={B} D={D} H={H} float32, {args.repeats} alternating runs each")
    print(f"numpy: {np.__version__}, BLAS: {blas}")
    print(f"torch: {torch.__version__}, {torch.get_num_threads()} thread(s)")
    coretype = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}
    if coretype:
        print(f"note: {coretype} is set and may slow numpy's OpenBLAS")
    print(f"load average before the runs: {load[0]:.2f} (cores: {os.cpu_count()})")
    print(f"matmul FLOPs per run: {flops / 1e9:.3f} G (forward {forward_flops / 1e9:.3f} G, backward twice that)")
    for k, clock in enumerate(("wall-clock", "CPU time")):
        mine = [run[k] for run in ours]
        other = [run[k] for run in theirs]
        ratio = statistics.median(a / b for a, b in zip(mine, other))
        med_ours, med_theirs = statistics.median(mine), statistics.median(other)
        print(f"{clock}:")
        print(f"  rnnmem median {med_ours * 1e3:8.2f} ms  {flops / med_ours / 1e9:6.1f} GFLOP/s")
        print(f"  torch  median {med_theirs * 1e3:8.2f} ms  {flops / med_theirs / 1e9:6.1f} GFLOP/s")
        print(f"  median ratio rnnmem/torch: {ratio:.3f} (target <= 1.3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

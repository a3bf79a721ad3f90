"""Benchmark: training an ensemble of models at once against torch training them one at a time.

Run as ``python tests/benchmarks/bench_ensemble.py`` (``make bench`` runs it).
Both sides do the same work per round: one training update of each of ``E``
models, each a recurrent layer (LSTM by default; ``--model gru`` or ``rnn``)
with a linear readout of its last hidden state, softmax cross-entropy on a
recall batch (``B`` sequences of ``T = lag + 2`` steps, one-hot inputs of
size 10), the gradient clipped to global norm 1, one Adam step.

* rnnmem: the lab's update (:mod:`rnnmem.lab`), all ``E`` members as one
  :class:`rnnmem.ensemble.Ensemble`, in float64 (the lab's precision) and in
  float32;
* torch: ``E`` separate ``torch.nn.LSTM`` (or ``GRU``, ``RNN``) + ``nn.Linear``
  modules, each with its own ``torch.optim.Adam``, updated one after the
  other with ``clip_grad_norm_``, in float32 (torch's default).

The batches are drawn once, before timing, and are the same for both. The
runs alternate after a warm-up; the script prints each side's median time
per round, the throughput in sequence-steps per second (``E B T`` per
round), and the median of the per-round time ratios (rnnmem / torch; below 1
means the ensemble is faster). Each run is timed by wall clock and by this
process's CPU time, which leaves out time other programs take on a shared
machine.

One thread each: numpy's BLAS through threadpoolctl (and the environment),
torch through ``torch.set_num_threads(1)``. The script prints the BLAS
library and kernel threadpoolctl reports. Run it with ``OPENBLAS_CORETYPE``
and ``OPENBLAS_L2_SIZE`` unset (``make bench`` does), so numpy's OpenBLAS
picks the kernel a reader's machine would.
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

from rnnmem.lab import _update, make_ensemble  # noqa: E402
from rnnmem.tasks import recall  # noqa: E402
from rnnmem.train import Adam  # noqa: E402


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("lstm", "gru", "rnn"), default="lstm", help="default lstm")
    parser.add_argument("--members", type=int, default=20, help="E, models trained (default 20)")
    parser.add_argument("--batch", type=int, default=64, help="B, sequences per update (default 64)")
    parser.add_argument("--lag", type=int, default=40, help="recall lag; T = lag + 2 (default 40)")
    parser.add_argument("--hidden", type=int, default=32, help="H (default 32)")
    parser.add_argument("--repeats", type=int, default=15, help="timed rounds of each (default 15)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds of each first (default 2)")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    E, B, H = args.members, args.batch, args.hidden
    task = recall(lag=args.lag)
    T, D, K = task.length, task.input_size, task.output_size
    rng = np.random.default_rng(0)
    batches = [task.sample(B, seed=rng) for _ in range(E)]
    x = np.stack([b.inputs for b in batches], axis=1)  # (T, E, B, D)
    y = np.stack([b.targets for b in batches])  # (E, B)

    def ensemble_round(dtype):
        ens = make_ensemble(task, args.model, list(range(E)), hidden=H, dtype=dtype)
        opt = Adam(ens.params, lr=1e-3)
        live = np.ones(E, dtype=bool)
        return lambda: _update(ens, opt, x, y, task.kind, 1.0, live)

    layer = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[args.model]
    torch.manual_seed(0)
    models = [(layer(D, H), torch.nn.Linear(H, K)) for _ in range(E)]
    optimizers = [torch.optim.Adam([*rec.parameters(), *lin.parameters()], lr=1e-3) for rec, lin in models]
    xs = [torch.from_numpy(np.ascontiguousarray(x[:, e], dtype=np.float32)) for e in range(E)]
    ys = [torch.from_numpy(y[e]) for e in range(E)]

    def torch_round():
        for (rec, lin), opt, xe, ye in zip(models, optimizers, xs, ys):
            opt.zero_grad()
            outputs, _ = rec(xe)
            loss = torch.nn.functional.cross_entropy(lin(outputs[-1]), ye)
            loss.backward()
            torch.nn.utils.clip_grad_norm_([*rec.parameters(), *lin.parameters()], 1.0)
            opt.step()

    sides = {
        "rnnmem float64": ensemble_round(np.float64),
        "rnnmem float32": ensemble_round(np.float32),
        "torch float32": torch_round,
    }

    def timed(fn) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        return time.perf_counter() - wall, time.process_time() - cpu

    load = os.getloadavg()
    limits = threadpool_limits(limits=1, user_api="blas") if threadpool_limits is not None else None
    try:
        for _ in range(args.warmup):
            for fn in sides.values():
                fn()
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
        order = list(sides)
        for i in range(args.repeats):
            for name in order if i % 2 == 0 else order[::-1]:
                times[name].append(timed(sides[name]))
        blas = blas_report()
    finally:
        if limits is not None:
            limits.restore_original_limits()

    steps = E * B * T
    print(
        f"training updates of E={E} {args.model.upper()} models, B={B} T={T} D={D} H={H} "
        f"(recall, lag {args.lag}), {args.repeats} alternating rounds each"
    )
    print(f"numpy {np.__version__}, BLAS: {blas}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)")
    coretype = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}
    if coretype:
        print(f"note: {coretype} is set; unset it for this benchmark")
    print(f"load average before the runs: {load[0]:.2f} (cores: {os.cpu_count()})")
    for k, clock in enumerate(("wall-clock", "CPU time")):
        print(f"{clock}:")
        reference = [run[k] for run in times["torch float32"]]
        for name, runs in times.items():
            mine = [run[k] for run in runs]
            med = statistics.median(mine)
            line = f"  {name:15s} {med * 1e3:8.1f} ms per round  {steps / med / 1e3:8.1f} k sequence-steps/s"
            if name != "torch float32":
                ratio = statistics.median(a / b for a, b in zip(mine, reference))
                line += f"  median ratio to torch {ratio:.2f}"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

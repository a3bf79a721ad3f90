"""Benchmark: the lab's ensemble training against an expert's batched PyTorch ensemble, one thread each.

Run as ``python tests/benchmarks/bench_ensemble.py`` (``make bench`` runs it).
Both sides do the lab's job (:data:`rnnmem.experiments.DESIGN`): ``E = 20``
models (the tanh RNN, the GRU and the LSTM) with ``H = 16`` units and a linear
readout of the last hidden state, trained on recall (alphabet 8, one-hot
inputs of size 10, ``T = lag + 2``) at lags 10 and 40, ``60`` updates on
batches of ``B = 32``, softmax cross-entropy, each member's gradient clipped
to global norm 1, Adam with learning rate 0.01, and every member scored on
256 held-out sequences before the first update, every 25 updates and after
the last.

* rnnmem: :func:`rnnmem.lab.train` itself, in float64 (the lab's precision)
  and in float32 (``dtype=np.float32``, torch's precision): its data draws,
  updates and evaluations are all timed.
* torch: the members' weights as batched tensors ``(E, ., .)``, the input
  projection of all steps in one batched product, ``torch.baddbmm`` per step
  (the LSTM's gates ordered ``i|f|o|g`` so one sigmoid covers three of them,
  the GRU's ``r|z`` likewise), autograd, per-member global-norm clipping of
  the gradients, ``torch.optim.Adam`` with ``foreach=True``, in float32;
  evaluation under ``torch.no_grad``. Its batches are drawn and converted to
  tensors before the clock starts, so its time leaves out the data that
  rnnmem's time includes.

The sides alternate (the order reverses every run), after a warm-up. Each
run is timed by wall clock and by this process's CPU time
(``time.process_time``), which leaves out time other programs take on a
shared machine. The script prints, per model, lag and side, the fastest and
the median run, the throughput in member-updates per second (``E * 60`` per
run, from the fastest CPU time) and its inverse, the cost of one
member-update in microseconds; then each rnnmem precision's ratio rnnmem
time / torch time (from the fastest CPU times, and the median of the
per-pair ratios).

``--against REF`` also times the lab as it was at the git commit ``REF``
(its ``src/rnnmem`` taken with ``git archive`` into a temporary folder and
imported under another name) in both precisions, interleaved with the
current one in the same process, and prints the speed-up of the current
code; ``--no-torch`` leaves the torch peer out (then only rnnmem's own
numbers, and the comparison with ``REF`` if given, are printed).

One thread each: numpy's BLAS through threadpoolctl (and the environment),
torch through ``torch.set_num_threads(1)``. The script prints the BLAS
library and kernel threadpoolctl reports. Run it with ``OPENBLAS_CORETYPE``
and ``OPENBLAS_L2_SIZE`` unset (``make bench`` does), so numpy's OpenBLAS
picks the kernel a reader's machine would.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import io
import math
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

try:
    from threadpoolctl import threadpool_info, threadpool_limits
except ImportError:  # pragma: no cover - depends on the environment
    threadpool_info = threadpool_limits = None

import rnnmem  # noqa: E402
from rnnmem.experiments import DESIGN  # noqa: E402

MODELS = ("rnn", "gru", "lstm")
REPO = Path(__file__).resolve().parents[2]


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


def import_commit(ref: str, into: Path):
    """The package ``rnnmem`` of git commit ``ref`` (its core modules), imported as ``rnnmem_at_ref``."""
    try:
        archive = subprocess.run(
            ["git", "archive", ref, "src/rnnmem"], cwd=REPO, check=True, capture_output=True
        ).stdout
    except subprocess.CalledProcessError as err:
        raise SystemExit(f"--against: git cannot read commit {ref!r}: {err.stderr.decode().strip()}") from None
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    package = into / "src" / "rnnmem"
    spec = importlib.util.spec_from_file_location(
        "rnnmem_at_ref", package / "__init__.py", submodule_search_locations=[str(package)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["rnnmem_at_ref"] = module
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------- rnnmem's side


def lab_run(package, model: str, lag: int, members: int, steps: int, dtype=np.float64):
    """A function that trains the lab's ensemble once with ``package`` (rnnmem, or an older one)."""
    task = package.tasks.recall(lag)
    design = dataclasses.asdict(DESIGN) | {"steps": steps}

    def run():
        if not hasattr(package.lab, "Schedule"):  # a version before the Schedule: every option a keyword
            return package.lab.train(task, model, seeds=list(range(members)), dtype=dtype, **design)
        hidden = design.pop("hidden")
        made = package.lab.Model(model, seeds=list(range(members)), hidden=hidden, dtype=dtype)
        return package.lab.train(task, made, package.lab.Schedule(**design))

    return run


# ---------------------------------------------------------------------------- the torch peer


def torch_run(model: str, lag: int, members: int, steps: int, seed: int = 0):
    """A function that trains the expert's batched torch ensemble of ``model`` once, the lab's job in float32."""
    import torch

    E, H, B = members, DESIGN.hidden, DESIGN.batch
    G = {"rnn": 1, "gru": 3, "lstm": 4}[model]
    task = rnnmem.tasks.recall(lag)
    T, D, K = task.length, task.input_size, task.output_size
    rng = np.random.default_rng(seed)
    batches = []
    for _ in range(steps):
        drawn = [task.sample(B, seed=rng) for _ in range(E)]
        x = np.stack([b.inputs for b in drawn], axis=1).astype(np.float32)  # (T, E, B, D)
        batches.append((torch.from_numpy(x), torch.from_numpy(np.stack([b.targets for b in drawn]))))
    held_out = task.sample(DESIGN.eval_size, seed=rng)
    x_eval = torch.from_numpy(held_out.inputs.astype(np.float32))  # (T, N, D), shared by the members
    y_eval = torch.from_numpy(held_out.targets)
    generator = torch.Generator().manual_seed(seed)

    def uniform(*shape):
        bound = 1.0 / math.sqrt(H)
        return ((torch.rand(*shape, generator=generator) * 2 - 1) * bound).requires_grad_()

    def forward(params, projected, N):
        """Last hidden states (E, N, H) from the input projection of every step (E, T, N, G H)."""
        _, W_hh, _, b_hh, _, _ = params
        h = projected.new_zeros(E, N, H)
        c = projected.new_zeros(E, N, H)
        for t in range(T):
            if model == "rnn":
                h = torch.tanh(torch.baddbmm(projected[:, t], h, W_hh))
            elif model == "gru":  # gates r|z|n, the reset applied after the product (PyTorch's GRU)
                from_state = torch.baddbmm(b_hh, h, W_hh)
                rz = torch.sigmoid(projected[:, t, :, : 2 * H] + from_state[:, :, : 2 * H])
                r, z = rz[:, :, :H], rz[:, :, H:]
                n = torch.tanh(torch.addcmul(projected[:, t, :, 2 * H :], r, from_state[:, :, 2 * H :]))
                h = torch.lerp(n, h, z)  # n + z (h - n)
            else:  # gates i|f|o|g
                gates = torch.baddbmm(projected[:, t], h, W_hh)
                ifo = torch.sigmoid(gates[:, :, : 3 * H])
                g = torch.tanh(gates[:, :, 3 * H :])
                i, f, o = ifo[:, :, :H], ifo[:, :, H : 2 * H], ifo[:, :, 2 * H :]
                c = torch.addcmul(f * c, i, g)
                h = o * torch.tanh(c)
        return h

    def run():
        params = [
            uniform(E, D, G * H),
            uniform(E, H, G * H),
            uniform(E, 1, G * H),
            uniform(E, 1, G * H),
            uniform(E, H, K),
            uniform(E, 1, K),
        ]
        if model != "gru":  # one bias: the state's bias only matters inside the GRU's reset
            params[3] = torch.zeros(E, 1, G * H)
        W_ih, _, b, _, V, c = params
        trained = [p for p in params if p.requires_grad]
        opt = torch.optim.Adam(trained, lr=DESIGN.lr, foreach=True)
        clip = DESIGN.clip

        def evaluate():
            with torch.no_grad():
                N = x_eval.shape[1]
                projected = torch.matmul(x_eval.reshape(1, T * N, D), W_ih) + b  # (E, T N, G H)
                h = forward(params, projected.view(E, T, N, G * H), N)
                logits = torch.baddbmm(c, h, V)
                return (logits.argmax(2) == y_eval).float().mean(1)

        scores = [evaluate()]
        for done, (x, y) in enumerate(batches, start=1):
            projected = torch.baddbmm(b, x.transpose(0, 1).reshape(E, T * B, D), W_ih)  # every step at once
            h = forward(params, projected.view(E, T, B, G * H), B)
            logits = torch.baddbmm(c, h, V)
            losses = torch.nn.functional.cross_entropy(logits.reshape(E * B, K), y.reshape(E * B), reduction="none")
            opt.zero_grad(set_to_none=True)
            losses.view(E, B).mean(1).sum().backward()  # each member's mean loss; members never mix
            with torch.no_grad():
                grads = [p.grad for p in trained]
                norms = torch.stack([g.reshape(E, -1).square().sum(1) for g in grads]).sum(0).sqrt()
                scale = (clip / (norms + 1e-6)).clamp(max=1.0).view(E, 1, 1)
                torch._foreach_mul_(grads, [scale] * len(grads))
            opt.step()
            if done % DESIGN.eval_every == 0 or done == steps:
                scores.append(evaluate())
        return scores

    return run


# ---------------------------------------------------------------------------- timing


def timed(fn) -> tuple:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS, help="cells (default all)")
    parser.add_argument("--lags", type=int, nargs="+", default=[10, 40], help="recall lags (default 10 40)")
    parser.add_argument("--members", type=int, default=20, help="E, models trained together (default 20)")
    parser.add_argument("--steps", type=int, default=60, help="updates per run (default 60)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of each side (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs of each side first (default 1)")
    parser.add_argument("--against", metavar="REF", help="also time the lab at git commit REF (e.g. main)")
    parser.add_argument("--no-torch", action="store_true", help="leave the torch peer out")
    args = parser.parse_args(argv)
    for name in ("members", "steps", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be a whole number >= 1, got {getattr(args, name)}")
    if any(lag < 1 for lag in args.lags):
        parser.error(f"--lags must be whole numbers >= 1, got {args.lags}")

    if not args.no_torch:
        import torch

        torch.set_num_threads(1)
    workdir = tempfile.TemporaryDirectory(prefix="bench-ensemble-")
    old = import_commit(args.against, Path(workdir.name)) if args.against else None

    load = os.getloadavg()
    limits = threadpool_limits(limits=1, user_api="blas") if threadpool_limits is not None else None
    results = {}
    try:
        for model in args.models:
            for lag in args.lags:
                sides = {}
                for name, dtype in (("float64", np.float64), ("float32", np.float32)):
                    sides[f"rnnmem {name}"] = lab_run(rnnmem, model, lag, args.members, args.steps, dtype)
                    if old is not None:
                        sides[f"{args.against} {name}"] = lab_run(old, model, lag, args.members, args.steps, dtype)
                if not args.no_torch:
                    sides["torch float32"] = torch_run(model, lag, args.members, args.steps)
                for _ in range(args.warmup):
                    for fn in sides.values():
                        fn()
                times: dict = {name: [] for name in sides}
                order = list(sides)
                for i in range(args.repeats):
                    for name in order if i % 2 == 0 else order[::-1]:
                        times[name].append(timed(sides[name]))
                results[model, lag] = times
        blas = blas_report()
    finally:
        if limits is not None:
            limits.restore_original_limits()
        workdir.cleanup()

    updates = args.members * args.steps
    print(
        f"the lab's training: E={args.members} models, H={DESIGN.hidden}, B={DESIGN.batch}, recall, "
        f"{args.steps} updates, evaluation every {DESIGN.eval_every} on {DESIGN.eval_size} sequences; "
        f"{args.repeats} alternating runs each"
    )
    print(f"numpy {np.__version__}, BLAS: {blas}")
    if not args.no_torch:
        config = torch.__config__.show()
        blas_info = next(
            (part.split("=")[1] for part in config.replace(",", " ").split() if part.startswith("BLAS_INFO=")), "?"
        )
        print(
            f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), BLAS {blas_info} (inside torch, "
            f"not seen by threadpoolctl), CPU capability {torch.backends.cpu.get_cpu_capability()}"
        )
    coretype = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}
    if coretype:
        print(f"note: {coretype} is set; unset it for this benchmark")
    print(f"load average before the runs: {load[0]:.2f} (cores: {os.cpu_count()})")
    for (model, lag), times in results.items():
        print(f"{model} at lag {lag} (T = {lag + 2}), CPU time (wall clock in brackets):")
        cpu = {name: [run[1] for run in runs] for name, runs in times.items()}
        for name, runs in times.items():
            best, median = min(cpu[name]), statistics.median(cpu[name])
            wall = min(run[0] for run in runs)
            print(
                f"  {name:16s} fastest {best * 1e3:7.1f} ms, median {median * 1e3:7.1f} ms  ({wall * 1e3:7.1f} ms)"
                f"  {updates / best:7.0f} member-updates/s  {best / updates * 1e6:6.1f} us/member-update"
            )
        pairs = []
        for name in ("float64", "float32"):
            if old is not None:
                pairs.append((f"rnnmem {name}", f"{args.against} {name}"))
            if not args.no_torch:
                pairs.append((f"rnnmem {name}", "torch float32"))
        for mine, theirs in pairs:
            fastest = min(cpu[mine]) / min(cpu[theirs])
            paired = statistics.median(a / b for a, b in zip(cpu[mine], cpu[theirs]))
            line = f"  {mine} / {theirs}: {fastest:.3f} (fastest runs), {paired:.3f} (median of pairs)"
            if theirs != "torch float32":
                line += f"; speed-up {1 / fastest:.2f}x"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

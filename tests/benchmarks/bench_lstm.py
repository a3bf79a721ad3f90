"""Benchmark: rnnmem's LSTM, GRU and RNN against torch.nn's, one thread each, side by side.

Run as ``python tests/benchmarks/bench_lstm.py`` (or ``make bench``, which also
unsets ``OPENBLAS_CORETYPE`` and ``OPENBLAS_L2_SIZE`` for this command only, so
numpy's OpenBLAS picks the kernel a user's numpy would pick on this CPU).

For each model and shape, both libraries compute the same thing from the same
weights, input and initial state:

* ``fwd``: the forward pass of a training step (outputs and final state, with
  what backward needs kept; torch's inputs and weights require gradients);
* ``fwd+bwd``: that forward pass, then the gradients of every parameter, of the
  input and of the initial state, for given output gradients;
* ``products`` (LSTM only): rnnmem's LSTM forward+backward with every
  element-wise operation left out, only its matrix products at their shapes
  (per step, the stacked pre-activations and the gradient back to ``h``; per
  chunk of steps, the weight and the input gradients), against torch's whole
  forward+backward. Its ratio is a floor: no rewrite of the element-wise
  passes brings the LSTM's ratio below it while numpy's BLAS does the products.

Shapes (time first): the reference shape T128 B32 D64 H128 in float32, and the
lab's shape T100 B64 D10 H32 in float32 and in float64. The targets, printed
under the table with what this run measured: at the reference shape, the
LSTM's forward+backward at most 1.25 times its products alone (the floor numpy
allows; the ratio of the two rows' median ratios to torch, both timed against
the same torch pass) and at most 1.3 times torch; the GRU's and the RNN's
forward and forward+backward below torch (ratio under 1) at every shape.

The two libraries alternate (which goes first alternates too), after a
warm-up, and each run is timed twice: wall-clock time, and the CPU time of
this process (``time.process_time``), which leaves out the time other programs
on a shared machine take the core away. The script prints, per row, both
medians and the median of the per-pair ratios, with the ratios' interquartile
range as a measure of the noise. numpy's BLAS is held to one thread (with
threadpoolctl where installed, otherwise through ``OPENBLAS_NUM_THREADS``,
``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS``, set before numpy is imported),
torch to one thread with ``torch.set_num_threads(1)``; the script prints the
BLAS library, its kernel and its thread count, and how torch runs its LSTM
(in float32, where oneDNN is available, one fused oneDNN layer for the whole
sequence; in float64, a product and an element-wise kernel per step).
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

from rnnmem._recurrent import Recurrent  # noqa: E402
from rnnmem.gru import GRU  # noqa: E402
from rnnmem.lstm import LSTM  # noqa: E402
from rnnmem.rnn import RNN  # noqa: E402

MODELS: dict[str, type[Recurrent]] = {"lstm": LSTM, "gru": GRU, "rnn": RNN}
SHAPES = {  # name: (T, B, D, H, dtype)
    "reference": (128, 32, 64, 128, np.float32),
    "lab": (100, 64, 10, 32, np.float32),
    "lab-f64": (100, 64, 10, 32, np.float64),
}
LSTM_OVER_PRODUCTS = 1.25
"""The LSTM's forward+backward against its matrix products alone, at the reference shape: at most this."""
LSTM_OVER_TORCH = 1.3
"""The LSTM's forward+backward against torch's, at the reference shape: at most this."""


def blas_report() -> str:
    """Which BLAS numpy uses, its kernel and its thread count."""
    if threadpool_info is not None:
        lines = []
        for pool in threadpool_info():
            if pool.get("user_api") == "blas":
                lines.append(
                    f"{pool.get('internal_api')} {pool.get('version')}, "
                    f"kernel {pool.get('architecture')}, {pool.get('num_threads')} thread(s), "
                    f"{os.path.basename(pool.get('filepath', ''))} (threadpoolctl)"
                )
        return "; ".join(lines) or "no BLAS found by threadpoolctl"
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    return f"{blas.get('name')} {blas.get('version')}, {openblas_threads()} (threadpoolctl not installed)"


def openblas_threads() -> str:
    """The thread count and kernel OpenBLAS reports, asked through ctypes; else the environment's setting."""
    import ctypes
    import glob

    pattern = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs", "*openblas*")
    for path in glob.glob(pattern):
        lib = ctypes.CDLL(path)
        core = ""
        for name in (
            "scipy_openblas_get_corename64_",
            "scipy_openblas_get_corename",
            "openblas_get_corename64_",
            "openblas_get_corename",
        ):
            if hasattr(lib, name):
                getattr(lib, name).restype = ctypes.c_char_p
                core = f", kernel {getattr(lib, name)().decode()}"
                break
        for name in (
            "scipy_openblas_get_num_threads64_",
            "scipy_openblas_get_num_threads",
            "openblas_get_num_threads64_",
            "openblas_get_num_threads",
        ):
            if hasattr(lib, name):
                return f"{getattr(lib, name)()} thread(s) reported by OpenBLAS{core}"
    return f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')} (thread count not queried)"


def make_pair(torch, kind: str, T: int, B: int, D: int, H: int, dtype) -> tuple:
    """(numpy forward, numpy forward+backward, torch forward, torch forward+backward) on the same data."""
    torch_dtype = {np.float32: torch.float32, np.float64: torch.float64}[dtype]
    torch.manual_seed(0)
    reference = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[kind](D, H).to(torch_dtype)
    sd = {k: v.detach().numpy() for k, v in reference.state_dict().items()}
    model = MODELS[kind].from_torch_state_dict(sd, dtype=dtype)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((T, B, D)).astype(dtype)
    dy = rng.standard_normal((T, B, H)).astype(dtype)
    states = [(rng.standard_normal((B, H)) * 0.1).astype(dtype) for _ in model.state_names]
    state = states[0] if len(states) == 1 else tuple(states)

    x_t = torch.from_numpy(x).requires_grad_()
    states_t = [torch.from_numpy(s[None].copy()).requires_grad_() for s in states]
    state_t = states_t[0] if len(states_t) == 1 else tuple(states_t)
    dy_t = torch.from_numpy(dy)
    leaves = (*reference.parameters(), x_t, *states_t)

    def numpy_forward() -> None:
        model.forward(x, state)

    def numpy_both() -> None:
        model.forward(x, state)
        model.backward(dy)

    def torch_forward() -> None:
        reference(x_t, state_t)

    def torch_both() -> None:
        for p in leaves:
            p.grad = None
        outputs, _ = reference(x_t, state_t)
        outputs.backward(dy_t)

    return numpy_forward, numpy_both, torch_forward, torch_both


def lstm_products(T: int, B: int, D: int, H: int, dtype):
    """The matrix products of rnnmem's LSTM forward and backward alone, at their shapes and in their order.

    Forward, per step: the stacked weights (4H, D + 1 + H) times the column
    block [x_t; 1; h_{t-1}] (D + 1 + H, B). Backward, per step: W_hh^T (H, 4H)
    times the gate gradients (4H, B); per chunk of steps (as
    ``LSTM._chunk_elements`` sizes them), the gate gradients (4H, nB) times the
    inputs (nB, D) and times [1, h_{t-1}] (nB, 1 + H), both batch-major (the
    weight and bias gradients), and their transpose (nB, 4H) times W_ih (4H, D)
    (the input gradient).
    """
    K = D + 1 + H
    rng = np.random.default_rng(1)

    def draw(*shape: int) -> np.ndarray:
        return (0.1 * rng.standard_normal(shape)).astype(dtype)

    W, W_hT, W_ih = draw(4 * H, K), draw(H, 4 * H), draw(4 * H, D)
    columns, d_gates = draw(T, K, B), draw(T, 4 * H, B)
    inputs, hidden = draw(T * B, D), draw(T * B, 1 + H)
    gates, d_hidden = np.empty((4 * H, B), dtype), np.empty((H, B), dtype)
    d_W_x, d_W_h = np.empty((4 * H, D), dtype), np.empty((4 * H, 1 + H), dtype)
    d_x = np.empty((T * B, D), dtype)
    chunk = max(1, min(T, LSTM._chunk_elements // (5 * H * B)))
    chunks = [
        (draw(4 * H, (stop - start) * B), slice(start * B, stop * B))
        for start, stop in ((start, min(start + chunk, T)) for start in range(0, T, chunk))
    ]

    def products() -> None:
        for t in range(T):
            np.matmul(W, columns[t], gates)
        for t in range(T - 1, -1, -1):
            np.matmul(W_hT, d_gates[t], d_hidden)
        for d_chunk, rows in chunks:
            np.matmul(d_chunk, inputs[rows], out=d_W_x)
            np.matmul(d_chunk, hidden[rows], out=d_W_h)
            np.matmul(d_chunk.T, W_ih, out=d_x[rows])

    return products


def torch_lstm_path(torch, dtype) -> str:
    """How torch.nn.LSTM computes a training step in ``dtype``: read from the backward graph of one small call.

    Where oneDNN is available, torch runs a float32 LSTM layer as one fused
    oneDNN primitive (its graph holds a ``MkldnnRnnLayerBackward0`` node), not
    as a product and an element-wise kernel per step; the graph says which.
    """
    torch_dtype = {np.float32: torch.float32, np.float64: torch.float64}[dtype]
    layer = torch.nn.LSTM(2, 3).to(torch_dtype)
    outputs, _ = layer(torch.zeros(2, 1, 2, dtype=torch_dtype, requires_grad=True))
    names, todo, seen = set(), [outputs.grad_fn], set()
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(type(node).__name__)
        todo.extend(next_node for next_node, _ in node.next_functions)
    fused = sorted(n for n in names if "Mkldnn" in n)
    return f"oneDNN fused layer ({fused[0]})" if fused else "step by step (no oneDNN node in its graph)"


def timed(fn) -> tuple:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def compare(ours, theirs, repeats: int, warmup: int) -> tuple:
    """Interleaved timings of two functions: lists of (wall, cpu) for each."""
    for _ in range(warmup):
        ours()
        theirs()
    mine, other = [], []
    for i in range(repeats):
        if i % 2:
            mine.append(timed(ours))
            other.append(timed(theirs))
        else:
            other.append(timed(theirs))
            mine.append(timed(ours))
    return mine, other


def quartiles(values: list) -> tuple:
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30, help="timed runs of each per row (default 30)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs of each first (default 3)")
    parser.add_argument("--models", default="lstm,gru,rnn", help="comma-separated, of lstm,gru,rnn")
    parser.add_argument("--shapes", default=",".join(SHAPES), help=f"comma-separated, of {','.join(SHAPES)}")
    args = parser.parse_args(argv)
    models = args.models.split(",")
    shapes = args.shapes.split(",")
    for name, allowed in (("--models", MODELS), ("--shapes", SHAPES)):
        unknown = [v for v in (models if name == "--models" else shapes) if v not in allowed]
        if unknown:
            parser.error(f"{name}: unknown {', '.join(unknown)}; allowed: {', '.join(allowed)}")
    if args.repeats < 4:
        parser.error(f"--repeats must be at least 4, got {args.repeats}")

    import torch

    torch.set_num_threads(1)
    limits = threadpool_limits(limits=1, user_api="blas") if threadpool_limits is not None else None
    load = os.getloadavg()
    rows = []
    try:
        for shape in shapes:
            T, B, D, H, dtype = SHAPES[shape]
            for kind in models:
                np_fwd, np_both, t_fwd, t_both = make_pair(torch, kind, T, B, D, H, dtype)
                passes = [("fwd", np_fwd, t_fwd), ("fwd+bwd", np_both, t_both)]
                if kind == "lstm":
                    passes.append(("products", lstm_products(T, B, D, H, dtype), t_both))
                for mode, ours, theirs in passes:
                    rows.append((shape, kind, mode, *compare(ours, theirs, args.repeats, args.warmup)))
        blas = blas_report()
    finally:
        if limits is not None:
            limits.restore_original_limits()
    load_after = os.getloadavg()

    print(f"rnnmem against torch.nn, {args.repeats} alternating runs of each per row")
    print(f"numpy {np.__version__}, BLAS: {blas}")
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); its LSTM runs "
        + ", ".join(
            f"{np.dtype(d).name}: {torch_lstm_path(torch, d)}"
            for d in sorted({SHAPES[s][4] for s in shapes}, key=lambda d: np.dtype(d).itemsize)
        )
    )
    pinned = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}
    if pinned:
        print(f"note: {pinned} is set and pins numpy's OpenBLAS kernel: run through `make bench` to unset it")
    print(f"load average: {load[0]:.2f} before, {load_after[0]:.2f} after (cores: {os.cpu_count()})")
    print("ratio = median over pairs of rnnmem time / torch time; IQR = interquartile range of those ratios")
    print()
    header = (
        f"{'shape':<28} {'model':<5} {'pass':<8} {'rnnmem ms':>9} {'torch ms':>9} "
        f"{'ratio':>6} {'IQR':>11} {'cpu ratio':>9} {'IQR':>11}"
    )
    print(header)
    print("-" * len(header))
    for shape, kind, mode, mine, other in rows:
        T, B, D, H, dtype = SHAPES[shape]
        label = f"T{T} B{B} D{D} H{H} {np.dtype(dtype).name}"
        cells = [f"{label:<28} {kind:<5} {mode:<8}"]
        for k in (0, 1):
            ratios = [a[k] / b[k] for a, b in zip(mine, other)]
            lo, hi = quartiles(ratios)
            if k == 0:
                cells.append(
                    f"{statistics.median(a[0] for a in mine) * 1e3:9.2f} "
                    f"{statistics.median(b[0] for b in other) * 1e3:9.2f}"
                )
            cells.append(
                f"{statistics.median(ratios):6.3f} {lo:5.2f}-{hi:5.2f}"
                if k == 0
                else f"{statistics.median(ratios):9.3f} {lo:5.2f}-{hi:5.2f}"
            )
        print(" ".join(cells))
    print()
    medians = {
        (shape, kind, mode): statistics.median(a[0] / b[0] for a, b in zip(mine, other))
        for shape, kind, mode, mine, other in rows
    }
    print("targets (medians of the per-pair ratios above, wall clock):")
    if ("reference", "lstm", "products") in medians:
        both, floor = medians["reference", "lstm", "fwd+bwd"], medians["reference", "lstm", "products"]
        print(
            f"  LSTM fwd+bwd / its products alone, reference shape: {both / floor:.3f} "
            f"(at most {LSTM_OVER_PRODUCTS}: {'met' if both / floor <= LSTM_OVER_PRODUCTS else 'not met'})"
        )
        print(
            f"  LSTM fwd+bwd / torch, reference shape: {both:.3f} "
            f"(at most {LSTM_OVER_TORCH}: {'met' if both <= LSTM_OVER_TORCH else 'not met'})"
        )
    for kind in ("gru", "rnn"):
        of_kind = {k: v for k, v in medians.items() if k[1] == kind}
        if of_kind:
            worst = max(of_kind, key=lambda k: of_kind[k])
            print(
                f"  {kind.upper()} below torch at every shape and pass: highest {of_kind[worst]:.3f} "
                f"({worst[0]}, {worst[2]}; {'met' if of_kind[worst] < 1.0 else 'not met'})"
            )
    if "lstm" in models:
        print(
            "lstm products: rnnmem's LSTM matrix products alone against torch's whole fwd+bwd, "
            "the floor of the fwd+bwd ratio while numpy's BLAS computes them"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

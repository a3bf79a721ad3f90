"""``python -m rnnmem lab sweep ...``: train a grid of models x lags, many seeds a cell, and count the successes.

The grid is :class:`rnnmem.grid.Grid`; its runs are trained by
:mod:`rnnmem.engine` on this machine's processes, or on the Dask cluster whose
scheduler ``--scheduler`` names (or ``$RNNMEM_SCHEDULER``), with the same
outcomes. Prints what was trained and where, then a table: one row per model,
one column per lag, each cell the successes out of the seeds with their 95%
Wilson interval. ``--json PATH`` writes every seed's outcome, with no time or
host in it, so that two sweeps compare byte for byte.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import by_design, engine, tasks
from ..grid import Grid, GridResult
from . import _args
from ._progress import progress_bar

__all__ = ["NAME", "HELP", "DESCRIPTION", "configure", "run"]

NAME = "lab sweep"
HELP = "train a grid of models x lags, many seeds each, on this machine or a Dask cluster"
DESCRIPTION = """\
Train every model at every lag with seeds 0 to N-1, and count the seeds that succeed.
The runs go to this machine's processes, or to a Dask cluster (--scheduler, or the
environment variable RNNMEM_SCHEDULER); the outcomes are the same bit for bit.

Models are the lab's specs: rnn, gru, lstm (PyTorch's draw), lstm:B (forget bias B),
lstm:chrono, an LSTM spec followed by :iB (input-gate bias B); lru, mingru, selective,
mamba, optionally followed by :L (layers) and, for lru, :rR (the ring's outer radius,
0 < R < 1).
The rest is the lab's design: hidden size 16, batches of 32, Adam 0.01, clipping at 1,
an evaluation on 256 held-out sequences every 25 updates; a seed succeeds at held-out
accuracy >= 0.9 (recall tasks) or at 90% of the constant guess's error removed (adding).

examples:
  python -m rnnmem lab sweep --models lstm:1,gru,lru:1:r0.9 --lags 10,20 --seeds 20 --steps 300
  python -m rnnmem lab sweep --models lstm:chrono --lags 100 --seeds 100 --steps 1500 \\
      --scheduler tcp://10.0.0.5:8786 --json chrono-100.json
"""


def _list(convert: Callable[[str], Any], allowed: str) -> Callable[[str], list]:
    """A comma-separated list, each item read by ``convert``; empty items or an empty list are refused."""

    def parse(text: str) -> list:
        items = text.split(",")
        if not text.strip() or any(not item.strip() for item in items):
            raise argparse.ArgumentTypeError(f"must be {allowed}, separated by commas, got {text!r}")
        return [convert(item.strip()) for item in items]

    return parse


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``lab sweep`` to ``parser``."""
    parser.add_argument(
        "--models",
        required=True,
        type=_list(str, "model specs"),
        metavar="SPEC[,SPEC...]",
        help="the models, as the lab's specs (above), separated by commas (required)",
    )
    parser.add_argument(
        "--lags",
        required=True,
        type=_list(_args.whole(1), "whole numbers >= 1"),
        metavar="L[,L...]",
        help="the lags, whole numbers >= 1 separated by commas (required)",
    )
    parser.add_argument(
        "--seeds", required=True, type=_args.whole(1), metavar="N", help="seeds a cell, 0 to N-1 (required)"
    )
    parser.add_argument(
        "--steps", required=True, type=_args.whole(1), metavar="U", help="the budget: updates per seed (required)"
    )
    parser.add_argument(
        "--task", default="recall", choices=tasks.TASKS, metavar="T", help=f"{', '.join(tasks.TASKS)} (default recall)"
    )
    parser.add_argument(
        "--hidden",
        type=_args.whole(1),
        metavar="H",
        help=f"hidden units, of each layer when stacked (default {by_design.DESIGN.hidden})",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="write every seed's outcome to PATH as JSON")
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="train on the Dask cluster of this scheduler (tcp://host:8786); default: $RNNMEM_SCHEDULER, "
        "else this machine",
    )
    parser.add_argument(
        "--workers",
        type=_args.whole(1),
        metavar="W",
        help="this machine only: processes that train (default: 2, or the cores if fewer)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar of the seeds trained on standard error (needs tqdm); default: when standard "
        "error is a terminal and tqdm is installed, else a quiet run",
    )


def run(args: argparse.Namespace) -> int:
    """Train the grid, print the table, write the JSON; return 0."""
    if args.scheduler is not None and args.workers is not None:
        raise ValueError("--workers sets this machine's processes; a cluster's workers are its own (drop --workers)")
    grid = Grid(tuple(args.models), tuple(args.lags), args.seeds, args.steps, args.task, args.hidden)
    runs = grid.runs()
    total = sum(len(r.seeds) for r in runs)
    with engine.executor_for(args.scheduler, args.workers) as executor:
        print(_header(grid, executor.name), flush=True)
        what = (
            f"lab sweep: {len(grid.models)} model{'s' if len(grid.models) > 1 else ''} x {len(grid.lags)} lags, seeds"
        )
        with progress_bar(args.progress, total, what, unit="seed") as hook:
            done = [0]

            def ended(run: Any, result: Any) -> None:
                done[0] += len(run.seeds)
                if hook is not None:
                    hook(done[0])

            results = engine.train(runs, executor=executor, ended=ended)
    result = grid.result(results)
    print(_table(result))
    if args.json is not None:
        args.json.write_text(result.to_json(), encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


def _header(grid: Grid, where: str) -> str:
    task = tasks.make_task(grid.task, max(grid.lags), by_design.experiments.ALPHABET)
    d = grid.design
    goal = (
        f"held-out accuracy >= {d.threshold:g}"
        if task.kind == "classification"
        else f"{d.threshold:.0%} of the constant guess's error removed"
    )
    return (
        f"{grid.task}, alphabet {by_design.experiments.ALPHABET}; {grid.seeds} seeds a cell, {grid.steps} updates of "
        f"{d.batch}, {d.hidden} hidden units, Adam {d.lr:g}; a seed succeeds at {goal}; trained on {where}"
    )


def _table(result: GridResult) -> str:
    """Models down, lags across; each cell ``k/n [lo, hi]`` with the 95% Wilson interval of the rate."""
    grid = result.grid
    rows = [["model", *(f"lag {lag}" for lag in grid.lags)]]
    for model in grid.models:
        row = [model]
        for lag in grid.lags:
            c = result.cell(model, lag)
            lo, hi = c.interval()
            row.append(f"{c.successes}/{c.n} [{lo:.2f}, {hi:.2f}]")
        rows.append(row)
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows)

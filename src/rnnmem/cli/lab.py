"""``python -m rnnmem lab TASK ...``: train several seeds of one model on a task, as one ensemble.

The model is one of the classic cells (tanh RNN, GRU, LSTM: their gates read
the state) or one of the recurrences whose gates read only the input (LRU,
minGRU, selective decay), stacked in ``--layers``. Prints a line saying what is
trained and what counts as success, one line per seed (its held-out score at
the end and the updates it needed to succeed, "never" or "diverged"; for a
stacked model the line names the layers, and for the LRU the ring its
eigenvalues are drawn on), and as its last line ``success: K/S``.

While it trains, a progress bar on standard error counts the updates (done,
left, time per update, time to go), when standard error is a terminal and the
optional package tqdm is installed (it comes with the ``site`` extra; the core
needs numpy only). On a pipe, in a log, or without tqdm the run is quiet;
``--progress`` forces the bar (and then needs tqdm), ``--no-progress`` turns it off.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lab
from ..ensemble import MODELS
from ..lab import ALL_MODELS
from ..tasks import TASKS, make_task
from . import _args
from ._progress import progress_bar

__all__ = ["NAME", "HELP", "DESCRIPTION", "LINEAR", "configure", "run"]

LINEAR = tuple(m for m in ALL_MODELS if m not in MODELS)
"""The models whose gates read only the input (``lru``, ``mingru``, ``selective``, ``mamba``): the ones ``--layers`` stacks."""

NAME = "lab"
HELP = "train S seeds of a model on a long-range task and count how many succeed"
DESCRIPTION = """\
Train S seeds of one recurrent model on a task with a dependency LAG steps back,
all at once as one ensemble, and report how many succeed.

Tasks:
  recall        a token from an alphabet of K, LAG random tokens of the same alphabet,
                then a query: name the first token (chance 1/K)
  blank-recall  the same with blank tokens in between: distance without interference
  first-recall  recall after a prefix of 0 to LAG//2 blanks: the first token that is not
                blank, which may come again later (chance 1/K); between it and the query
                lie LAG - LAG//2 to LAG tokens. A gate that reads only the input cannot
                tell it from a later copy; a gate that reads the state can write once, then hold
  adding        the adding problem over LAG steps: the sum of the two marked values
                (the best constant guess has mean squared error 1/6)

Models: rnn, gru, lstm (gates that read the state); lru, mingru, selective, mamba (gates
that read only the input, stacked in --layers; --state-size for lru, selective and mamba, and
--r-min, --r-max for the ring of the LRU's eigenvalues).

Success: held-out accuracy >= THRESHOLD (the recall tasks), or held-out mean squared error
<= (1 - THRESHOLD) x 1/6 (adding), at one of the evaluations every --eval-every updates.

examples:
  python -m rnnmem lab recall --model lstm --init chrono --lag 40 --seeds 4
  python -m rnnmem lab first-recall --model lru --layers 2 --lag 40 --seeds 4

A grid of models x lags, many seeds each, on this machine or a Dask cluster:
  python -m rnnmem lab sweep --help
"""


def _clip(text: str) -> float | None:
    if text.lower() == "none":
        return None
    try:
        return _args.positive(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"must be a number > 0, or 'none' for no clipping, got {text!r}") from None


def _radius(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), got {text!r}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``lab`` to ``parser``."""
    parser.add_argument("task", metavar="TASK", choices=TASKS, help=f"the task: {', '.join(TASKS)}")
    parser.add_argument(
        "--model",
        required=True,
        choices=ALL_MODELS,
        help="the recurrent layer: tanh RNN, GRU or LSTM, or one whose gates read only the input: "
        "LRU, minGRU, S6 without its convolution or Mamba's block (required)",
    )
    parser.add_argument(
        "--layers",
        type=_args.whole(1),
        metavar="L",
        help=f"{', '.join(LINEAR)} only: layers stacked (default 1)",
    )
    parser.add_argument(
        "--state-size",
        type=_args.whole(1),
        metavar="N",
        help="lru, selective and mamba only: the size of each layer's recurrent state (default: the model's own, named in the first line of the report)",
    )
    parser.add_argument(
        "--r-min",
        type=_radius,
        metavar="R",
        help=f"lru only: the inner radius of the ring its eigenvalues are drawn on, in (0, 1) "
        f"(default {_ring_default('r_min'):g})",
    )
    parser.add_argument(
        "--r-max",
        type=_radius,
        metavar="R",
        help=f"lru only: the outer radius of that ring, in (0, 1), above --r-min (default {_ring_default('r_max'):g})",
    )
    init = parser.add_mutually_exclusive_group()
    init.add_argument(
        "--forget-bias",
        type=_args.real,
        metavar="B",
        help="LSTM only: set the effective forget bias b_ih + b_hh of every unit to B "
        "(b_ih's forget rows = B, b_hh's = 0); default: PyTorch's uniform draw",
    )
    init.add_argument(
        "--init",
        choices=("default", "chrono"),
        default="default",
        help="LSTM only for chrono: b_f = log U(1, T_max - 1), b_i = -b_f "
        "(Tallec and Ollivier 2018); default: PyTorch's uniform draw",
    )
    parser.add_argument(
        "--t-max",
        type=_args.positive,
        metavar="T",
        help="T_max of chrono initialization (> 2); default: the sequence length",
    )
    parser.add_argument(
        "--lag",
        type=_args.whole(1),
        required=True,
        metavar="N",
        help="steps between the answer and the query (for first-recall the most, with no blank prefix; "
        "for adding: the sequence length, >= 2)",
    )
    parser.add_argument(
        "--alphabet",
        type=_args.whole(2),
        default=8,
        metavar="K",
        help="tokens to tell apart in the recall tasks (default 8, chance 1/8)",
    )
    parser.add_argument(
        "--seeds",
        type=_args.whole(1),
        default=4,
        metavar="S",
        help="how many seeds to train, seeds 0 to S-1 (default 4)",
    )
    parser.add_argument(
        "--steps", type=_args.whole(1), default=1000, metavar="U", help="the budget: updates per seed (default 1000)"
    )
    parser.add_argument(
        "--hidden",
        type=_args.whole(1),
        default=32,
        metavar="H",
        help="hidden units, of each layer when stacked (default 32)",
    )
    parser.add_argument(
        "--batch", type=_args.whole(1), default=64, metavar="B", help="sequences per update (default 64)"
    )
    parser.add_argument("--lr", type=_args.positive, default=0.01, help="Adam's learning rate (default 0.01)")
    parser.add_argument(
        "--clip",
        type=_clip,
        default=1.0,
        metavar="NORM",
        help="clip the gradient to this global norm, or 'none' (default 1.0)",
    )
    parser.add_argument(
        "--threshold",
        type=_args.share,
        default=0.9,
        help="success: held-out accuracy, or fraction of the baseline error removed, "
        "at least this, in (0, 1] (default 0.9)",
    )
    parser.add_argument(
        "--eval-every",
        type=_args.whole(1),
        default=50,
        metavar="K",
        help="evaluate on the held-out set every K updates (default 50)",
    )
    parser.add_argument(
        "--eval-size", type=_args.whole(1), default=512, metavar="N", help="held-out sequences (default 512)"
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar of the updates on standard error (needs tqdm); default: when standard error "
        "is a terminal and tqdm is installed, else a quiet run",
    )


def run(args: argparse.Namespace) -> int:
    """Train, print one line per seed and ``success: K/S``; return 0."""
    _check_model_options(args)
    if args.model != "lstm" and args.forget_bias is not None:
        raise ValueError(f"--forget-bias sets the LSTM's forget gate; --model must be lstm, got {args.model}")
    if args.model != "lstm" and args.init == "chrono":
        raise ValueError(f"--init chrono sets the LSTM's gate biases; --model must be lstm, got {args.model}")
    if args.t_max is not None and args.init != "chrono":
        raise ValueError("--t-max is used only with --init chrono")
    if args.t_max is not None and args.t_max <= 2:
        raise ValueError(f"--t-max must be greater than 2 (u is drawn from [1, T_max - 1]), got {args.t_max:g}")
    if args.task == "adding" and args.lag < 2:
        raise ValueError(f"--lag is the sequence length of the adding problem: at least 2, got {args.lag}")
    task = make_task(args.task, args.lag, args.alphabet)
    seeds = list(range(args.seeds))
    what = f"lab: {args.seeds} {args.model} seed{'s' if args.seeds > 1 else ''}, updates"
    with progress_bar(args.progress, args.steps, what, unit="update") as hook:
        result = _train(args, task, seeds, hook)
    print(_header(args, task, result))
    tag = f" ({_stack(result.ensemble)})" if args.model in LINEAR else ""
    for e, seed in enumerate(seeds):
        print(f"seed {seed}{tag}: {_score(task, result.final_scores[e])}, {_outcome(result, e)}")
    print(f"success: {result.successes}/{len(seeds)}")
    return 0


def _ring_default(name: str) -> float:
    """The default of ``r_min`` or ``r_max`` of :class:`rnnmem.lab.Model`."""
    return float(getattr(lab.Model(), name))


def _ring(args: argparse.Namespace) -> tuple[float, float]:
    """The ring of the LRU's eigenvalues, ``--r-min`` and ``--r-max`` or their defaults."""
    r_min = _ring_default("r_min") if args.r_min is None else args.r_min
    r_max = _ring_default("r_max") if args.r_max is None else args.r_max
    return r_min, r_max


def _check_model_options(args: argparse.Namespace) -> None:
    """A ``ValueError`` naming the option when one is given to a model it does not apply to."""
    if args.layers is not None and args.model not in LINEAR:
        raise ValueError(
            f"--layers stacks the models whose gates read only the input; --model must be one of "
            f"{', '.join(LINEAR)}, got {args.model}"
        )
    if args.state_size is not None and args.model not in ("lru", "selective", "mamba"):
        raise ValueError(
            f"--state-size sets the recurrent state of lru, selective and mamba; --model must be one of them, got {args.model}"
        )
    for option, value in (("--r-min", args.r_min), ("--r-max", args.r_max)):
        if value is not None and args.model != "lru":
            raise ValueError(f"{option} sets the ring of the LRU's eigenvalues; --model must be lru, got {args.model}")
    r_min, r_max = _ring(args)
    if args.model == "lru" and not r_min < r_max:
        raise ValueError(
            f"--r-min must be less than --r-max (the ring r_min <= |lambda| <= r_max), got --r-min {r_min:g} "
            f"and --r-max {r_max:g}"
        )


def _linear_options(args: argparse.Namespace) -> dict[str, Any]:
    """The fields of :class:`rnnmem.lab.Model` for the models of :data:`LINEAR` (none for the others)."""
    if args.model not in LINEAR:
        return {}
    options: dict[str, Any] = {"layers": 1 if args.layers is None else args.layers}
    if args.state_size is not None:
        options["state_size"] = args.state_size
    if args.model == "lru":
        options["r_min"], options["r_max"] = _ring(args)
    return options


def _stack(ensemble: Any) -> str:
    """What a :class:`~rnnmem.linear_ensemble.LinearEnsemble` is: ``lru, 2 layers, state 32, ring 0.9 <= |lambda| <= 0.999``.

    The state is named for ``lru``, ``selective`` and ``mamba`` (minGRU's state is its
    hidden vector), the ring of the eigenvalues for ``lru``.
    """
    words = [ensemble.model, f"{ensemble.layers} layer{'s' if ensemble.layers > 1 else ''}"]
    if ensemble.model in ("lru", "selective", "mamba"):
        words.append(f"state {ensemble.state_size}")
    if ensemble.model == "lru":
        words.append(f"ring {ensemble.r_min:g} <= |lambda| <= {ensemble.r_max:g}")
    return ", ".join(words)


def _train(args: argparse.Namespace, task, seeds: list[int], hook: Callable[[int], object] | None) -> lab.LabResult:
    model = lab.Model(
        args.model,
        seeds=seeds,
        hidden=args.hidden,
        forget_bias=args.forget_bias,
        init=args.init,
        t_max=args.t_max,
        **_linear_options(args),
    )
    schedule = lab.Schedule(
        steps=args.steps,
        batch=args.batch,
        lr=args.lr,
        clip=args.clip,
        eval_every=args.eval_every,
        eval_size=args.eval_size,
        threshold=args.threshold,
    )
    return lab.train(task, model, schedule, progress=hook)


def _header(args, task, result) -> str:
    if task.kind == "classification":
        lag = f"{task.lag - task.lag // 2} to {task.lag}" if task.name == "first-recall" else f"{task.lag}"
        what = f"{task.name}, lag {lag}, alphabet {task.alphabet} (chance {task.chance:.3f})"
        goal = f"held-out accuracy >= {args.threshold:g}"
    else:
        what = f"adding problem, {task.length} steps (constant-guess error {task.baseline_mse:.3f})"
        goal = f"held-out error <= {(1 - args.threshold) * task.baseline_mse:.4f}"
    if args.model in LINEAR:
        model = f"{_stack(result.ensemble)}, {args.hidden} units a layer"
    elif args.forget_bias is not None:
        model = f"{args.model}, {args.hidden} units, forget bias {args.forget_bias:g}"
    elif args.init == "chrono":
        model = f"{args.model}, {args.hidden} units, chrono initialization, T_max {result.ensemble.t_max:g}"
    else:
        model = f"{args.model}, {args.hidden} units, PyTorch's initialization"
    clip = "no clipping" if args.clip is None else f"clipping at {args.clip:g}"
    return (
        f"{what}; {model}; {args.steps} updates of {args.batch}, "
        f"Adam {args.lr:g}, {clip}; a seed succeeds at {goal} on {args.eval_size} sequences"
    )


def _score(task, score: float) -> str:
    if not np.isfinite(score):
        return "held-out score not finite"
    if task.kind == "classification":
        return f"held-out accuracy {score:.2f}"
    return f"held-out error {score:.3f}"


def _outcome(result, e: int) -> str:
    """Member ``e``'s outcome as :meth:`rnnmem.lab.LabResult.outcome` words it, a success named as one."""
    return f"success after {result.outcome(e)}" if result.succeeded[e] else result.outcome(e)

"""``python -m rnnmem gated``: the tables of the chapter on gates, from the command line.

``--highway`` compares what survives along the LSTM's cell for several forget
gates; ``--bias`` shows what the forget bias does over 47 steps (the table of
the chapter on the forget bias); ``--step`` runs the worked cells through the
LSTM and the GRU (the scalar examples and the two-unit cells with every weight,
under each GRU convention); ``--params`` counts what a gate costs. Without a
flag, all four are printed. Every value is computed by the same functions the
pages call, with the pages' arguments as defaults, and formatted as the
pages' tables format it.
"""

from __future__ import annotations

import argparse
import math

from rnnmem import cells, gate_arithmetic, init, lstm, memory, params

from . import _args
from ._text import text_table

__all__ = ["NAME", "HELP", "DESCRIPTION", "configure", "run", "highway", "bias", "step", "costs"]

NAME = "gated"
HELP = "the gates chapter's tables: --highway, --bias, --step, --params"
DESCRIPTION = __doc__.split("\n\n", 1)[1].replace("``", "")

SECTIONS = ("highway", "bias", "step", "params")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the four section flags and their options to ``parser``.

    >>> p = argparse.ArgumentParser()
    >>> configure(p)
    >>> a = p.parse_args(["--params", "--d", "10"])
    >>> a.params, a.highway, a.d, a.hidden
    (True, False, 10, 500)
    """
    what = parser.add_argument_group("what to print (any of them; all four when none is given)")
    what.add_argument(
        "--highway",
        action="store_true",
        help="the gradient kept along the cell, f^n, for each forget gate, and its 1%% horizon",
    )
    what.add_argument(
        "--bias",
        action="store_true",
        help="what the forget bias b_f does: the starting gate, its horizons, and the gradient "
        "kept after --bias-steps steps (b_f = 2 against 0)",
    )
    what.add_argument(
        "--step",
        action="store_true",
        help="the worked cells: the scalar LSTM and GRU examples, then the two-unit LSTM and GRU "
        "with every weight, under each GRU convention",
    )
    what.add_argument(
        "--params",
        action="store_true",
        help="what a gate costs: parameters of one layer of each cell, widths --d and --hidden",
    )
    opts = parser.add_argument_group("settings")
    opts.add_argument(
        "--gates",
        type=_args.gate,
        nargs="+",
        default=[0.99, 0.9, 0.5],
        metavar="F",
        help="--highway: forget gate values in (0, 1) (default: 0.99 0.9 0.5)",
    )
    opts.add_argument(
        "--steps",
        type=_args.whole(0),
        nargs="+",
        default=[8, 50, 100, 500],
        metavar="N",
        help="--highway: steps back along the cell (default: 8 50 100 500)",
    )
    opts.add_argument(
        "--level",
        type=_args.gate,
        default=0.01,
        metavar="EPS",
        help="--highway and --bias: the level of the horizon, in (0, 1) (default: 0.01)",
    )
    opts.add_argument(
        "--biases",
        type=_args.real,
        nargs="+",
        default=None,
        metavar="B",
        help="--bias: forget biases (default: 0 1 2 ln19, the chapter's four)",
    )
    opts.add_argument(
        "--bias-steps",
        type=_args.whole(0),
        default=47,
        metavar="N",
        help="--bias: steps the gradient travels along the cell (default: 47)",
    )
    opts.add_argument(
        "--d", type=_args.whole(1), default=100, metavar="D", help="--params: input width d (default: 100)"
    )
    opts.add_argument(
        "--hidden", type=_args.whole(1), default=500, metavar="H", help="--params: hidden width H (default: 500)"
    )


def _g(x: float) -> str:
    return f"{x:.6g}"


def highway(gates=(0.99, 0.9, 0.5), steps=(8, 50, 100, 500), level=0.01) -> str:
    """f^n for each gate and number of steps, and the level horizon ln(level)/ln f (memory.decay, memory.horizon).

    >>> print(highway(gates=[0.5], steps=[1, 2]).splitlines()[-1])
    0.5            0.5  0.25             6.6
    """
    pct = f"{level:.0%}" if level >= 0.01 else f"{level:g}"
    rows = [[f"{f:g}", *(_g(memory.decay(f, n)) for n in steps), f"{memory.horizon(f, level):.1f}"] for f in gates]
    return text_table(
        "The gradient along the cell: f^n after n steps",
        ["forget gate f", *(f"n = {n}" for n in steps), f"{pct} horizon"],
        rows,
    )


def _bias_label(b: float) -> str:
    return "ln 19 = 2.94" if math.isclose(b, math.log(19.0), rel_tol=0, abs_tol=1e-12) else f"{b:g}"


def bias(biases=None, steps=47, level=0.01) -> str:
    """The forget-bias table (init.forget_bias_table, init.retained_gradient) and b_f = 2 against b_f = 0.

    >>> print(bias(biases=[2.0], steps=47).splitlines()[-1])
    b_f = 2 keeps 2.57e-03 after 47 steps, b_f = 0 keeps 7.11e-15: 3.6e+11 times more
    """
    biases = [0.0, 1.0, 2.0, math.log(19.0)] if biases is None else list(biases)
    pct = f"{level:.0%}" if level >= 0.01 else f"{level:g}"
    rows = [
        [
            _bias_label(r.bias),
            f"{r.gate:.6f}",
            f"{r.efold_horizon:.2f}",
            f"{r.horizon:.1f}",
            f"{r.mean_lifetime:.2f}",
            f"{init.retained_gradient(r.bias, steps):.2e}",
        ]
        for r in init.forget_bias_table(biases, level)
    ]
    table = text_table(
        "What the forget bias does: the starting gate f = sigma(b_f) and its horizons",
        ["bias b_f", "gate f", "e-fold horizon", f"{pct} horizon", "1/(1-f)", f"kept after {steps} steps"],
        rows,
    )
    two, zero = init.retained_gradient(2.0, steps), init.retained_gradient(0.0, steps)
    return (
        f"{table}\n\nb_f = 2 keeps {two:.2e} after {steps} steps, b_f = 0 keeps {zero:.2e}: {two / zero:.1e} times more"
    )


def _pair(v) -> str:
    return "(" + ", ".join(f"{float(a):.6f}" for a in v) + ")"


def _weights(cell: str) -> str:
    rows = [
        [
            f"{r.gate}, unit {r.unit}",
            *(f"{w:.6f}" for w in r.weights),
            f"{r.bias:g}",
            "depends on the reset" if r.value is None else f"{r.value:.6f}",
        ]
        for r in gate_arithmetic.two_unit_rows(cell)
    ]
    title = f"The two-unit {cell.upper()}: every weight row, its bias and its value on this step"
    return text_table(title, ["row", "x1", "x2", "h1", "h2", "bias", "value"], rows)


def step() -> str:
    """The worked cells (gate_arithmetic.lstm_update, gate_arithmetic.gru_update, lstm.step, gru.step), as the gates chapter shows them.

    >>> step().splitlines()[2]
    'LSTM, c_prev = 0.8, f = 0.9, i = 0.2, g = 0.5, o = 0.75'
    """
    u = gate_arithmetic.lstm_update(0.8, f=0.9, i=0.2, g=0.5, o=0.75)
    g = gate_arithmetic.gru_update(0.8, z=0.9, r=0.25)
    scalar = [
        "The scalar cells, fed supplied gate values",
        "-" * 42,
        "LSTM, c_prev = 0.8, f = 0.9, i = 0.2, g = 0.5, o = 0.75",
        f"  kept f*c_prev = {u.kept:.6f}, written i*g = {u.written:.6f}, c = {u.c:.6f}, h = o*tanh(c) = {u.h:.6f}",
        "GRU, h_prev = 0.8, z = 0.9 (z keeps), r = 0.25, no input, recurrent weight 1",
        f"  candidate n = tanh(r*h_prev) = {g.n:.6f}, kept z*h_prev = {g.kept:.6f}, "
        f"written (1-z)*n = {g.written:.6f}, h = {g.h:.6f}",
    ]
    case = gate_arithmetic.two_unit_lstm()
    s = lstm.step(*case)
    cell = (
        f"After the step: c = {_pair(s.c)}, h = {_pair(s.h)}; kept f*c_prev = {_pair(s.f * case.c_prev)}, "
        f"written i*g = {_pair(s.i * s.g)}"
    )
    rows = [
        [c.update, c.reset, c.used_by.replace("`", ""), f"{c.one.h:.6f}", _pair(c.two.n), _pair(c.two.h)]
        for c in gate_arithmetic.gru_conventions(0.8, z=0.9, r=0.25)
    ]
    conventions = text_table(
        "The GRU's conventions: one unit (h_prev 0.8, z 0.9, r 0.25) and the two-unit cell",
        ["update=", "reset=", "used by", "one unit: h", "two units: n", "two units: h"],
        rows,
    )
    return "\n\n".join(["\n".join(scalar), _weights("lstm"), cell, _weights("gru"), conventions])


def costs(d=100, H=500) -> str:
    """Parameters of one layer of each cell under three bias conventions (params.layer_count).

    >>> print(costs(100, 500).splitlines()[-1])
    The GRU has 0.75 of the LSTM's parameters: 300,500 fewer.
    """
    lstm_count = params.layer_count("lstm", d, H)
    rows = []
    for cell in cells.TAUGHT:
        one = params.layer_count(cell, d, H)
        rows.append(
            [
                cells.LABELS[cell],
                str(cells.GATES[cell]),
                f"{one:,}",
                f"{params.layer_count(cell, d, H, 'pytorch'):,}",
                f"{params.layer_count(cell, d, H, 'keras'):,}",
                f"{one / lstm_count:.2f}",
            ]
        )
    table = text_table(
        f"What a gate costs: one layer, d = {d}, H = {H}",
        ["cell", "blocks G", "one bias per block", "PyTorch (two biases)", "Keras (default)", "share of the LSTM"],
        rows,
    )
    gru_count = params.layer_count("gru", d, H)
    return (
        f"{table}\n\nThe GRU has {gru_count / lstm_count:.2f} of the LSTM's parameters: "
        f"{lstm_count - gru_count:,} fewer."
    )


def run(args: argparse.Namespace) -> int:
    """Print the chosen sections (all four when no flag is set); return 0.

    >>> p = argparse.ArgumentParser()
    >>> configure(p)
    >>> run(p.parse_args(["--params", "--d", "1", "--hidden", "2"]))  # doctest: +ELLIPSIS
    What a gate costs: one layer, d = 1, H = 2
    ...
    The GRU has 0.75 of the LSTM's parameters: 8 fewer.
    0
    """
    chosen = [s for s in SECTIONS if getattr(args, s)] or list(SECTIONS)
    out = []
    for section in chosen:
        if section == "highway":
            out.append(highway(args.gates, args.steps, args.level))
        elif section == "bias":
            out.append(bias(args.biases, args.bias_steps, args.level))
        elif section == "step":
            out.append(step())
        else:
            out.append(costs(args.d, args.hidden))
    print("\n\n".join(out))
    return 0

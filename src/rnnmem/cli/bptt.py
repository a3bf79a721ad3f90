"""``python -m rnnmem bptt``: the worked tables of "Following an error backward", and the gate examples.

Prints the scalar example read by read (the credit of each use of the shared
weight, and their sum), the finite-difference check of that gradient and the
update it gives, the multiplier after n edges for each local rate, and the two
worked gate examples (a scalar LSTM cell and a scalar GRU cell fed supplied
gate values). Every value comes from the functions the chapters call
(``rnnmem.bptt``, ``rnnmem.gate_arithmetic``), formatted as the pages' tables format it;
the defaults are the chapters' arguments.
"""

from __future__ import annotations

import argparse

import numpy as np

from rnnmem import bptt, gate_arithmetic

from . import _args
from ._text import text_table

__all__ = [
    "NAME",
    "HELP",
    "DESCRIPTION",
    "configure",
    "run",
    "credit_table",
    "gradient_check",
    "distance_table",
    "gate_examples",
]

NAME = "bptt"
HELP = "the worked BPTT tables, the finite-difference check and both gate examples"
DESCRIPTION = __doc__.split("\n\n", 1)[1].replace("``", "")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the example's options to ``parser``; the defaults are the chapter's.

    >>> p = argparse.ArgumentParser()
    >>> configure(p)
    >>> a = p.parse_args([])
    >>> a.inputs, a.target, a.w, a.learning_rate
    ([1.0, 0.0, 0.0], 1.0, 0.5, 0.1)
    """
    parser.add_argument(
        "--inputs",
        type=_args.real,
        nargs="+",
        default=[1.0, 0.0, 0.0],
        metavar="X",
        help="the scalar inputs x_1 ... x_T (default: 1 0 0)",
    )
    parser.add_argument(
        "--target", type=_args.real, default=1.0, metavar="Y", help="the target of the last state (default: 1)"
    )
    parser.add_argument(
        "--w", type=_args.real, default=0.5, metavar="W", help="the shared recurrent weight w (default: 0.5)"
    )
    parser.add_argument(
        "--learning-rate",
        type=_args.positive,
        default=0.1,
        metavar="ETA",
        help="the step size of the one update, > 0 (default: 0.1)",
    )
    parser.add_argument(
        "--eps",
        type=_args.positive,
        default=1e-6,
        metavar="EPS",
        help="the finite-difference step, > 0 (default: 1e-6)",
    )
    parser.add_argument(
        "--factors",
        type=_args.positive,
        nargs="+",
        default=[0.5, 1.5],
        metavar="A",
        help="local rates per edge for the distance table, > 0 (default: 0.5 1.5)",
    )
    parser.add_argument(
        "--distances",
        type=_args.whole(0, "whole number of edges"),
        nargs="+",
        default=[0, 1, 2, 4, 8, 16],
        metavar="N",
        help="edges crossed, whole numbers >= 0 (default: 0 1 2 4 8 16)",
    )


def _num(value: float) -> str:
    """The shortest decimal that reads back as ``value``, never in exponent form (as the chapter's tables)."""
    text = np.format_float_positional(float(value), trim="-")
    return "0" if text in ("-0", "0") else text


def credit_table(inputs=(1, 0, 0), target=1.0, w=0.5) -> str:
    """The scalar example read by read (bptt.scalar_bptt): states, loss rates, the credit of each use of w.

    >>> print(credit_table().splitlines()[-1])
    All uses belong to one weight, so their credits add: dL/dw = -0.75
    """
    r = bptt.scalar_bptt(list(inputs), target, w)
    rows = [
        [str(t), _num(prev), _num(new), _num(rate), f"{_num(rate)} \u00d7 {_num(prev)} = {_num(c)}"]
        for t, prev, new, rate, c in r.rows
    ]
    table = text_table(
        f"Backward through h_t = w h_(t-1) + x_t, w = {_num(w)}, loss (h_T - {_num(target)})^2 / 2",
        [
            "reading t",
            "previous state h_(t-1)",
            "new state h_t",
            "loss rate delta_t = dL/dh_t",
            "credit of this use, delta_t h_(t-1)",
        ],
        rows,
    )
    return (
        f"{table}\n\nloss L = {_num(r.loss)}\n"
        f"All uses belong to one weight, so their credits add: dL/dw = {_num(r.gradient)}"
    )


def gradient_check(inputs=(1, 0, 0), target=1.0, w=0.5, learning_rate=0.1, eps=1e-6) -> str:
    """The gradient by backpropagation against central differences, then one step of gradient descent.

    >>> print(gradient_check().splitlines()[1])
    by backpropagation through time   -0.75
    """
    r = bptt.scalar_bptt(list(inputs), target, w, learning_rate=learning_rate)
    fd = bptt.finite_difference_gradient(list(inputs), target, w, eps=eps)
    lines = [
        "The gradient, checked",
        f"by backpropagation through time   {_num(r.gradient)}",
        f"by central differences, eps={eps:g}  {round(fd, 9):.9g}",
        f"difference                        {abs(fd - r.gradient):.1e}",
    ]
    if list(inputs) == [1.0, 0.0, 0.0] and target == 1.0:
        lines.append(f"by the polynomial 2w(w^2 - 1)     {_num(2 * w * (w**2 - 1))}")
    lines += [
        "",
        f"One step with learning rate {learning_rate:g}: w = {_num(w)} - {learning_rate:g} x "
        f"({_num(r.gradient)}) = {round(r.updated_w, 12):.12g}",
        f"new last state {round(r.updated_states[-1], 12):.12g}, new loss {round(r.updated_loss, 13):.13g} "
        f"(was {_num(r.loss)})",
    ]
    return "\n".join(lines)


def distance_table(factors=(0.5, 1.5), distances=(0, 1, 2, 4, 8, 16)) -> str:
    """The multiplier a^n after n edges of local rate a (bptt.distance_multipliers).

    >>> print(distance_table([0.5], [16]).splitlines()[-1])
    16     0.0000152587890625
    """
    rows = bptt.distance_multipliers(list(factors), list(distances))
    return text_table(
        "The multiplier after n edges",
        ["edges crossed n", *(f"factor {_num(a)} per edge" for a in factors)],
        [[str(n), *(_num(v) for v in values)] for n, *values in rows],
    )


def gate_examples() -> str:
    """The scalar LSTM and GRU examples (gate_arithmetic.lstm_update, gate_arithmetic.gru_update).

    >>> gate_examples().splitlines()[-1]
    '  h = 0.9 x 0.8 + 0.1 x 0.197375 = 0.739738'
    """
    u = gate_arithmetic.lstm_update(0.8, f=0.9, i=0.2, g=0.5, o=0.75)
    g = gate_arithmetic.gru_update(0.8, z=0.9, r=0.25)
    return "\n".join(
        [
            "Two gate examples, fed supplied gate values",
            "LSTM: old cell 0.8, forget 0.9, input 0.2, candidate 0.5, output 0.75",
            f"  kept 0.9 x 0.8 = {u.kept:.6g}, written 0.2 x 0.5 = {u.written:.6g}, new cell {u.c:.6g}",
            f"  exposed h = 0.75 tanh({u.c:.6g}) = {u.h:.6f}",
            "GRU (z keeps): old state 0.8, update 0.9, reset 0.25, no input, recurrent weight 1",
            f"  the candidate sees 0.25 x 0.8 = {0.25 * 0.8:.6g}: n = tanh({0.25 * 0.8:.6g}) = {g.n:.6f}",
            f"  h = 0.9 x 0.8 + 0.1 x {g.n:.6f} = {g.h:.6f}",
        ]
    )


def run(args: argparse.Namespace) -> int:
    """Print the tables, the check and the gate examples; return 0.

    >>> p = argparse.ArgumentParser()
    >>> configure(p)
    >>> run(p.parse_args(["--distances", "2"]))  # doctest: +ELLIPSIS
    Backward through h_t = w h_(t-1) + x_t, w = 0.5, loss (h_T - 1)^2 / 2
    ...
    2                               0.25                 2.25
    ...
    0
    """
    try:
        parts = [
            credit_table(args.inputs, args.target, args.w),
            gradient_check(args.inputs, args.target, args.w, args.learning_rate, args.eps),
            distance_table(args.factors, args.distances),
            gate_examples(),
        ]
    except ValueError as exc:  # a check of rnnmem.bptt: name the option it came from
        raise ValueError(f"bad arguments (--inputs, --target, --w, --factors or --distances): {exc}") from None
    print("\n\n".join(parts))
    return 0

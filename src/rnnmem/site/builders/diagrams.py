"""Cell and network diagrams, described in code (see :mod:`rnnmem.site.diagrams`).

Each figure here is drawn from a description: the unrolled RNN (forward, and
the gradient flowing back), the LSTM cell and each of its gates lit in a greyed
copy of it, the LSTM unrolled with its gradient going back, the GRU in two
conventions, the window of truncated BPTT, and ELMo's stack. The cell
descriptions are computations as well: the tests run them with
:func:`rnnmem.site.diagrams.evaluate` and hold them to :func:`rnnmem.lstm.step`
and :func:`rnnmem.gru.step`; the truncation window is read from
:func:`rnnmem.bptt.truncation_plan`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from rnnmem import bptt, scan
from rnnmem.checks import Check, PositiveInt, check_choice, check_positive_int
from rnnmem.gru import RESET_CONVENTIONS, UPDATE_CONVENTIONS

from ..diagrams import FONT, Diagram, draw, new_diagram_figure
from ..registry import figure

#: Every diagram is drawn this wide (inches): with FONT points, text is 11 px or more on a 390 px phone.
from ..style import (
    PALETTE,
    WIDTH,  # every figure of the book is this wide (inches)
)

#: Font size (points) of the diagrams that must read on a phone beyond the legal minimum: their
#: subscripts, at 0.7 of it, stay above 9 px at a 358 px column.
LARGE = 13.0

#: The LSTM's gates in the book's words, in PyTorch's order i, f, g, o, as rnnmem.lstm names them.
LSTM_GATES = {"f": "forget gate", "i": "input gate", "g": "candidate", "o": "output gate"}


def _pair(name: str, conv) -> tuple[str, str]:
    if not isinstance(conv, (list, tuple)) or len(conv) != 2:
        raise ValueError(f"{name} must be a pair (update, reset), such as ('z_keeps', 'after'), got {conv!r}")
    return (
        check_choice(f"{name}[0]", conv[0], UPDATE_CONVENTIONS),
        check_choice(f"{name}[1]", conv[1], RESET_CONVENTIONS),
    )


def check_chain_steps(name: str, value) -> int:
    """A chain's number of steps: a whole number from 1 to 3 (more would not read on a phone)."""
    n = check_positive_int(name, value)
    if n > 3:
        raise ValueError(f"{name} must be a whole number from 1 to 3 (legible on a phone), got {value!r}")
    return n


#: The steps of an unrolled chain drawn in one figure.
ChainSteps = Annotated[int, Check(check_chain_steps, "whole numbers from 1 to 3")]

#: A GRU's two conventions, ``(update, reset)``, as :func:`rnnmem.gru.step` names them.
Conventions = Annotated[tuple, Check(_pair, "(update, reset) pairs")]


# ------------------------------------------------------------------ descriptions


def unrolled_rnn(backward: bool = False, builder: str = "rnn_unrolled") -> Diagram:
    """Three steps of a tanh RNN, x_t -> h_t -> h_{t+1}; with ``backward``, the gradient delta_t flowing back."""
    d = Diagram(builder)
    steps = ["t-1", "t", "t+1"]
    d.node("before", r"$\cdots$", at=(0, 1.3), shape="text", width=0.5)
    for k, s in enumerate(steps):
        x = 1.6 * (k + 1)
        d.node(f"x{k}", f"$x_{{{s}}}$", at=(x, 0), shape="text", width=0.6)
        d.node(f"h{k}", f"$h_{{{s}}}$", at=(x, 1.3), width=0.75)
        d.edge(f"x{k}", f"h{k}", label=r"$W_{ih}$", label_side="right", label_at=0.45)
    d.node("after", r"$\cdots$", at=(1.6 * (len(steps) + 1), 1.3), shape="text", width=0.5)
    chain = ["before"] + [f"h{k}" for k in range(len(steps))] + ["after"]
    for a, b in zip(chain, chain[1:]):
        d.edge(a, b, label=r"$W_{hh}$", label_side="below" if backward else "above", label_at=0.5)
    if backward:
        # The gradient leaves each state for the one before: delta_{t+1} -> h_t, and so on.
        names = ["t-1"] + steps[1:] + ["t+2"]
        for k, (a, b) in enumerate(zip(chain, chain[1:])):
            d.edge(b, a, style="backward", route="arc", bend=0.6, label=f"$\\delta_{{{names[k]}}}$", label_side="above")
    return d


def lstm_cell(builder: str = "lstm_cell") -> Diagram:
    """The LSTM cell of :mod:`rnnmem.lstm`: gates i, f, g, o, the carry c_{t-1} -> c_t, the output h_t."""
    d = Diagram(builder)
    d.node("c_prev", r"$c_{t-1}$", at=(0, 4), shape="text", op="input", width=0.7)
    d.node("h_prev", r"$h_{t-1}$", at=(0, 0.2), shape="text", op="input", block="h", width=0.7)
    d.node("x", r"$x_t$", at=(0.9, -0.7), shape="text", op="input", block="x", width=0.5, height=0.4)
    d.node("bus", "", at=(0.9, 0.2), shape="dot", op="concat")
    d.connect("h_prev -> bus", arrow=False)
    d.connect("x -> bus", arrow=False)
    for gate, x in zip("figo", (1.4, 2.4, 3.4, 4.4)):
        d.node(
            gate,
            r"$\tanh$" if gate == "g" else r"$\sigma$",
            at=(x, 1.5),
            width=0.82 if gate == "g" else 0.72,
            op="candidate" if gate == "g" else "gate",
            block=gate,
            computes=gate,
        )
        d.edge("bus", gate, route="hv")
    d.node("mul_f", r"$\times$", at=(1.4, 4), shape="circle", op="mul")
    d.node("add", r"$+$", at=(3.4, 4), shape="circle", op="add")
    d.node("c", r"$c_t$", at=(6.5, 4), shape="text", op="copy", computes="c", width=0.5)
    d.node("mul_i", r"$\times$", at=(3.4, 2.8), shape="circle", op="mul")
    d.node("tanh_c", r"$\tanh$", at=(5.5, 2.85), width=0.82, op="tanh", value=r"$\tanh(c_t)$")
    d.node("mul_o", r"$\times$", at=(5.5, 1.5), shape="circle", op="mul")
    d.node("h", r"$h_t$", at=(6.5, 1.5), shape="text", op="copy", computes="h", width=0.5)
    d.connect("c_prev -> mul_f -> add -> c", style="carry")
    d.edge("f", "mul_f", label=r"$f_t$", label_side="right", label_at=0.3)
    d.edge("i", "mul_i", route="vh", label=r"$i_t$", label_side="left", label_at=0.3)
    d.edge("g", "mul_i", label=r"$g_t$", label_side="right", label_at=0.45)
    d.connect("mul_i -> add")
    d.edge("add", "tanh_c", route="hv")
    d.connect("tanh_c -> mul_o")
    d.edge("o", "mul_o", label=r"$o_t$", label_side="above", label_at=0.55)
    d.connect("mul_o -> h")
    d.group("carry", ["c_prev", "mul_f", "add", "c"], label="carry line", color=PALETTE[0], pad=0.12)
    return d


def gru_cell(update: str = "z_keeps", reset: str = "after", builder: str = "gru_conventions") -> Diagram:
    """The GRU cell of :mod:`rnnmem.gru` in one pair of conventions (``update=``, ``reset=`` as there).

    Wide and low, so that two cells stand one above the other at the figure's full width: the old
    state runs along the top to the sum that gives h_t (right of it), the candidate's row is in the
    middle and the gates below, fed by h_{t-1} and x_t joined at the bottom left.
    The conventions move only two things: the place of r_t's product on the candidate's row
    (before or after W_hn), and the product that 1 - z_t weighs (the kept or the written share).
    """
    update = check_choice("update", update, UPDATE_CONVENTIONS)
    reset = check_choice("reset", reset, RESET_CONVENTIONS)
    d = Diagram(builder)
    top, row, gates, bus = 3.2, 1.85, 0.8, 0.0  # heights of the old state's line, the candidate's row, ...
    keep, write = 4.5, 5.7  # columns of the two products, the kept and the written share
    d.node("h_prev", r"$h_{t-1}$", at=(0, top), shape="text", op="input", block="h", width=0.75, height=0.45)
    d.node("x", r"$x_t$", at=(-0.75, bus), shape="text", op="input", block="x", width=0.5, height=0.45)
    d.node("bus", "", at=(0, bus), shape="dot", op="concat")
    d.connect("h_prev -> bus", arrow=False)
    d.connect("x -> bus", arrow=False)
    d.node("r", r"$\sigma$", at=(1.2, gates), width=0.6, op="gate", block="r", computes="r")
    d.node("z", r"$\sigma$", at=(keep, gates), width=0.6, op="gate", block="z", computes="z")
    first, second = (1.2, row), (2.4, row)
    mul_at, wh_at = (first, second) if reset == "before" else (second, first)
    d.node("r_mul", r"$\times$", at=mul_at, shape="circle", op="mul")
    d.node("W_hn", r"$W_{hn}$", at=wh_at, width=0.85, op="state_part", block="n")
    d.node("n", r"$\tanh$", at=(3.5, row), width=0.85, op="tanh_with_input", block="n", computes="n")
    d.node("mul_keep", r"$\times$", at=(keep, top), shape="circle", op="mul")
    d.node("mul_write", r"$\times$", at=(write, row), shape="circle", op="mul")
    d.node("add", r"$+$", at=(write, top), shape="circle", op="add")
    d.node("h", r"$h_t$", at=(write + 0.85, top), shape="text", op="copy", computes="h", width=0.5, height=0.45)
    d.node(
        "one_minus",
        r"$1{-}$",
        at=(write, gates) if update == "z_keeps" else (keep, (row + top) / 2),
        width=0.6,
        height=0.45,
        op="one_minus",
    )
    d.edge("bus", "r", route="hv")
    d.edge("bus", "z", route="hv")
    d.edge("bus", "n", route="hv")
    if reset == "before":
        d.edge("h_prev", "r_mul", route="vh")
        d.edge("r", "r_mul", label=r"$r_t$", label_side="right", label_at=0.45)
        d.connect("r_mul -> W_hn -> n")
    else:
        d.edge("h_prev", "W_hn", route="vh")
        d.edge("r", "r_mul", route="hv", label=r"$r_t$", label_side="above", label_at=0.25)
        d.connect("W_hn -> r_mul -> n")
    d.edge("h_prev", "mul_keep")
    d.edge("n", "mul_write", label=r"$n_t$", label_side="below", label_at=0.72)
    if update == "z_keeps":
        d.edge("z", "mul_keep", label=r"$z_t$", label_side="left", label_at=0.2)
        d.edge("z", "one_minus")
        d.edge("one_minus", "mul_write")
    else:
        d.edge("z", "one_minus", label=r"$z_t$", label_side="left", label_at=0.3)
        d.edge("one_minus", "mul_keep")
        d.edge("z", "mul_write", route="hv")
    d.connect("mul_keep -> add -> h")
    d.connect("mul_write -> add")
    return d


def differences(a: Diagram, b: Diagram) -> tuple[set[str], set[tuple[str, str]]]:
    """The nodes and edges where two descriptions differ: another operation, other inputs, another place."""
    nodes = {
        i
        for i in set(a.nodes) | set(b.nodes)
        if i not in a.nodes or i not in b.nodes or a.signature(i) != b.signature(i) or a.get(i).at != b.get(i).at
    }

    def drawn(d: Diagram) -> dict:  # an edge as it is drawn: from where to where, by which route
        return {(d.get(e.src).at, d.get(e.dst).at, e.route): e.key for e in d.edges}

    da, db = drawn(a), drawn(b)
    return nodes, {da[k] for k in set(da) - set(db)} | {db[k] for k in set(db) - set(da)}


def truncation_window(length: int = 8, k1: int = 2, k2: int = 4, builder: str = "truncated_bptt") -> Diagram:
    """BPTT(k1, k2) over ``length`` steps: the states, and under them each update's backward reach.

    The reach of every update is :func:`rnnmem.bptt.truncation_plan`'s, not redrawn by hand.
    """
    plan = bptt.truncation_plan(length, k1, k2, loss_steps="all")
    d = Diagram(builder)
    gap = 0.62
    for s in range(1, plan.length + 1):
        d.node(f"h{s}", f"$h_{{{s}}}$", at=(s * gap, 0), width=0.5, height=0.42)
        if s > 1:
            d.edge(f"h{s - 1}", f"h{s}")
    for m, (t, first, _) in enumerate(plan.updates):
        y = -0.62 * (m + 1)
        d.node(f"end{m}", "", at=(t * gap, y), shape="dot", color=PALETTE[1])
        d.node(f"start{m}", "", at=(first * gap, y), shape="dot", color=PALETTE[1])
        full = t - first + 1 == plan.k2 and all(u[0] - u[1] + 1 != plan.k2 for u in plan.updates[:m])
        d.edge(f"end{m}", f"start{m}", style="backward", label=f"$k_2 = {plan.k2}$ steps" if full else None)
        d.node(
            f"when{m}",
            f"update after $h_{{{t}}}$",
            at=((plan.length + 1.9) * gap, y),
            shape="text",
            width=2.0,
            height=0.4,
        )
    for b in plan.boundaries:
        x = (b + 0.5) * gap
        d.node(f"cut_top{b}", "", at=(x, 0.35), shape="dot", color="none")
        d.node(f"cut_bottom{b}", "", at=(x, -0.62 * len(plan.updates) - 0.3), shape="dot", color="none")
        d.edge(f"cut_top{b}", f"cut_bottom{b}", style="cut", arrow=False)
    return d


def elmo_stack(layers: int = 2, builder: str = "elmo_stack") -> Diagram:
    """ELMo over three words: the context-free rows E_w, ``layers`` biLSTM layers, and the scalar mix.

    A box of layer j at word t stands for h_{t,j}, the forward state (arrows to the right) joined to the
    backward one (dashed arrows to the left); each direction's layer j reads its own layer j - 1. Word t's
    layers are copied out to the right into the mixture.
    """
    layers = check_positive_int("layers", layers)
    d = Diagram(builder)
    words = {"prev": "t-1", "t": "t", "next": "t+1"}
    xs = {"prev": 0.7, "t": 3.0, "next": 5.3}
    ys = [0.9 + 1.3 * j for j in range(layers + 1)]
    for i, s in words.items():
        x = xs[i]
        d.node(f"w_{i}", f"$w_{{{s}}}$", at=(x, -0.25), shape="text", width=0.8, height=0.4)
        d.node(f"E_{i}", f"$E_{{w_{{{s}}}}}$", at=(x, ys[0]), width=1.35)
        d.edge(f"w_{i}", f"E_{i}")
        for j in range(1, layers + 1):
            d.node(f"h{j}_{i}", f"$h_{{{s},{j}}}$", at=(x, ys[j]), width=1.35)
            d.edge(f"{'E' if j == 1 else 'h' + str(j - 1)}_{i}", f"h{j}_{i}")
    keys = list(words)
    for j in range(1, layers + 1):
        for a, b in zip(keys, keys[1:]):
            d.edge(f"h{j}_{a}", f"h{j}_{b}", style="carry", offset=0.1)
            d.edge(f"h{j}_{b}", f"h{j}_{a}", style="backward", offset=-0.1)
    mix_x = xs["next"] + 3.5
    d.node("mix", r"$\mathrm{ELMo}_t$", at=(mix_x, (ys[0] + ys[-1]) / 2), width=1.3, height=0.55)
    d.node(
        "formula",
        r"$= \gamma \sum_j s_j h_{t,j}$",
        at=(mix_x + 0.1, ys[-1] + 0.15),
        shape="text",
        width=2.2,
        height=0.8,
    )
    for j, y in enumerate(ys):
        d.node(f"copy{j}", f"$h_{{t,{j}}}$", at=(xs["next"] + 1.35, y), shape="text", width=0.7, height=0.4)
        d.edge(f"copy{j}", "mix", label=f"$s_{j}$", label_side="above", label_at=0.4)
    return d


def _step_name(k: int) -> str:
    """The time index of step ``k`` of a chain whose second step is t: t-1, t, t+1, ..."""
    return "t" if k == 1 else f"t{k - 1:+d}"


def lstm_chain(steps: int = 3, builder: str = "lstm_chain") -> Diagram:
    """An LSTM unrolled over ``steps`` steps (t-1, t, t+1 for three), and the gradient going back.

    The carry line runs straight along the top: per step one product (by f) and one sum (of i g),
    nothing else. Under it the hidden state runs through each step's gates and weights, one box that
    reads h and x, sends f and i g up to the carry line and takes tanh of the new cell back (the output
    gate's product is inside the box). Dashed arrows, in the gradient's colour, go back one step each:
    along the carry line (``back_c{k}``), multiplied by f alone, and along the hidden states
    (``back_h{k}``), through the gates and the weights.
    """
    n = check_chain_steps("steps", steps)
    d = Diagram(builder)
    W = 3.2  # units per step
    carry, hidden, inputs, back_c, back_h = 3.8, 2.0, 0.35, 4.45, 1.25
    names = [_step_name(k) for k in range(n)]
    first, last = _step_name(-1), names[-1]
    d.node("c_in", f"$c_{{{first}}}$", at=(0, carry), shape="text", width=1.0, height=0.45)
    d.node("h_in", f"$h_{{{first}}}$", at=(0, hidden), shape="text", width=1.0, height=0.45)
    c_prev, h_prev = "c_in", "h_in"
    top = hidden + 0.3  # the top edge of a step's box
    for k, s in enumerate(names):
        X = W * k + 0.8  # the step's left edge
        mul, add, gates = f"mul{k}", f"add{k}", f"gates{k}"
        d.node(mul, r"$\times$", at=(X + 0.65, carry), shape="circle", radius=0.27)
        d.node(add, r"$+$", at=(X + 1.55, carry), shape="circle", radius=0.27)
        d.node(gates, "gates", at=(X + 1.4, hidden), width=2.2, height=0.6)
        for name, x in (("f_top", 0.65), ("ig_top", 1.55), ("tanh_top", 2.35), ("x_bottom", 0.75)):
            y = hidden - 0.3 if name == "x_bottom" else top
            d.node(f"{name}{k}", "", at=(X + x, y), shape="dot", color="none")
        d.node(f"x{k}", f"$x_{{{s}}}$", at=(X + 0.75, inputs), shape="text", width=0.8, height=0.45)
        d.edge(c_prev, mul, style="carry")
        d.edge(mul, add, style="carry")
        d.edge(f"f_top{k}", mul, label="$f$", label_side="left", label_at=0.5)
        d.edge(f"ig_top{k}", add, label=r"$i\,g$", label_side="right", label_at=0.5)
        d.edge(add, f"tanh_top{k}", route="hv", label="tanh", label_side="right", label_at=0.8)
        d.edge(h_prev, gates)
        d.edge(f"x{k}", f"x_bottom{k}")
        c_prev, h_prev = add, gates
        # the gradient, one step back: from this step's right edge to its left edge
        right, left = X + W - 0.02, X + 0.02
        for path, y, label, side, at in (
            ("c", back_c, f"$\\times f_{{{s}}}$", "above", 0.5),
            ("h", back_h, "gates, $W$", "below", 0.3),
        ):
            d.node(f"back_{path}{k}_from", "", at=(right, y), shape="dot", color="none")
            d.node(f"back_{path}{k}_to", "", at=(left, y), shape="dot", color="none")
            d.edge(
                f"back_{path}{k}_from",
                f"back_{path}{k}_to",
                style="backward",
                label=label,
                label_side=side,
                label_at=at,
            )
    end = W * n + 0.8
    d.node("c_out", f"$c_{{{last}}}$", at=(end + 0.5, carry), shape="text", width=1.0, height=0.45)
    d.node("h_out", f"$h_{{{last}}}$", at=(end + 0.5, hidden), shape="text", width=1.0, height=0.45)
    d.edge(c_prev, "c_out", style="carry")
    d.edge(h_prev, "h_out")
    return d


# ------------------------------------------------------------------ figures


def _height(diagram: Diagram, width_units: float, width: float = WIDTH, extra: float = 0.0) -> float:
    x0, x1, y0, y1 = diagram.bounds()
    return width * (y1 - y0 + 0.2) / width_units + extra


@figure()
def rnn_unrolled(direction: Literal["forward", "both"] = "forward"):
    """The RNN unrolled over three steps: forward edges, and with direction="both" the gradient delta_t back."""
    d = unrolled_rnn(backward=direction == "both")
    x0, x1, y0, y1 = d.bounds()
    y0 = min(y0, -0.3)
    y1 = max(y1, 2.2 if direction == "both" else y1)
    y0 = y0 if direction == "forward" else min(y0, 0.2)
    w = x1 - x0 + 0.2
    fig, ax = new_diagram_figure(WIDTH, WIDTH * (y1 - y0 + 0.2) / w)
    fig.subplots_adjust(0, 0, 1, 1)
    draw(d, ax, limits=(x0, x1, y0, y1))
    states = [n for n in d.nodes if n.startswith("h")]
    arcs = [e for e in d.edges if e.style == "backward"]
    return fig, {"steps": len(states), "arcs": len(arcs)}


def _succ(d: Diagram, id: str) -> list[str]:
    return [e.dst for e in d.edges if e.src == id]


def _pred(d: Diagram, id: str) -> list[str]:
    return [e.src for e in d.edges if e.dst == id]


def gate_paths(d: Diagram, gate: str) -> tuple[set, set]:
    """One gate of a cell description and the paths it reads and feeds, found by following the edges:
    what it reads (the joined inputs and what they join), the product it enters, and the way from that
    product to the value it goes on to make. Returns ``(lit, partner)``: those nodes and edges (ids and
    ``(src, dst)`` keys), and the other factor of the product with its edge into it."""
    d.get(gate)
    products = [m for m in _succ(d, gate) if d.get(m).op == "mul"]
    if len(products) != 1:
        raise ValueError(f"diagram of builder {d.builder!r}: gate {gate!r} feeds {len(products)} products, not one")
    (product,) = products
    lit: set = {gate, product, (gate, product)}
    for src in _pred(d, gate):
        lit |= {src, (src, gate)}
        lit |= {x for p in _pred(d, src) for x in (p, (p, src))}
    node = product
    while not d.get(node).computes:
        nxt = _succ(d, node)[0]
        lit |= {nxt, (node, nxt)}
        node = nxt
    partner = {x for p in _pred(d, product) if p != gate for x in (p, (p, product))}
    return lit, partner


def _symbol(n) -> str:
    """The value a node stands for, in the book's symbols."""
    if n.computes:
        return f"${n.computes}_t$"
    return n.value or n.label


@figure()
def lstm_cell_diagram(gates: Sequence[Literal["f", "i", "g", "o"]] = ("f", "i", "g", "o")):
    """The LSTM cell, carry line highlighted; under it, one small greyed copy of the whole cell per gate,
    with that gate and the paths it reads and feeds lit, and the other factor of its product in ink."""
    d = lstm_cell()
    x0, x1, y0, y1 = d.bounds()
    unit = WIDTH / (x1 - x0 + 0.2)
    main_h = (y1 - y0 + 0.2) * unit
    title_h = 0.3  # inches above each copy for its name
    copy_h = main_h / 2 + title_h
    rows = -(-len(gates) // 2)
    fig, _ = new_diagram_figure(WIDTH, main_h + rows * copy_h)
    fig.clf()
    H = fig.get_figheight()
    draw(d, fig.add_axes((0, 1 - main_h / H, 1, main_h / H)), fontsize=LARGE)
    for k, gate in enumerate(gates):  # two copies to a row, each under the name of its gate
        col, r = k % 2, k // 2
        bottom = 1 - (main_h + (r + 1) * copy_h) / H
        lit, partner = gate_paths(d, gate)
        ax = fig.add_axes((col * 0.5, bottom, 0.5, (copy_h - title_h) / H))
        draw(d, ax, lit=lit, plain=partner, limits=(x0, x1, y0, y1), labels=False)
        name = f"{LSTM_GATES[gate]}, {_symbol(d.get(gate))}"
        fig.text(col * 0.5 + 0.01, bottom + copy_h / H - 0.004, name, ha="left", va="top", fontsize=LARGE)
    return fig, {"copies": len(gates), "gates": [LSTM_GATES[g] for g in gates]}


@figure()
def gru_conventions_diagram(left: Conventions = ("z_writes", "before"), right: Conventions = ("z_keeps", "after")):
    """Two GRU cells, ``left`` above ``right``, each in one pair of conventions (update=, reset= as in
    rnnmem.gru), with their parts in the same places, so that what differs lines up; the nodes and edges
    where the two descriptions differ are highlighted. Each cell is titled by its two conventions."""
    cells = [gru_cell(*left), gru_cell(*right)]
    nodes, edges = differences(*cells)
    box = [c.bounds() for c in cells]
    x0, x1 = min(b[0] for b in box), max(b[1] for b in box)
    y0, y1 = min(b[2] for b in box), max(b[3] for b in box)
    title = 0.55  # units above each cell for its title
    unit = WIDTH / (x1 - x0 + 0.2)
    cell_h = (y1 - y0 + 0.2) * unit
    title_h = title * unit
    fig, _ = new_diagram_figure(WIDTH, 2 * (cell_h + title_h))
    fig.clf()
    H = fig.get_figheight()
    for k, (cell, (update, reset)) in enumerate(zip(cells, (left, right))):
        bottom = 1 - ((k + 1) * (cell_h + title_h)) / H
        ax = fig.add_axes((0, bottom, 1, cell_h / H))
        draw(cell, ax, limits=(x0, x1, y0, y1), emphasis=nodes | edges, fontsize=LARGE)
        share = "kept" if update == "z_keeps" else "written"
        fig.text(
            0.01,
            bottom + (cell_h + title_h * 0.85) / H,
            f"$z$: share {share};  $r$: {reset} $W_{{hn}}$",
            ha="left",
            va="top",
            fontsize=LARGE,
        )
    return fig, {
        "differ": sorted(nodes),
        "differ_count": len(nodes),
        "edges_differ": len(edges),
        "left": list(left),
        "right": list(right),
    }


@figure()
def lstm_chain_diagram(steps: ChainSteps = 3):
    """An LSTM over ``steps`` steps (1 to 3): the carry line straight along the top, one product by f and
    one sum per step; the hidden states below, through each step's gates and weights; and dashed arrows
    of the gradient going back along both."""
    d = lstm_chain(steps)
    x0, x1, y0, y1 = d.bounds()
    y1 += 0.5  # the labels of the gradient's arrows above the carry line
    w = x1 - x0 + 0.2
    fig, ax = new_diagram_figure(WIDTH, WIDTH * (y1 - y0 + 0.2) / w)
    fig.subplots_adjust(0, 0, 1, 1)
    draw(d, ax, limits=(x0, x1, y0, y1), fontsize=LARGE)
    back = [e for e in d.edges if e.style == "backward"]
    return fig, {
        "steps": len([n for n in d.nodes if n.startswith("gates")]),
        "products": len([n for n in d.nodes if n.startswith("mul")]),
        "sums": len([n for n in d.nodes if n.startswith("add")]),
        "back_carry": len([e for e in back if e.src.startswith("back_c")]),
        "back_hidden": len([e for e in back if e.src.startswith("back_h")]),
    }


@figure()
def truncated_bptt_window(length: PositiveInt = 8, k1: PositiveInt = 2, k2: PositiveInt = 4):
    """BPTT(k1, k2): the chain of states and, one row per update, how far back its gradient reaches."""
    d = truncation_window(length, k1, k2)
    x0, x1, y0, y1 = d.bounds()
    y1 += 0.5
    w = x1 - x0 + 0.2
    fig, ax = new_diagram_figure(WIDTH, WIDTH * (y1 - y0 + 0.2) / w)
    fig.subplots_adjust(0, 0, 1, 1)
    draw(d, ax, limits=(x0, x1, y0, y1))
    ax.text(x0, y1 - 0.05, f"BPTT($k_1{{=}}{k1}$, $k_2{{=}}{k2}$)", ha="left", va="top", fontsize=FONT)
    plan = bptt.truncation_plan(length, k1, k2, loss_steps="all")
    return fig, {
        "length": plan.length,
        "k1": plan.k1,
        "k2": plan.k2,
        "updates": len(plan.updates),
        "reach": [[t, first] for t, first, _ in plan.updates],
        "boundaries": list(plan.boundaries),
    }


@figure()
def elmo_stack_diagram(layers: PositiveInt = 2):
    """ELMo's stack over three words: rows of E, biLSTM layers per direction, the scalar mix of word t."""
    d = elmo_stack(layers)
    x0, x1, y0, y1 = d.bounds()
    w = x1 - x0 + 0.2
    fig, ax = new_diagram_figure(WIDTH, WIDTH * (y1 - y0 + 0.2) / w)
    fig.subplots_adjust(0, 0, 1, 1)
    draw(d, ax, emphasis={f"h{j}_t" for j in range(1, layers + 1)} | {"E_t"})
    return fig, {
        "layers": layers,
        "words": len([n for n in d.nodes if n.startswith("w_")]),
        "mixed": len(d.inputs_of("mix")),
    }


# ------------------------------------------------------------------ remembering by design

#: The LRU's terms, as the block draws them: node id -> the term of
#: :math:`h_t = \lambda \odot h_{t-1} + \gamma \odot B u_t`, :math:`y_t = \mathrm{Re}(C h_t) + D u_t`,
#: :math:`o_t = \mathrm{MLP}(y_t)` it computes.
LRU_TERMS = {
    "u": "u_t",
    "B": "gamma * B u_t",
    "lam": "lambda",
    "decay": "lambda * h_{t-1}",
    "add_h": "h_t",
    "h": "h_t",
    "C": "Re(C h_t)",
    "D": "D u_t",
    "add_y": "y_t",
    "mlp": "o_t",
    "o": "o_t",
}


def lru_block(builder: str = "lru_block") -> Diagram:
    """One linear recurrent unit layer (Orvieto et al. 2023), bottom to top: u_t, the complex input map
    gamma * B, the diagonal recurrence with lambda = exp(-exp(nu) + i theta) feeding h_{t-1} back,
    Re(C h_t) plus the skip D u_t, and the position-wise MLP that gives o_t.

    Each node's ``computes`` is its term in :data:`LRU_TERMS`.
    """
    d = Diagram(builder)
    mid, side, skip = 2.6, 1.2, 4.25  # columns: the main line, the decay's product, the skip D u_t
    d.node("u", r"$u_t$", at=(mid, 0), shape="text", width=0.5, height=0.4, op="input", computes="u")
    d.node("B", r"$\gamma \odot B$", at=(mid, 0.8), width=1.15, computes="B", note="complex", note_at="right")
    d.node("add_h", r"$+$", at=(mid, 1.7), shape="circle", op="add", computes="add_h")
    d.node("h", r"$h_t$", at=(mid, 2.5), width=0.7, computes="h")
    d.node("decay", r"$\times$", at=(side, 1.7), shape="circle", op="mul", computes="decay")
    d.node("lam", r"$\lambda$", at=(side, 0.8), shape="text", width=0.4, height=0.4, op="input", computes="lam")
    d.node(
        "lam_is",
        r"$\lambda = \exp(-\exp(\nu) + i\theta)$",
        at=(side, 0.2),
        shape="text",
        width=2.2,
        height=0.4,
    )
    d.node("C", r"$\mathrm{Re}(C h_t)$", at=(mid, 3.65), width=1.45, computes="C")
    d.node("D", r"$D u_t$", at=(skip, 2.5), width=0.8, computes="D")
    d.node("add_y", r"$+$", at=(mid, 4.5), shape="circle", op="add", computes="add_y")
    d.node("mlp", "MLP", at=(mid, 5.3), width=1.0, computes="mlp", note="per position", note_at="right")
    d.node("o", r"$o_t$", at=(mid, 6.05), shape="text", width=0.5, height=0.4, op="copy", computes="o")
    d.connect("u -> B -> add_h -> h -> C -> add_y -> mlp -> o")
    d.edge("h", "decay", route="hv", style="carry", label=r"$h_{t-1}$", label_side="below", label_at=0.3)
    d.edge("lam", "decay")
    d.edge("decay", "add_h", style="carry")
    d.edge("u", "D", route="hv")
    d.edge("D", "add_y", route="vh")
    d.group("recurrence", ["add_h", "h", "decay"], label="diagonal, per entry", color=PALETTE[0], pad=0.2)
    return d


def scan_tree(steps: int = 8, builder: str = "scan_tree") -> Diagram:
    """The combines of the odd–even scan (:func:`rnnmem.scan.scan_levels`) on ``steps`` steps, one row per level.

    Steps 1..T along the bottom; above them the up-sweep rows (pairs, then pairs of pairs), then the
    down-sweep rows that fill in the steps between. A combine is a dot in the column of the step it
    writes, joined to its two inputs: where the earlier and the later step's results were last written.
    """
    T = check_positive_int("steps", steps)
    if not 2 <= T <= 16:
        raise ValueError(f"steps (T) must be a whole number from 2 to 16 (legible on a phone), got {steps!r}")
    levels = scan.scan_levels(T)
    up = T.bit_length() - 1  # the up-sweep halves the steps: floor(log2 T) levels
    gap, row = 0.6, 0.62
    d = Diagram(builder)
    latest = {}  # step -> the node that holds its latest result
    for t in range(T):  # boxed while the numbers fit in their boxes, bare numbers from 10 steps on
        latest[t] = d.node(
            f"s{t}", f"{t + 1}", at=(t * gap, 0), width=0.5, height=0.4, shape="box" if T < 10 else "text"
        )
    for k, level in enumerate(levels):
        y = row * (k + 1) + (0.25 if k >= up else 0.0)  # a little air between the two sweeps
        colour, style = (None, "forward") if k < up else (PALETTE[3], "highlight")
        written = {}
        for left, right in level:
            dot = f"c{k}_{right}"
            d.node(dot, "", at=(right * gap, y), shape="dot", color=colour)
            d.edge(latest[left], dot, style=style, arrow=False)
            d.edge(latest[right], dot, style=style, arrow=False)
            written[right] = dot
        latest.update(written)
    x_label = (T - 1) * gap + 0.3 + 1.2  # a label 2.4 units wide starts just right of the last step
    top_up = row * up
    d.node("up_label", "up-sweep", at=(x_label, (row + top_up) / 2), shape="text", width=2.4, height=0.4)
    if len(levels) > up:
        top = row * len(levels) + 0.25
        d.node(
            "down_label",
            "down-sweep",
            at=(x_label, (row * (up + 1) + 0.25 + top) / 2),
            shape="text",
            width=2.4,
            height=0.4,
            color=PALETTE[3],
        )
    return d


@figure()
def lru_block_diagram():
    """One LRU layer: u_t through gamma * B into the diagonal recurrence (lambda feeding h_{t-1} back),
    Re(C h_t) plus D u_t, then the position-wise MLP to o_t."""
    d = lru_block()
    x0, x1, y0, y1 = d.bounds()
    w = x1 - x0 + 0.2
    fig, ax = new_diagram_figure(WIDTH, WIDTH * (y1 - y0 + 0.2) / w)
    fig.subplots_adjust(0, 0, 1, 1)
    draw(d, ax)
    return fig, {"nodes": len(d.nodes), "terms": sorted(set(LRU_TERMS.values()))}


@figure()
def scan_tree_diagram(steps: PositiveInt = 8):
    """The odd–even scan's combines on T = ``steps`` steps (2 to 16), read from rnnmem.scan.scan_levels:
    up-sweep rows of pairs, then down-sweep rows filling in the steps between."""
    d = scan_tree(steps)
    x0, x1, y0, y1 = d.bounds()
    w = x1 - x0 + 0.2
    fig, ax = new_diagram_figure(WIDTH, WIDTH * (y1 - y0 + 0.2) / w)
    fig.subplots_adjust(0, 0, 1, 1)
    draw(d, ax)
    T = check_positive_int("steps", steps)
    levels = scan.scan_levels(T)
    up = T.bit_length() - 1
    return fig, {
        "steps": T,
        "levels": len(levels),
        "up": up,
        "down": len(levels) - up,
        "combines": [len(level) for level in levels],
    }

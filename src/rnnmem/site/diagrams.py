"""Diagrams described in code: nodes, edges, groups, drawn with matplotlib.

A diagram is a small description, not a drawing placed by hand::

    d = Diagram("rnn_unrolled")
    d.node("x1", "$x_1$", at=(0, 0), shape="text")
    d.node("h1", "$h_1$", at=(0, 1))
    d.connect("x1 -> h1", label="$W_{ih}$")

* a **node** has an id, a mathtext label, a place on a grid (in grid units,
  the drawing scales them), a shape (``box``, ``circle``, ``dot``, ``text``; a
  box has a ``width`` and ``height``, a circle a ``radius``)
  and, for cells, the operation it computes (``op``) and the name of the
  value it is in ``rnnmem`` (``computes``, e.g. ``"f"`` for the forget gate);
* an **edge** joins two known nodes; ``connect("a -> b -> c")`` writes a chain;
  its ``style`` says what flows (``forward``, ``backward``, ``carry``, ...), its
  ``route`` how it runs (straight, or horizontal then vertical ``"hv"``, or
  ``"vh"``), and it may carry a label;
* a **group** draws a labelled frame around some nodes.

:func:`draw` draws a description whole, or greyed with a few of its nodes and
edges *lit* (one gate and the paths it reads and feeds, say), so that the part
is seen where it sits in the whole.

Naming a node or an edge the diagram does not have fails at once with a
``ValueError`` that names the diagram's builder, the bad name and the known
ones. A cell diagram whose nodes carry ``op`` is also a computation:
:func:`evaluate` runs it with numpy, so a test can hold it to the equations
of :mod:`rnnmem.lstm` and :mod:`rnnmem.gru`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .style import GRID, INK, PALETTE

#: What flows along an edge, and how it is drawn: (colour, line width, line style).
EDGE_STYLES = {
    "forward": (INK, 1.3, "-"),
    "backward": (PALETTE[1], 1.6, (0, (4, 2))),
    "carry": (PALETTE[0], 3.0, "-"),
    "highlight": (PALETTE[3], 2.2, "-"),
    "lit": (PALETTE[3], 3.0, "-"),
    "faded": (GRID, 1.0, "-"),
    "cut": (INK, 1.0, (0, (3, 3))),
}
NODE_SHAPES = ("box", "circle", "dot", "text")
ROUTES = ("straight", "hv", "vh", "arc")
#: Fill behind boxes and circles: light, so the ink reads on it, and inverted with the rest on the dark page.
FILL = "#ffffff"
#: The operations a cell diagram's node can compute (see :func:`evaluate`).
OPS = (
    "input",
    "concat",
    "gate",
    "candidate",
    "input_part",
    "state_part",
    "tanh_with_input",
    "mul",
    "add",
    "one_minus",
    "tanh",
    "copy",
)

_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass
class Node:
    id: str
    label: str
    at: tuple[float, float]
    shape: str = "box"
    width: float = 0.8
    height: float = 0.5
    color: str | None = None
    op: str | None = None
    block: str | None = None
    computes: str | None = None
    value: str | None = None
    note: str | None = None
    note_at: str = "below"
    fontsize: float | None = None
    radius: float = 0.22  # a circle's


@dataclass
class Edge:
    src: str
    dst: str
    label: str | None = None
    style: str = "forward"
    route: str = "straight"
    bend: float = 0.3
    label_at: float = 0.5
    label_side: str = "above"
    arrow: bool = True
    offset: float = 0.0

    @property
    def key(self) -> tuple[str, str]:
        return (self.src, self.dst)


@dataclass
class Group:
    id: str
    members: list[str]
    label: str | None = None
    color: str = PALETTE[0]
    pad: float = 0.25
    label_at: str = "top"


@dataclass
class Diagram:
    """A diagram's description: its nodes, edges and groups, and the builder it belongs to."""

    builder: str
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)
    title: str | None = None

    # ---------------------------------------------------------------- description

    def _fail(self, what: str, name: Any, known: Iterable[Any]) -> ValueError:
        known = sorted(known, key=str)
        listed = ", ".join(map(str, known)) or "(none)"
        return ValueError(
            f"diagram of builder {self.builder!r}: unknown {what} {name!r}; the known {what}s are: {listed}"
        )

    def node(self, id: str, label: str, at: tuple[float, float], shape: str = "box", **kw: Any) -> str:
        """Add a node; returns its id."""
        if not isinstance(id, str) or not _ID.match(id):
            raise ValueError(
                f"diagram of builder {self.builder!r}: a node id must be a name "
                f"(letters, digits, underscores), got {id!r}"
            )
        if id in self.nodes:
            raise ValueError(f"diagram of builder {self.builder!r}: node {id!r} is described twice")
        if shape not in NODE_SHAPES:
            raise ValueError(
                f"diagram of builder {self.builder!r}: node {id!r} has shape {shape!r}; "
                f"the shapes are: {', '.join(NODE_SHAPES)}"
            )
        op = kw.get("op")
        if op is not None and op not in OPS:
            raise ValueError(
                f"diagram of builder {self.builder!r}: node {id!r} has op {op!r}; the ops are: {', '.join(OPS)}"
            )
        self.nodes[id] = Node(id, label, (float(at[0]), float(at[1])), shape, **kw)
        return id

    def get(self, id: str) -> Node:
        """The node of that id; ValueError naming the builder and the known nodes if there is none."""
        try:
            return self.nodes[id]
        except KeyError:
            raise self._fail("node", id, self.nodes) from None

    def edge(self, src: str, dst: str, **kw: Any) -> Edge:
        """Add one edge between two known nodes."""
        self.get(src), self.get(dst)
        style = kw.get("style", "forward")
        if style not in EDGE_STYLES:
            raise ValueError(
                f"diagram of builder {self.builder!r}: edge {src} -> {dst} has style {style!r}; "
                f"the styles are: {', '.join(EDGE_STYLES)}"
            )
        route = kw.get("route", "straight")
        if route not in ROUTES:
            raise ValueError(
                f"diagram of builder {self.builder!r}: edge {src} -> {dst} has route {route!r}; "
                f"the routes are: {', '.join(ROUTES)}"
            )
        if any(e.key == (src, dst) for e in self.edges):
            raise ValueError(f"diagram of builder {self.builder!r}: edge {src} -> {dst} is described twice")
        e = Edge(src, dst, **kw)
        self.edges.append(e)
        return e

    def connect(self, chain: str, **kw: Any) -> list[Edge]:
        """Edges along a chain written ``"a -> b -> c"``; every edge gets the same options."""
        names = [part.strip() for part in chain.split("->")]
        if len(names) < 2 or not all(names):
            raise ValueError(f"diagram of builder {self.builder!r}: a chain is 'a -> b [-> c ...]', got {chain!r}")
        return [self.edge(a, b, **kw) for a, b in zip(names, names[1:])]

    def find_edge(self, src: str, dst: str) -> Edge:
        """The edge from ``src`` to ``dst``; ValueError naming the builder and the known edges if absent."""
        for e in self.edges:
            if e.key == (src, dst):
                return e
        raise self._fail("edge", f"{src} -> {dst}", (f"{a} -> {b}" for a, b in (e.key for e in self.edges)))

    def group(self, id: str, members: Iterable[str], **kw: Any) -> Group:
        """A labelled frame around known nodes."""
        members = list(members)
        for m in members:
            self.get(m)
        if not members:
            raise ValueError(f"diagram of builder {self.builder!r}: group {id!r} has no members")
        g = Group(id, members, **kw)
        self.groups.append(g)
        return g

    def restyle(self, edges: Iterable[tuple[str, str]], style: str) -> None:
        """Give known edges another style (a highlighted path, a faded rest)."""
        if style not in EDGE_STYLES:
            raise ValueError(
                f"diagram of builder {self.builder!r}: unknown edge style {style!r}; "
                f"the styles are: {', '.join(EDGE_STYLES)}"
            )
        for src, dst in edges:
            self.find_edge(src, dst).style = style

    def inputs_of(self, id: str) -> list[str]:
        """The sources of the edges into a node, in the order they were described."""
        self.get(id)
        return [e.src for e in self.edges if e.dst == id]

    def computed(self) -> dict[str, str]:
        """``rnnmem`` value name -> node id, for every node that says what it computes."""
        return {n.computes: n.id for n in self.nodes.values() if n.computes}

    def signature(self, id: str) -> tuple:
        """What a node is: its operation, block, and the nodes it reads (to tell two diagrams apart)."""
        n = self.get(id)
        return (n.op, n.block, tuple(sorted(self.inputs_of(id))))

    def bounds(self, ids: Iterable[str] | None = None) -> tuple[float, float, float, float]:
        """``(xmin, xmax, ymin, ymax)`` of the nodes' extents (all nodes by default)."""
        nodes = [self.get(i) for i in ids] if ids is not None else list(self.nodes.values())
        xs0 = [n.at[0] - _half(n)[0] for n in nodes]
        xs1 = [n.at[0] + _half(n)[0] for n in nodes]
        ys0 = [n.at[1] - _half(n)[1] for n in nodes]
        ys1 = [n.at[1] + _half(n)[1] for n in nodes]
        for g in self.groups:
            if ids is None:
                gx0, gx1, gy0, gy1 = self.bounds(g.members)
                xs0.append(gx0 - g.pad)
                xs1.append(gx1 + g.pad)
                ys0.append(gy0 - g.pad)
                ys1.append(gy1 + g.pad + (0.35 if g.label and g.label_at == "top" else 0))
        return min(xs0), max(xs1), min(ys0), max(ys1)


def _half(n: Node) -> tuple[float, float]:
    if n.shape == "circle":
        return n.radius, n.radius
    if n.shape == "dot":
        return 0.05, 0.05
    return n.width / 2, n.height / 2


# -------------------------------------------------------------------- evaluation


def _sigmoid(a: np.ndarray) -> np.ndarray:
    from rnnmem.memory import sigmoid

    return sigmoid(a)


def evaluate(diagram: Diagram, inputs: dict[str, Any], blocks: dict[str, tuple]) -> dict[str, np.ndarray]:
    """Run a cell diagram as the computation it draws; returns node id -> value.

    ``inputs`` maps the id of every ``op="input"`` node to its value;
    ``blocks`` maps a block name (a gate's letter, as in :mod:`rnnmem.lstm`
    and :mod:`rnnmem.gru`) to its ``(W_i, W_h, b_i, b_h)`` rows. The ops:
    ``concat`` passes its inputs on as ``(x, h)``; ``gate`` is
    :math:`\\sigma(W_i x + b_i + W_h h + b_h)` and ``candidate`` the same
    with tanh, both of a ``concat``; ``input_part`` is :math:`W_i x + b_i`
    and ``state_part`` :math:`W_h v + b_h` of their one input;
    ``tanh_with_input`` is :math:`\\tanh(W_i x + b_i + s)` of a ``concat``
    and one more input ``s``; ``mul``, ``add``, ``one_minus``, ``tanh``,
    ``copy`` are what they say.
    """
    values: dict[str, Any] = {}
    order = list(diagram.nodes)

    def value(id: str) -> Any:
        if id in values:
            return values[id]
        n = diagram.get(id)
        ins = diagram.inputs_of(id)
        if n.op is None:
            raise ValueError(f"diagram of builder {diagram.builder!r}: node {id!r} computes nothing (no op)")
        out: np.ndarray | tuple[np.ndarray, np.ndarray]  # a concat passes its (x, h) on as a pair
        if n.op == "input":
            if id not in inputs:
                raise diagram._fail("input", id, inputs)
            out = np.asarray(inputs[id], dtype=np.float64)
        elif n.op == "concat":
            xs = [i for i in ins if diagram.get(i).block == "x"]
            hs = [i for i in ins if diagram.get(i).block == "h"]
            if len(xs) != 1 or len(hs) != 1:
                raise ValueError(
                    f"diagram of builder {diagram.builder!r}: concat {id!r} needs one input "
                    f"of block 'x' and one of block 'h', got {ins}"
                )
            out = (value(xs[0]), value(hs[0]))
        else:
            args = [value(i) for i in ins]
            out = _apply(diagram, n, args, blocks)
        values[id] = out
        return out

    for id in order:
        if diagram.get(id).op is not None:
            value(id)
    return {k: v for k, v in values.items() if not isinstance(v, tuple)}


def _apply(diagram: Diagram, n: Node, args: list, blocks: dict[str, tuple]) -> np.ndarray:
    def arity(k: int) -> None:
        if len(args) != k:
            raise ValueError(
                f"diagram of builder {diagram.builder!r}: node {n.id!r} ({n.op}) reads {k} input(s), got {len(args)}"
            )

    def block() -> tuple:
        if n.block not in blocks:
            raise diagram._fail("block", n.block, blocks)
        return blocks[n.block]

    if n.op in ("gate", "candidate"):
        arity(1)
        x, h = args[0]
        Wi, Wh, bi, bh = block()
        a = x @ Wi.T + bi + h @ Wh.T + bh
        return _sigmoid(a) if n.op == "gate" else np.tanh(a)
    if n.op == "input_part":
        arity(1)
        Wi, _, bi, _ = block()
        return args[0] @ Wi.T + bi
    if n.op == "state_part":
        arity(1)
        _, Wh, _, bh = block()
        return args[0] @ Wh.T + bh
    if n.op == "tanh_with_input":
        arity(2)
        pair = [a for a in args if isinstance(a, tuple)]
        rest = [a for a in args if not isinstance(a, tuple)]
        if len(pair) != 1:
            raise ValueError(f"diagram of builder {diagram.builder!r}: node {n.id!r} reads one concat")
        Wi, _, bi, _ = block()
        return np.tanh(pair[0][0] @ Wi.T + bi + rest[0])
    if n.op == "mul":
        arity(2)
        return args[0] * args[1]
    if n.op == "add":
        arity(2)
        return args[0] + args[1]
    if n.op == "one_minus":
        arity(1)
        return 1.0 - args[0]
    if n.op == "tanh":
        arity(1)
        return np.tanh(args[0])
    if n.op == "copy":
        arity(1)
        return args[0]
    raise ValueError(f"diagram of builder {diagram.builder!r}: node {n.id!r} has op {n.op!r}")


# -------------------------------------------------------------------- drawing

#: Font size (points) of every label. A diagram WIDTH inches wide, shown 350 px wide on a phone, keeps
#: text of FONT points at FONT * 96/72 * 350 / (96 * WIDTH) px: 11.6 px for 4.8 inches.
FONT = 11.5


def draw(
    diagram: Diagram,
    ax,
    *,
    only: Iterable[str] | None = None,
    limits=None,
    fontsize: float = FONT,
    title: str | None = None,
    emphasis: set | None = None,
    lit: set | None = None,
    plain: set | None = None,
    labels: bool = True,
) -> None:
    """Draw a diagram (or the part of it made of the nodes ``only``) on a matplotlib axes.

    ``emphasis`` outlines some nodes and edges (ids, ``(src, dst)`` keys) in the highlight colour.
    With ``lit``, the diagram is drawn greyed and without its labels, except the nodes and edges
    ``lit`` names, drawn as the carry line is (a thick line, a tinted band) with their labels, and
    those ``plain`` names, drawn as usual: a part seen where it sits in the whole. ``labels=False``
    leaves out every label (a small copy of a diagram drawn in full elsewhere).
    """
    import matplotlib.patheffects as pe
    from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Patch, Rectangle
    from matplotlib.path import Path

    keep = set(diagram.nodes) if only is None else {diagram.get(i).id for i in only}
    emphasis = emphasis or set()
    greyed = lit is not None
    lit = set(lit or ())
    plain = set(plain or ())
    for name in lit | plain:  # an unknown name fails here, not silently unlit
        if isinstance(name, tuple):
            diagram.find_edge(*name)
        else:
            diagram.get(name)
    lit_colour = EDGE_STYLES["lit"][0]

    def shown(name) -> bool:
        return not greyed or name in lit or name in plain

    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_xticks([])  # no hidden tick labels for the SVG's smallest text (data-text-pt) to count
    ax.set_yticks([])
    halo = [pe.withStroke(linewidth=4.5, foreground=FILL)]
    for g in diagram.groups:
        members = [m for m in g.members if m in keep]
        if not members:
            continue
        x0, x1, y0, y1 = diagram.bounds(members)
        top = 0.35 if g.label and g.label_at == "top" and not greyed else 0.0
        colour = GRID if greyed else g.color
        rect = FancyBboxPatch(
            (x0 - g.pad, y0 - g.pad),
            x1 - x0 + 2 * g.pad,
            y1 - y0 + 2 * g.pad + top,
            boxstyle="round,pad=0,rounding_size=0.12",
            linewidth=1.0,
            edgecolor=colour,
            facecolor=colour,
            alpha=0.12,
            zorder=0,
        )
        ax.add_patch(rect)
        ax.add_patch(
            FancyBboxPatch(
                (x0 - g.pad, y0 - g.pad),
                x1 - x0 + 2 * g.pad,
                y1 - y0 + 2 * g.pad + top,
                boxstyle="round,pad=0,rounding_size=0.12",
                linewidth=1.0,
                edgecolor=colour,
                facecolor="none",
                zorder=0.5,
            )
        )
        if g.label and labels and not greyed:
            if g.label_at == "top":
                ax.text(
                    x0 - g.pad + 0.1,
                    y1 + g.pad + top - 0.08,
                    g.label,
                    ha="left",
                    va="top",
                    fontsize=fontsize,
                    color=INK,
                    zorder=1,
                )
            else:
                ax.text(
                    x1 + g.pad + 0.1,
                    (y0 + y1) / 2,
                    g.label,
                    ha="left",
                    va="center",
                    fontsize=fontsize,
                    color=INK,
                    zorder=1,
                )
    for n in diagram.nodes.values():
        if n.id not in keep:
            continue
        x, y = n.at
        hw, hh = _half(n)
        colour = n.color or INK
        lw = 2.2 if n.id in emphasis or n.id in lit else 1.1
        edge = PALETTE[3] if n.id in emphasis else lit_colour if n.id in lit else colour
        if not shown(n.id):
            colour = edge = GRID if n.color != "none" else "none"
        if n.id in lit and n.shape in ("box", "circle"):  # the carry line's tinted band, around the node
            pad = 0.1
            ax.add_patch(
                FancyBboxPatch(
                    (x - hw - pad, y - hh - pad),
                    2 * (hw + pad),
                    2 * (hh + pad),
                    boxstyle=f"round,pad=0,rounding_size={min(hw, hh) + pad}",
                    linewidth=0,
                    facecolor=lit_colour,
                    alpha=0.18,
                    zorder=0,
                )
            )
        p: Patch
        if n.shape == "box":
            p = FancyBboxPatch(
                (x - hw, y - hh),
                2 * hw,
                2 * hh,
                boxstyle="round,pad=0,rounding_size=0.1",
                linewidth=lw,
                edgecolor=edge,
                facecolor=FILL,
                zorder=3,
            )
        elif n.shape == "circle":
            p = Circle((x, y), hw, linewidth=lw, edgecolor=edge, facecolor=FILL, zorder=3)
        elif n.shape == "dot":
            p = Circle((x, y), hw, linewidth=0, facecolor=colour, zorder=3)
        else:
            p = Rectangle((x - hw, y - hh), 2 * hw, 2 * hh, linewidth=0, facecolor="none", zorder=3)
        ax.add_patch(p)
        if not shown(n.id) or not labels:
            continue
        if n.shape != "dot" and n.label:
            ax.text(
                x,
                y,
                n.label,
                ha="center",
                va="center",
                fontsize=n.fontsize or fontsize,
                color=colour if n.shape == "text" else INK,
                zorder=4,
            )
        if n.note:
            dx, dy, ha, va = {
                "below": (0, -hh - 0.06, "center", "top"),
                "above": (0, hh + 0.06, "center", "bottom"),
                "right": (hw + 0.08, 0, "left", "center"),
                "left": (-hw - 0.08, 0, "right", "center"),
            }[n.note_at]
            ax.text(x + dx, y + dy, n.note, ha=ha, va=va, fontsize=fontsize, color=colour, zorder=4)
    for e in diagram.edges:
        if e.src not in keep or e.dst not in keep:
            continue
        colour, lw, ls = EDGE_STYLES[e.style]
        if (e.src, e.dst) in emphasis:
            colour, lw, ls = EDGE_STYLES["highlight"]
        if greyed:
            colour, lw, ls = EDGE_STYLES["lit" if e.key in lit else "forward" if e.key in plain else "faded"]
        a, b = diagram.get(e.src), diagram.get(e.dst)
        pa, pb = (a.at[0], a.at[1] + e.offset), (b.at[0], b.at[1] + e.offset)
        points = _trim(_route(pa, pb, e), a, b)
        arrow = FancyArrowPatch(
            path=Path(points),
            arrowstyle="-|>,head_length=5,head_width=2.6" if e.arrow else "-",
            mutation_scale=1,
            color=colour,
            linewidth=lw,
            linestyle=ls,
            zorder=2.2 if lw >= EDGE_STYLES["carry"][1] else 2,  # a thick line runs over the thin ones leaving it
            capstyle="butt",
            joinstyle="miter",
        )
        arrow.set_path_effects([pe.Stroke(linewidth=lw + 3.5, foreground=FILL), pe.Normal()])
        ax.add_patch(arrow)
        if e.label and labels and shown(e.key):
            lx, ly = _label_point(pa, pb, e)
            off = {
                "above": (0, 0.1, "center", "bottom"),
                "below": (0, -0.1, "center", "top"),
                "right": (0.1, 0, "left", "center"),
                "left": (-0.1, 0, "right", "center"),
            }[e.label_side]
            ax.text(
                lx + off[0],
                ly + off[1],
                e.label,
                ha=off[2],
                va=off[3],
                fontsize=fontsize,
                color=colour if e.style != "faded" else GRID,
                zorder=5,
                path_effects=halo,
            )
    if limits is None:
        limits = diagram.bounds(keep if only is not None else None)
    x0, x1, y0, y1 = limits
    ax.set_xlim(x0 - 0.1, x1 + 0.1)
    ax.set_ylim(y0 - 0.1, y1 + 0.1)
    if title:
        ax.set_title(title, fontsize=fontsize, color=INK, loc="left", pad=4)


def _route(p: tuple[float, float], q: tuple[float, float], e: Edge) -> np.ndarray:
    """The edge's line from centre to centre, as a dense polyline (so it can be trimmed at the nodes)."""
    if e.route == "hv":
        corners = [p, (q[0], p[1]), q]
    elif e.route == "vh":
        corners = [p, (p[0], q[1]), q]
    elif e.route == "arc":  # a quadratic Bezier bent by e.bend to the right of p -> q (above, going left)
        mid = ((p[0] + q[0]) / 2 + e.bend * (q[1] - p[1]), (p[1] + q[1]) / 2 - e.bend * (q[0] - p[0]))
        t = np.linspace(0.0, 1.0, 121)[:, None]
        return (1 - t) ** 2 * np.array(p) + 2 * (1 - t) * t * np.array(mid) + t**2 * np.array(q)
    else:
        corners = [p, q]
    pieces = [np.linspace(a, b, 60, endpoint=False) for a, b in zip(corners, corners[1:])]
    return np.vstack(pieces + [np.array([corners[-1]])])


def _inside(n: Node, pts: np.ndarray, margin: float = 0.03) -> np.ndarray:
    hw, hh = _half(n)
    dx, dy = np.abs(pts[:, 0] - n.at[0]), np.abs(pts[:, 1] - n.at[1])
    if n.shape in ("circle", "dot"):
        return np.hypot(dx, dy) <= hw + margin
    return (dx <= hw + margin) & (dy <= hh + margin)


def _trim(points: np.ndarray, a: Node, b: Node) -> np.ndarray:
    """The polyline without the parts inside its two end nodes (it starts and ends at their borders)."""
    out_a = np.flatnonzero(~_inside(a, points))
    out_b = np.flatnonzero(~_inside(b, points))
    if not out_a.size or not out_b.size or out_a[0] > out_b[-1]:
        raise ValueError(f"the nodes {a.id!r} and {b.id!r} overlap: no line is left to draw between them")
    keep = points[out_a[0] : out_b[-1] + 1]
    # Remove the collinear samples: the same line, fewer points in the SVG.
    if len(keep) > 2:
        d1 = keep[1:-1] - keep[:-2]
        d2 = keep[2:] - keep[1:-1]
        bend = np.abs(d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]) > 1e-12
        keep = np.vstack([keep[:1], keep[1:-1][bend], keep[-1:]])
    return keep


def _label_point(p: tuple[float, float], q: tuple[float, float], e: Edge) -> tuple[float, float]:
    t = e.label_at
    if e.route == "hv":  # along the horizontal leg first, then the vertical one
        return (p[0] + (q[0] - p[0]) * min(1.0, 2 * t), p[1] + (q[1] - p[1]) * max(0.0, 2 * t - 1))
    if e.route == "vh":
        return (p[0] + (q[0] - p[0]) * max(0.0, 2 * t - 1), p[1] + (q[1] - p[1]) * min(1.0, 2 * t))
    if e.route == "arc":
        mx, my = (p[0] + q[0]) / 2, (p[1] + q[1]) / 2
        dx, dy = q[0] - p[0], q[1] - p[1]
        return (mx + e.bend * dy / 2, my - e.bend * dx / 2)
    return (p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t)


def smallest_text_px(fig, phone_width_px: float = 350.0) -> float:
    """The smallest text of a figure in CSS pixels once the figure is scaled to ``phone_width_px``."""
    width_px = fig.get_figwidth() * 96.0
    sizes = [t.get_fontsize() for t in fig.findobj(lambda a: hasattr(a, "get_text") and a.get_text())]
    return min(sizes) * (96.0 / 72.0) * phone_width_px / width_px


def smallest_glyph_pt(fig) -> float:
    """The size in points of the smallest glyph of a figure's visible texts: a mathtext subscript or
    superscript (drawn at 0.7 of its text's size, 0.49 for a script's script) counts at its own size,
    where :func:`rnnmem.site.style.smallest_text` counts the size of the text it stands in."""
    from matplotlib import cbook
    from matplotlib.mathtext import MathTextParser
    from matplotlib.text import Text

    parser = MathTextParser("path")
    sizes: list[float] = []
    for t in fig.findobj(Text):
        if not (t.get_visible() and t.get_text().strip() and t.get_figure() is not None):
            continue
        for line in t.get_text().split("\n"):
            if cbook.is_math_text(line):
                glyphs = parser.parse(line, 72, t.get_fontproperties()).glyphs
                sizes.extend(float(g[1]) for g in glyphs)
            elif line.strip():
                sizes.append(float(t.get_fontsize()))
    return min(sizes) if sizes else 0.0


def new_diagram_figure(width: float, height: float, ncols: int = 1, nrows: int = 1, **kw: Any):
    """A figure for diagrams under the book's style: no constrained layout, panels placed by their widths.

    It is labelled :data:`rnnmem.site.style.DIAGRAM`, so its desktop rendition is the
    same drawing scaled up around text of the same size (:func:`rnnmem.site.style.wide_size`).
    """
    import matplotlib.pyplot as plt

    from .style import DIAGRAM, offscreen, style

    offscreen()
    with style():
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), **kw)
    fig.set_label(DIAGRAM)
    return fig, axes


__all__ = [
    "Diagram",
    "Node",
    "Edge",
    "Group",
    "EDGE_STYLES",
    "NODE_SHAPES",
    "ROUTES",
    "OPS",
    "evaluate",
    "draw",
    "smallest_text_px",
    "smallest_glyph_pt",
    "new_diagram_figure",
    "FONT",
]

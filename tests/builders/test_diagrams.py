"""Diagrams described in code: bad descriptions fail by name, the cells compute rnnmem's equations,
each gate is lit where it sits in the cell, the unrolled LSTM's gradient goes back the ways the chapter
says, the windows are rnnmem's, renders are byte-identical and legible on a phone."""

from __future__ import annotations

import re

import numpy as np
import pytest
from matplotlib.colors import to_rgba
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch
from one_directive import OneDirective

from rnnmem import bilm, bptt, gru, lstm, scan
from rnnmem.init import pytorch_weights
from rnnmem.site.builders import diagrams as B
from rnnmem.site.diagrams import (
    EDGE_STYLES,
    Diagram,
    draw,
    evaluate,
    new_diagram_figure,
    smallest_glyph_pt,
    smallest_text_px,
)
from rnnmem.site.directives import DirectiveError
from rnnmem.site.render import Renderer
from rnnmem.site.style import to_svg


def small() -> Diagram:
    d = Diagram("demo_builder")
    d.node("a", "$a$", at=(0, 0))
    d.node("b", "$b$", at=(1, 0))
    d.connect("a -> b")
    return d


# ------------------------------------------------------------------ bad descriptions


@pytest.mark.parametrize(
    "action, expected",
    [
        (lambda d: d.edge("a", "c"), "diagram of builder 'demo_builder': unknown node 'c'; the known nodes are: a, b"),
        (lambda d: d.connect("b -> nowhere"), "unknown node 'nowhere'; the known nodes are: a, b"),
        (lambda d: d.group("g", ["a", "zz"]), "unknown node 'zz'"),
        (lambda d: d.find_edge("b", "a"), "unknown edge 'b -> a'; the known edges are: a -> b"),
        (lambda d: d.restyle([("a", "a")], "carry"), "unknown edge 'a -> a'; the known edges are: a -> b"),
        (lambda d: d.restyle([("a", "b")], "neon"), "unknown edge style 'neon'"),
        (lambda d: d.node("a", "again", at=(2, 0)), "node 'a' is described twice"),
        (lambda d: d.node("c-1", "", at=(2, 0)), "a node id must be a name"),
        (lambda d: d.node("c", "", at=(2, 0), shape="star"), "has shape 'star'; the shapes are: box, circle"),
        (lambda d: d.node("c", "", at=(2, 0), op="divide"), "has op 'divide'; the ops are: input"),
        (lambda d: d.edge("a", "b"), "edge a -> b is described twice"),
        (lambda d: d.edge("b", "a", style="dotted"), "edge b -> a has style 'dotted'; the styles are: forward"),
        (lambda d: d.edge("b", "a", route="zigzag"), "edge b -> a has route 'zigzag'; the routes are: straight"),
        (lambda d: d.connect("a"), "a chain is 'a -> b [-> c ...]', got 'a'"),
        (lambda d: d.connect("a -> -> b"), "a chain is 'a -> b [-> c ...]'"),
    ],
)
def test_a_bad_description_fails_naming_the_builder_and_the_known_names(action, expected):
    with pytest.raises(ValueError) as info:
        action(small())
    assert expected in str(info.value)
    assert "demo_builder" in str(info.value)


def test_a_real_builders_description_names_that_builder():
    d = B.lstm_cell()
    with pytest.raises(
        ValueError,
        match=r"builder 'lstm_cell': unknown node 'forget'; the known nodes are: .*"
        r"\bf\b.*mul_f",
    ):
        d.edge("forget", "mul_f")
    with pytest.raises(ValueError, match="builder 'lstm_cell': unknown edge 'c_prev -> c'"):
        d.find_edge("c_prev", "c")


one = OneDirective("docs/chapters/gates.md")


@pytest.mark.parametrize(
    "comment, expected",
    [
        ('<!-- figure: rnn_unrolled direction="sideways" caption="c" -->', "direction must be one of"),
        ('<!-- figure: lstm_cell_diagram gates=["f", "x"] caption="c" -->', "gates[1] must be one of"),
        (
            '<!-- figure: gru_conventions_diagram left=["z_keeps"] caption="c" -->',
            "left must be a pair (update, reset)",
        ),
        ('<!-- figure: gru_conventions_diagram right=["z_keeps", "middle"] caption="c" -->', "right[1] must be one of"),
        ('<!-- figure: truncated_bptt_window k1=0 caption="c" -->', "k1 must be a whole number >= 1"),
        ('<!-- figure: truncated_bptt_window length=2.5 caption="c" -->', "length must be a whole number >= 1"),
        ('<!-- figure: elmo_stack_diagram layers=0 caption="c" -->', "layers must be a whole number >= 1"),
        ('<!-- figure: lstm_chain_diagram steps=0 caption="c" -->', "steps must be a whole number >= 1"),
        ('<!-- figure: lstm_chain_diagram steps=4 caption="c" -->', "steps must be a whole number from 1 to 3"),
        ('<!-- figure: lstm_chain_diagram steps="3" caption="c" -->', "steps must be a whole number >= 1"),
    ],
)
def test_a_bad_directive_argument_is_named_with_page_and_line(tmp_path, comment, expected):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(comment))
    assert expected in str(info.value)
    assert "docs/chapters/gates.md:1" in str(info.value)


# ------------------------------------------------------------------ the cells are rnnmem's equations


def _blocks(W_ih, W_hh, b_ih, b_hh, names: str) -> dict:
    H = W_hh.shape[1]
    return {
        k: (W_ih[j * H : (j + 1) * H], W_hh[j * H : (j + 1) * H], b_ih[j * H : (j + 1) * H], b_hh[j * H : (j + 1) * H])
        for j, k in enumerate(names)
    }


def test_the_lstm_diagram_draws_every_value_lstm_step_computes_and_nothing_else():
    d = B.lstm_cell()
    assert set(d.computed()) == set(lstm.LSTMStep._fields)


def test_the_lstm_diagram_run_as_a_computation_is_lstm_step():
    rng = np.random.default_rng(0)
    D, H = 3, 4
    W = pytorch_weights(D, H, gates=4, seed=rng)
    x, h, c = rng.standard_normal((2, D)), rng.standard_normal((2, H)), rng.standard_normal((2, H))
    want = lstm.step(x, h, c, W["W_ih"], W["W_hh"], W["b_ih"], W["b_hh"])
    d = B.lstm_cell()
    got = evaluate(d, {"x": x, "h_prev": h, "c_prev": c}, _blocks(W["W_ih"], W["W_hh"], W["b_ih"], W["b_hh"], "ifgo"))
    for name, node in d.computed().items():
        np.testing.assert_allclose(got[node], getattr(want, name), rtol=1e-12, atol=1e-12, err_msg=name)


def test_a_gate_wired_to_the_wrong_product_is_caught():
    """The control: the same check fails on a cell whose input and forget gates are swapped."""
    rng = np.random.default_rng(1)
    W = pytorch_weights(2, 3, gates=4, seed=rng)
    x, h, c = rng.standard_normal(2), rng.standard_normal(3), rng.standard_normal(3)
    want = lstm.step(x, h, c, W["W_ih"], W["W_hh"], W["b_ih"], W["b_hh"])
    d = B.lstm_cell()
    for e in d.edges:
        e.src, e.dst = {"f": "i", "i": "f"}.get(e.src, e.src), e.dst
    got = evaluate(d, {"x": x, "h_prev": h, "c_prev": c}, _blocks(W["W_ih"], W["W_hh"], W["b_ih"], W["b_hh"], "ifgo"))
    assert not np.allclose(got[d.computed()["c"]], want.c)


@pytest.mark.parametrize("update", gru.UPDATE_CONVENTIONS)
@pytest.mark.parametrize("reset", gru.RESET_CONVENTIONS)
def test_each_gru_diagram_run_as_a_computation_is_gru_step_in_its_conventions(update, reset):
    rng = np.random.default_rng(2)
    D, H = 3, 4
    W = pytorch_weights(D, H, gates=3, seed=rng)
    x, h = rng.standard_normal((2, D)), rng.standard_normal((2, H))
    args = (W["W_ih"], W["W_hh"], W["b_ih"], W["b_hh"])
    d = B.gru_cell(update, reset)
    assert set(d.computed()) == set(gru.GRUStep._fields)
    got = evaluate(d, {"x": x, "h_prev": h}, _blocks(*args, "rzn"))
    want = gru.step(x, h, *args, update=update, reset=reset)
    for name, node in d.computed().items():
        np.testing.assert_allclose(got[node], getattr(want, name), rtol=1e-12, atol=1e-12, err_msg=name)
    other = gru.step(x, h, *args, update=update, reset="after" if reset == "before" else "before")
    assert not np.allclose(got["h"], other.h)  # the check tells the two placements apart


def test_the_two_gru_panels_differ_exactly_where_the_conventions_do():
    nodes, _ = B.differences(B.gru_cell("z_keeps", "before"), B.gru_cell("z_keeps", "after"))
    assert nodes == {"r_mul", "W_hn", "n"}
    nodes, edges = B.differences(B.gru_cell("z_keeps", "after"), B.gru_cell("z_writes", "after"))
    assert nodes == {"mul_keep", "mul_write", "one_minus"}
    assert ("z", "mul_keep") in edges and ("z", "mul_write") in edges
    assert B.differences(B.gru_cell(), B.gru_cell()) == (set(), set())


def test_each_gate_lights_what_it_reads_the_product_it_feeds_and_the_way_on_to_its_value():
    d = B.lstm_cell()
    partners = {"f": "c_prev", "i": "g", "g": "i", "o": "tanh_c"}
    results = {"f": "c", "i": "c", "g": "c", "o": "h"}
    for gate in B.LSTM_GATES:
        lit, partner = B.gate_paths(d, gate)
        nodes = {n for n in lit if isinstance(n, str)}
        assert {"h_prev", "x", "bus", gate, results[gate]} <= nodes
        assert not nodes & (set(B.LSTM_GATES) - {gate}), f"{gate}: another gate is lit"
        (product,) = [m for m in nodes if d.get(m).op == "mul"]
        assert set(d.inputs_of(product)) == {gate, partners[gate]}
        assert partner == {partners[gate], (partners[gate], product)}
        # the lit edges form one path from the inputs through the gate to the value it makes
        edges = {e for e in lit if isinstance(e, tuple)}
        assert ("bus", gate) in edges and (gate, product) in edges
        assert all(src in nodes and dst in nodes for src, dst in edges)
        ends = [n for n in nodes if not any(src == n for src, _ in edges)]
        assert ends == [results[gate]]


def _lit_boxes(ax) -> list[tuple[float, float]]:
    """Centres of the boxes an axes draws outlined in the lit colour."""
    colour = to_rgba(EDGE_STYLES["lit"][0])
    return [
        (p.get_x() + p.get_width() / 2, p.get_y() + p.get_height() / 2)
        for p in ax.patches
        if isinstance(p, FancyBboxPatch) and p.get_facecolor() != colour and p.get_edgecolor() == colour
    ]


@pytest.mark.parametrize("gates", [("f", "i", "g", "o"), ("o", "g"), ("i",)])
def test_each_copy_of_the_cell_lights_its_own_gate_where_it_sits(gates):
    fig, values = B.lstm_cell_diagram(gates=gates)
    d = B.lstm_cell()
    main, *copies = fig.axes
    assert len(copies) == values["copies"] == len(gates)
    assert values["gates"] == [B.LSTM_GATES[g] for g in gates]
    assert _lit_boxes(main) == []
    for gate, ax in zip(gates, copies):
        assert ax.get_xlim() == main.get_xlim() and ax.get_ylim() == main.get_ylim()  # a copy of the whole cell
        assert np.allclose(_lit_boxes(ax), [d.get(gate).at]), gate
        assert len(ax.patches) >= len(d.nodes)  # every node is drawn, greyed or lit
        assert not [t for t in ax.texts if t.get_text().strip()]  # the copy carries no labels
    titles = [t.get_text() for t in fig.texts]
    assert titles == [f"{B.LSTM_GATES[g]}, ${g}_t$" for g in gates]


def test_a_lit_name_the_diagram_lacks_fails():
    import matplotlib.pyplot as plt

    fig, ax = new_diagram_figure(1.0, 1.0)
    with pytest.raises(ValueError, match="unknown node 'zz'"):
        draw(small(), ax, lit={"zz"})
    with pytest.raises(ValueError, match="unknown edge 'b -> a'"):
        draw(small(), ax, lit=set(), plain={("b", "a")})
    plt.close(fig)


# ------------------------------------------------------------------ the LSTM unrolled, and its gradient


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_the_carry_line_runs_straight_through_one_product_and_one_sum_per_step(steps):
    d = B.lstm_chain(steps)
    carry = [e for e in d.edges if e.style == "carry"]
    path = [carry[0].src] + [e.dst for e in carry]
    assert [e.src for e in carry[1:]] == path[1:-1]  # one line, in order
    assert path == ["c_in"] + [f"{op}{k}" for k in range(steps) for op in ("mul", "add")] + ["c_out"]
    assert len({d.get(n).at[1] for n in path}) == 1  # straight
    for k in range(steps):
        # the product's other factor is the forget gate, the sum's the written share: nothing else
        assert [d.find_edge(src, f"mul{k}").label for src in d.inputs_of(f"mul{k}") if src != path[2 * k]] == ["$f$"]
        assert [d.find_edge(src, f"add{k}").label for src in d.inputs_of(f"add{k}") if src != f"mul{k}"] == [r"$i\,g$"]
    hidden = ["h_in"] + [f"gates{k}" for k in range(steps)] + ["h_out"]
    assert all(d.find_edge(a, b).style == "forward" for a, b in zip(hidden, hidden[1:]))
    assert max(d.get(n).at[1] for n in hidden) < d.get("c_in").at[1]  # below the carry line


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_the_gradient_goes_back_one_step_at_a_time_along_both_paths(steps):
    d = B.lstm_chain(steps)
    names = ["t-1", "t", "t+1"][:steps]
    carry_y, hidden_y = d.get("c_in").at[1], d.get("h_in").at[1]
    for path, y_of in (("c", lambda y: y > carry_y), ("h", lambda y: y < hidden_y)):
        arrows = [e for e in d.edges if e.style == "backward" and e.src.startswith(f"back_{path}")]
        assert len(arrows) == steps
        for k, e in enumerate(arrows):
            a, b = d.get(e.src).at, d.get(e.dst).at
            assert a[0] > b[0] and a[1] == b[1] and y_of(a[1])  # right to left, above or below its path
            # each spans its own step: from beyond the step's last node back to before its first
            step = [n for n in d.nodes.values() if re.fullmatch(rf"(mul|add|gates){k}", n.id)]
            assert b[0] < min(n.at[0] for n in step) and a[0] > max(n.at[0] for n in step)
        labels = [e.label for e in arrows]
        assert labels == ([f"$\\times f_{{{s}}}$" for s in names] if path == "c" else ["gates, $W$"] * steps)
    fig, values = B.lstm_chain_diagram(steps=steps)
    assert values == {
        "steps": steps,
        "products": steps,
        "sums": steps,
        "back_carry": steps,
        "back_hidden": steps,
    }
    (ax,) = fig.axes
    colour = to_rgba(EDGE_STYLES["backward"][0])
    dashed = [p for p in ax.patches if isinstance(p, FancyArrowPatch) and p.get_edgecolor() == colour]
    assert len(dashed) == 2 * steps and all(p.get_linestyle() != "-" for p in dashed)
    circles = [p for p in ax.patches if isinstance(p, Circle) and p.get_radius() > 0.1]
    assert len(circles) == 2 * steps  # one product and one sum per step


# ------------------------------------------------------------------ windows and stacks are rnnmem's


@pytest.mark.parametrize("length, k1, k2", [(8, 2, 4), (8, 4, 4), (12, 2, 6), (5, 3, 2)])
def test_the_truncation_windows_are_truncation_plans(length, k1, k2):
    plan = bptt.truncation_plan(length, k1, k2, loss_steps="all")
    d = B.truncation_window(length, k1, k2)
    gap = d.get("h2").at[0] - d.get("h1").at[0]
    reach = []
    for m in range(len(plan.updates)):
        e = d.find_edge(f"end{m}", f"start{m}")
        assert e.style == "backward"
        reach.append((round(d.get(e.src).at[0] / gap), round(d.get(e.dst).at[0] / gap)))
    assert reach == [(t, first) for t, first, _ in plan.updates]
    cuts = sorted(int(n[len("cut_top") :]) for n in d.nodes if n.startswith("cut_top"))
    assert tuple(cuts) == plan.boundaries
    assert bool(cuts) == (k1 == k2 and length > k1)


@pytest.mark.parametrize("layers", [1, 2, 3])
def test_the_elmo_stack_mixes_as_many_layers_as_the_bilm_gives(layers):
    model = bilm.BiLM(10, dim=2, num_layers=layers, seed=0)
    d = B.elmo_stack(layers)
    mixed = d.inputs_of("mix")
    assert len(mixed) == model.layers([1, 5, 6, 7, 2]).shape[0] == layers + 1
    assert len(model.lstms["forward"]) == len([n for n in d.nodes if n.startswith("h") and n.endswith("_t")])
    assert [d.find_edge(m, "mix").label for m in mixed] == [f"$s_{j}$" for j in range(layers + 1)]


# ------------------------------------------------------------------ the figures

FIGURES = [
    ("rnn_unrolled", {}),
    ("rnn_unrolled", {"direction": "both"}),
    ("lstm_cell_diagram", {}),
    ("lstm_chain_diagram", {}),
    ("lstm_chain_diagram", {"steps": 1}),
    ("gru_conventions_diagram", {}),
    ("gru_conventions_diagram", {"left": ("z_keeps", "before"), "right": ("z_keeps", "after")}),
    ("truncated_bptt_window", {}),
    ("elmo_stack_diagram", {}),
    ("lru_block_diagram", {}),
    ("scan_tree_diagram", {}),
    ("scan_tree_diagram", {"steps": 2}),
    ("scan_tree_diagram", {"steps": 13}),
    ("scan_tree_diagram", {"steps": 16}),
]


@pytest.mark.parametrize("name, args", FIGURES)
def test_a_diagram_renders_to_the_same_bytes_twice_and_reads_on_a_phone(name, args):
    builder = getattr(B, name)
    fig, values = builder(**args)
    assert smallest_text_px(fig) >= 11.0, f"{name}: text of {smallest_text_px(fig):.1f} px on a phone"
    assert fig.get_figwidth() == B.WIDTH
    first = to_svg(fig)
    again, same = builder(**args)
    assert to_svg(again) == first and same == values
    assert b"<path" in first


#: A 390 px phone shows a figure at the content width, 390 px less Material's margins (16 px each side).
PHONE_COLUMN_PX = 358
#: The diagrams drawn in LARGE text: their subscripts, at 0.7 of it, stay readable on a phone as well.
LARGE_TEXT = ["lstm_cell_diagram", "lstm_chain_diagram", "gru_conventions_diagram"]


def _svg_text_px(svg: bytes) -> float:
    """The smallest text of an SVG in CSS pixels at the phone's column, as tests/built_site/test_fit.py
    measures it: the root's data-text-pt (points) times the width shown over the width in points."""
    head = svg[:3000].decode()
    width_match = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', head)
    text_match = re.search(r'<svg[^>]*\sdata-text-pt="([\d.]+)"', head)
    assert width_match and text_match, "the SVG's root records its width in points and its smallest text"
    width, text = float(width_match.group(1)), float(text_match.group(1))
    return text * PHONE_COLUMN_PX / width


@pytest.mark.parametrize("name", LARGE_TEXT)
def test_every_text_of_the_redrawn_diagrams_reads_on_a_phone(name):
    fig, _ = getattr(B, name)()
    glyph_px = smallest_glyph_pt(fig) * PHONE_COLUMN_PX / (fig.get_figwidth() * 72)
    svg = to_svg(fig)
    assert _svg_text_px(svg) == pytest.approx(B.LARGE * PHONE_COLUMN_PX / (B.WIDTH * 72)) and B.LARGE >= 13
    assert glyph_px >= 9.0, f"{name}: a subscript of {glyph_px:.1f} px on a phone"


def test_the_site_measure_sees_the_diagrams_text_not_hidden_tick_labels():
    fig, _ = B.lstm_chain_diagram()
    assert f'data-text-pt="{B.LARGE:g}"'.encode() in to_svg(fig)[:3000]


def test_the_values_a_caption_can_state_are_the_figures():
    _, v = B.truncated_bptt_window(length=8, k1=2, k2=4)
    assert (v["k1"], v["k2"], v["updates"], v["reach"], v["boundaries"]) == (
        2,
        4,
        4,
        [[2, 1], [4, 1], [6, 3], [8, 5]],
        [],
    )
    _, v = B.rnn_unrolled(direction="both")
    assert (v["steps"], v["arcs"]) == (3, 4)
    assert B.rnn_unrolled()[1]["arcs"] == 0
    _, v = B.gru_conventions_diagram(left=("z_keeps", "before"), right=("z_keeps", "after"))
    assert v["differ"] == ["W_hn", "n", "r_mul"]
    _, v = B.elmo_stack_diagram(layers=3)
    assert (v["layers"], v["mixed"]) == (3, 4)


def test_the_gradient_arcs_run_above_the_chain_where_their_labels_are():
    from rnnmem.site.diagrams import _label_point, _route

    d = B.unrolled_rnn(backward=True)
    arcs = [e for e in d.edges if e.style == "backward"]
    assert len(arcs) == 4 and all(e.route == "arc" for e in arcs)
    for e in arcs:
        a, b = d.get(e.src), d.get(e.dst)
        line = _route(a.at, b.at, e)
        top = line[np.argmax(line[:, 1])]
        assert top[1] > a.at[1] + 0.2
        label = _label_point(a.at, b.at, e)
        assert abs(label[0] - top[0]) < 0.05 and abs(label[1] - top[1]) < 0.05


# ------------------------------------------------------------------ remembering by design


@pytest.mark.parametrize("T", range(2, 17))
def test_the_scan_tree_draws_scan_levels_combines(T):
    """Each dot joins the two steps its combine reads, in the row of its level: the combines are scan_levels'."""
    d = B.scan_tree(T)
    gap = d.get("s1").at[0] - d.get("s0").at[0]
    column = {n.id: round(n.at[0] / gap) for n in d.nodes.values() if not n.id.endswith("_label")}
    rows = sorted({n.at[1] for n in d.nodes.values() if n.id.startswith("c")})
    drawn: list[list[tuple[int, int]]] = [[] for _ in rows]
    for n in d.nodes.values():
        if n.id.startswith("c"):
            left, right = sorted(column[i] for i in d.inputs_of(n.id))
            assert column[n.id] == right
            drawn[rows.index(n.at[1])].append((left, right))
    levels = scan.scan_levels(T)
    assert [sorted(level) for level in drawn] == [sorted(level) for level in levels]
    if T in (8, 13):  # what a caption may state: the count per level, from the figure's builder
        _, values = B.scan_tree_diagram(T)
        assert values["combines"] == [len(level) for level in drawn]
        assert values["up"] + values["down"] == len(drawn) and values["up"] == 3
    # Every input is the step's latest result: a dot reads no step that a lower row rewrote after it.
    for n in d.nodes.values():
        for src in d.inputs_of(n.id) if n.id.startswith("c") else ():
            later = [m for m in d.nodes.values() if m.id.startswith("c") and column[m.id] == column[src]]
            assert not [m for m in later if d.get(src).at[1] < m.at[1] < n.at[1]]
    assert ("down_label" in d.nodes) == (T >= 3)


@pytest.mark.parametrize("steps", [0, 1, 17, 100, 2.5, "8", True])
def test_the_scan_tree_refuses_a_bad_T(steps):
    with pytest.raises(ValueError, match="steps"):
        B.scan_tree(steps)
    with pytest.raises(ValueError, match="steps"):
        B.scan_tree_diagram(steps=steps)


def test_the_lru_block_draws_each_term_of_its_equations_once():
    d = B.lru_block()
    assert {n.computes: B.LRU_TERMS[n.id] for n in d.nodes.values() if n.computes} == {
        k: v for k, v in B.LRU_TERMS.items()
    }
    reads = {i: sorted(d.inputs_of(i)) for i in B.LRU_TERMS}
    assert reads == {
        "u": [],
        "B": ["u"],
        "lam": [],
        "decay": ["h", "lam"],  # lambda * h_{t-1}: the state fed back one step later
        "add_h": ["B", "decay"],
        "h": ["add_h"],
        "C": ["h"],
        "D": ["u"],
        "add_y": ["C", "D"],
        "mlp": ["add_y"],
        "o": ["mlp"],
    }
    assert d.find_edge("h", "decay").label == r"$h_{t-1}$"


def _run(d, i, values, h_prev, maps):
    """Node ``i`` of an LRU description at one step; the edge h -> decay reads ``h_prev``, the state before."""
    if i not in values:
        n = d.get(i)
        args = [h_prev if (src, i) == ("h", "decay") else _run(d, src, values, h_prev, maps) for src in d.inputs_of(i)]
        if n.op == "add":
            values[i] = args[0] + args[1]
        elif n.op == "mul":
            values[i] = args[0] * args[1]
        elif n.op == "copy" or i == "h":
            (values[i],) = args
        else:
            (arg,) = args
            values[i] = maps[i](arg)
    return values[i]


def test_the_lru_block_run_step_by_step_is_the_lru():
    """The description run as a computation (the fed-back edge reads the previous step) against the scan."""
    rng = np.random.default_rng(0)
    T, D, N = 7, 3, 4
    nu, theta = rng.normal(-1, 0.5, N), rng.uniform(-np.pi, np.pi, N)
    lam = np.exp(-np.exp(nu) + 1j * theta)
    gamma = np.sqrt(1 - np.abs(lam) ** 2)
    Bm = rng.standard_normal((N, D)) + 1j * rng.standard_normal((N, D))
    Cm = rng.standard_normal((D, N)) + 1j * rng.standard_normal((D, N))
    Dm = rng.standard_normal(D)
    W1, W2 = rng.standard_normal((5, D)), rng.standard_normal((D, 5))
    u = rng.standard_normal((T, D))

    def mlp(y):
        return W2 @ np.maximum(W1 @ y, 0)

    maps = {
        "B": lambda v: gamma * (Bm @ v),
        "C": lambda v: np.real(Cm @ v),
        "D": lambda v: Dm * v,
        "mlp": mlp,
    }
    d = B.lru_block()
    h_prev = np.zeros(N, dtype=complex)
    got = []
    for t in range(T):
        values = {"u": u[t], "lam": lam}
        got.append(_run(d, "o", values, h_prev, maps))
        h_prev = values["h"]
    h = scan.linear_scan(np.broadcast_to(lam, (T, N)), gamma * (u @ Bm.T))
    y = np.real(h @ Cm.T) + Dm * u
    np.testing.assert_allclose(np.array(got), np.array([mlp(v) for v in y]), rtol=1e-12, atol=1e-12)

"""The interactive figures: every state a widget can show is computed by rnnmem, and bad arguments fail by name.

Each widget is rendered from a directive, as a page renders it, and its JSON
(every state of every layer) is read back and checked against rnnmem's own
functions, never against numbers typed into the test. The framework
(:mod:`rnnmem.site.widgets`) is checked on small widgets of its own.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import re
from typing import Any

import numpy as np
import pytest
from bs4 import BeautifulSoup, Tag
from one_directive import OneDirective, select

from rnnmem import bptt, gate_arithmetic, gru, init, jacobians, memory
from rnnmem.site.builders.interactive import BOX
from rnnmem.site.directives import DirectiveError
from rnnmem.site.render import Renderer
from rnnmem.site.widgets import RADIO, Control, Curve, Layer, Shape, State, Widget

SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")

#: The directives of the book's pages, as they stand there.
FORGET_BIAS = "<!-- widget: forget_bias_explorer low=-2 high=7 step=0.25 start=1 lag=100 t_max=1000 -->"
LSTM = "<!-- widget: lstm_step_explorer f=0.9 i=1 g=1 o=1 steps=50 -->"
GRU = '<!-- widget: gru_convention_toggle h_prev=0.8 r=0.25 z=0.9 update="z_keeps" -->'
TANH = "<!-- widget: tanh_distance_explorer low=0.25 high=2 step=0.05 w=1 x=0.5 steps=16 -->"


one = OneDirective("docs/chapters/forget-bias.md")


def widget_data(soup: BeautifulSoup) -> Any:
    """The JSON the widget's script reads: every state of every layer."""
    text = select(soup, "script.rnnmem-w-data").string
    assert text is not None, "the widget's data script is empty"
    return json.loads(text)


def layer(data: Any, *by: str) -> list[dict[str, Any]]:
    (found,) = [x["states"] for x in data["layers"] if tuple(x["by"]) == by]
    return found


def labels(data: Any, key: str) -> list[str]:
    (found,) = [c["labels"] for c in data["controls"] if c["key"] == key]
    return found


def number(text: str) -> float:
    """A number as a widget shows it: "1,234.5", "−0.25", "3.7 × 10⁻¹⁰", "14.7 steps"."""
    text = text.replace("\u2212", "-").replace(",", "")
    m = re.search(r"(-?\d+(?:\.\d+)?)(?: × 10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))?", text)
    assert m, text
    value = float(m.group(1))
    return value * 10 ** int(m.group(2).translate(SUPERSCRIPT)) if m.group(2) else value


def shown_as(value: float, text: str, decimals: int) -> bool:
    """Whether ``text`` is ``value`` to ``decimals`` places, or to two significant digits in powers of ten."""
    if "×" in text:
        return math.isclose(number(text), value, rel_tol=0.06)
    return abs(number(text) - value) <= 0.5 * 10**-decimals + 1e-12


def label_of(button: Tag) -> str:
    """The text of a radio button's label."""
    span = button.find_next("span")
    assert span is not None, f"a radio button without its label: {button}"
    return span.get_text()


def points(text: str) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in (p.split(",") for p in text.split())]


# ---------------------------------------------------------------------------- the forget bias


def test_every_bias_shows_what_rnnmem_computes_for_it(tmp_path):
    soup = one.soup(tmp_path, "<!-- widget: forget_bias_explorer low=-1 high=3 step=0.5 start=1 -->")
    data = widget_data(soup)
    slider = select(soup, 'input[type=range][data-control="bias"]')
    biases = [-1 + 0.5 * i for i in range(9)]
    states = layer(data, "bias")
    assert int(str(slider["max"])) == len(biases) - 1 == len(states) - 1 == len(labels(data, "bias")) - 1
    keras = float(init.initial_forget_biases("keras", 1)[0])
    for b, state, label in zip(biases, states, labels(data, "bias")):
        f = float(memory.sigmoid(b))
        shown, marks = state["r"], state["m"]
        assert shown_as(b, shown["bias"], 2) and shown["gate"] == f"{f:.3f}"
        assert label == f"b_f = {b:.2f}, forget gate {f:.3f}"
        assert shown["efold"] == f"{float(memory.efold_horizon(f)):,.1f} steps"
        assert shown["level"] == f"{float(memory.horizon(f, 0.01)):,.1f} steps"
        assert (marks["efold"] is None) == (memory.efold_horizon(f) < 1)
        assert ("Keras" in shown["setting"]) == math.isclose(b, keras)
        assert ("chrono" in shown["setting"]) == (0 <= b <= init.forget_bias(mean_lifetime=1000.0))
    # The page itself shows the starting state (b_f = 1), readable without the script.
    assert slider["value"] == str(biases.index(1))
    assert slider["aria-valuetext"] == labels(data, "bias")[biases.index(1)]
    outputs = {o["data-key"]: o.string for o in soup.select("output[data-key]")}
    assert {k: outputs[k] for k in states[0]["r"]} == states[biases.index(1)]["r"]


def test_the_share_that_arrives_at_each_lag_is_f_to_the_lag(tmp_path):
    soup = one.soup(
        tmp_path, "<!-- widget: forget_bias_explorer low=-1 high=3 step=1 start=1 lags=[1, 10, 100] lag=10 -->"
    )
    data = widget_data(soup)
    biases, lags = [-1, 0, 1, 2, 3], [1, 10, 100]
    assert labels(data, "lag") == ["1 step", "10 steps", "100 steps"]
    pairs = layer(data, "bias", "lag")
    floor = 1e-6
    for (b, lag), state in zip(itertools.product(biases, lags), pairs):
        share = float(memory.decay(float(memory.sigmoid(b)), lag))
        assert shown_as(share, state["r"]["arrives"], 3), (b, lag, state)
        dot = state["s"]["dot"]
        assert (dot is None) == (share < floor)
        if dot is not None:
            assert float(dot["cx"]) == pytest.approx(BOX[0] + BOX[2] * math.log10(lag) / 4, abs=0.006)
            assert float(dot["cy"]) == pytest.approx(BOX[1] + BOX[3] * math.log10(share) / -6, abs=0.006)
    for lag, state in zip(lags, layer(data, "lag")):
        x = BOX[0] + BOX[2] * math.log10(lag) / 4
        assert float(state["s"]["lag"]["x1"]) == float(state["s"]["lag"]["x2"]) == pytest.approx(x, abs=0.006)
    # Without the script the page shows b_f = 1 at lag 10.
    assert select(soup, 'output[data-key="arrives"]').string == pairs[biases.index(1) * 3 + 1]["r"]["arrives"]


def test_the_curve_is_f_to_the_n_on_logarithmic_axes_cut_at_the_floor(tmp_path):
    soup = one.soup(
        tmp_path, "<!-- widget: forget_bias_explorer low=-2 high=2 step=2 start=0 points=5 max_steps=10000 -->"
    )
    data = widget_data(soup)
    for b, state in zip((-2, 0, 2), layer(data, "bias")):
        f = float(memory.sigmoid(b))
        drawn = points(state["c"]["decay"])
        kept = [n for n in (1, 10, 100, 1000, 10000) if f**n >= 1e-6]
        for (x, y), n in zip(drawn, kept):
            assert x == pytest.approx(BOX[0] + BOX[2] * math.log10(n) / 4, abs=0.006)
            assert y == pytest.approx(BOX[1] + BOX[3] * math.log10(f**n) / -6, abs=0.006)
        if len(kept) < 5:  # the line ends on the floor, where f^n = 10^-6
            x, y = drawn[-1]
            assert len(drawn) == len(kept) + 1 and y == pytest.approx(BOX[1] + BOX[3])
            assert x == pytest.approx(BOX[0] + BOX[2] * math.log10(memory.horizon(f, 1e-6)) / 4, abs=0.006)


def test_the_scale_marks_the_known_starting_biases(tmp_path):
    soup = one.soup(tmp_path, FORGET_BIAS)
    scale = select(soup, ".rnnmem-w-scale")
    assert scale["aria-hidden"] == "true"  # what it shows is said in the note, in words
    low, high = -2.0, 7.0

    def left(tag: Tag) -> float:
        return float(re.search(r"left:([\d.]+)%", str(tag["style"])).group(1)) / 100  # type: ignore[union-attr]

    pins = {t.string: left(t) for t in scale.select(".rnnmem-w-pin")}
    assert pins["Keras"] == pytest.approx((init.initial_forget_biases("keras", 1)[0] - low) / (high - low), abs=1e-4)
    assert pins["b_f = 2"] == pytest.approx((2 - low) / (high - low), abs=1e-4)
    assert pins["PyTorch"] == pytest.approx((0 - low) / (high - low), abs=1e-4)
    bar = select(scale, ".rnnmem-w-bar")
    top = init.forget_bias(mean_lifetime=1000.0)  # chrono: b_f = ln u, u up to T_max - 1
    width = float(re.search(r"width:([\d.]+)%", str(bar["style"])).group(1)) / 100  # type: ignore[union-attr]
    assert left(bar) == pytest.approx(-low / (high - low), abs=1e-4)
    assert left(bar) + width == pytest.approx((top - low) / (high - low), abs=1e-4)
    note = select(soup, ".rnnmem-w-note").get_text()
    assert f"from 0 to {top:.2f}" in note and "1,000" in note
    assert "sets 1;" in note and "0 on average" in note  # no padding zeros where the text says 1


# ---------------------------------------------------------------------------- one LSTM cell


def test_every_gate_setting_draws_the_cell_rnnmem_computes(tmp_path):
    soup = one.soup(tmp_path, LSTM)
    data = widget_data(soup)
    values = {k: [number(v) for v in labels(data, k)] for k in ("f", "i", "g", "o")}
    assert values == {
        "f": [0.0, 0.5, 0.8, 0.9, 0.95, 0.99, 1.0],
        "i": [0.0, 0.5, 1.0],
        "g": [-1.0, 0.5, 1.0],
        "o": [0.0, 0.5, 1.0],
    }
    cells, outputs = layer(data, "f", "i", "g"), layer(data, "f", "i", "g", "o")
    assert len(cells) == 63 and len(outputs) == 189
    k = 0
    for a, (f, i, g) in enumerate(itertools.product(values["f"], values["i"], values["g"])):
        c, run = 0.0, [0.0]
        hs: dict[float, list[float]] = {o: [] for o in values["o"]}
        for _ in range(50):
            for o in values["o"]:
                hs[o].append(gate_arithmetic.lstm_update(c, f=f, i=i, g=g, o=o).h)
            c = gate_arithmetic.lstm_update(c, f=f, i=i, g=g, o=1.0).c
            run.append(c)
        state = cells[a]
        assert shown_as(run[-1], state["r"]["c"], 2), (f, i, g, state["r"])
        ticks = [number(state["s"][f"tick{j}"]["text"]) for j in range(5)]
        top = ticks[0]
        assert ticks == [top, top / 2, 0.0, -top / 2, -top] and top >= max(abs(v) for v in run)
        ys = state["c"]["c"]
        for v, y in zip(run, ys):
            assert y == pytest.approx(BOX[1] + (1 - (v + top) / (2 * top)) * BOX[3], abs=0.051)
        if f < 1:
            point = i * g / (1 - f)
            assert shown_as(point, state["r"]["fixed"], 2)
            assert gate_arithmetic.lstm_update(point, f=f, i=i, g=g, o=1.0).c == pytest.approx(point)
            assert float(state["s"]["fixed"]["y1"]) == pytest.approx(
                BOX[1] + (1 - (point + top) / (2 * top)) * BOX[3], abs=0.051
            )
        else:
            assert state["r"]["fixed"].startswith("none") and state["s"]["fixed"] is None
        for o in values["o"]:
            out = outputs[k]
            k += 1
            assert shown_as(hs[o][-1], out["r"]["h"], 2), (f, i, g, o)
            for v, y in zip(hs[o], out["c"]["h"]):
                assert y == pytest.approx(BOX[1] + (1 - (v + top) / (2 * top)) * BOX[3], abs=0.051)
    assert data["xs"]["c"][0] == BOX[0] and data["xs"]["c"][-1] == BOX[0] + BOX[2] and len(data["xs"]["h"]) == 50


def test_the_cell_widget_starts_where_the_page_says_and_is_light(tmp_path):
    soup = one.soup(tmp_path, LSTM)
    checked = {i["data-control"]: number(label_of(i)) for i in soup.select("input[type=radio][checked]")}
    assert checked == {"f": 0.9, "i": 1.0, "g": 1.0, "o": 1.0}
    # The starting state is in the HTML: c_50 for f = 0.9, i g = 1.
    c = 0.0
    for _ in range(50):
        c = gate_arithmetic.lstm_update(c, f=0.9, i=1.0, g=1.0, o=1.0).c
    assert shown_as(c, select(soup, 'output[data-key="c"]').get_text(), 2)
    html = str(soup).encode()
    assert len(gzip.compress(html)) < 16 * 1024, "the cell widget weighs more than 16 KB gzipped"


# ---------------------------------------------------------------------------- the GRU's conventions


def test_each_convention_shows_the_state_rnnmem_gru_computes(tmp_path):
    soup = one.soup(tmp_path, GRU)
    data = widget_data(soup)
    zs = [number(t) for t in labels(data, "z")]
    assert zs == pytest.approx([k / 20 for k in range(21)])
    conventions = labels(data, "update")
    assert [("keeps" in c, "writes" in c) for c in conventions] == [(True, False), (False, True)]
    pairs = layer(data, "update", "z")
    for (u, update), (k, z) in itertools.product(enumerate(gru.UPDATE_CONVENTIONS), enumerate(zs)):
        state = pairs[u * len(zs) + k]["r"]
        if 0 < z < 1:  # the cell itself, its gates set by their biases (a gate of exactly 0 or 1 has none)
            W_ih, W_hh = np.zeros((3, 1)), np.array([[0.0], [0.0], [1.0]])
            b_ih = np.array([memory.logit(0.25), memory.logit(z), 0.0])
            h = float(gru.step(np.zeros(1), np.array([0.8]), W_ih, W_hh, b_ih, np.zeros(3), update=update).h[0])
        else:
            h = gate_arithmetic.gru_update(0.8, z=z, r=0.25, update=update).h
        assert shown_as(h, state["h"], 4), (update, z, state)
        # The other convention gives the same state at 1 - z.
        other = gru.UPDATE_CONVENTIONS[1 - u]
        assert state["mirror"].startswith(f"z = {1 - z:.2f}")
        assert shown_as(
            gate_arithmetic.gru_update(0.8, z=1 - z, r=0.25, update=other).h, state["mirror"].split()[-1], 4
        )
        assert number(state["mirror"].split()[-1]) == number(state["h"])
    rules = [s["r"]["rule"] for s in layer(data, "update")]
    assert rules[0].startswith("hₜ = z hₜ₋₁") and rules[1].startswith("hₜ = (1 − z) hₜ₋₁")
    # The starting state: z keeps, z = 0.9.
    assert select(soup, "input[type=radio][checked]")["value"] == "0"
    assert shown_as(
        gate_arithmetic.gru_update(0.8, z=0.9, r=0.25).h, select(soup, 'output[data-key="h"]').get_text(), 4
    )


def test_the_two_curves_swap_when_the_convention_does(tmp_path):
    data = widget_data(one.soup(tmp_path, GRU))
    keeps, writes = layer(data, "update")
    assert keeps["c"]["chosen"] == writes["c"]["other"] and keeps["c"]["other"] == writes["c"]["chosen"]
    h = gate_arithmetic.gru_update(0.8, z=np.linspace(0, 1, 101), r=0.25).h
    drawn = points(keeps["c"]["chosen"])
    low, high = float(h.min()), float(h.max())
    pad = 0.15 * (high - low)
    for (x, y), z, v in zip(drawn, np.linspace(0, 1, 101), h):
        assert x == pytest.approx(BOX[0] + BOX[2] * z, abs=0.006)
        assert y == pytest.approx(BOX[1] + (1 - (v - low + pad) / (high - low + 2 * pad)) * BOX[3], abs=0.006)


# ---------------------------------------------------------------------------- distance, with and without tanh


def test_the_multipliers_are_the_products_of_the_tanh_units_jacobians(tmp_path):
    soup = one.soup(tmp_path, TANH)
    data = widget_data(soup)
    ws = [number(t) for t in labels(data, "w")]
    xs = [number(t) for t in labels(data, "x")]
    assert ws[0] == 0.25 and ws[-1] == 2.0 and len(ws) == 36 and 0.0 in xs
    pairs, singles = layer(data, "w", "x"), layer(data, "w")
    for (a, w), (b, x) in itertools.product(enumerate(ws), enumerate(xs)):
        states, J = jacobians.rnn_trajectory(np.full((16, 1), x), [0.0], [[1.0]], [[w]], [0.0], [0.0])
        norms = jacobians.distance_norms(J)
        shown = pairs[a * len(xs) + b]["r"]
        assert shown_as(float(states[-1, 0]), shown["state"], 3)
        assert shown_as(float(bptt.tanh_rate(w * states[-2, 0] + x)), shown["slope"], 3)
        assert shown_as(float(J[-1, 0, 0]), shown["edge"], 3)
        assert shown_as(float(norms[-1]), shown["tanh"], 3), (w, x, shown)
        assert shown_as(w**16, singles[a]["r"]["linear"], 3)
        if x == 0:  # the state stays at 0, every slope is 1: with and without tanh agree
            assert pairs[a * len(xs) + b]["c"]["tanh"] == singles[a]["c"]["linear"]
    # A weight above one loses the gradient once an input saturates the unit.
    above = ws.index(1.5)
    assert number(pairs[above * len(xs) + xs.index(0.5)]["r"]["tanh"]) < 1 < number(singles[above]["r"]["linear"])


# ---------------------------------------------------------------------------- the framework


def small(**changes: Any) -> Widget:
    """A widget of two controls and three layers, as the builders make them."""
    args: dict[str, Any] = dict(
        name="t",
        title="T",
        controls=[Control("a", "A", ("a0", "a1")), Control("b", "B", ("b0", "b1", "b2"), 2, RADIO)],
        layers=[
            Layer(("a",), (State(readouts={"x": "x0"}), State(readouts={"x": "x1"}))),
            Layer(("b",), tuple(State(shapes={"dot": {"cx": str(k)}}) for k in range(3))),
            Layer(
                ("a", "b"),
                tuple(State(curves={"c": [float(j), float(k)]}) for j, k in itertools.product(range(2), range(3))),
            ),
        ],
        readouts=[("x", "X")],
        curves=[Curve("c", "C", xs=(0.0, 1.0))],
        marks=[],
        shapes=[Shape("dot", "circle", "rnnmem-w-dot", {"r": "4"})],
        svg="{curves}{shapes}",
        description="d",
    )
    return Widget(**{**args, **changes})


def test_the_starting_state_is_in_the_html_and_the_controls_wait_for_the_script():
    soup = BeautifulSoup(small().to_html(), "html.parser")
    assert select(soup, 'output[data-key="x"]').string == "x0"
    assert select(soup, "circle[data-shape=dot]")["cx"] == "2"
    assert select(soup, "polyline[data-curve=c]")["points"] == "0,0 1,2"  # a = 0, b = 2
    assert all(i.has_attr("disabled") for i in soup.select("input[data-control]"))
    assert "The controls need JavaScript" in select(soup, "noscript").get_text()
    slider = select(soup, "input[type=range]")
    assert (slider["aria-valuetext"], slider["max"]) == ("a0", "1")
    assert select(soup, "fieldset legend").string == "B"
    assert [label_of(i) for i in soup.select("input[type=radio]")] == ["b0", "b1", "b2"]
    assert select(soup, "input[type=radio][checked]")["value"] == "2"
    assert select(soup, ".rnnmem-w-readouts")["aria-live"] == "polite"
    assert select(soup, 'output[data-key="x"]').get_attribute_list("for") == ["rnnmem-w-t-a"]


def test_a_state_per_combination_in_product_order():
    w = small()
    assert w.state_at({"a": 1, "b": 0}).curves["c"] == [1.0, 0.0]
    data = w.data()
    assert [c["key"] for c in data["controls"]] == ["a", "b"] and data["xs"] == {"c": [0.0, 1.0]}
    assert data["layers"][2]["states"][4] == {"c": {"c": [1.0, 1.0]}}


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"layers": []}, "layers must not be empty"),
        ({"controls": [Control("a", "A", ("a0", "a1")), Control("a", "B", ("b",))]}, "distinct keys"),
        ({"controls": [Control("A!", "A", ("a0",))]}, "a control's key"),
        ({"controls": [Control("a", "A", ("a0",), kind=RADIO)]}, "at least two"),
        ({"controls": [Control("a", "A", ("a0", "a1"), start=5)]}, "start must be 0 to 1"),
        ({"readouts": [("x", "X"), ("y", "Y")]}, "the widget shows"),
        ({"curves": [Curve("c", "C", xs=(0.0, 1.0, 2.0))]}, "3 y coordinates"),
        ({"states": [State(label="s")]}, "states must be empty when controls are given"),
    ],
)
def test_a_widget_that_does_not_add_up_fails_naming_what(changes, message):
    if "controls" in changes and "layers" not in changes and changes["controls"][0].key == "a":
        changes = {**changes, "layers": [Layer(("a",), (State(readouts={"x": "0"}), State(readouts={"x": "1"})))]}
        changes.update(curves=[], shapes=[])
    with pytest.raises(ValueError, match=re.escape(message)):
        small(**changes)


def test_a_layer_of_the_wrong_size_or_a_key_given_twice_fails():
    with pytest.raises(ValueError, match=re.escape("must have 6 states, got 1")):
        small(layers=[*small().layers[:2], Layer(("a", "b"), (State(curves={"c": [0.0, 0.0]}),))])
    twice = Layer(("b",), tuple(State(readouts={"x": "?"}, shapes={"dot": None}) for _ in range(3)))
    with pytest.raises(ValueError, match="readouts 'x' is given by layers 0 and 1"):
        small(layers=[small().layers[0], twice, small().layers[2]])


def test_a_widget_of_one_slider_still_works():
    w = Widget(
        name="one",
        title="One",
        control_label="Pick",
        states=[State(label=f"p{k}", readouts={"v": str(k)}) for k in range(3)],
        start=1,
        readouts=[("v", "V")],
        curves=[],
        marks=[],
        svg="",
        description="d",
    )
    soup = BeautifulSoup(w.to_html(), "html.parser")
    slider = select(soup, "input[type=range]")
    assert (slider["id"], slider["value"], slider["aria-valuetext"]) == ("rnnmem-w-one-slider", "1", "p1")
    assert select(soup, "output[data-key=v]").string == "1"
    assert widget_data(soup)["layers"][0]["states"][2] == {"r": {"v": "2"}}


def test_the_data_cannot_close_its_script():
    w = small(
        layers=[Layer(("a",), (State(readouts={"x": "</script>"}), State(readouts={"x": "x"}))), *small().layers[1:]]
    )
    html = w.to_html()
    assert html.count("</script>") == 1 and "<\\/script>" in html


# ---------------------------------------------------------------------------- every builder


@pytest.mark.parametrize("text", [FORGET_BIAS, LSTM, GRU, TANH], ids=["forget-bias", "lstm", "gru", "tanh"])
def test_two_renders_are_byte_identical_and_the_page_weight_stays_small(tmp_path, text):
    first = Renderer(tmp_path / "a").render(one(text)).content
    assert first == Renderer(tmp_path / "b").render(one(text)).content
    assert len(gzip.compress(first)) < 20 * 1024


@pytest.mark.parametrize(
    "text, named",
    [
        ("forget_bias_explorer lags=[1, 10] lag=5", "lag must be one of"),
        ("forget_bias_explorer lags=[10, 1]", "lags must be increasing"),
        ("forget_bias_explorer lags=[1, 100000]", "lags must be at most max_steps"),
        ("forget_bias_explorer t_max=2", "t_max must be greater than 2"),
        ("forget_bias_explorer decades=40", "decades must be a whole number from 1 to 30"),
        ("lstm_step_explorer f=0.3", "f must be one of"),
        ("lstm_step_explorer g=0.7", "g must be one of"),
        ("lstm_step_explorer forget=[0.5, 1.5]", "forget[1] must be a gate value from 0 to 1"),
        ("lstm_step_explorer candidate=[-2, 1]", "candidate[0] must be a candidate value from -1 to 1"),
        ("lstm_step_explorer input_gate=[1, 0.5] i=1", "input_gate must be increasing"),
        ("lstm_step_explorer steps=1", "steps must be a whole number from 2 to 500"),
        ("gru_convention_toggle z=0.33", "z must be one of"),
        ("gru_convention_toggle positions=2", "positions must be a whole number from 3 to 101"),
        ('gru_convention_toggle update="z_forgets"', "update"),
        ("gru_convention_toggle r=1", "r must be"),
        ("tanh_distance_explorer w=1.01", "w must be one of"),
        ("tanh_distance_explorer x=3", "x must be one of"),
        ("tanh_distance_explorer low=2 high=1", "high must be above low"),
        ("tanh_distance_explorer step=0.3", "step must divide high - low"),
        ("tanh_distance_explorer floor=40", "floor must be a whole number from 1 to 30"),
        ("tanh_distance_explorer steps=1", "steps must be a whole number from 2 to 100"),
    ],
)
def test_a_bad_argument_fails_the_build_naming_it(tmp_path, text, named):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(f"<!-- widget: {text} -->"))
    assert named in str(info.value)

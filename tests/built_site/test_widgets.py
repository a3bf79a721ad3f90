"""The interactive figures in a real browser: driven by the keyboard, each shows what rnnmem computes.

Every value a widget shows was computed at build time; the script only looks
it up. Each test opens a widget's page, moves its controls with the keyboard
only (arrow keys, Home, End, Tab between controls), reads what the page then
shows and the positions the controls announce (a slider's aria-valuetext, the
label of the radio button that is checked), and recomputes the values with
rnnmem, for the arguments the page's directive gives the widget.
"""

from __future__ import annotations

import inspect
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_browser import new_context  # noqa: E402  (same directory: pytest puts it on sys.path)

from rnnmem import gate_arithmetic, gru, init, jacobians, memory
from rnnmem.site.builders import interactive, real_text_lstm
from rnnmem.site.directives import find_directives

pytestmark = pytest.mark.browser

DOCS = Path(__file__).resolve().parents[2] / "docs"
SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
#: Each widget: the chapter it stands in and its builder.
WIDGETS = {
    "forget-bias": ("forget-bias", interactive.forget_bias_explorer),
    "lstm-step": ("gates", interactive.lstm_step_explorer),
    "gru-update": ("gates", interactive.gru_convention_toggle),
    "tanh-distance": ("error-backward", interactive.tanh_distance_explorer),
    "real_text_gradient_explorer": ("real-text", real_text_lstm.real_text_gradient_explorer),
}


def widget_pages(site_dir) -> list[str]:
    return sorted(
        p.relative_to(site_dir).as_posix()
        for p in site_dir.rglob("*.html")
        if 'class="rnnmem-widget"' in p.read_text(encoding="utf-8")
    )


def arguments(chapter: str, builder) -> dict[str, Any]:
    """The builder's arguments as the chapter's directive gives them, defaults filled in."""
    path = DOCS / "chapters" / f"{chapter}.md"
    (directive,) = [
        d for d in find_directives(path.read_text(encoding="utf-8"), str(path)) if d.name == builder.__name__
    ]
    defaults = {k: p.default for k, p in inspect.signature(builder).parameters.items()}
    return {**defaults, **directive.args}


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


class Widget:
    """One widget of a page: what it shows, and the keys that move it."""

    def __init__(self, page, name: str):
        self.page, self.name = page, name
        self.root = page.locator(f'.rnnmem-widget[data-widget="{name}"]')

    def outputs(self) -> dict[str, str]:
        """Each output's text as the script wrote it (textContent). innerText would depend on layout: it is ''
        for an element not yet visible, which a loaded machine once showed right after the widget was ready."""
        return {
            o.get_attribute("data-key"): o.text_content() or "" for o in self.root.locator("output[data-key]").all()
        }

    def spoken(self, key: str) -> str:
        return self.root.locator(f'input[type=range][data-control="{key}"]').get_attribute("aria-valuetext")

    def chosen(self, key: str) -> str:
        return self.root.locator(f'input[type=radio][data-control="{key}"]:checked').evaluate(
            "el => el.nextElementSibling.textContent"
        )

    def focus(self, key: str) -> None:
        self.root.locator(f'input[data-control="{key}"]:not([type=radio]), input[data-control="{key}"]:checked').focus()

    def focused(self) -> str | None:
        return self.page.evaluate("() => document.activeElement && document.activeElement.dataset.control")

    def press(self, key: str, times: int = 1) -> None:
        for _ in range(times):
            self.page.keyboard.press(key)

    def points(self, curve: str) -> str:
        return self.root.locator(f'polyline[data-curve="{curve}"]').get_attribute("points")

    def hidden(self, shape: str) -> bool:
        return self.root.locator(f'[data-shape="{shape}"]').get_attribute("visibility") == "hidden"


def open_widget(browser, site_server, name: str):
    chapter, _ = WIDGETS[name]
    context = new_context(browser)
    page = context.new_page()
    page.goto(site_server + f"chapters/{chapter}/", wait_until="load")
    w = Widget(page, name)
    w.root.scroll_into_view_if_needed()
    page.wait_for_function(
        f"() => document.querySelector('.rnnmem-widget[data-widget=\"{name}\"]')?.dataset.ready === '1'"
    )
    assert w.root.locator("input[data-control]:disabled").count() == 0, "the script left a control disabled"
    w.root.locator("output[data-key]").first.wait_for(state="visible")  # shown, not only in the page
    return context, w


def test_every_widget_stands_in_its_chapter(site_dir):
    pages = widget_pages(site_dir)
    for name, (chapter, _) in WIDGETS.items():
        assert f"chapters/{chapter}/index.html" in pages, (name, pages)
        html = (site_dir / "chapters" / chapter / "index.html").read_text(encoding="utf-8")
        assert f'data-widget="{name}"' in html, name


def test_the_forget_bias_widget_shows_rnnmems_values_wherever_it_is_moved(browser, site_server):
    args = arguments("forget-bias", interactive.forget_bias_explorer)
    keras = float(init.initial_forget_biases("keras", 1)[0])
    chrono = (init.forget_bias(mean_lifetime=2.0), init.forget_bias(mean_lifetime=args["t_max"]))
    context, w = open_widget(browser, site_server, "forget-bias")

    def check() -> tuple[float, int, str]:
        bias = float(re.match(r"b_f = (-?[\d.]+),", w.spoken("bias")).group(1))  # type: ignore[union-attr]
        lag = int(number(w.spoken("lag")))
        f = float(memory.sigmoid(bias))
        shown = w.outputs()
        assert shown_as(bias, shown["bias"], 2) and shown["gate"] == f"{f:.3f}", shown
        assert shown["efold"] == f"{float(memory.efold_horizon(f)):,.1f} steps", shown
        assert shown["level"] == f"{float(memory.horizon(f, args['level'])):,.1f} steps", shown
        share = float(memory.decay(f, lag))
        assert shown_as(share, shown["arrives"], 3) if share > 0 else "under" in shown["arrives"], (lag, shown)
        assert w.hidden("dot") == (share < 10.0 ** -args["decades"]), (bias, lag)
        assert ("Keras" in shown["setting"]) == math.isclose(bias, keras), shown
        assert ("chrono" in shown["setting"]) == (chrono[0] - 1e-9 <= bias <= chrono[1] + 1e-9), shown
        return bias, lag, w.points("decay")

    start_bias, start_lag, curve = check()
    assert math.isclose(start_bias, args["start"]) and start_lag == args["lag"]
    seen = {curve}
    w.focus("bias")
    for key, times in (("ArrowRight", 3), ("ArrowLeft", 5), ("End", 1), ("Home", 1), ("PageUp", 1)):
        w.press(key, times)
        seen.add(check()[2])
    w.press("Home")
    assert check()[0] == args["low"]
    w.press("Tab")
    assert w.focused() == "lag", "Tab does not lead from the bias to the lag"
    for key, times in (("ArrowLeft", 2), ("End", 1), ("Home", 1), ("ArrowRight", 4)):
        w.press(key, times)
        bias, lag, _ = check()
    assert lag == args["lags"][4]
    assert len(seen) >= 4  # the curve is redrawn as the bias moves
    context.close()


def test_the_lstm_cell_widget_shows_rnnmems_cell_for_every_gate_chosen(browser, site_server):
    args = arguments("gates", interactive.lstm_step_explorer)
    steps = args["steps"]
    context, w = open_widget(browser, site_server, "lstm-step")

    def check() -> dict[str, float]:
        gates = {k: number(w.chosen(k)) for k in ("f", "i", "g", "o")}
        c, h = 0.0, 0.0
        for _ in range(steps):
            u = gate_arithmetic.lstm_update(c, **gates)
            c, h = u.c, u.h
        shown = w.outputs()
        assert shown_as(c, shown["c"], 2) and shown_as(h, shown["h"], 2), (gates, shown)
        if gates["f"] < 1:
            assert shown_as(gates["i"] * gates["g"] / (1 - gates["f"]), shown["fixed"], 2), (gates, shown)
        else:
            assert shown["fixed"].startswith("none") and w.hidden("fixed"), shown
        assert len(w.points("c").split()) == steps + 1 and len(w.points("h").split()) == steps
        return gates

    start = check()
    assert start == {k: args[k] for k in ("f", "i", "g", "o")}
    w.focus("f")
    moves = [
        ("ArrowLeft", 1, None),
        ("ArrowRight", 3, None),
        ("ArrowRight", 1, None),  # f = 1 (the last value): no fixed point
        ("Tab", 1, "i"),
        ("ArrowLeft", 1, None),
        ("Tab", 1, "g"),
        ("ArrowLeft", 2, None),
        ("Tab", 1, "o"),
        ("ArrowLeft", 1, None),
        ("Shift+Tab", 3, "f"),
        ("ArrowLeft", 2, None),
    ]
    seen = {tuple(start.values())}
    for key, times, lands in moves:
        w.press(key, times)
        if lands:
            assert w.focused() == lands, (key, lands, w.focused())
        seen.add(tuple(check().values()))
    assert len(seen) >= 8
    assert any(g[0] == 1.0 for g in seen)  # the keys reached f = 1
    context.close()


def test_the_gru_widget_gives_one_cell_in_either_convention(browser, site_server):
    args = arguments("gates", interactive.gru_convention_toggle)
    h_prev, r = args["h_prev"], args["r"]
    context, w = open_widget(browser, site_server, "gru-update")

    def check() -> tuple[str, float]:
        update = "z_keeps" if "keeps" in w.chosen("update") else "z_writes"
        z = number(w.spoken("z"))
        if 0 < z < 1:  # the cell itself, its gates set by their biases
            W_ih, W_hh = np.zeros((3, 1)), np.array([[0.0], [0.0], [1.0]])
            b_ih = np.array([memory.logit(r), memory.logit(z), 0.0])
            h = float(gru.step(np.zeros(1), np.array([h_prev]), W_ih, W_hh, b_ih, np.zeros(3), update=update).h[0])
        else:
            h = gate_arithmetic.gru_update(h_prev, z=z, r=r, update=update).h
        shown = w.outputs()
        assert shown_as(h, shown["h"], 4), (update, z, shown)
        other = "z_writes" if update == "z_keeps" else "z_keeps"
        mirror = gate_arithmetic.gru_update(h_prev, z=1 - z, r=r, update=other).h
        assert shown["mirror"].startswith(f"z = {1 - z:.2f}") and shown_as(mirror, shown["mirror"].split()[-1], 4)
        assert ("1 − z" in shown["rule"].split("+")[0]) == (update == "z_writes"), shown["rule"]
        return update, z

    assert check() == (args["update"], args["z"])
    w.focus("update")
    w.press("ArrowDown")
    assert check()[0] != args["update"]
    w.press("Tab")
    assert w.focused() == "z"
    for key, times in (("ArrowLeft", 4), ("Home", 1), ("End", 1), ("ArrowLeft", 7)):
        w.press(key, times)
        check()
    w.press("Shift+Tab")
    w.press("ArrowUp")
    assert check()[0] == args["update"]
    context.close()


def test_the_distance_widget_shows_the_products_of_the_units_jacobians(browser, site_server):
    args = arguments("error-backward", interactive.tanh_distance_explorer)
    steps = args["steps"]
    context, w = open_widget(browser, site_server, "tanh-distance")

    def check() -> tuple[float, float]:
        wv, x = number(w.spoken("w")), number(w.chosen("x"))
        states, J = jacobians.rnn_trajectory(np.full((steps, 1), x), [0.0], [[1.0]], [[wv]], [0.0], [0.0])
        shown = w.outputs()
        assert shown_as(float(states[-1, 0]), shown["state"], 3), (wv, x, shown)
        assert shown_as(float(J[-1, 0, 0]), shown["edge"], 3), (wv, x, shown)
        assert shown_as(float(jacobians.distance_norms(J)[-1]), shown["tanh"], 3), (wv, x, shown)
        assert shown_as(wv**steps, shown["linear"], 3), (wv, shown)
        if x == 0:  # the state stays at 0 and every slope is 1: the two curves are one
            assert w.points("tanh") == w.points("linear")
        return wv, x

    assert check() == (args["w"], args["x"])
    w.focus("w")
    w.press("ArrowRight", 10)
    check()
    w.press("Tab")
    assert w.focused() == "x"
    for _ in range(len(args["inputs"])):
        w.press("ArrowRight")
        check()
    w.press("Shift+Tab")
    for key in ("Home", "End"):
        w.press(key)
        check()
    context.close()


def test_the_gradient_explorer_moves_to_the_character_pointed_at_and_by_the_keys(browser, site_server):
    context, w = open_widget(browser, site_server, "real_text_gradient_explorer")
    letters = w.root.locator("[data-pick]")
    chars = letters.count()
    assert chars == arguments("real-text", real_text_lstm.real_text_gradient_explorer)["chars"]
    assert w.spoken("position").startswith(f"character {chars} of {chars}")
    last = w.outputs()
    letters.nth(3).hover()
    assert w.spoken("position").startswith(f"character 4 of {chars}")
    fourth = w.outputs()
    assert fourth != last
    letters.nth(0).click()
    assert w.spoken("position").startswith(f"character 1 of {chars}")
    assert w.outputs() not in (last, fourth)
    w.focus("position")
    w.press("ArrowRight")
    assert w.spoken("position").startswith(f"character 2 of {chars}")
    context.close()

"""The interactive figures: every state the slider can show is computed by rnnmem, and bad arguments fail by name."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag

from rnnmem import memory
from rnnmem.site.builders.interactive import BOX
from rnnmem.site.directives import find_directives
from rnnmem.site.render import Renderer


def one(text: str):
    (d,) = find_directives(text, "docs/chapters/forget-bias.md")
    return d


def render(tmp_path, text: str) -> BeautifulSoup:
    item = Renderer(tmp_path).render(one(text))
    assert item.filename.endswith(".html")
    return BeautifulSoup(item.content.decode(), "html.parser")


def select(soup: BeautifulSoup, css: str) -> Tag:
    tag = soup.select_one(css)
    assert tag is not None, f"the widget has no {css}"
    return tag


def widget_data(soup: BeautifulSoup) -> Any:
    """The JSON the widget's script reads: every state the slider can show."""
    text = select(soup, "script.rnnmem-w-data").string
    assert text is not None, "the widget's data script is empty"
    return json.loads(text)


def test_every_state_shows_what_rnnmem_computes_for_its_bias(tmp_path):
    soup = render(tmp_path, "<!-- widget: forget_bias_explorer low=-1 high=3 step=0.5 start=1 -->")
    data = widget_data(soup)
    slider = select(soup, "input[type=range]")
    biases = [-1 + 0.5 * i for i in range(9)]
    assert int(slider.get_attribute_list("max")[0]) == len(biases) - 1 == len(data["readouts"]) - 1
    for b, shown, marks in zip(biases, data["readouts"], data["marks"]):
        f = float(memory.sigmoid(b))
        assert shown["bias"] == f"{b:.2f}" and shown["gate"] == f"{f:.3f}"
        assert shown["efold"] == f"{float(memory.efold_horizon(f)):,.1f} steps"
        assert shown["level"] == f"{float(memory.horizon(f, 0.01)):,.1f} steps"
        assert (marks["efold"] is None) == (memory.efold_horizon(f) < 1)
    # The page itself shows the starting state (b_f = 1), readable without the script.
    assert slider["value"] == str(biases.index(1))
    assert {o["data-key"]: o.string for o in soup.select("output")} == data["readouts"][biases.index(1)]


def test_the_curve_is_f_to_the_n_on_a_logarithmic_step_axis(tmp_path):
    soup = render(
        tmp_path, "<!-- widget: forget_bias_explorer low=0 high=2 step=1 start=0 points=5 max_steps=10000 -->"
    )
    data = widget_data(soup)
    for b, curves in zip((0, 1, 2), data["curves"]):
        points = [tuple(map(float, p.split(","))) for p in curves["decay"].split()]
        f = float(memory.sigmoid(b))
        for (x, y), n in zip(points, (1, 10, 100, 1000, 10000)):
            assert x == pytest.approx(BOX[0] + BOX[2] * math.log10(n) / 4, abs=0.006)
            assert y == pytest.approx(BOX[1] + (1 - f**n) * BOX[3], abs=0.006)


def test_two_renders_are_byte_identical(tmp_path):
    text = "<!-- widget: forget_bias_explorer -->"
    assert Renderer(tmp_path / "a").render(one(text)).content == Renderer(tmp_path / "b").render(one(text)).content

"""The figures and tables of the chapter on the horizon render, return what they computed, and refuse bad arguments."""

from __future__ import annotations

import math
import re

import pytest
from one_directive import OneDirective

from rnnmem import leaky, memory
from rnnmem.site.builders.horizon import readable
from rnnmem.site.render import Renderer

one = OneDirective("docs/chapters/horizon.md")


def test_decay_values_are_the_crossings_of_the_level(tmp_path):
    item = Renderer(tmp_path).render(
        one('<!-- figure: decay_curves factors=[0.9, 0.99, 0.999] steps=1000 level=0.0001 caption="c" -->')
    )
    values = item.values
    assert values["crossing"]["0.9"] == pytest.approx(memory.horizon(0.9, 1e-4))
    assert values["crossing"]["0.99"] == pytest.approx(memory.horizon(0.99, 1e-4))
    assert values["crossing"]["0.999"] is None  # beyond the thousand steps drawn
    assert values["crossed"] == ["0.9", "0.99"] and values["above"] == ["0.999"]
    # The crossing is where the curve drawn actually passes the level.
    n = math.floor(values["crossing"]["0.99"])
    assert memory.decay(0.99, n) >= 1e-4 > memory.decay(0.99, n + 1)
    assert values["left"]["0.999"] == pytest.approx(memory.decay(0.999, 1000))


def test_horizon_vs_gate_reports_the_constant_factor(tmp_path):
    values = Renderer(tmp_path).render(one('<!-- figure: horizon_vs_gate level=0.001 caption="c" -->')).values
    assert values["factor"] == pytest.approx(-math.log(0.001), rel=1e-9)
    assert values["factor_spread"] < 1e-9 and values["inside"] is True


def test_horizon_table_prints_small_fractions_readably(tmp_path):
    text = (
        Renderer(tmp_path).render(one("<!-- table: horizon_table factors=[0.5, 0.99] steps=100 -->")).content.decode()
    )
    assert "0.000000" not in text
    assert readable(memory.decay(0.5, 100)) in text and readable(memory.decay(0.99, 100)) in text


@pytest.mark.parametrize("x", [7.888609e-31, 4.3e-5, 0.0059, 0.366, 1.0])
def test_readable_reads_back_to_the_value(x):
    shown = readable(x)
    m = re.fullmatch(r"(\d\.\d) × 10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", shown)
    if m:
        exponent = int(m.group(2).translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
        assert float(m.group(1)) * 10.0**exponent == pytest.approx(x, rel=0.05)
        assert x < 0.01
    else:
        assert float(shown) == pytest.approx(x, abs=5e-4)


def test_leaky_pulse_values_follow_the_two_leaks(tmp_path):
    values = (
        Renderer(tmp_path).render(one('<!-- figure: leaky_pulse taus=[2, 10, 50] steps=150 caption="c" -->')).values
    )
    for tau in (2, 10, 50):
        assert values["exact"][str(tau)] == pytest.approx(math.exp(-1), rel=1e-9)
        assert values["euler"][str(tau)] == pytest.approx(leaky.leak(tau, "euler") ** tau, rel=1e-9)
    assert values["euler"]["2"] < values["euler"]["10"] < values["euler"]["50"] < values["e"]


def test_bias_table_shows_the_inverted_logistic(tmp_path):
    text = Renderer(tmp_path).render(one("<!-- table: bias_table gates=[0.95] -->")).content.decode()
    assert f"{memory.bias_for_gate(0.95):.2f}" in text and f"{memory.horizon(0.95):.1f}" in text

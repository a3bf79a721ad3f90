"""The home page's figure: what is left of a signal after n steps, tanh RNN against LSTM."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rnnmem.site.builders.home import hero_values, signal_left
from rnnmem.site.directives import find_directives
from rnnmem.site.render import Renderer


def test_the_curves_start_at_one_and_the_carry_line_only_falls():
    curves = signal_left(steps=60, hidden=16, radius=0.9, forget_bias=3.0, seed=0)
    for name in ("rnn", "lstm", "carry"):
        assert curves[name].shape == (61,) and curves[name][0] == 1.0
    carry = curves["carry"]
    assert np.all(np.diff(carry) <= 0) and carry[-1] > 0
    # the carry line is one path among several: the whole Jacobian keeps at least as much
    assert np.all(curves["lstm"] >= 0.5 * carry)
    # a larger forget bias holds the carry line open longer; the tanh RNN does not depend on it
    opener = signal_left(steps=60, hidden=16, radius=0.9, forget_bias=5.0, seed=0)
    assert opener["carry"][-1] > carry[-1]
    np.testing.assert_array_equal(opener["rnn"], curves["rnn"])


def test_the_values_name_where_each_curve_crosses_the_level():
    curves = {"rnn": np.array([1.0, 0.1, 0.001]), "lstm": np.array([1.0, 0.9, 0.8]), "carry": np.array([1.0, 0.5, 0.2])}
    values = hero_values(curves, steps=2, level=0.01)
    assert values["rnn_crossing"] == 2 and values["lstm_crossing"] is None
    assert values["rnn_left"] == 0.001 and values["carry_left"] == 0.2


def test_the_figure_renders_with_the_values_its_prose_states(tmp_path):
    (d,) = find_directives(
        '<!-- figure: hero steps=30 hidden=8 radius=0.9 forget_bias=3.0 caption="c" -->', "docs/index.md"
    )
    item = Renderer(tmp_path).render(d)
    assert item.content.startswith(b"<?xml")
    curves = signal_left(steps=30, hidden=8, radius=0.9, forget_bias=3.0, seed=0)
    assert item.values["rnn_crossing"] == int(np.nonzero(curves["rnn"] < 0.01)[0][0])
    assert item.values["carry_left"] == pytest.approx(curves["carry"][-1])
    assert item.values["lstm_left"] == pytest.approx(curves["lstm"][-1])


def test_the_figure_reads_on_a_phone_with_each_curve_named_beside_it():
    """At the phone's column (390 px less Material's two 16 px margins) every text is HERO_PT points,
    over 13 px as tests/built_site/test_fit.py measures it (data-text-pt), and no superscript of the
    axis falls below 9 px; the curves are named beside them, in their colours, not in a legend."""
    from rnnmem.site.builders.home import HERO_PT, hero
    from rnnmem.site.diagrams import smallest_glyph_pt
    from rnnmem.site.style import PALETTE, to_svg

    column = 358
    fig, _ = hero()
    (ax,) = fig.axes
    assert ax.get_legend() is None
    names = {t.get_text(): t.get_color() for t in ax.texts}
    assert names == {
        "1% left": names["1% left"],
        "tanh RNN, $\\rho = 0.9$": PALETTE[0],
        "LSTM, all paths, $b_f = 3$": PALETTE[1],
        "carry line alone": PALETTE[1],
    }
    powers = np.log10(ax.get_yticks())
    assert np.allclose(np.diff(powers), 2) and 0 in powers
    top = max(float(np.max(line.get_ydata())) for line in ax.get_lines())
    if top > 1:  # a curve above 1 reads against a labelled power above 1
        assert powers.max() > 0
    glyph_px = smallest_glyph_pt(fig) * column / (fig.get_figwidth() * 72)
    head = to_svg(fig)[:3000].decode()
    width_match = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', head)
    text_match = re.search(r'<svg[^>]*\sdata-text-pt="([\d.]+)"', head)
    assert width_match and text_match, "the SVG's root records its width in points and its smallest text"
    width, text = float(width_match.group(1)), float(text_match.group(1))
    assert text == HERO_PT and text * column / width > 13
    assert glyph_px >= 9.0

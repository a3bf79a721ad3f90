"""The home page's figure: what is left of a signal after n steps, tanh RNN against LSTM."""

from __future__ import annotations

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

"""The figures and tables of the chapter on the forget bias render, and refuse bad arguments by name."""

from __future__ import annotations

import pytest
from one_directive import OneDirective

from rnnmem.site.directives import DirectiveError
from rnnmem.site.render import Renderer
from rnnmem.site.tables import cell_value

one = OneDirective("docs/chapters/forget-bias.md")


def test_bias_rows_hold_the_gate_and_what_it_keeps(tmp_path):
    import math

    text = Renderer(tmp_path).render(one("<!-- table: forget_bias_rows steps=47 -->")).content.decode()
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in text.splitlines()[2:]]
    assert [row[0] for row in rows] == ["0", "1", "2", "\\(\\ln 19\\) = 2.94"]
    for row, bias in zip(rows, (0.0, 1.0, 2.0, math.log(19))):
        gate, efold, level, lifetime, kept = (cell_value(c) for c in row[1:])
        assert gate == pytest.approx(1 / (1 + math.exp(-bias)), abs=5e-7)  # f = sigma(b_f)
        assert efold == pytest.approx(-1 / math.log(gate), abs=0.005)
        assert level == pytest.approx(math.log(0.01) / math.log(gate), abs=0.05)
        assert lifetime == pytest.approx(1 + math.exp(bias), abs=0.005)  # 1/(1 - sigma(b)) = 1 + e^b
        assert kept == pytest.approx(gate**47, rel=5e-3)


def test_scheme_table_lists_every_scheme(tmp_path):
    text = Renderer(tmp_path).render(one("<!-- table: init_scheme_table hidden=64 t_max=200 -->")).content.decode()
    assert [line.split("|")[1].strip().split(",")[0] for line in text.splitlines()[2:6]] == [
        "zero",
        "Keras",
        "PyTorch default",
        "chrono",
    ]


def test_an_unknown_argument_is_refused(tmp_path):
    with pytest.raises(DirectiveError, match="unknown argument"):
        Renderer(tmp_path).render(one('<!-- figure: initial_horizon_cdf horizon=3 caption="c" -->'))


def test_gates_on_data_values_describe_the_gates_of_the_core(tmp_path):
    from rnnmem import carry

    values = (
        Renderer(tmp_path)
        .render(one('<!-- figure: forget_gates_on_data hidden=8 steps=5 batch=3 seeds=[0, 4] caption="c" -->'))
        .values
    )
    gates = carry.default_forget_gates(hidden=8, steps=5, batch=3, seeds=[0, 4], data_seed=1)
    assert {k: values[k] for k in gates.summary()} == pytest.approx(gates.summary())
    assert values["seeds"] == 2 and values["hidden"] == 8 and values["steps"] == 5
    # What the chapter reads in them: fed data, the gates leave the band the biases alone set.
    assert values["min"] < values["zero_min"] <= values["zero_max"] < values["max"]


def test_scheme_figure_values_match_the_draws(tmp_path):
    import math

    from rnnmem import init

    values = (
        Renderer(tmp_path)
        .render(one('<!-- figure: initial_horizon_cdf hidden=64 t_max=200 seed=3 caption="c" -->'))
        .values
    )
    hs = init.sample_initial_horizons(64, 200, 3)
    assert values["median"]["zero"] == pytest.approx(1 / math.log(2))
    assert values["max"]["chrono"] == pytest.approx(float(hs["chrono"].max()))
    assert values["beyond_100"]["chrono"] == pytest.approx(float((hs["chrono"] > 100).mean()))


def test_bias_density_values(tmp_path):
    values = (
        Renderer(tmp_path).render(one('<!-- figure: pytorch_bias_density hidden=16 size=5000 caption="c" -->')).values
    )
    assert values["peak"] == pytest.approx(2.0) and values["box_high"] == pytest.approx(0.25)
    assert -0.5 < values["low"] < values["high"] < 0.5

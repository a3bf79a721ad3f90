"""The figures and tables of the chapter on the forget bias render, and refuse bad arguments by name."""

from __future__ import annotations

import pytest

from rnnmem.site.directives import DirectiveError, find_directives
from rnnmem.site.render import Renderer


def one(text: str):
    (d,) = find_directives(text, "docs/chapters/forget-bias.md")
    return d


def test_bias_rows_match_the_sources(tmp_path):
    text = Renderer(tmp_path).render(one("<!-- table: forget_bias_rows steps=47 -->")).content.decode()
    for number in ("0.731059", "0.880797", "1.44", "6.6", "3.72", "89.8", "2.57e-03", "7.11e-15"):
        assert number in text


def test_scheme_table_lists_every_scheme(tmp_path):
    text = Renderer(tmp_path).render(one("<!-- table: init_scheme_table hidden=64 t_max=200 -->")).content.decode()
    assert [line.split("|")[1].strip().split(",")[0] for line in text.splitlines()[2:6]] == [
        "zero",
        "Keras",
        "PyTorch default",
        "chrono",
    ]


@pytest.mark.parametrize(
    "text, name",
    [
        ('<!-- table: forget_bias_rows biases=[0, "one"] -->', "biases[1]"),
        ("<!-- table: forget_bias_rows biases=[] -->", "biases"),
        ("<!-- table: forget_bias_rows steps=-1 -->", "steps"),
        ("<!-- table: forget_bias_rows level=1.5 -->", "level"),
        ('<!-- figure: pytorch_bias_density hidden=0 caption="c" -->', "hidden"),
        ('<!-- figure: pytorch_bias_density size=2.5 caption="c" -->', "size"),
        ('<!-- figure: pytorch_bias_density seed=-3 caption="c" -->', "seed"),
        ('<!-- figure: initial_horizon_cdf t_max=2 caption="c" -->', "t_max"),
        ('<!-- figure: initial_horizon_cdf measure="days" caption="c" -->', "measure"),
        ('<!-- figure: initial_horizon_cdf hidden=-1 caption="c" -->', "hidden"),
        ("<!-- table: init_scheme_table t_max=-5 -->", "t_max"),
        ("<!-- table: init_scheme_table seed=1.5 -->", "seed"),
    ],
)
def test_a_bad_argument_fails_naming_it(tmp_path, text, name):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(text))
    assert f"{name} must" in str(info.value)


def test_an_unknown_argument_is_refused(tmp_path):
    with pytest.raises(DirectiveError, match="unknown argument"):
        Renderer(tmp_path).render(one('<!-- figure: initial_horizon_cdf horizon=3 caption="c" -->'))


def test_gates_on_data_values_are_the_measured_gates(tmp_path):
    import numpy as np

    from rnnmem import LSTM, carry, memory

    values = (
        Renderer(tmp_path)
        .render(one('<!-- figure: forget_gates_on_data hidden=8 steps=5 batch=3 seeds=[0, 4] caption="c" -->'))
        .values
    )
    noise = np.random.default_rng(1).standard_normal((5, 3, 8))
    gates, zero = [], []
    for seed in (0, 4):
        model = LSTM(8, 8, seed=seed)
        gates.append(carry.carry_factors(model, noise)[-1].ravel())
        zero.append(memory.sigmoid(model.b_ih[8:16] + model.b_hh[8:16]))
    gates, zero = np.concatenate(gates), np.concatenate(zero)
    assert values["min"] == pytest.approx(gates.min()) and values["max"] == pytest.approx(gates.max())
    assert values["sd"] == pytest.approx(gates.std())
    assert values["zero_min"] == pytest.approx(zero.min()) and values["zero_max"] == pytest.approx(zero.max())
    assert values["tau_data"] == pytest.approx(-1 / np.log(gates).mean())
    assert values["seeds"] == 2


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


@pytest.mark.parametrize(
    "text, name",
    [
        ('<!-- figure: forget_gates_on_data hidden=0 caption="c" -->', "hidden"),
        ('<!-- figure: forget_gates_on_data steps=0 caption="c" -->', "steps"),
        ('<!-- figure: forget_gates_on_data batch=-2 caption="c" -->', "batch"),
        ('<!-- figure: forget_gates_on_data seeds=[] caption="c" -->', "seeds"),
        ('<!-- figure: forget_gates_on_data seeds=[0, -1] caption="c" -->', "seeds[1]"),
        ('<!-- figure: forget_gates_on_data data_seed=1.5 caption="c" -->', "data_seed"),
    ],
)
def test_gates_on_data_refuses_bad_arguments(tmp_path, text, name):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(text))
    assert f"{name} must" in str(info.value)

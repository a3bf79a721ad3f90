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
    assert [line.split("|")[1].strip().split(",")[0] for line in text.splitlines()[2:6]] == \
        ["zero", "Keras", "PyTorch default", "chrono"]


@pytest.mark.parametrize("text, name", [
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
])
def test_a_bad_argument_fails_naming_it(tmp_path, text, name):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(text))
    assert f"{name} must" in str(info.value)


def test_an_unknown_argument_is_refused(tmp_path):
    with pytest.raises(DirectiveError, match="unknown argument"):
        Renderer(tmp_path).render(one('<!-- figure: initial_horizon_cdf horizon=3 caption="c" -->'))

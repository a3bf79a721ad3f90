"""The figures and tables of "Regularizing without forgetting": each renders, bad arguments fail by name."""

from __future__ import annotations

import pytest
from one_directive import OneDirective

from rnnmem.site.render import Renderer

one = OneDirective("docs/chapters/dropout.md")


def test_survival_table_numbers(tmp_path):
    text = Renderer(tmp_path).render(one("<!-- table: dropout_survival_table keep=0.9 steps=[100] depth=2 -->"))
    lines = text.content.decode().splitlines()
    assert lines[0] == "| scheme | \\(t\\) = 100 |"
    assert lines[2:8] == [
        "| per step: masks met | 100 |",
        "| per step: untouched | \\(2.66 \\times 10^{-5}\\) |",
        "| between layers: masks met | 2 |",
        "| between layers: untouched | 0.81 |",
        "| per sequence: masks met | 1 |",
        "| per sequence: untouched | 0.9 |",
    ]


def test_variance_table_numbers(tmp_path):
    text = Renderer(tmp_path).render(one("<!-- table: mask_variance_table keeps=[0.9] masks=[1, 100] -->"))
    assert text.content.decode().splitlines()[2] == "| 0.9 | 0.1111 | 37,648 |"


def test_spread_figure_returns_the_formulas_and_the_last_simulated_step(tmp_path):
    import numpy as np

    from rnnmem import dropout

    d = one('<!-- figure: dropout_spread keep=0.9 steps=40 depth=3 runs=2000 min_runs=100 seed=0 caption="c" -->')
    values = Renderer(tmp_path).render(d).values
    for scheme in dropout.SCHEMES:
        n = dropout.perturbation_count(scheme, 40, 3)
        # The figure's values are the formulas, to rounding (its arrays and these scalars may round differently).
        assert values["last_variance"][scheme] == pytest.approx(dropout.mask_product_variance(0.9, n), rel=1e-12)
        assert values["last_untouched"][scheme] == pytest.approx(dropout.untouched_probability(0.9, n), rel=1e-12)
        sim = dropout.simulate_carried_state(scheme, 40, 0.9, runs=2000, depth=3, seed=0)
        seen = np.rint(sim.untouched * 2000) >= 100
        assert values["last_seen"][scheme] == int(sim.steps[seen].max())
    assert values["last_seen"]["recurrent"] < 40 == values["last_seen"]["vertical"]

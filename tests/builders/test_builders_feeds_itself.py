"""The figures and tables of "A network that feeds itself": each renders, and a bad argument is named."""

from __future__ import annotations

import numpy as np
import pytest
from one_directive import OneDirective

from rnnmem import jacobians
from rnnmem.site.builders import feeds_itself
from rnnmem.site.render import Renderer
from rnnmem.site.tables import powers_of_ten

one = OneDirective("docs/chapters/feeds-itself.md")


def test_the_table_shows_the_runs_it_names(tmp_path):
    d = one("<!-- table: jacobian_norm_table radii=[0.8, 1.0, 1.2] input_scales=[0.1, 1.0] -->")
    text = Renderer(tmp_path).render(d).content.decode()
    for scale in (0.1, 1.0):
        for rho in (0.8, 1.0, 1.2):
            n = jacobians.rnn_norms_by_distance(rho, input_scale=scale)
            assert powers_of_ten(f"| {n[12]:.3g} | {n[40]:.3g} | {n[40] ** (1 / 40):.3f} |") in text
    first = int(np.argmax(jacobians.rnn_norms_by_distance(0.8) < 0.01))
    assert f"| {first} |" in text


def test_the_table_predicts_each_rate_by_rho_times_the_mean_slope():
    table, values = feeds_itself.jacobian_norm_table()
    assert values["runs"] == len(table.rows) == 6
    gaps = [abs(float(row[6]) - float(row[7])) / float(row[6]) for row in table.rows]
    assert max(gaps) == pytest.approx(values["largest_gap"], abs=2e-3)  # the cells are rounded
    for row in table.rows:
        assert float(row[7]) == pytest.approx(float(row[1]) * float(row[3]), abs=1.5e-3)


def test_the_norm_figure_returns_the_values_it_draws():
    fig, values = feeds_itself.jacobian_norms(radii=[0.8, 1.2], input_scales=[0.1], steps=20, hidden=8)
    assert values["far"]["0.1"]["1.2"] == jacobians.rnn_norms_by_distance(1.2, hidden=8, steps=20, input_scale=0.1)[20]
    assert values["power"]["1.2"] == 1.2**20 and values["near_k"] == 12


def test_the_edge_of_chaos_figure_returns_what_it_measures():
    fig, values = feeds_itself.edge_of_chaos(
        radii=[0.8, 1.5], grid=[0.5, 2.0, 3.0], hidden=8, steps=60, burn_in=20, seeds=2
    )
    rates = [
        [jacobians.growth_rate(jacobians.free_run(r, hidden=8, steps=60, seed=s)[1], burn_in=20) for s in range(2)]
        for r in (0.5, 2.0, 3.0)
    ]
    assert values["rates"] == {key: float(np.median(r)) for key, r in zip(("0.5", "2.0", "3.0"), rates)}
    above = [g for g, r in zip((0.5, 2.0, 3.0), rates) if np.median(r) > 1]
    assert values["first_above_one"] == (above[0] if above else None)
    states, _ = jacobians.free_run(1.5, hidden=8, steps=60)
    assert values["sizes"]["1.5"] == float(np.sqrt(np.mean(states[-1] ** 2)))
    assert values["sizes"]["0.8"] < 1e-6 < values["sizes"]["1.5"]


def test_the_init_table_holds_the_products_of_each_start():
    table, values = feeds_itself.init_norm_table(hidden=8, steps=12, distance=4, seeds=3)
    for key, row, init_name in ((("orthogonal"), table.rows[2], "orthogonal"), ("identity", table.rows[3], "identity")):
        runs = [jacobians.init_norms_by_distance(init_name, hidden=8, steps=12, seed=s) for s in range(3)]
        assert values[key]["far"] == float(np.median([n[12] for n in runs]))
        assert row[3].startswith(f"{np.median([n[12] for n in runs]):.2g} [")
    irnn = [
        jacobians.init_norms_by_distance("identity", hidden=8, steps=12, seed=s, nonlinearity="relu", zero_biases=True)[
            12
        ]
        for s in range(3)
    ]
    assert values["irnn"]["far_max"] == max(irnn) and set(np.round(irnn, 12)) <= {0.0, 1.0}


def test_the_nonnormal_figure_returns_its_peak():
    fig, values = feeds_itself.nonnormal_growth_curve()
    W, v, curve = jacobians.nonnormal_growth()
    assert (values["peak"], values["peak_step"]) == (float(curve.max()), int(curve.argmax()))
    assert values["back_below"] == int(np.argmax(curve < 1))

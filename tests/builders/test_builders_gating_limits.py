"""The figures and tables of the chapter on what gating does not fix render, and refuse bad arguments by name."""

from __future__ import annotations

import pytest

from rnnmem.site.directives import DirectiveError, find_directives
from rnnmem.site.render import Renderer


def one(text: str):
    (d,) = find_directives(text, "docs/chapters/gating-limits.md")
    return d


def test_gradcheck_table_has_twelve_blocks_and_both_states(tmp_path):
    text = Renderer(tmp_path).render(one("<!-- table: lstm_gradcheck_table -->")).content.decode()
    rows = [line for line in text.splitlines()[2:] if line.startswith("| ")]
    assert len(rows) == 14
    assert "initial hidden state" in rows[-2] and "initial cell" in rows[-1]
    errors = [float(row.rstrip(" |").split("|")[-1]) for row in rows]
    assert max(errors) < 1e-6


def test_paths_table_shows_both_regimes(tmp_path):
    text = Renderer(tmp_path).render(one("<!-- table: cell_paths_table distances=[1, 30] -->")).content.decode()
    last = text.splitlines()[3].split("|")
    assert last[1].strip() == "30"
    assert float(last[3]) < 0.05 * float(last[2])  # saturated: other paths small
    assert float(last[5]) > 5 * float(last[4])  # strong: other paths large


@pytest.mark.parametrize(
    "text, name",
    [
        ('<!-- figure: carry_vs_other_paths steps=0 caption="c" -->', "steps"),
        ('<!-- figure: carry_vs_other_paths hidden=2.5 caption="c" -->', "hidden"),
        ('<!-- figure: carry_vs_other_paths saturated=3 caption="c" -->', "saturated"),
        ('<!-- figure: carry_vs_other_paths strong={"scale": -1} caption="c" -->', "strong['scale']"),
        ("<!-- table: cell_paths_table distances=[] -->", "distances"),
        ("<!-- table: cell_paths_table distances=[5, 0] -->", "distances[1]"),
        ("<!-- table: cell_paths_table input_seed=-1 -->", "input_seed"),
        ('<!-- figure: cell_bound_check show=20 caption="c" -->', "show"),
        ('<!-- figure: cell_bound_check steps=-5 caption="c" -->', "steps"),
        ('<!-- figure: cell_bound_check c0_scale=0 caption="c" -->', "c0_scale"),
        ("<!-- table: lstm_gradcheck_table eps=0 -->", "eps"),
        ("<!-- table: lstm_gradcheck_table hidden=0 -->", "hidden"),
        ("<!-- table: lstm_gradcheck_table seed=-2 -->", "seed"),
    ],
)
def test_a_bad_argument_fails_naming_it(tmp_path, text, name):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(text))
    assert f"{name} must" in str(info.value)


def test_an_unknown_regime_key_is_refused(tmp_path):
    with pytest.raises(DirectiveError, match="unknown key"):
        Renderer(tmp_path).render(one('<!-- figure: carry_vs_other_paths strong={"gain": 2} caption="c" -->'))


def test_keep_bias_table_shows_the_functions_it_calls(tmp_path):
    from rnnmem.site.builders.gating_limits import bias_paths

    text = Renderer(tmp_path).render(one("<!-- table: keep_bias_paths_table biases=[0, 30] distance=12 -->"))
    rows = [line.split("|")[1:-1] for line in text.content.decode().splitlines()[2:4]]
    for row, bias in zip(rows, (0, 30)):
        lp, gp = bias_paths(float(bias), 12)
        assert [c.strip() for c in row] == [
            f"{bias:g}",
            f"{lp.carry_norm[12]:.3f}",
            f"{lp.other_norm[12]:.3f}",
            f"{gp.carry_norm[12]:.3f}",
            f"{gp.other_norm[12]:.3f}",
        ]
    assert float(rows[1][4]) < 0.001 < float(rows[1][2])  # held: the GRU's other paths vanish, the LSTM's not


def test_default_start_table_shows_the_measured_rates(tmp_path):
    import numpy as np

    from rnnmem.site.builders.gating_limits import start_rates

    d = one('<!-- table: default_start_table models=["rnn", "lstm:2"] lag=5 hidden=8 seeds=2 sequences=16 -->')
    lines = Renderer(tmp_path).render(d).content.decode().splitlines()
    for line, (model, bias) in zip(lines[2:4], (("rnn", None), ("lstm", 2.0))):
        cells = [c.strip() for c in line.split("|")[1:-1]]
        rate = start_rates(model, bias, lag=5, hidden=8, seeds=2, sequences=16)
        assert cells[1:] == [
            f"{np.median(rate):.2f}",
            f"{rate.min():.2f} to {rate.max():.2f}",
            f"{np.median(rate) ** 6:.0e}",
        ]
    assert "\\(b_f = 2\\)" in lines[3]


@pytest.mark.parametrize(
    "text, name",
    [
        ("<!-- table: keep_bias_paths_table biases=[] -->", "biases"),
        ('<!-- table: keep_bias_paths_table biases=[0, "x"] -->', "biases[1]"),
        ("<!-- table: keep_bias_paths_table distance=0 -->", "distance"),
        ("<!-- table: keep_bias_paths_table scale=-1 -->", "scale"),
        ("<!-- table: default_start_table models=[] -->", "models"),
        ('<!-- table: default_start_table models=["transformer"] -->', "models[0]"),
        ('<!-- table: default_start_table models=["gru:2"] -->', "models[0]"),
        ('<!-- table: default_start_table models=["lstm:x"] -->', "models[0]"),
        ("<!-- table: default_start_table lag=0 -->", "lag"),
        ("<!-- table: default_start_table seeds=0 -->", "seeds"),
        ("<!-- table: default_start_table sequences=-3 -->", "sequences"),
    ],
)
def test_a_bad_argument_of_the_new_tables_fails_naming_it(tmp_path, text, name):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(text))
    assert f"{name} must" in str(info.value)


def test_the_figures_return_the_values_their_alt_text_states(tmp_path):
    from rnnmem import cell_bound
    from rnnmem.site.builders.gating_limits import SATURATED, STRONG, cell_paths

    r = Renderer(tmp_path)
    paths = r.render(one('<!-- figure: carry_vs_other_paths steps=12 caption="c" -->')).values
    for key, regime in (("saturated", SATURATED), ("strong", STRONG)):
        p = cell_paths(regime, 12)
        assert paths[key]["carry"] == p.carry_norm[12] and paths[key]["other"] == p.other_norm[12]
        assert paths[key]["total"] == p.total_norm[12]
    bound = r.render(one('<!-- figure: cell_bound_check hidden=4 steps=30 caption="c" -->')).values
    chk = cell_bound.simulate_cell_bound(4, 30, 0, scale=1.0, forget_bias=3.0, c0_scale=5.0)
    assert bound["tightness"] == chk.tightness and bound["holds"] is True

"""The figures and tables of the chapter on what gating does not fix render, and refuse bad arguments by name."""

from __future__ import annotations

from one_directive import OneDirective

from rnnmem.site.render import Renderer
from rnnmem.site.tables import cell_value

one = OneDirective("docs/chapters/gating-limits.md")


def test_gradcheck_table_has_twelve_blocks_and_both_states(tmp_path):
    text = Renderer(tmp_path).render(one("<!-- table: lstm_gradcheck_table -->")).content.decode()
    rows = [line for line in text.splitlines()[2:] if line.startswith("| ")]
    assert len(rows) == 14
    assert "initial hidden state" in rows[-2] and "initial cell" in rows[-1]
    errors = [cell_value(row.rstrip(" |").split("|")[-1]) for row in rows]
    assert max(errors) < 1e-6


def test_paths_table_shows_both_regimes(tmp_path):
    text = Renderer(tmp_path).render(one("<!-- table: cell_paths_table distances=[1, 30] -->")).content.decode()
    last = text.splitlines()[3].split("|")
    assert last[1].strip() == "30"
    assert cell_value(last[3]) < 0.05 * cell_value(last[2])  # saturated: other paths small
    assert cell_value(last[5]) > 5 * cell_value(last[4])  # strong: other paths large


def test_keep_bias_table_shows_the_grus_other_paths_vanish_and_the_lstms_not(tmp_path):
    text = Renderer(tmp_path).render(one("<!-- table: keep_bias_paths_table biases=[0, 30] distance=12 -->"))
    rows = [[float(c) for c in line.split("|")[1:-1]] for line in text.content.decode().splitlines()[2:4]]
    assert [row[0] for row in rows] == [0, 30]
    held = rows[1]
    assert held[1] == held[3] == 1.0  # a bias of 30 holds both keeping gates at one: the carry lines keep all
    assert held[4] < 0.001 < held[2]  # held: the GRU's other paths vanish, the LSTM's not


def test_default_start_table_shows_each_models_rate_and_its_reach(tmp_path):
    d = one('<!-- table: default_start_table models=["rnn", "lstm:2"] lag=5 hidden=8 seeds=2 sequences=16 -->')
    item = Renderer(tmp_path).render(d)
    lines = item.content.decode().splitlines()
    for line, name in zip(lines[2:4], ("rnn", "lstm:2")):
        cells = [c.strip() for c in line.split("|")[1:-1]]
        median, (low, high), reach = cell_value(cells[1]), map(cell_value, cells[2].split(" to ")), cell_value(cells[3])
        assert low <= median <= high and median == item.values["median"][name]
        # The factor over lag + 1 = 6 steps, printed to one significant digit from the unrounded rate.
        assert reach == item.values["reach"][name] and 0.5 < reach / median**6 < 2
    assert lines[2].startswith("| tanh RNN") and "\\(b_f = 2\\)" in lines[3]


def test_the_figures_return_the_values_their_alt_text_states(tmp_path):
    from rnnmem import cell_bound
    from rnnmem.cell_paths import REGIMES, random_lstm_paths

    r = Renderer(tmp_path)
    paths = r.render(one('<!-- figure: carry_vs_other_paths steps=12 caption="c" -->')).values
    for key, regime in REGIMES.items():
        p = random_lstm_paths(12, hidden=8, input_size=2, seed=0, input_seed=1, **regime)  # the builder's defaults
        assert paths[key]["carry"] == p.carry_norm[12] and paths[key]["other"] == p.other_norm[12]
        assert paths[key]["total"] == p.total_norm[12]
    bound = r.render(one('<!-- figure: cell_bound_check hidden=4 steps=30 caption="c" -->')).values
    chk = cell_bound.simulate_cell_bound(4, 30, 0, scale=1.0, forget_bias=3.0, c0_scale=5.0)
    assert bound["tightness"] == chk.tightness and bound["holds"] is True

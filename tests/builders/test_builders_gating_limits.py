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
    assert float(last[3]) < 0.05 * float(last[2])          # saturated: other paths small
    assert float(last[5]) > 5 * float(last[4])             # strong: other paths large


@pytest.mark.parametrize("text, name", [
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
])
def test_a_bad_argument_fails_naming_it(tmp_path, text, name):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(text))
    assert f"{name} must" in str(info.value)


def test_an_unknown_regime_key_is_refused(tmp_path):
    with pytest.raises(DirectiveError, match="unknown key"):
        Renderer(tmp_path).render(one('<!-- figure: carry_vs_other_paths strong={"gain": 2} caption="c" -->'))

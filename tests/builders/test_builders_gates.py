"""The figures and tables of the chapter on gates render from the page, and bad arguments fail by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from rnnmem import cells
from rnnmem.site.directives import find_directives
from rnnmem.site.render import Renderer

PAGE = Path(__file__).resolve().parents[2] / "docs" / "chapters" / "gates.md"
BUILDERS = {"gradient_highway", "gru_update_conventions", "gru_conventions", "mechanisms", "gate_costs", "cell_weights"}


def page_directives():
    return find_directives(PAGE.read_text(encoding="utf-8"), "docs/chapters/gates.md")


def one(md: str):
    (d,) = find_directives("# T\n\n" + md + "\n", "docs/chapters/c.md")
    return d


def test_the_page_uses_every_builder_of_the_chapter():
    from rnnmem.site import registry

    own = {
        d.name for d in page_directives() if registry.get(d.kind, d.name).module == "rnnmem.site.builders.gates"
    }  # the diagrams have their own
    assert own == BUILDERS


@pytest.mark.parametrize("directive", page_directives(), ids=lambda d: f"{d.name}:{d.line}")
def test_each_directive_of_the_page_renders(tmp_path, directive):
    item = Renderer(tmp_path).render(directive)
    if directive.kind == "figure":
        assert item.content.startswith(b"<?xml") and b"<svg" in item.content
    elif directive.kind == "widget":
        assert item.content.decode().startswith('<div class="rnnmem-widget"')
    else:
        text = item.content.decode() if isinstance(item.content, bytes) else item.content
        assert "|" in text and "---" in text


def cells_of(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("|")[1:-1]] for line in text.splitlines()[2:] if line.startswith("|")]


def test_the_cost_table_counts_blocks_of_weights(tmp_path):
    r = Renderer(tmp_path)
    rows = {row[0]: row for row in cells_of(r.render(one("<!-- table: gate_costs d=100 H=500 -->")).content.decode())}
    assert list(rows) == [cells.LABELS[c] for c in cells.TAUGHT]
    for row in rows.values():
        G, one_bias, torch, _, share = int(row[1]), *(int(c.replace(",", "")) for c in row[2:5]), float(row[5])
        assert one_bias == G * 500 * (100 + 500 + 1) and torch == one_bias + G * 500  # a second bias per block
        assert share == round(G / 4, 2)  # every cell is G blocks of the same size: its share of the LSTM is G/4


def test_the_conventions_table_pairs_the_options_and_what_they_do(tmp_path):
    rows = cells_of(Renderer(tmp_path).render(one("<!-- table: gru_conventions -->")).content.decode())
    assert {(u.strip("`"), r.strip("`")) for u, r, *_ in rows} == {
        (u, r) for u in ("z_keeps", "z_writes") for r in ("after", "before")
    }
    by = {(u.strip("`"), r.strip("`")): row for u, r, *row in rows}
    # One unit: the reset placement does not change the state; the update convention does.
    assert by["z_keeps", "after"][1] == by["z_keeps", "before"][1] != by["z_writes", "before"][1]
    # Two units mix through W_hn: the reset placement moves the candidate, the update convention does not.
    assert by["z_keeps", "after"][2] == by["z_writes", "after"][2] != by["z_keeps", "before"][2]
    assert all(row[0] for row in by.values())


def test_the_weights_table_rows_produce_the_gates_they_list(tmp_path):
    import numpy as np

    from rnnmem import memory

    text = Renderer(tmp_path).render(one('<!-- table: cell_weights cell="lstm" -->')).content.decode()
    q = np.array([0.6, 0.4, 0.1, -0.2])  # the two-unit cell's x and h_prev
    for row in cells_of(text):
        w, bias, value = np.array([float(c) for c in row[1:5]]), float(row[5]), float(row[6])
        act = np.tanh if row[0].startswith("\\(g") else memory.sigmoid
        assert act(w @ q + bias) == pytest.approx(value, abs=2e-6), row


def _gate_directive(comment: str):
    (d,) = find_directives("# T\n\n" + comment + "\n", "docs/chapters/gates.md")
    return d


def test_the_figures_return_the_values_their_alt_text_states(tmp_path):
    from rnnmem import gate_arithmetic, memory

    r = Renderer(tmp_path)
    highway = r.render(
        _gate_directive('<!-- figure: gradient_highway gates=[0.99, 0.5] steps=500 mark=50 caption="c" -->')
    ).values
    assert highway["left"] == {"0.99": memory.decay(0.99, 500), "0.5": memory.decay(0.5, 50)}
    assert highway["at"] == {"0.99": 500, "0.5": 50}
    assert highway["horizon"]["0.99"] == memory.horizon(0.99, level=0.01)
    update = r.render(
        _gate_directive('<!-- figure: gru_update_conventions h_prev=0.8 r=0.25 mark=0.9 caption="c" -->')
    ).values
    for convention in ("z_keeps", "z_writes"):
        assert update[convention] == gate_arithmetic.gru_update(0.8, z=0.9, r=0.25, update=convention).h
    assert update["candidate"] == gate_arithmetic.gru_update(0.8, z=0.9, r=0.25).n


def test_the_weights_table_returns_the_gate_values(tmp_path):
    from rnnmem import gate_arithmetic

    values = Renderer(tmp_path).render(_gate_directive('<!-- table: cell_weights cell="lstm" -->')).values
    rows = gate_arithmetic.two_unit_rows("lstm")
    assert values["gates"]["f"] == [row.value for row in rows if row.gate == "f"]
    assert set(values["gates"]) == {"i", "f", "g", "o"}

"""The figures and tables of the chapter on gates render from the page, and bad arguments fail by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from rnnmem.site.directives import DirectiveError, find_directives
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
    else:
        text = item.content.decode() if isinstance(item.content, bytes) else item.content
        assert "|" in text and "---" in text


def test_the_tables_show_the_chapter_numbers(tmp_path):
    r = Renderer(tmp_path)

    def text(md):
        content = r.render(one(md)).content
        return content.decode() if isinstance(content, bytes) else content

    costs = text("<!-- table: gate_costs d=100 H=500 -->")
    for number in ("1,202,000", "901,500", "1,204,000", "903,000", "300,500", "0.75"):
        assert number in costs
    conventions = text("<!-- table: gru_conventions -->")
    for number in ("0.739738", "0.257638", "(0.314021, 0.197375)", "(0.481550, 0.099668)"):
        assert number in conventions
    weights = text('<!-- table: cell_weights cell="lstm" -->')
    for number in ("0.406626", "-0.160739", "0.800000", "0.700000"):
        assert number in weights


@pytest.mark.parametrize(
    "comment, expected",
    [
        ('<!-- figure: gradient_highway gates=[0.99, 1.5] caption="c" -->', "gates[1] must be a gate value"),
        ('<!-- figure: gradient_highway gates=[] caption="c" -->', "gates must be a non-empty list"),
        ('<!-- figure: gradient_highway steps=0 caption="c" -->', "steps must be a whole number >= 1"),
        ('<!-- figure: gradient_highway level=2 caption="c" -->', "level must be a gate value"),
        ('<!-- figure: gradient_highway steps=40 mark=50 caption="c" -->', "mark must be a step within the plot"),
        ('<!-- figure: gradient_highway floor=0 caption="c" -->', "floor must be a gate value"),
        ('<!-- figure: gru_update_conventions r=1.0 caption="c" -->', "r must be a gate value"),
        ('<!-- figure: gru_update_conventions mark=-0.1 caption="c" -->', "mark must be a gate value"),
        ('<!-- figure: gru_update_conventions h_prev="x" caption="c" -->', "h_prev must be a real number"),
        ("<!-- table: gru_conventions z=0 -->", "z must be a gate value"),
        ("<!-- table: gru_conventions h_prev=None -->", "h_prev must be a real number"),
        ("<!-- table: mechanisms d=0 -->", "d must be a whole number >= 1"),
        ("<!-- table: mechanisms H=2.5 -->", "H must be a whole number >= 1"),
        ("<!-- table: gate_costs H=-1 -->", "H must be a whole number >= 1"),
        ('<!-- table: cell_weights cell="rnn" -->', "cell must be one of 'lstm', 'gru'"),
    ],
)
def test_bad_arguments_fail_naming_them(tmp_path, comment, expected):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(comment))
    message = str(info.value)
    assert message.startswith("docs/chapters/c.md:3: "), message
    assert expected in message, message


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

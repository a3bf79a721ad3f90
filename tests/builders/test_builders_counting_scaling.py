"""The figures and tables of "Counting and scaling": each renders, bad arguments fail by name."""

from __future__ import annotations

from rnnmem.site.directives import find_directives
from rnnmem.site.render import Renderer

WHERE = "docs/chapters/counting-scaling.md"


def one(comment: str):
    (d,) = find_directives("# T\n\n" + comment + "\n", WHERE)
    return d


def test_model_tally_holds_the_sources_numbers(tmp_path):
    text = Renderer(tmp_path).render(one("<!-- table: model_tally_table -->")).content.decode()
    for number in (
        "15,000,000",
        "18,006,000",
        "15,010,000",
        "30,010,000",
        "45.45%",
        "36,012,000",
        "**66,022,000**",
        "4 × 1500 × (1500 + 1500 + 1)",
        "10,000 × 1500",
        "1500 × 10,000 + 10,000",
    ):
        assert number in text


def test_model_tally_follows_the_convention_and_tying(tmp_path):
    r = Renderer(tmp_path)
    torch_like = r.render(one('<!-- table: model_tally_table convention="pytorch" -->')).content.decode()
    assert "(1500 + 1500 + 2)" in torch_like and "**66,034,000**" in torch_like
    tied = r.render(one("<!-- table: model_tally_table tied=True -->")).content.decode()
    assert "**51,022,000**" in tied and "weights shared with the embedding" in tied


def test_convention_table_numbers(tmp_path):
    lines = Renderer(tmp_path).render(one("<!-- table: cell_convention_table -->")).content.decode().splitlines()
    assert lines[2:7] == [
        "| tanh RNN (\\(G = 1\\)) | 300,500 | 301,000 | 300,500 |",
        "| GRU (\\(G = 3\\)) | 901,500 | 903,000 | 903,000 |",
        "| LSTM (\\(G = 4\\)) | 1,202,000 | 1,204,000 | 1,202,000 |",
        "| LSTM − GRU | 300,500 | 301,000 | 299,000 |",
        "| GRU / LSTM | 0.75 | 0.75 | 0.7512 |",
    ]
    assert "its GRU holds 901,500" in lines[-1]


def test_error_figure_returns_the_laws_it_draws(tmp_path):
    from rnnmem import scaling

    d = one('<!-- figure: error_vs_data improvements=[0.3, 0.4] data0=12000 error0=0.1 target=0.5 caption="c" -->')
    values = Renderer(tmp_path).render(d).values
    for gamma in (0.3, 0.4):
        beta = scaling.exponent_per_tenfold(gamma)
        key = f"{gamma:g}"
        assert values["slope"][key] == beta
        assert values["hours"][key] == scaling.data_needed(12_000, 0.1, 0.05, beta)
        assert values["multiple"][key] == scaling.data_multiple(0.5, beta)
    assert values["goal"] == 0.1 * 0.5


def test_the_tally_table_offers_the_cells_the_book_teaches():
    """model_tally_table's cell and convention choices are rnnmem.cells.TAUGHT and rnnmem.params.CONVENTIONS."""
    import typing

    from rnnmem import cells, params
    from rnnmem.site.builders import counting_scaling

    hints = typing.get_type_hints(counting_scaling.model_tally_table, include_extras=True)
    assert typing.get_args(hints["cell"]) == cells.TAUGHT
    assert typing.get_args(hints["convention"]) == params.CONVENTIONS

"""`python -m rnnmem gated`: the gates chapter's tables, with the values the pages show.

Each printed table is compared cell by cell with the table the page's builder
renders (called with the arguments of the page's own directive), or with the
functions the page's snippets call: never with numbers typed here.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from rnnmem import memory
from rnnmem.cli import main
from rnnmem.site import registry
from rnnmem.site.directives import find_directives

ROOT = Path(__file__).resolve().parents[2]


def gated(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rnnmem", "gated", *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def page_table(chapter: str, name: str) -> list[list[str]]:
    """The rows of the table ``name`` as the chapter's directive renders it."""
    text = (ROOT / "docs" / "chapters" / f"{chapter}.md").read_text()
    (directive,) = [d for d in find_directives(text, chapter) if d.name == name]
    args = {k: v for k, v in directive.args.items() if k not in ("caption", "alt", "id")}
    table = registry.get("table", name).func(**args)
    if isinstance(table, tuple):  # (table, values): the values fill captions
        table = table[0]
    return [[str(c) for c in row] for row in table.rows]


def printed_rows(out: str, title: str) -> list[list[str]]:
    """The body rows (split on runs of two or more spaces) of the printed table under ``title``."""
    block = out.split(title, 1)[1].split("\n\n", 1)[0].splitlines()[3:]
    return [re.split(r" {2,}", line.strip()) for line in block]


def plain(cell: str) -> str:
    return cell.replace("\\(", "").replace("\\)", "").replace("`", "").replace("\\ln", "ln")


@pytest.fixture(scope="module")
def everything() -> str:
    done = gated()
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.process
def test_without_a_flag_all_four_sections_print(everything, capsys):
    for flag in ("--highway", "--bias", "--step", "--params"):
        assert main(["gated", flag]) == 0
        one = capsys.readouterr().out
        assert one.strip() and one.strip() in everything
    assert main(["gated", "--bias", "--params"]) == 0
    both = capsys.readouterr().out
    assert "What the forget bias does" in both and "What a gate costs" in both and "two-unit" not in both


@pytest.mark.process
def test_params_is_the_gate_costs_table_of_the_page(everything):
    rows = printed_rows(everything, "What a gate costs: one layer, d = 100, H = 500")
    assert rows == page_table("gates", "gate_costs")


@pytest.mark.process
def test_bias_is_the_forget_bias_table_of_the_page(everything):
    rows = printed_rows(everything, "What the forget bias does")
    expected = page_table("forget-bias", "forget_bias_rows")
    assert [r[1:] for r in rows] == [r[1:] for r in expected]
    assert [r[0] for r in rows] == [plain(r[0]) for r in expected]


@pytest.mark.process
def test_step_prints_both_two_unit_cells_and_every_gru_convention(everything):
    lstm_rows = printed_rows(everything, "The two-unit LSTM: every weight row")
    gru_rows = printed_rows(everything, "The two-unit GRU: every weight row")
    for rows, cell in ((lstm_rows, "lstm"), (gru_rows, "gru")):
        built = registry.get("table", "cell_weights").func(cell)
        table = built[0] if isinstance(built, tuple) else built  # (table, values) or the table alone
        expected = [[plain(c) for c in row] for row in table.rows]
        assert rows == expected
    conventions = printed_rows(everything, "The GRU's conventions")
    assert [[plain(c) for c in r] for r in page_table("gates", "gru_conventions")] == conventions


@pytest.mark.process
def test_highway_prints_what_the_page_computes(everything):
    rows = printed_rows(everything, "The gradient along the cell")
    by_gate = {r[0]: r[1:] for r in rows}
    # The page's snippets: 0.9 over 8 steps, 0.99 over 100 and 500, 0.5 over 50, and both horizons.
    assert float(by_gate["0.9"][0]) == pytest.approx(memory.decay(0.9, 8), rel=1e-5)
    assert float(by_gate["0.99"][2]) == pytest.approx(memory.decay(0.99, 100), rel=1e-5)
    assert f"{float(by_gate['0.99'][3]):.2%}" == f"{memory.decay(0.99, 500):.2%}"
    assert f"{float(by_gate['0.5'][1]):.1e}" == f"{memory.decay(0.5, 50):.1e}"
    assert by_gate["0.99"][-1] == f"{memory.horizon(0.99):.1f}" and by_gate["0.5"][-1] == f"{memory.horizon(0.5):.1f}"


def test_help_documents_every_option(capsys):
    with pytest.raises(SystemExit) as info:
        main(["gated", "--help"])
    assert info.value.code == 0
    done = capsys.readouterr()
    for option in (
        "--highway",
        "--bias",
        "--step",
        "--params",
        "--gates",
        "--steps",
        "--level",
        "--biases",
        "--bias-steps",
        "--d",
        "--hidden",
    ):
        assert re.search(rf"^\s+{option}\b.*\S", done.out, re.M), option


@pytest.mark.parametrize(
    "args, named",
    [
        (["--gates", "1.5"], "argument --gates"),
        (["--gates", "x"], "argument --gates"),
        (["--steps", "-1"], "argument --steps"),
        (["--level", "0"], "argument --level"),
        (["--bias-steps", "2.5"], "argument --bias-steps"),
        (["--biases", "nan"], "argument --biases"),
        (["--d", "0"], "argument --d"),
        (["--hidden", "many"], "argument --hidden"),
    ],
)
def test_bad_input_exits_2_with_usage_naming_the_argument(args, named, capsys):
    with pytest.raises(SystemExit) as info:
        main(["gated", *args])
    out, err = capsys.readouterr()
    assert info.value.code == 2 and out == ""
    assert err.startswith("usage: python -m rnnmem gated") and named in err


@pytest.mark.process
def test_bad_input_from_the_shell_exits_2_with_usage():
    done = gated("--gates", "2")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("usage: python -m rnnmem gated") and "argument --gates" in done.stderr


@pytest.mark.process
def test_an_unknown_option_exits_2_naming_it():
    done = gated("--steep")
    assert done.returncode == 2 and done.stderr.startswith("usage: python -m rnnmem")
    assert "unrecognized arguments: --steep" in done.stderr


def test_every_option_has_its_help_text():
    from rnnmem.cli import build_parser

    _, parsers = build_parser()
    for action in parsers["gated"]._actions:
        assert action.help and action.help.strip(), action.option_strings

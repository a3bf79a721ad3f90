"""`python -m rnnmem bptt`: the worked tables, the gradient check and both gate examples, as the pages show them.

The credit and distance tables are compared cell by cell with the tables the
chapter's builders render from the chapter's own directive arguments; the
check and the gate examples with the functions the chapter's snippets call.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from rnnmem import bptt, gate_arithmetic
from rnnmem.cli import main
from rnnmem.site import registry
from rnnmem.site.directives import find_directives
from rnnmem.site.render import RESERVED

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rnnmem", "bptt", *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def page_table(name: str) -> list[list[str]]:
    text = (ROOT / "docs" / "chapters" / "error-backward.md").read_text()
    (directive,) = [d for d in find_directives(text, "error-backward") if d.name == name]
    args = {k: v for k, v in directive.args.items() if k not in RESERVED}
    return [[str(c) for c in row] for row in registry.get("table", name).func(**args).rows]


def printed_rows(out: str, title: str) -> list[list[str]]:
    block = out.split(title, 1)[1].split("\n\n", 1)[0].splitlines()[3:]
    return [re.split(r" {2,}", line.strip()) for line in block]


@pytest.fixture(scope="module")
def out() -> str:
    done = run()
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.process
def test_the_credit_table_is_the_pages(out):
    assert printed_rows(out, "Backward through h_t") == page_table("bptt_table")
    assert f"dL/dw = {bptt.scalar_bptt([1, 0, 0], 1.0, 0.5).gradient}" in out


@pytest.mark.process
def test_the_distance_table_is_the_pages(out):
    assert printed_rows(out, "The multiplier after n edges") == page_table("distance_table")


@pytest.mark.process
def test_the_finite_difference_check_and_the_update(out):
    r = bptt.scalar_bptt([1, 0, 0], 1.0, 0.5, learning_rate=0.1)
    fd = bptt.finite_difference_gradient([1, 0, 0], 1.0, 0.5)
    check = out.split("The gradient, checked\n", 1)[1]
    assert re.search(rf"by backpropagation through time +{r.gradient}\n", check)
    assert re.search(rf"by central differences, eps=1e-06 +{round(fd, 9)}\n", check)
    assert f"= {r.updated_w:.12g}\n" in check
    assert f"new last state {round(r.updated_states[-1], 12)}, new loss {round(r.updated_loss, 13)}" in check


@pytest.mark.process
def test_both_gate_examples(out):
    u = gate_arithmetic.lstm_update(0.8, f=0.9, i=0.2, g=0.5, o=0.75)
    g = gate_arithmetic.gru_update(0.8, z=0.9, r=0.25)
    examples = out.split("Two gate examples", 1)[1]
    assert f"new cell {u.c:.6g}" in examples and f"= {u.h:.6f}\n" in examples
    assert f"n = tanh(0.2) = {g.n:.6f}" in examples and examples.rstrip().endswith(f"= {g.h:.6f}")


def test_options_change_the_tables(capsys):
    assert main(["bptt", "--w", "1.5", "--factors", "0.9", "--distances", "3"]) == 0
    done = capsys.readouterr()
    assert printed_rows(done.out, "Backward through h_t")[-1][-1].endswith(
        str(bptt.scalar_bptt([1, 0, 0], 1.0, 1.5).contributions[-1])
    )
    assert printed_rows(done.out, "The multiplier after n edges") == [["3", str(0.9**3)]]


def test_help_documents_every_option(capsys):
    with pytest.raises(SystemExit) as info:
        main(["bptt", "--help"])
    assert info.value.code == 0
    done = capsys.readouterr()
    for option in ("--inputs", "--target", "--w", "--learning-rate", "--eps", "--factors", "--distances"):
        assert re.search(rf"^\s+{option}\b.*\S", done.out, re.M), option


@pytest.mark.parametrize(
    "args, named",
    [
        (["--w", "x"], "argument --w"),
        (["--w", "inf"], "argument --w"),
        (["--learning-rate", "0"], "argument --learning-rate"),
        (["--eps", "-1e-6"], "argument --eps"),
        (["--inputs"], "argument --inputs"),
        (["--factors", "-0.5"], "argument --factors"),
        (["--distances", "1.5"], "argument --distances"),
        (["--target", "nan"], "argument --target"),
    ],
)
def test_bad_input_exits_2_with_usage_naming_the_argument(args, named, capsys):
    with pytest.raises(SystemExit) as info:
        main(["bptt", *args])
    out, err = capsys.readouterr()
    assert info.value.code == 2 and out == ""
    assert err.startswith("usage: python -m rnnmem bptt") and named in err


@pytest.mark.process
def test_bad_input_from_the_shell_exits_2_with_usage():
    done = run("--w", "x")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("usage: python -m rnnmem bptt") and "argument --w" in done.stderr


def test_every_option_has_its_help_text():
    from rnnmem.cli import build_parser

    _, parsers = build_parser()
    for action in parsers["bptt"]._actions:
        assert action.help and action.help.strip(), action.option_strings

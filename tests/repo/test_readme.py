"""The README's snippet runs as printed, like every snippet of the book."""

from doctest import ELLIPSIS, NORMALIZE_WHITESPACE
from pathlib import Path

from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_snippets_run_as_printed():
    document = Sybil(
        parsers=[PythonCodeBlockParser(doctest_optionflags=ELLIPSIS | NORMALIZE_WHITESPACE)], patterns=["*.md"]
    ).parse(README)
    examples = list(document)
    assert examples, "the README shows a snippet; it must be collected"
    for example in examples:
        example.evaluate()


def test_readme_starts_with_the_two_commands():
    lines = [line for line in README.read_text().splitlines() if line.strip()]
    assert lines[0].startswith("# ")
    assert lines[1] == "```sh"
    assert lines[2].startswith("make serve") and lines[3].startswith("make test")

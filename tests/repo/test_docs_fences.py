"""Sybil runs exactly the ```python blocks the site's lexer finds, and no other.

The rule ``fences`` of rnnmem.site.check (run on every page by
tests/repo/test_page_rules.py, and by `make test-chapter`) refuses Python that
the tests would not run: a block fenced ```py or ```python title="...", a >>>
prompt outside a fence. It rests on two facts checked here: Sybil collects
every ```python block the lexer (rnnmem.site.markdown) finds, and Sybil really
skips the other fences.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser

from rnnmem.site import check
from rnnmem.site.markdown import lex

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(DOCS.rglob("*.md"))


def scan(text: str):
    """(line, info, body_lines) for every fenced block: the fences of the site's one lexer (rnnmem.site.markdown)."""
    return [(f.line, f.info, list(f.body)) for f in lex(text).fences]


def _line(where: str) -> int:
    """The line number of Sybil's ``line N, column M``."""
    m = re.match(r"line (\d+)", where)
    assert m, where
    return int(m.group(1))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_sybil_collects_every_python_block(page):
    blocks = scan(page.read_text(encoding="utf-8"))
    expected = sum(1 for _, info, _ in blocks if info == "python")
    sybil = Sybil(parsers=[PythonCodeBlockParser()], patterns=["*.md"])
    document = sybil.parse(page)
    # A doctest block gives one example per >>> statement; a code block gives one example.
    example_lines = {_line(document.line_column(e.region.start)) for e in document}
    found_blocks = sum(
        1
        for line, info, body in blocks
        if info == "python" and any(line <= n <= line + len(body) + 1 for n in example_lines)
    )
    assert found_blocks == expected, f"{page}: Sybil sees {found_blocks} of {expected} ```python blocks"


def test_sybil_itself_skips_those_fences(tmp_path):
    """The reason for this file: confirm Sybil really does not run such blocks."""
    page = tmp_path / "p.md"
    page.write_text('```py\n>>> 1 + 1\n3\n```\n\n```python title="x"\n>>> 1 + 1\n3\n```\n')
    document = Sybil(parsers=[PythonCodeBlockParser(), SkipParser()], patterns=["*.md"]).parse(page)
    assert list(document) == []
    # and the rule refuses both
    assert [p.line for p in check.fence_problems("docs/p.md", page.read_text())] == [1, 6]

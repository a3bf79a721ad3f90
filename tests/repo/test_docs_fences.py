"""No page hides Python from Sybil.

Sybil runs ```python blocks only. A block fenced ```py, ```python3, ```pycon,
```python title="...", or an indented block with >>> prompts, would be shown
on the site but silently never run. These tests fail on any such block, and
check that Sybil collects exactly the ```python blocks this scan finds.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser

from rnnmem.site.markdown import lex

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
PYTHONISH = re.compile(r"^\{?\s*\.?(py|python|python3|pycon|ipython|py3)\b", re.IGNORECASE)
NUMPY_SCALAR_REPR = re.compile(r"\bnp\.(float|int|bool|complex)\w*\(")


def scan(text: str):
    """(line, info, body_lines) for every fenced block, and the bare >>> lines outside fences.

    The fences are those of the site's one lexer (rnnmem.site.markdown), the
    one the directives, the notebooks and the page rewriting use.
    """
    doc = lex(text)
    blocks = [(f.line, f.info, list(f.body)) for f in doc.fences]
    return blocks, doc.loose_prompts()


def test_pages_exist():
    assert PAGES, f"no Markdown pages under {DOCS}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_python_block_is_one_sybil_runs(page):
    blocks, loose = scan(page.read_text(encoding="utf-8"))
    problems = []
    for line, info, body in blocks:
        if info != "python" and (PYTHONISH.match(info) or any(b.lstrip().startswith(">>>") for b in body)):
            problems.append(
                f"{page.relative_to(DOCS.parent)}:{line}: fence ```{info} is not run by the tests; "
                "write it as ```python (nothing after the word)"
            )
    for line in loose:
        problems.append(
            f"{page.relative_to(DOCS.parent)}:{line}: a >>> prompt outside a ```python fence is shown but never run"
        )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_no_fence_or_comment_is_left_open(page):
    problems = [
        f"{page.relative_to(DOCS.parent)}:{line}: {message}"
        for line, message in lex(page.read_text(encoding="utf-8")).problems
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_sybil_collects_every_python_block(page):
    blocks, _ = scan(page.read_text(encoding="utf-8"))
    expected = sum(1 for _, info, _ in blocks if info == "python")
    sybil = Sybil(parsers=[PythonCodeBlockParser()], patterns=["*.md"])
    document = sybil.parse(page)
    # A doctest block gives one example per >>> statement; a code block gives one example.
    example_lines = {int(re.match(r"line (\d+)", document.line_column(e.region.start)).group(1)) for e in document}
    found_blocks = sum(
        1
        for line, info, body in blocks
        if info == "python" and any(line <= n <= line + len(body) + 1 for n in example_lines)
    )
    assert found_blocks == expected, f"{page}: Sybil sees {found_blocks} of {expected} ```python blocks"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_outputs_are_readable_and_skips_give_reasons(page):
    text = page.read_text(encoding="utf-8")
    problems = []
    for n, line in enumerate(text.splitlines(), 1):
        if NUMPY_SCALAR_REPR.search(line) and not line.lstrip().startswith((">>>", "...")):
            problems.append(
                f"{page.relative_to(DOCS.parent)}:{n}: expected output shows a numpy scalar repr; "
                "print a Python float (float(x), round(x, k)) instead"
            )
        if re.match(r"\s*<!--\s*skip\s*:", line) and "reason" not in line:
            problems.append(f"{page.relative_to(DOCS.parent)}:{n}: a Sybil skip must state its reason")
    assert not problems, "\n".join(problems)


def test_the_scan_catches_hidden_blocks():
    text = '# t\n\n```py\n>>> 1\n1\n```\n\n```python title="x"\nprint(1)\n```\n\n    >>> 2\n    2\n'
    blocks, loose = scan(text)
    infos = [info for _, info, _ in blocks]
    assert infos == ["py", 'python title="x"']
    assert all(PYTHONISH.match(i) for i in infos)
    assert loose == [12]


def test_sybil_itself_skips_those_fences(tmp_path):
    """The reason for this file: confirm Sybil really does not run such blocks."""
    page = tmp_path / "p.md"
    page.write_text('```py\n>>> 1 + 1\n3\n```\n\n```python title="x"\n>>> 1 + 1\n3\n```\n')
    document = Sybil(parsers=[PythonCodeBlockParser(), SkipParser()], patterns=["*.md"]).parse(page)
    assert list(document) == []

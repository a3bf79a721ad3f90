"""Every line of a page's ```python blocks fits the code column without scrolling.

At 1280 px the code column of a page holds about 80 characters of the site's
monospace font, less inside an admonition (an exercise's answer); 72 leaves room
for that and for the copy button. One test over every page lists every line
that is longer, as ``docs/page.md:line (N characters)``, so a page is reflowed
in one pass. Output lines count too: the reader sees them in the same block.
"""

from __future__ import annotations

from pathlib import Path

from rnnmem.site.markdown import lex

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
MAX_CHARS = 72


def long_lines(text: str, limit: int = MAX_CHARS) -> list[tuple[int, int]]:
    """(line number, width) of each line of a ```python block wider than ``limit`` characters.

    The width is the line as shown: without the indentation that nests the block
    in a list or an admonition, tabs counted as the four spaces Markdown makes them.
    """
    found = []
    for fence in lex(text).fences:
        if fence.info != "python":
            continue
        for offset, line in enumerate(fence.body, start=1):
            width = len(line.rstrip().expandtabs(4))
            if width > limit:
                found.append((fence.line + offset, width))
    return found


def test_long_lines_are_found_with_their_page_lines():
    text = (
        "Text\n\n```python\n>>> x = 1\n>>> y = '" + "a" * 80 + "'\n```\n\n"
        '??? success "Answer"\n\n    ```python\n    ' + "b" * 73 + "\n    ```\n"
    )
    assert long_lines(text) == [(5, 90), (11, 73)]
    assert long_lines("```text\n" + "c" * 100 + "\n```\n") == []  # only the Python the tests run
    assert long_lines("```python\n" + "d" * 72 + "\n```\n") == []


def test_pages_exist():
    assert PAGES, f"no Markdown pages under {DOCS}"


def test_no_code_line_is_wider_than_the_code_column():
    problems = [
        f"{page.relative_to(DOCS.parent)}:{line} ({width} characters)"
        for page in PAGES
        for line, width in long_lines(page.read_text(encoding="utf-8"))
    ]
    assert not problems, (
        f"{len(problems)} lines of ```python blocks are wider than {MAX_CHARS} characters "
        "and scroll sideways on the page; wrap them:\n" + "\n".join(problems)
    )

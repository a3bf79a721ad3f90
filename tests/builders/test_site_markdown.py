"""The one Markdown lexer, and what the site builds from it: fences, comments, indented blocks."""

from __future__ import annotations

import pytest

from rnnmem.site import notebook
from rnnmem.site.book import Book
from rnnmem.site.directives import DirectiveError, find_directives
from rnnmem.site.griffe_doctests import fence_examples
from rnnmem.site.markdown import lex


def test_a_four_backtick_fence_is_not_closed_by_three():
    text = "````markdown\n```python\nx = 1\n```\n````\n\nafter\n"
    (fence,) = lex(text).fences
    assert (fence.line, fence.end_line, fence.closed) == (1, 5, True)
    assert fence.body == ("```python", "x = 1", "```")


def test_a_longer_fence_closes_a_shorter_one():
    text = "````python\nx = 1\n`````\n\n```python\ny = 2\n```\n"
    fences = lex(text).fences
    assert [(f.line, f.end_line, f.info) for f in fences] == [(1, 3, "python"), (5, 7, "python")]


def test_closing_fence_rules_char_and_trailing_text():
    text = "```\na\n~~~\n``` not a close\n```\n"
    (fence,) = lex(text).fences
    assert fence.end_line == 5 and fence.body == ("a", "~~~", "``` not a close")


def test_an_unclosed_fence_is_a_problem_with_its_line():
    doc = lex("# T\n\n````python\nx = 1\n```\n\nrest of the page\n")
    assert doc.problems and doc.problems[0][0] == 3 and "never closed" in doc.problems[0][1]


def test_indented_fence_closes_within_its_container():
    text = (
        '1. Q\n\n    ??? success "Answer"\n        ```python\n        >>> 1\n        1\n        ```\n\n'
        "        More text.\n"
    )
    (fence,) = lex(text).fences
    assert (fence.line, fence.end_line, fence.indent) == (4, 7, "        ")
    assert fence.body == (">>> 1", "1")


def test_comments_in_code_and_inline_code_are_not_comments():
    text = (
        "Write `<!-- figure: x -->` in a page.\n\n"
        "    <!-- table: in_indented_code -->\n\n"
        "````markdown\n    ```markdown\n    <!-- figure: inside_indented_fence -->\n    ```\n````\n"
        "<!-- real -->\n"
    )
    doc = lex(text)
    assert [c.text for c in doc.comments] == ["<!-- real -->"]
    assert doc.indented_code == [(3, 3)]


def test_fenced_directive_examples_are_never_expanded():
    text = (
        "# T\n\n!!! example\n    ````markdown\n    ```markdown\n    <!-- figure: no_such_builder -->\n"
        "    ```\n    ````\n\n```markdown\n<!-- table: nor_this -->\n```\n"
    )
    assert find_directives(text, "docs/p.md") == []


def test_a_comment_that_would_swallow_a_directive_fails_with_page_and_line():
    text = '# T\n\n<!-- TODO: write the intro\n\nA paragraph.\n\n<!-- figure: decay_curves caption="c" -->\n\nMore.\n'
    with pytest.raises(DirectiveError) as info:
        find_directives(text, "docs/chapters/c.md")
    message = str(info.value)
    assert message.startswith("docs/chapters/c.md:3: ") and "line 7" in message and "do not nest" in message


def test_an_unclosed_comment_fails_with_page_and_line():
    with pytest.raises(DirectiveError, match=r"docs/p.md:3: an HTML comment opened here is never closed"):
        find_directives("a\n\n<!-- TODO\n\n<!-- figure: x", "docs/p.md")


def test_a_directive_sharing_its_line_with_text_fails():
    with pytest.raises(DirectiveError, match=r"(?s)p.md:1: .*must stand on a line of its own"):
        find_directives('Text <!-- figure: decay_curves caption="c" -->\n', "p.md")


ANSWER = (
    '# T\n\n1. Question?\n\n    ??? success "Answer"\n        Look:\n\n'
    '        <!-- figure: decay_curves factors=[0.5] steps=5 caption="Half." -->\n\n'
    "        And this text stays text.\n\n"
    "        <!-- table: horizon_table factors=[0.5] -->\n\n"
    "        The end of the answer.\n"
)


def test_a_directive_in_an_answer_expands_indented(tmp_path):
    book = Book(tmp_path, repo_url="https://github.com/o/r", cache_dir=tmp_path / "cache")
    book.add_page("p.md", ANSWER)
    book.render()
    out = book.page_markdown("p.md", ANSWER)
    lines = out.split("\n")
    start = next(i for i, line in enumerate(lines) if "<figure" in line)
    end = next(i for i, line in enumerate(lines) if "</figure>" in line)
    assert all(line.startswith("        ") for line in lines[start : end + 1]), lines[start : end + 1]
    table = [line for line in lines if line.lstrip().startswith("|")]
    assert table and all(line.startswith("        |") for line in table)
    assert "        </div>" in lines
    assert "        And this text stays text." in lines


def test_the_notebook_cell_ends_where_the_fence_ends():
    text = "# A\n\n````python\nx = 1\n```\ny = 2\n`````\n\n## B\n\n```python\nz = 3\n```\n"
    blocks = notebook.python_blocks(text)
    assert [(b.heading, b.source) for b in blocks] == [("A", "x = 1\n```\ny = 2"), ("B", "z = 3")]


def test_console_fences_follow_the_same_fences():
    text = "````python\n>>> 1\n1\n```\n````\n\n```python\nx = 1\n```\n"
    out = Book._console_fences(text).split("\n")
    assert out[0] == "````pycon" and out[6] == "```python"


def test_docstring_examples_in_a_long_fence_are_left_alone():
    text = "Text.\n\n````markdown\n```\n>>> 1\n````\n\n>>> 2\n2\n"
    out = fence_examples(text).split("\n")
    assert out[:6] == ["Text.", "", "````markdown", "```", ">>> 1", "````"]
    assert out[7:] == ["```pycon", ">>> 2", "2", "```", ""]

"""Chapters, figures, tables and equations numbered, and the references to them (rnnmem.site.numbering)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rnnmem.site import notebook
from rnnmem.site.book import Book, unwrap_nested_blocks
from rnnmem.site.check import nav_chapters
from rnnmem.site.directives import DirectiveError, find_directives
from rnnmem.site.mathjax import find_math
from rnnmem.site.numbering import (
    Numbering,
    NumberingError,
    chapter_order,
    chapters_from_config,
    display_equations,
    equation_html,
)

ROOT = Path(__file__).resolve().parents[2]

# A chapter with, in page order: equation, figure, table, figure inside an answer, equation, unnumbered equation.
ONE = """# First chapter

$$
x = 1 \\label{first}
$$

<!-- figure: decay_curves factors=[0.5] steps=5 id="decay" caption="Half, as @eq:first says." -->

<!-- table: horizon_table factors=[0.5] -->

1. Question?

    ??? success "Answer"
        See below.

        <!-- figure: decay_curves factors=[0.9] steps=5 caption="Nine tenths." -->

        $$
        y = 2
        $$

$$
z = 3 \\notag
$$

See @fig:decay, @tab:two-horizons, @eq:first and @ch:two. Not `@fig:decay`, nor \\@fig:decay.

```python
# @fig:decay stays code
```
"""

TWO = """# Second chapter

<!-- table: horizon_table factors=[0.9] id="two-horizons" caption="See @fig:decay." -->

Back to @fig:decay and @eq:first.
"""


def numbering(chapters=("chapters/one.md", "chapters/two.md"), pages=None) -> Numbering:
    pages = pages or {"chapters/one.md": ONE, "chapters/two.md": TWO}
    index = Numbering(list(chapters))
    for src, text in pages.items():
        index.add_page(src, text, find_directives(text, f"docs/{src}"))
    return index


def test_chapters_follow_the_nav_order():
    nav = [
        {"Home": "index.md"},
        {"Chapters": [{"B": "chapters/b.md"}, {"A": "chapters/a.md"}]},
        {"References": "references.md"},
    ]
    assert chapter_order(nav) == ["chapters/b.md", "chapters/a.md"]
    assert chapter_order([{"Home": "index.md"}]) == []
    # The book's own nav, read as MkDocs reads it, is the Chapters section in order.
    assert chapters_from_config(ROOT / "mkdocs.yml") == [path for _, path in nav_chapters(ROOT / "mkdocs.yml")]


def test_items_are_numbered_per_chapter_in_page_order():
    index = numbering()
    one = [(t.kind, t.number, t.anchor) for t in index.pages["chapters/one.md"]]
    assert one == [
        ("eq", "1.1", "eq-first"),
        ("fig", "1.1", "fig-decay"),
        ("tab", "1.1", "tab-1-1"),
        ("fig", "1.2", "fig-1-2"),
        ("eq", "1.2", "eq-1-2"),
    ]  # the \notag equation has no number
    two = [(t.kind, t.number, t.anchor) for t in index.pages["chapters/two.md"]]
    assert two == [("tab", "2.1", "tab-two-horizons")]


def test_reordering_the_nav_renumbers_everything():
    index = numbering(chapters=("chapters/two.md", "chapters/one.md"))
    assert index.resolve("fig", "decay", "x").label == "Figure 2.1"
    assert index.resolve("tab", "two-horizons", "x").label == "Table 1.1"
    assert index.resolve("ch", "one", "x").label == "Chapter 2"
    out = index.rewrite("chapters/one.md", ONE)
    assert out.startswith('# <span class="rnnmem-chapter-number">Chapter 2</span> First chapter { #first-chapter }')


def test_references_become_links_on_the_page_and_across_pages():
    index = numbering()
    one = index.rewrite("chapters/one.md", ONE)
    assert (
        "See [Figure 1.1](#fig-decay), [Table 2.1](two.md#tab-two-horizons), [(1.1)](#eq-first) "
        "and [Chapter 2](two.md)."
    ) in one
    two = index.rewrite("chapters/two.md", TWO)
    assert "Back to [Figure 1.1](one.md#fig-decay) and [(1.1)](one.md#eq-first)." in two
    # Across folders the link is relative to the page.
    index = numbering(
        chapters=("chapters/one.md", "chapters/two.md", "intro.md"),
        pages={"chapters/one.md": ONE, "chapters/two.md": TWO, "intro.md": "# I\n\n@fig:decay\n"},
    )
    assert "[Figure 1.1](chapters/one.md#fig-decay)" in index.rewrite("intro.md", "# I\n\n@fig:decay\n")


def test_code_comments_and_escaped_references_are_left_alone():
    out = numbering().rewrite("chapters/one.md", ONE)
    assert "Not `@fig:decay`, nor @fig:decay." in out
    assert "# @fig:decay stays code" in out
    assert 'caption="Half, as @eq:first says."' in out  # the directive itself is expanded by the Book
    indented = "# T\n\nText.\n\n    @fig:nothing in an indented code block\n"
    assert (
        numbering(pages={"chapters/one.md": indented})
        .rewrite("chapters/one.md", indented)
        .endswith("    @fig:nothing in an indented code block\n")
    )


def test_equations_carry_their_number_to_the_html():
    out = numbering().rewrite("chapters/one.md", ONE)
    assert "$$\n%rnnmem-eq eq-first 1.1\nx = 1 \n$$" in out
    assert "        $$\n        %rnnmem-eq eq-1-2 1.2\n        y = 2\n        $$" in out  # inside the answer
    assert "$$\nz = 3 \n$$" in out and "\\notag" not in out and "\\label" not in out
    # A label on a line of its own leaves no blank line behind (a blank line would end the $$ block).
    alone = numbering().rewrite("chapters/one.md", ONE.replace("x = 1 \\label{first}", "x = 1 ,\n\\label{first}"))
    assert "$$\n%rnnmem-eq eq-first 1.1\nx = 1 ,\n$$" in alone
    # As pymdownx.arithmatex renders it, then as MathJax reads it: the marker is gone, the TeX is intact.
    anchors: set[str] = set()
    html = equation_html('<div class="arithmatex">\\[\n%rnnmem-eq eq-first 1.1\nx = 1\n\\]</div>', anchors)
    assert html == (
        '<div class="rnnmem-equation" id="eq-first"><div class="arithmatex">\\[\nx = 1\n\\]</div>'
        '<span class="rnnmem-equation-number">(1.1)</span></div>'
    )
    assert anchors == {"eq-first"}
    assert [(tex, display) for _, _, tex, display in find_math(html)] == [("x = 1", True)]


def test_a_missing_target_fails_with_page_line_and_the_known_ids():
    text = "# T\n\nSee\n@fig:decai here.\n"
    index = numbering(pages={"chapters/one.md": ONE, "chapters/two.md": text})
    with pytest.raises(
        NumberingError,
        match=r"docs/chapters/two.md:4: @fig:decai: no figure has the id 'decai'; did you mean 'decay'\? .*"
        r"the figure ids are: decay",
    ):
        index.rewrite("chapters/two.md", text)
    with pytest.raises(
        NumberingError,
        match=r"docs/chapters/two.md:2: @ch:three: no chapter is named 'three'; "
        r"the chapters are: one, two",
    ):
        index.rewrite("chapters/two.md", "\n@ch:three\n")
    with pytest.raises(NumberingError, match=r"the equation ids are: first"):
        index.rewrite("chapters/two.md", "@eq:second\n")
    with pytest.raises(NumberingError, match=r"no chapter is named 'tow'; did you mean 'two'\?; the chapters are"):
        index.rewrite("chapters/two.md", "\n@ch:tow\n")
    assert issubclass(NumberingError, DirectiveError)  # the hook turns it into a failed build


def test_duplicate_and_malformed_ids_fail():
    dup = "# T\n\n$$\na \\label{first}\n$$\n"
    with pytest.raises(
        NumberingError,
        match=r"docs/chapters/two.md:3: the equation id 'first' is used twice: "
        r"also at docs/chapters/one.md:3",
    ):
        numbering(pages={"chapters/one.md": ONE, "chapters/two.md": dup})
    same_page = (
        '<!-- table: horizon_table factors=[0.5] id="t" -->\n\n<!-- table: horizon_table factors=[0.9] id="t" -->\n'
    )
    with pytest.raises(
        NumberingError,
        match=r"(?s)chapters/one.md:3: .*the table id 't' is already used on "
        r"this page, by the table at line 1",
    ):
        numbering(pages={"chapters/one.md": same_page})
    with pytest.raises(NumberingError, match=r"(?s)chapters/one.md:1: .*id must be lower-case letters.*got 'Decay'"):
        numbering(pages={"chapters/one.md": '<!-- table: horizon_table factors=[0.5] id="Decay" -->\n'})
    with pytest.raises(NumberingError, match=r"one \\label, this one has 2"):
        numbering(pages={"chapters/one.md": "$$\na \\label{a} b \\label{b}\n$$\n"})
    with pytest.raises(NumberingError, match=r"chapters/one.md:1: a \$\$ display equation opened here is never"):
        numbering(pages={"chapters/one.md": "$$\na\n"})
    # A figure and a table may share an id: their anchors differ.
    both = (
        '<!-- figure: decay_curves factors=[0.5] id="x" caption="c" -->\n\n'
        '<!-- table: horizon_table factors=[0.5] id="x" -->\n'
    )
    assert [t.anchor for t in numbering(pages={"chapters/one.md": both}).pages["chapters/one.md"]] == ["fig-x", "tab-x"]


def test_pages_outside_the_chapters_number_nothing():
    home = "# Home\n\n$$\na \\label{home}\n$$\n\n<!-- table: horizon_table factors=[0.5] -->\n"
    index = numbering(pages={"chapters/one.md": ONE, "index.md": home})
    assert [(t.number, t.anchor) for t in index.pages["index.md"]] == [("", "eq-home"), ("", "")]
    out = index.rewrite("index.md", home)
    assert out.startswith("# Home\n") and "%rnnmem-eq eq-home -" in out
    assert equation_html('<div class="arithmatex">\\[\n%rnnmem-eq eq-home -\na\n\\]</div>').endswith(
        "</div></div>"
    )  # an anchor, no number
    with pytest.raises(NumberingError, match=r"@eq:home: the equation at docs/index.md:3 is on a page outside"):
        index.rewrite("chapters/one.md", "@eq:home\n")


def test_display_equations_are_found_as_arithmatex_reads_them():
    text = (
        "a\n\n$$ x = 1 $$\n\n> quote\n\n$$\n\\begin{aligned}\na &= b\n\\end{aligned}\n$$\n\n    $$\n    code\n    $$\n"
    )
    found = display_equations(text)
    assert [(e.line, e.end_line, e.tex.strip()) for e in found] == [
        (3, 3, "x = 1"),
        (7, 11, "\\begin{aligned}\na &= b\n\\end{aligned}"),
    ]


def test_the_book_labels_figures_tables_and_equations(tmp_path):
    (tmp_path / "docs" / "chapters").mkdir(parents=True)
    book = Book(
        tmp_path / "docs",
        repo_url="https://github.com/o/r",
        cache_dir=tmp_path / "cache",
        chapters=["chapters/one.md", "chapters/two.md"],
    )
    book.add_page("chapters/one.md", ONE)
    book.add_page("chapters/two.md", TWO)
    book.render()
    one = book.page_markdown("chapters/one.md", ONE)
    assert '<figure class="rnnmem-figure" id="fig-decay" markdown="span">' in one
    assert (
        '<figcaption markdown="span"><span class="rnnmem-label">Figure 1.1.</span> Half, as [(1.1)](#eq-first) '
        "says.</figcaption>"
    ) in one
    assert "![Half, as (1.1) says.]" in one  # the alt text has the reference as text
    assert '<div class="rnnmem-table" id="tab-1-1" markdown>' in one
    assert '<p class="rnnmem-table-caption" markdown="span"><span class="rnnmem-label">Table 1.1.</span></p>' in one
    # The figure inside the answer is numbered in page order, and stays indented in its block.
    assert any(
        line.startswith('        <figure class="rnnmem-figure" id="fig-1-2" markdown="span">')
        for line in one.split("\n")
    )
    assert '<span class="rnnmem-label">Figure 1.2.</span> Nine tenths.' in one
    two = book.page_markdown("chapters/two.md", TWO)
    assert (
        '<p class="rnnmem-table-caption" markdown="span"><span class="rnnmem-label">Table 2.1.</span> '
        "See [Figure 1.1](one.md#fig-decay).</p>"
    ) in two
    # Determinism: a second book gives the same pages.
    again = Book(
        tmp_path / "docs",
        repo_url="https://github.com/o/r",
        cache_dir=tmp_path / "cache",
        chapters=["chapters/one.md", "chapters/two.md"],
    )
    again.add_page("chapters/one.md", ONE)
    again.add_page("chapters/two.md", TWO)
    again.render()
    assert again.page_markdown("chapters/one.md", ONE) == one
    # Nested figures and tables, finished as at the top level, keep their anchors.
    html = unwrap_nested_blocks(
        '<p><figure class="rnnmem-figure" id="fig-1-2" markdown="span"><img/></figure></p>'
        '<div class="rnnmem-table" id="tab-1-1" markdown>'
    )
    assert html == '<figure class="rnnmem-figure" id="fig-1-2"><img/></figure><div class="rnnmem-table" id="tab-1-1">'


def test_a_bad_reference_fails_the_book_or_shows_while_serving(tmp_path):
    text = "# T\n\nSee @tab:none.\n"
    book = Book(tmp_path, repo_url="https://github.com/o/r", cache_dir=tmp_path / "cache", chapters=["chapters/t.md"])
    book.add_page("chapters/t.md", text)
    with pytest.raises(NumberingError, match=r"docs/chapters/t.md:3: @tab:none"):
        book.page_markdown("chapters/t.md", text)
    serving = Book(
        tmp_path,
        repo_url="https://github.com/o/r",
        cache_dir=tmp_path / "cache",
        chapters=["chapters/t.md"],
        keep_going=True,
    )
    serving.add_page("chapters/t.md", text)
    assert "docs/chapters/t.md:3: @tab:none" in serving.page_markdown("chapters/t.md", text)


def test_notebooks_show_references_as_text():
    text = "# T\n\n## Reading @fig:decay\n\n```python\nx = '@fig:decay'\n```\n"
    index = numbering(pages={"chapters/one.md": ONE, "chapters/two.md": text})
    plain = index.plain("chapters/two.md", text)
    assert "## Reading Figure 1.1\n" in plain and "x = '@fig:decay'" in plain
    nb = notebook.chapter_notebook(plain, slug="two", title="T", page_url="u", repo_url="https://github.com/o/r")
    assert "Reading Figure 1.1" in nb and "@fig" not in nb.replace("'@fig:decay'", "")


def test_the_chapter_check_reports_a_bad_reference(tmp_path):
    from rnnmem.site.check import check_chapter

    (tmp_path / "docs" / "chapters").mkdir(parents=True)
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nrepo_url: https://github.com/o/r\nnav:\n"
        "  - Chapters:\n      - A: chapters/a.md\n      - B: chapters/b.md\n"
    )
    (tmp_path / "docs" / "chapters" / "a.md").write_text("# A\n\nAs @eq:b-one and @eq:b-two say.\n")
    (tmp_path / "docs" / "chapters" / "b.md").write_text("# B\n\n$$\nx \\label{b-one}\n$$\n")
    report = check_chapter("a", tmp_path / "mkdocs.yml")
    refs = [str(p) for p in report.problems if p.rule == "cross-references"]
    assert refs == [
        "docs/chapters/a.md:3: cross-references: @eq:b-two: no equation has the id 'b-two'; did you mean 'b-one'? "
        "(give one with \\label{...} "
        "in a $$ equation); the equation ids are: b-one"
    ]


def test_serving_rebuilds_a_page_whose_references_changed_number(tmp_path):
    book = Book(
        tmp_path,
        repo_url="https://github.com/o/r",
        cache_dir=tmp_path / "cache",
        chapters=["chapters/a.md", "chapters/b.md"],
    )
    book.add_page("chapters/a.md", "# A\n\nSee @eq:x.\n")
    book.add_page("chapters/b.md", "# B\n\n$$\nx \\label{x}\n$$\n")
    before = book.keys("chapters/a.md")
    assert before == ("eq:x=2.1",)
    book.add_page("chapters/b.md", "# B\n\n$$\nw\n$$\n\n$$\nx \\label{x}\n$$\n")  # another equation above
    assert book.keys("chapters/a.md") == ("eq:x=2.2",)


def test_references_and_labels_are_not_numbers_a_page_states():
    from rnnmem.site.numbers import check_page

    page = "See @fig:decay-12, \\@tab:gru-35 and\n\n$$\nx \\label{eq-17}\n$$\n\nand 0.73.\n"
    assert [f.number for f in check_page(page, "p.md")] == ["0.73"]


def test_widgets_are_not_numbered_and_keep_the_items_in_step():
    text = (
        "<!-- table: horizon_table factors=[0.5] -->\n\n"
        "<!-- widget: forget_bias_explorer low=-2 high=6 step=0.25 start=1 -->\n\n"
        '<!-- table: horizon_table factors=[0.9] id="after" -->\n'
    )
    index = numbering(pages={"chapters/one.md": text})
    assert index.item("chapters/one.md", 1) is None
    after = index.item("chapters/one.md", 2)
    assert after is not None and (after.anchor, after.number) == ("tab-after", "1.2")


def test_the_chapter_notebook_has_references_as_text(tmp_path):
    text = (
        "# T\n\nAs @tab:rows shows.\n\n"
        '<!-- table: horizon_table factors=[0.5] id="rows" caption="Rows, as @tab:rows." -->\n'
    )
    book = Book(tmp_path, repo_url="https://github.com/o/r", cache_dir=tmp_path / "cache", chapters=["chapters/t.md"])
    book.add_page("chapters/t.md", text)
    book.render()
    nb = book.notebook_text(book.pages["chapters/t.md"])
    assert "As Table 1.1 shows." in nb and "Rows, as Table 1.1." in nb and "@tab" not in nb


# -- sections -------------------------------------------------------------------------------------------------
SECTIONS = """# Third chapter

## Why { #why-anchor }

Text [back](#why-anchor), [ahead](#how-it-goes), [a figure](one.md#fig-decay) and [home](../index.md#top).

```python
## not a heading
```

<!-- ## not a heading either -->

## How it goes

See [the why](three.md#why-anchor) and `[code](#how-it-goes)`.
"""


def test_a_chapters_sections_are_numbered_and_keep_their_anchors():
    chapters = ("chapters/one.md", "chapters/two.md", "chapters/three.md")
    index = numbering(chapters, {"chapters/one.md": ONE, "chapters/two.md": TWO, "chapters/three.md": SECTIONS})
    out = index.rewrite("chapters/three.md", SECTIONS)
    assert '## <span class="rnnmem-section-number">3.1</span> Why { #why-anchor }' in out
    assert '## <span class="rnnmem-section-number">3.2</span> How it goes { #how-it-goes }' in out
    assert "## not a heading" in out and out.count("rnnmem-section-number") == 2  # code and comments left alone
    assert index.section_number("chapters/three.md", "how-it-goes") == "3.2"
    assert index.section_number("chapters/one.md", "fig-decay") is None  # a figure is not a section


def test_a_link_to_a_numbered_section_carries_its_number():
    chapters = ("chapters/one.md", "chapters/two.md", "chapters/three.md")
    pages = {"chapters/one.md": ONE, "chapters/two.md": TWO, "chapters/three.md": SECTIONS}
    index = numbering(chapters, pages)
    out = index.rewrite("chapters/three.md", SECTIONS)
    assert "[back](#why-anchor) (§3.1), [ahead](#how-it-goes) (§3.2)," in out
    assert "[a figure](one.md#fig-decay) and [home](../index.md#top)." in out  # neither is a section
    assert "[the why](three.md#why-anchor) (§3.1) and `[code](#how-it-goes)`." in out
    # from a page outside the chapters, and after the nav is reordered, the number follows the section
    index = numbering(("chapters/three.md", "chapters/one.md", "chapters/two.md"), pages | {"intro.md": "# I\n"})
    assert (
        index.rewrite("intro.md", "[x](chapters/three.md#how-it-goes)") == "[x](chapters/three.md#how-it-goes) (§1.2)"
    )

"""Live captions and prose: placeholders filled from the values builders return, and the numbers check."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import markdown
import pytest

from rnnmem.site import placeholders, registry
from rnnmem.site.book import Book
from rnnmem.site.directives import DirectiveError
from rnnmem.site.numbers import check_page, parse_numbers
from rnnmem.site.render import Item
from rnnmem.site.tables import Table

ROOT = Path(__file__).resolve().parents[2]


def crossing_table(factors: list, floor: float = 1e-4):
    """A table of the first step at which f**n falls below the floor, and the same numbers as values."""
    import math

    steps = {f: math.ceil(math.log(floor) / math.log(f)) for f in factors}
    table = Table(["f", "first step below the floor"], [[f"{f}", f"{n}"] for f, n in steps.items()])
    return table, {"crossing": steps, "slowest": max(steps.values()), "share": 0.5731}


def crossing_figure(factors: list):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1))
    fig.add_subplot().plot(factors)
    return fig, {"count": len(factors), "tiny": 4.317e-05}


def bad_values(factors: list):
    return crossing_table(factors)[0], {"object": object()}


def three_things(factors: list):
    return crossing_table(factors) + (1,)


#: Values that, at the start of a line, would open a block: each is escaped by the placeholders' guard.
WORDS = {
    "zero": 0,
    "three": 3,
    "empty": "",
    "dash": "-",
    "plus": "+",
    "star": "*",
    "hash": "#",
    "quote": ">",
    "pipe": "|",
    "equals": "===",
    "rule": "---",
    "stars": "* * *",
    "fence": "```",
    "tildes": "~~~",
    "bang": "!!!",
    "colon": ":",
    "note": "[note]:",
    "abbr": "*[RNN]:",
    "two_lines": "the first\n- the second",
}


def words_table(factors: list):
    return crossing_table(factors)[0], WORDS


TEST_BUILDERS = (
    ("table", "ph_crossing", crossing_table),
    ("figure", "ph_figure", crossing_figure),
    ("table", "ph_bad_values", bad_values),
    ("table", "ph_three", three_things),
    ("table", "ph_words", words_table),
)


@pytest.fixture(autouse=True, scope="module")
def test_builders():
    """This module's builders, registered for its tests only (the book's own tests see only the book's)."""
    for kind, name, func in TEST_BUILDERS:
        registry.default.add(kind, name, func)
    yield
    for kind, name, _ in TEST_BUILDERS:
        registry.default.remove(kind, name)


def page(tmp_path, markdown: str) -> str:
    book = Book(tmp_path, repo_url="https://github.com/o/r", cache_dir=tmp_path / "cache")
    book.add_page("chapters/p.md", markdown)
    book.render()
    return book.page_markdown("chapters/p.md", markdown)


TABLE = (
    '<!-- table: ph_crossing factors=[0.9, 0.99] id="cross" '
    'caption="The slowest factor needs {{slowest}} steps; 0.99 needs {{crossing[0.99]:.0f}}." -->'
)


def test_a_caption_is_filled_from_the_builders_values(tmp_path):
    out = page(tmp_path, "# T\n\n" + TABLE + "\n")
    assert "The slowest factor needs 917 steps; 0.99 needs 917." in out


def test_prose_reads_the_values_of_an_item_by_its_id(tmp_path):
    out = page(
        tmp_path,
        "# T\n\nIt takes {{cross.crossing[0.9]}} steps, a share of {{cross.share:.1%}}.\n\n"
        + TABLE
        + "\n\n```python\nx = {{cross.slowest}}\n```\n",
    )
    assert "It takes 88 steps, a share of 57.3%." in out
    assert "x = {{cross.slowest}}" in out  # code is left alone


def test_a_figure_takes_its_caption_and_its_alt_text_from_the_values(tmp_path):
    out = page(
        tmp_path,
        '# T\n\n<!-- figure: ph_figure factors=[1, 2, 3] caption="Three lines, $f^n$." '
        'alt="A plot of {{count}} points; the smallest value is {{tiny:sci.1}}." -->\n',
    )
    assert "![A plot of 3 points; the smallest value is 4.3 × 10⁻⁵.]" in out
    assert '<figcaption markdown="span">Three lines, $f^n$.</figcaption>' in out


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "{{slowest:.0f}} and {{fastest}}",
            "'fastest', which is not here; the table builder 'ph_crossing' returns: crossing, share, slowest",
        ),
        ("{{crossing[0.5]}}", "crossing has no '0.5'; it has: 0.9, 0.99"),
        ("{{share:sci.x}}", "write sci or sci.N"),
    ],
)
def test_a_caption_placeholder_naming_no_value_fails_with_page_line_and_the_names(tmp_path, text, message):
    with pytest.raises(DirectiveError) as err:
        page(tmp_path, f'# T\n\n<!-- table: ph_crossing factors=[0.9, 0.99] caption="{text}" -->\n')
    assert "docs/chapters/p.md:3" in str(err.value) and message in str(err.value)


def test_a_prose_placeholder_naming_no_item_fails_with_page_line_and_the_ids(tmp_path):
    with pytest.raises(DirectiveError) as err:
        page(tmp_path, "# T\n\n" + TABLE + "\n\nSee {{decay.slowest}}.\n")
    assert "docs/chapters/p.md:5" in str(err.value) and "ids on this page: cross" in str(err.value)
    with pytest.raises(DirectiveError) as err:
        page(tmp_path, "# T\n\n" + TABLE + "\n\nSee {{cross.fastest}}.\n")
    assert "it has: crossing, share, slowest" in str(err.value)


def test_values_come_back_from_the_cache(tmp_path):
    first = page(tmp_path, "# T\n\n" + TABLE + "\n")
    book = Book(tmp_path, repo_url="https://github.com/o/r", cache_dir=tmp_path / "cache")
    book.add_page("chapters/p.md", "# T\n\n" + TABLE + "\n")
    book.render()
    item = book.pages["chapters/p.md"].items[0]
    assert book.renderer.rendered == [] and isinstance(item, Item) and item.values["slowest"] == 917
    assert book.page_markdown("chapters/p.md", "# T\n\n" + TABLE + "\n") == first


@pytest.mark.parametrize(
    "directive, message",
    [
        ("<!-- table: ph_bad_values factors=[0.9] -->", "must be JSON data"),
        ("<!-- table: ph_three factors=[0.9] -->", "(figure_or_table, values)"),
        ('<!-- figure: ph_figure factors=[1] caption="Same." alt="Same." -->', "alt= repeats the caption"),
        ('<!-- table: ph_crossing factors=[0.9] id="Not An Id" -->', "id must be lower-case"),
        ('<!-- table: ph_crossing factors=[0.9] alt="x" -->', "drop alt="),
    ],
)
def test_bad_values_and_page_arguments_fail_with_the_directive(tmp_path, directive, message):
    with pytest.raises(DirectiveError) as err:
        page(tmp_path, "# T\n\n" + directive + "\n")
    assert "docs/chapters/p.md:3" in str(err.value) and message in str(err.value)


def test_two_items_with_one_id_fail(tmp_path):
    with pytest.raises(DirectiveError, match="already used on this page"):
        page(tmp_path, "# T\n\n" + TABLE + "\n\n" + TABLE.replace("0.99]", "0.999]") + "\n\n{{cross.slowest}}\n")


def test_sci_prints_small_values_readably():
    assert placeholders.sci(0.5**100, 1) == "7.9 × 10⁻³¹"
    assert placeholders.format_value(0.999**1000, "sci.2") == "3.68 × 10⁻¹"


# -- a filled value never opens a block --------------------------------------------


@pytest.fixture(scope="module")
def site_html():
    """Markdown to HTML as the site renders it: Python-Markdown with the extensions of mkdocs.yml, as MkDocs loads them."""
    from mkdocs.config import load_config

    settings = load_config(str(ROOT / "mkdocs.yml"))
    md = markdown.Markdown(extensions=settings["markdown_extensions"], extension_configs=settings["mdx_configs"])

    def render(text: str) -> str:
        md.reset()
        return md.convert(text)

    return render


WORDS_TABLE = '<!-- table: ph_words factors=[0.9] id="w" -->'
BLOCKS = re.compile(r"<(ol|ul|li|h[1-6]|blockquote|table|hr|pre|dl|dt|dd|div|details)\b")


def filled(tmp_path, prose: str) -> str:
    """The page's prose, placeholders filled by the book, without its title and the table that holds the values."""
    out = page(tmp_path, "# T\n\n" + prose + "\n\n" + WORDS_TABLE + "\n")
    return out.split("\n\n", 1)[1].split('<div class="rnnmem-table"')[0]


def text_of(page_html: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page_html)).split())


def test_the_line_of_the_bug_stays_in_its_list_item_with_its_zero(tmp_path, site_html):
    prose = (
        "* The starting bias: $b_f = 1$ with {{w.three}}\n"
        "  and $b_f = 0$ with\n"
        "{{w.zero}}. The four versions\n"
        "  follow the order.\n"
        "* A second item.\n"
    )
    out = filled(tmp_path, prose)
    assert "\n0\\. The four versions" in out
    rendered = site_html(out)
    # Without the escape the line starts an item of its own: three <li>, the 0 gone.
    assert BLOCKS.findall(rendered) == ["ul", "li", "li"]
    assert "with 0. The four versions follow the order." in text_of(rendered)


CASES = [
    # (prose, what it shows, the blocks it makes): one case or more for each construct of
    # placeholders.BLOCK_STARTS, each where the site's Markdown would open the block without the escape
    # (a bullet only at the start of a paragraph, a heading anywhere), but for three that matter to the
    # notebooks (CommonMark) only: ``3)``, a list there; a fence with no closing line, which there runs to the
    # end of the notebook; a leading ``|``, a cell delimiter there. (In the site a table is made by its
    # delimiter row, typed by the author; the escape keeps the pipe literal.)
    ("{{w.zero}}. At the start of a paragraph.", "0. At the start", []),
    ("Text with\n{{w.three}}) items.", "with 3) items.", []),
    ("{{w.dash}} a dash.", "- a dash.", []),
    ("{{w.plus}} a plus.", "+ a plus.", []),
    ("{{w.star}} a star.", "* a star.", []),
    ("Text\n{{w.hash}} a hash.", "Text # a hash.", []),
    ("Text\n{{w.hash}}{{w.three}} is a count.", "Text #3 is a count.", []),
    ("Text\n{{w.quote}} a quote.", "Text > a quote.", []),
    ("Text\n{{w.pipe}} a pipe.", "Text | a pipe.", []),
    ("A title?\n{{w.equals}}", "A title? ===", []),
    ("A title?\n{{w.rule}}", "A title? ---", []),
    ("Text.\n\n{{w.rule}}", "Text. ---", []),
    ("Text.\n\n{{w.stars}}", "Text. * * *", []),
    ("Text\n{{w.fence}}python\nx = 1", "Text ```python x = 1", []),  # CommonMark: code to the end
    ("Text\n{{w.tildes}}\nx = 1", "Text ~~~ x = 1", []),
    ("Text\n{{w.bang}} note\n    inside", "Text !!! note inside", []),
    ("A term\n{{w.colon}} a definition", "A term : a definition", []),
    ("{{w.note}} target.html", "[note]: target.html", []),
    ("An RNN.\n\n{{w.abbr}} a recurrent network", "An RNN. *[RNN]: a recurrent network", []),
    ("* An item: {{w.two_lines}}.", "An item: the first - the second.", ["ul", "li"]),
    ("{{w.empty}}- an empty value, then a dash.", "- an empty value", []),
    ("* An item\n* {{w.zero}}. After a typed marker", "An item 0. After a typed marker", ["ul", "li", "li"]),
    ("> {{w.dash}} a quoted dash", "- a quoted dash", ["blockquote"]),
    ("!!! note\n\n    Text\n    {{w.hash}} indented", "Note Text # indented", ["div"]),
]


@pytest.mark.parametrize("prose, shown, blocks", CASES, ids=[c[0].split("{{")[1].split("}}")[0] for c in CASES])
def test_a_value_that_begins_a_line_renders_as_text(tmp_path, site_html, prose, shown, blocks):
    out = filled(tmp_path, prose)
    assert "\\" in out or "&#" in out, "escaped"
    rendered = site_html(out)
    assert BLOCKS.findall(rendered) == blocks, rendered
    assert shown in text_of(rendered)


def test_every_block_start_is_among_the_cases():
    """Each construct the guard knows is rendered as text by one case above (its value opens it unescaped)."""
    unescaped = {
        what
        for what, pattern in placeholders.BLOCK_STARTS
        for prose, _, _ in CASES
        for p in placeholders.find(prose)
        if pattern.match(str(WORDS[str(p.steps[0])]) + prose[p.end :].split("\n")[0])
        or pattern.match(prose[p.end :].split("\n")[0])
    }
    assert unescaped == {what for what, _ in placeholders.BLOCK_STARTS}


def test_a_placeholder_in_the_middle_of_a_line_or_in_a_fence_or_comment_is_left_alone(tmp_path, site_html):
    prose = (
        "The count is {{w.zero}}. Then {{w.dash}} and {{w.hash}} stay.\n\n"
        "<!-- Note {{w.zero}}. in a comment -->\n\n"
        "```text\n{{w.zero}}. in a fence\n```"
    )
    out = filled(tmp_path, prose)
    assert "The count is 0. Then - and # stay." in out
    assert "<!-- Note {{w.zero}}. in a comment -->" in out
    assert "{{w.zero}}. in a fence" in out and "\\" not in out


def test_a_placeholder_in_inline_code_fails_with_page_and_line(tmp_path):
    # Inline code shows a placeholder as written: a reader would see the braces, never the value.
    with pytest.raises(DirectiveError) as err:
        page(tmp_path, "# T\n\n" + WORDS_TABLE + "\n\nThe digest is\n`{{w.zero}}` here.\n")
    assert "docs/chapters/p.md:6: placeholder {{w.zero}} sits in inline code" in str(err.value)


def test_the_guard_escapes_at_line_starts_only():
    text = "Text\n{{w.zero}}. One and {{w.hash}}\n{{w.dash}}"
    fills = [(p.start, p.end, str(WORDS[str(p.steps[0])])) for p in placeholders.find(text)]
    edits = placeholders.guard_line_starts(text, fills, "docs/p.md")
    assert sorted(edits) == [(5, 15, "0"), (15, 16, "\\."), (25, 35, "#"), (36, 46, "\\-")]


@pytest.mark.parametrize(
    "prose, line",
    [
        ("Text\n\n$$\nx\n{{w.zero}}. y\n$$", 7),
        ("A formula $a +\n{{w.dash}} b$ across lines.", 4),
    ],
)
def test_a_value_that_would_open_a_block_inside_math_fails_with_page_and_line(tmp_path, prose, line):
    with pytest.raises(DirectiveError) as err:
        page(tmp_path, "# T\n\n" + prose + "\n\n" + WORDS_TABLE + "\n")
    assert f"docs/chapters/p.md:{line}: the placeholder" in str(err.value)
    assert "cannot be escaped inside math" in str(err.value) and "rewrite the line" in str(err.value)


# -- the numbers check ---------------------------------------------------------


def test_a_typed_number_is_found_and_a_produced_one_is_not():
    md = (
        "# T\n\nThe gate starts at 0.73 and lasts 3.2 steps; about 0.57 of runs, or 57.3%, learn.\n\n"
        "```python\n>>> round(3.19, 1), 0.5731\n(3.2, 0.5731)\n```\n"
    )
    assert [f.number for f in check_page(md, "p.md")] == ["0.73"]


def test_arguments_tables_and_placeholders_produce_numbers():
    md = (
        "# T\n\nAt lag 40, with floor $10^{-4}$, step 917 is {{cross.slowest}} and 4.3 × 10⁻⁵ is tiny.\n\n"
        '<!-- table: ph_crossing factors=[0.9, 40] floor=1e-4 id="cross" caption="Up to 917 steps." -->\n'
    )
    findings = check_page(md, "p.md", tables=["| f | n |\n|---|---|\n| 0.99 | 917 |\n"])
    assert [f.number for f in findings] == ["4.3 × 10⁻⁵"]
    assert findings[0].line == 3


def test_years_sections_and_small_whole_numbers_are_allowed():
    md = (
        "# T\n\nHochreiter (1991) and Pascanu et al. 2013 saw it (see §10.2.2, Figure 4.2 and Table 3.1); "
        "two of 3 layers.\n\n1. An exercise with 1,250 parameters.\n"
    )
    assert [f.number for f in check_page(md, "p.md")] == ["1,250"]


def test_a_reviewed_allow_list_entry_allows_a_number_on_its_page_only():
    md = "# T\n\nDeep Speech 2 trained on 11,940 hours.\n"
    allow = [{"page": "p.md", "number": "11,940", "reason": "a fact reported by the paper"}]
    assert check_page(md, "p.md", allow=allow) == []
    assert [f.number for f in check_page(md, "q.md", allow=allow)] == ["11,940"]


def test_numbers_in_tex_and_unicode_are_read_as_values():
    found = {n.text: n.value for _, n in parse_numbers(r"$0.99^{1000} = 4.3\times10^{-5}$ and 7.9 × 10⁻³¹")}
    assert found == {"0.99": 0.99, "1000": 1000.0, r"4.3\times10^{-5}": 4.3e-05, "7.9 × 10⁻³¹": 7.9e-31}


@pytest.mark.process
def test_the_command_line_lists_unproduced_numbers_and_exits_1(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (tmp_path / "mkdocs.yml").write_text("site_name: t\nrepo_url: https://github.com/o/r\n")
    (docs / "index.md").write_text("# T\n\nA typed 0.73 here.\n")
    run = subprocess.run(
        [sys.executable, "-m", "rnnmem.site", "numbers", "--allow", str(tmp_path / "none.toml")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1, run.stderr
    assert "docs/index.md:3: 0.73 is not produced on this page" in run.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "rnnmem.site", "numbers", "nowhere.md"], cwd=tmp_path, capture_output=True, text=True
    )
    assert bad.returncode == 2 and "argument PAGE" in bad.stderr

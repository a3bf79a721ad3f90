"""Parsing figure and table directives: what is found, and what fails loudly."""

import pytest

from rnnmem.site.directives import DirectiveError, find_directives, parse_arguments, unclosed_comment


def test_parses_kind_name_and_literal_arguments():
    md = (
        "# Title\n\ntext\n<!-- figure: decay_curves factors=[0.9, 0.99] steps=1000\n"
        '     caption="f to the n, [log] scale" -->\nmore\n<!-- table: t x=(1, 2) flag=True none=None -->\n'
    )
    found = find_directives(md, "docs/p.md")
    assert [(d.kind, d.name, d.line) for d in found] == [("figure", "decay_curves", 4), ("table", "t", 7)]
    assert found[0].args == {"factors": [0.9, 0.99], "steps": 1000, "caption": "f to the n, [log] scale"}
    assert found[1].args == {"x": (1, 2), "flag": True, "none": None}
    assert md[found[0].start : found[0].end] == found[0].text


def test_ordinary_comments_and_code_fences_are_left_alone():
    md = (
        "<!-- just a note, no colon -->\n"
        "```markdown\n<!-- figure: not_a_directive -->\n```\n"
        "~~~\n<!-- table: nor_this -->\n~~~\n"
        "<!-- skip: next if(True, reason='sybil directive') -->\n"
    )
    assert find_directives(md, "p.md") == []


@pytest.mark.parametrize(
    "comment, expected",
    [
        ("<!-- figures: decay_curves -->", "unknown directive kind 'figures'"),
        ("<!-- figures: decay_curves -->", "did you mean 'figure'?"),
        ("<!-- tabel: horizon_table -->", "did you mean 'table'?"),
        ("<!-- figure: -->", "needs a builder name"),
        ("<!-- figure: x steps= -->", "steps= has no value"),
        ("<!-- figure: x steps=[1, 2 -->", "unclosed bracket"),
        ('<!-- figure: x caption="open -->', "unterminated string"),
        ("<!-- figure: x steps=ten -->", "must be a Python literal"),
        ("<!-- figure: x 1000 -->", "expected key=value"),
        ("<!-- figure: x a=1 a=2 -->", "given twice"),
        ('<!-- figure: x caption="$\\gamma$" -->', "invalid escape sequence '\\g': write a backslash"),
    ],
)
def test_malformed_directives_fail_with_page_line_and_text(comment, expected):
    md = "# T\n\nsome text\n" + comment + "\n"
    with pytest.raises(DirectiveError) as info:
        find_directives(md, "docs/chapters/x.md")
    message = str(info.value)
    assert message.startswith("docs/chapters/x.md:4: " + comment), message
    assert expected in message


def test_unclosed_comment_is_reported():
    with pytest.raises(DirectiveError, match=r"p.md:3: an HTML comment opened here is never closed"):
        unclosed_comment("a\nb\n<!-- figure: x\n\nrest of page", "p.md")


def test_parse_arguments_empty():
    assert parse_arguments("   ") == {}

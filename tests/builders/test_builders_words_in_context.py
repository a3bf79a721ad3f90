"""The figures and tables of "Words in context": each renders, agrees with the page, and names a bad argument."""

from __future__ import annotations

from pathlib import Path

import pytest

from rnnmem.site.directives import DirectiveError, find_directives
from rnnmem.site.render import Renderer

PAGE_NAME = "docs/chapters/words-in-context.md"
PAGE = Path(__file__).resolve().parents[2] / PAGE_NAME


def one(comment: str):
    (d,) = find_directives("# T\n\n" + comment + "\n", PAGE_NAME)
    return d


def test_every_directive_of_the_page_renders_and_agrees_with_its_snippets(tmp_path):
    directives = find_directives(PAGE.read_text(), PAGE_NAME)
    names = sorted((d.kind, d.name) for d in directives)
    assert names == [("figure", "bilm_loss"), ("figure", "sense_heatmap"), ("figure", "sense_projection"),
                     ("table", "sense_similarity"), ("table", "sense_summary")]
    r = Renderer(tmp_path)
    tables = {}
    for d in directives:
        item = r.render(d)
        if d.kind == "figure":
            assert item.content.startswith(b"<?xml") and b"<svg" in item.content
        else:
            tables[d.name] = item.content.decode()
    # the numbers the page's snippets print for train (within, within, across)
    similarity = tables["sense_similarity"]
    for row in ("| 1.00 | 1.00 | 1.00 |", "| 0.77 | 0.86 | 0.50 |", "| 0.81 | 0.72 | 0.42 |",
                "| 0.79 | 0.79 | 0.45 |", "| 0.94 | 0.94 | 0.84 |"):
        assert row in similarity, similarity
    assert "within *vehicle* (12)" in similarity and "within *teach* (20)" in similarity
    summary = tables["sense_summary"]
    assert summary.count("\n| *") == 3 and "| vehicle (12), teach (20) | 0.79 | 0.79 | 0.45 |" in summary



@pytest.mark.parametrize(
    "comment, expected",
    [
        ('<!-- figure: bilm_loss steps=0 caption="c" -->', "steps must be a whole number >= 1, got 0"),
        ('<!-- figure: bilm_loss lr=-0.1 caption="c" -->', "lr must be a positive finite number, got -0.1"),
        ('<!-- figure: bilm_loss window=0 caption="c" -->', "window must be a whole number >= 1, got 0"),
        ('<!-- figure: bilm_loss sentences=2.5 caption="c" -->', "sentences must be a whole number >= 1, got 2.5"),
        ('<!-- figure: bilm_loss dim=0 caption="c" -->', "dim must be a whole number >= 1, got 0"),
        ('<!-- figure: bilm_loss batch_size="8" caption="c" -->', "batch_size must be a whole number >= 1"),
        ('<!-- figure: bilm_loss seed=-1 caption="c" -->', "seed must be a whole number >= 0, got -1"),
        ('<!-- table: sense_similarity word="river" -->', "word must be one of 'train', 'bank', 'book', got 'river'"),
        ('<!-- table: sense_summary words=[] -->', "words must be a non-empty list of the words train, bank, book"),
        ('<!-- table: sense_summary words=["train", "cat"] -->', "words[1] must be one of 'train', 'bank', 'book'"),
        ('<!-- figure: sense_heatmap word=3 caption="c" -->', "word must be one of 'train', 'bank', 'book', got 3"),
        ('<!-- figure: sense_projection words="train" caption="c" -->', "words must be a non-empty list"),
        ('<!-- figure: sense_projection steps=0 caption="c" -->', "steps must be a whole number >= 1, got 0"),
    ],
)
def test_a_bad_argument_is_named(tmp_path, comment, expected):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(comment))
    assert expected in str(info.value)

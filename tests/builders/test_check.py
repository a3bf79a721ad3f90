"""`python -m rnnmem.site check`: links and anchors of one chapter, chapters only, reports by page and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from rnnmem.site import check
from rnnmem.site.__main__ import main

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CHAPTERS = check.chapters(DOCS)


def test_only_chapters_are_chapters():
    assert CHAPTERS and all((DOCS / "chapters" / f"{c}.md").is_file() for c in CHAPTERS)
    for name in ("index", "references", "horizon_explorer", "../api/dropout", "chapters/horizon", ""):
        with pytest.raises(ValueError, match="CH must name a chapter") as info:
            check.chapter_path(DOCS, name)
        assert "the chapters are: " + ", ".join(CHAPTERS) in str(info.value)


@pytest.mark.parametrize("slug", CHAPTERS)
def test_every_chapters_links_and_anchors_resolve(slug):
    src_uri = f"chapters/{slug}.md"
    report = check.ChapterReport(slug)
    check._check_links(src_uri, (DOCS / src_uri).read_text(), DOCS, report)
    assert report.links > 0 and not report.problems, report.problems


def test_a_broken_link_or_anchor_is_named_with_page_and_line():
    text = (
        "# T\n\n## A heading\n\n[ok](#a-heading) [ok](../references.md#gers2000) [ok](../api/memory.md)\n"
        "[bad](#nowhere)\n[bad](../references.md#gers1999)\n[bad](nosuch.md)\n"
        "```\n[in code](nosuch.md)\n```\n"
    )
    report = check.ChapterReport("t")
    check._check_links("chapters/t.md", text, DOCS, report)
    assert report.links == 6
    assert [p.split(": ")[0] for p in report.problems] == [
        "docs/chapters/t.md:6",
        "docs/chapters/t.md:7",
        "docs/chapters/t.md:8",
    ]
    assert "has no heading or id 'gers1999'" in report.problems[1]
    assert "docs/chapters/nosuch.md does not exist" in report.problems[2]


def test_anchors_follow_the_toc_rules():
    text = "# `forget_gate` and $f^n$\n\n## The GRU's two choices\n\n## Notes\n\n## Notes {: #own }\n"
    assert check.page_anchors(text) == {"forget_gate-and-fn", "the-grus-two-choices", "notes", "own"}


def test_the_command_exits_2_on_an_unknown_chapter(capsys):
    assert main(["check", "api"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m rnnmem.site") and "CH must name a chapter" in err

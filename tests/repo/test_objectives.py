"""Every chapter opens with what a student will be able to do and what it assumes (a teacher assigns by them).

The block is an admonition, ``!!! abstract "Objectives"``, after the chapter's
opening paragraphs and before its first section: three to five objectives, each
a bullet, then a ``**Prerequisites:**`` paragraph naming earlier chapters as
links (the page rule ``forward-links`` keeps them earlier) and the mathematics
assumed. The first chapter assumes no chapter. The rule is the page rule
``objectives`` of :mod:`rnnmem.site.check` (so ``make test-chapter`` reports it);
these tests call it on every chapter and on pages that break it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rnnmem.site import config
from rnnmem.site.check import OBJECTIVES, objectives, objectives_problems

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = config.chapters(ROOT / "mkdocs.yml")
ORDER = ["chapters/a.md", "chapters/b.md", "chapters/c.md"]
GOOD = f"""# B

Why.

{OBJECTIVES}
    After this chapter you can:

    * compute a.
    * derive b.
    * check c.

    **Prerequisites:** [A](a.md) (its one idea); logarithms.

## First section
"""


def test_the_chapters_are_read():
    assert len(CHAPTERS) >= 10, CHAPTERS


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_chapter_passes_the_objectives_rule(chapter):
    markdown = (ROOT / "docs" / chapter).read_text(encoding="utf-8")
    problems = objectives_problems(f"docs/{chapter}", markdown, chapter, CHAPTERS)
    assert problems == [], "\n".join(map(str, problems))
    found = objectives(markdown)
    assert found is not None and 3 <= len(found[1]) <= 5


def messages(markdown: str, src_uri: str = "chapters/b.md") -> list[str]:
    return [p.message for p in objectives_problems(f"docs/{src_uri}", markdown, src_uri, ORDER)]


def test_a_good_block_passes():
    assert messages(GOOD) == []


@pytest.mark.parametrize(
    "change, expected",
    [
        ((OBJECTIVES, "!!! note"), "the chapter has no objectives block"),
        (("    * check c.\n", ""), "2 objectives, want 3 to 5"),
        (("* derive b.", "* Derives b"), "an objective is a verb phrase in lower case ending with a full stop"),
        (("    **Prerequisites:** [A](a.md) (its one idea); logarithms.\n", ""), "no **Prerequisites:** paragraph"),
        (("[A](a.md)", "[C](c.md)"), "the prerequisites name chapters/c.md, not a chapter before this one"),
        (("[A](a.md) (its one idea)", "the glossary"), "the prerequisites name no earlier chapter"),
        (("## First section\n", ""), None),
    ],
)
def test_the_rule_names_what_is_wrong(change, expected):
    old, new = change
    assert old in GOOD
    found = messages(GOOD.replace(old, new))
    if expected is None:
        assert found == []
    else:
        assert any(expected in m for m in found), found


def test_the_block_must_come_before_the_first_section():
    moved = GOOD.replace("## First section\n", "").replace("Why.\n", "Why.\n\n## Early\n")
    assert any("come after the first section (line 5)" in m for m in messages(moved))


def test_the_first_chapter_assumes_no_chapter():
    first = GOOD.replace("[A](a.md)", "[B](b.md)")
    assert any("the first chapter assumes no chapter" in m for m in messages(first, "chapters/a.md"))
    assert messages(GOOD.replace("[A](a.md) (its one idea)", "nothing"), "chapters/a.md") == []

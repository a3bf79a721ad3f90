"""Every chapter opens with what a student will be able to do and what it assumes (a teacher assigns by them).

The block is an admonition, ``!!! abstract "Objectives"``, after the chapter's
opening paragraphs and before its first section: three to five objectives, each
a bullet, then a ``**Prerequisites:**`` paragraph naming earlier chapters as
links (the page rule ``forward-links`` keeps them earlier) and the mathematics
assumed. The first chapter assumes no chapter.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rnnmem.site import config

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = config.chapters(ROOT / "mkdocs.yml")
OPENING = '!!! abstract "Objectives"'


def objectives(markdown: str) -> tuple[int, list[str], str]:
    """(line of the block, its bullets, its prerequisites paragraph) of a chapter."""
    lines = markdown.split("\n")
    starts = [n for n, line in enumerate(lines) if line.strip() == OPENING]
    assert len(starts) == 1, f"expected one {OPENING} block, found {len(starts)}"
    body = []
    for line in lines[starts[0] + 1 :]:
        if line.strip() and not line.startswith("    "):
            break
        body.append(line[4:])
    text = "\n".join(body)
    bullets = re.findall(r"^\* (.+(?:\n  +.+)*)", text, re.M)
    prerequisites = text.split("**Prerequisites:**", 1)[1].strip() if "**Prerequisites:**" in text else ""
    return starts[0] + 1, [" ".join(b.split()) for b in bullets], prerequisites


def test_the_chapters_are_read():
    assert len(CHAPTERS) >= 10, CHAPTERS


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_chapter_states_three_to_five_objectives_before_its_first_section(chapter):
    markdown = (ROOT / "docs" / chapter).read_text(encoding="utf-8")
    line, bullets, prerequisites = objectives(markdown)
    first_section = next(n for n, text in enumerate(markdown.split("\n"), 1) if text.startswith("## "))
    assert line < first_section, f"{chapter}: the objectives (line {line}) come after the first section"
    assert 3 <= len(bullets) <= 5, f"{chapter}: {len(bullets)} objectives, want 3 to 5: {bullets}"
    for bullet in bullets:
        assert re.match(r"[a-z]+\b", bullet) and bullet.endswith("."), f"{chapter}: not a verb phrase: {bullet!r}"
    assert prerequisites, f"{chapter}: no **Prerequisites:** paragraph in the objectives"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_prerequisites_name_only_earlier_chapters(chapter):
    markdown = (ROOT / "docs" / chapter).read_text(encoding="utf-8")
    _, _, prerequisites = objectives(markdown)
    named = ["chapters/" + m for m in re.findall(r"\]\(([a-z0-9-]+\.md)\)", prerequisites)]
    earlier = CHAPTERS[: CHAPTERS.index(chapter)]
    assert all(page in earlier for page in named), f"{chapter}: prerequisites name {named}, earlier are {earlier}"
    if chapter == CHAPTERS[0]:
        assert named == [], "the first chapter assumes no chapter"
    else:
        assert named, f"{chapter}: the prerequisites name no earlier chapter"

"""The instructor page names exercises by number: each must exist in its chapter.

The page (docs/instructor.md) sets homework as "exercises of [Chapter](chapters/x.md#exercises):
1 and 3". Those numbers are typed, so this test keeps them honest: every number given with
a chapter's exercises link is at most the number of exercises that chapter has, and every
section the page assigns by link exists (the page rule ``links`` checks the anchors).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "instructor.md"
LINK = re.compile(r"\[[^\]]*\]\(chapters/([a-z0-9-]+)\.md#exercises\)")


def exercise_count(chapter: str) -> int:
    text = (ROOT / "docs" / "chapters" / f"{chapter}.md").read_text(encoding="utf-8")
    section = text.split("\n## Exercises\n", 1)[1].split("\n## ", 1)[0]
    return len(re.findall(r"^\d+\. ", section, re.M))


def assigned() -> list[tuple[str, list[int], str]]:
    """(chapter, exercise numbers, clause) for each clause of the page that links a chapter's exercises."""
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    found = []
    for clause in re.split(r";|\.\s|\n", text):
        links = LINK.findall(clause)
        if len(links) == 1:
            numbers = [int(n) for n in re.findall(r"(?<![\w.§])(\d+)(?![\w.)])", LINK.sub("", clause))]
            found.append((links[0], numbers, clause))
    return found


def test_the_page_assigns_exercises():
    assert len(assigned()) >= 10, assigned()


def test_every_exercise_the_page_names_exists():
    for chapter, numbers, clause in assigned():
        have = exercise_count(chapter)
        assert have >= 2, f"{chapter}: {have} exercises"
        assert all(1 <= n <= have for n in numbers), f"{chapter} has {have} exercises; the page says: {clause!r}"

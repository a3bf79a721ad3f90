"""Captions and prose are content: every number they state is produced on their page, and captions stay short.

`python -m rnnmem.site numbers` is the check (rnnmem.site.numbers); this runs
it on every page but the references, through the same render cache as the
build. The reviewed allow-list (numbers_allowlist.toml, next to this file)
names the few numbers quoted from papers, each with its reason.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rnnmem.site.__main__ import NOT_CHECKED
from rnnmem.site.directives import find_directives
from rnnmem.site.numbers import check_page, load_allowlist
from rnnmem.site.render import Renderer

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
ALLOW = Path(__file__).resolve().parent / "numbers_allowlist.toml"
PAGES = sorted(
    p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if p.relative_to(DOCS).as_posix() not in NOT_CHECKED
)
SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bal)(?<!\bcf)[.!?](?=\s+[A-Z(*$])")


@pytest.mark.parametrize("rel", PAGES)
def test_every_number_a_page_states_is_produced_on_it(rel):
    markdown = (DOCS / rel).read_text(encoding="utf-8")
    renderer = Renderer()
    tables = [
        renderer.render(d).content.decode() for d in find_directives(markdown, f"docs/{rel}") if d.kind == "table"
    ]
    findings = check_page(markdown, f"docs/{rel}", tables=tables, allow=load_allowlist(ALLOW))
    assert not findings, "\n".join(map(str, findings))


def test_the_allow_list_names_pages_that_exist_and_numbers_they_state():
    for entry in load_allowlist(ALLOW):
        page = ROOT / entry["page"]
        assert page.is_file(), entry
        assert str(entry["number"]) in page.read_text(encoding="utf-8"), entry


@pytest.mark.parametrize("rel", PAGES)
def test_figures_have_a_short_caption_and_a_different_full_alt_text(rel):
    markdown = (DOCS / rel).read_text(encoding="utf-8")
    for d in find_directives(markdown, f"docs/{rel}"):
        caption = d.args.get("caption")
        if caption is None:
            continue
        sentences = len(SENTENCE_END.findall(" ".join(caption.split()))) + 1
        # A figure's caption is a statement (its description is the alt text); a table's also names its columns.
        words = 45 if d.kind == "figure" else 60
        assert sentences <= 2 and len(caption.split()) <= words, (
            f"{d.where}: a caption is one or two short "
            f"sentences ({sentences} sentences, {len(caption.split())} words, at most {words}); the full "
            "description of a figure goes to alt="
        )
        if d.kind == "figure":
            alt = d.args.get("alt")
            assert alt and alt.strip() != caption.strip(), f"{d.where}: a figure needs alt=, its full description"

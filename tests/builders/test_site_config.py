"""One rule in one place: mkdocs.yml read by rnnmem.site.config, one id pattern, one heading slug."""

from __future__ import annotations

import re
from pathlib import Path

import markdown
import pytest

from rnnmem.site import check, config, numbering
from rnnmem.site.book import load_mkdocs_settings
from rnnmem.site.directives import DirectiveError, find_directives
from rnnmem.site.render import split_caption

ROOT = Path(__file__).resolve().parents[2]


def test_the_books_chapters_come_from_the_nav_section_named_once():
    nav = config.read(ROOT / "mkdocs.yml")["nav"]
    section = next(entry[config.CHAPTERS_SECTION] for entry in nav if config.CHAPTERS_SECTION in entry)
    assert config.chapters(ROOT / "mkdocs.yml") == [next(iter(e.values())) for e in section]
    assert [p for _, p in check.nav_chapters(ROOT / "mkdocs.yml")] == config.chapters(ROOT / "mkdocs.yml")
    assert numbering.chapters_from_config(ROOT / "mkdocs.yml") == config.chapters(ROOT / "mkdocs.yml")
    assert all(p.startswith("chapters/") for p in config.chapters(ROOT / "mkdocs.yml"))


def test_settings_are_read_without_mkdocs_and_tags_are_left_alone(tmp_path):
    path = tmp_path / "mkdocs.yml"
    path.write_text(
        "site_name: t\nrepo_url: https://github.com/o/r\ndocs_dir: pages\n"
        "markdown_extensions:\n  - pymdownx.emoji:\n      emoji_index: !!python/name:material.extensions.emoji.twemoji\n"
        "extra:\n  key: !ENV [SOME_VARIABLE, x]\n"
        "nav:\n  - Home: index.md\n  - Chapters:\n      - A: chapters/a.md\n      - Part:\n          - B: chapters/b.md\n"
    )
    assert load_mkdocs_settings(path) == {
        "docs_dir": tmp_path / "pages",
        "repo_url": "https://github.com/o/r",
        "site_url": "",
    }
    assert config.chapter_entries(config.read(path)["nav"]) == [("A", "chapters/a.md"), ("B", "chapters/b.md")]
    # A copy each time: a caller's change does not reach the next reader.
    config.read(path)["nav"].clear()
    assert config.chapters(path) == ["chapters/a.md", "chapters/b.md"]
    # An edit is seen (the memo is keyed by the file's version).
    path.write_text(path.read_text().replace("      - A: chapters/a.md\n", "") + "\n")
    assert config.chapters(path) == ["chapters/b.md"]


def test_a_missing_or_malformed_config_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="config file .*nothing.yml not found"):
        config.read(tmp_path / "nothing.yml")
    assert config.chapters(tmp_path / "nothing.yml") == []
    (tmp_path / "list.yml").write_text("- a\n- b\n")
    with pytest.raises(ValueError, match=r"list\.yml: the configuration must be a mapping of settings, got list"):
        config.read(tmp_path / "list.yml")


IDS = [
    ("decay", True),
    ("gru-2", True),
    ("a", True),
    ("a1-b2-c3", True),
    ("decay-", False),
    ("-decay", False),
    ("de--cay", False),
    ("Decay", False),
    ("2decay", False),
    ("decay_x", False),
    ("decay x", False),
    ("", False),
]


@pytest.mark.parametrize("ident, good", IDS)
def test_the_numbering_and_the_cache_accept_the_same_ids(ident, good):
    """The directive's check (rnnmem.site.render) and the numbering's read ids by one pattern."""
    text = f'<!-- figure: decay_curves id="{ident}" caption="c" -->'
    (directive,) = find_directives(text, "docs/chapters/a.md")
    try:
        split_caption(directive)
        cache_accepts = True
    except DirectiveError as exc:
        assert numbering.ID_RULE in str(exc)
        cache_accepts = False
    index = numbering.Numbering(["chapters/a.md"])
    try:
        index.add_page("chapters/a.md", text, [directive])
        numbering_accepts = True
    except numbering.NumberingError as exc:
        assert f"got {ident!r}" in str(exc) and str(exc).startswith("docs/chapters/a.md:1: ")
        numbering_accepts = False
    assert cache_accepts == numbering_accepts == good


def test_an_id_that_is_not_a_string_is_refused_by_both():
    (directive,) = find_directives('<!-- figure: decay_curves id=3 caption="c" -->', "docs/p.md")
    with pytest.raises(DirectiveError, match="id must be a string, got 3"):
        split_caption(directive)
    assert numbering.id_problem(3) == "id must be a string, got 3" and numbering.id_problem(None) is None


TITLES = [
    "Gates: the LSTM and the GRU",
    "Where training starts: the forget bias",
    "The GRU's two choices",
    "`forget_gate` and *f*<sup>n</sup>",
    "Naïve décroissance — 2.5 × faster",
    "See [the horizon](horizon.md) again",
    "Exercises",
]


@pytest.mark.parametrize("title", TITLES)
def test_heading_anchors_are_the_ones_the_toc_extension_gives(title):
    """numbering.heading_anchor (used by the numbering and by the link check) against Python-Markdown itself."""
    html = markdown.markdown(f"## {title}\n", extensions=["toc", "attr_list"])
    (built,) = re.findall(r'<h2 id="([^"]*)"', html)
    assert numbering.heading_anchor(title) == built
    assert check.page_anchors(f"## {title}\n") == {built}

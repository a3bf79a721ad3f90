"""The directive kinds are one table (rnnmem.site.kinds.KINDS): a new kind is one entry, and no module names a kind.

The recipe of ARCHITECTURE.md's "A new directive kind", executed: a test kind
added to the table is parsed, registered by its decorator, rendered through
the cache under its extension, placed in a page and in a chapter's notebook,
and checked by the page rules, with no other change to the machinery.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from rnnmem.site import check, kinds, registry
from rnnmem.site.book import Book
from rnnmem.site.directives import DirectiveError, find_directives
from rnnmem.site.render import Renderer

SITE = Path(kinds.__file__).resolve().parent


class Note(kinds.Kind):
    """A test kind: its builder returns a string, shown in the page as an aside."""

    name, extension, returns, format = "note", "txt", "a str", "text"

    def accepts(self, result: Any) -> bool:
        return isinstance(result, str)

    def to_bytes(self, result: Any) -> tuple[bytes, bytes | None]:
        return result.encode(), None

    def block(self, place: kinds.Place) -> str:
        return f'<aside class="note">{place.content.decode()}</aside>'

    def notebook_block(self, place: kinds.Place, block: str, site_url: str) -> str:
        return f"> {place.content.decode()}"


BUILDER = """
from rnnmem.site.kinds import KINDS


@KINDS["note"].decorator("tk_note")
def tk_note(text="hello"):
    return text.upper()


@KINDS["note"].decorator("tk_wrong")
def tk_wrong():
    return 3
"""


@pytest.fixture
def note(tmp_path, monkeypatch):
    """The test kind in the table, and a package of builder modules ``tk`` that uses its decorator."""
    monkeypatch.setitem(kinds.KINDS, "note", Note())
    root = tmp_path / "src"
    (root / "tk").mkdir(parents=True)
    (root / "tk" / "__init__.py").write_text("")
    (root / "tk" / "notes.py").write_text(BUILDER)
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    yield registry.Registry(["tk"])
    for name in [m for m in sys.modules if m == "tk" or m.startswith("tk.")]:
        del sys.modules[name]


def test_every_kind_has_its_decorator_in_the_registry():
    for name, kind in kinds.KINDS.items():
        assert kind.name == name and kind.extension and kind.returns and kind.format
        decorator = getattr(registry, name)
        assert decorator.__self__ is kind, f"registry.{name} is the decorator of kinds.KINDS[{name!r}]"

        def builder():
            return None

        decorator("x")(builder)
        assert getattr(builder, kinds.MARK) == ((name, "x"),)


def test_an_unknown_kind_is_refused_naming_the_kinds():
    with pytest.raises(ValueError, match="kind must be one of figure, table, widget, got 'chart'"):
        kinds.get("chart")
    with pytest.raises(DirectiveError, match="the kinds are: figure, table, widget, skip"):
        find_directives("<!-- chart: x -->", "p.md")


def test_no_machinery_module_switches_on_a_kind_by_name():
    """Only the table names the kinds (registry.py exports each kind's decorator under its name)."""
    names = "|".join(map(re.escape, kinds.KINDS))
    switch = re.compile(rf"""["']({names})["']|\bkind\s*[!=]=""")
    found = []
    for path in sorted(SITE.glob("*.py")):
        if path.name in ("kinds.py", "registry.py"):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if switch.search(line) and "__all__" not in line:
                found.append(f"{path.name}:{n}: {line.strip()}")
    # Not directive kinds: numbering.py's targets (fig, tab, eq, ch) and their nouns in prose ("Figure 4.2"),
    # a widget's controls, a notebook's cells.
    others = r'kind == "(eq|ch|fig|code)"|_NOUN = |kind == (RADIO|SLIDER)'
    found = [f for f in found if not re.search(others, f)]
    assert not found, "a switch on a directive kind outside rnnmem.site.kinds:\n" + "\n".join(found)


def test_a_new_kind_is_one_entry_of_the_table(note, tmp_path):
    markdown = "# Notes\n\nText.\n\n<!-- note: tk_note text='a note' caption=\"What it says.\" -->\n\nMore.\n"
    (d,) = find_directives(markdown, "docs/chapters/n.md")
    assert d.kind == "note"
    assert note.get("note", "tk_note").module == "tk.notes"
    item = Renderer(tmp_path / "cache", builders=note).render(d)
    assert item.content == b"A NOTE" and item.filename.endswith(".txt")
    assert (tmp_path / "cache" / "note").is_dir()
    book = Book(tmp_path / "docs", repo_url="https://github.com/o/r", cache_dir=tmp_path / "cache", chapters=[])
    book.renderer.builders = note
    page = book.page_markdown("chapters/n.md", markdown)
    assert '<aside class="note">A NOTE</aside>' in page and "<!-- note:" not in page
    assert "> A NOTE" in book.notebook_markdown(book.pages["chapters/n.md"], "")
    assert check.caption_problems("docs/chapters/n.md", markdown) == []


def test_a_builder_of_a_new_kind_that_returns_the_wrong_thing_is_named(note, tmp_path):
    (d,) = find_directives("<!-- note: tk_wrong -->", "docs/p.md")
    with pytest.raises(DirectiveError, match="note builder 'tk_wrong' must return a str, got int"):
        Renderer(tmp_path, builders=note).render(d)

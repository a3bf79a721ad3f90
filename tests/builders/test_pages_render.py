"""Every directive on every page renders, and every registered builder is used by a page.

The strict build renders them too; this renders them under pytest, so a failure
names the page, the line and the directive, and it catches a builder that no page
asks for any more. They are rendered once per test session, into the cache that
every test shares (the fixture ``book_items`` of tests/conftest.py; after
``make build`` every item is read from it). That the same code renders the same
bytes with the cache bypassed is tests/built_site/test_determinism.py's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rnnmem.site import registry
from rnnmem.site.directives import find_directives

DOCS = Path(__file__).resolve().parents[2] / "docs"


def directives_of(page: Path):
    return find_directives(page.read_text(encoding="utf-8"), f"docs/{page.relative_to(DOCS).as_posix()}")


PAGES = [p for p in sorted(DOCS.rglob("*.md")) if directives_of(p)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_every_directive_of_the_page_renders(page, book_items):
    for directive in directives_of(page):
        assert directive.where in book_items, f"{directive.where}: not rendered"
        _, item = book_items[directive.where]
        assert (item.kind, item.name) == (directive.kind, directive.name), directive.where
        if directive.kind == "figure":
            assert item.content.startswith(b"<?xml") and b"<svg" in item.content, directive.where
        elif directive.kind == "widget":
            assert re.match(rb'<div class="rnnmem-[a-z-]+"', item.content), directive.where  # one block of the page
        else:
            assert item.content.decode().startswith("| "), directive.where


def test_every_builder_is_used_by_a_page():
    used = {(d.kind, d.name) for page in PAGES for d in directives_of(page)}
    unused = [f"{b.kind} {b.name} ({b.module})" for b in registry.all_builders() if (b.kind, b.name) not in used]
    assert not unused, "builders no page asks for: " + ", ".join(unused)


_E_NOTATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?e[-+]?\d+\b")
_PADDED = re.compile(r"(?<![\w.])\d+\.\d{2,}0(?![\d])")


def _prose_of_table(markdown: str) -> str:
    """The table's text outside code spans and \\( \\) mathematics, where a number is written as prose."""
    return re.sub(r"`[^`]*`|\\\(.*?\\\)", " ", markdown)


def test_no_table_writes_e_notation_or_padding_zeros(book_items):
    problems = []
    for where, (directive, item) in book_items.items():
        if directive.kind != "table":
            continue
        text = _prose_of_table(item.content.decode())
        problems += [f"{where}: {m.group()!r} (e-notation)" for m in _E_NOTATION.finditer(text)]
        problems += [f"{where}: {m.group()!r} (padding zeros)" for m in _PADDED.finditer(text)]
    assert not problems, "tables write numbers as the book does not:\n" + "\n".join(problems)

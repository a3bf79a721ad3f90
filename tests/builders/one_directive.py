"""What the builder tests share: the one directive of a snippet read as a part of a page, and rendered.

A builder test writes one directive as it would stand on its chapter's page, reads it with
``one = OneDirective(PAGE)`` and ``one(text)``, and renders it with ``one.render(tmp_path, text)`` (the
Markdown of a table or the name of a figure) or ``one.soup(tmp_path, text)`` (a widget's HTML). The test
files import it by bare name, as pytest puts their directory on ``sys.path`` (a second ``conftest`` module
here would clash with ``tests/built_site``'s for mypy, which reads both directories as roots).
"""

from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup, Tag

from rnnmem.site.directives import Directive, find_directives
from rnnmem.site.render import Renderer


class OneDirective:
    """``one(text)``: the one directive of ``text`` on ``page`` (or on the page given); fails unless there is one."""

    def __init__(self, page: str) -> None:
        self.page = page

    def __call__(self, text: str, page: str | None = None) -> Directive:
        (d,) = find_directives(text, self.page if page is None else page)
        return d

    def render(self, tmp_path: Path, text: str) -> str:
        """The rendered item's content, as text."""
        return Renderer(tmp_path).render(self(text)).content.decode()

    def soup(self, tmp_path: Path, text: str) -> BeautifulSoup:
        """A widget's HTML, parsed."""
        item = Renderer(tmp_path).render(self(text))
        assert item.filename.endswith(".html")
        return BeautifulSoup(item.content.decode(), "html.parser")


def select(soup: BeautifulSoup | Tag, css: str) -> Tag:
    """The one tag of ``soup`` that ``css`` selects; fails naming the selector when there is none."""
    tag = soup.select_one(css)
    assert tag is not None, f"the widget has no {css}"
    return tag

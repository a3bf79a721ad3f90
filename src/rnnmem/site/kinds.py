"""The kinds of directive, one table: what each kind's builder returns, and where its item goes.

A directive's kind (``<!-- figure: ... -->``) names an entry of :data:`KINDS`,
in the spirit of sphinx-gallery's scrapers: each :class:`Kind` knows

* its *name*, which a directive starts with and its decorator carries
  (:meth:`Kind.decorator`, exported as ``rnnmem.site.registry.figure``, ...);
* what its builder *returns* and how that becomes the item's bytes
  (:meth:`Kind.accepts`, :meth:`Kind.to_bytes`), stored in the render cache
  under its file *extension* (:mod:`rnnmem.site.render`);
* how the item stands in a page (:meth:`Kind.block`) and in a chapter's
  notebook (:meth:`Kind.notebook_block`), given a :class:`Place`
  (:mod:`rnnmem.site.book`);
* what the page rules ask of its caption (:mod:`rnnmem.site.check`), and the
  prefix of a reference to it (``@fig:``, :mod:`rnnmem.site.numbering`).

The rest of the site machinery asks the table (:func:`get`) and never names
a kind, so a new kind is one entry here (and its decorator's name in
``registry.py``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FIGURE",
    "FIGURE_DIR",
    "KINDS",
    "MARK",
    "TABLE",
    "WIDE_SCREEN",
    "WIDGET",
    "Kind",
    "Place",
    "get",
    "plain_text",
    "unwrap_nested_blocks",
]

#: The attribute a decorator sets on a builder: the (kind, name) pairs it is registered under.
MARK = "__rnnmem_builders__"
#: Where the site serves the figures (a figure's content is a file of the site; a table's and a widget's are in the page).
FIGURE_DIR = "assets/figures"
#: The screens a figure's desktop rendition is shown on: Material's width at which the table of
#: contents stands beside the text (60em), where the content column is at least 34rem wide.
WIDE_SCREEN = "(min-width: 60em)"

_SVG_SIZE = re.compile(rb'<svg[^>]*\swidth="([\d.]+)pt"[^>]*\sheight="([\d.]+)pt"')


@dataclass(frozen=True)
class Place:
    """One rendered item where its directive stands: what a kind needs to write it into the page."""

    #: The page (``chapters/gates.md``).
    src_uri: str
    #: The item's content (:attr:`rnnmem.site.render.Item.content`) and its file name in the site.
    content: bytes
    filename: str
    #: A figure's desktop rendition and its file name (None: it has none).
    wide: bytes | None
    wide_filename: str
    #: The caption and the alt text, placeholders filled (None: the directive gives none).
    caption: str | None
    alt: str | None
    #: Whether the item is the first of its kind on the page.
    first: bool


class Kind:
    """A directive kind: the entry of :data:`KINDS` that every switch on kinds reads (see the module's docstring).

    A subclass sets the attributes and the methods :meth:`accepts`,
    :meth:`to_bytes`, :meth:`block` and :meth:`notebook_block`.
    """

    #: What a directive starts with (``<!-- figure: ...``) and the decorator's name.
    name: str = ""
    #: The extension of the item's file (cache and site).
    extension: str = ""
    #: What its builder returns, as an error message says it.
    returns: str = ""
    #: The format of the item's bytes, as an error message says it.
    format: str = ""
    #: The prefix of a reference to it (``fig`` for ``@fig:``); None: it is not numbered.
    label: str | None = None
    #: Whether a directive of this kind must have a caption, and may (must, for the page rules) have an alt text.
    needs_caption: bool = False
    has_alt: bool = False
    #: The most words its caption may have (rule ``captions``).
    caption_words: int = 60
    #: Whether it has a desktop rendition (a third file in the cache: :func:`rnnmem.site.style.to_svgs`).
    has_wide: bool = False
    #: Whether its content is a file of the site (under :data:`FIGURE_DIR`) that the page links to.
    published: bool = False
    #: Whether its content states numbers that the prose may quote (rule ``numbers``).
    states_numbers: bool = False

    def decorator(self, name: str | None = None) -> Callable[[Callable], Callable]:
        """Mark a builder of this kind, registered under ``name`` (default: the function's name) when its
        module is read (:class:`rnnmem.site.registry.Registry`)."""

        def decorate(func: Callable) -> Callable:
            marks = list(getattr(func, MARK, ()))
            marks.append((self.name, name or func.__name__))
            setattr(func, MARK, tuple(marks))
            return func

        return decorate

    def accepts(self, result: Any) -> bool:
        """Whether ``result`` is what a builder of this kind returns (:attr:`returns`)."""
        raise NotImplementedError

    def to_bytes(self, result: Any) -> tuple[bytes, bytes | None]:
        """The item's content, and a figure's desktop rendition (None for the rest)."""
        raise NotImplementedError

    def block(self, place: Place) -> str:
        """The item as the page's Markdown shows it, in the directive's place."""
        raise NotImplementedError

    def notebook_block(self, place: Place, block: str, site_url: str) -> str:
        """The item in the chapter's notebook (``block`` is :meth:`block`'s; ``site_url`` the published site's)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<Kind {self.name}>"


class Figure(Kind):
    """A matplotlib figure, saved as SVG (with a desktop rendition), shown as an image with its caption."""

    name, extension, returns, format, label = "figure", "svg", "a matplotlib Figure", "SVG", "fig"
    needs_caption = has_alt = has_wide = published = True
    caption_words = 45

    def accepts(self, result: Any) -> bool:
        from matplotlib.figure import Figure as MplFigure

        return isinstance(result, MplFigure)

    def to_bytes(self, result: Any) -> tuple[bytes, bytes | None]:
        from .style import to_svgs

        return to_svgs(result)

    def block(self, place: Place) -> str:
        caption = place.caption
        assert caption is not None, "the renderer gives no figure without a caption (render.split_caption)"
        target = posixpath.relpath(f"{FIGURE_DIR}/{place.filename}", posixpath.dirname(place.src_uri) or ".")
        alt = place.alt if place.alt is not None else plain_text(caption)
        alt = " ".join(alt.split()).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
        size = _SVG_SIZE.search(place.content[:2000])
        # Every figure but the page's first (which may be on the first screen, as Home's is)
        # loads only when the reader scrolls near it, and is decoded off the main thread.
        attrs = "" if place.first else 'loading="lazy" decoding="async"'
        if size:
            w, h = (round(float(v) * 4 / 3) for v in size.groups())
            attrs = f'width="{w}" height="{h}" {attrs}'.strip()
        dims = f"{{ {attrs} }}" if attrs else ""
        image, css = f"![{alt}]({target}){dims}", "rnnmem-figure"
        if place.wide is not None:
            image, css = _picture(place, image), "rnnmem-figure rnnmem-figure--wide"
        # One line: Python-Markdown's span mode turns line breaks inside the figure into <br>.
        return (
            f'<figure class="{css}" markdown="span">{image}'
            f'<figcaption markdown="span">{" ".join(caption.split())}</figcaption></figure>'
        )

    def notebook_block(self, place: Place, block: str, site_url: str) -> str:
        alt = re.search(r"!\[(.*?)\]\(", block, re.DOTALL)
        return (
            f"![{alt.group(1) if alt else ''}]({site_url}{FIGURE_DIR}/{place.filename})\n\n"
            f"*{' '.join((place.caption or '').split())}*"
        )


def _picture(place: Place, image: str) -> str:
    """A figure with a desktop rendition: a ``<picture>`` whose source, on a screen at least
    :data:`WIDE_SCREEN` wide, is the rendition (shown 34rem wide by the stylesheet, at the
    scale of every other figure), and whose image, on a phone, a tablet and in print, is the
    figure drawn for the column. The source's address is relative to the page's own
    (``chapters/gates/``): raw HTML is not rewritten by MkDocs as a Markdown image is."""
    size = _SVG_SIZE.search((place.wide or b"")[:2000])
    assert size, "a desktop rendition is an SVG with a width and a height (rnnmem.site.style.to_svgs)"
    w, h = (round(float(v) * 4 / 3) for v in size.groups())
    url = posixpath.splitext(place.src_uri)[0]
    url = posixpath.dirname(url) if posixpath.basename(url) == "index" else url
    source = posixpath.relpath(f"{FIGURE_DIR}/{place.wide_filename}", url or ".")
    return f'<picture><source media="{WIDE_SCREEN}" srcset="{source}" width="{w}" height="{h}">{image}</picture>'


class Table(Kind):
    """A :class:`rnnmem.site.tables.Table`, written as Markdown, shown with its caption above it."""

    name, extension, returns, format, label = "table", "md", "a rnnmem.site.tables.Table", "Markdown", "tab"
    states_numbers = True

    def accepts(self, result: Any) -> bool:
        from .tables import Table as TableData

        return isinstance(result, TableData)

    def to_bytes(self, result: Any) -> tuple[bytes, bytes | None]:
        return result.to_markdown().encode(), None

    def block(self, place: Place) -> str:
        table = place.content.decode()
        if place.caption:
            table = f'<p class="rnnmem-table-caption" markdown="span">{place.caption}</p>\n\n' + table
        return '<div class="rnnmem-table" markdown>\n\n' + table + "\n</div>"

    def notebook_block(self, place: Place, block: str, site_url: str) -> str:
        block = unwrap_nested_blocks(block).replace('<div class="rnnmem-table">', "").replace("</div>", "")
        return re.sub(r'<p class="rnnmem-table-caption" markdown="span">(.*?)</p>', r"*\1*", block, flags=re.DOTALL)


class Widget(Kind):
    """A :class:`rnnmem.site.widgets.Widget` (every state computed at build time), raw HTML in the page."""

    name, extension, returns, format = "widget", "html", "a rnnmem.site.widgets.Widget", "HTML"

    def accepts(self, result: Any) -> bool:
        from .widgets import Widget as WidgetData

        return isinstance(result, WidgetData)

    def to_bytes(self, result: Any) -> tuple[bytes, bytes | None]:
        return result.to_html().encode(), None

    def block(self, place: Place) -> str:
        return place.content.decode()  # raw HTML, one line, so Markdown leaves it whole

    def notebook_block(self, place: Place, block: str, site_url: str) -> str:
        return (
            f"*An interactive figure stands here on the [book's page]({site_url}"
            f"{posixpath.splitext(place.src_uri)[0]}/).*"
        )


FIGURE, TABLE, WIDGET = Figure(), Table(), Widget()
#: Every directive kind, by name, in the order the error messages list them. The machinery reads it when
#: it runs (never a copy made at import), so a kind added here is known everywhere.
KINDS: dict[str, Kind] = {k.name: k for k in (FIGURE, TABLE, WIDGET)}


def get(name: str) -> Kind:
    """The kind of that name; ValueError naming it and the kinds if there is none."""
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {name!r}") from None


_NESTED_FIGURE = re.compile(
    r'<p>(<figure class="rnnmem-figure[^"]*"[^>]*?) markdown="span">(.*?</figure>)</p>', re.DOTALL
)
_NESTED_TABLE = re.compile(r'(<div class="rnnmem-table"[^>]*?) markdown>')
_NESTED_CAPTION = re.compile(r'<p><p class="rnnmem-table-caption" markdown="span">(.*?)</p></p>', re.DOTALL)


def unwrap_nested_blocks(html_text: str) -> str:
    """Finish the figures and tables of directives that stand inside an indented block.

    Python-Markdown's ``md_in_html`` only sees HTML at the top level of a page;
    inside an admonition, an exercise answer or a list item, the figure's
    Markdown (image, caption) is still converted, but the ``<figure>`` lands in
    a paragraph with its ``markdown`` attribute left on. This puts it back as
    at the top level.

    >>> unwrap_nested_blocks('<p><figure class="rnnmem-figure" markdown="span"><img/>'
    ...                      '<figcaption markdown="span">x</figcaption></figure></p>')
    '<figure class="rnnmem-figure"><img/><figcaption>x</figcaption></figure>'
    """
    html_text = _NESTED_FIGURE.sub(r"\1>\2", html_text)
    html_text = html_text.replace('<figcaption markdown="span">', "<figcaption>")
    html_text = _NESTED_CAPTION.sub(r'<p class="rnnmem-table-caption">\1</p>', html_text)
    return _NESTED_TABLE.sub(r"\1>", html_text)


def plain_text(markdown: str) -> str:
    """A caption as plain text (alt text for a figure given none): math and markup reduced to their letters.

    >>> plain_text("What is left after $n$ steps of **one** factor $f^n$.")
    'What is left after n steps of one factor f^n.'
    """
    text = re.sub(r"\$+([^$]*)\$+", r"\1", markdown)
    text = re.sub(r"\\(?:mathrm|text|operatorname)\{([^}]*)\}", r"\1", text)
    text = re.sub(r"[*_`]{1,2}(\S.*?\S|\S)[*_`]{1,2}", r"\1", text)
    return text.replace("\\", "").replace("{", "").replace("}", "")

"""Author-year citations linked to their entries on the references page, and back.

The chapters cite works in running text, as "Pascanu, Mikolov and Bengio
(2013)", "Cho et al. (2014, §2.3)" or "(Kingma and Ba, 2015)". When the site
is built, :func:`link_citations` finds each such citation in a page's HTML
(never inside a link, code, math or a heading, nor inside quotation marks,
where the book quotes a source's own words) and links it to the entry of
``docs/references.md`` whose key is the first author's surname and the year
(``pascanu2013``). A citation that matches no entry raises
:class:`CitationError` naming the page and line, so a typo or a missing entry
stops the build. :func:`cited_in` then adds to each entry of the references
page the list of pages that cite it, each linked to the citation itself.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass, field

from .suggest import did_you_mean

__all__ = ["Citation", "CitationError", "Entry", "Index", "cited_in", "link_citations", "parse_references"]

_NAME = r"(?:van\s|von\s|de\s)?[A-Z][\w'’\-]*\w"
_AUTHORS = rf"(?P<authors>(?P<first>{_NAME})(?:(?:,\s+{_NAME})*,?\s+(?:and|&)\s+{_NAME}|\s+et\s+al\.)?)"
_YEAR = r"(?P<year>(?:1[89]|20)\d\d)[a-z]?"
#: "Authors (1997" as in "Authors (1997)" or "Authors (1994, §4)".
_NARRATIVE = re.compile(rf"\b{_AUTHORS}\s\({_YEAR}(?=[),;])")
#: "(Authors, 2013)", "(Authors 1997)", "(...; Authors, 2015)".
_PARENTHETICAL = re.compile(rf"(?:(?<=\()|(?<=; )){_AUTHORS},?\s{_YEAR}(?=[),;])")
_ENTRY = re.compile(r'<a id="(?P<key>[a-z0-9-]+)"></a>\s*\n\*\*(?P<authors>.+?)(?:\s\((?P<year>\d{4})\))?\.\*\*', re.S)
#: Elements whose text is never searched for citations.
_SKIP = {
    "a",
    "code",
    "pre",
    "script",
    "style",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "kbd",
    "svg",
    "title",
    "mjx-container",
}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_TOKEN = re.compile(r"<!--.*?-->|<[^>]*>", re.S)
_TAG = re.compile(r"<(/?)([a-zA-Z][\w-]*)([^>]*?)(/?)>", re.S)
_REFERENCE_LINK = re.compile(r'\shref="(?:[^"#]*/)?references(?:/|\.md|\.html)?#(?P<key>[a-z0-9-]+)"')
_QUOTES = {'"': '"', "“": "”", "«": "»"}


class CitationError(ValueError):
    """A citation in running text that matches no entry of the references page."""


@dataclass(frozen=True)
class Entry:
    key: str
    authors: str
    year: str

    @property
    def surnames(self) -> list[str]:
        names = re.split(r",\s*|\s+and\s+|\s*&\s*", self.authors.replace(" et al.", ""))
        return [_fold(n.split()[-1]) for n in names if n.strip()]


@dataclass
class Citation:
    """One citation found on a page: the entry it names and the anchor it got there."""

    page: str
    key: str
    anchor: str
    text: str


@dataclass
class Index:
    """Every citation of every page, by entry key, in the order the pages were linked."""

    by_key: dict[str, list[Citation]] = field(default_factory=dict)

    def replace_page(self, page: str, citations: list[Citation]) -> None:
        for key in list(self.by_key):
            self.by_key[key] = [c for c in self.by_key[key] if c.page != page]
        for c in citations:
            self.by_key.setdefault(c.key, []).append(c)


def _fold(name: str) -> str:
    """Lower-case ASCII letters of a surname: "Merriënboer" -> "merrienboer"."""
    return "".join(c for c in unicodedata.normalize("NFKD", name).lower() if c.isalnum() and c.isascii())


def parse_references(markdown: str) -> dict[str, Entry]:
    """The entries of the references page, by key: ``<a id="key"></a>`` then ``**Authors (Year).**``.

    >>> refs = parse_references('<a id="elman1990"></a>\\n**Elman (1990).** Finding structure in time.')
    >>> refs["elman1990"].surnames, refs["elman1990"].year
    (['elman'], '1990')
    """
    return {
        m["key"]: Entry(m["key"], " ".join(m["authors"].split()), m["year"] or "") for m in _ENTRY.finditer(markdown)
    }


def _match(authors: str, first: str, year: str, entries: dict[str, Entry]) -> Entry | None:
    authors = " ".join(authors.split())
    key = _fold(first.split()[-1]) + year
    entry = entries.get(key)
    if entry is None:
        return None
    # Every surname the citation names must be an author of the entry, in the entry's order.
    cited = [_fold(n.split()[-1]) for n in re.split(r",\s*|\s+and\s+|\s*&\s*", authors.replace(" et al.", "")) if n]
    surnames = entry.surnames
    if cited != surnames[: len(cited)] or (
        " et al." not in authors and len(cited) != len(surnames) and "et al." not in entry.authors
    ):
        return None
    return entry


def _inside_quotes(text: str, pos: int) -> bool:
    before = text[:pos]
    if before.count('"') % 2:
        return True
    return any(before.rfind(open_) > before.rfind(close) for open_, close in _QUOTES.items() if open_ != close)


def _line_of(source: str, text: str) -> int | None:
    """The line of ``source`` where ``text`` starts (words may wrap across lines)."""
    words = [re.escape(w) for w in text.split()]
    m = re.search(r"\s+".join(words), source)
    return source.count("\n", 0, m.start()) + 1 if m else None


def link_citations(
    page_html: str, entries: dict[str, Entry], *, references_url: str, page: str, source: str = ""
) -> tuple[str, list[Citation]]:
    """Link each author-year citation of ``page_html`` to its entry; return the HTML and the citations.

    ``references_url`` is the references page relative to this page
    (``../references/``); ``page`` names the page in errors (``docs/chapters/gates.md``)
    and ``source`` is its Markdown, to find the line. Each link gets the id
    ``cite-<key>-<n>`` (n counts from 1 per key on the page) for the way back.

    >>> refs = {"elman1990": Entry("elman1990", "Elman", "1990")}
    >>> out, found = link_citations("<p>As Elman (1990) showed.</p>", refs, references_url="../references/", page="x.md")
    >>> out
    '<p>As <a class="rnnmem-cite" id="cite-elman1990-1" href="../references/#elman1990">Elman (1990)</a> showed.</p>'
    >>> link_citations("<p>Elman (1991)</p>", refs, references_url="r/", page="x.md")
    Traceback (most recent call last):
    ...
    rnnmem.site.citations.CitationError: x.md: "Elman (1991)" matches no entry of docs/references.md (expected a key elman1991); did you mean 'elman1990'?
    """
    out: list[str] = []
    stack: list[tuple[str, bool]] = []  # open elements: (name, whether its text is skipped)
    citations: list[Citation] = []
    errors: list[str] = []
    counts: dict[str, int] = {}
    pos = 0
    for token in _TOKEN.finditer(page_html):
        text = page_html[pos : token.start()]
        skipped = any(skip for _, skip in stack)
        out.append(
            text if skipped else _link_text(text, entries, references_url, page, source, citations, errors, counts)
        )
        out.append(token.group())
        pos = token.end()
        tag = _TAG.match(token.group())
        if tag is None:
            continue
        closing, name, attrs, selfclosing = tag.group(1), tag.group(2).lower(), tag.group(3), tag.group(4)
        link = _REFERENCE_LINK.search(attrs) if name == "a" and not closing else None
        if link and link["key"] in entries and " id=" not in attrs:
            # A link the author wrote to an entry is a citation too: it gets an anchor for the way back.
            key = link["key"]
            counts[key] = counts.get(key, 0) + 1
            anchor = f"cite-{key}-{counts[key]}"
            citations.append(Citation(page, key, anchor, ""))
            out[-1] = f'<a id="{anchor}"' + token.group()[2:]
        if closing:
            if any(n == name for n, _ in stack):
                while stack and stack.pop()[0] != name:
                    pass
        elif not selfclosing and name not in _VOID:
            # Math typeset later (arithmatex) is skipped like code.
            stack.append((name, name in _SKIP or 'class="arithmatex"' in attrs))
    tail = page_html[pos:]
    skipped = any(skip for _, skip in stack)
    out.append(tail if skipped else _link_text(tail, entries, references_url, page, source, citations, errors, counts))
    if errors:
        raise CitationError("\n".join(errors))
    return "".join(out), citations


def _link_text(text: str, entries, references_url, page, source, citations, errors, counts) -> str:
    if "(" not in text:
        return text
    plain = html.unescape(text) if "&" in text else text
    found: list[tuple[int, int, re.Match[str]]] = []
    for pattern in (_NARRATIVE, _PARENTHETICAL):
        for m in pattern.finditer(plain):
            if not any(m.start() < b and a < m.end() for a, b, *_ in found):
                found.append((m.start(), m.end(), m))
    if not found:
        return text
    found.sort(key=lambda f: f[0])
    pieces, last = [], 0
    for start, end, m in found:
        if _inside_quotes(plain, start):
            continue
        entry = _match(m["authors"], m["first"], m["year"], entries)
        cited = plain[start:end] + (")" if m.re is _NARRATIVE and plain[end : end + 1] == ")" else "")
        if entry is None:
            line = _line_of(source, cited) if source else None
            where = f"{page}:{line}" if line else page
            expected = f"{_fold(m['first'].split()[-1])}{m['year']}"
            errors.append(
                f'{where}: "{cited}" matches no entry of docs/references.md '
                f"(expected a key {expected}){did_you_mean(expected, entries)}"
            )
            continue
        counts[entry.key] = counts.get(entry.key, 0) + 1
        anchor = f"cite-{entry.key}-{counts[entry.key]}"
        citations.append(Citation(page, entry.key, anchor, cited))
        end = start + len(cited)
        pieces.append(html.escape(plain[last:start], quote=False))
        pieces.append(
            f'<a class="rnnmem-cite" id="{anchor}" href="{references_url}#{entry.key}">'
            f"{html.escape(cited, quote=False)}</a>"
        )
        last = end
    if not pieces:
        return text
    pieces.append(html.escape(plain[last:], quote=False))
    return "".join(pieces)


def cited_in(references_html: str, index: Index, titles: dict[str, tuple[str, str]]) -> str:
    """Add "Cited in" links after each entry of the references page.

    ``titles`` maps a citing page to ``(title, url relative to the references
    page)``. Each entry paragraph (the ``<p>`` holding ``<a id="key">``) gets
    one link per citing page, to its first citation there, and a count when
    the page cites it more than once.

    >>> index = Index({"elman1990": [Citation("a.md", "elman1990", "cite-elman1990-1", "Elman (1990)")]})
    >>> cited_in('<p><a id="elman1990"></a> Elman.</p>', index, {"a.md": ("Chapter A", "../a/")})
    '<p><a id="elman1990"></a> Elman.<span class="rnnmem-cited-in"> Cited in <a href="../a/#cite-elman1990-1">Chapter A</a>.</span></p>'
    """

    def add(m: re.Match) -> str:
        key = m["key"]
        pages: dict[str, list[Citation]] = {}
        for c in index.by_key.get(key, []):
            pages.setdefault(c.page, []).append(c)
        if not pages:
            return m.group()
        links = []
        for page in sorted(pages, key=lambda p: list(titles).index(p) if p in titles else len(titles)):
            if page not in titles:
                continue
            title, url = titles[page]
            n = len(pages[page])
            count = f" ({n}×)" if n > 1 else ""
            links.append(f'<a href="{url}#{pages[page][0].anchor}">{html.escape(title, quote=False)}</a>{count}')
        if not links:
            return m.group()
        return (
            m.group("open")
            + m.group("body")
            + '<span class="rnnmem-cited-in"> Cited in '
            + ", ".join(links)
            + ".</span></p>"
        )

    return re.sub(r'(?P<open><p><a id="(?P<key>[a-z0-9-]+)"></a>)(?P<body>.*?)</p>', add, references_html, flags=re.S)

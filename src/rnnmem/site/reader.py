"""The build steps around a page's content that a reader meets: citations, search, copying.

One :class:`ReaderSteps` per build, driven by the MkDocs plugin:

* :meth:`ReaderSteps.start` reads the entries of ``references.md``;
* :meth:`ReaderSteps.page_content` links the page's author-year citations to
  their entries (:mod:`rnnmem.site.citations`), keeps the notebook links and
  API source listings out of the search index and gives the page a meta
  description (:mod:`rnnmem.site.pagemeta`), and writes what each Python
  session's copy button copies (:mod:`rnnmem.site.copytext`);
* :meth:`ReaderSteps.references_page` adds to each entry of the references
  page the pages that cite it, once every page has been read.
"""

from __future__ import annotations

import posixpath

from . import citations, copytext, pagemeta

__all__ = ["REFERENCES", "ReaderSteps"]

REFERENCES = "references.md"


def relative_url(target: str, page_url: str) -> str:
    """``target`` (a site URL such as ``references/``) as seen from the page at ``page_url``.

    >>> relative_url("references/", "chapters/gates/"), relative_url("references/", "")
    ('../../references/', 'references/')
    """
    rel = posixpath.relpath(target or ".", page_url or ".")
    return "" if rel == "." else rel.rstrip("/") + "/"


class ReaderSteps:
    def __init__(self) -> None:
        self.entries: dict[str, citations.Entry] = {}
        self.index = citations.Index()
        self.references_url = "references/"

    def start(self, references_markdown: str | None, references_url: str = "references/") -> None:
        self.entries = citations.parse_references(references_markdown or "")
        self.references_url = references_url

    def page_content(self, html: str, *, src_uri: str, url: str, source: str, meta: dict) -> str:
        """The page's HTML with citations linked, search exclusions marked and copy texts set.

        Sets ``meta["description"]`` from the first paragraph when the page's
        front matter gives none. Raises :class:`citations.CitationError` for a
        citation that matches no entry.
        """
        if src_uri != REFERENCES and self.entries and not src_uri.startswith("api/"):
            html, found = citations.link_citations(
                html,
                self.entries,
                references_url=relative_url(self.references_url, url),
                page=f"docs/{src_uri}",
                source=source,
            )
            self.index.replace_page(f"docs/{src_uri}", found)
        html = pagemeta.exclude_from_search(html, api=src_uri.startswith("api/"))
        html = copytext.mark_sessions(html)
        if not meta.get("description"):
            description = pagemeta.describe(html)
            if description:
                meta["description"] = description
        return html

    def references_page(self, html: str, pages: list[tuple[str, str, str]], url: str) -> str:
        """Add "Cited in" links to the references page; ``pages`` lists ``(src_uri, title, url)`` in nav order."""
        titles = {f"docs/{src}": (title, relative_url(page_url, url)) for src, title, page_url in pages}
        return citations.cited_in(html, self.index, titles)

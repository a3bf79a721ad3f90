"""The edition on the built site (run `make build` first): the version and the build date in
every page's footer and on Home, a link to the changes and errata, the citation's edition,
and the Open Graph and social-card tags of every page."""

from __future__ import annotations

import re
from urllib.parse import urljoin

import pytest

import rnnmem
from rnnmem.site.edition import Edition

FOOTER = re.compile(r"edition (?P<version>\S+), (?:built (?P<date>\d{4}-\d{2}-\d{2})|development build)")


def expected(page_soup) -> Edition:
    """The edition Home's footer names (the build's SOURCE_DATE_EPOCH, whatever it was)."""
    text = " ".join(page_soup("index.html").select_one(".md-copyright .rnnmem-edition").get_text().split())
    m = FOOTER.search(text)
    assert m is not None, text
    return Edition(m.group("version"), m.group("date") or "")


def test_every_page_names_its_edition_in_the_footer_and_links_the_errata(html_page, page_soup):
    footer = page_soup(html_page).select_one(".md-copyright .rnnmem-edition")
    assert footer is not None, f"{html_page}: no edition in the footer"
    text = " ".join(footer.get_text().split())
    ed = expected(page_soup)
    assert ed.version == rnnmem.__version__ and ed.label in text, text
    (link,) = footer.select("a")
    assert urljoin("/" + html_page, link["href"]).endswith("/changes/") and "errata" in link.get_text()


def test_home_and_the_citation_state_the_version_and_the_date(page_soup):
    ed = expected(page_soup)
    home = " ".join(page_soup("index.html").select_one(".md-content").get_text().split())
    assert f"This is edition {ed.version} of the book, built on {ed.values()['date']}" in home
    refs = page_soup("references/index.html").select_one(".md-content")
    text = " ".join(refs.get_text().split())
    assert f"You are reading edition {ed.version}" in text
    bibtex = [c.get_text() for c in refs.select("pre code") if "@book{why_rnns_forget" in c.get_text()]
    assert len(bibtex) == 1
    assert re.search(r"edition\s*=\s*\{" + re.escape(rnnmem.__version__) + r"\}", bibtex[0]), (
        "the citation's edition must be rnnmem's version: update docs/references.md"
    )


def test_the_changes_page_lists_errata_each_with_where_and_when(page_soup):
    page = page_soup("changes/index.html").select_one(".md-content")
    errata = page.find("h2", id="errata")
    assert errata is not None
    entries = []
    for h in errata.find_all_next(["h2", "h3"]):
        if h.name == "h2":
            break
        entries.append(h)
    assert len(entries) >= 3
    for h in entries:
        body = " ".join(s.get_text() for s in h.find_next_siblings("p", limit=1))
        assert "Where:" in body and "Corrected in:" in body, h.get_text()


@pytest.mark.parametrize("page", ["index.html", "chapters/horizon/index.html", "changes/index.html"])
def test_pages_carry_open_graph_and_social_card_tags(page, page_soup):
    soup = page_soup(page)

    def meta(attr: str, name: str) -> str:
        tag = soup.find("meta", attrs={attr: name})
        assert tag is not None and tag.get("content", "").strip(), f"{page}: no {name}"
        return tag["content"]

    description = meta("name", "description")
    assert meta("property", "og:description") == description == meta("name", "twitter:description")
    title = soup.title.get_text()
    assert meta("property", "og:title") in title and meta("name", "twitter:title") == meta("property", "og:title")
    assert meta("property", "og:url") == soup.find("link", rel="canonical")["href"]
    assert meta("property", "og:type") == ("website" if page == "index.html" else "article")
    assert meta("name", "twitter:card") == "summary" and meta("property", "og:site_name")

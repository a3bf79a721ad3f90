"""Search finds the book before its API: a reader who searches for a chapter's subject gets the chapter first.

The API reference's text is nearly half of the search index, and once ranked
three module pages above the chapter on the forget bias. Each module page
carries a lower search weight (``search: boost`` front matter, written by
:mod:`rnnmem.site.apipages`). This test types queries into the site's own
search box, in Chromium, and reads the first result.
"""

from __future__ import annotations

import json

import pytest

from rnnmem.site.apipages import API_SEARCH_BOOST, SEARCH_EXCLUDED

#: A subject of the book, and where a reader who searches for it should land first: the chapter that is
#: about it, or (None) anywhere but a module page of the API.
QUERIES = {
    "forget bias": "chapters/forget-bias/",
    "recurrent dropout": None,
    "chrono initialization": None,
    "clipping": None,
    "horizon": None,
}


def test_module_pages_weigh_less_in_the_index_and_chapters_do_not(site_dir):
    docs = json.loads((site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    api = [d for d in docs if d["location"].startswith("api/") and d["location"] != "api/"]
    chapters = [d for d in docs if d["location"].startswith("chapters/")]
    assert api and chapters
    assert all(d.get("boost") == API_SEARCH_BOOST for d in api if not d["location"].startswith("api/#"))
    assert all("boost" not in d for d in chapters)
    excluded = [d["location"] for d in api if d["location"].split("/")[1] in SEARCH_EXCLUDED]
    assert not excluded, f"pages left out of the search index are in it: {excluded[:3]}"
    assert (site_dir / "api" / "site" / "index.html").is_file()  # left out of search, not out of the site


@pytest.fixture(scope="module")
def context(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    context.route(lambda url: not url.startswith("http://127.0.0.1"), lambda route: route.abort("blockedbyclient"))
    yield context
    context.close()


@pytest.mark.parametrize("query", list(QUERIES))
def test_a_chapters_subject_finds_the_chapter_first(context, site_server, query):
    page = context.new_page()  # one search per page: the results list is the query's alone
    try:
        page.goto(site_server, wait_until="load")
        page.locator("input.md-search__input").fill(query)
        page.wait_for_selector(".md-search-result__item > a")
        first, seen = None, page.locator(".md-search-result__item > a").first.get_attribute("href")
        while first != seen:  # the list has settled: the results of the whole query, not of its first letters
            first = seen
            page.wait_for_timeout(400)
            seen = page.locator(".md-search-result__item > a").first.get_attribute("href")
        first = first or ""
    finally:
        page.close()
    assert first.startswith(site_server), first
    where = first[len(site_server) :]
    wanted = QUERIES[query]
    assert where.startswith(wanted) if wanted else not where.startswith("api/"), (
        f"searching {query!r}, the first result is {where}"
    )

"""What a reader meets around the chapters, checked on the built site (run `make build` first).

Home (hero figure, Start reading, Next goes to chapter 1), References (links to the
works, citations linked both ways, Cite this book), search (no API source, no
notebook links at the start of an entry), a distinct meta description on
every page, copied Python sessions that run in the classic prompt, and in Chromium:
the 404 page, print, copying, and the navigation's sticky title.
"""

from __future__ import annotations

import codeop
import json
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from conftest import SCROLLERS_DONE


def chapters(site_dir: Path) -> list[str]:
    return sorted(p.relative_to(site_dir).as_posix() for p in (site_dir / "chapters").glob("*/index.html"))


def target(site_dir: Path, page: str, href: str) -> tuple[Path, str]:
    """The built file and the fragment a relative link of ``page`` points to."""
    parts = urlsplit(urljoin("/" + page, href))
    path = parts.path.lstrip("/")
    path = path + "index.html" if path.endswith("/") or not path else path
    return site_dir / path, parts.fragment


# -- Home -------------------------------------------------------------------------


def test_home_has_a_hero_figure_and_start_reading_goes_to_chapter_one(page_soup):
    home = page_soup("index.html")
    content = home.select_one(".md-content")
    first_figure = content.select_one("figure.rnnmem-figure img")
    assert first_figure is not None and "hero" in first_figure["src"]
    start = [a for a in content.select("a.md-button") if a.get_text(strip=True) == "Start reading"]
    assert start and start[0]["href"] == "chapters/feeds-itself/"
    nxt = home.select_one("a.md-footer__link--next")
    assert nxt is not None and nxt["href"] == "chapters/feeds-itself/", "Home's Next must go to chapter 1"


def test_conventions_stay_in_the_nav_after_the_chapters(page_soup):
    links = [a["href"] for a in page_soup("index.html").select(".md-nav--primary a.md-nav__link[href]")]
    assert "conventions/" in links and "corrections/" in links
    assert links.index("conventions/") > links.index("chapters/words-in-context/")


# -- References and citations ---------------------------------------------------------


def test_every_reference_links_to_the_work_and_cite_this_book_is_bibtex(page_soup):
    refs = page_soup("references/index.html")
    entries = refs.select(".md-content p:has(> a[id]:first-child)")
    assert len(entries) >= 30
    for p in entries:
        outside = [a["href"] for a in p.select("a[href^='https://']")]
        assert outside, f"entry {p.a['id']} links to no work"
    bibtex = refs.select_one("#cite-this-book ~ .highlight code")
    assert bibtex is not None and bibtex.get_text().startswith("@book{")


def test_citations_link_to_entries_and_entries_link_back(site_dir, page_soup):
    refs_file = site_dir / "references" / "index.html"
    entry_ids = {a["id"] for a in page_soup("references/index.html").select(".md-content p > a[id]")}
    cited = set()
    for page in chapters(site_dir):
        cites = page_soup(page).select("a.rnnmem-cite")
        assert cites, f"{page}: no citation linked"
        for a in cites:
            path, fragment = target(site_dir, page, a["href"])
            assert path == refs_file and fragment in entry_ids, (page, a["href"])
            cited.add(fragment)
    back = page_soup("references/index.html").select(".rnnmem-cited-in a")
    assert back
    backed = set()
    for a in back:
        path, fragment = target(site_dir, "references/index.html", a["href"])
        assert page_soup(path.relative_to(site_dir).as_posix()).find(id=fragment) is not None, a["href"]
        backed.add(fragment.split("-")[1])
    assert cited <= backed, f"cited but not linked back: {sorted(cited - backed)}"


# -- Search and descriptions ------------------------------------------------------------


def search_entries(site_dir: Path) -> list[dict]:
    return json.loads((site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]


def test_search_leaves_out_api_source_and_notebook_links(site_dir):
    # (raw TeX in the index: test_a11y.test_search_index_holds_no_tex)
    docs = search_entries(site_dir)
    api = [d for d in docs if d["location"].startswith("api/")]
    assert api, "the API pages are indexed"
    assert "Source code in" in (site_dir / "api" / "rnn" / "index.html").read_text(encoding="utf-8")
    for d in api:
        assert "Source code in" not in d["text"], d["location"]
    for d in docs:
        if d["location"].startswith("chapters/"):
            assert not d["text"].lstrip().startswith("This chapter as a notebook"), d["location"]


def test_every_page_has_its_own_description(site_dir, page_soup):
    seen: dict[str, str] = {}
    for path in sorted(site_dir.rglob("*.html")):
        rel = path.relative_to(site_dir).as_posix()
        meta = page_soup(rel).select_one('meta[name="description"]')
        if rel.count("/") and "index.html" not in rel:  # redirects and fragments of pages
            continue
        assert meta is not None and len(meta["content"]) >= 40, rel
        assert meta["content"] not in seen, f"{rel} has the description of {seen.get(meta['content'])}"
        assert "This chapter as a notebook" not in meta["content"], rel
        seen[meta["content"]] = rel


# -- Copying a Python session --------------------------------------------------------------


def runs_in_the_classic_prompt(text: str) -> str | None:
    """Feed ``text`` line by line as the classic Python prompt reads a paste; None, or what went wrong.

    Each line is added to the pending statement, which is compiled as the prompt
    does (``codeop.compile_command``): complete, it "runs" and the buffer empties;
    incomplete, the next line continues it; a syntax error is what the reader sees.
    """
    pending: list[str] = []
    for number, line in enumerate(text.split("\n"), 1):
        if not pending and not line.strip():
            continue
        pending.append(line)
        try:
            code = codeop.compile_command("\n".join(pending), "<stdin>", "single")
        except SyntaxError as exc:
            return f"line {number}: {exc.msg}: {line!r}"
        if code is not None:
            pending = []
    return f"left waiting for more input after: {pending!r}" if pending else None


def sessions(site_dir: Path, page_soup):
    for page in chapters(site_dir) + ["index.html", "corrections/index.html"]:
        for div in page_soup(page).select("div.highlight:has(span.gp)"):
            yield page, div


def test_copied_sessions_run_in_the_classic_prompt(site_dir, page_soup):
    checked = compound = 0
    for page, div in sessions(site_dir, page_soup):
        text = div.get("data-copy")
        assert text is not None, f"{page}: a Python session without its copy text"
        problem = runs_in_the_classic_prompt(text)
        assert problem is None, f"{page}: the copied block fails in the classic prompt, {problem}:\n{text}"
        checked += 1
        compound += "\n\n" in text.rstrip("\n") or text.endswith("\n\n")
    assert checked > 100 and compound >= 5


def test_the_prompt_check_can_fail():
    assert runs_in_the_classic_prompt("for k in range(2):\n    k\nk\n") is not None
    assert runs_in_the_classic_prompt("for k in range(2):\n    k\n\nk\n") is None


# -- In Chromium ---------------------------------------------------------------------------


def open_page(browser, base: str, rel: str, *, width: int = 1280, scheme: str = "light", **options):
    context = browser.new_context(
        viewport={"width": width, "height": 900}, color_scheme=scheme, service_workers="block", **options
    )
    context.route(lambda url: urlsplit(url).hostname != "127.0.0.1", lambda route: route.abort("blockedbyclient"))
    page = context.new_page()
    page.goto(base + rel, wait_until="load")
    # The theme's scripts start after the first paint (rnnmem.site.speed); the page is ready
    # for a reader's actions (print, copy, search) once they have started and drawn it.
    page.wait_for_function(SCROLLERS_DONE, timeout=30_000)
    return context, page


@pytest.mark.browser
def test_404_offers_search_and_the_way_home(browser, site_server):
    context, page = open_page(browser, site_server, "404.html")
    try:
        assert page.locator("h1").inner_text() == "Page not found"
        home = page.locator(".rnnmem-404 a.md-button")
        assert urljoin(page.url, home.get_attribute("href")) == site_server
        page.locator("[data-rnnmem-search]").click()
        assert page.evaluate("document.getElementById('__search').checked")
        assert page.evaluate("document.activeElement.classList.contains('md-search__input')")
    finally:
        context.close()


@pytest.mark.browser
def test_print_opens_answers_and_hides_buttons_and_navigation(browser, site_server):
    context, page = open_page(browser, site_server, "chapters/horizon/")
    try:
        page.emulate_media(media="print")
        closed = page.locator("details:not([open])").first
        assert closed.count() == 1
        body = closed.locator(":scope > :not(summary)").first
        assert body.bounding_box() is not None and body.bounding_box()["height"] > 0, (
            "a collapsed answer is not printed"
        )
        hidden = page.evaluate("""() => ['.md-sidebar--primary', '.md-header', '.md-code__nav', '.md-footer']
            .map(s => [...document.querySelectorAll(s)].every(e => getComputedStyle(e).display === 'none'))""")
        assert all(hidden), hidden
        page.emulate_media(media="screen")
        # Closed again on screen. (Its box may keep the size print gave it: a closed answer's
        # content is skipped by layout, not laid out again; what the reader sees is whether it shows.)
        assert not closed.locator(":scope > :not(summary)").first.evaluate("el => el.checkVisibility()")
    finally:
        context.close()


@pytest.mark.browser
def test_the_copy_button_copies_a_session_for_the_classic_prompt(browser, site_server):
    context, page = open_page(
        browser, site_server, "chapters/counting-scaling/", permissions=["clipboard-read", "clipboard-write"]
    )
    try:
        block = page.locator("div.highlight[data-copy]", has_text=">>> for gamma in (0.3, 0.4):")
        block.scroll_into_view_if_needed()
        block.hover()
        block.locator("button[data-md-type='copy']").click()
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied == block.get_attribute("data-copy")
        assert ">>>" not in copied and "for gamma in (0.3, 0.4):" in copied
        assert runs_in_the_classic_prompt(copied) is None
        lines = copied.split("\n")
        end_of_loop = next(
            i for i in range(lines.index("for gamma in (0.3, 0.4):") + 1, len(lines)) if not lines[i].startswith(" ")
        )
        assert lines[end_of_loop] == "", "the loop is not closed by a blank line"
    finally:
        context.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1280])
def test_nothing_is_drawn_over_the_sticky_navigation_title(browser, site_server, width):
    context, page = open_page(browser, site_server, "references/", width=width)
    try:
        if width < 1220:
            page.locator("label.md-header__button[for='__drawer']").click()
            page.wait_for_timeout(400)
        title = page.locator(".md-nav--primary > .md-nav__title").first
        scroller = page.locator(".md-sidebar--primary .md-sidebar__scrollwrap")
        scroller.evaluate("el => el.scrollTop = el.scrollHeight / 2")
        page.wait_for_timeout(200)
        box = title.bounding_box()
        assert box and box["height"] > 0
        for fx in (0.2, 0.5, 0.8):
            for fy in (0.1, 0.5, 0.95):
                on_top = page.evaluate(
                    "([x, y]) => { const t = document.querySelector('.md-nav--primary > .md-nav__title');"
                    " const e = document.elementFromPoint(x, y); return !!e && (t === e || t.contains(e)); }",
                    [box["x"] + fx * box["width"], box["y"] + fy * box["height"]],
                )
                assert on_top, f"something is drawn over the navigation title at {width} px"
        shadow = title.evaluate("el => getComputedStyle(el).boxShadow")
        assert shadow == "none", f"the title's glow half covers the links beneath it: {shadow}"
    finally:
        context.close()

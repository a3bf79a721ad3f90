"""What the built pages do for a fast first screen, checked on the files (the speed itself is
measured by tests/benchmarks/bench_lighthouse.py, never by a timed test).

* every page waits for three stylesheets at most: Material's two and the book's one
  (:mod:`rnnmem.site.stylesheet`), whose every relative ``url()`` names a file of the site;
* the site downloads no font: text is set in the reader's fonts, and each formula is an SVG
  drawing its glyphs from the outlines its page carries (every one of them found there);
* every figure but a page's first loads lazily and is decoded off the main thread, and
  every figure has its size in the HTML (nothing moves when it arrives);
* every page starts the theme's script and the site's after its first paint, and resolves
  its stylesheets' addresses at the end of its head, so the theme does not load them again.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
import yaml

from conftest import SCROLLERS_DONE, site_prefix
from rnnmem.site.mathjax import GLYPH_CACHE_ID
from rnnmem.site.speed import RESOLVE_LINKS, scripts_started_after_paint
from rnnmem.site.stylesheet import BUNDLE

ROOT = Path(__file__).resolve().parents[2]

CSS_URL = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)"'\s]*))\s*\)""")


def _pages(site_dir):
    return sorted(p for p in site_dir.rglob("*.html") if p.name != "404.html")


def test_each_page_waits_for_the_book_s_one_stylesheet(site_dir, page_soup):
    problems = []
    for path in _pages(site_dir):
        rel = path.relative_to(site_dir).as_posix()
        soup = page_soup(rel)
        hrefs = [
            posixpath.normpath(posixpath.join(posixpath.dirname(rel), link["href"]))
            for link in soup.find_all("link", rel="stylesheet")
        ]
        own = [
            h
            for h in hrefs
            if not h.startswith("assets/stylesheets/main.") and not h.startswith("assets/stylesheets/palette.")
        ]
        if own != [BUNDLE] or len(hrefs) > 3:
            problems.append(f"{rel}: {hrefs}")
    assert not problems, "pages linking more than Material's stylesheets and the book's one:\n" + "\n".join(
        problems[:20]
    )


def test_the_book_stylesheet_names_files_of_the_site(site_dir):
    css = (site_dir / BUNDLE).read_text(encoding="utf-8")
    urls = [next(g for g in m.groups() if g is not None) for m in CSS_URL.finditer(css)]
    relative = [u for u in urls if not re.match(r"^(?:[a-z][a-z0-9+.-]*:|/|#)", u, re.I)]
    assert 'mjx-container[jax="SVG"]' in css, "the math stylesheet is not in the bundle"
    missing = [
        u
        for u in relative
        if not (site_dir / posixpath.normpath(posixpath.join(posixpath.dirname(BUNDLE), u))).is_file()
    ]
    assert not missing, f"{BUNDLE} names files the site does not have: {missing[:10]}"


FONT_FILES = (".woff", ".woff2", ".ttf", ".otf", ".eot")


def test_the_site_downloads_no_font(site_dir):
    css = (site_dir / BUNDLE).read_text(encoding="utf-8")
    assert "@font-face" not in css, "the book's stylesheet declares a web font"
    fonts = sorted(p.relative_to(site_dir).as_posix() for p in site_dir.rglob("*") if p.suffix in FONT_FILES)
    assert not fonts, f"font files in the site: {fonts[:10]}"


GLYPH_CACHE = re.compile(rf'<svg style="display: none;" id="{GLYPH_CACHE_ID}"><defs>(.*?)</defs></svg>', re.S)


def test_every_formula_draws_glyphs_its_page_holds(site_dir):
    # A glyph a formula names but its page does not hold is drawn as nothing: a formula with a
    # hole in it, which no other check would see.
    problems, pages_with_math = [], 0
    for path in _pages(site_dir):
        html = path.read_text(encoding="utf-8")
        rel = path.relative_to(site_dir).as_posix()
        first = html.find("<mjx-container")
        caches = GLYPH_CACHE.findall(html)
        if first < 0:
            if caches:
                problems.append(f"{rel}: a glyph cache but no formula")
            continue
        pages_with_math += 1
        if len(caches) != 1 or html.find(f'id="{GLYPH_CACHE_ID}"') > first:
            problems.append(f"{rel}: {len(caches)} glyph caches, or one after the first formula")
            continue
        held = re.findall(r'<path id="([^"]+)"', caches[0])
        used = set(re.findall(r'<use [^>]*xlink:href="#(MJX-[^"]+)"', html))
        if len(held) != len(set(held)) or used - set(held) or set(held) - used:
            problems.append(
                f"{rel}: glyphs used but not held {sorted(used - set(held))[:5]}, "
                f"held but not used {sorted(set(held) - used)[:5]}"
            )
    assert pages_with_math >= 10, f"only {pages_with_math} pages with math"
    assert not problems, "\n".join(problems[:20])


def test_figures_below_the_first_load_lazily_with_their_size(site_dir, page_soup):
    problems, lazy = [], 0
    for path in _pages(site_dir):
        rel = path.relative_to(site_dir).as_posix()
        soup = page_soup(rel)
        for n, img in enumerate(soup.select("figure.rnnmem-figure img")):
            if not (img.get("width") and img.get("height")):
                problems.append(f"{rel}: {img['src']} has no width and height")
            wanted = {} if n == 0 else {"loading": "lazy", "decoding": "async"}
            got = {k: img.get(k) for k in ("loading", "decoding") if img.get(k)}
            if got != wanted:
                problems.append(f"{rel}: figure {n + 1} ({img['src']}) has {got}, expected {wanted}")
            lazy += n > 0
    assert lazy > 10, f"only {lazy} figures after a page's first: is the site built?"
    assert not problems, "\n".join(problems[:20])


# -- Drawn first, scripts after (rnnmem.site.speed) -------------------------------------------


def mkdocs_yml() -> dict:
    """mkdocs.yml as data; its Python tags (emoji functions) are read as None."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)


def test_every_page_starts_its_scripts_after_the_first_paint(site_dir):
    extra = [s if isinstance(s, str) else s["path"] for s in mkdocs_yml().get("extra_javascript") or []]
    assert extra, "mkdocs.yml names no extra_javascript: the check below would check nothing of ours"
    problems, pages = [], 0
    for path in sorted(site_dir.rglob("*.html")):
        html = path.read_text(encoding="utf-8")
        if 'http-equiv="refresh"' in html:
            continue  # a redirect
        pages += 1
        rel = path.relative_to(site_dir).as_posix()
        head = html[: html.find("</head>")]
        if not head.endswith(RESOLVE_LINKS) or head.count(RESOLVE_LINKS) != 1:
            problems.append(f"{rel}: the head does not end with the script that resolves its links")
        if re.search(r'<script src="[^"]*bundle\.[0-9a-f]+\.min\.js"', html):
            problems.append(f"{rel}: loads the theme's script before the first paint")
        started = scripts_started_after_paint(html[html.rindex("</body>") - 2000 :])
        if not started:
            problems.append(f"{rel}: no script loader at the end of the body")
            continue
        files = []
        for src in started:
            url = urlsplit(urljoin("/" + rel, src)).path
            if url.startswith(site_prefix()):  # the 404 page names its files from the site's root
                url = "/" + url[len(site_prefix()) :]
            files.append(url.lstrip("/"))
        missing = [f for f in files if not (site_dir / f).is_file()]
        if missing:
            problems.append(f"{rel}: the loader names files the site does not have: {missing}")
        if not (
            files and re.fullmatch(r"assets/javascripts/bundle\.[0-9a-f]+\.min\.js", files[0]) and files[1:] == extra
        ):
            problems.append(f"{rel}: the loader starts {files}, not the theme's script and then {extra}")
    assert pages > 30, f"only {pages} pages: is the site built?"
    assert not problems, "\n".join(problems[:20])


def test_each_chapter_s_exercises_are_sized_an_item_at_a_time(site_dir, page_soup):
    """The list of exercises, the largest block of a chapter, is marked so that its items are the blocks."""
    problems = []
    chapters = sorted(site_dir.glob("chapters/*/index.html"))
    for path in chapters:
        soup = page_soup(path.relative_to(site_dir).as_posix())
        units = soup.select(".md-content__inner > ol.rnnmem-units")
        heading = soup.find("h2", id="exercises")
        after = heading.find_next_sibling("ol") if heading else None
        if after is None or len(units) != 1 or units[0] is not after:
            problems.append(f"{path.parent.name}: {len(units)} lists marked, the exercises' is {after is not None}")
            continue
        # each item carries the number the stylesheet draws in it (a contained item clips the list's marker)
        numbers = [li.get("data-n") for li in after.find_all("li", recursive=False)]
        if numbers != [str(k) for k in range(1, len(numbers) + 1)] or len(numbers) < 3:
            problems.append(f"{path.parent.name}: the items are numbered {numbers}")
    assert len(chapters) > 10, f"only {len(chapters)} chapters: is the site built?"
    assert not problems, "\n".join(problems)


FIRST_SCREEN = """() => {
    const paint = performance.getEntriesByName("first-contentful-paint")[0];
    const theme = performance.getEntriesByType("resource").find((e) => /assets\\/javascripts\\/bundle\\.[0-9a-f]+\\.min\\.js$/.test(e.name));
    const blocks = [...document.querySelectorAll(".md-content__inner > *, .md-content__inner > .rnnmem-units > li")];
    const standIn = blocks.map((b) => b.getBoundingClientRect().height);
    blocks.forEach((b) => b.classList.add("rnnmem-measure"));
    const drawn = blocks.map((b) => b.getBoundingClientRect().height);
    blocks.forEach((b) => b.classList.remove("rnnmem-measure"));
    return {
        paint: paint ? paint.startTime : null,
        theme: theme ? theme.startTime : null,
        blocks: blocks.length,
        skippable: blocks.filter((b) => getComputedStyle(b).contentVisibility === "auto").length,
        units: [...document.querySelectorAll(".md-content__inner > ol.rnnmem-units")].map((list) => [
            getComputedStyle(list).contentVisibility,
            [...list.children].filter((item) => getComputedStyle(item).contentVisibility === "auto").length,
            list.children.length,
        ]),
        unsized: blocks.filter((b) => !b.classList.contains("rnnmem-sized")).map((b) => b.tagName + "." + b.className),
        misfit: blocks.map((b, i) => [b.tagName + "." + b.className, standIn[i], drawn[i]]).filter(([, a, b]) => Math.abs(a - b) > 3),
        relinked: window.__relinked,
    };
}"""

#: Before the page's own scripts: note every change of a stylesheet's address after the head.
WATCH_LINKS = """window.__relinked = [];
document.addEventListener("DOMContentLoaded", () => {
    new MutationObserver((records) => records.forEach((r) => window.__relinked.push(r.target.outerHTML)))
        .observe(document.head, {attributes: true, attributeFilter: ["href"], subtree: true});
});"""

COPY_BUTTONS = """async () => {
    const frame = () => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 20)));
    const code = [...document.querySelectorAll(".md-content div.highlight pre > code")];
    const early = document.querySelectorAll(".md-content div.highlight pre > .md-code__nav .md-code__button").length;
    document.querySelectorAll(".md-content details").forEach((answer) => { answer.open = true; });  // as a reader opens them
    for (const block of code) { block.scrollIntoView({block: "center"}); await frame(); await frame(); }
    await frame();
    return {code: code.length, early,
            copy: document.querySelectorAll(".md-content div.highlight pre > .md-code__nav .md-code__button").length};
}"""


@pytest.mark.browser
def test_a_chapter_is_drawn_before_the_theme_s_script_runs_and_sized_after(browser, site_server):
    """The theme's script is requested after the first paint and leaves the stylesheets' addresses
    alone (a new one would make the browser parse the sheet and lay out the page again); once the
    page is idle, every block of the article that is left undrawn off the screen stands in at the
    height it is drawn at (so nothing on the page is out of place); and the theme mounts every code
    block as it comes into view (a copy button on each, answers opened)."""
    context = browser.new_context(viewport={"width": 390, "height": 800}, color_scheme="light")
    try:
        context.add_init_script(WATCH_LINKS)
        page = context.new_page()
        page.goto(site_server + "chapters/gates/", wait_until="load")
        page.wait_for_function(SCROLLERS_DONE, timeout=30_000)
        state = page.evaluate(FIRST_SCREEN)
        copy = page.evaluate(COPY_BUTTONS)
    finally:
        context.close()
    assert state["paint"] is not None and state["theme"] is not None, state
    assert state["theme"] >= state["paint"], (
        f"the theme's script was requested at {state['theme']:.0f} ms, before the first paint at {state['paint']:.0f} ms"
    )
    assert state["relinked"] == [], f"stylesheet addresses changed after the head: {state['relinked'][:3]}"
    assert state["blocks"] > 50 and state["skippable"] > 50, state
    # the exercises: the list is always laid out, and each of its items is a block of its own
    assert len(state["units"]) == 1 and state["units"][0][0] == "visible", state["units"]
    assert state["units"][0][1] == state["units"][0][2] > 3, state["units"]
    assert not state["unsized"], f"blocks never sized: {state['unsized'][:5]}"
    assert not state["misfit"], (
        f"blocks whose stand-in height is not their drawn height (block, stand-in, drawn): {state['misfit'][:5]}"
    )
    assert copy["code"] > 5 and copy["copy"] == copy["code"], (
        f"{copy['copy']} copy buttons for {copy['code']} code blocks"
    )
    assert copy["early"] < copy["code"], "every code block was mounted at once, not as it came into view"

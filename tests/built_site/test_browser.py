"""The built site in a real browser: every page loads cleanly, offline, with its math typeset.

Headless Chromium (Playwright) opens every HTML page of site/, 404.html
included, from a loopback server that serves it under the same path as GitHub
Pages. One browser serves the module; the page checks share one context (its
caches help) and keep the next pages loading while one is checked; the
interactions get fresh contexts. For each page:
no console error, no uncaught exception, no failed request, no request to any
host but 127.0.0.1 (other hosts are also blocked, so a stray fetch cannot hang
a page), every image decoded, and every piece of math typeset (at build time: no
MathJax runtime in the page).
Then three interactions: instant navigation brings the new page's math typeset,
the palette toggle switches to the dark scheme, and a doctest block's copy
button copies the code without prompts or output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup

from conftest import SCROLLERS_DONE

pytestmark = pytest.mark.browser

CHAPTER = "chapters/horizon/"
TIMEOUT_MS = 10_000  # for anything that follows a loaded page
LOAD_TIMEOUT_MS = 30_000  # for a page's load event: generous, as several pages load at once
LOCAL_SCHEMES = {"data", "blob", "about", "chrome-extension"}


def url_of(base: str, rel: str) -> str:
    return base + (rel[: -len("index.html")] if rel.endswith("index.html") else rel)


def math_in_markdown_cells(html: str) -> list[int]:
    """Indices of the notebook Markdown cells whose text (code aside) contains TeX delimiters."""
    if "jp-RenderedMarkdown" not in html:
        return []
    soup = BeautifulSoup(html, "html.parser")
    found = []
    for i, cell in enumerate(soup.select(".jp-RenderedMarkdown")):
        for code in cell.find_all(["code", "pre"]):
            code.decompose()
        text = cell.get_text()
        if text.count("$") >= 2 or "\\(" in text or "\\[" in text:
            found.append(i)
    return found


@dataclass
class Visit:
    """What one page did in the browser."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    requests: int = 0
    pending: dict = field(default_factory=dict)  # request -> URL, until it finishes or fails

    def problems(self) -> list[str]:
        return (
            [f"console error: {m}" for m in self.console_errors]
            + [f"page error: {m}" for m in self.page_errors]
            + [f"request to another host: {u}" for u in self.foreign_requests]
            + [f"failed request: {u}" for u in self.failed_requests]
        )


def is_foreign(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme not in LOCAL_SCHEMES and parts.hostname != "127.0.0.1"


def new_context(browser):
    context = browser.new_context(color_scheme="light", service_workers="block")
    # Block everything not served from the loopback server (the request is still recorded).
    context.route(is_foreign, lambda route: route.abort("blockedbyclient"))
    return context


def start_page(context, base: str, rel: str):
    """Start loading rel in a new page of context, recording everything; returns (page, record)."""
    record = Visit()
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.set_default_navigation_timeout(LOAD_TIMEOUT_MS)

    def on_request(request):
        record.requests += 1
        record.pending[request] = request.url
        if is_foreign(request.url):
            record.foreign_requests.append(request.url)

    def on_response(response):
        if response.status >= 400:
            record.failed_requests.append(f"{response.url} (HTTP {response.status})")

    def on_failed(request):
        record.pending.pop(request, None)
        if not is_foreign(request.url):  # foreign ones are reported already
            record.failed_requests.append(f"{request.url} ({request.failure})")

    def on_console(msg):
        if msg.type == "error":
            where = msg.location or {}
            record.console_errors.append(f"{msg.text} at {where.get('url', '?')}:{where.get('lineNumber', '?')}")

    page.on("request", on_request)
    page.on("response", on_response)
    page.on("requestfailed", on_failed)
    page.on("requestfinished", lambda request: record.pending.pop(request, None))
    page.on("console", on_console)
    page.on("pageerror", lambda exc: record.page_errors.append(str(exc)))
    page.goto(url_of(base, rel), wait_until="commit")
    return page, record


def visit_page(context, base: str, rel: str):
    """Open rel in a new page of context and wait for its load event; returns (page, record)."""
    page, record = start_page(context, base, rel)
    page.wait_for_load_state("load", timeout=LOAD_TIMEOUT_MS)
    return page, record


class Prefetcher:
    """Keeps the next few pages of the page-by-page checks loading while one is checked,
    so that the browser works on several pages at once (they share one context)."""

    AHEAD = 2

    def __init__(self, context, base: str, order: list[str]):
        self.context, self.base, self.order = context, base, order
        self.started: dict[str, tuple] = {}

    def take(self, rel: str):
        """(page, record) for rel, loaded; starts the pages after it."""
        self._start(rel)
        if rel in self.order:
            i = self.order.index(rel)
            for following in self.order[i + 1 : i + 1 + self.AHEAD]:
                self._start(following)
        page, record = self.started.pop(rel)
        page.wait_for_load_state("load", timeout=LOAD_TIMEOUT_MS)
        return page, record

    def _start(self, rel: str):
        if rel not in self.started:
            self.started[rel] = start_page(self.context, self.base, rel)

    def close(self):
        for page, _ in self.started.values():
            page.close()


@pytest.fixture(scope="module")
def prefetcher(browser, site_server, site_dir):
    """One context for the page-by-page checks, so its HTTP and script caches serve every page after the first."""
    context = new_context(browser)
    order = sorted(p.relative_to(site_dir).as_posix() for p in site_dir.rglob("*.html"))
    loader = Prefetcher(context, site_server, order)
    yield loader
    loader.close()
    context.close()


UNTYPESET = """(cells) => {
    const md = [...document.querySelectorAll('.jp-RenderedMarkdown')];
    const left = [...document.querySelectorAll('.arithmatex')].filter(el => !el.querySelector('mjx-container'))
        .map(el => '.arithmatex ' + JSON.stringify(el.textContent.trim().slice(0, 60)));
    for (const i of cells) if (!md[i] || !md[i].querySelector('mjx-container'))
        left.push('notebook Markdown cell ' + i + ' ' + JSON.stringify(md[i] ? md[i].textContent.trim().slice(0, 60) : null));
    return left;
}"""


def untypeset_math(page, markdown_cells: Sequence[int] = ()) -> list[str]:
    """Every .arithmatex and each given notebook Markdown cell must hold math typeset when
    the site was built (no MathJax runs in the browser); returns what is not, and any TeX
    error, as problems."""
    left = page.evaluate(UNTYPESET, list(markdown_cells))
    problems = [f"math not typeset ({len(left)} left): {', '.join(left[:4])}"] if left else []
    errors = page.evaluate("() => [...document.querySelectorAll('mjx-merror')].map(e => e.textContent)")
    runtime = page.evaluate("() => typeof window.MathJax")
    if runtime != "undefined":
        problems.append(f"the page loads MathJax's runtime (window.MathJax is {runtime})")
    return problems + [f"TeX error: {e}" for e in errors]


def assert_math_typeset(page) -> int:
    problems = untypeset_math(page)
    assert not problems, f"{page.url}: " + "; ".join(problems)
    return page.evaluate("() => document.querySelectorAll('mjx-container').length")


def test_page_loads_cleanly(prefetcher, site_dir, html_page):
    html = (site_dir / html_page).read_text(encoding="utf-8")
    page, record = prefetcher.take(html_page)
    try:
        problems = check_page(page, html)
        # Let late requests (fonts, the search index) finish, then look at everything recorded.
        problems += settle(page, record)
    finally:
        page.close()
    assert record.requests > 0
    problems += record.problems()
    assert not problems, f"{html_page}:\n" + "\n".join(problems)


def settle(page, record: Visit) -> list[str]:
    """Wait until no request of the page is in flight (quicker than Playwright's
    "networkidle", which always waits half a second more)."""
    waited = 0
    while record.pending and waited < TIMEOUT_MS:
        page.wait_for_timeout(50)  # lets Playwright deliver the page's events
        waited += 50
    return [f"request still pending after {TIMEOUT_MS} ms: {url}" for url in record.pending.values()]


def check_page(page, html: str) -> list[str]:
    problems = []
    # Images: make lazy ones load, then wait until every one is decoded or broken.
    page.evaluate("() => document.querySelectorAll('img[loading=lazy]').forEach(img => img.loading = 'eager')")
    page.wait_for_function("() => [...document.images].every(img => img.complete)", timeout=TIMEOUT_MS)
    broken = page.evaluate(
        "() => [...document.images].filter(img => img.naturalWidth === 0).map(img => img.currentSrc || img.src)"
    )
    problems += [f"image did not load: {url[:100]}" for url in broken]

    # Math: the chapters' arithmatex spans and the notebooks' Markdown cells.
    cells = math_in_markdown_cells(html)
    if 'class="arithmatex"' in html or cells:
        problems += untypeset_math(page, cells)
    return problems


def test_instant_navigation_shows_the_new_page_s_math(browser, site_server, site_url):
    context = new_context(browser)
    # Material handles a click instantly only when the link is in sitemap.xml, whose
    # URLs it moves to the current protocol and host name but not the port. On the
    # published site they match; served here from 127.0.0.1:PORT they cannot, so the
    # sitemap is served as the published host would serve it to this origin.
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(site_server))
    published = "{0.scheme}://{0.netloc}".format(urlsplit(site_url))

    def sitemap_for_this_origin(route):
        response = route.fetch()
        route.fulfill(response=response, body=response.text().replace(published, origin))

    context.route("**/sitemap.xml", sitemap_for_this_origin)
    try:
        instant_navigation(context, site_server)
    finally:
        context.close()


def instant_navigation(context, site_server):
    page, record = visit_page(context, site_server, "index.html")
    assert_math_typeset(page)
    # Material intercepts clicks once it has read sitemap.xml: let it settle first.
    page.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
    page.evaluate("() => { window.__sameDocument = true; }")
    home_title = page.locator("article h1").first.text_content().strip()
    link = page.locator(f'article a[href$="{CHAPTER}"]').first
    link.click()
    # (The URL may carry a #fragment: Material's navigation.tracking can add one.) The address
    # may change before the new page's content is in place: wait for the chapter's own title.
    page.wait_for_url(lambda url: urlsplit(url).path.endswith("/" + CHAPTER), timeout=TIMEOUT_MS)
    page.wait_for_function(
        "([chapter, home]) => { const h1 = document.querySelector('article h1');"
        " return h1 && h1.textContent.trim() !== home && location.pathname.endsWith('/' + chapter); }",
        arg=[CHAPTER, home_title],
        timeout=TIMEOUT_MS,
    )
    assert page.evaluate("() => window.__sameDocument === true"), (
        "the click reloaded the page: Material's instant navigation did not take over"
    )
    count = assert_math_typeset(page)
    assert count >= page.evaluate("() => document.querySelectorAll('.arithmatex').length") > 10
    assert not record.problems(), "\n".join(record.problems())


@pytest.fixture(scope="module")
def chapter_page(browser, site_server):
    """The chapter in a context of its own, shared by the palette and copy-button checks
    (neither depends on what the other changes)."""
    context = new_context(browser)
    page, record = visit_page(context, site_server, CHAPTER + "index.html")
    # a11y.js sizes the undrawn blocks while the page is idle; the checks act on a settled page.
    page.wait_for_function(SCROLLERS_DONE, timeout=TIMEOUT_MS)
    yield page, record
    context.close()


def test_palette_toggle_switches_to_dark(chapter_page):
    page, record = chapter_page
    body = page.locator("body")
    assert body.get_attribute("data-md-color-scheme") == "default"
    toggle = page.locator('form[data-rnnmem-palette] label[title="Switch to the dark palette"]')
    assert toggle.count() == 1, "no palette toggle"
    toggle.click()
    page.wait_for_function("() => document.body.getAttribute('data-md-color-scheme') === 'slate'", timeout=TIMEOUT_MS)
    assert page.locator('form[data-rnnmem-palette] label[title="Switch to the light palette"]').is_visible()
    assert not record.problems(), "\n".join(record.problems())


FIRST_FRAME = """() => new Promise((done) => {
    const body = document.body, form = document.querySelector("form[data-rnnmem-palette]");
    const shown = form ? [...form.querySelectorAll("label")].filter((l) => !l.hidden).map((l) => l.title) : null;
    done({scheme: body.getAttribute("data-md-color-scheme"), shown,
          rootScheme: getComputedStyle(document.documentElement).colorScheme,
          stored: __md_get("__palette")});
})"""


@pytest.mark.parametrize(
    "system, scheme, toggle, root",
    [
        ("light", "default", "Switch to the dark palette", "normal"),
        ("dark", "slate", "Switch to the light palette", "dark"),
    ],
)
def test_palette_is_set_before_the_theme_s_script_from_the_reader_s_system(
    browser, site_server, system, scheme, toggle, root
):
    """On a first visit the palette follows the reader's system from the first frame (set while the
    header is parsed, before the theme's script, which starts after the first paint), its toggle
    is shown, and the page's own colour scheme follows; the choice is kept for the next page."""
    context = browser.new_context(
        viewport={"width": 1280, "height": 800}, color_scheme=system, java_script_enabled=True
    )
    try:
        # The scheme when the page has been parsed, and when the theme's script is added to it (after the
        # first frame, which may come before or after the end of parsing: their order is not the point).
        context.add_init_script("""
            const scheme = () => document.body && document.body.getAttribute('data-md-color-scheme');
            document.addEventListener('DOMContentLoaded', () => { window.__atParse = scheme(); });
            new MutationObserver((records, observer) => {
              if (document.querySelector('script[src*="assets/javascripts/bundle"]')) {
                window.__atThemeScript = scheme();
                observer.disconnect();
              }
            }).observe(document, {childList: true, subtree: true});""")
        page = context.new_page()
        page.goto(site_server + CHAPTER + "index.html", wait_until="load")
        page.wait_for_function("() => window.__atThemeScript !== undefined")
        at_parse, at_theme = page.evaluate("() => [window.__atParse, window.__atThemeScript]")
        state = page.evaluate(FIRST_FRAME)
    finally:
        context.close()
    assert at_parse == scheme, f"the scheme when the page was parsed: {at_parse!r}"
    assert at_theme == scheme, f"the scheme when the theme's script was added: {at_theme!r}"
    assert state["scheme"] == scheme and state["shown"] == [toggle], state
    assert state["rootScheme"] == root, state
    assert state["stored"] and state["stored"]["color"]["scheme"] == scheme, state


# Collapsed <details> (exercise answers) are not rendered, so innerText would be empty: open them first.
COPY_DOCTESTS = """async () => { document.querySelectorAll('details').forEach(d => { d.open = true; });
    const frame = () => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 20)));
    const found = [];
    for (const code of [...document.querySelectorAll('pre > code')].filter(code => code.textContent.includes('>>>'))) {
        const tab = code.closest('.tabbed-block');  // a recipe's tab: chosen, as a reader does before copying
        if (tab) {
            const set = tab.closest('.tabbed-set');
            set.querySelectorAll(':scope > input')[[...tab.parentElement.children].indexOf(tab)].click();
        }
        code.scrollIntoView({block: 'center'});  // as a reader sees it when copying: drawn
        await frame();
        const shown = code.textContent;
        code.setAttribute('data-md-copying', '');
        const copied = code.innerText;
        code.removeAttribute('data-md-copying');
        const outputs = [...code.querySelectorAll('.go')].map(el => el.textContent);
        found.push({shown, copied, outputs});
    }
    return found; }"""


def test_copy_button_copies_code_only(chapter_page):
    page, _ = chapter_page
    blocks = page.evaluate(COPY_DOCTESTS)
    assert len(blocks) >= 3, "expected several doctest blocks on the chapter"
    assert any("89.8" in b["shown"] for b in blocks), "the known output 89.8 is no longer on the chapter"
    for block in blocks:
        code = [line[4:].rstrip() for line in block["shown"].splitlines() if line.startswith((">>> ", "... "))]
        copied = [line.rstrip() for line in block["copied"].splitlines() if line.strip()]
        assert ">>>" not in block["copied"], block["copied"]
        assert copied == code, f"copy of a doctest block:\n{block['copied']}\nexpected the code lines:\n{code}"
        for output in block["outputs"]:
            for line in filter(str.strip, output.splitlines()):
                assert line not in copied, f"output line {line!r} is copied"
    block = next(b for b in blocks if "89.8" in b["shown"])
    assert "89.8" not in block["copied"] and "memory.horizon(0.95, level=0.01)" in block["copied"]

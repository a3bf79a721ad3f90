"""Accessibility of the built site: axe-core over every page in both palettes, math without JavaScript,
and every control reachable from the keyboard with a name.

* **axe-core** (the npm package pinned in package-lock.json; its ``axe.min.js`` is injected
  through Playwright) runs its default rules (WCAG 2 A and AA, and best practices) on every
  HTML page of site/, once in the light palette and once after the palette toggle switched
  it to the dark one. Any violation, of any impact, fails with the page, the palette, the
  rule, axe's help text and the elements. (In the dark palette only the rules that
  depend on colour run again: structure, names and roles do not change with it.) A rule the book cannot satisfy is listed, with its
  reason, in ``axe_allowlist.toml`` beside this file, never skipped page by page.
* **Math without JavaScript**: every page with math, opened with JavaScript disabled,
  shows each formula typeset (MathJax SVG, with its MathML kept for screen readers) and
  no TeX delimiters in its visible text; no page loads MathJax's runtime.
* **Keyboard**: tabbing through a chapter reaches the skip link, the search, the palette
  toggle, a copy button and an exercise's answer, each with an accessible name.

``python tests/built_site/test_a11y.py [SITE]`` prints axe's violations by rule over a site
(./site by default) without failing: the before/after counts of a change.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import TypedDict

import pytest

from conftest import SCROLLERS_DONE

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
ALLOWLIST = Path(__file__).with_name("axe_allowlist.toml")
PALETTES = ("light", "dark")
TIMEOUT_MS = 15_000

# Rules whose outcome depends on colour: the only ones run again in the dark palette
# (the page's structure, names and roles do not change with the palette).
COLOUR_RULES = ["color-contrast", "link-in-text-block"]

RUN_AXE = """async ([allowed, only]) => {
    // allowed: {rule: selector or null}; null switches the rule off, a selector excuses
    // only the violating elements that match it.
    const rules = Object.fromEntries(Object.entries(allowed).filter(([, only]) => !only)
        .map(([id]) => [id, {enabled: false}]));
    const options = {resultTypes: ['violations'], rules};
    if (only) options.runOnly = {type: 'rule', values: only};
    const result = await axe.run(document, options);
    const excused = (v, n) => allowed[v.id] && n.target.length === 1
        && [...document.querySelectorAll(n.target[0])].every(el => el.matches(allowed[v.id]));
    return result.violations
      .map(v => ({...v, nodes: v.nodes.filter(n => !excused(v, n))}))
      .filter(v => v.nodes.length > 0)
      .map(v => ({
        id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
        nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 160),
                                  summary: (n.failureSummary || '').replace(/\\s+/g, ' ').slice(0, 240)}))}));
}"""

# Code tokens are thousands of spans per page that differ only in their text. The first
# SAME_KEEP tokens of each class path (the classes of the span and of every ancestor, which
# fix its colours and its background) get the same verdicts as all of them would: the other
# spans are replaced by their text before axe runs (axe's time grows with the page's
# elements; their text stays, checked in the colours of the code around it).
SAME_KEEP = 2
UNWRAP_SAME = """(keep) => {
    const seen = new Map();
    let unwrapped = 0;
    for (const span of document.querySelectorAll('pre code span[class], .highlight-ipynb span[class]')) {
        let key = '', el = span;
        while (el && el !== document.body) { key += el.tagName + '.' + el.className + '/'; el = el.parentElement; }
        const n = (seen.get(key) || 0) + 1;
        seen.set(key, n);
        if (n > keep && !span.firstElementChild) { span.replaceWith(span.textContent); unwrapped++; }
    }
    return unwrapped;
}"""

TO_DARK = """() => {
    const label = [...document.querySelectorAll('form[data-rnnmem-palette] label')]
        .find(l => l.offsetParent !== null);
    label.click();
}"""


def allowed_rules() -> dict[str, str | None]:
    """Rule id -> the selector of the elements it excuses (None: the whole rule), from the
    one reviewed allow-list; every entry must give its reason."""
    data = tomllib.loads(ALLOWLIST.read_text(encoding="utf-8"))
    rules = data.get("rules", {})
    for rule, entry in rules.items():
        if not isinstance(entry, dict) or not str(entry.get("reason", "")).strip():
            raise ValueError(f'{ALLOWLIST.name}: rule {rule!r} needs a reason = "..."')
        unknown = set(entry) - {"reason", "only"}
        if unknown:
            raise ValueError(
                f"{ALLOWLIST.name}: rule {rule!r} has unknown keys {sorted(unknown)}; allowed are reason and only"
            )
    return {rule: entry.get("only") for rule, entry in rules.items()}


def axe_source() -> str:
    if not AXE.is_file():
        pytest.fail(f"axe-core not found at {AXE}: run `make setup` (npm ci installs it from package-lock.json)")
    return AXE.read_text(encoding="utf-8")


def audit(
    page, url: str, source: str, allowed: dict[str, str | None], *, sample: bool = True, only: list[str] | None = None
) -> dict[str, list[dict]]:
    """axe's violations on url, by palette; page is reused from one call to the next.
    sample unwraps the code tokens UNWRAP_SAME names; only runs those rules alone."""
    page.goto(url, wait_until="load")
    page.wait_for_function(SCROLLERS_DONE)  # a11y.js gives the blocks that scroll their tabindex while idle
    if sample:
        page.evaluate(UNWRAP_SAME, SAME_KEEP)
    found = {}
    for palette in PALETTES:
        if palette == "dark":
            page.evaluate(TO_DARK)
            page.wait_for_function("() => document.body.getAttribute('data-md-color-scheme') === 'slate'")
            page.wait_for_function(SCROLLERS_DONE)  # undrawn blocks are laid out again in the new palette
        if not page.evaluate("() => typeof window.axe === 'object'"):
            page.add_script_tag(content=source)
        rules = only or (None if palette == "light" else COLOUR_RULES)
        found[palette] = page.evaluate(RUN_AXE, [allowed, rules])
    # Leave the next page in the light palette (Material keeps the choice in localStorage).
    page.evaluate("() => localStorage.clear()")
    return found


def describe(rel: str, palette: str, violation: dict) -> str:
    nodes = violation["nodes"]
    lines = [
        f"{rel} [{palette}] {violation['id']} ({violation['impact']}): {violation['help']} "
        f"<{violation['helpUrl']}>, {len(nodes)} element(s):"
    ]
    for node in nodes[:5]:
        lines.append(f"    {node['target']}  {node['html']!r}  -- {node['summary']}")
    if len(nodes) > 5:
        lines.append(f"    ... and {len(nodes) - 5} more")
    return "\n".join(lines)


def url_of(base: str, rel: str) -> str:
    return base + (rel[: -len("index.html")] if rel.endswith("index.html") else rel)


def _context(browser, *, search=True, **options):
    """A light-palette context that reaches only the loopback server; without search, the
    search index is served empty (axe does not need it, and indexing the whole site on
    every page would cost more than the checks)."""
    context = browser.new_context(color_scheme="light", service_workers="block", **options)
    context.route(lambda url: not url.startswith("http://127.0.0.1"), lambda route: route.abort("blockedbyclient"))
    if not search:

        def empty_index(route):
            index = route.fetch().json()
            route.fulfill(json={"config": index["config"], "docs": []})

        context.route("**/search/search_index.json", empty_index)
    return context


@pytest.fixture(scope="module")
def axe_page(browser):
    context = _context(browser, search=False)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    yield page
    context.close()


def test_allowlist_gives_a_reason_for_each_rule(tmp_path, monkeypatch):
    assert allowed_rules()  # the real list reads (and its reasons are there)
    bad = tmp_path / "allow.toml"
    bad.write_text('[rules.region]\nonly = "div"\n', encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ALLOWLIST", bad)
    with pytest.raises(ValueError, match="region.*needs a reason"):
        allowed_rules()


def test_axe_finds_no_violation(axe_page, site_server, html_page):
    found = audit(axe_page, url_of(site_server, html_page), axe_source(), allowed_rules())
    problems = [describe(html_page, palette, v) for palette, violations in found.items() for v in violations]
    assert not problems, "axe-core violations:\n" + "\n".join(problems)


# ---------------------------------------------------------------- math without JavaScript

TEX_LEFT = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{|\$[^$\n]*\\[a-zA-Z]+[^$\n]*\$")

MATH_STATE = """() => {
    const text = (() => {
        const body = document.body.cloneNode(true);
        body.querySelectorAll('pre, code, script, style, mjx-assistive-mml').forEach(el => el.remove());
        return body.textContent;
    })();
    const containers = [...document.querySelectorAll('mjx-container')];
    return {
        text,
        containers: containers.length,
        flat: containers.filter(c => c.getBoundingClientRect().width === 0).length,
        speechless: containers.filter(c => !c.querySelector('mjx-assistive-mml > math')).length,
        untypeset: [...document.querySelectorAll('.arithmatex')].filter(el => !el.querySelector('mjx-container'))
            .map(el => el.textContent.trim().slice(0, 60)),
        scripts: [...document.scripts].map(s => s.src).filter(src => /mathjax/i.test(src)),
        fonts: document.fonts.status,
        brokenFonts: [...document.fonts].filter(f => f.status === 'error').map(f => f.family),
    };
}"""


def pages_with_math(site: Path) -> list[str]:
    return sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if "<mjx-container" in p.read_text(encoding="utf-8")
    )


def test_no_page_loads_mathjax(site_dir):
    loaders = []
    for path in sorted(site_dir.rglob("*.html")):
        html = path.read_text(encoding="utf-8")
        if (
            re.search(r"<script[^>]*src=\"[^\"]*(mathjax|tex-chtml|tex-svg|tex-mml)[^\"]*\"", html, re.I)
            or "window.MathJax" in html
        ):
            loaders.append(path.relative_to(site_dir).as_posix())
    assert not loaders, f"pages that load MathJax in the browser: {loaders}"
    assert not list(site_dir.rglob("tex-chtml*.js")), "MathJax's browser runtime is still copied into the site"


def test_math_is_typeset_without_javascript(browser, site_server, site_dir):
    pages = pages_with_math(site_dir)
    assert any(p.startswith("notebooks/") for p in pages), "no notebook page with math: the notebooks' math is lost"
    assert len(pages) >= 10, f"only {len(pages)} pages hold typeset math"
    context = _context(browser, java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    problems = []
    try:
        for rel in pages:
            page.goto(url_of(site_server, rel), wait_until="load")
            page.evaluate("() => document.fonts.ready.then(() => true)")
            state = page.evaluate(MATH_STATE)
            left = [m.group(0) for m in TEX_LEFT.finditer(state["text"])]
            where = f"{rel}:"
            if state["untypeset"]:
                problems.append(f"{where} untypeset math {state['untypeset'][:3]}")
            if left:
                problems.append(f"{where} TeX in the visible text {left[:5]}")
            if state["flat"]:
                problems.append(f"{where} {state['flat']} of {state['containers']} formulas take no space")
            if state["speechless"]:
                problems.append(f"{where} {state['speechless']} formulas without MathML for screen readers")
            if state["scripts"]:
                problems.append(f"{where} loads {state['scripts']}")
            if state["brokenFonts"]:
                problems.append(f"{where} fonts that did not load: {sorted(set(state['brokenFonts']))}")
    finally:
        context.close()
    assert not problems, "\n".join(problems)


def test_search_index_holds_no_tex(site_dir):
    import json

    docs = json.loads((site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    found = []
    for doc in docs:
        for key in ("title", "text"):
            text = re.sub(r"<pre>.*?</pre>|<code>.*?</code>", " ", doc[key], flags=re.S)
            found += [f"{doc['location']} ({key}): {m.group(0)[:60]!r}" for m in TEX_LEFT.finditer(text)]
    assert not found, f"raw TeX in search/search_index.json ({len(found)}):\n" + "\n".join(found[:10])
    # The formulas are there as text (from their MathML): a search for a symbol still finds them.
    assert any("σ" in doc["text"] for doc in docs)


# ---------------------------------------------------------------- keyboard

KEYBOARD_CHAPTER = "chapters/horizon/"


class Focused(TypedDict):
    """What FOCUSED reads of the focused element."""

    tag: str
    cls: str
    name: str
    kind: str
    shown: bool


FOCUSED = """() => {
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    const byId = id => (document.getElementById(id) || {}).textContent || '';
    const label = el.id ? [...document.querySelectorAll('label')].filter(l => l.htmlFor === el.id)
        .map(l => l.textContent + ' ' + (l.title || '')).join(' ') : '';
    const name = (el.getAttribute('aria-label') || (el.getAttribute('aria-labelledby') || '').split(/\\s+/)
        .map(byId).join(' ') || label || el.title || el.textContent || el.getAttribute('alt') || '').trim();
    const r = el.getBoundingClientRect();
    // A content tab's radio is drawn by its label, which Material marks when the radio has focus.
    const tabLabel = el.matches('.tabbed-set > input') && el.id
        ? document.querySelector(`label[for="${el.id}"]`) : null;
    const labelShown = !!tabLabel && tabLabel.getBoundingClientRect().width > 0;
    return {tag: el.tagName.toLowerCase(), cls: el.className || '', name: name.slice(0, 60),
            kind: el.matches('.md-skip') ? 'skip link' : el.matches('input.md-option') ? 'palette toggle'
                : el.matches('.tabbed-set > input') ? 'content tab'
                : el.matches('input.md-search__input') ? 'search' : el.matches('button.md-code__button') ? 'copy button'
                : el.matches('details > summary') ? 'collapsible answer' : el.tagName.toLowerCase(),
            shown: r.width > 0 && r.height > 0 || el.matches('input.md-option') || labelShown};
}"""

CONTROLS = ("skip link", "search", "palette toggle", "copy button", "collapsible answer", "content tab")


def test_every_control_is_reached_by_tab_and_named(browser, site_server):
    context = _context(browser, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(url_of(site_server, KEYBOARD_CHAPTER), wait_until="load")
        page.wait_for_function(SCROLLERS_DONE)
        stops: list[Focused] = []
        for _ in range(400):  # once round the page: stop when focus comes back to the first stop
            page.keyboard.press("Tab")
            focused = page.evaluate(FOCUSED)
            if focused is None:
                continue
            if stops and focused == stops[0]:
                break
            stops.append(focused)
        kinds = {s["kind"] for s in stops}
        missing = [c for c in CONTROLS if c not in kinds]
        assert not missing, f"not reachable with Tab on {KEYBOARD_CHAPTER}: {missing}"
        unnamed = [f"{s['tag']}.{s['cls']}" for s in stops if not s["name"]]
        assert not unnamed, f"focusable without an accessible name: {unnamed}"
        hidden = [f"{s['tag']}.{s['cls']} {s['name']!r}" for s in stops if not s["shown"]]
        assert not hidden, f"focus lands on something not shown: {hidden}"

        # The controls work from the keyboard: Enter toggles the palette and opens an answer.
        page.locator('input.md-option[aria-label="Switch to the dark palette"]').focus()
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.body.getAttribute('data-md-color-scheme') === 'slate'")
        summary = page.locator("details > summary").first
        summary.focus()
        page.keyboard.press("Enter")
        assert summary.evaluate("s => s.parentElement.open"), "Enter on an answer's summary does not open it"
        page.locator("input.md-search__input").focus()
        page.keyboard.type("horizon")
        page.wait_for_function("() => document.querySelectorAll('.md-search-result__item').length > 0")
    finally:
        context.close()


def count_violations(site: Path) -> Counter:
    """Violating elements by rule over every page of site in both palettes (no allow-list)."""
    import functools
    import http.server
    import threading

    from playwright.sync_api import sync_playwright

    from conftest import CHROMIUM_ARGS, _SiteHandler, chromium_path, site_prefix

    prefix = site_prefix()
    handler = functools.partial(type("Handler", (_SiteHandler,), {"prefix": prefix}), directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}{prefix}"
    counts: Counter = Counter()
    source = axe_source()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        context = _context(browser, search=False)
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        pages = sorted(x.relative_to(site).as_posix() for x in site.rglob("*.html"))
        for rel in pages:
            for violations in audit(page, url_of(base, rel), source, {}, sample=False).values():
                for v in violations:
                    counts[v["id"]] += len(v["nodes"])
        browser.close()
    server.shutdown()
    print(f"{len(pages)} pages x {len(PALETTES)} palettes")
    return counts


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    counts = count_violations(Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "site").resolve())
    for rule, n in counts.most_common():
        print(f"{n:6d}  {rule}")
    print(f"{sum(counts.values()):6d}  violating elements in all, {len(counts)} rules")

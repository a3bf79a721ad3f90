"""The built site fits every screen: a phone (390 px) and a desktop (1280 px).

Headless Chromium opens every page at 390 px and every page but the API
reference at 1280 px, and measures it in one script, in the light palette and
again after the palette toggle switched it to the dark one (the page is loaded
once: the palette changes colours, in place, as a reader's click does). Every
check below holds in both palettes:

* the page never scrolls sideways on a phone;
* every figure is shown at the same scale as every other (the column's width, or, on a
  desktop, a figure with panels side by side and a diagram wider), and its smallest text
  (recorded in the SVG by :mod:`rnnmem.site.style` as ``data-text-pt``, since text
  is drawn as paths) is at least 11 px tall on a phone: points × rendered width /
  intrinsic width in points;
* no copy button stands over the box in which a code block's text is drawn;
* a block that scrolls sideways (a table, a display equation, code) says so with a
  shadow at its edge (a gradient background) and takes keyboard focus;
* a display equation's number stands beside its formula only when the whole formula
  shows, and below it when the formula scrolls;
* nothing in the article is cut off by ``overflow: hidden``, a list's numbers included;
* every formula is drawn at the size MathJax set it (nothing shrinks a wide one to its box);
* inline math is set in the size of the text around it (the TeX font's x-height, 442 of
  the 1000 units per em of MathJax's SVG, as drawn on the page, against the text font's,
  measured on a canvas);
* a formula and the punctuation after it stay on one line;
* at 1280 px no code block of a chapter scrolls sideways;
* a figure's text reads on the page in either palette: every colour the SVG
  draws text in, passed through the CSS filter the page applies to the figure
  (on the dark page, an inversion), has a contrast of at least 4.5:1 with the
  page behind it -- the colour the browser really paints, found by drawing it
  on a canvas with that filter;
* the interactive figure's text (title, label, readouts, tick labels) has a
  contrast of 4.5:1 and its lines 3:1 with the widget's background.
"""

from __future__ import annotations

import re

import pytest

from conftest import SCROLLERS_DONE
from rnnmem.site.typography import bind_punctuation

pytestmark = pytest.mark.browser

PHONE, DESKTOP = 390, 1280
MIN_TEXT_PX = 11.0
#: MathJax's TeX font: x-height in the units of its SVG's viewBox (1000 per em).
TEX_X_HEIGHT = 442
MATH_RATIO = (0.9, 1.15)
TIMEOUT_MS = 30_000
#: Contrast ratios (WCAG 2): text, and lines and marks of a graphic.
TEXT_CONTRAST, GRAPHIC_CONTRAST = 4.5, 3.0
PALETTES = {"light": "default", "dark": "slate"}  # the reader's preference -> Material's data-md-color-scheme
SCREENS = [f"{width}_{palette}" for palette in PALETTES for width in ("phone", "desktop")]

MEASURE = """async () => {
  const out = {viewport: window.innerWidth, pageWidth: document.scrollingElement.scrollWidth};
  const article = document.querySelector(".md-content") || document.body;
  const short = (text) => text.trim().replace(/\\s+/g, " ").slice(0, 50);
  out.codeScrolling = [...article.querySelectorAll("pre > code")]
    .filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => short(c.textContent));
  out.buttonsOverCode = [];
  for (const pre of article.querySelectorAll("pre")) {
    const nav = pre.querySelector(":scope > .md-code__nav"), code = pre.querySelector(":scope > code");
    if (!nav || !code) continue;
    const a = nav.getBoundingClientRect(), b = code.getBoundingClientRect();
    if (a.width === 0 || a.height === 0) continue;
    const right = b.left + code.clientLeft + code.clientWidth, bottom = b.top + code.clientTop + code.clientHeight;
    if (a.left < right - 0.5 && a.right > b.left + 0.5 && a.top < bottom - 0.5 && a.bottom > b.top + 0.5)
      out.buttonsOverCode.push(short(code.textContent));
  }
  out.scrolling = [...article.querySelectorAll(".md-typeset__scrollwrap, .arithmatex, pre > code")]
    .filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => {
      const cs = getComputedStyle(el);
      return {what: el.matches("pre > code") ? "code" : el.matches("div.arithmatex") ? "equation" : el.matches(".arithmatex") ? "formula" : "table",
              scrolls: cs.overflowX === "auto" || cs.overflowX === "scroll", cue: /gradient/.test(cs.backgroundImage),
              focusable: el.tabIndex >= 0, text: short(el.textContent)};
    });
  out.clipped = [];  // code tokens and MathJax's inner boxes are skipped: the blocks holding them are checked
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_ELEMENT, {acceptNode: (el) =>
    el.matches("pre, mjx-container > *") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  for (let el = walker.nextNode(); el; el = walker.nextNode()) {
    if (el.scrollWidth <= el.clientWidth + 1 || el.clientWidth === 0) continue;
    const cs = getComputedStyle(el);
    if (cs.overflowX === "hidden" || cs.overflowX === "clip")
      out.clipped.push({tag: el.tagName.toLowerCase(), hidden: el.scrollWidth - el.clientWidth, text: short(el.textContent)});
  }
  // A display equation's number: beside its formula only when the whole formula shows; below it otherwise.
  out.numberBeside = [];
  for (const eq of article.querySelectorAll(".rnnmem-equation")) {
    const math = eq.querySelector(":scope > .arithmatex"), number = eq.querySelector(":scope > .rnnmem-equation-number");
    if (!math || !number || math.getBoundingClientRect().width === 0) continue;
    const m = math.getBoundingClientRect(), n = number.getBoundingClientRect();
    if (math.scrollWidth > math.clientWidth + 1 && n.top < m.bottom - 1)
      out.numberBeside.push({id: eq.id, number: short(number.textContent), hidden: math.scrollWidth - math.clientWidth});
  }
  // A numbered list's marker ("10.") stands left of its item: it must fit inside the nearest box that clips.
  out.cutMarkers = [];
  const ruler = document.createElement("canvas").getContext("2d");
  for (const ol of article.querySelectorAll("ol")) {
    [...ol.children].filter((li) => li.tagName === "LI").forEach((li, k) => {
      const rect = li.getBoundingClientRect();
      if (rect.width === 0) return;  // inside a closed answer
      const cs = getComputedStyle(li);
      ruler.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      const marker = `${(ol.start || 1) + k}. `;
      // What clips: paint containment (content-visibility: auto implies it), on the list itself too, or overflow.
      const clips = (el) => {
        const c = getComputedStyle(el);
        return c.overflowX !== "visible" || c.contentVisibility === "auto" || /paint|strict|content/.test(c.contain);
      };
      let box = ol;
      while (box && box !== document.body && !clips(box)) box = box.parentElement;
      const edge = box && box !== document.body ? box.getBoundingClientRect().left : 0;
      const cut = edge - (rect.left - ruler.measureText(marker).width);
      if (cut > 0.5) out.cutMarkers.push({marker: marker.trim(), cut: Math.round(cut), text: short(li.textContent)});
    });
  }
  // Colours as the browser paints them: a CSS colour drawn on a canvas through a CSS filter, then laid
  // over an opaque backdrop; WCAG 2's relative luminance and contrast ratio.
  const paint = document.createElement("canvas").getContext("2d", {willReadFrequently: true});
  paint.canvas.width = paint.canvas.height = 1;
  const rgba = (colour, filter = "none") => {
    paint.clearRect(0, 0, 1, 1);
    paint.filter = filter;
    paint.fillStyle = colour;
    paint.fillRect(0, 0, 1, 1);
    paint.filter = "none";
    return [...paint.getImageData(0, 0, 1, 1).data];
  };
  const over = ([r, g, b, a], bg) => [r, g, b].map((c, k) => Math.round((c * a + bg[k] * (255 - a)) / 255));
  const backdrop = (el) => {
    for (; el; el = el.parentElement) {
      const c = rgba(getComputedStyle(el).backgroundColor);
      if (c[3] === 255) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const luminance = (rgb) => {
    const [r, g, b] = rgb.map((c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const contrast = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const hex = (rgb) => "#" + rgb.map((c) => c.toString(16).padStart(2, "0")).join("");
  out.scheme = document.body.getAttribute("data-md-color-scheme");
  out.figures = [];
  // Every figure loaded now (they load lazily), so each has picked its source: the desktop rendition
  // or the column's (a <picture> whose <source> has a media query).
  const images = [...article.querySelectorAll(".rnnmem-figure img")];
  await Promise.all(images.map((img) => { img.loading = "eager"; return img.decode().catch(() => null); }));
  for (const img of images) {
    const src = img.currentSrc || img.src;
    const svg = await (await fetch(src)).text(), head = svg.slice(0, 3000);
    const width = /<svg[^>]*\\swidth="([\\d.]+)pt"/.exec(head), text = /<svg[^>]*\\sdata-text-pt="([\\d.]+)"/.exec(head);
    // matplotlib writes each text as <g id="text_N">: its first fill is the text's colour (a halo drawn
    // under it has the same fill); a text in the default black has none before its glyphs.
    const inks = new Set(svg.split(/<g id="text_\\d+">/).slice(1).map((chunk) => {
      const m = /style="fill: ?(#[0-9a-fA-F]{6})|<use|<g transform/.exec(chunk);
      return m && m[1] ? m[1].toLowerCase() : "#000000";
    }));
    const filter = getComputedStyle(img).filter, bg = backdrop(img.parentElement);
    out.figures.push({src: src.split("/").pop(), rendered: img.getBoundingClientRect().width,
                      wide: img.closest("figure").classList.contains("rnnmem-figure--wide"),
                      widthPt: width ? +width[1] : null, textPt: text ? +text[1] : null, filter, background: hex(bg),
                      inks: [...inks].sort().map((ink) => {
                        const shown = over(rgba(ink, filter), bg);
                        return {ink, shown: hex(shown), contrast: contrast(shown, bg)};
                      })});
  }
  out.widgets = [];
  for (const widget of article.querySelectorAll(".rnnmem-widget")) {
    const bg = backdrop(widget), parts = [];
    const add = (el, kind, property) => {
      const shown = over(rgba(getComputedStyle(el)[property]), bg);
      parts.push({kind, what: el.getAttribute("class") || el.tagName.toLowerCase(), shown: hex(shown), contrast: contrast(shown, bg)});
    };
    widget.querySelectorAll(".rnnmem-w-title, .rnnmem-w-control label, .rnnmem-w-readout dt, .rnnmem-w-readout output")
      .forEach((el) => add(el, "text", "color"));
    widget.querySelectorAll(".rnnmem-w-tick, .rnnmem-w-axis").forEach((el) => add(el, "text", "fill"));
    widget.querySelectorAll(".rnnmem-w-frame, .rnnmem-w-curve, .rnnmem-w-mark").forEach((el) => add(el, "graphic", "stroke"));
    out.widgets.push({id: widget.id, background: hex(bg), parts});
  }
  const canvas = document.createElement("canvas").getContext("2d");
  out.inlineMath = [];
  const seen = new Set();
  for (const span of article.querySelectorAll("p > span.arithmatex, li > span.arithmatex, p > .rnnmem-nobr > span.arithmatex")) {
    const svg = span.querySelector("mjx-container > svg");
    const parent = span.closest("p, li");
    if (!svg || !parent || !svg.viewBox.baseVal) continue;
    const pcs = getComputedStyle(parent), key = pcs.font;
    if (seen.has(key)) continue;
    seen.add(key);
    canvas.font = `${pcs.fontStyle} ${pcs.fontWeight} ${pcs.fontSize} ${pcs.fontFamily}`;
    out.inlineMath.push({text: short(parent.textContent), textX: canvas.measureText("x").actualBoundingBoxAscent,
                         mathX: svg.getBoundingClientRect().height * TEX_X_HEIGHT / svg.viewBox.baseVal.height});
  }
  // Each formula is drawn at the size MathJax set it (its SVG's width, in ex of the text):
  // a rule that shrinks SVGs to their box would shrink a wide one to nothing.
  out.formulas = article.querySelectorAll("mjx-container > svg").length;
  out.shrunkMath = [...article.querySelectorAll("mjx-container > svg")]
    .filter((svg) => Math.abs(svg.getBoundingClientRect().width - svg.width.baseVal.value) > 0.5)
    .map((svg) => ({drawn: Math.round(svg.getBoundingClientRect().width), set: Math.round(svg.width.baseVal.value),
                    text: short(svg.parentElement.querySelector("mjx-assistive-mml")?.textContent || "")}));
  out.brokenAfterMath = [...article.querySelectorAll(".rnnmem-nobr")]
    .filter((el) => new Set([...el.getClientRects()].map((r) => Math.round(r.top))).size > 1)
    .map((el) => short(el.textContent));
  return out;
}""".replace("TEX_X_HEIGHT", str(TEX_X_HEIGHT))


def url_of(base: str, rel: str) -> str:
    return base + (rel[: -len("index.html")] if rel.endswith("index.html") else rel)


TO_DARK = """() => {
    const label = [...document.querySelectorAll('form[data-rnnmem-palette] label')]
        .find(l => l.offsetParent !== null);
    label.click();
}"""


def measure(browser, site_server, pages: list[str], width: int) -> dict[str, dict[str, dict]]:
    """palette -> page -> what MEASURE found, for every page at one width."""
    context = browser.new_context(
        viewport={"width": width, "height": 900}, color_scheme="light", service_workers="block"
    )
    context.route(lambda url: not url.startswith("http://127.0.0.1"), lambda route: route.abort("blockedbyclient"))
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    found: dict[str, dict[str, dict]] = {palette: {} for palette in PALETTES}
    try:
        for rel in pages:
            page.goto(url_of(site_server, rel), wait_until="load")
            page.evaluate("() => document.querySelectorAll('img[loading=lazy]').forEach(i => i.loading = 'eager')")
            page.wait_for_function("() => [...document.images].every(i => i.complete)")
            page.wait_for_function(SCROLLERS_DONE)  # a11y.js measures the blocks while the page is idle
            for palette, scheme in PALETTES.items():
                if palette == "dark":
                    page.evaluate(TO_DARK)
                    page.wait_for_function(f"() => document.body.getAttribute('data-md-color-scheme') === '{scheme}'")
                    page.wait_for_function(SCROLLERS_DONE)  # undrawn blocks are laid out again in the new palette
                found[palette][rel] = page.evaluate(MEASURE)
                assert found[palette][rel]["scheme"] == scheme, f"{rel}: not in the {palette} palette"
            # Load the next page in the light palette again (Material keeps the choice in localStorage).
            page.evaluate("() => localStorage.clear()")
    finally:
        context.close()
    return found


@pytest.fixture(scope="module")
def pages(site_dir) -> list[str]:
    return sorted(p.relative_to(site_dir).as_posix() for p in site_dir.rglob("*.html"))


# One browser (the session's); each page list is loaded once per width and measured in both palettes.
@pytest.fixture(scope="module")
def phone(browser, site_server, pages):
    return measure(browser, site_server, pages, PHONE)


@pytest.fixture(scope="module")
def desktop(browser, site_server, pages):
    return measure(browser, site_server, [p for p in pages if not p.startswith("api/")], DESKTOP)


@pytest.fixture(scope="module")
def phone_light(phone):
    return phone["light"]


@pytest.fixture(scope="module")
def phone_dark(phone):
    return phone["dark"]


@pytest.fixture(scope="module")
def desktop_light(desktop):
    return desktop["light"]


@pytest.fixture(scope="module")
def desktop_dark(desktop):
    return desktop["dark"]


def test_a_reader_who_prefers_the_dark_palette_gets_it(browser, site_server):
    context = browser.new_context(
        viewport={"width": PHONE, "height": 900}, color_scheme="dark", service_workers="block"
    )
    context.route(lambda url: not url.startswith("http://127.0.0.1"), lambda route: route.abort("blockedbyclient"))
    try:
        page = context.new_page()
        page.goto(site_server, wait_until="load")
        assert page.evaluate("() => document.body.getAttribute('data-md-color-scheme')") == PALETTES["dark"]
    finally:
        context.close()


@pytest.mark.parametrize("palette", PALETTES)
def test_no_page_scrolls_sideways_on_a_phone(palette, request):
    phone = request.getfixturevalue(f"phone_{palette}")
    wide = [
        f"{rel}: {m['pageWidth']} px wide in a {m['viewport']} px window"
        for rel, m in phone.items()
        if m["pageWidth"] > m["viewport"]
    ]
    assert not wide, f"pages that scroll sideways at 390 px ({palette} palette):\n" + "\n".join(wide)


@pytest.mark.parametrize("screen", SCREENS)
def test_figures_have_one_scale_and_text_of_eleven_pixels(screen, request):
    """Every figure is shown at one scale (pixels per point of its SVG), so its text has one size:
    the column's rendition at one width; on a desktop, a figure with panels side by side or a
    diagram shows its desktop rendition, wider, at that same scale (rnnmem.site.style.to_svgs)."""
    measured = request.getfixturevalue(screen)
    figures = [(rel, f) for rel, m in measured.items() for f in m["figures"]]
    assert figures, "no figure found on any page"
    problems = [
        f"{rel}: {f['src']}: the SVG records no data-text-pt or width in pt (drawn without rnnmem.site.style.to_svg?)"
        for rel, f in figures
        if not (f["textPt"] and f["widthPt"])
    ]
    figures = [(rel, f) for rel, f in figures if f["widthPt"]]
    column = [f for _, f in figures if not f["src"].endswith(".wide.svg")]
    widths = sorted({round(f["rendered"]) for f in column})
    if widths[-1] - widths[0] > 1:
        problems.append(
            f"figures drawn for the column shown at {len(widths)} widths ({widths} px): "
            + "; ".join(
                f"{rel}: {f['src']} {f['rendered']:.0f} px"
                for rel, f in figures
                if f in column and abs(f["rendered"] - column[0]["rendered"]) > 1
            )[:1500]
        )
    scale = column[0]["rendered"] / column[0]["widthPt"]
    problems += [
        f"{rel}: {f['src']} shown at {f['rendered'] / f['widthPt']:.3f} px per pt, the others at {scale:.3f}"
        for rel, f in figures
        if abs(f["rendered"] / f["widthPt"] / scale - 1) > 0.01
    ]
    desktop = screen.startswith("desktop")
    problems += [
        f"{rel}: {f['src']}: " + ("its desktop rendition is not shown" if desktop else "a desktop rendition on a phone")
        for rel, f in figures
        if f["src"].endswith(".wide.svg") != (desktop and f["wide"])
    ]
    if desktop:
        wide = [f for _, f in figures if f["wide"]]
        assert len(wide) >= 10, f"only {len(wide)} figures with a desktop rendition"
        assert min(f["rendered"] for f in wide) > 1.35 * column[0]["rendered"], "desktop renditions not wider"
    if screen.startswith("phone"):
        for rel, f in figures:
            if f["textPt"] and f["widthPt"]:
                px = f["textPt"] * f["rendered"] / f["widthPt"]
                if px < MIN_TEXT_PX:
                    problems.append(
                        f"{rel}: {f['src']}: smallest text {px:.1f} px at 390 px "
                        f"({f['textPt']} pt in a {f['widthPt']} pt figure shown {f['rendered']:.0f} px wide)"
                    )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("screen", SCREENS)
def test_copy_buttons_never_cover_code(screen, request):
    covered = [
        f"{rel}: {text!r}" for rel, m in request.getfixturevalue(screen).items() for text in m["buttonsOverCode"]
    ]
    assert not covered, f"copy buttons over a code block's text box ({len(covered)}):\n" + "\n".join(covered[:40])


@pytest.mark.parametrize("screen", SCREENS)
def test_blocks_that_scroll_show_a_cue_and_take_focus(screen, request):
    problems = []
    for rel, m in request.getfixturevalue(screen).items():
        for s in m["scrolling"]:
            missing = [
                name
                for name, ok in (
                    ("scrolls (overflow-x auto)", s["scrolls"]),
                    ("a shadow cue", s["cue"]),
                    ("keyboard focus", s["focusable"]),
                )
                if not ok
            ]
            if missing:
                problems.append(f"{rel}: a {s['what']} wider than its block lacks {', '.join(missing)}: {s['text']!r}")
    assert not problems, f"{len(problems)} blocks:\n" + "\n".join(problems[:60])


@pytest.mark.parametrize("screen", SCREENS)
def test_every_list_number_is_shown_whole(screen, request):
    # The home page's chapter list once showed "10." as ".0." on a phone: a two-digit marker is wider
    # than the room Material leaves before an item, and the box around the list cut its first digit.
    cut = [
        f"{rel}: {c['marker']} cut by {c['cut']} px: {c['text']!r}"
        for rel, m in request.getfixturevalue(screen).items()
        for c in m["cutMarkers"]
    ]
    assert not cut, "list numbers cut at the left:\n" + "\n".join(cut[:40])


@pytest.mark.parametrize("screen", SCREENS)
def test_an_equation_number_stands_below_a_formula_that_scrolls(screen, request):
    # A number beside a clipped formula reads as part of it ("h_t = o_t ⊙ ta(3.2)"): it goes below instead.
    beside = [
        f"{rel}#{e['id']}: {e['number']} beside a formula {e['hidden']} px wider than its box"
        for rel, m in request.getfixturevalue(screen).items()
        for e in m["numberBeside"]
    ]
    assert not beside, "equation numbers beside formulas that scroll:\n" + "\n".join(beside[:40])


@pytest.mark.parametrize("palette", PALETTES)
def test_inline_formulas_do_not_scroll_on_a_desktop(palette, request):
    # A formula scrolls only when it is wider than the column: never at 1280 px. (The hidden MathML
    # for screen readers once made most formulas with a script 'scroll' by a few pixels.)
    scrolling = [
        f"{rel}: {s['text']!r}"
        for rel, m in request.getfixturevalue(f"desktop_{palette}").items()
        for s in m["scrolling"]
        if s["what"] == "formula"
    ]
    assert not scrolling, f"{len(scrolling)} inline formulas scroll at 1280 px:\n" + "\n".join(scrolling[:40])


@pytest.mark.parametrize("screen", SCREENS)
def test_nothing_is_cut_off(screen, request):
    clipped = [
        f"{rel}: <{c['tag']}> hides {c['hidden']} px: {c['text']!r}"
        for rel, m in request.getfixturevalue(screen).items()
        for c in m["clipped"]
    ]
    assert not clipped, "content cut off by overflow: hidden:\n" + "\n".join(clipped[:40])


@pytest.mark.parametrize("screen", SCREENS)
def test_every_formula_is_drawn_at_its_size(screen, request):
    found = request.getfixturevalue(screen)
    shrunk = [
        f"{rel}: drawn {s['drawn']} px wide, set {s['set']} px: {s['text']!r}"
        for rel, m in found.items()
        for s in m["shrunkMath"]
    ]
    assert sum(m["formulas"] for m in found.values()) > 1000, "hardly any formula measured"
    assert not shrunk, f"{len(shrunk)} formulas not drawn at their size:\n" + "\n".join(shrunk[:40])


@pytest.mark.parametrize("palette", PALETTES)
def test_inline_math_is_the_size_of_its_text(palette, request):
    desktop = request.getfixturevalue(f"desktop_{palette}")
    low, high = MATH_RATIO
    seen, problems = 0, []
    for rel, m in desktop.items():
        for item in m["inlineMath"]:
            seen += 1
            ratio = item["mathX"] / item["textX"]
            if not low <= ratio <= high:
                problems.append(f"{rel}: math x-height {ratio:.2f} of the text's, beside {item['text']!r}")
    assert seen, "no inline math found"
    assert not problems, f"inline math not between {low} and {high} of the text's x-height:\n" + "\n".join(problems)


@pytest.mark.parametrize("palette", PALETTES)
def test_punctuation_stays_on_the_line_of_its_formula(palette, request, site_dir, pages):
    phone = request.getfixturevalue(f"phone_{palette}")
    problems = [f"{rel}: {text!r} breaks across lines" for rel, m in phone.items() for text in m["brokenAfterMath"]]
    for rel in pages:
        html = (site_dir / rel).read_text(encoding="utf-8")
        if bind_punctuation(html) != html:
            problems.append(f"{rel}: a formula followed by punctuation is not wrapped in a no-break span")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("palette", PALETTES)
def test_chapter_code_fits_the_column_on_a_desktop(palette, request):
    desktop = request.getfixturevalue(f"desktop_{palette}")
    scrolling = [
        f"{rel}: {text!r}" for rel, m in desktop.items() if rel.startswith("chapters/") for text in m["codeScrolling"]
    ]
    assert not scrolling, (
        f"{len(scrolling)} chapter code blocks scroll sideways at 1280 px "
        "(the rule code-width, make test-chapter, lists their long lines):\n" + "\n".join(scrolling)
    )


@pytest.mark.parametrize("screen", SCREENS)
def test_figure_text_reads_on_the_page_in_both_palettes(screen, request):
    figures = [(rel, f) for rel, m in request.getfixturevalue(screen).items() for f in m["figures"]]
    assert all(f["inks"] for _, f in figures), "a figure without text colours: the measure no longer reads the SVG"
    if screen.endswith("dark"):
        assert all("invert" in f["filter"] for _, f in figures), "a figure shown unfiltered on the dark page"
    faint = [
        f"{rel}: {f['src']}: text in {i['ink']} is shown as {i['shown']} on {f['background']} "
        f"(filter {f['filter']}): contrast {i['contrast']:.2f}:1"
        for rel, f in figures
        for i in f["inks"]
        if i["contrast"] < TEXT_CONTRAST
    ]
    assert not faint, f"figure text under {TEXT_CONTRAST}:1 ({screen}):\n" + "\n".join(faint)


@pytest.mark.parametrize("palette", PALETTES)
def test_the_interactive_figure_reads_in_both_palettes(palette, request):
    widgets = [(rel, w) for rel, m in request.getfixturevalue(f"phone_{palette}").items() for w in m["widgets"]]
    assert widgets, "no interactive figure found"
    problems = []
    for rel, w in widgets:
        kinds = {p["kind"] for p in w["parts"]}
        if kinds != {"text", "graphic"}:
            problems.append(f"{rel}: #{w['id']}: found only {sorted(kinds)} parts (the widget's markup changed?)")
        for p in w["parts"]:
            least = TEXT_CONTRAST if p["kind"] == "text" else GRAPHIC_CONTRAST
            if p["contrast"] < least:
                problems.append(
                    f"{rel}: #{w['id']}: {p['kind']} {p['what']!r} in {p['shown']} on {w['background']}: "
                    f"contrast {p['contrast']:.2f}:1, under {least}:1"
                )
    assert not problems, f"{palette} palette:\n" + "\n".join(problems)


def test_the_measure_reads_the_figure_records():
    # The regular expressions of MEASURE match what rnnmem.site.style.to_svg writes.
    from rnnmem.site.style import INK, PALETTE, contrast_on_white, legible_colour, new_figure, to_svg

    fig, ax = new_figure(height=2.0)
    ax.plot([0, 1], [0, 1])
    head = to_svg(fig)[:3000].decode()
    assert re.search(r'<svg[^>]*\swidth="345\.6pt"', head)
    assert re.search(r'<svg[^>]*\sdata-text-pt="11"', head)
    # ... and the colour of every text, darkened by to_svg when it is too light to read on white.
    fig, ax = new_figure(height=2.0)
    ax.plot([0, 1], [0, 1])
    ax.text(0.5, 0.5, "label", color=PALETTE[1])
    svg = to_svg(fig).decode()
    firsts = [
        re.search(r'style="fill: ?(#[0-9a-fA-F]{6})|<use|<g transform', chunk)
        for chunk in re.split(r'<g id="text_\d+">', svg)[1:]
    ]
    inks = {m[1] if m and m[1] else "#000000" for m in firsts}
    assert inks == {INK, legible_colour(PALETTE[1])} and contrast_on_white(legible_colour(PALETTE[1])) >= TEXT_CONTRAST

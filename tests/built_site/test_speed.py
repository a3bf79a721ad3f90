"""What the built pages do for a fast first screen, checked on the files (the speed itself is
measured by tests/benchmarks/bench_lighthouse.py, never by a timed test).

* every page waits for three stylesheets at most: Material's two and the book's one
  (:mod:`rnnmem.site.stylesheet`), whose every relative ``url()`` names a file of the site;
* the math fonts are swapped in when they arrive, so text is never hidden while they load;
* every figure but a page's first loads lazily and is decoded off the main thread, and
  every figure has its size in the HTML (nothing moves when it arrives).
"""

from __future__ import annotations

import posixpath
import re

from rnnmem.site.stylesheet import BUNDLE

CSS_URL = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)"'\s]*))\s*\)""")


def _pages(site_dir):
    return sorted(p for p in site_dir.rglob("*.html") if p.name != "404.html")


def test_each_page_waits_for_the_book_s_one_stylesheet(site_dir, page_soup):
    problems = []
    for path in _pages(site_dir):
        rel = path.relative_to(site_dir).as_posix()
        soup = page_soup(rel)
        hrefs = [posixpath.normpath(posixpath.join(posixpath.dirname(rel), link["href"]))
                 for link in soup.find_all("link", rel="stylesheet")]
        own = [h for h in hrefs if not h.startswith("assets/stylesheets/main.")
               and not h.startswith("assets/stylesheets/palette.")]
        if own != [BUNDLE] or len(hrefs) > 3:
            problems.append(f"{rel}: {hrefs}")
    assert not problems, "pages linking more than Material's stylesheets and the book's one:\n" + "\n".join(problems[:20])


def test_the_book_stylesheet_names_files_of_the_site(site_dir):
    css = (site_dir / BUNDLE).read_text(encoding="utf-8")
    urls = [next(g for g in m.groups() if g is not None) for m in CSS_URL.finditer(css)]
    relative = [u for u in urls if not re.match(r"^(?:[a-z][a-z0-9+.-]*:|/|#)", u, re.I)]
    assert any("woff" in u for u in relative), "the bundle holds no math font (is the math stylesheet in it?)"
    missing = [u for u in relative
               if not (site_dir / posixpath.normpath(posixpath.join(posixpath.dirname(BUNDLE), u))).is_file()]
    assert not missing, f"{BUNDLE} names files the site does not have: {missing[:10]}"


def test_math_fonts_never_hide_text(site_dir):
    rules = re.findall(r"@font-face[^{]*\{[^}]*\}", (site_dir / BUNDLE).read_text(encoding="utf-8"))
    assert rules, "no @font-face rule in the book's stylesheet"
    waiting = [r for r in rules if "font-display: swap" not in r]
    assert not waiting, f"{len(waiting)} font rules hide text while the font loads: {waiting[0]!r}"


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

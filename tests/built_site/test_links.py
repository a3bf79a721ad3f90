"""Static checks of the built site: links resolve, nothing is loaded from another host, images are described.

Every HTML file under site/ is parsed. Internal ``href``/``src`` values must
resolve to a file of the site (directory URLs to their index.html, percent-
encoding decoded, query strings ignored) and a ``#fragment`` must name an
element of the target page. Resources the browser loads by itself (scripts,
stylesheets, images, frames, media, objects) must come from the site's own
host, the host of ``site_url`` in mkdocs.yml (where the canonical links point,
and those must name pages that exist); links (``<a>``) to other hosts are
ordinary navigation and allowed.
CSS, both files and inline ``<style>``/``style=``, is scanned for ``url()`` and
``@import`` of other hosts.

JavaScript is deliberately not scanned for host names: Material's bundle names
hosts in code paths that never run without configuration (for example a
version selector or analytics). What scripts really fetch is checked in a
browser, request by request, by test_browser.py.
"""

from __future__ import annotations

import posixpath
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]

#: (tag, attribute) pairs that the browser fetches without a click.
RESOURCE_ATTRS = [
    ("script", "src"),
    ("link", "href"),
    ("img", "src"),
    ("img", "srcset"),
    ("iframe", "src"),
    ("source", "src"),
    ("source", "srcset"),
    ("video", "src"),
    ("video", "poster"),
    ("audio", "src"),
    ("object", "data"),
    ("embed", "src"),
    ("track", "src"),
    ("input", "src"),
]
#: (tag, attribute) pairs whose internal targets must exist.
LINK_ATTRS = [("a", "href"), ("area", "href"), *RESOURCE_ATTRS]
#: Schemes that never reach a file or a host.
LOCAL_SCHEMES = {"data", "blob", "about", "javascript", "mailto", "tel"}

SVG_NS = "{http://www.w3.org/2000/svg}"
DRAWING_TAGS = {
    f"{SVG_NS}{t}" for t in ("path", "line", "polyline", "polygon", "rect", "circle", "ellipse", "text", "use")
}

CSS_URL = re.compile(r"""url\(\s*(['"]?)\s*((?:https?:)?//[^'")\s]+)""", re.I)
CSS_IMPORT = re.compile(r"""@import\s+(?:url\()?\s*['"]?\s*((?:https?:)?//[^'")\s;]+)""", re.I)


def site_url() -> str:
    # mkdocs.yml has !!python/name tags: load it with a loader that ignores unknown tags.
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
    return config["site_url"]


SITE_URL = site_url()
SITE_HOST = urlsplit(SITE_URL).hostname
SITE_PATH = urlsplit(SITE_URL).path  # "/why-rnns-forget/" on GitHub Pages


@dataclass
class Page:
    """What the checks need from one HTML file, collected in a single pass."""

    rel: str  # "chapters/horizon/index.html"
    ids: set[str] = field(default_factory=set)
    refs: list[tuple[str, str, str]] = field(default_factory=list)  # (tag, attribute, URL)
    images: list[dict] = field(default_factory=list)  # attributes of every <img>
    figure_images: list[dict] = field(default_factory=list)  # attributes of figure.rnnmem-figure img (and source)
    styles: list[tuple[str, str]] = field(default_factory=list)  # (where, CSS) of <style> and style=


ATTRS_BY_TAG: dict[str, list[str]] = {}
for _tag, _attr in LINK_ATTRS:
    ATTRS_BY_TAG.setdefault(_tag, []).append(_attr)


class PageParser(HTMLParser):
    """The stdlib parser (several times faster than building a BeautifulSoup tree)."""

    def __init__(self, page: Page):
        super().__init__(convert_charrefs=True)
        self.page = page
        self.figures: list[bool] = []  # open <figure>s: is it a rnnmem-figure?
        self.in_style = False

    def handle_starttag(self, tag, attrs):
        attrs = {k: (v or "") for k, v in attrs}
        page = self.page
        if "id" in attrs:
            page.ids.add(attrs["id"])
        if tag == "a" and "name" in attrs:
            page.ids.add(attrs["name"])
        for attr in ATTRS_BY_TAG.get(tag, ()):
            if attr in attrs:
                page.refs += [(tag, attr, url) for url in split_urls(attrs[attr], attr)]
        if "style" in attrs:
            page.styles.append((f"<{tag} style>", attrs["style"]))
        if tag == "figure":
            self.figures.append("rnnmem-figure" in attrs.get("class", "").split())
        elif tag == "img":
            page.images.append(attrs)
            if any(self.figures):
                page.figure_images.append(attrs)
        elif tag == "source" and any(self.figures):  # a figure's desktop rendition, held to the same rules
            page.figure_images.append({"src": attrs.get("srcset", "")})
        elif tag == "style":
            self.in_style = True

    def handle_endtag(self, tag):
        if tag == "figure" and self.figures:
            self.figures.pop()
        elif tag == "style":
            self.in_style = False

    def handle_data(self, data):
        if self.in_style:
            self.page.styles.append(("<style>", data))


@pytest.fixture(scope="module")
def pages(site_dir) -> dict[str, Page]:
    found = {}
    for path in sorted(site_dir.rglob("*.html")):
        page = Page(path.relative_to(site_dir).as_posix())
        parser = PageParser(page)
        parser.feed(path.read_text(encoding="utf-8"))
        parser.close()
        found[page.rel] = page
    assert "index.html" in found and len(found) >= 5, sorted(found)
    return found


def split_urls(value: str, attr: str) -> list[str]:
    if attr == "srcset":
        return [part.split()[0] for part in value.split(",") if part.split()]
    return [value.strip()]


def is_absolute(url: str) -> bool:
    parts = urlsplit(url)
    return bool(parts.netloc) or parts.scheme in ("http", "https")


def resolve(page_rel: str, url: str, site_dir: Path) -> tuple[str | None, str | None, str]:
    """(file relative to site/, fragment, problem) for an internal URL; problem is "" when resolved."""
    parts = urlsplit(url)
    path = unquote(parts.path)
    fragment = unquote(parts.fragment) if parts.fragment else None
    if path.startswith("/"):
        # Root-absolute URLs (MkDocs writes them in 404.html, which is served at any
        # path) only work when they carry the site's path prefix on GitHub Pages.
        if not path.startswith(SITE_PATH):
            return None, fragment, f"root-absolute path {url!r} is outside {SITE_URL}"
        page_rel, path = "index.html", path[len(SITE_PATH) :] or "./"
    if path == "":
        return page_rel, fragment, ""
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page_rel), path))
    if target == ".." or target.startswith("../"):
        return None, fragment, f"{url!r} points outside the site"
    if target == ".":
        target = ""
    candidate = site_dir / target
    if path.endswith("/") or candidate.is_dir():
        target = posixpath.join(target, "index.html") if target else "index.html"
    if not (site_dir / target).is_file():
        return None, fragment, f"{url!r} -> {target} does not exist"
    return target, fragment, ""


def test_internal_links_resolve(pages, site_dir):
    problems, checked = [], 0
    for page in pages.values():
        for tag, attr, url in page.refs:
            if urlsplit(url).scheme in LOCAL_SCHEMES or is_absolute(url):
                continue
            checked += 1
            target, fragment, problem = resolve(page.rel, url, site_dir)
            if problem:
                problems.append(f"{page.rel}: <{tag} {attr}>: {problem}")
                continue
            assert target is not None  # resolve names a file whenever it reports no problem
            if fragment and target.endswith(".html"):
                if target not in pages:
                    problems.append(f"{page.rel}: <{tag} {attr}={url!r}>: {target} is not a parsed page")
                elif fragment not in pages[target].ids:
                    problems.append(f"{page.rel}: <{tag} {attr}={url!r}>: no element with id {fragment!r} in {target}")
    assert checked > 50, f"only {checked} internal links found: is the site complete?"
    assert not problems, "broken internal links:\n" + "\n".join(problems)


def test_own_absolute_links_point_into_the_site(pages, site_dir):
    """Absolute URLs on the site's own host (canonical links, ...) name pages that exist."""
    problems, checked = [], 0
    for page in pages.values():
        for tag, attr, url in page.refs:
            parts = urlsplit(url)
            if not is_absolute(url) or parts.hostname != SITE_HOST:
                continue
            checked += 1
            if not parts.path.startswith(SITE_PATH):
                problems.append(f"{page.rel}: <{tag} {attr}={url!r}>: outside {SITE_URL}")
                continue
            _, _, problem = resolve("index.html", parts.path[len(SITE_PATH) :] or "./", site_dir)
            if problem:
                problems.append(f"{page.rel}: <{tag} {attr}={url!r}>: {problem}")
    assert checked >= len(pages) - 1, "expected a canonical link on (nearly) every page"
    assert not problems, "\n".join(problems)


def test_no_resources_from_other_hosts(pages):
    resource = set(RESOURCE_ATTRS)
    problems = [
        f"{page.rel}: <{tag} {attr}={url!r}>"
        for page in pages.values()
        for tag, attr, url in page.refs
        if (tag, attr) in resource and is_absolute(url) and urlsplit(url).hostname != SITE_HOST
    ]
    assert not problems, "resources loaded from other hosts (the book must work offline):\n" + "\n".join(problems)


def foreign_css_urls(css: str) -> list[str]:
    urls = [m.group(2) for m in CSS_URL.finditer(css)] + [m.group(1) for m in CSS_IMPORT.finditer(css)]
    return sorted({u for u in urls if urlsplit(u).hostname != SITE_HOST})


def test_css_loads_nothing_from_other_hosts(pages, site_dir):
    problems = []
    css_files = sorted(site_dir.rglob("*.css"))
    assert css_files, "no CSS in the site?"
    for path in css_files:
        for url in foreign_css_urls(path.read_text(encoding="utf-8", errors="replace")):
            problems.append(f"{path.relative_to(site_dir)}: {url}")
    for page in pages.values():
        for where, css in page.styles:
            problems += [f"{page.rel}: {where}: {url}" for url in foreign_css_urls(css)]
    assert not problems, "CSS that fetches from other hosts:\n" + "\n".join(problems)


def test_css_scanner_catches_foreign_urls():
    css = (
        '@import url("https://fonts.googleapis.com/css?family=Roboto"); a{background:url(//cdn.example/x.png)}'
        " b{background:url(\"data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg'/>\")}"
        f" c{{background:url({SITE_URL}x.png)}}"
    )
    assert foreign_css_urls(css) == ["//cdn.example/x.png", "https://fonts.googleapis.com/css?family=Roboto"]


def test_every_image_has_alt_text(pages):
    problems = [
        f"{page.rel}: <img src={img.get('src', '')[:80]!r}> has no alt text"
        for page in pages.values()
        for img in page.images
        if not img.get("alt", "").strip()
    ]
    assert not problems, "\n".join(problems)


def test_figures_are_svg_drawings(pages, site_dir):
    problems, seen = [], 0
    for page in pages.values():
        for img in page.figure_images:
            seen += 1
            src = img.get("src", "")
            target, _, problem = resolve(page.rel, src, site_dir)
            if problem:
                problems.append(f"{page.rel}: figure {problem}")
                continue
            assert target is not None  # resolve names a file whenever it reports no problem
            if not target.endswith(".svg"):
                problems.append(f"{page.rel}: figure {src!r} is not an SVG")
                continue
            try:
                root = ET.parse(site_dir / target).getroot()
            except ET.ParseError as exc:
                problems.append(f"{page.rel}: figure {target} is not well-formed XML: {exc}")
                continue
            drawing = sum(1 for el in root.iter() if el.tag in DRAWING_TAGS)
            if root.tag != f"{SVG_NS}svg" or drawing < 5:
                problems.append(f"{page.rel}: figure {target}: root <{root.tag}>, {drawing} drawing elements")
    assert seen > 0, "no figure.rnnmem-figure in the whole site"
    assert not problems, "\n".join(problems)

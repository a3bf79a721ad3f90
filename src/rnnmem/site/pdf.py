"""The book as one PDF, printed by Chromium from the built site.

The pages a reader reads in order (the chapters, then the back matter: see
:func:`pdf_pages`) are gathered into one document in the browser: each page's
article is moved under a section of its own, every ``id`` on it is prefixed
with that section's, so that a link between pages becomes a link inside the
PDF, and a link to a page the PDF leaves out (the API, the notebooks) points at
the published site. Exercise answers are opened, a title page names the
edition (:mod:`rnnmem.site.edition`) and lists the contents, and Chromium
prints the whole with page numbers in the footer (Playwright's ``page.pdf``).
Figures, tables and equations keep the numbers the site gives them, since the
PDF prints the site's own HTML.

``python -m rnnmem.site pdf`` runs it on ``site/`` after ``make build``; the
Makefile's ``pdf`` target writes ``site/why-rnns-forget.pdf``, the file Home
links to.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import config as site_config

__all__ = ["BACK_MATTER", "DEFAULT_CHROMIUM", "PDF_NAME", "PdfResult", "fix_dates", "pdf_pages", "write_pdf"]

#: The file the site's Home links to, at the root of the built site.
PDF_NAME = "why-rnns-forget.pdf"
#: The pages after the chapters, in this order (each printed where the nav has it).
BACK_MATTER = (
    "conventions.md",
    "glossary.md",
    "reproducibility.md",
    "corrections.md",
    "changes.md",
    "references.md",
)
#: The browser :func:`write_pdf` prints with unless told otherwise (the command line also reads
#: ``RNNMEM_CHROMIUM``, as the site's browser tests do).
DEFAULT_CHROMIUM = "/usr/bin/chromium"
#: Chromium's flags for printing here (no network, no sandbox in a container).
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
)

_FOOTER = (
    '<div style="font-size:8px;width:100%;text-align:center;color:#555;font-family:sans-serif">'
    '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
)

_PRINT_CSS = """
@page { size: A4; margin: 16mm 15mm 18mm 15mm; }
html, body { background: #fff !important; }
body { margin: 0; }
.rnnmem-print-section { break-before: page; }
.rnnmem-print-section > article.md-content__inner { margin: 0; padding: 0; }
.rnnmem-print-title { break-after: page; padding-top: 30mm; }
.rnnmem-print-title h1 { font-size: 2.2em; margin-bottom: 0.3em; }
.rnnmem-print-title ol { font-size: 0.9em; }
.md-typeset { font-size: 0.9rem; }
.md-typeset pre > code { white-space: pre-wrap; overflow: visible !important; }
.md-typeset figure, .md-typeset table, .md-typeset pre, .md-typeset .md-typeset__table { break-inside: avoid; }
.md-typeset h1, .md-typeset h2, .md-typeset h3 { break-after: avoid; }
.md-typeset .md-typeset__scrollwrap, .md-typeset .md-typeset__table, .md-typeset .arithmatex,
.md-typeset .highlight { overflow: visible !important; content-visibility: visible !important; }
.md-typeset table:not([class]) { font-size: 0.62rem; }
"""

# Runs in the site's home page: fetch each page, move its article into this document,
# make its ids and links the PDF's own, open its answers; then a title page with the contents.
_ASSEMBLE = """
async ({pages, title, edition, publicBase}) => {
  const sectionOf = new Map();
  pages.forEach((rel, i) => sectionOf.set(new URL(rel, location.href).pathname, "s" + i));
  const book = document.createElement("div");
  book.className = "rnnmem-print-book";
  const contents = [];
  for (const [i, rel] of pages.entries()) {
    const url = new URL(rel, location.href);
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${rel}: HTTP ${response.status}`);
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    const article = doc.querySelector("article.md-content__inner");
    if (!article) throw new Error(`${rel}: no article.md-content__inner`);
    const key = "s" + i;
    for (const el of article.querySelectorAll("[id]")) {
      if (!el.closest("svg")) el.id = `${key}--${el.id}`;
    }
    for (const label of article.querySelectorAll("label[for]")) {
      label.htmlFor = `${key}--${label.htmlFor}`;
    }
    for (const a of article.querySelectorAll("a[href]")) {
      const raw = a.getAttribute("href");
      const target = new URL(raw, url);
      if (target.origin !== location.origin) continue;
      const section = sectionOf.get(target.pathname);
      const fragment = target.hash ? decodeURIComponent(target.hash.slice(1)) : "";
      if (section) {
        a.setAttribute("href", "#" + (fragment ? `${section}--${fragment}` : section));
      } else {
        const path = target.pathname.replace(/^\\//, "");
        a.setAttribute("href", publicBase + path + target.hash);
      }
    }
    for (const img of article.querySelectorAll("img[src]")) {
      img.setAttribute("src", new URL(img.getAttribute("src"), url).href);
      img.loading = "eager";
    }
    for (const d of article.querySelectorAll("details")) d.open = true;
    const heading = article.querySelector("h1");
    contents.push({key, text: (heading ? heading.textContent : rel).replace(/\\s+/g, " ").trim()});
    const section = document.createElement("section");
    section.className = "rnnmem-print-section";
    section.id = key;
    section.append(document.importNode(article, true));
    book.append(section);
  }
  const front = document.createElement("section");
  front.className = "rnnmem-print-title md-typeset";
  const h1 = document.createElement("h1");
  h1.textContent = title;
  const ed = document.createElement("p");
  ed.textContent = `This is ${edition}. The book online: ${publicBase}`;
  const list = document.createElement("ol");
  list.className = "rnnmem-print-contents";
  for (const c of contents) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = "#" + c.key;
    a.textContent = c.text;
    li.append(a);
    list.append(li);
  }
  const h2 = document.createElement("h2");
  h2.textContent = "Contents";
  front.append(h1, ed, h2, list);
  book.prepend(front);
  document.body.replaceChildren(book);
  document.body.className = "";
  await Promise.all([...document.images].map((img) => img.decode().catch(() => null)));
  return contents.length;
}
"""


@dataclass(frozen=True)
class PdfResult:
    """What :func:`write_pdf` wrote: the file, its size in bytes, its pages, and the pages of the site it holds."""

    path: Path
    size: int
    pages: int
    sections: int


_DATE = re.compile(rb"/(CreationDate|ModDate) \(D:\d{14}[^)]*\)")


def fix_dates(data: bytes, date: str) -> bytes:
    """The PDF ``data`` with its creation and modification dates set to ``date`` (ISO day; ``""``: the epoch).

    Chromium stamps the time of printing; the same site must print the same bytes. The dates are
    rewritten in place, to the same length, so the file's cross-reference offsets still hold.

    >>> fix_dates(b"<< /CreationDate (D:20261202233541+00'00') >>", "2025-01-31")
    b"<< /CreationDate (D:20250131000000+00'00') >>"
    """
    if date and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        raise ValueError(f"date must be an ISO day (YYYY-MM-DD) or empty, got {date!r}")
    stamp = (date.replace("-", "") if date else "19700101") + "000000"

    def replace(m: re.Match[bytes]) -> bytes:
        new = b"/" + m.group(1) + b" (D:" + stamp.encode() + b"+00'00')"
        if len(new) != len(m.group(0)):
            raise ValueError(f"unexpected date format in the PDF: {m.group(0)!r}")
        return new

    return _DATE.sub(replace, data)


def pdf_pages(nav: Any) -> list[str]:
    """The site's pages the PDF holds, in order: the nav's chapters, then :data:`BACK_MATTER`
    (those the nav has), as site paths (``chapters/horizon/``).

    >>> nav = [{"Home": "index.md"}, {"Chapters": ["chapters/a.md", "chapters/b.md"]}, {"Glossary": "glossary.md"}]
    >>> pdf_pages(nav)
    ['chapters/a/', 'chapters/b/', 'glossary/']
    """
    listed = set(site_config.nav_pages(nav))
    pages = site_config.chapter_order(nav) + [p for p in BACK_MATTER if p in listed]
    return [p.removesuffix(".md") + "/" for p in pages]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


@contextlib.contextmanager
def _serve(site_dir: Path) -> Iterator[str]:
    """Serve ``site_dir`` on a free local port for as long as the block runs; yield its address."""
    handler = functools.partial(_QuietHandler, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _print(browser: Any, base: str, args: dict) -> tuple[bytes, int]:
    """Assemble the book in a page of ``browser`` served from ``base`` and print it: (PDF bytes, sections)."""
    context = browser.new_context(color_scheme="light", service_workers="block")
    try:
        context.route(lambda url: not url.startswith(base), lambda route: route.abort("blockedbyclient"))
        page = context.new_page()
        page.goto(base + "index.html", wait_until="load")
        page.emulate_media(media="print")
        sections = page.evaluate(_ASSEMBLE, args)
        page.add_style_tag(content=_PRINT_CSS)
        page.wait_for_load_state("networkidle")
        # Untagged: Chromium's tagged PDF numbers its structure by DOM node ids, which differ between prints.
        data = page.pdf(
            format="A4",
            print_background=True,
            display_header_footer=True,
            header_template="<span></span>",
            footer_template=_FOOTER,
            margin={"top": "16mm", "bottom": "18mm", "left": "15mm", "right": "15mm"},
            tagged=False,
        )
    finally:
        context.close()
    return data, int(sections)


def write_pdf(
    site_dir: Path,
    out: Path,
    *,
    pages: Sequence[str],
    title: str,
    edition: str,
    public_url: str,
    chromium: str = DEFAULT_CHROMIUM,
    date: str = "",
    browser: Any = None,
) -> PdfResult:
    """Print ``pages`` of the built site in ``site_dir`` (site paths, :func:`pdf_pages`) as one PDF at ``out``.

    ``edition`` is the line the title page prints (``Edition.label``); a link to a page the PDF
    leaves out points at ``public_url``; ``date`` (ISO day) is the PDF's creation date, so the same
    site prints the same bytes (:func:`fix_dates`). ``browser``, a Playwright browser already
    running, is used instead of launching ``chromium``. A page missing from ``site_dir`` raises
    ``ValueError`` naming it.
    """
    site_dir = Path(site_dir)
    if not (site_dir / "index.html").is_file():
        raise ValueError(f"site_dir must hold a built site (index.html), got {str(site_dir)!r}")
    if not pages:
        raise ValueError("pages must name at least one page of the site, got none")
    missing = [p for p in pages if not (site_dir / p / "index.html").is_file()]
    if missing:
        raise ValueError(f"pages: not in the built site {str(site_dir)!r}: {', '.join(missing)}")
    public = public_url if public_url.endswith("/") else public_url + "/"
    args = {"pages": list(pages), "title": title, "edition": edition, "publicBase": public}
    with _serve(site_dir) as base:
        if browser is not None:
            data, sections = _print(browser, base, args)
        else:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as p:
                launched = p.chromium.launch(executable_path=chromium, args=list(CHROMIUM_ARGS))
                try:
                    data, sections = _print(launched, base, args)
                finally:
                    launched.close()
    data = fix_dates(data, date)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    count = len(re.findall(rb"/Type\s*/Page\b", data))
    return PdfResult(out, len(data), count, int(sections))

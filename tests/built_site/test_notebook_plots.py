"""The notebook pages of the site show what their code draws.

A notebook under ``docs/notebooks/`` is run when the site is built
(mkdocs-jupyter), and a cell that plots must leave its plot on the page: the
book's figure style (:func:`rnnmem.site.style.style`) once switched matplotlib
to its Agg backend, so ``plt.show()`` drew nothing and the page lost its only
plot. Every cell that calls ``plt.show()`` has an ``alt`` text in its metadata,
and the page must hold an image with that alt text, drawn by the cell. On a
desktop screen no line of code or output is cut off, and the page's table of
contents lists its sections.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "docs" / "notebooks").glob("*.py"))


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebook under docs/notebooks/"


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.name)
def test_every_plot_is_on_the_page(site_dir, source):
    cells = [c for c in jupytext.read(source).cells if c.cell_type == "code" and "plt.show()" in c.source]
    page = (site_dir / "notebooks" / source.stem / "index.html").read_text(encoding="utf-8")
    images = {
        html.unescape(alt): src
        for src, alt in re.findall(r'<img[^>]*?src="([^"]+)"[^>]*?alt="([^"]*)"', page)
        + [(s, a) for a, s in re.findall(r'<img[^>]*?alt="([^"]*)"[^>]*?src="([^"]+)"', page)]
    }
    for cell in cells:
        alt = cell.metadata.get("alt")
        assert alt, f"{source.name}: a cell that plots has no alt text in its metadata"
        assert alt in images, f"{source.name}: the plot with alt {alt[:60]!r}... is not on the page"
        assert images[alt].startswith("data:image/png;base64,") and len(images[alt]) > 2000, (
            f"{source.name}: the plot with alt {alt[:60]!r}... is not an image the cell drew"
        )


@pytest.mark.browser
@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.name)
def test_no_line_of_code_or_output_is_clipped_and_the_contents_are_listed(browser, site_server, source):
    from test_front import open_page

    context, page = open_page(browser, site_server, f"notebooks/{source.stem}/")
    try:
        clipped = page.evaluate(
            """() => [...document.querySelectorAll('.md-content pre')]
                .filter(e => e.scrollWidth > e.clientWidth + 1)
                .map(e => [e.scrollWidth - e.clientWidth, e.textContent.trim().split('\\n')[0].slice(0, 50)])"""
        )
        assert not clipped, f"{source.name}: blocks wider than the page (px over, first line): {clipped}"
        sections = [h.removeprefix("# ## ").strip() for h in source.read_text().splitlines() if h.startswith("# ## ")]
        toc = page.locator(".md-sidebar--secondary .md-nav__link").all_inner_texts()
        assert sections and all(s in " ".join(toc) for s in sections), (sections, toc)
    finally:
        context.close()

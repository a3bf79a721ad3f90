"""The built site's numbers: chapters in nav order, figures, tables and equations numbered per chapter, links resolve."""

from __future__ import annotations

import html
import posixpath
import re
from pathlib import Path

import pytest

from rnnmem.site.numbering import chapters_from_config

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = chapters_from_config(ROOT / "mkdocs.yml")

_ID = re.compile(r'<(figure|div) class="rnnmem-(figure|table|equation)(?: rnnmem-figure--wide)?" id="([^"]+)"')
_LABEL = re.compile(r'<span class="rnnmem-label">(Figure|Table) (\d+)\.(\d+)\.</span>')
_EQ_NUMBER = re.compile(r'<span class="rnnmem-equation-number">\((\d+)\.(\d+)\)</span>')
_REF_LINK = re.compile(r'<a href="([^"]*)">(Figure \d+\.\d+|Table \d+\.\d+|\(\d+\.\d+\)|Chapter \d+)</a>')
_CODE = re.compile(r"<(pre|code)\b.*?</\1>", re.S)


def page_html(site_dir: Path, src_uri: str) -> str:
    return (site_dir / posixpath.splitext(src_uri)[0] / "index.html").read_text(encoding="utf-8")


def test_the_chapters_are_numbered_in_nav_order(site_dir):
    assert CHAPTERS
    for number, src_uri in enumerate(CHAPTERS, 1):
        text = page_html(site_dir, src_uri)
        assert f'<span class="rnnmem-chapter-number">Chapter {number}</span>' in text, src_uri
        assert re.search(rf"<title>{number}\. [^<]+</title>", text), src_uri
        # The nav lists every chapter with its number, in order.
        labels = re.findall(r'md-nav__link[^>]*>\s*<span class="md-ellipsis">\s*(\d+)\. ', text)
        assert [int(n) for n in dict.fromkeys(labels)] == list(range(1, len(CHAPTERS) + 1)), src_uri


@pytest.mark.parametrize("src_uri", CHAPTERS)
def test_items_are_numbered_in_page_order_and_anchored(site_dir, src_uri):
    text = page_html(site_dir, src_uri)
    chapter = CHAPTERS.index(src_uri) + 1
    for kind in ("Figure", "Table"):
        numbers = [(int(c), int(n)) for k, c, n in _LABEL.findall(text) if k == kind]
        assert numbers == [(chapter, n) for n in range(1, len(numbers) + 1)], (src_uri, kind, numbers)
    eqs = [(int(c), int(n)) for c, n in _EQ_NUMBER.findall(text)]
    assert eqs == [(chapter, n) for n in range(1, len(eqs) + 1)], (src_uri, eqs)
    ids = [i for _, _, i in _ID.findall(text)]
    assert len(ids) == len(set(ids)), f"{src_uri}: an anchor is used twice"
    assert len(re.findall(r'class="rnnmem-figure[ "]', text)) == sum(
        1 for k, _, _ in _ID.findall(text) if k == "figure"
    )
    # Nothing of the machinery is left: no equation marker, no reference unconverted outside code.
    assert "%rnnmem-eq" not in text
    prose = _CODE.sub("", text)
    assert not re.search(r"(?<![\w@])@(fig|tab|eq|ch):[a-z]", prose), src_uri


def test_every_reference_links_to_its_anchor(site_dir):
    """Each "Figure 4.2" link of a chapter leads to that item's anchor (MkDocs' strict validation does too)."""
    anchors: dict[str, set[str]] = {}
    pages = {src: page_html(site_dir, src) for src in CHAPTERS}
    for src, text in pages.items():
        anchors[src] = set(re.findall(r'\bid="([^"]+)"', text))
    for src, text in pages.items():
        base = posixpath.dirname(posixpath.splitext(src)[0] + "/index.html")
        for href, label in _REF_LINK.findall(text):
            path, _, anchor = html.unescape(href).partition("#")
            target = posixpath.normpath(posixpath.join(base, path or "index.html"))
            target = target if target.endswith(".html") else target + "/index.html"
            other = next((s for s in pages if posixpath.splitext(s)[0] + "/index.html" == target), None)
            assert other is not None, f"{src}: {label} links to {href}, not a chapter"
            if label.startswith("Chapter"):
                assert label == f"Chapter {CHAPTERS.index(other) + 1}"
            else:
                assert anchor in anchors[other], f"{src}: {label} links to {href}, which has no such anchor"

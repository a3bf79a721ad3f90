"""The book as one PDF (run `make pdf`, which `make test` runs): the chapters in order with the back
matter, a title page with the edition and the contents, page numbers, numbered figures, tables and
equations, the exercises with their answers, cross-references that are links inside the PDF, and
Home's link to it. Printing itself is checked in Chromium on two pages: the same site prints the
same bytes, and a page the site lacks is refused by name."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import rnnmem
from rnnmem.site import config, pdf
from rnnmem.site.exercises import exercises

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "site"
CHROMIUM = os.environ.get("RNNMEM_CHROMIUM") or pdf.DEFAULT_CHROMIUM
NO_BROWSER = f"no Chromium at {CHROMIUM}: the PDF is not printed here (make test prints it where a browser is)"


def nav():
    return config.read(ROOT / "mkdocs.yml")["nav"]


@functools.cache
def reader():
    import pypdf

    path = SITE / pdf.PDF_NAME
    if not path.is_file():
        if not Path(CHROMIUM).is_file() and not os.environ.get("CI"):
            pytest.skip(NO_BROWSER)
        pytest.fail(f"{path} does not exist: run `make pdf` (make test runs it after the build)")
    return pypdf.PdfReader(str(path))


@functools.cache
def page_texts() -> tuple[str, ...]:
    return tuple(" ".join(p.extract_text().split()) for p in reader().pages)


def whole() -> str:
    return " ".join(page_texts())


def test_the_title_page_names_the_book_its_edition_and_its_contents():
    first = page_texts()[0]
    assert first.startswith("Why recurrent networks forget")
    assert f"edition {rnnmem.__version__}" in first and "Contents" in first
    titles = [c.title for c in _chapters()]
    assert all(t in first for t in titles), "the contents list every chapter"


def test_every_page_is_numbered_in_its_footer():
    texts = page_texts()
    n = len(texts)
    assert n >= 100, f"only {n} pages: is every chapter printed?"
    unnumbered = [k for k, t in enumerate(texts, 1) if not t.endswith(f"{k} / {n}")]
    assert not unnumbered, f"pages without 'k / {n}' at their foot: {unnumbered[:10]}"


def test_the_chapters_and_the_back_matter_come_in_the_navs_order():
    text = whole()
    heads = [f"CHAPTER {c.number} {c.title}" for c in _chapters()] + ["Glossary", "Corrections to the sources"]
    at = len(page_texts()[0])  # after the title page, whose contents name them all
    for head in heads:
        found = text.find(head, at)
        assert found >= 0, f"{head!r} is not printed after what comes before it"
        at = found + len(head)


def test_figures_tables_and_equations_keep_their_numbers():
    text = whole()
    for label in ("Figure 1.1.", "Figure 4.1.", "Table 1.1.", "Table 11.1.", "(4.1)", "(1.1)"):
        assert label in text, label


def test_the_exercises_are_printed_with_their_answers():
    text = whole()
    plain = re.compile(r"^[A-Za-z][A-Za-z ,;:'-]*$")
    checked = 0
    for name in ("horizon", "gates", "dropout"):
        page = (ROOT / "docs" / "chapters" / f"{name}.md").read_text()
        lines = page.splitlines()
        for ex in exercises(page):
            for first, last in ex.answers:
                words = [
                    " ".join(ln.split()[:5])
                    for ln in lines[first - 1 : last]
                    if plain.match(ln.strip()) and len(ln.split()) >= 5
                ]
                if words:
                    assert words[0] in text, f"{name}: the answer of exercise {ex.number} ({words[0]!r}) is not printed"
                    checked += 1
    assert checked >= 10


def test_cross_references_are_links_inside_the_pdf():
    internal = external = 0
    for page in reader().pages:
        for annot in page.get("/Annots") or []:
            a = annot.get_object()
            if a.get("/Subtype") != "/Link":
                continue
            action = a.get("/A")
            if "/Dest" in a or (action is not None and action.get("/S") == "/GoTo"):
                internal += 1
            elif action is not None and action.get("/S") == "/URI":
                uri = str(action["/URI"])
                assert not uri.startswith(("http://127.0.0.1", "http://localhost")), uri
                external += 1
    assert internal >= 500, f"{internal} links inside the PDF"
    assert external > 0


def test_home_links_the_pdf():
    home = (SITE / "index.html").read_text(encoding="utf-8")
    assert f'href="{pdf.PDF_NAME}"' in home and (SITE / pdf.PDF_NAME).is_file()


def _chapters():
    from rnnmem.site.apipages import book_chapters

    return book_chapters(ROOT / "docs", nav())


@pytest.mark.browser
def test_the_same_site_prints_the_same_bytes_and_a_missing_page_is_named(browser, tmp_path):
    if not (SITE / "index.html").is_file():
        pytest.fail("run `make build` first")
    pages = ["chapters/horizon/", "glossary/"]
    options: dict[str, Any] = {"pages": pages, "title": "T", "edition": "edition x", "public_url": "https://e/"}
    digests = []
    for k in range(2):
        out = tmp_path / f"p{k}.pdf"
        result = pdf.write_pdf(SITE, out, date="2026-01-02", browser=browser, **options)
        assert result.sections == 2 and result.pages > 10 and result.size == out.stat().st_size
        digests.append(hashlib.sha256(out.read_bytes()).hexdigest())
    assert digests[0] == digests[1]
    assert b"/CreationDate (D:20260102000000+00'00')" in out.read_bytes()
    with pytest.raises(ValueError, match="chapters/nosuch/"):
        pdf.write_pdf(SITE, tmp_path / "x.pdf", **{**options, "pages": ["chapters/nosuch/"]}, browser=browser)
    with pytest.raises(ValueError, match="date must be an ISO day"):
        pdf.fix_dates(b"", "2 January")


def test_the_command_line_refuses_bad_arguments_with_usage(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "rnnmem.site", "pdf", "--site", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and "usage:" in run.stderr and "--site" in run.stderr and "make build" in run.stderr


def test_pdf_pages_are_the_chapters_then_the_back_matter():
    pages = pdf.pdf_pages(nav())
    chapters = config.chapter_order(nav())
    assert pages[: len(chapters)] == [c.removesuffix(".md") + "/" for c in chapters]
    assert pages[len(chapters) :] == [p.removesuffix(".md") + "/" for p in pdf.BACK_MATTER]

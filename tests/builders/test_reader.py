"""The reader steps of the build: citations both ways, search exclusions, descriptions, copy texts."""

from __future__ import annotations

import html

from rnnmem.site.copytext import mark_sessions, session_code
from rnnmem.site.pagemeta import describe, exclude_from_search
from rnnmem.site.reader import ReaderSteps

REFS = '<a id="elman1990"></a>\n**Elman (1990).** Finding structure in time.\n'


def test_a_citation_on_a_chapter_links_there_and_back():
    steps = ReaderSteps()
    steps.start(REFS, "references/")
    meta: dict = {}
    page = steps.page_content(
        "<p>The simple recurrent network of Elman (1990) reads its own state.</p>",
        src_uri="chapters/a.md",
        url="chapters/a/",
        source="",
        meta=meta,
    )
    assert 'href="../../references/#elman1990"' in page and 'id="cite-elman1990-1"' in page
    assert meta["description"] == "The simple recurrent network of Elman (1990) reads its own state."
    refs = steps.references_page(
        '<p><a id="elman1990"></a> Elman.</p>',
        [("index.md", "Home", ""), ("chapters/a.md", "Chapter A", "chapters/a/")],
        "references/",
    )
    assert 'Cited in <a href="../chapters/a/#cite-elman1990-1">Chapter A</a>.' in refs


def test_the_references_page_and_api_pages_are_not_searched_for_citations():
    steps = ReaderSteps()
    steps.start(REFS)
    text = "<p>Elman (1990) and Nobody (1999).</p>"
    for src in ("references.md", "api/rnn.md"):
        assert steps.page_content(text, src_uri=src, url="x/", source="", meta={"description": "d"}) == text


def test_front_matter_description_is_kept_and_descriptions_skip_notebook_links():
    steps = ReaderSteps()
    meta = {"description": "Given."}
    steps.page_content("<p>" + "word " * 20 + "</p>", src_uri="a.md", url="a/", source="", meta=meta)
    assert meta == {"description": "Given."}
    page = (
        '<p class="rnnmem-notebook"><a href="x.ipynb">This chapter as a notebook</a> · Open in Colab</p>'
        '<p>A "quoted" first paragraph that is long enough to describe the page well.</p>'
    )
    assert describe(exclude_from_search(page)) == html.escape(
        'A "quoted" first paragraph that is long enough to describe the page well.'
    )
    long = describe("<p>" + "abcdefghi " * 40 + "</p>")
    assert long is not None and len(long) <= 160 and long.endswith("abcdefghi…")


def test_search_leaves_out_the_notebook_links_and_api_source():
    page = (
        '<p class="rnnmem-notebook">links</p><details class="mkdocstrings-source">\n<summary>Source code in '
        '<code>src/rnnmem/rnn.py</code></summary></details><details class="question"><summary>Q</summary></details>'
    )
    out = exclude_from_search(page)
    assert out.count("data-search-exclude") == 2 and '<details class="question">' in out


def test_search_leaves_out_an_api_pages_code_and_keeps_a_chapters():
    page = '<p>prose</p><div class="highlight"><pre><code>&gt;&gt;&gt; 1 + 1</code></pre></div>'
    assert exclude_from_search(page, api=True).count("data-search-exclude") == 1
    assert exclude_from_search(page) == page


def test_copied_sessions_close_compound_statements_with_a_blank_line():
    session = "\n".join(
        [
            ">>> import math",
            ">>> for k in range(2):",
            "...     print(k)",
            "...",
            "0",
            "1",
            ">>> def f(x):",
            "...     if x:",
            "...         return 1",
            "...",
            "...     return 0",
            ">>> f(1)",
            "1",
            ">>> with open('x') as fh:",
            "...     pass",
        ]
    )
    assert session_code(session) == (
        "import math\nfor k in range(2):\n    print(k)\n\ndef f(x):\n    if x:\n        return 1\n    return 0\n\n"
        "f(1)\nwith open('x') as fh:\n    pass\n\n"
    )
    # a call spread over lines is one statement, closed by no blank line
    assert session_code(">>> x = max(\n...     1,\n... )\n>>> x\n1") == "x = max(\n    1,\n)\nx\n"


def test_each_session_block_carries_its_copy_text():
    page = (
        '<div class="highlight"><pre><span></span><code><a id="__codelineno-0-1" href="#__codelineno-0-1"></a>'
        '<span class="gp">&gt;&gt;&gt; </span><span class="k">for</span> k <span class="ow">in</span> "ab":\n'
        '<span class="gp">... </span>    k\n<span class="go">&#39;a&#39;</span>\n</code></pre></div>'
        '<div class="language-sh highlight"><pre><code>&gt;&gt;&gt; make</code></pre></div>'
        '<div class="highlight"><pre><code>x = 1</code></pre></div>'
    )
    out = mark_sessions(page)
    assert '<div class="highlight" data-copy="for k in &quot;ab&quot;:&#10;    k&#10;&#10;">' in out
    assert out.count("data-copy") == 1

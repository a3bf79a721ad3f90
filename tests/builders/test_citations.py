"""Author-year citations: found in running text, linked to their entries, unmatched ones refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rnnmem.site import check
from rnnmem.site.citations import Citation, CitationError, Entry, Index, cited_in, link_citations, parse_references

ROOT = Path(__file__).resolve().parents[2]
REFERENCES = (ROOT / "docs" / "references.md").read_text(encoding="utf-8")
ENTRIES = parse_references(REFERENCES)


def link(text: str, source: str = "") -> tuple[str, list[Citation]]:
    return link_citations(text, ENTRIES, references_url="../references/", page="docs/x.md", source=source)


def test_every_entry_is_parsed_and_its_key_is_the_first_author_and_year():
    anchors = re.findall(r'<a id="([a-z0-9-]+)"></a>', REFERENCES)
    assert sorted(anchors) == sorted(ENTRIES) and len(anchors) >= 30
    for key, entry in ENTRIES.items():
        if key in ("pytorch", "keras"):
            continue
        assert key == entry.surnames[0] + entry.year, (key, entry)


def test_every_entry_links_to_the_work():
    """A DOI or arXiv link, or the link the reference policy (src/rnnmem/site/policy/references.toml) allows."""
    no_doi = check.load_no_doi()
    problems = check.reference_link_problems(REFERENCES, list(ENTRIES), no_doi)
    problems += check._policy_problems(REFERENCES, no_doi)
    assert not problems, "\n".join(map(str, problems))
    assert set(no_doi) < set(ENTRIES), "every work the policy exempts is an entry"


@pytest.mark.parametrize(
    "text, key, shown",
    [
        ("<p>As Elman (1990) showed.</p>", "elman1990", "Elman (1990)"),
        ("<p>Bengio, Simard and Frasconi (1994, §4) give it.</p>", "bengio1994", "Bengio, Simard and Frasconi (1994"),
        ("<p>clipping (Pascanu, Mikolov and Bengio, 2013).</p>", "pascanu2013", "Pascanu, Mikolov and Bengio, 2013"),
        (
            "<p>the adding problem (Hochreiter &amp; Schmidhuber 1997)</p>",
            "hochreiter1997",
            "Hochreiter &amp; Schmidhuber 1997",
        ),
        ("<p>Cho et al. (2014) wrote it.</p>", "cho2014", "Cho et al. (2014)"),
        (
            "<p>Zaremba, Sutskever and\nVinyals (2014) kept it.</p>",
            "zaremba2014",
            "Zaremba, Sutskever and\nVinyals (2014)",
        ),
    ],
)
def test_each_form_of_citation_is_linked(text, key, shown):
    out, found = link(text)
    assert [c.key for c in found] == [key]
    assert f'id="cite-{key}-1" href="../references/#{key}">{shown}</a>' in out


def test_several_citations_in_one_parenthesis_and_counts_per_key():
    out, found = link("<p>(Elman, 1990; Werbos, 1990) and again Elman (1990).</p>")
    assert [(c.key, c.anchor) for c in found] == [
        ("elman1990", "cite-elman1990-1"),
        ("werbos1990", "cite-werbos1990-1"),
        ("elman1990", "cite-elman1990-2"),
    ]
    assert out.count('class="rnnmem-cite"') == 3


@pytest.mark.parametrize(
    "text",
    [
        '<p>One source credits it to "Gers et al. (2002)".</p>',  # a source's own words, quoted
        "<p><code>Elman (1991)</code></p>",  # code
        '<p><span class="arithmatex">\\(Foo (2001)\\)</span></p>',  # math
        "<h2>Gers (2002)</h2>",  # a heading
        '<p><a href="https://example.org">Elman (1991)</a></p>',  # a link already
        "<p>In 1990 the network (of 1990) ran.</p>",  # a year without an author
    ],
)
def test_text_that_is_not_a_citation_is_left_alone(text):
    assert link(text) == (text, [])


def test_a_link_written_to_an_entry_counts_as_a_citation():
    out, found = link('<p><a href="../references/#gers2000">Gers, Schmidhuber and Cummins (2000)</a></p>')
    assert [c.key for c in found] == ["gers2000"]
    assert out.startswith('<p><a id="cite-gers2000-1" href="../references/#gers2000">')


def test_an_unmatched_citation_fails_with_page_and_line():
    source = "# Title\n\nText.\n\nAs Elman\n(1991) said, and Smith et al. (2020).\n"
    with pytest.raises(CitationError) as err:
        link("<p>As Elman\n(1991) said, and Smith et al. (2020).</p>", source=source)
    message = str(err.value)
    assert 'docs/x.md:5: "Elman\n(1991)" matches no entry' in message and "elman1991" in message
    assert "(expected a key elman1991); did you mean 'elman1990'?" in message
    assert 'docs/x.md:6: "Smith et al. (2020)" matches no entry' in message


def test_the_wrong_coauthors_do_not_match():
    with pytest.raises(CitationError, match="Elman and Werbos"):
        link("<p>Elman and Werbos (1990)</p>")


def test_entries_link_back_to_each_citing_page_in_nav_order():
    index = Index()
    index.replace_page("b.md", [Citation("b.md", "elman1990", "cite-elman1990-1", "Elman (1990)")])
    index.replace_page(
        "a.md",
        [Citation("a.md", "elman1990", "cite-elman1990-1", ""), Citation("a.md", "elman1990", "cite-elman1990-2", "")],
    )
    html = '<p><a id="elman1990"></a> Elman.</p>\n<p><a id="werbos1990"></a> Werbos.</p>'
    out = cited_in(html, index, {"a.md": ("A", "../a/"), "b.md": ("B", "../b/")})
    assert 'Cited in <a href="../a/#cite-elman1990-1">A</a> (2×), <a href="../b/#cite-elman1990-1">B</a>.' in out
    assert '<p><a id="werbos1990"></a> Werbos.</p>' in out  # cited nowhere: unchanged
    index.replace_page("a.md", [])  # a page read again replaces its citations
    assert "(2×)" not in cited_in(html, index, {"a.md": ("A", "../a/"), "b.md": ("B", "../b/")})


def test_an_entry_with_et_al_in_its_authors():
    entries = {"amodei2016": Entry("amodei2016", "Amodei et al.", "2016")}
    _, found = link_citations("<p>Amodei et al. (2016)</p>", entries, references_url="r/", page="p")
    assert [c.key for c in found] == ["amodei2016"]

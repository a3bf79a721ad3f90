"""Pages rendered from notebooks: nothing loaded from elsewhere, stable ids, every plot described."""

import pytest

from rnnmem.site.book import NO_ALT, NotebookAltError, clean_notebook_html

PAGE = (
    '<head><script src=""> </script>'
    '<script type="text/x-mathjax-config">MathJax.Hub.Config({});</script>'
    '<script type="module">const m = await import("https://cdn.example/mermaid.mjs");</script></head>'
    '<div id="cell-id=a1b2"><p>text</p></div>'
    f'<div id="cell-id=c3d4"><img src="data:image/png;base64,AAAA" {NO_ALT}></div>'
)


def test_outside_loaders_are_removed_ids_renumbered_and_plots_described():
    out = clean_notebook_html(PAGE, [None, "A falling line & a rising one"])
    assert "<script" not in out and "cdn.example" not in out
    assert 'id="cell-id=1"' in out and 'id="cell-id=2"' in out and "a1b2" not in out
    assert 'alt="A falling line &amp; a rising one"' in out and NO_ALT not in out


def test_an_undescribed_plot_names_its_cell():
    with pytest.raises(NotebookAltError, match=r"docs/notebooks/n.py: cell 2 shows an image without a description"):
        clean_notebook_html(PAGE, [None, None], where="docs/notebooks/n.py")


def test_the_same_page_cleans_to_the_same_bytes():
    other = PAGE.replace("a1b2", "ffff").replace("c3d4", "0000")
    assert clean_notebook_html(PAGE, [None, "x"]) == clean_notebook_html(other, [None, "x"])

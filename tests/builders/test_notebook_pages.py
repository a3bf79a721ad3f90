"""Pages rendered from notebooks: nothing loaded from elsewhere, stable ids, every plot described."""

import pytest

from rnnmem.site.notebook_pages import NO_ALT, KeptCaches, NotebookAltError, clean_notebook_html, finish_page, key_cache

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


def test_a_finished_page_takes_its_alt_texts_from_the_cells_and_its_links_under_the_title(tmp_path):
    source = tmp_path / "n.py"
    source.write_text('# %% [markdown]\n# # N\n\n# %% alt="Two lines that cross"\nprint(1)\n')
    page = '<h1 id="n">N</h1>' + PAGE
    out = finish_page(page, str(source), "notebooks/n.py", "<p>LINKS</p>")
    assert out.startswith('<h1 id="n">N</h1><p>LINKS</p>') and 'alt="Two lines that cross"' in out


def test_the_notebook_cache_is_keyed_on_the_package_and_old_keys_are_removed(tmp_path):
    old = tmp_path / "mkdocs-jupyter" / "rnnmem-0000000000000000"
    old.mkdir(parents=True)
    jupyter: dict[str, object] = {"cache": True, "cache_dir": "elsewhere"}
    key_cache(jupyter, tmp_path)
    current = tmp_path / "mkdocs-jupyter"
    assert str(jupyter["cache_dir"]).startswith(str(current / "rnnmem-")) and not old.exists()
    key_cache(None, tmp_path)  # a site without mkdocs-jupyter: nothing to do


def test_kept_caches_are_put_back_only_when_evicted(tmp_path):
    (tmp_path / "a.json").write_text("a")
    (tmp_path / "b.json").write_text("b")
    kept = KeptCaches()
    kept.note({"cache": True, "cache_dir": str(tmp_path)})
    (tmp_path / "a.json").unlink()
    (tmp_path / "b.json").write_text("new")
    kept.put_back()
    assert (tmp_path / "a.json").read_text() == "a" and (tmp_path / "b.json").read_text() == "new"

"""Chapter notebooks made on a machine whose arithmetic differs: up to date when only computed values differ."""

import json

import numpy as np

from rnnmem.site.arithmetic import arithmetic
from rnnmem.site.book import Book

TEXT = (
    "# T\n\nThe horizons of two factors.\n\n"
    '<!-- table: horizon_table factors=[0.5, 0.9] id="rows" -->\n\n'
    "```python\n>>> 1 + 1\n2\n```\n"
)


def make_book(tmp_path, text=TEXT) -> Book:
    book = Book(tmp_path, repo_url="https://github.com/o/r", cache_dir=tmp_path / "cache", chapters=["chapters/t.md"])
    book.add_page("chapters/t.md", text)
    book.render()
    return book


def committed(tmp_path) -> dict:
    return json.loads((tmp_path / "downloads" / "t.ipynb").read_text(encoding="utf-8"))


def commit(tmp_path, nb: dict) -> None:
    (tmp_path / "downloads" / "t.ipynb").write_text(json.dumps(nb, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def made_elsewhere(tmp_path, edit=lambda source: source) -> None:
    """Rewrite the committed notebook as another machine's: its stamp's arithmetic, and its tables edited."""
    nb = committed(tmp_path)
    nb["metadata"]["rnnmem"]["arithmetic"] = "numpy 0.0; SIMD elsewhere; BLAS other 0 Kernel"
    nb["cells"] = [dict(c, source=edit(c["source"])) if c["cell_type"] == "markdown" else c for c in nb["cells"]]
    commit(tmp_path, nb)


def table_digit_changed(source: str) -> str:
    """A value of the table's row for 0.9, changed in its last digit, as other rounding would change it
    (a cell without that row is left as it is)."""
    row = next((line for line in source.splitlines() if line.startswith("| 0.9")), None)
    if row is None:
        return source
    cells = row.split("|")
    value = cells[2].rstrip()
    cells[2] = value[:-1] + ("2" if value.endswith("1") else "1") + " "
    return source.replace(row, "|".join(cells))


def markdown_of(tmp_path) -> str:
    return "\n".join(c["source"] for c in committed(tmp_path)["cells"] if c["cell_type"] == "markdown")


def test_the_stamp_names_the_arithmetic_and_a_recipe(tmp_path):
    book = make_book(tmp_path)
    book.write_notebooks()
    stamp = committed(tmp_path)["metadata"]["rnnmem"]
    assert stamp["arithmetic"] == arithmetic()
    assert f"numpy {np.__version__}; SIMD " in stamp["arithmetic"] and "; BLAS " in stamp["arithmetic"]
    assert len(stamp["recipe"]) == 32 and int(stamp["recipe"], 16) >= 0


def test_the_recipe_holds_each_directive_and_its_key_not_its_values(tmp_path):
    book = make_book(tmp_path)
    page = book.pages["chapters/t.md"]
    recipe = book.notebook_text(page, recipe_only=True)
    assert f"[{page.items[0].key}: table: horizon_table factors=[0.5, 0.9] id=" in recipe
    assert "| 0.9" not in recipe and "| 0.9" in book.notebook_text(page)


def test_a_notebook_made_elsewhere_with_other_values_is_up_to_date_and_kept(tmp_path):
    book = make_book(tmp_path)
    book.write_notebooks()
    values = markdown_of(tmp_path)
    made_elsewhere(tmp_path, table_digit_changed)
    assert markdown_of(tmp_path) != values, "the table's value was not changed"
    before = (tmp_path / "downloads" / "t.ipynb").read_text(encoding="utf-8")
    assert before != book.notebook_text(book.pages["chapters/t.md"])
    assert book.stale_notebooks() == []
    assert book.write_notebooks() == []
    assert (tmp_path / "downloads" / "t.ipynb").read_text(encoding="utf-8") == before


def test_other_values_under_this_machines_arithmetic_are_stale(tmp_path):
    book = make_book(tmp_path)
    book.write_notebooks()
    nb, values = committed(tmp_path), markdown_of(tmp_path)
    nb["cells"] = [dict(c, source=table_digit_changed(c["source"])) for c in nb["cells"]]
    commit(tmp_path, nb)
    assert markdown_of(tmp_path) != values, "the table's value was not changed"
    assert book.stale_notebooks() == ["docs/downloads/t.ipynb"]
    assert book.write_notebooks() == [tmp_path / "downloads" / "t.ipynb"]
    assert book.stale_notebooks() == []


def test_a_notebook_made_elsewhere_goes_stale_with_its_chapter(tmp_path):
    book = make_book(tmp_path)
    book.write_notebooks()
    made_elsewhere(tmp_path)
    assert make_book(tmp_path, TEXT.replace("two factors", "some factors")).stale_notebooks() == [
        "docs/downloads/t.ipynb"
    ]
    assert make_book(tmp_path, TEXT.replace("[0.5, 0.9]", "[0.5, 0.8]")).stale_notebooks() == ["docs/downloads/t.ipynb"]
    assert make_book(tmp_path, TEXT.replace(">>> 1 + 1\n2", ">>> 2 + 2\n4")).stale_notebooks() == [
        "docs/downloads/t.ipynb"
    ]
    assert make_book(tmp_path).stale_notebooks() == []


def test_a_notebook_without_a_stamp_is_compared_exactly(tmp_path):
    book = make_book(tmp_path)
    book.write_notebooks()
    nb = committed(tmp_path)
    del nb["metadata"]["rnnmem"]
    commit(tmp_path, nb)
    assert book.stale_notebooks() == ["docs/downloads/t.ipynb"]

"""Chapter notebooks built with the site: the page's own values, the same bytes from the same sources, no file in docs/."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rnnmem.site.arithmetic import arithmetic
from rnnmem.site.book import Book
from rnnmem.site.directives import DirectiveError
from rnnmem.site.notebook import NOTEBOOK_BRANCH, colab_url

TEXT = (
    "# T\n\nThe horizons of two factors.\n\n"
    '<!-- table: horizon_table factors=[0.5, 0.9] id="rows" -->\n\n'
    "```python\n>>> 1 + 1\n2\n```\n"
)


def make_book(tmp_path, text=TEXT, *, keep_going=False, pages=None) -> Book:
    book = Book(
        tmp_path / "docs",
        repo_url="https://github.com/o/r",
        site_url="https://o.github.io/r/",
        cache_dir=tmp_path / "cache",
        chapters=["chapters/t.md", "chapters/u.md"],
        keep_going=keep_going,
    )
    book.add_page("chapters/t.md", text)
    for src_uri, markdown in (pages or {}).items():
        book.add_page(src_uri, markdown)
    book.render()
    return book


def cells(text: str, kind: str) -> list[str]:
    return [c["source"] for c in json.loads(text)["cells"] if c["cell_type"] == kind]


def table_rows(markdown: str) -> list[str]:
    return [line.strip() for line in markdown.splitlines() if line.strip().startswith("| 0.")]


def test_the_site_gets_the_notebook_with_the_values_its_page_shows(tmp_path):
    book = make_book(tmp_path)
    files = book.generated_files()
    text = files["downloads/t.ipynb"].decode()
    assert text == book.notebooks["downloads/t.ipynb"]
    page_rows = table_rows(book.page_markdown("chapters/t.md", TEXT))
    assert len(page_rows) == 2 and page_rows[1].startswith("| 0.9")
    assert table_rows("\n".join(cells(text, "markdown"))) == page_rows
    assert cells(text, "code")[1:] == ["1 + 1"]
    assert not (tmp_path / "docs" / "downloads").exists(), "nothing is written into docs/"


def test_the_notebook_records_nothing_of_the_machine(tmp_path):
    text = make_book(tmp_path).notebooks["downloads/t.ipynb"]
    nb = json.loads(text)
    assert set(nb["metadata"]) == {"kernelspec", "language_info"}
    assert arithmetic() not in text and "SIMD" not in text


def test_same_sources_same_bytes_and_an_edit_shows_at_once(tmp_path):
    first = make_book(tmp_path).generated_files()["downloads/t.ipynb"]
    assert make_book(tmp_path).generated_files()["downloads/t.ipynb"] == first
    edited = make_book(tmp_path, TEXT.replace("[0.5, 0.9]", "[0.5, 0.8]")).notebooks["downloads/t.ipynb"]
    assert edited.encode() != first
    assert [r[:5] for r in table_rows("\n".join(cells(edited, "markdown")))] == ["| 0.5", "| 0.8"]


def test_notebook_pages_get_their_notebook_too(tmp_path):
    (tmp_path / "docs" / "notebooks").mkdir(parents=True)
    (tmp_path / "docs" / "notebooks" / "explore.py").write_text("# %% [markdown]\n# # Explore\n\n# %%\nx = 1\n")
    book = make_book(tmp_path)
    assert sorted(book.notebooks) == ["downloads/explore.ipynb", "downloads/t.ipynb"]
    assert cells(book.notebooks["downloads/explore.ipynb"], "code") == ["x = 1"]
    assert 'href="https://colab.research.google.com/github/o/r/blob/notebooks/explore.ipynb"' in (
        book.notebook_page_links("notebooks/explore.py")
    )


def test_a_notebook_that_cannot_be_made_stops_the_build_naming_page_and_line(tmp_path):
    with pytest.raises(DirectiveError, match=r"docs/chapters/t.md:3: .*\{\{rows.nothing\}\}"):
        make_book(tmp_path, TEXT.replace("two factors", "{{rows.nothing}} factors"))


def test_while_serving_a_failing_chapter_has_no_notebook_and_the_others_do(tmp_path):
    bad = "# U\n\n<!-- table: horizon_table factors=[7] -->\n"
    book = make_book(tmp_path, keep_going=True, pages={"chapters/u.md": bad})
    assert sorted(book.notebooks) == ["downloads/t.ipynb"]
    assert any("docs/chapters/u.md:3" in str(e) for e in book.errors)
    own = make_book(tmp_path, TEXT.replace("two factors", "{{rows.nothing}} factors"), keep_going=True)
    assert own.notebooks == {} and any("{{rows.nothing}}" in str(e) for e in own.errors)


def test_notebook_files_left_in_docs_are_named_for_deletion(tmp_path):
    book = make_book(tmp_path)
    assert book.stale_notebooks() == []
    (tmp_path / "docs" / "downloads").mkdir(parents=True)
    (tmp_path / "docs" / "downloads" / "t.ipynb").write_text("{}")
    assert book.stale_notebooks() == ["docs/downloads/t.ipynb (the build makes it: delete this file)"]


def test_colab_opens_the_published_branch_and_refuses_a_path():
    assert NOTEBOOK_BRANCH == "notebooks"
    assert colab_url("https://github.com/o/r.git", "t.ipynb") == (
        "https://colab.research.google.com/github/o/r/blob/notebooks/t.ipynb"
    )
    with pytest.raises(ValueError, match=r"name must be a notebook's file name .* got 'docs/downloads/t.ipynb'"):
        colab_url("https://github.com/o/r", "docs/downloads/t.ipynb")
    with pytest.raises(ValueError, match=r"repo_url must be .* got 'https://gitlab.com/o/r'"):
        colab_url("https://gitlab.com/o/r", "t.ipynb")


def write_project(tmp_path: Path) -> Path:
    (tmp_path / "docs" / "chapters").mkdir(parents=True)
    (tmp_path / "docs" / "chapters" / "t.md").write_text(TEXT)
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nrepo_url: https://github.com/o/r\nsite_url: https://o.github.io/r/\nnav: [{T: chapters/t.md}]\n"
    )
    return tmp_path


def notebooks_command(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rnnmem.site", "notebooks", "--config", str(tmp_path / "mkdocs.yml"), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "RNNMEM_CACHE_DIR": str(tmp_path / "cache")},
        timeout=300,
    )


@pytest.mark.process
def test_the_notebooks_command_writes_them_outside_docs(tmp_path):
    project = write_project(tmp_path)
    done = notebooks_command(project, "--out", str(project / "out"))
    assert done.returncode == 0, done.stderr
    written = project / "out" / "t.ipynb"
    assert cells(written.read_text(), "code")[1:] == ["1 + 1"]
    assert not (project / "docs" / "downloads").exists()


@pytest.mark.process
def test_the_notebooks_command_refuses_a_folder_in_docs(tmp_path):
    project = write_project(tmp_path)
    done = notebooks_command(project, "--out", str(project / "docs" / "downloads"))
    assert done.returncode == 2
    assert "usage:" in done.stderr and "argument --out:" in done.stderr and "docs/downloads" in done.stderr
    assert not (project / "docs" / "downloads").exists()


# -- the student's notebook: the chapter without its answers --------------------------------------------
EXERCISES = """
## Exercises

1. **Conceptual.** Why does a factor below one forget?

    ??? success "Answer"
        Each step keeps a fixed share below one, so the share left shrinks geometrically.

2. **Coding.** Write `halve(x)`.

    ```python
    def halve(x):
        raise NotImplementedError("your code here")
    ```

    ??? success "Answer"
        ```python
        def halve(x):
            return x / 2
        ```

        Dividing is the whole of it.

    ```python
    assert halve(4.0) == 4.0 / 2
    ```
"""


def run_cells(text: str) -> None:
    """Run a notebook's code cells in order in one namespace, as a kernel would (the install cell aside)."""
    namespace: dict = {}
    for source in cells(text, "code")[1:]:
        exec(compile(source, "<cell>", "exec"), namespace)


def test_a_chapter_with_exercises_gets_a_students_notebook_whose_checks_meet_the_students_code(tmp_path):
    book = make_book(tmp_path, TEXT + EXERCISES)
    assert sorted(book.notebooks) == ["downloads/t-student.ipynb", "downloads/t.ipynb"]
    full, student = book.notebooks["downloads/t.ipynb"], book.notebooks["downloads/t-student.ipynb"]
    # The answers are gone, their prose and their code; the starter and the check stay.
    assert "return x / 2" in full and "Dividing is the whole of it" in full and "geometrically" in full
    assert "return x / 2" not in student and "Dividing" not in student and "geometrically" not in student
    assert "**Answer**" not in student
    code = cells(student, "code")
    assert any("raise NotImplementedError" in c for c in code) and any("assert halve(4.0)" in c for c in code)
    assert "without the exercises' answers" in cells(student, "markdown")[0]
    # The chapter's notebook runs through; the student's stops at the check until the starter is written.
    run_cells(full)
    with pytest.raises(NotImplementedError, match="your code here"):
        run_cells(student)
    written = student.replace('raise NotImplementedError(\\"your code here\\")', "return x / 2")
    assert written != student
    run_cells(written)
    # The page links it under its Exercises heading, with its Colab address.
    page = book.page_markdown("chapters/t.md", TEXT + EXERCISES)
    heading = page.index("</span> Exercises")
    link = page.index("(../downloads/t-student.ipynb)", heading)
    assert link < page.index("1. **Conceptual.**")
    assert colab_url("https://github.com/o/r", "t-student.ipynb") in page


def test_a_chapter_without_exercises_gets_no_students_notebook(tmp_path):
    book = make_book(tmp_path)
    assert "downloads/t-student.ipynb" not in book.notebooks
    assert "student" not in book.page_markdown("chapters/t.md", TEXT)

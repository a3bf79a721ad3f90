"""Chapter notebooks: built from the chapters with the site, never committed, and runnable top to bottom."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from rnnmem.site import check
from rnnmem.site.book import Book, load_mkdocs_settings
from rnnmem.site.exercises import exercises
from rnnmem.site.markdown import lex
from rnnmem.site.notebook import printed_output, python_blocks, shown_only

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = load_mkdocs_settings(ROOT / "mkdocs.yml")


def book() -> Book:
    b = Book(SETTINGS["docs_dir"], repo_url=SETTINGS["repo_url"], site_url=SETTINGS["site_url"])
    b.add_docs_dir()
    return b


@pytest.fixture(autouse=True, scope="module")
def _items_rendered_once(book_items):
    """Every item is in the session's shared cache first (tests/conftest.py), so built() renders none again."""


@functools.cache
def built() -> Book:
    """The book with every page rendered and its notebooks made, as the site build makes them."""
    b = book()
    b.render()
    return b


def notebook_of(src_uri: str) -> dict:
    b = built()
    return json.loads(b.notebooks[b.notebook_path(b.pages[src_uri])])


CHAPTERS = sorted(p.src_uri for p in book().pages.values() if p.is_chapter)


def test_there_are_chapters():
    assert CHAPTERS


def test_the_site_offers_one_notebook_per_chapter_and_notebook_page():
    b = built()
    pages = sorted(p.stem for p in (SETTINGS["docs_dir"] / "notebooks").glob("*.py"))
    names = sorted(b.pages[c].slug for c in CHAPTERS) + [f"{b.pages[c].slug}-student" for c in CHAPTERS] + pages
    assert sorted(b.notebooks) == sorted(f"downloads/{n}.ipynb" for n in names)
    generated = b.generated_files()
    assert all(generated[path] == text.encode() for path, text in b.notebooks.items())


def test_no_notebook_is_committed_and_the_folder_is_ignored():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    tracked = subprocess.run(
        ["git", "ls-files", "--", "*.ipynb"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert tracked == [], f"notebooks are built with the site, never committed: {tracked}"
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "docs/downloads/horizon.ipynb"], cwd=ROOT, capture_output=True
    )
    assert ignored.returncode == 0, "docs/downloads/ must be ignored (.gitignore)"
    assert built().stale_notebooks() == [], "notebook files left in docs/downloads/: delete them"


@pytest.mark.parametrize("src_uri", CHAPTERS)
def test_notebook_holds_the_chapter_code_without_prompts(src_uri):
    page = built().pages[src_uri]
    nb = notebook_of(src_uri)
    code = [c["source"] for c in nb["cells"] if c["cell_type"] == "code"]
    assert SETTINGS["repo_url"].rstrip("/") + ".git" in code[0], "the first cell installs rnnmem from the repository"
    blocks = python_blocks(page.markdown)
    assert code[1:] == [b.source for b in blocks]
    assert not any(line.startswith((">>>", "...")) for cell in code for line in cell.splitlines())


@pytest.mark.parametrize("src_uri", CHAPTERS)
@pytest.mark.build
def test_notebook_runs_top_to_bottom(src_uri, tmp_path):
    nb = nbformat.reads(json.dumps(notebook_of(src_uri)), as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


@pytest.mark.parametrize("src_uri", CHAPTERS)
def test_notebook_carries_the_chapters_prose_and_printed_output(src_uri):
    b = built()
    page = b.pages[src_uri]
    nb = notebook_of(src_uri)
    # Every ## heading of the chapter, and its first paragraph, are in the notebook's text: the rule
    # "notebook-prose" of rnnmem.site.check, the one `make test-chapter` runs.
    problems = check.notebook_prose_problems(b, src_uri, b.notebooks[b.notebook_path(page)])
    assert not problems, "\n".join(map(str, problems))
    prose = "\n".join(c["source"] for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "<!--" not in prose and "](../" not in prose and ".md)" not in prose, (
        f"{b.notebook_path(page)}: the notebook's text keeps a comment or a relative link, which only the site resolves"
    )
    # Each code cell's output is what the chapter's snippet prints (and Sybil checks).
    shown = shown_only(page.markdown)  # a Keras recipe: shown as text, not a cell
    fences = [f for f in lex(page.markdown).fences if f.info == "python" and f.line not in shown]
    code = [c for c in nb["cells"] if c["cell_type"] == "code"][1:]
    for cell, fence in zip(code, fences):
        want = printed_output("\n".join(fence.body))
        got = "".join(o["text"] for o in cell["outputs"])
        assert got == want, f"docs/{src_uri}:{fence.line}: the notebook's cell prints {got!r}, the chapter {want!r}"


@pytest.mark.parametrize("src_uri", CHAPTERS)
def test_the_students_notebook_is_the_chapter_without_its_answers(src_uri):
    """Every code cell of the chapter's notebook is in the student's, in order, except the answers' code;
    each coding exercise's starter and check are there, and no answer's code or text is."""
    b = built()
    page = b.pages[src_uri]
    student = json.loads(b.notebooks[b.student_notebook_path(page)])
    items = exercises(page.markdown)
    assert items, f"docs/{src_uri} has no exercises"
    answer_lines = {n for ex in items for first, last in ex.answers for n in range(first, last + 1)}
    blocks = python_blocks(page.markdown)
    kept = [blk.source for blk in blocks if blk.line not in answer_lines]
    code = [c["source"] for c in student["cells"] if c["cell_type"] == "code"]
    assert code[1:] == kept, f"docs/{src_uri}: the student's notebook must hold the chapter's code without the answers"
    prose = "\n".join(c["source"] for c in student["cells"] if c["cell_type"] == "markdown")
    assert "**Answer**" not in prose, f"docs/{src_uri}: the student's notebook shows an answer"
    for ex in items:
        if ex.tag == "coding":
            assert all(s in code for s in ex.starter) and any(c in code for c in ex.checks), (
                f"docs/{src_uri}:{ex.line}: the student's notebook lacks exercise {ex.number}'s starter or check"
            )


def test_the_book_sets_open_projects_and_tags_every_exercise():
    counts: dict[str, int] = {}
    for src_uri in CHAPTERS:
        for ex in exercises(book().pages[src_uri].markdown):
            assert ex.tag, f"docs/{src_uri}:{ex.line}: exercise {ex.number} has no tag"
            counts[ex.tag] = counts.get(ex.tag, 0) + 1
    assert counts.get("project", 0) >= 3, f"the book sets {counts.get('project', 0)} projects; it needs at least 3"
    assert counts.get("coding", 0) >= 2 * len(CHAPTERS), counts

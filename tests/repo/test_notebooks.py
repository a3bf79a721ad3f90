"""Chapter notebooks: generated from the chapters, committed up to date, and runnable top to bottom."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from rnnmem.site import check
from rnnmem.site.book import Book, load_mkdocs_settings
from rnnmem.site.markdown import lex
from rnnmem.site.notebook import printed_output, python_blocks

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = load_mkdocs_settings(ROOT / "mkdocs.yml")


def book() -> Book:
    b = Book(SETTINGS["docs_dir"], repo_url=SETTINGS["repo_url"], site_url=SETTINGS["site_url"])
    b.add_docs_dir()
    return b


CHAPTERS = sorted(p.src_uri for p in book().pages.values() if p.is_chapter)


def test_there_are_chapters():
    assert CHAPTERS


def test_committed_notebooks_match_their_chapters():
    stale = book().stale_notebooks()
    assert not stale, "run `make notebooks` and commit: " + "; ".join(stale)


@pytest.mark.parametrize("src_uri", CHAPTERS)
def test_notebook_holds_the_chapter_code_without_prompts(src_uri):
    b = book()
    page = b.pages[src_uri]
    nb = json.loads((SETTINGS["docs_dir"] / b.notebook_path(page)).read_text())
    code = [c["source"] for c in nb["cells"] if c["cell_type"] == "code"]
    assert SETTINGS["repo_url"].rstrip("/") + ".git" in code[0], "the first cell installs rnnmem from the repository"
    blocks = python_blocks(page.markdown)
    assert code[1:] == [b.source for b in blocks]
    assert not any(line.startswith((">>>", "...")) for cell in code for line in cell.splitlines())


@pytest.mark.parametrize("src_uri", CHAPTERS)
def test_notebook_runs_top_to_bottom(src_uri, tmp_path):
    b = book()
    path = SETTINGS["docs_dir"] / b.notebook_path(b.pages[src_uri])
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


@pytest.mark.parametrize("src_uri", CHAPTERS)
def test_notebook_carries_the_chapters_prose_and_printed_output(src_uri):
    b = book()
    # Every ## heading of the chapter, and its first paragraph, are in the notebook's text: the rule
    # "notebook-prose" of rnnmem.site.check, the one `make test-chapter` runs.
    problems = check.notebook_prose_problems(b, src_uri)
    assert not problems, "\n".join(map(str, problems))
    page = b.pages[src_uri]
    nb = json.loads((SETTINGS["docs_dir"] / b.notebook_path(page)).read_text())
    prose = "\n".join(c["source"] for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "<!--" not in prose and "](../" not in prose and ".md)" not in prose, (
        f"{b.notebook_path(page)}: the notebook's text keeps a comment or a relative link, which only the site resolves"
    )
    # Each code cell's output is what the chapter's snippet prints (and Sybil checks).
    fences = [f for f in lex(page.markdown).fences if f.info == "python"]
    code = [c for c in nb["cells"] if c["cell_type"] == "code"][1:]
    for cell, fence in zip(code, fences):
        want = printed_output("\n".join(fence.body))
        got = "".join(o["text"] for o in cell["outputs"])
        assert got == want, f"docs/{src_uri}:{fence.line}: the notebook's cell prints {got!r}, the chapter {want!r}"

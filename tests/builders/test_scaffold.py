"""`make chapter` in a temporary copy of the repository: the new chapter fails only on its placeholders, then passes.

The copy holds the repository's files (tracked and new, as `git ls-files` lists
them); its own ``src`` comes first on ``PYTHONPATH`` so the new builder module is
the one imported. ``make test-chapter`` renders through the session's shared cache
(tests/conftest.py): the copy's other builders are the same code, so their items
have the same keys and are read, not rendered again; the new chapter's items have
keys of their own. The strict build of one chapter has a cache of its own, since a
build prunes from its cache what its pages do not use.
Nothing is written into the real tree. ``make -o setup`` reuses this interpreter instead of creating a venv,
and the copy links to the repository's ``node_modules``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rnnmem.site import config
from rnnmem.site.book import load_mkdocs_settings
from rnnmem.site.check import home_chapters, nav_chapters, objectives_problems
from rnnmem.site.exercises import exercise_problems
from rnnmem.site.scaffold import (
    HOME_ENTRY,
    MAX_SLUG,
    MOTIVATION,
    Scaffold,
    add_to_home,
    add_to_nav,
    check_arguments,
    scaffold,
)

ROOT = Path(__file__).resolve().parents[2]
SLUG, TITLE = "long-memory", "Long memory: a first look"


def make(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(repo / "src"))
    for name in ("NAME", "TITLE", "CH", "MAKEFLAGS", "MFLAGS"):
        env.pop(name, None)
    return subprocess.run(
        ["make", "--no-print-directory", "-o", "setup", f"PY={sys.executable}", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def copy_repository(dest: Path) -> Path:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    # The npm packages (MathJax typesets the pages' math at build time) are installed, not tracked:
    # the copy uses the repository's own, read only.
    if (ROOT / "node_modules").is_dir():
        (dest / "node_modules").symlink_to(ROOT / "node_modules", target_is_directory=True)
    return dest


def tree(repo: Path) -> dict[str, bytes]:
    return {
        p.relative_to(repo).as_posix(): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".cache" not in p.parts and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    repo = copy_repository(tmp_path_factory.mktemp("repo"))
    before = tree(repo)
    done = make(repo, "chapter", f"NAME={SLUG}", f"TITLE={TITLE}")
    assert done.returncode == 0, done.stdout + done.stderr
    changed = sorted(k for k, v in tree(repo).items() if before.get(k) != v)
    assert changed == sorted(
        [
            "docs/chapters/long-memory.md",
            "docs/index.md",
            "mkdocs.yml",
            "src/rnnmem/site/builders/long_memory.py",
            "tests/builders/test_builders_long_memory.py",
        ]
    ), changed
    return repo


@pytest.mark.process
def test_the_chapter_has_the_books_rhythm(repo):
    page = (repo / "docs" / "chapters" / f"{SLUG}.md").read_text()
    assert page.startswith(f"# {TITLE}\n")
    headings = [line for line in page.splitlines() if line.startswith("## ")]
    assert headings == ["## Derivation", "## Computation", "## Summary", "## Exercises", "## References"]
    assert "```python\n>>> " in page and "<!-- figure: long_memory_decay " in page
    assert '??? success "Answer"' in page and "../references.md#" in page


@pytest.mark.process
def test_nav_and_home_list_the_chapter_last_and_agree(repo):
    nav = nav_chapters(repo / "mkdocs.yml")
    assert nav[-1] == (TITLE, f"chapters/{SLUG}.md")
    assert home_chapters((repo / "docs" / "index.md").read_text()) == nav


MOTIVATION_TEXT = (
    "A value carried through a recurrent network is multiplied, step after step, by a factor.\n"
    "This chapter asks how much of it is left after a given number of steps."
)
HOME_TEXT = "How much of a value a constant factor leaves after a given number of steps."


def replace_sentence(text: str, sentence: str, new: str) -> str:
    """``text`` with ``sentence`` (which may wrap across lines) replaced once by ``new``."""
    pattern = r"\s+".join(re.escape(word) for word in sentence.split())
    replaced, count = re.subn(pattern, lambda _: new, text, count=1)
    assert count == 1, f"{sentence!r} is not in the text"
    return replaced


@pytest.mark.build
def test_the_new_chapter_fails_test_chapter_on_its_placeholders_alone(repo):
    done = make(repo, "test-chapter", f"CH={SLUG}")
    assert done.returncode != 0, done.stdout + done.stderr
    assert " passed" in done.stdout and " failed" not in done.stdout  # its snippets and builder test pass
    assert f"docs/chapters/{SLUG}.md: FAILED (placeholders): " in done.stdout
    home_line = next(
        n for n, line in enumerate((repo / "docs" / "index.md").read_text().splitlines(), 1) if SLUG in line
    )
    assert f'docs/chapters/{SLUG}.md:3: placeholders: "{MOTIVATION}" is a placeholder' in done.stderr
    assert f'docs/index.md:{home_line}: placeholders: "{HOME_ENTRY}" is a placeholder' in done.stderr
    assert "how to fix (placeholders): replace the sentence" in done.stderr


@pytest.mark.build
def test_the_chapter_passes_test_chapter_once_its_placeholders_are_replaced(repo):
    page, index = repo / "docs" / "chapters" / f"{SLUG}.md", repo / "docs" / "index.md"
    page_text, index_text = page.read_text(), index.read_text()
    try:
        page.write_text(replace_sentence(page_text, MOTIVATION, MOTIVATION_TEXT))
        index.write_text(replace_sentence(index_text, HOME_ENTRY, HOME_TEXT))
        done = make(repo, "test-chapter", f"CH={SLUG}")
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"docs/chapters/{SLUG}.md: ok: " in done.stdout
    finally:
        page.write_text(page_text)
        index.write_text(index_text)


STRICT_CONFIG = """\
site_name: one chapter
site_url: {site_url}
repo_url: {repo_url}
theme: {{name: material, font: false}}
nav:
  - Chapters: [chapters/{slug}.md]
  - conventions.md
  - references.md
exclude_docs: |
  /index.md
  /notebooks/
  /chapters/*
  !/chapters/{slug}.md
plugins: [search, rnnmem]
markdown_extensions:
  - admonition
  - attr_list
  - md_in_html
  - tables
  - footnotes
  - toc: {{permalink: true}}
  - pymdownx.arithmatex: {{generic: true}}
  - pymdownx.details
  - pymdownx.superfences
validation:
  nav: {{omitted_files: info, not_found: warn}}
  links: {{not_found: warn, anchors: warn, unrecognized_links: warn}}
"""


@pytest.mark.build
def test_the_strict_build_refuses_the_placeholder_then_passes(repo):
    """The strict build of the chapter with the pages it links to (the whole site's build is `make build`)."""
    config = repo / "mkdocs-one-chapter.yml"
    settings = load_mkdocs_settings(repo / "mkdocs.yml")  # the notebook embeds both URLs
    config.write_text(
        STRICT_CONFIG.format(
            slug=SLUG,
            site_url=settings["site_url"],
            repo_url=settings["repo_url"],
        )
    )
    # A cache of its own: a build prunes from its cache every item its pages do not use, and this one
    # builds one chapter (the shared cache keeps the whole book's items).
    env = dict(os.environ, PYTHONPATH=str(repo / "src"), RNNMEM_CACHE_DIR=str(repo / ".cache"), NO_MKDOCS_2_WARNING="1")

    def build() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(repo / "site-one")],
            cwd=repo,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )

    page = repo / "docs" / "chapters" / f"{SLUG}.md"
    original = page.read_text()
    try:
        refused = build()
        assert refused.returncode != 0
        assert f'docs/chapters/{SLUG}.md:3: placeholders: "{MOTIVATION}" is a placeholder' in refused.stderr
        page.write_text(replace_sentence(original, MOTIVATION, MOTIVATION_TEXT))
        done = build()
        assert done.returncode == 0, done.stderr
        html = (repo / "site-one" / "chapters" / SLUG / "index.html").read_text()
        assert f'<figure class="rnnmem-figure" id="fig-{SLUG}-decay">' in html and "long_memory_decay-" in html
        # Numbered from the nav, and the template's references are links.
        assert '<span class="rnnmem-chapter-number">Chapter 1</span>' in html
        assert f'<a href="#fig-{SLUG}-decay">Figure 1.1</a>' in html and f'<a href="#eq-{SLUG}-decay">(1.1)</a>' in html
        assert '<details class="success">' in html
        # Its notebook is built with the site, numbered as this build numbers the chapter.
        notebook = json.loads((repo / "site-one" / "downloads" / f"{SLUG}.ipynb").read_text())
        assert notebook["cells"][0]["source"].startswith(f"# {TITLE}")
        assert "Figure 1.1" in "".join(c["source"] for c in notebook["cells"] if c["cell_type"] == "markdown")
    finally:
        config.unlink()
        page.write_text(original)
        shutil.rmtree(repo / "site-one", ignore_errors=True)


@pytest.mark.build
def test_test_chapter_runs_the_chapter_not_a_page_of_the_same_name(repo):
    """The old target took the first docs/**/<CH>.md (docs/api/dropout.md) and reported a false pass."""
    page = repo / "docs" / "chapters" / f"{SLUG}.md"
    decoy = repo / "docs" / "api" / f"{SLUG}.md"
    original = page.read_text()
    try:
        page.write_text(original.replace("0.3487", "0.3488"))
        decoy.parent.mkdir(parents=True, exist_ok=True)
        decoy.write_text("# Not the chapter\n\nNo snippets here.\n")
        done = make(repo, "test-chapter", f"CH={SLUG}")
        assert done.returncode != 0
        assert f"docs/chapters/{SLUG}.md" in done.stdout and "0.3487" in done.stdout
    finally:
        page.write_text(original)
        decoy.unlink()


@pytest.mark.process
@pytest.mark.parametrize(
    "args, named",
    [
        ([], "NAME is required"),
        (["NAME=Long Memory", "TITLE=T"], "NAME must be a slug"),
        (["NAME=../x", "TITLE=T"], "NAME must be a slug"),
        ([f"NAME={SLUG}", "TITLE=Again"], f"NAME '{SLUG}' is taken"),
        (["NAME=dropout", "TITLE=Again"], "NAME 'dropout' is taken"),
        (["NAME=other"], "TITLE must be a non-empty title"),
        (["NAME=other", "TITLE=  "], "TITLE must be a non-empty title"),
    ],
)
def test_bad_input_exits_2_with_usage_naming_the_argument(repo, args, named):
    before = tree(repo)
    done = make(repo, "chapter", *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "usage: make chapter NAME=<slug>" in done.stderr and named in done.stderr
    assert tree(repo) == before, "nothing is written on bad input"


@pytest.mark.process
@pytest.mark.parametrize("ch", ["", "no-such-chapter", "../api/index", "docs/chapters/horizon"])
def test_test_chapter_with_an_unknown_chapter_exits_2_listing_the_chapters(repo, ch):
    done = make(repo, "test-chapter", f"CH={ch}")
    assert done.returncode == 2
    assert "usage: make test-chapter CH=<chapter>" in done.stderr
    assert "  horizon\n" in done.stderr and f"  {SLUG}\n" in done.stderr


def test_paths_and_names():
    s = Scaffold(Path("/r"), "a-b", "T")
    assert (s.module, s.builder) == ("a_b", "a_b_decay")
    assert s.test_path == Path("/r/tests/builders/test_builders_a_b.py")
    with pytest.raises(ValueError, match="NAME must not be a Python keyword"):
        check_arguments(ROOT, "class", "T")


def test_nav_and_home_insertion_keep_the_rest():
    config = (ROOT / "mkdocs.yml").read_text()
    added = add_to_nav(config, "X: y", "chapters/x.md")
    assert added.replace('      - "X: y": chapters/x.md\n', "", 1) == config
    home = (ROOT / "docs" / "index.md").read_text()
    n = len(home_chapters(home))
    new = add_to_home(home, "X", "chapters/x.md")
    assert home_chapters(new)[-1] == ("X", "chapters/x.md") and len(home_chapters(new)) == n + 1


#: A chapter whose slug is as long as the scaffold allows and whose title quotes: the written Python must
#: stay within the formatter's line length and keep the title inside its docstrings.
LONG_SLUG = "ab" + "-c" * ((MAX_SLUG - 2) // 2)
LONG_TITLE = 'What "forgetting" means, at length'


def lint(repo: Path, files: list[Path]) -> list[str]:
    """What `make lint` reports on ``files``: ruff format --check, ruff check, mypy, all on the repo's config."""
    names = [str(f.relative_to(repo)) for f in files]
    ruff = Path(sys.executable).with_name("ruff")
    failures = []
    for command in ([str(ruff), "format", "--check", "--diff", *names], [str(ruff), "check", *names]):
        done = subprocess.run(command, cwd=repo, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            failures.append(f"{' '.join(command[1:3])}:\n{done.stdout}{done.stderr}")
    mypy = Path(sys.executable).with_name("mypy")
    done = subprocess.run([str(mypy), *names], cwd=repo, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        failures.append(f"mypy:\n{done.stdout}{done.stderr}")
    return failures


@pytest.mark.process
@pytest.mark.timeout(600)
def test_the_untouched_scaffold_passes_lint_and_types(tmp_path):
    """The files `make chapter` writes pass CI's `make lint` exactly as written, for a short and a long name."""
    assert len(LONG_SLUG) == MAX_SLUG
    repo = copy_repository(tmp_path)
    written = scaffold(repo, SLUG, TITLE) + scaffold(repo, LONG_SLUG, LONG_TITLE)
    python = [p for p in written if p.suffix == ".py"]
    assert len(python) == 4, python
    assert lint(repo, python) == []
    # The objectives block it writes passes its rule, the second chapter's naming the first as prerequisite.
    order = config.chapters(repo / "mkdocs.yml")
    for slug in (SLUG, LONG_SLUG):
        src_uri = f"chapters/{slug}.md"
        markdown = (repo / "docs" / src_uri).read_text()
        assert objectives_problems(f"docs/{src_uri}", markdown, src_uri, order) == []
        assert exercise_problems(markdown) == []  # its checks call rnnmem
    assert f"[{TITLE}]({SLUG}.md)" in " ".join((repo / "docs" / f"chapters/{LONG_SLUG}.md").read_text().split())


def test_a_slug_too_long_for_the_builder_is_refused():
    with pytest.raises(ValueError, match=f"NAME must be at most {MAX_SLUG} characters"):
        check_arguments(ROOT, "a" * (MAX_SLUG + 1), "T")
    with pytest.raises(ValueError, match="TITLE must be one line without brackets, backquotes or backslashes"):
        check_arguments(ROOT, "other", "A \\ B")

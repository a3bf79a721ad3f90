"""The MkDocs plugin, end to end on a small project: good pages build, bad directives stop the build."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

#: MkDocs builds and serves: `make test` runs them, `make test-fast` leaves them out.
pytestmark = pytest.mark.build

ROOT = Path(__file__).resolve().parents[2]


def project(tmp_path: Path, page: str, chapter: bool = False) -> Path:
    docs = tmp_path / "docs"
    (docs / "chapters").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n\n[chapter](chapters/c.md)\n")
    (docs / "chapters" / "c.md").write_text(page)
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nrepo_url: https://github.com/o/r\nsite_url: https://o.github.io/r/\n"
        "markdown_extensions: [md_in_html, attr_list, tables, admonition, pymdownx.details]\n"
        "plugins: [search, rnnmem]\n"
        "nav: [{Home: index.md}, {C: chapters/c.md}]\n"
    )
    return tmp_path


def build(path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, RNNMEM_CACHE_DIR=str(path / ".cache"), NO_MKDOCS_2_WARNING="1")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(path / "mkdocs.yml"), "-d", str(path / "site")],
        capture_output=True,
        text=True,
        env=env,
        cwd=path,
    )


GOOD = (
    "# C\n\nText.\n\n"
    '<!-- figure: decay_curves factors=[0.5] steps=20 caption="Half, twenty times." -->\n\n'
    "<!-- table: horizon_table factors=[0.5] -->\n\n"
    "```python\n>>> 1 + 1\n2\n```\n"
)


def test_a_good_page_builds_with_figure_table_and_notebook_link(tiny_builds):
    """The tiny fixture book (tests/tinybook), built once per session with a cache of its own: cold, then warm."""
    html = (tiny_builds.cold / "chapters" / "decay" / "index.html").read_text()
    assert '<figure class="rnnmem-figure" id="fig-curves">' in html
    # The alt text and the caption, their placeholders filled from the builder's values.
    assert (
        'alt="Two straight lines falling from one on a logarithmic axis over 20 steps; the line of 0.5 crosses' in html
    )
    caption = "What is left of a value after n steps, for the factors 0.5 and 0.9; the dashed line is the level 0.01."
    assert f'<figcaption><span class="rnnmem-label">Figure 1.1.</span> {caption}</figcaption>' in html
    assert "<table>" in html and ">0.5</td>" in html
    assert '<span class="gp">&gt;&gt;&gt; </span>' in html, "doctest blocks are shown with the console lexer"
    assert 'href="../../downloads/decay.ipynb"' in html
    # Colab opens the notebook where the publishing workflow puts it: the root of the `notebooks` branch.
    assert 'href="https://colab.research.google.com/github/o/tiny/blob/notebooks/decay.ipynb"' in html
    # The notebook is built with the site, at the address the link names.
    nb = json.loads((tiny_builds.cold / "downloads" / "decay.ipynb").read_text())
    code = [c["source"] for c in nb["cells"] if c["cell_type"] == "code"]
    assert code[1:] == ["from rnnmem import memory\nround(memory.decay(0.9, 20), 3)"]
    assert "https://github.com/o/tiny.git" in code[0]
    svgs = list((tiny_builds.cold / "assets" / "figures").glob("decay_curves-*.svg"))
    assert len(svgs) == 2, "the chapter's figure and the one in its exercise answer"
    assert "6 figures/tables rendered, 0 from the cache" in tiny_builds.cold_log
    # Nothing was written into docs/ by the builds.
    assert tiny_builds.docs_after == tiny_builds.docs_before
    assert "0 figures/tables rendered, 6 from the cache" in tiny_builds.warm_log


def test_a_diagram_gets_a_desktop_rendition_in_a_picture(tiny_builds):
    """The tiny book's diagram (tests/tinybook/docs/chapters/levels.md) is drawn twice: column and desktop width."""
    html = (tiny_builds.cold / "chapters" / "levels" / "index.html").read_text()
    figure = re.search(
        r'<figure class="rnnmem-figure rnnmem-figure--wide" id="fig-chain">(.*?)</figure>', html, re.DOTALL
    )
    assert figure, "the diagram's figure, marked wide"
    picture = re.search(
        r'<picture><source media="\(min-width: 60em\)" srcset="([^"]+)"[^>]*><img [^>]*src="([^"]+)"', figure.group(1)
    )
    assert picture, figure.group(1)
    wide, narrow = (tiny_builds.cold / "chapters" / "levels" / name for name in picture.groups())
    assert wide.name.endswith(".wide.svg") and wide.resolve().is_file(), wide
    assert narrow.name.endswith(".svg") and not narrow.name.endswith(".wide.svg") and narrow.resolve().is_file()
    assert wide.read_bytes() != narrow.read_bytes()


@pytest.mark.parametrize(
    "directive, expected",
    [
        ('<!-- figure: decay_curvs caption="x" -->', "unknown figure 'decay_curvs'"),
        ("<!-- figure: decay_curves steps=[1, -->", "unclosed bracket"),
        ('<!-- figure: decay_curves factors=[0.5, 7] caption="x" -->', "factors[1] must be a gate value"),
        ("<!-- tabel: horizon_table -->", "unknown directive kind 'tabel'"),
    ],
)
def test_a_bad_directive_fails_the_build_naming_page_and_line(tmp_path, directive, expected):
    p = project(tmp_path, "# C\n\nSome text.\n\n" + directive + "\n")
    proc = build(p)
    assert proc.returncode != 0
    assert f"docs/chapters/c.md:5: {directive}" in proc.stderr, proc.stderr
    assert expected in proc.stderr
    assert not (p / "site" / "chapters" / "c" / "index.html").exists()


def test_the_notebook_follows_its_chapter_at_every_build(tmp_path):
    p = project(tmp_path, GOOD)
    assert build(p).returncode == 0
    first = (p / "site" / "downloads" / "c.ipynb").read_bytes()
    (p / "docs" / "chapters" / "c.md").write_text(GOOD + "\n```python\n>>> 2 + 2\n4\n```\n")
    proc = build(p)
    assert proc.returncode == 0, proc.stderr
    assert "out of date" not in proc.stderr
    nb = json.loads((p / "site" / "downloads" / "c.ipynb").read_text())
    assert [c["source"] for c in nb["cells"] if c["cell_type"] == "code"][-1] == "2 + 2"
    (p / "docs" / "chapters" / "c.md").write_text(GOOD)
    assert build(p).returncode == 0
    assert (p / "site" / "downloads" / "c.ipynb").read_bytes() == first, "same chapter, same notebook bytes"
    assert not (p / "docs" / "downloads").exists(), "nothing is written into docs/"


def test_a_notebook_left_in_docs_fails_the_strict_build(tmp_path):
    p = project(tmp_path, GOOD)
    (p / "docs" / "downloads").mkdir()
    (p / "docs" / "downloads" / "c.ipynb").write_text("{}")
    proc = build(p)
    assert proc.returncode != 0
    assert "docs/downloads/c.ipynb (the build makes it: delete this file)" in proc.stderr, proc.stderr


def test_a_notebook_that_cannot_be_made_fails_the_build_naming_page_and_line(tmp_path):
    p = project(tmp_path, "# C\n\nThe value is {{nothing.here}}.\n")
    proc = build(p)
    assert proc.returncode != 0
    assert "docs/chapters/c.md:3: " in proc.stderr and "{{nothing.here}}" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_directive_in_an_exercise_answer_stays_inside_the_answer(tiny_builds):
    """The tiny book's exercise answer (tests/tinybook/docs/chapters/decay.md) holds a figure and a table."""
    html = (tiny_builds.cold / "chapters" / "decay" / "index.html").read_text()
    details = re.search(r"<details class=\"success\">(.*?)</details>", html, re.DOTALL)
    assert details, html
    inside = details.group(1)
    assert '<figure class="rnnmem-figure"' in inside and " Half, ten times.</figcaption>" in inside
    assert 'alt="Half, ten times."' in inside, "a figure without alt= has its caption as alt text"
    assert "<table>" in inside and ">0.5</td>" in inside
    assert " The half-gate alone.</p>" in inside and '<div class="rnnmem-table"' in inside
    assert "markdown=" not in inside and "<p><figure" not in inside
    assert "<p>And this text stays text.</p>" in inside and "<p>The end of the answer.</p>" in inside
    assert "<pre" not in inside and "<code>" not in inside, "no text after the figure turned into code"
    assert "<p>After the exercises.</p>" in html[details.end() :]


def test_a_builder_error_names_the_builders_file_and_line(tmp_path):
    # The arguments pass their rules (target is a finite number or array); the builder's own call raises.
    p = project(tmp_path, "# C\n\n<!-- table: bptt_table target=[1, 2] -->\n")
    proc = build(p)
    assert proc.returncode != 0
    assert "docs/chapters/c.md:3: " in proc.stderr
    assert re.search(r"src/rnnmem/site/builders/error_backward\.py:\d+ in bptt_table", proc.stderr), proc.stderr
    assert "src/rnnmem/bptt.py:" in proc.stderr

"""The same sources build the same site, byte for byte, without a second cold build of the whole book.

Three checks, each for what the others cannot see:

* the book built a second time, warm: into a temporary folder, from the render cache the
  test session shares (tests/conftest.py renders every item into it once, and after
  ``make build`` only reads it), with the environment the Makefile exports
  (SOURCE_DATE_EPOCH from the last commit, PYTHONHASHSEED=0). Every file is compared
  with ./site: the pages, numbers, math, notebooks, search index and sitemap come out
  the same from the same sources;
* the tiny fixture book (tests/tinybook) built cold, with an empty cache of its own, and
  then warm from that cache: the two sites are byte-identical, so what a build reads from
  the cache is what a cold build draws, and nothing of a build leaks into the next;
* a sample of the book's own items rendered again with the cache bypassed (the builder
  runs now, in this process, with the lab's kept runs forgotten): the same bytes and values
  as the cache holds, so an item that came out differently from the same inputs cannot
  hide behind a warm cache. The sample: one cheap item of each kind (a figure, a table, a
  widget) and one trained item of moderate cost (the clipping ladder's table, eight short
  training runs of the lab).

A difference is listed file by file.
"""

from __future__ import annotations

import filecmp
import json
import re
from pathlib import Path

import pytest

from rnnmem.site.pdf import PDF_NAME
from rnnmem.site.render import build_content

ROOT = Path(__file__).resolve().parents[2]

# Files allowed to differ between two builds, each only in the way named, and why.
# An entry is a (glob over paths relative to site/, regex of the only bytes that may
# differ) pair: both builds are compared after replacing the matches, so any other
# difference in these files still fails.
ALLOWED_DIFFERENCES: list[tuple[str, bytes]] = [
    # None today. Notebook pages once carried random cell ids (nbformat draws them
    # with uuid4 when jupytext reads a notebook); the site hook renumbers them in
    # order (rnnmem.site.notebook_pages.clean_notebook_html), so they no longer differ.
]

#: (page, kind, builder) of the items rendered again with the cache bypassed (see the module's docstring).
SAMPLE = [
    ("docs/chapters/horizon.md", "figure", "decay_curves"),
    ("docs/chapters/horizon.md", "table", "horizon_table"),
    ("docs/chapters/forget-bias.md", "widget", "forget_bias_explorer"),
    ("docs/chapters/lab-controls.md", "table", "clipping_counts"),
    ("docs/chapters/dropout.md", "figure", "dropout_spread"),  # panels side by side: a desktop rendition
    ("docs/chapters/gates.md", "figure", "lstm_chain_diagram"),  # a diagram: a desktop rendition
]


def same_allowing(rel: str, a: Path, b: Path) -> bool:
    """Whether a and b differ only in a way ALLOWED_DIFFERENCES names for rel."""
    for pattern, volatile in ALLOWED_DIFFERENCES:
        if Path(rel).match(pattern):
            mask = re.compile(volatile)
            return mask.sub(b"@", a.read_bytes()) == mask.sub(b"@", b.read_bytes())
    return False


#: Files `make pdf` adds to ./site after the build (rnnmem.site.pdf): a build never writes them, and the
#: PDF's own determinism is tested where it is printed (tests/built_site/test_pdf.py).
AFTER_THE_BUILD = {PDF_NAME}


def files_under(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} - AFTER_THE_BUILD


def differences(first: Path, second: Path, names: tuple[str, str]) -> list[str]:
    """Every file only in one of the two sites, and every file that differs."""
    a, b = files_under(first), files_under(second)
    problems = [f"only in {names[0]}: {rel}" for rel in sorted(a - b)]
    problems += [f"only in {names[1]}: {rel}" for rel in sorted(b - a)]
    for rel in sorted(a & b):
        if not filecmp.cmp(first / rel, second / rel, shallow=False) and not same_allowing(
            rel, first / rel, second / rel
        ):
            problems.append(f"differs: {rel}")
    return problems


def test_a_second_warm_build_is_byte_identical(site_dir, book_items, site_build, shared_cache, tmp_path):
    # book_items: every item is in the shared cache before this build starts, so it renders none.
    rebuilt = tmp_path / "site"
    # From the repository root, like `make build`: mkdocstrings prints "Source code in
    # src/rnnmem/..." relative to the working directory.
    result = site_build(ROOT / "mkdocs.yml", rebuilt, shared_cache)
    assert result.returncode == 0, f"the second build failed:\n{result.stderr[-4000:]}"
    assert "rnnmem: 0 figures/tables rendered, " in result.stderr, "the second build was to be warm:\n" + result.stderr
    problems = differences(site_dir, rebuilt, ("./site", "the second build"))
    assert not problems, (
        "two builds of the same sources differ (with the same SOURCE_DATE_EPOCH). If the sources "
        "changed since ./site was built, run `make build` first; a difference that remains comes from the build "
        "itself:\n" + "\n".join(problems)
    )


def test_the_tiny_book_builds_the_same_bytes_cold_and_warm(tiny_builds):
    assert "rnnmem: 6 figures/tables rendered, 0 from the cache" in tiny_builds.cold_log, tiny_builds.cold_log
    assert "rnnmem: 0 figures/tables rendered, 6 from the cache" in tiny_builds.warm_log, tiny_builds.warm_log
    assert (tiny_builds.cold / "chapters" / "decay" / "index.html").is_file()
    problems = differences(tiny_builds.cold, tiny_builds.warm, ("the cold build", "the warm build"))
    assert not problems, "the tiny book built cold and warm differs:\n" + "\n".join(problems)


@pytest.mark.parametrize("page, kind, name", SAMPLE, ids=[name for _, _, name in SAMPLE])
def test_an_item_rendered_again_without_the_cache_is_bit_identical(book_items, monkeypatch, page, kind, name):
    from rnnmem.site.builders import memory_measured

    monkeypatch.setattr(memory_measured, "_RUNS", {})  # train the lab's runs again, not read them from memory
    (directive, item) = next((d, i) for d, i in book_items.values() if (d.page, d.kind, d.name) == (page, kind, name))
    content, values, wide = build_content(directive)
    assert content == item.content, f"{directive.where}: rendered again, {kind} {name} differs from the cache"
    assert wide == item.wide, f"{directive.where}: rendered again, {kind} {name}'s desktop rendition differs"
    assert json.loads(json.dumps(values, sort_keys=True)) == item.values, f"{directive.where}: its values differ"

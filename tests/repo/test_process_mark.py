"""A test that starts a new interpreter carries the mark `process` (which `make test-fast` leaves out).

``tests/conftest.py`` watches each test's set-up and body; here it watches a small test file of
its own, run by pytest in a new process.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"

TESTS = """
import subprocess, sys
import pytest

@pytest.fixture(scope="module")
def started():
    return subprocess.run([sys.executable, "-c", "print(1)"], capture_output=True, text=True).stdout

def test_starts_python_unmarked():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

@pytest.mark.process
def test_starts_python_marked():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_a_fixture_starts_python_unmarked(started):
    assert started == "1\\n"

def test_git_is_no_interpreter():
    subprocess.run(["git", "--version"], check=True, capture_output=True)

def test_starts_nothing():
    assert True
"""


@pytest.mark.process
def test_an_unmarked_test_that_starts_an_interpreter_fails_naming_it(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed (the unmarked program the file starts)")
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_started.py").write_text(TESTS, encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:xdist",
            "-p",
            "no:cacheprovider",
            "-rA",
            "-o",
            "markers=process: x",
            "-o",
            "timeout=120",
            "test_started.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    python = Path(sys.executable).name
    assert f"test_started.py::test_starts_python_unmarked starts {python} in a new process but is not marked" in out
    assert f"test_started.py::test_a_fixture_starts_python_unmarked starts {python} in a new process" in out
    assert "add @pytest.mark.process" in out
    for passed in ("test_starts_python_marked", "test_git_is_no_interpreter", "test_starts_nothing"):
        assert f"PASSED test_started.py::{passed}" in out, out
    # The body's start fails the test; the fixture's fails its set-up, an error.
    assert "1 failed, 3 passed, 1 error" in out, out

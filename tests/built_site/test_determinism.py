"""The same sources build the same site, byte for byte.

The site is built a second time, into a temporary directory, with the
environment the Makefile exports (SOURCE_DATE_EPOCH from the last commit,
PYTHONHASHSEED=0) but with an empty cache of its own
(RNNMEM_CACHE_DIR): every figure and table is drawn again, so a file that
comes out differently from the same inputs cannot hide behind a warm cache.
Every file is then compared with ./site, and every difference is listed.
"""

from __future__ import annotations

import filecmp
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Files allowed to differ between two builds, each only in the way named, and why.
# An entry is a (glob over paths relative to site/, regex of the only bytes that may
# differ) pair: both builds are compared after replacing the matches, so any other
# difference in these files still fails.
ALLOWED_DIFFERENCES: list[tuple[str, bytes]] = [
    # None today. Notebook pages once carried random cell ids (nbformat draws them
    # with uuid4 when jupytext reads a notebook); the site hook renumbers them in
    # order (rnnmem.site.book.clean_notebook_html), so they no longer differ.
]


def source_date_epoch() -> str:
    """As the Makefile exports it: the environment's, else the last commit's time."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return os.environ["SOURCE_DATE_EPOCH"]
    result = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=ROOT, capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 and result.stdout.strip() else "0"


def files_under(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def same_allowing(rel: str, a: Path, b: Path) -> bool:
    """Whether a and b differ only in a way ALLOWED_DIFFERENCES names for rel."""
    for pattern, volatile in ALLOWED_DIFFERENCES:
        if Path(rel).match(pattern):
            mask = re.compile(volatile)
            return mask.sub(b"@", a.read_bytes()) == mask.sub(b"@", b.read_bytes())
    return False


def test_second_build_is_byte_identical(site_dir, tmp_path):
    rebuilt, cache = tmp_path / "site", tmp_path / "cache"
    env = dict(
        os.environ,
        SOURCE_DATE_EPOCH=source_date_epoch(),
        PYTHONHASHSEED="0",
        NO_MKDOCS_2_WARNING="1",
        # Empty caches of its own (figures and tables, and executed notebooks where the
        # hook keys mkdocs-jupyter's cache there too): nothing is reused from ./.cache.
        RNNMEM_CACHE_DIR=str(cache),
    )
    # From the repository root, like `make build`: mkdocstrings prints "Source code in
    # src/rnnmem/..." relative to the working directory.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--clean",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(rebuilt),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, f"the second build failed:\n{result.stderr[-4000:]}"
    assert (cache / "rnnmem-site").is_dir(), f"the second build did not render into its own cache {cache}"

    first, second = files_under(site_dir), files_under(rebuilt)
    problems = [f"only in ./site: {rel}" for rel in sorted(first - second)]
    problems += [f"only in the second build: {rel}" for rel in sorted(second - first)]
    for rel in sorted(first & second):
        a, b = site_dir / rel, rebuilt / rel
        if not filecmp.cmp(a, b, shallow=False) and not same_allowing(rel, a, b):
            problems.append(f"differs: {rel}")
    assert not problems, (
        f"two builds of the same sources differ (SOURCE_DATE_EPOCH={env['SOURCE_DATE_EPOCH']}). If the sources "
        "changed since ./site was built, run `make build` first; a difference that remains comes from the build "
        "itself, or from output that ./.cache holds and an empty cache does not reproduce:\n" + "\n".join(problems)
    )

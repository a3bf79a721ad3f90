"""Benchmark: what the lab's experiments add to a cold build, against the book before them, in one run.

    python tests/benchmarks/bench_lab_cost.py [--baseline REV] [--pages PAGE ...] [--cap SECONDS]

The lab at full power (20 seeds in every cell, a fine lag grid at two budgets,
the controls, the clipping experiment, a language model trained until it reads
the cue) must add at most ``--cap`` seconds (default 240) to a cold build of
the site on the book's two-core machine. This script measures it: it renders
every figure and table of the book with an empty cache
(``python -m rnnmem.site build --timings``) twice, one after the other on the
same machine:

* the book at ``--baseline`` (default :data:`BASELINE`, the last commit before
  the lab's full design, when its cells had three seeds), taken with
  ``git archive`` into a temporary folder and run with its own ``src/``;
* the book as it is in this working tree.

It prints the items of the lab's pages (``--pages``, default
:data:`PAGES`) slowest first, each with its cold render time; each page's
total in both books; and what the pages add: their total now minus their total
then, beside the cap. A page the baseline does not have counts 0 there (the
lab's controls had not yet been split from "Memory, measured by training").
The whole build's total is printed for both. Run it by hand on a quiet
machine: it is not a test, and it takes about as long as two cold builds.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

BASELINE = "c940156"
"""The last commit before the lab at full power: three seeds a cell, a language model trained 200 steps."""

PAGES = ("memory-measured", "lab-controls", "words-in-context")
"""The pages of the lab's design: the recall sweep and its readings, the controls and clipping, words in context."""

LINE = re.compile(
    r"^\s*(?P<seconds>\d+\.\d+)\s+(?P<status>hit|miss)\s+docs/(?P<page>\S+?)\.md:(?P<line>\d+)\s+(?P<what>.*)$"
)


def cold_build(src: Path, cwd: Path) -> tuple[list[dict], float]:
    """Every item's cold render time (``python -m rnnmem.site build --timings``, an empty cache) and the wall time."""
    with tempfile.TemporaryDirectory(prefix="bench-lab-cost-") as tmp:
        env = dict(os.environ, PYTHONPATH=str(src), NO_MKDOCS_2_WARNING="1")
        start = time.perf_counter()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "rnnmem.site",
                "build",
                "--timings",
                "--cache",
                f"{tmp}/cache",
                "--out",
                f"{tmp}/out",
            ],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"the cold build in {cwd} failed:\n{proc.stderr[-4000:]}")
    items = []
    for line in proc.stdout.splitlines():
        m = LINE.match(line)
        if m:
            items.append(
                {
                    "seconds": float(m["seconds"]),
                    "status": m["status"],
                    "page": m["page"].removeprefix("chapters/"),
                    "where": f"{m['page']}.md:{m['line']}",
                    "what": m["what"],
                }
            )
    if not items:
        sys.exit(f"the cold build in {cwd} printed no timings:\n{proc.stdout[-2000:]}")
    return items, wall


def baseline_tree(ref: str, into: Path) -> Path:
    """The repository at ``ref`` (its tracked files), written into ``into``."""
    try:
        archive = subprocess.run(["git", "archive", ref], cwd=ROOT, check=True, capture_output=True).stdout
    except subprocess.CalledProcessError as err:
        sys.exit(f"--baseline: git cannot read commit {ref!r}: {err.stderr.decode().strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def by_page(items: list[dict]) -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for item in items:
        totals[item["page"]] += item["seconds"]
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE, help=f"the commit to compare with (default {BASELINE})")
    parser.add_argument(
        "--pages",
        nargs="+",
        default=list(PAGES),
        help=f"the lab's pages, docs/chapters/ names (default: {' '.join(PAGES)})",
    )
    parser.add_argument("--cap", type=float, default=240.0, help="seconds the pages may add (default 240)")
    args = parser.parse_args(argv)
    if not args.cap > 0:
        parser.error(f"--cap must be a number of seconds > 0, got {args.cap}")
    for page in args.pages:
        if not (ROOT / "docs" / "chapters" / f"{page}.md").is_file():
            parser.error(f"--pages: {page!r} is not a chapter of docs/chapters/ (a file name without .md)")

    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-lab-baseline-") as tmp:
        old_root = baseline_tree(args.baseline, Path(tmp))
        old_items, old_wall = cold_build(old_root / "src", old_root)
    new_items, new_wall = cold_build(ROOT / "src", ROOT)

    old_pages, new_pages = by_page(old_items), by_page(new_items)
    print(f"cold builds, one after the other; load average before them {load:.2f} (cores: {os.cpu_count()})")
    print("the lab's items now, slowest first (seconds of a cold render):")
    for item in sorted((i for i in new_items if i["page"] in args.pages), key=lambda i: -i["seconds"]):
        print(f"  {item['seconds']:8.1f}  {item['where']} {item['what']}")
    print(f"{'page':24s} {args.baseline:>10s} {'now':>10s} {'added':>10s}")
    added = 0.0
    for page in args.pages:
        then, now = old_pages.get(page, 0.0), new_pages.get(page, 0.0)
        added += now - then
        print(f"{page:24s} {then:10.1f} {now:10.1f} {now - then:10.1f}")
    then_total = sum(old_pages.get(p, 0.0) for p in args.pages)
    now_total = sum(new_pages.get(p, 0.0) for p in args.pages)
    print(f"{'the lab pages':24s} {then_total:10.1f} {now_total:10.1f} {added:10.1f}")
    print(
        f"every item of the book: {sum(old_pages.values()):.1f} s at {args.baseline} ({len(old_items)} items, "
        f"{old_wall:.1f} s wall), {sum(new_pages.values()):.1f} s now ({len(new_items)} items, {new_wall:.1f} s wall)"
    )
    verdict = "within" if added <= args.cap else "over"
    print(f"the lab's pages add {added:.1f} s to a cold build: {verdict} the cap of {args.cap:g} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

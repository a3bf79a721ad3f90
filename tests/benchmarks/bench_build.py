"""Benchmark the site build three ways in one run: cold, warm with no change, and without the plugin.

    python tests/benchmarks/bench_build.py [--repeats N]

* cold: an empty render cache (figures, tables and executed notebooks);
* warm: the same sources again, every figure and table read from the cache;
* no plugin: the same site without the rnnmem plugin (``rnnmem.site.plugin``), so
  directives stay HTML comments and nothing is rendered or read.

Warm and no-plugin builds alternate, so both see the same machine load, and
the script prints each median and their ratio. The target is a warm build
within 1.2x of the build without the plugin. Run it by hand: it is not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rnnmem.site import config as config_file

ROOT = Path(__file__).resolve().parents[2]


def build(config: Path, cache: Path, out: Path) -> float:
    env = dict(os.environ, RNNMEM_CACHE_DIR=str(cache), NO_MKDOCS_2_WARNING="1")
    env.setdefault("SOURCE_DATE_EPOCH", "0")
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(config), "-d", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"build with {config.name} failed:\n{proc.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="warm and no-plugin builds each (default 5)")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")

    config = ROOT / "mkdocs.yml"
    nohook = ROOT / ".bench-nohook.yml"
    # The book's plugins but rnnmem (a list in the child replaces the parent's list).
    plugins = [p for p in config_file.read(config)["plugins"] if p != "rnnmem"]
    nohook.write_text("INHERIT: mkdocs.yml\nstrict: false\nplugins: " + json.dumps(plugins) + "\n")
    try:
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            cold = build(config, tmp / "cache", tmp / "site")
            build(nohook, tmp / "cache-nohook", tmp / "site-nohook")  # warm its notebook cache too
            warm, bare = [], []
            for _ in range(args.repeats):
                warm.append(build(config, tmp / "cache", tmp / "site"))
                bare.append(build(nohook, tmp / "cache-nohook", tmp / "site-nohook"))
    finally:
        nohook.unlink(missing_ok=True)

    w, b = statistics.median(warm), statistics.median(bare)
    print(f"cold build (empty cache):      {cold:6.2f} s")
    print(f"warm build (no change), median {w:6.2f} s   runs: {', '.join(f'{x:.2f}' for x in warm)}")
    print(f"without the plugin, median       {b:6.2f} s   runs: {', '.join(f'{x:.2f}' for x in bare)}")
    print(f"warm / without hook:           {w / b:6.2f}x   (target: at most 1.20x)")


if __name__ == "__main__":
    main()

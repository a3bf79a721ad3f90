"""Benchmark the serve loop: time from saving a file to the served page showing the change.

    python tests/benchmarks/bench_reload.py [--port 8101] [--repeats 3] [--root DIR] [--full]

Starts ``mkdocs serve`` as ``make serve`` does (``--dirty``: only the pages
that changed are rebuilt; ``--full`` rebuilds the whole site on every change,
as ``make serve`` did before) on a loopback port, waits for the first build,
then, ``--repeats`` times each:

* a prose edit: a sentence appended to a paragraph of the horizon chapter;
  timed until the served page contains it;
* a builder edit: a comment added to the module of the ``decay_curves``
  figure builder (its code changes, so its items' cache keys change); timed
  until the served page names the figure's new file.

Each file is restored after its edit (and the restore's rebuild waited for).
The goals are 2 s for a prose edit and 3 s for a builder edit on the
project's machine. Run it by hand: it is not a test.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = "docs/chapters/horizon.md"
BUILDER = "src/rnnmem/site/builders/horizon.py"
FIGURE = re.compile(r"decay_curves-[0-9a-f]{16}\.svg")


class Server:
    def __init__(self, root: Path, port: int, full: bool) -> None:
        self.root, self.port = root, port
        cmd = [sys.executable, "-m", "mkdocs", "serve", "--dev-addr", f"127.0.0.1:{port}"]
        if not full:
            cmd.insert(4, "--dirty")
        env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
        self.proc = subprocess.Popen(
            cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.log: list[str] = []
        stderr = self.proc.stderr
        assert stderr is not None  # a pipe
        threading.Thread(target=lambda: self.log.extend(stderr), daemon=True).start()
        site_url = re.search(r"^site_url:\s*\S+?://[^/]+(/\S*)$", (root / "mkdocs.yml").read_text(), re.MULTILINE)
        self.base = f"http://127.0.0.1:{port}{site_url.group(1) if site_url else '/'}"

    def wait_started(self, timeout: float = 600) -> None:
        end = time.monotonic() + timeout
        while not any("Serving on" in line for line in self.log):
            if self.proc.poll() is not None or time.monotonic() > end:
                raise SystemExit("mkdocs serve did not start:\n" + "".join(self.log[-30:]))
            time.sleep(0.2)

    def page(self, path: str) -> str:
        try:
            with urllib.request.urlopen(self.base + path, timeout=30) as r:
                return r.read().decode()
        except OSError:
            return ""

    def until(self, path: str, check, timeout: float = 300) -> float:
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if check(self.page(path)):
                return time.monotonic() - start
            time.sleep(0.05)
        raise SystemExit(f"timed out waiting for {path}:\n" + "".join(self.log[-30:]))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def edit(path: Path, new: str) -> float:
    """Write the file and return the time of the write."""
    path.write_text(new, encoding="utf-8")
    return time.monotonic()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=8101)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--root", type=Path, default=ROOT, help="the repository to serve (default: this one)")
    p.add_argument("--full", action="store_true", help="serve without --dirty (every change rebuilds the site)")
    args = p.parse_args(argv)

    chapter, builder = args.root / CHAPTER, args.root / BUILDER
    chapter_text, builder_text = chapter.read_text(encoding="utf-8"), builder.read_text(encoding="utf-8")
    page = "chapters/horizon/"
    server = Server(args.root, args.port, args.full)
    prose, code = [], []
    try:
        t0 = time.monotonic()
        server.wait_started()
        print(f"first build and start: {time.monotonic() - t0:.1f} s")
        for i in range(args.repeats):
            marker = f"Reload marker {time.time_ns()}."
            paragraph_end = chapter_text.index("\n\n", chapter_text.index("\n## ")) if "\n## " in chapter_text else 0
            written = edit(chapter, chapter_text[:paragraph_end] + " " + marker + chapter_text[paragraph_end:])
            server.until(page, lambda html, marker=marker: marker in html)
            prose.append(time.monotonic() - written)
            edit(chapter, chapter_text)
            server.until(page, lambda html, marker=marker: marker not in html)

            before = set(FIGURE.findall(server.page(page)))
            written = edit(builder, builder_text + f"\n# reload marker {i} {time.time_ns()}\n")
            server.until(page, lambda html, before=before: (found := set(FIGURE.findall(html))) and found != before)
            code.append(time.monotonic() - written)
            edit(builder, builder_text)
            server.until(page, lambda html, before=before: set(FIGURE.findall(html)) == before)
            print(f"round {i + 1}: prose {prose[-1]:.2f} s, builder {code[-1]:.2f} s")
    finally:
        chapter.write_text(chapter_text, encoding="utf-8")
        builder.write_text(builder_text, encoding="utf-8")
        server.stop()
    mode = "full rebuild" if args.full else "--dirty"
    print(
        f"edit to reload ({mode}, {args.repeats} rounds, median): prose {statistics.median(prose):.2f} s "
        f"(goal 2 s), builder {statistics.median(code):.2f} s (goal 3 s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

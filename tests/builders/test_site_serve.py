"""`mkdocs serve` tells the truth: no false stale-notebook warning, errors on the page and in the terminal."""

from __future__ import annotations

import os
import pty
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from test_site_mkdocs import GOOD, project

#: `mkdocs serve` of a small book: `make test` runs these, `make test-fast` leaves them out.
pytestmark = pytest.mark.build

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    """``mkdocs serve --dirty`` on a free port; ``terminal``: its standard error on a pseudo-terminal (a person's)."""

    def __init__(self, path: Path, terminal: bool = False):
        self.port = free_port()
        self.terminal = pty.openpty() if terminal else None
        env = dict(os.environ, RNNMEM_CACHE_DIR=str(path / ".cache"), NO_MKDOCS_2_WARNING="1")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mkdocs",
                "serve",
                "--dirty",
                "-f",
                str(path / "mkdocs.yml"),
                "-a",
                f"127.0.0.1:{self.port}",
            ],
            cwd=path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE if self.terminal is None else self.terminal[1],
            text=True,
        )
        self.log: list[str] = []
        #: Everything the terminal showed (``terminal`` only), carriage returns and all.
        self.shown = ""
        threading.Thread(target=self._read if self.terminal is None else self._read_terminal, daemon=True).start()

    def _read(self):
        assert self.proc.stderr is not None  # started with stderr=PIPE
        for line in self.proc.stderr:
            self.log.append(line)

    def _read_terminal(self):
        assert self.terminal is not None
        os.close(self.terminal[1])  # the server holds the terminal side
        while True:
            try:
                chunk = os.read(self.terminal[0], 4096)
            except OSError:  # the server has exited
                return
            if not chunk:
                return
            self.shown += chunk.decode(errors="replace")
            self.log = self.shown.splitlines(keepends=True)

    def wait_log(self, text: str, after: int = 0, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if any(text in line for line in self.log[after:]):
                return
            assert self.proc.poll() is None, "".join(self.log)
            time.sleep(0.1)
        raise AssertionError(f"{text!r} not logged:\n" + "".join(self.log))

    def get(self, path: str) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/r/{path}", timeout=10) as r:
            return r.read().decode()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        if self.terminal is not None:
            os.close(self.terminal[0])


def test_serve_warns_of_nothing_stale_and_shows_errors_on_the_page(tmp_path):
    p = project(tmp_path, GOOD)
    server = Serve(p)
    try:
        server.wait_log("Serving on")
        # MkDocs' own notice of a dirty build aside, the first build warns of nothing (no notebook is stale:
        # the build makes them).
        warnings = [line for line in server.log if "WARNING" in line and "'dirty' build" not in line]
        assert not warnings, "".join(server.log)
        deadline = time.monotonic() + 60  # the cache is cold: the items are rendered once the server runs
        while '<figure class="rnnmem-figure">' not in server.get("chapters/c/") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert '<figure class="rnnmem-figure">' in server.get("chapters/c/")
        # A failing directive while serving: logged in the terminal, shown on the page, the rest still built.
        mark = len(server.log)
        page = p / "docs" / "chapters" / "c.md"
        page.write_text(GOOD.replace("factors=[0.5] steps=20", "factors=[0.5, 7] steps=20"))
        server.wait_log("Building documentation", mark)
        server.wait_log("factors[1] must be a gate value", after=mark)
        deadline = time.monotonic() + 30
        while "Build error" not in (html := server.get("chapters/c/")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert "Build error" in html and "docs/chapters/c.md:5" in html and "factors[1] must be a gate value" in html
        assert "<table>" in html, "the page's other items are still there"
        # Fixed: the figure is back.
        page.write_text(GOOD)
        deadline = time.monotonic() + 30
        while "Build error" in (html := server.get("chapters/c/")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert '<figure class="rnnmem-figure">' in html
    finally:
        server.stop()


def test_serve_on_a_terminal_shows_what_it_renders_between_whole_log_lines(tmp_path):
    p = project(tmp_path, GOOD)
    server = Serve(p, terminal=True)
    try:
        server.wait_log("Serving on", timeout=120)
        # The cache is cold: the server starts at once, the page says its items are being rendered,
        # the bar names them as they are, then every page is rebuilt and the figure is there.
        assert "Rendering this page's figures and tables" in server.get("chapters/c/")
        assert any("2 figures/tables are not in the cache" in line for line in server.log), server.shown
        server.wait_log("rnnmem 2/2 |", timeout=120)
        deadline = time.monotonic() + 60
        while '<figure class="rnnmem-figure">' not in server.get("chapters/c/") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert '<figure class="rnnmem-figure">' in server.get("chapters/c/")
        first = server.shown
        assert "2 left: docs/chapters/c.md:5 figure decay_curves" in first, first
        assert "1 left: docs/chapters/c.md:7 table horizon_table" in first, first
        # An edit with one new item: a bar again, naming it; the log lines stay whole, each on a line of its own.
        page = p / "docs" / "chapters" / "c.md"
        page.write_text(GOOD.replace("factors=[0.5] steps=20", "factors=[0.5] steps=30"))
        mark = len(server.log)
        server.wait_log("1 figures/tables rendered, 1 from the cache", after=mark, timeout=120)
        again = server.shown[len(first) :]
        assert "1 left: docs/chapters/c.md:5 figure decay_curves" in again and "rnnmem 1/1 |" in again, again
        # What each terminal line ends up showing: the text after its last carriage return, without colours.
        plain = re.sub(r"\x1b\[[0-9;]*m", "", server.shown).replace("\r\n", "\n")
        lines = [line.split("\r")[-1].strip() for line in plain.split("\n")]
        logged = [line for line in lines if re.match(r"(INFO|WARNING|ERROR) +- ", line)]
        assert any("Building documentation" in line for line in logged), lines
        assert any(line.endswith("rnnmem: 1 figures/tables rendered, 1 from the cache") for line in logged), lines
        assert not any("rnnmem " in line and "|" in line for line in logged), "a bar inside a log line"
    finally:
        server.stop()
    # On a pipe (a log, CI): no bar.
    piped = Serve(project(tmp_path / "piped", GOOD))
    try:
        piped.wait_log("Serving on", timeout=120)
        assert not any(" left: docs/" in line for line in piped.log), "".join(piped.log)
    finally:
        piped.stop()


def test_a_busy_port_gives_one_line_naming_PORT_and_exit_2():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "rnnmem.site", "port-free", "127.0.0.1", str(port)], capture_output=True, text=True
        )
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"port {port} is in use: try make serve PORT=")
    assert len(proc.stderr.strip().splitlines()) == 1
    free = subprocess.run([sys.executable, "-m", "rnnmem.site", "port-free", "127.0.0.1", str(free_port())])
    assert free.returncode == 0
    # make serve asks before it starts MkDocs.
    recipe = (ROOT / "Makefile").read_text().split("\nserve:", 1)[1].split("\n\n", 1)[0]
    assert recipe.index("port-free $(HOST) $(PORT)") < recipe.index("$(MKDOCS) serve")

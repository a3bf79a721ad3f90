"""`mkdocs serve` tells the truth: no false stale-notebook warning, errors on the page and in the terminal."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from test_site_mkdocs import GOOD, project

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    def __init__(self, path: Path):
        self.port = free_port()
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
            stderr=subprocess.PIPE,
            text=True,
        )
        self.log: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        assert self.proc.stderr is not None  # started with stderr=PIPE
        for line in self.proc.stderr:
            self.log.append(line)

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


def test_serve_warns_of_nothing_stale_and_shows_errors_on_the_page(tmp_path):
    p = project(tmp_path, GOOD)
    server = Serve(p)
    try:
        server.wait_log("Serving on")
        # MkDocs' own notice of a dirty build aside, the first build warns of nothing (no notebook is stale:
        # the build makes them).
        warnings = [line for line in server.log if "WARNING" in line and "'dirty' build" not in line]
        assert not warnings, "".join(server.log)
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

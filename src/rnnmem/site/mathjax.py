"""Math typeset when the site is built, so no reader's browser runs MathJax.

Every formula of a page (the ``arithmatex`` spans and blocks of the chapters,
the ``$...$`` and ``$$...$$`` of the notebooks' Markdown cells) is sent to one
long-lived Node process (``mathjax_server.js``, MathJax's own ``mathjax-full``
package from the npm pins) and replaced by its SVG, which keeps the MathML in
``<mjx-assistive-mml>`` for screen readers. A formula draws its glyphs with
``<use>`` from the page's glyph cache, a hidden ``<svg>`` at the start of the page
holding each glyph's outline once (MathJax's global font cache): no math font
is downloaded, and a formula is laid out as one box, not as dozens of CSS boxes.
One small stylesheet for the whole site, ``assets/mathjax/svg.css``, holds
MathJax's rules for its containers.

The MkDocs plugin (:mod:`rnnmem.site.plugin`) owns one :class:`Typesetter`, calls
:func:`typeset_page` from ``on_page_content`` (before the search plugin reads the
page, so the index holds the formulas' text, not TeX) and :func:`write_assets`
from ``on_post_build``. A TeX error fails the build naming the page and the
formula; so does a MathJax process that does not answer within the
typesetter's ``timeout`` (it is stopped, and started again for the next page).
"""

from __future__ import annotations

import atexit
import html
import json
import os
import queue
import re
import subprocess
import threading
import time
from pathlib import Path

__all__ = [
    "GLYPH_CACHE_ID",
    "MathError",
    "Typesetter",
    "find_math",
    "typeset_page",
    "write_assets",
]

HERE = Path(__file__).resolve().parent
SERVER = HERE / "mathjax_server.js"
STYLESHEET = "assets/mathjax/svg.css"
#: The id of a page's glyph cache (MathJax's ``SVG.FONTCACHEID``).
GLYPH_CACHE_ID = "MJX-SVG-global-cache"

# pymdownx.arithmatex (generic mode) wraps inline math in a span and display math in a div.
_ARITHMATEX = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.S)
_MARKDOWN_CELL = re.compile(r'<div class="[^"]*\bjp-RenderedMarkdown\b[^"]*"[^>]*>')
_TAG = re.compile(r"<(/?)([a-zA-Z][\w-]*)[^>]*>")
# TeX in notebook Markdown text, as MathJax's own finder reads it (display first).
_NOTEBOOK_TEX = re.compile(
    r"\$\$(?P<d1>.+?)\$\$|\\\[(?P<d2>.+?)\\\]|\\\((?P<i1>.+?)\\\)|(?<![\\$])\$(?P<i2>(?:\\.|[^$\\])+?)\$", re.S
)


class MathError(ValueError):
    """A formula MathJax cannot typeset, named with its page."""


def find_math(page_html: str) -> list[tuple[int, int, str, bool]]:
    """Every formula of a page's HTML as ``(start, end, tex, display)``, in order.

    ``start:end`` is the text the typeset formula replaces: an arithmatex element's
    delimited TeX, or a delimited formula in a notebook Markdown cell (outside code).

    >>> find_math('<p>A gate <span class="arithmatex">\\\\(f &lt; 1\\\\)</span>.</p>')
    [(35, 47, 'f < 1', False)]
    """
    found = []
    for m in _ARITHMATEX.finditer(page_html):
        raw = m.group(2).strip()
        display = m.group(1) == "div"
        tex = html.unescape(raw)
        for left, right in (("\\(", "\\)"), ("\\[", "\\]"), ("$$", "$$"), ("$", "$")):
            if tex.startswith(left) and tex.endswith(right) and len(tex) >= len(left) + len(right):
                tex = tex[len(left) : len(tex) - len(right)]
                break
        found.append((m.start(2), m.end(2), tex.strip(), display))
    for start, end in _markdown_cells(page_html):
        found += _notebook_math(page_html, start, end)
    return sorted(found)


def _markdown_cells(page_html: str) -> list[tuple[int, int]]:
    """Spans of the inner HTML of the notebook Markdown cells."""
    cells = []
    for m in _MARKDOWN_CELL.finditer(page_html):
        depth = 1
        for tag in _TAG.finditer(page_html, m.end()):
            if tag.group(2).lower() != "div":
                continue
            depth += -1 if tag.group(1) else 1
            if depth == 0:
                cells.append((m.end(), tag.start()))
                break
        else:
            cells.append((m.end(), len(page_html)))
    return cells


def _notebook_math(page_html: str, start: int, end: int) -> list[tuple[int, int, str, bool]]:
    found = []
    code_depth = 0
    pos = start
    for tag in list(_TAG.finditer(page_html, start, end)) + [None]:
        stop = tag.start() if tag else end
        if code_depth == 0 and stop > pos:
            for m in _NOTEBOOK_TEX.finditer(page_html, pos, stop):
                name = next(k for k, v in m.groupdict().items() if v is not None)
                found.append((m.start(), m.end(), html.unescape(m.group(name)).strip(), name.startswith("d")))
        if tag is None:
            break
        if tag.group(2).lower() in ("code", "pre", "script", "style"):
            code_depth += -1 if tag.group(1) else 1
        pos = tag.end()
    return found


class Typesetter:
    """One Node process running MathJax, started on first use and kept for the whole build.

    ``timeout``: the seconds one request (one page's formulas) may take; a
    process that does not answer in time is stopped and :class:`MathError`
    raised, so a hung Node never hangs the build. ``server``: the script Node
    runs (``mathjax_server.js``; the tests give another).
    """

    def __init__(self, node_modules: Path, *, timeout: float = 120.0, server: Path = SERVER):
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.node_modules = Path(node_modules)
        self.timeout = float(timeout)
        self.server = Path(server)
        self._process: subprocess.Popen | None = None
        self._lines: queue.Queue[str] = queue.Queue()
        self.formulas = 0  # typeset since the last reset, and the seconds it took
        self.seconds = 0.0

    def _start(self) -> subprocess.Popen:
        if not (self.node_modules / "mathjax-full" / "js" / "mathjax.js").is_file():
            raise MathError(
                f"mathjax-full not found in {self.node_modules}: run `make setup` "
                "(npm ci installs it from package-lock.json)"
            )
        env = dict(os.environ, NODE_PATH=str(self.node_modules))
        process = subprocess.Popen(
            ["node", str(self.server)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            encoding="utf-8",
        )
        lines: queue.Queue[str] = queue.Queue()

        def read() -> None:  # answers arrive on this thread; a request waits for one at most `timeout` seconds
            assert process.stdout is not None
            for line in process.stdout:
                lines.put(line)
            lines.put("")  # the process ended

        threading.Thread(target=read, name="mathjax-reader", daemon=True).start()
        self._lines = lines
        atexit.register(self.close)
        return process

    def _request(self, request: dict) -> dict:
        if self._process is None or self._process.poll() is not None:
            self._process = self._start()
        process = self._process
        assert process.stdin is not None
        try:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
        except BrokenPipeError:
            raise MathError(f"the MathJax process ({self.server.name}) stopped with status {process.wait()}") from None
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            self.close(kill=True)
            raise MathError(
                f"the MathJax process ({self.server.name}) did not answer within {self.timeout:g} s; it was "
                "stopped (a formula that never finishes, or a hung Node: the math_timeout option of the "
                "rnnmem plugin sets the limit)"
            ) from None
        if not line:
            raise MathError(f"the MathJax process ({self.server.name}) stopped with status {process.wait()}")
        return json.loads(line)

    def typeset(self, formulas: list[tuple[str, bool]]) -> tuple[list[str], str]:
        """The SVG of each ``(tex, display)`` of one page, and the page's glyph cache.

        The glyph cache is a hidden ``<svg id="MJX-SVG-global-cache">`` holding the
        outline of every glyph the formulas draw; it must stand in the same page,
        before them. Raises :class:`MathError` naming the first bad formula.
        """
        if not formulas:
            return [], ""
        start = time.perf_counter()
        reply = self._request({"formulas": [[tex, display] for tex, display in formulas]})
        self.seconds += time.perf_counter() - start
        self.formulas += len(formulas)
        if "error" in reply:
            bad = formulas[reply["index"]][0] if "index" in reply else "?"
            raise MathError(f"{reply['error']} in the formula {bad!r}")
        return reply["html"], reply["glyphs"]

    def stylesheet(self) -> str:
        """MathJax's rules for its SVG containers (the same whatever was typeset)."""
        return self._request({"stylesheet": True})["css"]

    def reset(self) -> None:
        """Start counting again (one build's formulas and seconds)."""
        self.formulas, self.seconds = 0, 0.0

    def close(self, *, kill: bool = False) -> None:
        """Stop the process: close its input and wait (``kill``: at once, as for one that stopped answering)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        if not kill:
            assert process.stdin is not None
            try:
                process.stdin.close()
                process.wait(timeout=10)
                return
            except (OSError, subprocess.TimeoutExpired):
                pass
        process.kill()
        process.wait()


def typeset_page(page_html: str, typesetter: Typesetter, *, where: str = "page") -> str:
    """The page's HTML with every formula :func:`find_math` finds replaced by its SVG.

    A page with math starts with its glyph cache (hidden); a page without is returned as it is.
    """
    found = find_math(page_html)
    try:
        rendered, glyphs = typesetter.typeset([(tex, display) for _, _, tex, display in found])
    except MathError as exc:
        raise MathError(f"{where}: {exc}") from None
    pieces, pos = [glyphs], 0
    for (start, end, _, _), svg in zip(found, rendered):
        pieces += [page_html[pos:start], svg]
        pos = end
    pieces.append(page_html[pos:])
    return "".join(pieces)


def write_assets(site_dir: Path, typesetter: Typesetter) -> None:
    """Write MathJax's stylesheet for its SVG containers into the site."""
    path = Path(site_dir) / STYLESHEET
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(typesetter.stylesheet(), encoding="utf-8")

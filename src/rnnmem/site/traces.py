"""Tracebacks trimmed to the book's own code, for build errors that say where a builder failed.

A builder that raises deep inside numpy, or inside a core module it calls,
should not be reported as a bare ``KeyError: 'truncated'``. :func:`describe`
gives the exception and the frames of the traceback that lie inside the
``rnnmem`` package, without the frames of the site machinery that called the
builder (the way sphinx-gallery shows only the example script's frames):
the builder's own file and line, then the package code it called, innermost
last, each with its source line.

>>> try:
...     {}["truncated"]
... except KeyError as exc:
...     print(describe(exc).splitlines()[0])
KeyError: 'truncated'
"""

from __future__ import annotations

import linecache
import traceback
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent
ROOT = PACKAGE_DIR.parent.parent if PACKAGE_DIR.parent.name == "src" else PACKAGE_DIR.parent
SITE_DIR = PACKAGE_DIR / "site"
#: The site machinery: frames here are how a builder was called, not where it failed.
MACHINERY = {
    SITE_DIR / f"{m}.py"
    for m in ("registry", "render", "book", "directives", "markdown", "plugin", "__main__", "traces", "notebook")
}
MAX_FRAMES = 6


def _shown(path: str) -> str:
    p = Path(path)
    try:
        return p.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return path


def package_frames(exc: BaseException, also: str | None = None) -> list[traceback.FrameSummary]:
    """The frames of ``exc``'s traceback inside rnnmem (or in file ``also``), site machinery excluded."""
    frames = []
    extra = Path(also).resolve() if also else None
    for fs in traceback.extract_tb(exc.__traceback__):
        path = Path(fs.filename).resolve()
        if (path.is_relative_to(PACKAGE_DIR) and path not in MACHINERY) or path == extra:
            frames.append(fs)
    if isinstance(exc, SyntaxError) and exc.filename:
        frames.append(traceback.FrameSummary(exc.filename, exc.lineno or 0, "<module>", line=(exc.text or "").strip()))
    return frames


def describe(exc: BaseException, also: str | None = None) -> str:
    """``Type: message`` and, below it, where it happened in the package (file:line, function, source).

    ``also``: a file outside the package whose frames are shown too (a builder's).
    """
    head = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    frames = package_frames(exc, also)
    if len(frames) > MAX_FRAMES:
        # Keep the outermost (the builder) and the innermost ones, where it failed.
        frames = frames[:1] + frames[-(MAX_FRAMES - 1) :]
    lines = [head]
    for fs in frames:
        lines.append(f"  {_shown(fs.filename)}:{fs.lineno} in {fs.name}")
        source = fs.line or linecache.getline(fs.filename, fs.lineno or 0).strip()
        if source:
            lines.append(f"      {source}")
    return "\n".join(lines)

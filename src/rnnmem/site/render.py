"""Render a directive's figure or table, through a cache.

Each rendered item is stored under ``.cache/rnnmem-site/`` and keyed by

* the builder's own source text and the directive's arguments,
* the source of the whole ``rnnmem`` package (so a change to any code a
  builder calls renders it again),
* the numpy and matplotlib versions.

A rebuild with nothing changed reads every item from the cache and imports
neither matplotlib nor a builder's dependencies' heavy paths. The key is also
the item's file name, so the built site names each figure by its content's
recipe and never serves a stale one.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

from . import registry
from .directives import Directive

PACKAGE_DIR = Path(__file__).resolve().parent.parent
CACHE_VERSION = "1"


def default_cache_dir() -> Path:
    return Path(os.environ.get("RNNMEM_CACHE_DIR", ".cache")) / "rnnmem-site"


def package_digest(package_dir: Path = PACKAGE_DIR) -> str:
    """sha256 over every .py file of the rnnmem package (path and contents)."""
    h = hashlib.sha256()
    for path in sorted(package_dir.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        h.update(path.relative_to(package_dir).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def environment_key() -> str:
    """sha256 of what any computed output depends on: the package source and the numeric libraries."""
    parts = [package_digest(), _version("numpy"), _version("matplotlib")]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def _canonical(value: Any) -> Any:
    if isinstance(value, tuple):
        return {"__tuple__": [_canonical(v) for v in value]}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, float):
        return {"__float__": repr(value)}
    return value


@dataclass(frozen=True)
class Item:
    """A rendered figure or table: its content and where it came from."""

    kind: str
    name: str
    key: str
    content: bytes
    from_cache: bool

    @property
    def filename(self) -> str:
        ext = "svg" if self.kind == "figure" else "md"
        return f"{self.name}-{self.key[:16]}.{ext}"


def split_caption(directive: Directive) -> tuple[dict[str, Any], str | None]:
    args = dict(directive.args)
    caption = args.pop("caption", None)
    if caption is not None and (not isinstance(caption, str) or not caption.strip()):
        raise directive.error(f"caption must be a non-empty string, got {caption!r}")
    if directive.kind == "figure" and caption is None:
        raise directive.error('a figure needs caption="..." (it is also the alt text)')
    return args, caption


def cache_key(directive: Directive, digest: str) -> str:
    builder = registry.get(directive.kind, directive.name)
    args, _ = split_caption(directive)
    recipe = {
        "cache": CACHE_VERSION,
        "kind": directive.kind,
        "name": directive.name,
        "builder": builder.source,
        "args": _canonical(args),
        "package": digest,
        "numpy": _version("numpy"),
        "matplotlib": _version("matplotlib"),
    }
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()


def _check_arguments(directive: Directive, args: dict[str, Any]) -> None:
    builder = registry.get(directive.kind, directive.name)
    params = builder.parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    allowed = [n for n, p in params.items()
               if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        raise directive.error(
            f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} for {directive.kind} "
            f"{directive.name!r}; it takes: {', '.join(allowed + ['caption']) or 'caption only'}")
    missing = [n for n in allowed if params[n].default is inspect.Parameter.empty and n not in args]
    if missing:
        raise directive.error(f"{directive.kind} {directive.name!r} needs argument(s): {', '.join(missing)}")


def build_content(directive: Directive) -> bytes:
    """Run the builder now (no cache) and return the rendered bytes."""
    builder = registry.get(directive.kind, directive.name)
    args, _ = split_caption(directive)
    _check_arguments(directive, args)
    try:
        result = builder.func(**args)
    except Exception as exc:  # a builder that raises fails the build, with its location
        raise directive.error(f"the {directive.kind} builder {directive.name!r} raised "
                              f"{type(exc).__name__}: {exc}") from exc
    if directive.kind == "figure":
        from matplotlib.figure import Figure

        from .style import to_svg

        if not isinstance(result, Figure):
            raise directive.error(f"figure builder {directive.name!r} must return a matplotlib Figure, "
                                  f"got {type(result).__name__}")
        try:
            return to_svg(result)
        except Exception as exc:
            raise directive.error(f"saving the figure of {directive.name!r} as SVG failed: "
                                  f"{type(exc).__name__}: {exc}") from exc
    from .tables import Table

    if not isinstance(result, Table):
        raise directive.error(f"table builder {directive.name!r} must return a rnnmem.site.tables.Table, "
                              f"got {type(result).__name__}")
    return result.to_markdown().encode()


class Renderer:
    """Renders directives through the cache, counting what it really rendered."""

    def __init__(self, cache_dir: Path | None = None) -> None:
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self.digest = package_digest()
        self.rendered: list[str] = []
        self.cached: list[str] = []

    def _lookup(self, directive: Directive) -> tuple[str, Path]:
        try:
            key = cache_key(directive, self.digest)
        except KeyError as exc:
            raise directive.error(str(exc.args[0])) from None
        return key, self.cache_dir / directive.kind / f"{directive.name}-{key}"

    def render(self, directive: Directive) -> Item:
        key, path = self._lookup(directive)
        if path.is_file():
            self.cached.append(directive.where)
            return Item(directive.kind, directive.name, key, path.read_bytes(), True)
        content = build_content(directive)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(content)
        tmp.replace(path)
        self.rendered.append(directive.where)
        return Item(directive.kind, directive.name, key, content, False)

    def render_all(self, directives: Iterable[Directive], *, fresh_process: bool = False) -> list[Item]:
        """Render every directive. ``fresh_process`` renders the missing ones in a new interpreter.

        A long-lived process (``mkdocs serve``) keeps the package it imported at
        start; when the package on disk has changed since, the missing items
        are rendered by ``python -m rnnmem.site render`` so that the code that
        runs is the code the cache key names.
        """
        directives = list(directives)
        if fresh_process:
            missing = [d for d in directives if not self._lookup(d)[1].is_file()]
            if missing:
                _render_in_subprocess(self.cache_dir, missing)
        return [self.render(d) for d in directives]


def _render_in_subprocess(cache_dir: Path, directives: list[Directive]) -> None:
    payload = json.dumps([
        {"page": d.page, "line": d.line, "text": d.text} for d in directives
    ])
    proc = subprocess.run(
        [sys.executable, "-m", "rnnmem.site", "render-json", "--cache", str(cache_dir)],
        input=payload, text=True, capture_output=True,
    )
    if proc.returncode != 0:
        from .directives import DirectiveError

        raise DirectiveError(proc.stderr.strip() or f"rendering failed with exit status {proc.returncode}")

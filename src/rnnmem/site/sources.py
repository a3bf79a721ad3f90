"""Which source a computed output depends on, and whether it changed: module paths, imports, digests.

One place answers "which sources changed" for the whole site:

* :func:`module_path` finds the file of ``rnnmem.x.y``;
* :func:`imports_of` reads the ``rnnmem`` modules a module imports (parsed
  with :mod:`ast`, imports inside functions included), and
  :func:`dependencies` follows them transitively;
* :func:`sources_digest` hashes the source of a set of modules (a figure's
  cache key, :mod:`rnnmem.site.render`), :func:`package_digest` the whole
  package, and :func:`environment_key` the package with the numeric libraries
  (the key of the executed-notebook cache);
* :class:`Snapshot` remembers the source of each ``rnnmem`` module when this
  process loaded it, and names the ones changed on disk since
  (:meth:`Snapshot.stale`): a long-running ``mkdocs serve`` renders an item
  that depends on one in a fresh interpreter.

Nothing here imports a builder or the site machinery: the registry
(:mod:`rnnmem.site.registry`) and the renderer (:mod:`rnnmem.site.render`)
both build on this module, and on nothing of each other's but the registry.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import sys
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

__all__ = [
    "MACHINERY",
    "PACKAGE_DIR",
    "Snapshot",
    "dependencies",
    "environment_key",
    "file_digest",
    "imports_of",
    "module_path",
    "package_digest",
    "sources_digest",
    "version",
]

PACKAGE_DIR = Path(__file__).resolve().parent.parent
#: Site modules that read pages and run builders but compute no content: not part of any key.
MACHINERY = frozenset(
    f"rnnmem.site.{m}"
    for m in (
        "registry",
        "sources",
        "directives",
        "markdown",
        "render",
        "book",
        "kinds",
        "config",
        "plugin",
        "notebook",
        "griffe_doctests",
        "placeholders",
        "numbers",
        "suggest",
        "__main__",
    )
)


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes; "" for a file that cannot be read (deleted meanwhile)."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


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


def module_path(name: str, package_dir: Path = PACKAGE_DIR) -> Path | None:
    """The source file of ``rnnmem.x.y`` (a module, or a package's ``__init__.py``), or None."""
    parts = name.split(".")
    if parts[0] != package_dir.name:
        return None
    base = package_dir.joinpath(*parts[1:])
    if base.with_suffix(".py").is_file() and len(parts) > 1:
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


@functools.lru_cache(maxsize=1024)
def _imports_of_file(path: Path, mtime_ns: int, size: int, name: str, package_dir: Path) -> tuple[str, ...]:
    """Parsed once per file version (the path, mtime and size are the memo's key)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError:
        return ()
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for alias in node.names:
                if module_path(f"{mod}.{alias.name}", package_dir) is not None:
                    found.add(f"{mod}.{alias.name}")  # a submodule, not the package's __init__
                else:
                    found.add(mod)
    return tuple(sorted(m for m in found if m and module_path(m, package_dir) is not None and m != name))


def imports_of(name: str, package_dir: Path = PACKAGE_DIR) -> tuple[str, ...]:
    """The ``rnnmem`` modules that module ``name`` imports (anywhere in its source), read from disk.

    ``from rnnmem import memory`` and ``from .. import tables`` name the
    submodule; ``from rnnmem.memory import horizon`` names ``rnnmem.memory``.
    Parsed once per file version.
    """
    path = module_path(name, package_dir)
    if path is None:
        return ()
    st = path.stat()
    return _imports_of_file(path, st.st_mtime_ns, st.st_size, name, package_dir)


def dependencies(name: str, package_dir: Path = PACKAGE_DIR) -> list[str]:
    """Module ``name`` and the ``rnnmem`` modules it imports, transitively (site machinery excluded).

    A package imported by name (``from rnnmem import memory``) counts as its
    submodule, not as the package's ``__init__`` with everything it imports.
    """
    seen: set[str] = set()
    todo = [name]
    while todo:
        mod = todo.pop()
        if mod in seen or mod in MACHINERY:
            continue
        seen.add(mod)
        todo.extend(imports_of(mod, package_dir))
    return sorted(seen)


def sources_digest(modules: Iterable[str], package_dir: Path = PACKAGE_DIR) -> str:
    """sha256 over the source of each module (a package: every file in its folder, data included)."""
    h = hashlib.sha256()
    for mod in sorted(modules):
        path = module_path(mod, package_dir)
        if path is None:  # a builder module outside the package (tests): its own file
            path = Path(getattr(sys.modules.get(mod), "__file__", None) or os.devnull)
        files = [path]
        if path.name == "__init__.py" and mod != package_dir.name and ".site" not in mod:
            files = sorted(p for p in path.parent.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        for f in files:
            name = f.relative_to(package_dir).as_posix() if f.is_relative_to(package_dir) else mod
            h.update(name.encode() + b"\0" + (f.read_bytes() if f.is_file() else b"") + b"\0")
    return h.hexdigest()


@functools.cache
def version(dist: str) -> str:
    """The installed version of a distribution, or "absent"."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def environment_key() -> str:
    """sha256 of what any computed output depends on: the package source and the numeric libraries."""
    parts = [package_digest(), version("numpy"), version("matplotlib")]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


class Snapshot:
    """The source of each ``rnnmem`` module when this process first saw it loaded, to tell which changed since.

    >>> snap = Snapshot()
    >>> snap.take()
    >>> "rnnmem.site.sources" in snap.digests, snap.stale()
    (True, set())
    """

    def __init__(self, package_dir: Path = PACKAGE_DIR) -> None:
        self.package_dir = package_dir
        #: Module -> sha256 of its source when first seen loaded.
        self.digests: dict[str, str] = {}

    def take(self, exclude: Iterable[str] = ()) -> None:
        """Remember every loaded ``rnnmem`` module not seen before (``exclude``: modules tracked elsewhere)."""
        skip = set(exclude)
        prefix = self.package_dir.name
        for name in list(sys.modules):
            if (name == prefix or name.startswith(prefix + ".")) and name not in self.digests and name not in skip:
                path = module_path(name, self.package_dir)
                if path is not None:
                    self.digests[name] = file_digest(path)

    def stale(self, exclude: Iterable[str] = ()) -> set[str]:
        """Modules whose source on disk differs from the source this process loaded.

        Their code in this process is not the code on disk: an item that
        depends on one must be rendered in a fresh interpreter.
        """
        skip = set(exclude)
        self.take(skip)
        out = set()
        for name, digest in self.digests.items():
            if name in skip:
                continue
            path = module_path(name, self.package_dir)
            if path is not None and file_digest(path) != digest:
                out.add(name)
        return out

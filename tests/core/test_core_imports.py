"""The core package needs numpy only: importing it, and every core module, pulls in nothing heavier.

And the package's import graph, read from its source, has no cycle, and no core module imports the site.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("matplotlib", "mkdocs", "yaml", "torch", "jupytext", "nbformat", "material", "scipy")


@pytest.mark.process
def test_core_imports_numpy_only():
    code = (
        "import sys, pkgutil, importlib, rnnmem\n"
        "for m in pkgutil.iter_modules(rnnmem.__path__):\n"
        "    if m.name != 'site':\n"
        "        importlib.import_module('rnnmem.' + m.name)\n"
        f"heavy = {HEAVY!r}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & set(heavy)), 'numpy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "True"], f"a core module pulled in: {out.stdout.strip()}"


# -- the import graph, read from the source (imports inside functions count) ---------------------------
SRC = Path(__file__).resolve().parents[2] / "src"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted((SRC / "rnnmem").rglob("*.py")) if "__pycache__" not in p.parts}


def imported(name: str) -> set[str]:
    """The rnnmem modules ``name`` imports anywhere in its source (a package's name stands for its __init__)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            # `from pkg import sub` imports the submodule when there is one, else a name of pkg.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:  # `import rnnmem.site.x.y` where y is a name
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


GRAPH = {name: imported(name) for name in MODULES}


def test_the_import_graph_is_read_from_every_module():
    assert "rnnmem.site.render" in GRAPH["rnnmem.site.book"]
    assert "rnnmem.site.sources" in GRAPH["rnnmem.site.render"]
    assert "rnnmem.memory" in GRAPH["rnnmem.site.builders.horizon"]


def test_no_import_cycle_among_rnnmem_modules():
    """Each module's imports (lazy ones inside functions too) never lead back to it."""
    cycles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for other in sorted(GRAPH[name]):
            if state.get(other) == 1:
                cycles.append(path[path.index(other) :] + [other])
            elif other not in state:
                visit(other, path + [other])
        state[name] = 2

    for name in sorted(GRAPH):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_no_core_module_imports_the_site():
    core = [n for n in GRAPH if n != "rnnmem.site" and not n.startswith("rnnmem.site.")]
    assert "rnnmem.memory" in core
    bad = {n: sorted(m for m in GRAPH[n] if m == "rnnmem.site" or m.startswith("rnnmem.site.")) for n in core}
    assert not {n: m for n, m in bad.items() if m}, "core modules import rnnmem.site"


# -- builders only ask for runs and draw ---------------------------------------------------------------
BUILDERS = sorted(n for n in GRAPH if n.startswith("rnnmem.site.builders.") and n != "rnnmem.site.builders")
#: What starts processes or talks to a scheduler: the lab's engine (rnnmem.engine) does, a builder never does.
SCHEDULING = ("multiprocessing", "concurrent.futures", "distributed", "dask", "subprocess", "threading")


def _top_level_imports(name: str) -> set[str]:
    """Every module ``name`` imports by absolute name (any depth: inside functions too), as written."""
    path = MODULES[name]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module)
    return found


def test_the_rule_sees_the_builders_and_what_they_import():
    assert "rnnmem.site.builders.memory_measured" in BUILDERS and len(BUILDERS) >= 15
    assert "rnnmem.site.labruns" in GRAPH["rnnmem.site.builders.memory_measured"]
    assert "concurrent.futures" in _top_level_imports("rnnmem.engine")


@pytest.mark.parametrize("builder", BUILDERS)
def test_no_builder_imports_another_builder_or_starts_a_pool(builder):
    """ARCHITECTURE.md: builders only draw. A builder asks rnnmem.site.labruns for its runs, whose results
    come from rnnmem.engine; it imports no other builder, and nothing that starts a process or a scheduler."""
    others = sorted(m for m in GRAPH[builder] if m in BUILDERS and m != builder)
    assert not others, f"{builder} imports the builders {others}: shared code goes into the core or the site"
    pools = sorted(m for m in _top_level_imports(builder) if m.split(".")[0] in SCHEDULING or m in SCHEDULING)
    assert not pools, f"{builder} imports {pools}: runs are trained by rnnmem.engine, through rnnmem.site.labruns"

"""The core package needs numpy only: importing it, and every core module, pulls in nothing heavier."""

import subprocess
import sys

HEAVY = ("matplotlib", "mkdocs", "yaml", "torch", "jupytext", "nbformat", "material", "scipy")


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

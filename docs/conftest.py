"""Run every ```python block of every page with Sybil: one namespace per page, in order.

Blocks with ``>>>`` prompts are doctests (their printed output is checked);
other blocks are run as code. A page that hides a Python block from Sybil
(```py, ```python title=..., ...) fails tests/test_docs_fences.py.
"""

from doctest import ELLIPSIS, NORMALIZE_WHITESPACE

from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser


pytest_collect_file = Sybil(
    parsers=[PythonCodeBlockParser(doctest_optionflags=ELLIPSIS | NORMALIZE_WHITESPACE), SkipParser()],
    patterns=["*.md"],
).pytest()

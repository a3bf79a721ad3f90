"""Run every docstring example under src/ with Sybil (one namespace per module)."""

from doctest import ELLIPSIS, NORMALIZE_WHITESPACE

from sybil import Sybil
from sybil.parsers.rest import DocTestParser

pytest_collect_file = Sybil(
    parsers=[DocTestParser(optionflags=ELLIPSIS | NORMALIZE_WHITESPACE)],
    patterns=["*.py"],
    excludes=["conftest.py"],
).pytest()

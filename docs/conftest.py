"""Run every ```python block of every page with Sybil: one namespace per page, in order.

Blocks with ``>>>`` prompts are doctests (their printed output is checked);
other blocks are run as code. A page that hides a Python block from Sybil
(```py, ```python title=..., ...) fails the rule fences (rnnmem.site.check).

The blocks are found by the site's own Markdown lexer (rnnmem.site.markdown),
the one the build and the notebooks use, and each example is placed at its
true line and column in the page. (Sybil's Markdown parser dedents a block
inside an exercise answer and then counts its examples' positions in the
dedented text, so a failure there was reported lines away from the example.)

A recipe's PyTorch tab sits between ``<!-- skip: start if(torch_missing, reason=...) -->``
and ``<!-- skip: end -->``: every page's namespace starts with ``torch_missing``, true
where torch cannot be imported, so those blocks are skipped with that reason. Under CI
(``CI`` set and non-empty) it is always false, and a missing torch fails the block, as
it fails the PyTorch comparisons of ``tests/`` (``tests/conftest.py``, ``require_torch``).
"""

import importlib.util
import os
from collections.abc import Sequence
from doctest import ELLIPSIS, NORMALIZE_WHITESPACE

from sybil import Region, Sybil
from sybil.evaluators.doctest import DocTestEvaluator
from sybil.evaluators.python import PythonEvaluator
from sybil.parsers.abstract.doctest import DocTestStringParser
from sybil.parsers.markdown import SkipParser
from sybil.region import Lexeme

from rnnmem.site.markdown import lex


def _page_offset(offset: int, starts: list[int], removed: list[int], body: Sequence[str]) -> int:
    """The page offset of ``offset`` in a fence's body: ``starts[k]`` is where body line ``k`` starts in the
    body, ``removed[k]`` where it starts on the page less the indentation removed from it."""
    end = starts[-1] + len(body[-1]) + 1
    k = max(i for i, s in enumerate(starts) if s <= offset) if offset < end else len(starts) - 1
    return removed[k] + min(offset - starts[k], len(body[k]))


class PythonBlockParser:
    """Every ```python block the lexer finds: doctest examples, or one block of code, at their place."""

    def __init__(self, doctest_optionflags: int = 0) -> None:
        self.doctests = DocTestStringParser(DocTestEvaluator(doctest_optionflags))
        self.code = PythonEvaluator()

    def __call__(self, document):
        doc = lex(document.text)
        lines = document.text.splitlines(keepends=True)
        for fence in doc.fences:
            if fence.info != "python" or not fence.body:
                continue
            body = "\n".join(fence.body) + "\n"
            # Body offset -> page offset: each body line is its page line less the indentation removed.
            starts: list[int] = []
            removed: list[int] = []
            pos = 0
            for k, text in enumerate(fence.body):
                starts.append(pos)
                page_line = lines[fence.line + k].rstrip("\r\n")
                removed.append(doc.line_starts[fence.line + k] + len(page_line) - len(text))
                pos += len(text) + 1
            where = (starts, removed, fence.body)

            if body.lstrip().startswith(">>>"):
                for region in self.doctests(body, document.path):
                    region.start, region.end = _page_offset(region.start, *where), _page_offset(region.end, *where)
                    yield region
            else:
                end = _page_offset(len(body), *where)
                yield Region(fence.start + len(fence.indent), end, Lexeme(body, 0, 0), self.code)


def torch_missing() -> bool:
    """True where torch cannot be imported, outside CI; under CI always False (the block then fails)."""
    return not os.environ.get("CI") and importlib.util.find_spec("torch") is None


def _setup(namespace: dict) -> None:
    namespace["torch_missing"] = torch_missing()


pytest_collect_file = Sybil(
    parsers=[PythonBlockParser(doctest_optionflags=ELLIPSIS | NORMALIZE_WHITESPACE), SkipParser()],
    patterns=["*.md"],
    setup=_setup,
).pytest()

"""A chapter's code as a Jupyter notebook: one source of truth, the chapter.

The notebook holds, in order, every ```` ```python ```` block of the chapter
(doctest prompts and expected output removed, so each cell is the code a
reader would copy), each under the heading it sits beneath in the chapter. Its
first cell installs ``rnnmem`` from the book's repository when it is not
already importable, so the notebook also runs on a hosted service.

The notebooks live in ``docs/downloads/``; ``python -m rnnmem.site notebooks``
writes them, and the build fails (strict) when one no longer matches its
chapter, so the download and the Colab link never serve stale code.
"""

from __future__ import annotations

import doctest
import hashlib
import json
import re
from dataclasses import dataclass

from .markdown import lex



@dataclass(frozen=True)
class CodeBlock:
    line: int          # 1-based line of the opening fence
    heading: str       # the nearest heading above it
    source: str        # runnable code (prompts and outputs removed)


def python_blocks(markdown: str) -> list[CodeBlock]:
    r"""The chapter's ```` ```python ```` blocks, as runnable code, with their headings.

    The fences are those of :func:`rnnmem.site.markdown.lex`, the lexer the
    page, the directives and the tests read, so a cell ends where the block
    shown on the page ends.

    >>> [(b.heading, b.source) for b in python_blocks("# A\n\n````python\nx = 1\n`````\n\n```python\ny = 2\n```\n")]
    [('A', 'x = 1'), ('A', 'y = 2')]
    """
    doc = lex(markdown)
    blocks: list[CodeBlock] = []
    for fence in doc.fences:
        if fence.info != "python":
            continue
        above = [h.text for h in doc.headings if h.line < fence.line]
        blocks.append(CodeBlock(fence.line, above[-1] if above else "", _runnable("\n".join(fence.body))))
    return blocks


def _runnable(source: str) -> str:
    """Doctest text -> the code alone; plain code unchanged."""
    if ">>>" not in source:
        return source.strip("\n")
    examples = doctest.DocTestParser().get_examples(source)
    return "\n".join(ex.source.rstrip("\n") for ex in examples)


def install_source(repo_url: str) -> str:
    return (
        "# Install rnnmem from the book's repository, unless it is already importable.\n"
        "import importlib.util, subprocess, sys\n"
        "if importlib.util.find_spec(\"rnnmem\") is None:\n"
        f"    subprocess.check_call([sys.executable, \"-m\", \"pip\", \"install\", \"-q\", "
        f"\"rnnmem @ git+{repo_url.rstrip('/')}.git\"])"
    )


def _cell_id(slug: str, index: int) -> str:
    return hashlib.sha256(f"{slug}:{index}".encode()).hexdigest()[:12]


def chapter_notebook(markdown: str, *, slug: str, title: str, page_url: str, repo_url: str) -> str:
    """The notebook (nbformat 4.5 JSON text, deterministic) for one chapter."""
    cells = []

    def add(kind: str, source: str) -> None:
        cell = {"cell_type": kind, "id": _cell_id(slug, len(cells)), "metadata": {}, "source": source}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)

    add("markdown", f"# {title}\n\nThe code of the chapter [{title}]({page_url}), cell by cell, "
                    "in the order the chapter runs it.")
    add("code", install_source(repo_url))
    current = None
    for block in python_blocks(markdown):
        if block.heading and block.heading != current:
            add("markdown", f"## {block.heading}")
            current = block.heading
        add("code", block.source)
    nb = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def colab_url(repo_url: str, path: str, branch: str = "main") -> str:
    """Open-in-Colab address of a notebook committed at ``path`` in a GitHub repository."""
    m = re.match(r"https?://github\.com/([^/]+)/([^/]+?)(?:\.git)?/?$", repo_url)
    if not m:
        raise ValueError(f"repo_url must be a https://github.com/OWNER/REPO address, got {repo_url!r}")
    return f"https://colab.research.google.com/github/{m.group(1)}/{m.group(2)}/blob/{branch}/{path}"

"""A chapter as a Jupyter notebook: one source of truth, the chapter.

The notebook is the chapter: its prose, in order, as Markdown cells (figures
as images from the published site, live tables as tables, placeholders filled,
exercises with their answers, links made absolute), and every
```` ```python ```` block as a code cell (doctest prompts removed, so each cell
is the code a reader would copy) that carries, as its output, the output the
chapter prints and the tests check. Its first code cell installs ``rnnmem``
from the book's repository when it is not already importable, so the notebook
also runs on a hosted service.

The notebooks are built with the site, from the values of the same build:
:meth:`rnnmem.site.book.Book.generated_files` adds ``downloads/<slug>.ipynb``
to the site (the address of the page's download link), and none is committed. So a
notebook can never lag behind its chapter, and its computed values are the
ones its page shows, whatever processor built both. The site's publishing
workflow copies them to the repository's ``notebooks`` branch
(:data:`NOTEBOOK_BRANCH`), where "Open in Colab" (:func:`colab_url`) finds them.
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
    line: int  # 1-based line of the opening fence
    heading: str  # the nearest heading above it
    source: str  # runnable code (prompts and outputs removed)


def python_blocks(markdown: str) -> list[CodeBlock]:
    r"""The chapter's ```` ```python ```` blocks, as runnable code, with their headings.

    The fences are those of :func:`rnnmem.site.markdown.lex`, the lexer the
    page, the directives and the tests read, so a cell ends where the block
    shown on the page ends.

    >>> [(b.heading, b.source) for b in python_blocks("# A\n\n````python\nx = 1\n`````\n\n```python\ny = 2\n```\n")]
    [('A', 'x = 1'), ('A', 'y = 2')]
    """
    doc = lex(markdown)
    shown = shown_only(markdown)
    blocks: list[CodeBlock] = []
    for fence in doc.fences:
        if fence.info != "python" or fence.line in shown:
            continue
        above = [h.text for h in doc.headings if h.line < fence.line]
        blocks.append(CodeBlock(fence.line, above[-1] if above else "", _runnable("\n".join(fence.body))))
    return blocks


#: The comment that marks the next ```python block as shown, not run: Sybil skips it with the
#: quoted reason, and the notebooks show it as text rather than as a cell to run. A recipe for a
#: framework the book's tests do not install (Keras) is written this way, and its page says so.
SHOWN_ONLY = re.compile(r'^\s*<!--\s*skip:\s*next\s+"[^"]+"\s*-->\s*$')


def shown_only(markdown: str) -> set[int]:
    r"""The 1-based lines of the ```python fences a :data:`SHOWN_ONLY` comment marks (the nearest
    line above the fence that is not blank).

    >>> shown_only('<!-- skip: next "not installed" -->\n\n```python\nimport keras\n```\n')
    {3}
    """
    lines = markdown.split("\n")
    out: set[int] = set()
    for fence in lex(markdown).fences:
        above = [line for line in lines[: fence.line - 1] if line.strip()]
        if fence.info == "python" and above and SHOWN_ONLY.match(above[-1]):
            out.add(fence.line)
    return out


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
        'if importlib.util.find_spec("rnnmem") is None:\n'
        f'    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", '
        f'"rnnmem @ git+{repo_url.rstrip("/")}.git"])'
    )


def _cell_id(slug: str, index: int) -> str:
    return hashlib.sha256(f"{slug}:{index}".encode()).hexdigest()[:12]


def printed_output(source: str) -> str:
    """What a doctest block prints, as the chapter shows it (its expected outputs, in order).

    >>> printed_output(">>> x = 2\\n>>> x + 1\\n3\\n>>> print('a')\\na\\n")
    '3\\na\\n'
    """
    if ">>>" not in source:
        return ""
    return "".join(ex.want for ex in doctest.DocTestParser().get_examples(source))


_ADMONITION = re.compile(
    r'^(?P<indent> *)(?:(?:!!!|\?\?\?\+?)\s+(?P<kind>[\w-]+)|===\+?)(?:\s+"(?P<title>[^"]*)")?\s*$'
)
_LINK = re.compile(r"(\]\()(?P<target>[^)\s]+)(\))")
_NOTE = re.compile(r"<!--(?:(?!-->).)*-->\n?", re.DOTALL)


def _absolute(target: str, page_url: str, site_url: str) -> str:
    """A page's relative link as an absolute address on the published site."""
    if re.match(r"[a-z]+:|#|/", target) or not site_url:
        return page_url + target if target.startswith("#") else target
    import posixpath

    path, _, anchor = target.partition("#")
    base = page_url[len(site_url) :] if page_url.startswith(site_url) else ""
    # page_url is the page's directory ("chapters/horizon/"); its source sits one level up.
    here = posixpath.dirname(base.rstrip("/"))
    resolved = posixpath.normpath(posixpath.join(here, path)) if path else base.rstrip("/")
    if resolved.endswith(".md"):
        resolved = resolved[:-3]
        resolved = "" if resolved == "index" else (resolved[:-6] if resolved.endswith("/index") else resolved) + "/"
    return site_url + resolved.lstrip("./") + (f"#{anchor}" if anchor else "")


def prose_markdown(text: str, *, page_url: str, site_url: str) -> str:
    """A stretch of chapter Markdown as notebook Markdown.

    Admonitions, exercises and content tabs (``=== "PyTorch"``) become a bold
    title and their text; comments are dropped; relative links point at the
    published site.

    >>> prose_markdown('??? question "Exercise 1"\\n\\n    Why?\\n', page_url="https://b/ch/x/", site_url="https://b/")
    '**Exercise 1**\\n\\nWhy?\\n'
    """
    text = _NOTE.sub("", text)
    out: list[str] = []
    block_indent: int | None = None
    for line in text.split("\n"):
        m = _ADMONITION.match(line)
        if m:
            title = m.group("title") or (m.group("kind") or "").capitalize()
            out.append(f"{m.group('indent')}**{title}**" if title else "")
            block_indent = len(m.group("indent")) + 4
            continue
        if block_indent is not None:
            if line.strip() and len(line) - len(line.lstrip(" ")) < block_indent:
                block_indent = None
            elif line.startswith(" " * block_indent):
                line = line[4:]
        out.append(line)
    text = "\n".join(out)
    return _LINK.sub(lambda m: m.group(1) + _absolute(m.group("target"), page_url, site_url) + m.group(3), text)


#: The opening of a student's notebook (:meth:`rnnmem.site.book.Book.student_notebook_text`); ``{link}`` is the chapter.
STUDENT_INTRO = (
    "This notebook is the chapter {link} for a student: its text and its code, without the exercises' "
    "answers. A coding exercise gives you a cell to complete (it raises `NotImplementedError` until you do) "
    "and, after it, a cell that checks your code against `rnnmem`'s own: it fails until your code is right. "
    "Run the cells in order; the answers are on the book's page."
)
CHAPTER_INTRO = (
    "This notebook is the chapter {link}: its text, its code cell by cell in the order the chapter runs it, "
    "and under each cell the output the book prints and its tests check. Run the cells to compute them again."
)


def chapter_notebook(
    markdown: str,
    *,
    slug: str,
    title: str,
    page_url: str,
    repo_url: str,
    site_url: str = "",
    intro: str = CHAPTER_INTRO,
) -> str:
    """The notebook (nbformat 4.5 JSON text, deterministic) for one chapter.

    ``markdown`` is the chapter with its figures and tables already in place
    (see :meth:`rnnmem.site.book.Book.notebook_text`). The same Markdown gives
    the same bytes: cell ids come from the slug and the cell's index, keys are
    sorted, and nothing of the machine that built it is recorded. ``intro`` is
    the paragraph under the title (``{link}``: the chapter's link).
    """
    cells: list[dict[str, object]] = []

    def add(kind: str, source: str, output: str = "") -> None:
        source = source.strip("\n")
        if not source.strip():
            return
        cell: dict[str, object] = {
            "cell_type": kind,
            "id": _cell_id(slug, len(cells)),
            "metadata": {},
            "source": source,
        }
        if kind == "code":
            outputs = [{"name": "stdout", "output_type": "stream", "text": output}] if output else []
            cell.update(execution_count=None, outputs=outputs)
        cells.append(cell)

    doc = lex(markdown)
    lines = markdown.split("\n")
    titles = [h for h in doc.headings if h.level == 1]
    start = titles[0].line if titles else 0
    add("markdown", f"# {title}\n\n" + intro.format(link=f"[{title}]({page_url})"))
    add("code", install_source(repo_url))
    pos = start
    shown = shown_only(markdown)
    for fence in doc.fences:
        if fence.info != "python" or fence.line <= start or fence.line in shown:
            continue
        add("markdown", prose_markdown("\n".join(lines[pos : fence.line - 1]), page_url=page_url, site_url=site_url))
        body = "\n".join(fence.body)
        add("code", _runnable(body), printed_output(body))
        pos = fence.end_line
    add("markdown", prose_markdown("\n".join(lines[pos:]), page_url=page_url, site_url=site_url))
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


#: The generated branch the publishing workflow (.github/workflows/pages.yml) writes the built
#: notebooks to, each at its root as ``<name>.ipynb``; never edited by hand.
NOTEBOOK_BRANCH = "notebooks"


def colab_url(repo_url: str, name: str, branch: str = NOTEBOOK_BRANCH) -> str:
    """Open-in-Colab address of the notebook ``name`` published on ``branch`` of a GitHub repository.

    Colab opens ``https://colab.research.google.com/github/OWNER/REPO/blob/BRANCH/PATH``;
    the notebooks are built with the site and published at the root of
    :data:`NOTEBOOK_BRANCH`, so ``PATH`` is the notebook's file name.

    >>> colab_url("https://github.com/o/r", "horizon.ipynb")
    'https://colab.research.google.com/github/o/r/blob/notebooks/horizon.ipynb'
    """
    m = re.match(r"https?://github\.com/([^/]+)/([^/]+?)(?:\.git)?/?$", repo_url)
    if not m:
        raise ValueError(f"repo_url must be a https://github.com/OWNER/REPO address, got {repo_url!r}")
    if not re.fullmatch(r"[\w.-]+\.ipynb", name):
        raise ValueError(f"name must be a notebook's file name such as 'horizon.ipynb', got {name!r}")
    return f"https://colab.research.google.com/github/{m.group(1)}/{m.group(2)}/blob/{branch}/{name}"


def jupytext_notebook(source) -> str:
    """A notebook page's Jupytext source (``docs/notebooks/NAME.py``) as notebook JSON, deterministic.

    Outputs are left empty (the site shows the executed page); cell ids come
    from the file's name and the cell's index, so the text changes only when
    the source does.
    """
    from pathlib import Path

    import jupytext

    path = Path(source)
    nb = jupytext.reads(path.read_text(encoding="utf-8"), fmt="py:percent")
    cells = []
    for index, cell in enumerate(nb.cells):
        entry = {
            "cell_type": cell.cell_type,
            "id": _cell_id(path.stem, index),
            "metadata": {k: v for k, v in cell.metadata.items() if k == "alt"},
            "source": cell.source,
        }
        if cell.cell_type == "code":
            entry.update(execution_count=None, outputs=[])
        cells.append(entry)
    data = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"

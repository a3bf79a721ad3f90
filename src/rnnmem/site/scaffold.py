"""``make chapter NAME=slug TITLE="..."``: a new chapter that passes every check but one, its placeholders.

:func:`scaffold` writes, into a repository:

* ``docs/chapters/<slug>.md``: the book's rhythm (motivation, derivation,
  computation with a tested snippet and a live figure, summary, exercises with
  a collapsible answer, references), for the author to fill in;
* ``src/rnnmem/site/builders/<slug_with_underscores>.py``: one registered
  figure builder, the one the page's directive names;
* ``tests/builders/test_builders_<slug_with_underscores>.py``: the builder test (it
  renders; test_builder_arguments.py checks its arguments);
* the chapter's entry at the end of the ``Chapters`` section of ``mkdocs.yml``
  and of the home page's chapter list.

Its notebook is not written: the build makes it with the site
(:meth:`rnnmem.site.book.Book.make_notebooks`).

Two sentences are the author's to write, and are written as placeholders
(:data:`PLACEHOLDERS`): the chapter's motivation under its title and its
entry's sentence on the home page. Until both are replaced, the build and
``make test-chapter`` fail with the rule ``placeholders`` naming page and line;
every other rule passes at once.

Nothing is written when an argument is wrong: :func:`check_arguments` raises
``ValueError`` naming ``NAME`` or ``TITLE``, and the command line exits with
status 2 and its usage.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import sys
import textwrap
from pathlib import Path

from . import config

# The sentences the author replaces (the rule ``placeholders`` names them), re-exported here.
from .stub_text import HOME_ENTRY, MOTIVATION, PLACEHOLDERS

__all__ = ["HOME_ENTRY", "MOTIVATION", "PLACEHOLDERS", "Scaffold", "check_arguments", "scaffold", "main"]


SLUG = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
#: The longest slug: the builder and test files it names stay within the formatter's line length as written.
MAX_SLUG = 40
USAGE = 'make chapter NAME=<slug> TITLE="<title>"'

CHAPTER = """\
# {title}

{motivation}

!!! abstract "Objectives"
    After this chapter you can:

    * compute the fraction of a value that a constant factor leaves after
      a number of steps, and the steps until it falls below a level.
    * derive the level horizon from the geometric decay $f^n$.
    * write both as functions and check them against `rnnmem`.

{prerequisites}

{rules}

## Derivation

A value carried $n$ steps by a constant factor $f$ keeps

$$
f^n \\label{{{slug}-decay}}
$$

of itself; it falls below a level $\\varepsilon$ after $\\ln\\varepsilon / \\ln f$
steps. Notation follows the [conventions](../conventions.md).

## Computation

Every number on the page is computed by `rnnmem` on the page:

```python
>>> import math
>>> from rnnmem import memory
>>> round(memory.decay(0.9, 10), 4)
0.3487
>>> round(memory.horizon(0.9), 1)
43.7
```

<!-- References: @fig:ID, @tab:ID, @eq:ID name the figure or table with id="ID", or the
     equation with \\label{{ID}}; @ch:SLUG a chapter. The build numbers them and makes links. -->

@fig:{slug}-decay draws the fraction @eq:{slug}-decay for two factors:

<!-- figure: {builder} factors=[0.5, 0.9] steps=20 id="{slug}-decay"
     caption="The fraction of a value left after n steps, for a factor of 0.5 and of 0.9: both fall geometrically, the smaller factor far faster."
     alt="Two straight lines falling from one on a logarithmic axis against the steps: the line of the factor 0.5 falls far more steeply than the line of 0.9." -->

## Summary

* A constant factor $f < 1$ shrinks a carried value geometrically, as $f^n$.
* The level horizon $\\ln\\varepsilon / \\ln f$ counts the steps to a fraction
  $\\varepsilon$.

## Exercises

<!-- Every exercise opens with its tag: **Routine.**, **Conceptual.**, **Coding.** or **Project.**
     A coding exercise has a starter (its body raises NotImplementedError) before its answer and a
     check (an assert against rnnmem) after it; the student's notebook drops the answers. -->

1. **Routine.** How much of a value is left after 10 steps at $f = 0.5$?

    ??? success "Answer"
        ```python
        >>> memory.decay(0.5, 10)
        0.0009765625
        ```

        Less than a thousandth: $2^{{-10}}$.

2. **Coding.** Write `decay_of(f, n)`, the fraction of a value a constant
   factor `f` leaves after `n` steps.

    ```python
    def decay_of(f, n):
        # the fraction f**n left after n steps at a factor f
        raise NotImplementedError("your code here")
    ```

    ??? success "Answer"
        ```python
        def decay_of(f, n):
            return f**n
        ```

    Check it against `rnnmem`:

    ```python
    for f in (0.5, 0.9):
        assert math.isclose(decay_of(f, 20), memory.decay(f, 20))
    ```

3. **Coding.** Write `horizon_of(f)`, the number of steps until a factor `f`
   leaves less than a hundredth of a value.

    ```python
    def horizon_of(f):
        # the level horizon ln(0.01) / ln(f), for f in (0, 1)
        raise NotImplementedError("your code here")
    ```

    ??? success "Answer"
        ```python
        def horizon_of(f):
            return math.log(0.01) / math.log(f)
        ```

    Check it against `rnnmem`:

    ```python
    for f in (0.5, 0.9):
        assert math.isclose(horizon_of(f), memory.horizon(f))
    ```

## References

* Hochreiter and Schmidhuber (1997), *Long Short-Term Memory*.
  [Bibliography](../references.md#hochreiter1997).
"""

BUILDER = '''\
"""Figures and tables of the chapter "{title}"."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rnnmem import memory
from rnnmem.checks import OpenUnit, PositiveInt

from ..registry import figure
from ..style import PALETTE, new_figure


# Each parameter states its rule in its annotation (rnnmem.checks: OpenUnit, PositiveInt, Sequence[...],
# Literal[...], X | None ...): the site checks every argument against it before the builder runs, and a
# bad one fails the build naming page, line and argument. Relations between arguments stay in the body.
@figure()
def {builder}(
    factors: Sequence[OpenUnit] = (0.5, 0.9),
    steps: PositiveInt = 20,
):
    """f^n against n for each factor, on a logarithmic axis."""
    n = np.arange(steps + 1)
    fig, ax = new_figure()
    for colour, f in zip(PALETTE, factors):
        ax.semilogy(n, memory.decay(f, n), color=colour, label=f"$f = {{f:g}}$")
    ax.set_xlim(0, steps)
    ax.set_xlabel("steps, $n$")
    ax.set_ylabel("fraction left, $f^n$")
    ax.legend(loc="lower left")
    return fig
'''

TEST = '''\
"""The figures of "{title}" render (a bad argument is tested for every builder in test_builder_arguments.py)."""

from __future__ import annotations

from one_directive import OneDirective

from rnnmem.site.render import Renderer

PAGE = "docs/chapters/{slug}.md"
DIRECTIVE = '<!-- figure: {builder} factors=[0.5] steps=5 caption="c" -->'
one = OneDirective(PAGE)


def test_{builder}_renders_an_svg(tmp_path):
    item = Renderer(tmp_path).render(one(DIRECTIVE))
    assert item.content.lstrip().startswith(b"<?xml") and b"<svg" in item.content
'''


class Scaffold:
    """Where a chapter's files go in a repository rooted at ``root``.

    >>> s = Scaffold(Path("."), "long-memory", "Long memory")
    >>> s.module, s.builder, s.builder_path.as_posix()
    ('long_memory', 'long_memory_decay', 'src/rnnmem/site/builders/long_memory.py')
    """

    def __init__(self, root: Path, slug: str, title: str) -> None:
        self.root, self.slug, self.title = Path(root), slug, title
        self.module = slug.replace("-", "_")
        self.builder = f"{self.module}_decay"

    @property
    def page_path(self) -> Path:
        return self.root / "docs" / "chapters" / f"{self.slug}.md"

    @property
    def builder_path(self) -> Path:
        return self.root / "src" / "rnnmem" / "site" / "builders" / f"{self.module}.py"

    @property
    def test_path(self) -> Path:
        return self.root / "tests" / "builders" / f"test_builders_{self.module}.py"


def check_arguments(root: Path, name: str | None, title: str | None) -> Scaffold:
    """The scaffold for ``name`` and ``title``, or ValueError naming the argument, its value and what is allowed.

    >>> check_arguments(Path("."), "Bad Name", "T")
    Traceback (most recent call last):
    ...
    ValueError: NAME must be a slug of lower-case letters, digits and single hyphens, starting with a letter (e.g. long-memory), got 'Bad Name'
    """
    if not name:
        raise ValueError("NAME is required: the chapter's file name without .md, e.g. NAME=long-memory")
    if not SLUG.fullmatch(name):
        raise ValueError(
            "NAME must be a slug of lower-case letters, digits and single hyphens, starting with a "
            f"letter (e.g. long-memory), got {name!r}"
        )
    if len(name) > MAX_SLUG:
        raise ValueError(f"NAME must be at most {MAX_SLUG} characters (it names the builder), got {name!r}")
    if title is None or not title.strip():
        raise ValueError(f'TITLE must be a non-empty title, e.g. TITLE="Long memory", got {title!r}')
    if any(c in title for c in "[]\n\r`\\"):
        raise ValueError(f"TITLE must be one line without brackets, backquotes or backslashes, got {title!r}")
    s = Scaffold(root, name, title.strip())
    if keyword.iskeyword(s.module):
        raise ValueError(f"NAME must not be a Python keyword (it names the builder module), got {name!r}")
    for path in (s.page_path, s.builder_path, s.test_path):
        if path.exists():
            raise ValueError(f"NAME {name!r} is taken: {path.relative_to(root)} exists")
    if f"chapters/{name}.md" in config.nav_pages(config.read(Path(root) / config.CONFIG_FILE).get("nav")):
        raise ValueError(f"NAME {name!r} is taken: mkdocs.yml already lists chapters/{name}.md")
    return s


def _yaml_scalar(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z][A-Za-z0-9 ,'()-]*", text) else json.dumps(text, ensure_ascii=False)


def add_to_nav(config_text: str, title: str, path: str) -> str:
    """``config_text`` with ``- title: path`` appended to the nav's ``Chapters:`` section.

    >>> text = "nav:\\n  - Home: index.md\\n  - Chapters:\\n      - A: chapters/a.md\\n  - References: r.md\\n"
    >>> print(add_to_nav(text, "B: two", "chapters/b.md"), end="")
    nav:
      - Home: index.md
      - Chapters:
          - A: chapters/a.md
          - "B: two": chapters/b.md
      - References: r.md
    """
    lines = config_text.split("\n")
    section = rf"\s*- {re.escape(config.CHAPTERS_SECTION)}:\s*"
    start = next((i for i, line in enumerate(lines) if re.fullmatch(section, line)), None)
    if start is None:
        raise ValueError(f"mkdocs.yml has no '- {config.CHAPTERS_SECTION}:' section in its nav to add the chapter to")
    outer = len(lines[start]) - len(lines[start].lstrip())
    last, indent = start, None
    for i in range(start + 1, len(lines)):
        line = lines[i]
        depth = len(line) - len(line.lstrip())
        if line.strip() and depth <= outer:
            break
        if line.lstrip().startswith("- "):
            last, indent = i, depth
    indent = indent if indent is not None else outer + 4
    lines.insert(last + 1, " " * indent + f"- {_yaml_scalar(title)}: {path}")
    return "\n".join(lines)


def add_to_home(index_text: str, title: str, path: str) -> str:
    """``index_text`` with a numbered entry for the chapter after the last one of the chapter list."""
    from .config import HOME_SECTION

    lines = index_text.split("\n")
    try:
        start = lines.index(f"## {HOME_SECTION}")
    except ValueError:
        raise ValueError(f"docs/index.md has no '## {HOME_SECTION}' section to add the chapter to") from None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    numbered = [i for i in range(start + 1, end) if re.match(r"\d+\.\s", lines[i])]
    if numbered:
        last = numbered[-1]
        while last + 1 < end and lines[last + 1].strip():
            last += 1
        number = len(numbered) + 1
    else:
        last, number = start + 1, 1
    entry = f"{number}. [{title}]({path}). {HOME_ENTRY}"
    lines[last + 1 : last + 1] = [entry]
    return "\n".join(lines)


def prerequisites(earlier: list[tuple[str, str]]) -> str:
    """The objectives' prerequisites paragraph: a link to the chapter before the new one, if there is one.

    ``earlier`` is the nav's chapters, (title, path), in reading order (the first chapter assumes none).

    >>> print(prerequisites([("A", "chapters/a.md"), ("B: two", "chapters/b.md")]))
        **Prerequisites:** [B: two](b.md) (what this chapter builds on);
        logarithms.
    >>> print(prerequisites([]))
        **Prerequisites:** logarithms.
    """
    text = "logarithms."
    if earlier:
        title, path = earlier[-1]
        text = f"[{title}]({Path(path).name}) (what this chapter builds on); {text}"
    return textwrap.fill(
        f"**Prerequisites:** {text}", width=78, initial_indent="    ", subsequent_indent="    ", break_long_words=False
    )


def rules_comment(slug: str) -> str:
    """An HTML comment naming what ``make test-chapter`` checks: every page rule, in the order of
    :data:`rnnmem.site.check.RULES` (CONTRIBUTING.md lists them so), then the lint of the builder and its test."""
    from .check import RULES

    lines = [
        f"<!-- Before you push, `make test-chapter CH={slug}` runs this page's snippets and its builder",
        '     test, then every page rule, in this order (CONTRIBUTING.md, "The rules a page must pass"):',
    ]
    for number, rule in enumerate(RULES, 1):
        text = f"{number}. {rule.name}: {rule.asks.replace('```python', '`python`')}."
        lines += textwrap.wrap(text, width=100, initial_indent="     ", subsequent_indent="        ")
    lines.append("     Then `ruff format --check`, `ruff check` and `mypy` on the builder and its test. -->")
    return "\n".join(lines)


def scaffold(root: Path, name: str | None, title: str | None) -> list[Path]:
    """Write the chapter's files into the repository at ``root``; return the paths written or changed."""
    s = check_arguments(root, name, title)
    config_path, index_path = s.root / "mkdocs.yml", s.root / "docs" / "index.md"
    nav = add_to_nav(config_path.read_text(encoding="utf-8"), s.title, f"chapters/{s.slug}.md")
    home = add_to_home(index_path.read_text(encoding="utf-8"), s.title, f"chapters/{s.slug}.md")
    fields = {"title": s.title, "slug": s.slug, "builder": s.builder}
    motivation = textwrap.fill(MOTIVATION, width=78)
    earlier = config.chapter_entries(config.read(config_path).get("nav"))
    page = CHAPTER.format(
        motivation=motivation, prerequisites=prerequisites(earlier), rules=rules_comment(s.slug), **fields
    )
    s.page_path.write_text(page, encoding="utf-8")
    s.builder_path.write_text(BUILDER.format(**fields), encoding="utf-8")
    s.test_path.write_text(TEST.format(**fields), encoding="utf-8")
    config_path.write_text(nav, encoding="utf-8")
    index_path.write_text(home, encoding="utf-8")
    return [s.page_path, s.builder_path, s.test_path, config_path, index_path]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="make chapter",
        usage=USAGE,
        description="Write a new chapter (page, builder, builder test, nav and home entries).",
    )
    parser.add_argument("--name", metavar="NAME", help="the chapter's slug: its file name without .md")
    parser.add_argument("--title", metavar="TITLE", help="the chapter's title, as the nav and the page show it")
    parser.add_argument("--root", type=Path, default=Path("."), help="the repository (default: here)")
    args = parser.parse_args(argv)
    try:
        written = scaffold(args.root, args.name, args.title)
    except ValueError as exc:
        parser.print_usage(sys.stderr)
        print(f"make chapter: error: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path.relative_to(args.root) if path.is_relative_to(args.root) else path}")
    print(
        f"next: write docs/chapters/{args.name}.md and its builders, replacing the placeholder paragraph "
        f"under its title and the placeholder sentence of its entry in docs/index.md (the build and "
        f"`make test-chapter` fail until both are replaced), and check it with "
        f"`make test-chapter CH={args.name}`"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

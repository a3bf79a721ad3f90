r"""A chapter's exercises: their tags, their answers, and the student's edition without the answers.

Every chapter ends with a section ``## Exercises``: a numbered list whose
items each open with a tag in bold, then the question, then the reference
answer in a collapsible block::

    1. **Routine.** What forget-gate value gives a 1% horizon of 300 steps?

        ??? success "Answer"
            ...

The tag says what kind of work the exercise asks (:data:`TAGS`): *routine*
(apply a formula or a function of ``rnnmem``), *conceptual* (explain or
derive), *coding* (implement something) or *project* (open-ended, a lab
session or more). A coding exercise has two more blocks of Python beside its
answer: a *starter* before it, which defines the function or class to write
with a body that raises :class:`NotImplementedError`, and a *check* after it,
which calls what the starter defines and asserts that it agrees with
``rnnmem``'s own functions::

    2. **Coding.** Write `efold(f)`, the e-fold horizon of a gate value.

        ```python
        def efold(f):
            raise NotImplementedError("your code here")
        ```

        ??? success "Answer"
            ```python
            def efold(f):
                return -1 / math.log(f)
            ```

        ```python
        assert math.isclose(efold(0.9), memory.efold_horizon(0.9))
        ```

On the site and in the chapter's notebook the answer sits between the two,
so the check runs on the reference answer (the tests run every block).
:func:`student_markdown` removes the answers: in the student's notebook the
check fails until the student's own code passes it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from .markdown import lex

__all__ = [
    "MIN_CODING",
    "TAGS",
    "Exercise",
    "answer_only_names",
    "exercise_problems",
    "exercises",
    "rnnmem_uncalled",
    "student_markdown",
]

#: The tags an exercise may carry, in the order the instructor's page lists them.
TAGS = ("routine", "conceptual", "coding", "project")
#: Coding exercises every chapter sets at least.
MIN_CODING = 2

_SECTION = re.compile(r"^##[ \t]+Exercises[ \t]*$")
_ITEM = re.compile(r"^(?P<number>\d+)\.[ \t]+(?P<rest>.*)$")
_TAG = re.compile(r"^\*\*(?P<tag>[A-Z][a-z]+)\.\*\*[ \t]+\S")
_ANSWER = re.compile(r'^(?P<indent> +)\?\?\?\+?[ \t]+success[ \t]+"Answer"[ \t]*$')


@dataclass(frozen=True)
class Exercise:
    """One item of a chapter's ``## Exercises`` list. Lines are 1-based and inclusive."""

    number: int
    line: int  # the item's first line
    end_line: int  # its last line (before the next item or the section's end)
    tag: str | None  # lower case, or None when the item has no tag in bold
    written_tag: str | None  # the bold word as written ("Coding"), None when there is none
    answers: tuple[tuple[int, int], ...]  # (first, last) line of each answer block
    starter: tuple[str, ...]  # the Python blocks before the first answer
    checks: tuple[str, ...]  # the Python blocks after the last answer, outside it


def _section(lines: list[str]) -> tuple[int, int] | None:
    """0-based (first line after the heading, end) of the ``## Exercises`` section, or None."""
    for k, line in enumerate(lines):
        if _SECTION.match(line):
            end = next((j for j in range(k + 1, len(lines)) if re.match(r"^#{1,2}[ \t]", lines[j])), len(lines))
            return k + 1, end
    return None


def exercises(markdown: str) -> list[Exercise]:
    r"""The exercises of a chapter, in order; ``[]`` when it has no ``## Exercises`` section.

    >>> page = '# A\n\n## Exercises\n\n1. **Routine.** Why?\n\n    ??? success "Answer"\n        Because.\n'
    >>> [(e.number, e.tag, e.answers) for e in exercises(page)]
    [(1, 'routine', ((7, 8),))]
    """
    lines = markdown.split("\n")
    span = _section(lines)
    if span is None:
        return []
    first, end = span
    doc = lex(markdown)
    fenced = {n for f in doc.fences for n in range(f.line, f.end_line + 1)}  # 1-based lines inside fences
    starts = [k for k in range(first, end) if k + 1 not in fenced and _ITEM.match(lines[k])]
    out: list[Exercise] = []
    for i, k in enumerate(starts):
        stop = starts[i + 1] if i + 1 < len(starts) else end
        while stop > k + 1 and not lines[stop - 1].strip():
            stop -= 1
        m = _ITEM.match(lines[k])
        assert m is not None
        tag_match = _TAG.match(m.group("rest"))
        written = tag_match.group("tag") if tag_match else None
        answers: list[tuple[int, int]] = []
        j = k + 1
        while j < stop:
            a = _ANSWER.match(lines[j]) if j + 1 not in fenced else None
            if a is None:
                j += 1
                continue
            width = len(a.group("indent"))
            last = j
            for n in range(j + 1, stop):
                if lines[n].strip() and len(lines[n]) - len(lines[n].lstrip(" ")) <= width:
                    break
                if lines[n].strip():
                    last = n
            answers.append((j + 1, last + 1))
            j = last + 1
        python = [f for f in doc.fences if f.info == "python" and k + 1 < f.line <= stop]
        inside = [f for f in python if any(a <= f.line <= b for a, b in answers)]
        outside = [f for f in python if f not in inside]
        starter = tuple("\n".join(f.body) for f in outside if answers and f.line < answers[0][0])
        checks = tuple("\n".join(f.body) for f in outside if answers and f.line > answers[-1][1])
        out.append(
            Exercise(
                number=int(m.group("number")),
                line=k + 1,
                end_line=stop,
                tag=written.lower() if written and written.lower() in TAGS else None,
                written_tag=written,
                answers=tuple(answers),
                starter=starter,
                checks=checks,
            )
        )
    return out


def _stubs(source: str) -> set[str]:
    """Names of the functions and classes ``source`` defines whose body raises NotImplementedError."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            raises = [
                n
                for n in ast.walk(node)
                if isinstance(n, ast.Raise) and n.exc is not None and "NotImplementedError" in ast.unparse(n.exc)
            ]
            if raises:
                names.add(node.name)
    return names


def _names_used(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
    }


def _asserts(source: str) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Assert) for n in ast.walk(tree))


def _bound(source: str) -> set[str]:
    """Every name ``source`` binds anywhere: imports, assignments, loops, definitions, arguments."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
            names.add(n.id)
        elif isinstance(n, ast.alias):
            names.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(n.name)
        elif isinstance(n, ast.arg):
            names.add(n.arg)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
    return names


def _root(node: ast.expr) -> str | None:
    """The name an attribute chain or a call starts from (``memory`` in ``memory.decay(f)(n)``), or None."""
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _rnnmem_names(source: str, known: set[str]) -> set[str]:
    """``known`` and the names ``source`` ties to rnnmem: what it imports from rnnmem, and the functions,
    classes and values it defines whose code calls or takes something of rnnmem (a helper the check calls)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(known)
    names = set(known)
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in n.names if a.name.split(".")[0] == "rnnmem"}
        elif isinstance(n, ast.ImportFrom) and not n.level and (n.module or "").split(".")[0] == "rnnmem":
            names |= {a.asname or a.name for a in n.names}
    changed = True
    while changed:
        changed = False
        for node in tree.body:
            uses = {_root(x) for x in ast.walk(node) if isinstance(x, ast.Attribute | ast.Call | ast.Name)}
            if not uses & names:
                continue
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                bound = {node.name}
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                bound = {t.id for t in targets if isinstance(t, ast.Name)}
            else:
                continue
            if not bound <= names:
                names |= bound
                changed = True
    return names


def _calls_rnnmem(source: str, names: set[str]) -> bool:
    """Whether ``source`` calls something of rnnmem: a call whose name or attribute chain starts with one
    of ``names`` (:func:`_rnnmem_names`)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Call) and _root(n.func) in names for n in ast.walk(tree))


def rnnmem_uncalled(markdown: str) -> list[tuple[int, str]]:
    r"""The coding exercises whose checks never call ``rnnmem``: ``(line, exercise)``.

    A check compares the student's function with rnnmem's own: it must call a
    name the page imports from ``rnnmem`` (outside the answers, which the
    student's notebook drops), or a function or value of the page built from
    one.

    >>> page = '## Exercises\n\n1. **Coding.** Go.\n\n    ```python\n    def f():\n        raise NotImplementedError\n    ```\n\n'
    >>> page += '    ??? success "Answer"\n        ```python\n        def f():\n            return 1\n        ```\n\n'
    >>> rnnmem_uncalled(page + '    ```python\n    assert f() == 1\n    ```\n')
    [(3, 'exercise 1')]
    >>> check = '    ```python\n    from rnnmem import memory\n    assert f() == memory.decay(1.0, 3)\n    ```\n'
    >>> rnnmem_uncalled(page + check)
    []
    """
    doc = lex(markdown)
    items = exercises(markdown)
    answers = [span for ex in items for span in ex.answers]
    fences = [f for f in doc.fences if f.info == "python"]
    out = []
    for ex in items:
        if ex.tag != "coding" or not ex.answers:
            continue
        last = ex.answers[-1][1]
        names: set[str] = set()
        for f in fences:
            if f.line > last:
                break
            if not any(a <= f.line <= b for a, b in answers):
                names = _rnnmem_names(_code("\n".join(f.body)), names)
        checks = [_code("\n".join(f.body)) for f in fences if last < f.line <= ex.end_line]
        checks = [c for c in checks if _asserts(c)]  # none: the rule reports the missing check itself
        if checks and not any(_calls_rnnmem(c, _rnnmem_names(c, names)) for c in checks):
            out.append((ex.line, f"exercise {ex.number}"))
    return out


def _loaded(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _code(body: str) -> str:
    """A fence's body as code: a doctest's examples, or the body itself."""
    if ">>>" not in body:
        return body
    import doctest

    return "\n".join(ex.source for ex in doctest.DocTestParser().get_examples(body))


def answer_only_names(markdown: str) -> list[tuple[int, str, list[str]]]:
    r"""Names a coding exercise's check uses that only an answer defines: ``(line, exercise, names)``.

    The student's notebook has no answers, so such a check fails there for the
    wrong reason (a ``NameError``, not the student's code).

    >>> page = '## Exercises\n\n1. **Coding.** Go.\n\n    ```python\n    def f():\n        raise NotImplementedError\n    ```\n\n'
    >>> page += '    ??? success "Answer"\n        ```python\n        import math\n        def f():\n            return 1\n        ```\n\n'
    >>> page += '    ```python\n    assert f() == math.floor(1.5)\n    ```\n'
    >>> answer_only_names(page)
    [(3, 'exercise 1', ['math'])]
    """
    import builtins

    doc = lex(markdown)
    items = exercises(markdown)
    answers = [span for ex in items for span in ex.answers]
    fences = [f for f in doc.fences if f.info == "python"]
    out = []
    for ex in items:
        if ex.tag != "coding" or not ex.answers:
            continue
        last = ex.answers[-1][1]
        known = set(dir(builtins))
        for f in fences:
            if f.line > last:
                break
            if not any(a <= f.line <= b for a, b in answers):
                known |= _bound(_code("\n".join(f.body)))
        missing: set[str] = set()
        for check in (f for f in fences if last < f.line <= ex.end_line):
            code = _code("\n".join(check.body))
            missing |= _loaded(code) - known - _bound(code)
        if missing:
            out.append((ex.line, f"exercise {ex.number}", sorted(missing)))
    return out


def exercise_problems(markdown: str, *, min_coding: int = MIN_CODING) -> list[tuple[int | None, str]]:
    r"""What is wrong with a chapter's exercises, as ``(line, message)``; ``[]`` when nothing is.

    Every item opens with a tag of :data:`TAGS` in bold and has one answer;
    a coding exercise has a starter (a function or class that raises
    NotImplementedError) before its answer and a check (an ``assert`` that
    calls what the starter defines) after it; the chapter sets at least
    ``min_coding`` coding exercises.

    >>> for line, message in exercise_problems('# A\n\n## Exercises\n\n1. Why?\n', min_coding=0):
    ...     print(line, message)
    5 exercise 1 opens with no tag: begin it with one of **Routine.**, **Conceptual.**, **Coding.** or **Project.**
    5 exercise 1 has no answer: add a ??? success "Answer" block under it
    """
    lines = markdown.split("\n")
    if _section(lines) is None:
        return [(None, "the chapter has no ## Exercises section")]
    items = exercises(markdown)
    if not items:
        return [(None, "the ## Exercises section has no numbered exercise")]
    allowed = ", ".join(f"**{t.capitalize()}.**" for t in TAGS[:-1]) + f" or **{TAGS[-1].capitalize()}.**"
    problems: list[tuple[int | None, str]] = []
    for expected, ex in enumerate(items, start=1):
        name = f"exercise {ex.number}"
        if ex.number != expected:
            problems.append((ex.line, f"{name} is numbered {ex.number} where {expected} is next"))
        if ex.written_tag is None:
            problems.append((ex.line, f"{name} opens with no tag: begin it with one of {allowed}"))
        elif ex.tag is None:
            problems.append((ex.line, f"{name} has the tag **{ex.written_tag}.**; the tags are {allowed}"))
        if len(ex.answers) != 1:
            problems.append(
                (
                    ex.line,
                    f'{name} has no answer: add a ??? success "Answer" block under it'
                    if not ex.answers
                    else f"{name} has {len(ex.answers)} answer blocks; give it one",
                )
            )
            continue
        if ex.tag != "coding":
            continue
        stubs = set().union(*(_stubs(s) for s in ex.starter)) if ex.starter else set()
        if not stubs:
            problems.append(
                (
                    ex.line,
                    f"coding {name} has no starter: before its answer, a ```python block that defines the "
                    "function or class to write, with a body that raises NotImplementedError",
                )
            )
        checking = [s for s in ex.checks if _asserts(s) and (not stubs or _names_used(s) & stubs)]
        if not checking:
            what = ", ".join(sorted(stubs)) or "the starter's function"
            problems.append(
                (
                    ex.line,
                    f"coding {name} has no check: after its answer, a ```python block that asserts "
                    f"what {what} returns against rnnmem",
                )
            )
    for line, name in rnnmem_uncalled(markdown):
        problems.append(
            (
                line,
                f"the check of coding {name} never calls rnnmem: compare what the student's code returns with "
                "rnnmem's own function (imported on the page, e.g. memory.decay), not with a value typed in",
            )
        )
    for line, name, names in answer_only_names(markdown):
        problems.append(
            (
                line,
                f"the check of coding {name} uses {', '.join(names)}, which only an answer defines: the "
                "student's notebook has no answers, so define or import it above the exercise, in the starter "
                "or in the check",
            )
        )
    coding = sum(ex.tag == "coding" for ex in items)
    if coding < min_coding:
        problems.append(
            (
                items[0].line,
                f"the chapter sets {coding} coding exercise(s); it needs at least {min_coding}, in which the "
                "student implements something (a backward pass, a horizon, a clipping rule, a task)",
            )
        )
    return problems


def student_markdown(markdown: str) -> str:
    r"""The chapter without its exercises' answers: what the student's notebook is made from.

    Everything else stays, the starters and the checks of the coding
    exercises included, so a check meets the student's code, not the answer.

    >>> page = '## Exercises\n\n1. **Routine.** Why?\n\n    ??? success "Answer"\n        Because.\n\n2. **Routine.** How?\n'
    >>> print(student_markdown(page))
    ## Exercises
    <BLANKLINE>
    1. **Routine.** Why?
    <BLANKLINE>
    2. **Routine.** How?
    <BLANKLINE>
    """
    lines = markdown.split("\n")
    drop: set[int] = set()
    for ex in exercises(markdown):
        for first, last in ex.answers:
            drop.update(range(first - 1, last))
            # the blank line after the answer goes with it
            if last < len(lines) and not lines[last].strip():
                drop.add(last)
    kept = [line for k, line in enumerate(lines) if k not in drop]
    return "\n".join(kept)

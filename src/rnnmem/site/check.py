"""Every rule a page must pass, each with one implementation, and the check of one chapter.

``make test-chapter CH=<slug>`` runs the chapter's snippets and its builder test
with pytest, then ``python -m rnnmem.site check <slug>``, which calls
:func:`check_chapter`: every rule of :data:`RULES` (one table of :class:`Rule`
objects, each carrying its description, its fix and its check function), in that order, on
``docs/chapters/<slug>.md``. A problem is a :class:`Problem`: the rule's name,
the page, the line and what is wrong; the command prints each rule's fix
after its problems and exits 1. The rules:

``placeholders``
    no sentence ``make chapter`` wrote for the author to replace
    (:data:`rnnmem.site.stub_text.PLACEHOLDERS`) is left on the page, nor in
    the chapter's entry of the home page; the build refuses them too.
``fences``
    every block of Python the page shows is one the tests run: fenced exactly
    ```` ```python ````, no ``>>>`` prompt outside a fence, no fence or
    comment left open, no numpy scalar repr in an output, a reason for each
    skipped snippet. The fences are those of the site's one lexer
    (:func:`rnnmem.site.markdown.lex`).
``code-width``
    no line of a ```` ```python ```` block is wider than :data:`MAX_CODE_WIDTH`
    characters.
``directives``
    every figure and table directive renders (through the render cache); a
    builder module that fails to import, or a builder name two modules claim,
    is reported at the module's file and line (and at each directive naming
    the claimed name), and the other rules still run.
``captions``
    a caption is one or two short sentences; a figure has an ``alt`` text of
    its own.
``numbers``
    every number the prose, a caption or an alt text states is produced on
    the page (:mod:`rnnmem.site.numbers`, policy ``policy/numbers.toml``).
``cross-references``
    every ``@fig:``, ``@tab:``, ``@eq:``, ``@ch:`` reference names a target and
    ids are unique (:mod:`rnnmem.site.numbering`).
``citations``
    every author-year citation matches an entry of ``docs/references.md``
    (:mod:`rnnmem.site.citations`, the build's own linking).
``reference-links``
    every entry the page cites links to the work by DOI or arXiv, unless
    ``policy/references.toml`` names it with its other link and a reason
    (on ``references.md`` itself: every entry, and every policy entry).
``links``
    every internal link resolves to a page of the site (the generated API
    pages included) and every ``#anchor`` to a heading or an id on it.
``forward-links``
    a chapter links to a later chapter only where ``policy/forward_links.toml``
    lists the link as a pointer ahead, with its reason.
``notebook``
    the chapter's notebook, which the build makes and the site offers as
    ``downloads/<slug>.ipynb``, can be made.
``notebook-prose``
    that notebook carries the chapter's prose: every ``##`` heading and the
    first paragraph, as the notebook writes them (references as plain text).
``exercises``
    every exercise opens with its tag (routine, conceptual, coding, project)
    and has one answer; a coding exercise has a starter before its answer and
    a check after it; the chapter sets at least two coding exercises
    (:mod:`rnnmem.site.exercises`, which also writes the student's notebook).
``objectives``
    the chapter opens with one ``!!! abstract "Objectives"`` block before its
    first section: three to five objectives, then a ``**Prerequisites:**``
    paragraph that links only earlier chapters.

The repository's tests run the same functions over every page
(``tests/repo/test_page_rules.py``), so what ``make test-chapter`` passes the
full suite passes. The policies (the lists a rule reads) are data files in
``src/rnnmem/site/policy/``, reviewed like code.

Only ``docs/chapters/`` is searched for a chapter: a slug names a chapter,
never an API page or a notebook of the same name. :func:`chapter_path` raises
``ValueError`` listing the chapters when the slug is unknown.

:func:`home_chapters` and :func:`nav_chapters` read the home page's chapter
list and the navigation's ``Chapters`` section, so a test can hold them equal.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import apipages, config, kinds
from .book import CHAPTER_DIR, Book, load_mkdocs_settings
from .config import HOME_SECTION
from .directives import DirectiveError, find_directives
from .exercises import MIN_CODING, exercise_problems
from .markdown import LINK as _LINK
from .markdown import lex, prose_spans
from .numbering import NumberingError, heading_anchor
from .registry import BuilderImportError

__all__ = [
    "HOME_SECTION",
    "MAX_CODE_WIDTH",
    "OBJECTIVES",
    "REFERENCES_POLICY",
    "RULES",
    "ChapterReport",
    "Problem",
    "Rule",
    "Site",
    "caption_problems",
    "chapter_path",
    "chapters",
    "check_chapter",
    "citation_problems",
    "fence_problems",
    "home_chapters",
    "link_problems",
    "load_forward_links",
    "forward_links",
    "forward_link_problems",
    "load_no_doi",
    "long_lines",
    "nav_chapters",
    "notebook_prose_problems",
    "objectives",
    "objectives_problems",
    "number_problems",
    "page_anchors",
    "page_links",
    "page_problems",
    "placeholder_pieces",
    "placeholder_problems",
    "reference_link_problems",
    "run_check",
]

#: The widest line of a ```python block: the code column at 1280 px holds about 80 characters of the
#: site's monospace font, fewer inside an admonition (an exercise's answer); 72 leaves room for the copy button.
MAX_CODE_WIDTH = 72

#: The works cited without a DOI or an arXiv id, each with its other link and a reason.
REFERENCES_POLICY = Path(__file__).resolve().parent / "policy" / "references.toml"
#: The links from a chapter to a later one that only point ahead, each with its reason.
FORWARD_POLICY = Path(__file__).resolve().parent / "policy" / "forward_links.toml"

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_ATTR_ID = re.compile(r"\{[^}]*#([\w-]+)[^}]*\}\s*$")
_HTML_ID = re.compile(r"""\bid=["']([^"']+)["']""")
_PYTHONISH = re.compile(r"^\{?\s*\.?(py|python|python3|pycon|ipython|py3)\b", re.IGNORECASE)
_NUMPY_SCALAR_REPR = re.compile(r"\bnp\.(float|int|bool|complex)\w*\(")
_WORK_LINK = re.compile(r"\]\(https://(doi\.org/10\.\d{4,}/|arxiv\.org/abs/\d{4}\.\d{4,5})")
_ENTRY_ANCHOR = re.compile(r'^<a id="([a-z0-9-]+)"></a>', re.M)
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bal)(?<!\bcf)[.!?](?=\s+[A-Z(*$])")
_ERROR_WHERE = re.compile(r"^(docs/\S+?\.md):(\d+): ", re.S)


@dataclass(frozen=True)
class Rule:
    """A rule every page must pass: its name, what it asks, why, how to fix a page that fails it, and its check.

    ``check(site, src_uri)`` gives the page's problems of this rule (:func:`page_problems` calls it);
    ``chapters_only``: the rule is skipped on pages that are not chapters.
    """

    name: str
    asks: str
    reason: str
    fix: str
    check: Callable[[Site, str], list[Problem]]
    chapters_only: bool = False


@dataclass(frozen=True)
class Problem:
    """One failure of a rule: the rule, the page (``docs/...``), the line (None: the page as a whole), what."""

    rule: str
    page: str
    line: int | None
    message: str

    def __post_init__(self) -> None:
        if self.rule not in _RULES:
            raise ValueError(f"rule must be one of {', '.join(_RULES)}, got {self.rule!r}")

    def __str__(self) -> str:
        where = self.page if self.line is None else f"{self.page}:{self.line}"
        return f"{where}: {self.rule}: {self.message}"


def _from_error(rule: str, error: Exception, page: str) -> list[Problem]:
    """A build error (``docs/page.md:12: message``, one a line) as problems of ``rule``."""
    problems = []
    for text in str(error).split("\n"):
        m = _ERROR_WHERE.match(text)
        if m:
            problems.append(Problem(rule, m.group(1), int(m.group(2)), text[m.end() :]))
        elif problems:  # a message's continuation line
            last = problems.pop()
            problems.append(Problem(rule, last.page, last.line, last.message + "\n" + text))
        else:
            problems.append(Problem(rule, page, None, text))
    return problems


# -- chapters ------------------------------------------------------------------------------------
def chapters(docs_dir: Path) -> list[str]:
    """The chapter slugs: the names of ``docs/chapters/*.md`` without ``.md``, sorted.

    >>> "horizon" in chapters(Path("docs"))
    True
    """
    return sorted(p.stem for p in (Path(docs_dir) / CHAPTER_DIR).glob("*.md"))


def chapter_path(docs_dir: Path, slug: str) -> Path:
    """``docs/chapters/<slug>.md``; ValueError naming the slug and listing the chapters if there is none.

    >>> chapter_path(Path("docs"), "dropout").as_posix()
    'docs/chapters/dropout.md'
    """
    path = Path(docs_dir) / CHAPTER_DIR / f"{slug}.md"
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", str(slug)) or not path.is_file():
        raise ValueError(
            f"CH must name a chapter of {Path(docs_dir) / CHAPTER_DIR}, got {slug!r}; "
            f"the chapters are: {', '.join(chapters(docs_dir))}"
        )
    return path


# -- placeholders -------------------------------------------------------------------------------
def placeholder_pieces(sentence: str) -> list[str]:
    """The parts of a placeholder that fail on their own: its sentences, and a lead-in before a colon.

    >>> placeholder_pieces("Replace this paragraph: what is it? Two or three short paragraphs.")
    ['Replace this paragraph:', 'what is it?', 'Two or three short paragraphs.']
    """
    return [p for p in re.split(r"(?<=[.?!:])\s+", " ".join(sentence.split())) if p]


def _words(text: str) -> re.Pattern[str]:
    """``text`` as a pattern whose words may wrap across lines, any case (a sentence may be re-capitalized)."""
    return re.compile(r"\s+".join(re.escape(word) for word in text.split()), re.IGNORECASE)


def placeholder_problems(page: str, markdown: str) -> list[Problem]:
    """Each sentence ``make chapter`` wrote for the author to replace that is still, whole or in part, in the prose.

    The sentences are :data:`rnnmem.site.stub_text.PLACEHOLDERS`; one may wrap
    across lines. A placeholder left whole is reported once; a sentence of it
    (:func:`placeholder_pieces`) kept beside the author's own words is
    reported on its own. In code or in an HTML comment it is not shown, and
    not a problem.

    >>> [str(p) for p in placeholder_problems("docs/index.md", "1. [A](a.md). What the chapter computes,\\n"
    ...                                       "in a sentence.\\n")]
    ['docs/index.md:1: placeholders: "What the chapter computes, in a sentence." is a placeholder']
    >>> [str(p) for p in placeholder_problems("docs/p.md", "# T\\n\\nMine. Two or three short paragraphs.\\n")]
    ['docs/p.md:3: placeholders: "Two or three short paragraphs." is a sentence of a placeholder: "Replace this paragraph: ..."']
    """
    from .stub_text import PLACEHOLDERS

    spans = prose_spans(markdown)
    doc = lex(markdown)
    problems = []
    whole: list[tuple[int, int]] = []
    for sentence in PLACEHOLDERS:
        for m in _words(sentence).finditer(markdown):
            if any(a <= m.start() < b for a, b in spans):
                whole.append((m.start(), m.end()))
                problems.append(Problem("placeholders", page, doc.line_of(m.start()), f'"{sentence}" is a placeholder'))
    for sentence in PLACEHOLDERS:
        pieces = placeholder_pieces(sentence)
        if len(pieces) < 2:
            continue
        shown = sentence if len(sentence) <= 40 else " ".join(sentence.split()[:3]) + " ..."
        for piece in pieces:
            for m in _words(piece).finditer(markdown):
                inside = any(a <= m.start() < b for a, b in whole)
                if not inside and any(a <= m.start() < b for a, b in spans):
                    problems.append(
                        Problem(
                            "placeholders",
                            page,
                            doc.line_of(m.start()),
                            f'"{piece}" is a sentence of a placeholder: "{shown}"',
                        )
                    )
    return sorted(problems, key=lambda p: p.line or 0)


# -- objectives ------------------------------------------------------------------------------------
#: The line that opens a chapter's objectives block (an admonition; a teacher assigns by it).
OBJECTIVES = '!!! abstract "Objectives"'
#: How many objectives a chapter states.
OBJECTIVES_COUNT = (3, 5)


def objectives(markdown: str) -> tuple[int, list[str], str] | None:
    """(line of the block, its bullets, its prerequisites paragraph) of the page's first objectives block, or None.

    >>> objectives('# T\\n\\n!!! abstract "Objectives"\\n    * do a.\\n\\n    **Prerequisites:** none.\\n')
    (3, ['do a.'], 'none.')
    """
    lines = markdown.split("\n")
    starts = [n for n, line in enumerate(lines) if line.strip() == OBJECTIVES]
    if not starts:
        return None
    body = []
    for line in lines[starts[0] + 1 :]:
        if line.strip() and not line.startswith("    "):
            break
        body.append(line[4:])
    text = "\n".join(body)
    bullets = re.findall(r"^\* (.+(?:\n  +.+)*)", text, re.M)
    prerequisites = text.split("**Prerequisites:**", 1)[1].strip() if "**Prerequisites:**" in text else ""
    return starts[0] + 1, [" ".join(b.split()) for b in bullets], prerequisites


def objectives_problems(page: str, markdown: str, src_uri: str, order: list[str]) -> list[Problem]:
    """The chapter's objectives block, checked: one, before the first section, 3 to 5 bullets, its prerequisites.

    Each objective is a verb phrase ("compute ...", lower case, ending with a full stop); the
    ``**Prerequisites:**`` paragraph links only chapters before ``src_uri`` in the reading ``order``, at
    least one unless the chapter is the first, which assumes none.

    >>> for p in objectives_problems("docs/chapters/a.md", "# A\\n\\n## One\\n", "chapters/a.md", []):
    ...     print(p)  # doctest: +ELLIPSIS
    docs/chapters/a.md: objectives: the chapter has no objectives block: write '!!! abstract "Objectives"' ...
    """
    low, high = OBJECTIVES_COUNT
    found = objectives(markdown)
    if found is None:
        return [
            Problem(
                "objectives",
                page,
                None,
                f"the chapter has no objectives block: write '{OBJECTIVES}' before its first section, with "
                f"{low} to {high} objectives and a **Prerequisites:** paragraph",
            )
        ]
    line, bullets, prerequisites = found
    lines = markdown.split("\n")
    problems = []

    def problem(message: str) -> None:
        problems.append(Problem("objectives", page, line, message))

    others = [n for n, text in enumerate(lines, 1) if text.strip() == OBJECTIVES and n != line]
    if others:
        problem(f"the chapter has {len(others) + 1} objectives blocks (also at line {others[0]}); keep one")
    first_section = next((n for n, text in enumerate(lines, 1) if text.startswith("## ")), None)
    if first_section is not None and line > first_section:
        problem(f"the objectives come after the first section (line {first_section}); move them before it")
    if not low <= len(bullets) <= high:
        problem(f"{len(bullets)} objectives, want {low} to {high}, each a bullet '* ...'")
    for bullet in bullets:
        if not (re.match(r"[a-z]+\b", bullet) and bullet.endswith(".")):
            problem(f"an objective is a verb phrase in lower case ending with a full stop, got {bullet!r}")
    if not prerequisites:
        problem(
            "the objectives have no **Prerequisites:** paragraph (the earlier chapters and the mathematics assumed)"
        )
        return problems
    linked = [
        posixpath.normpath(posixpath.join(posixpath.dirname(src_uri), m))
        for m in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", prerequisites)
    ]
    named = [n for n in linked if n.startswith(f"{CHAPTER_DIR}/")]
    earlier = order[: order.index(src_uri)] if src_uri in order else []
    later = [n for n in named if n not in earlier]
    if later:
        problem(f"the prerequisites name {', '.join(later)}, not a chapter before this one; name only earlier chapters")
    if order and src_uri == order[0] and named:
        problem("the first chapter assumes no chapter: its prerequisites name none")
    elif src_uri in order and src_uri != order[0] and not named:
        problem("the prerequisites name no earlier chapter: link the chapters this one builds on")
    return problems


# -- fences ------------------------------------------------------------------------------------
# A Sybil skip comment: "start" and "next" state a reason, as reason="..." (skip: next if(cond, reason="..."))
# or as a quoted string (skip: next "...", shown, not run: rnnmem.site.notebook.SHOWN_ONLY); "end" closes.
_SKIP = re.compile(r"\s*<!--\s*skip\s*:\s*(?P<action>\w*)(?P<rest>.*)")
_SKIP_REASON = re.compile(r'reason\s*=\s*"[^"]+"|^\s+"[^"]+"\s*-->')


def fence_problems(page: str, markdown: str) -> list[Problem]:
    """The page's Python that the tests would not run, and the fences and comments it leaves open.

    Fences are those of :func:`rnnmem.site.markdown.lex`.

    >>> text = '```py\\n>>> 1\\n1\\n```\\n\\n```python title="x"\\nprint(1)\\n```\\n\\n    >>> 2\\n'
    >>> [p.line for p in fence_problems("docs/p.md", text)]
    [1, 6, 10]
    """
    doc = lex(markdown)
    problems = [Problem("fences", page, line, message) for line, message in doc.problems]
    for fence in doc.fences:
        if fence.info != "python" and (
            _PYTHONISH.match(fence.info) or any(b.lstrip().startswith(">>>") for b in fence.body)
        ):
            problems.append(
                Problem(
                    "fences",
                    page,
                    fence.line,
                    f"the fence ```{fence.info} is not run by the tests; write it as ```python (nothing after the word)",
                )
            )
    for prompt_line in doc.loose_prompts():
        problems.append(
            Problem("fences", page, prompt_line, "a >>> prompt outside a ```python fence is shown but never run")
        )
    for n, line in enumerate(markdown.splitlines(), 1):
        if _NUMPY_SCALAR_REPR.search(line) and not line.lstrip().startswith((">>>", "...")):
            problems.append(
                Problem(
                    "fences",
                    page,
                    n,
                    "an expected output shows a numpy scalar repr; print a Python float (float(x), round(x, k))",
                )
            )
        skip = _SKIP.match(line)
        if skip and skip.group("action") != "end" and not _SKIP_REASON.search(skip.group("rest")):
            problems.append(Problem("fences", page, n, "a skipped snippet must state its reason (reason=...)"))
    return sorted(problems, key=lambda p: p.line or 0)


def long_lines(markdown: str, limit: int = MAX_CODE_WIDTH) -> list[tuple[int, int]]:
    """(line number, width) of each line of a ```python block wider than ``limit`` characters.

    The width is the line as shown: without the indentation that nests the block
    in a list or an admonition, tabs counted as the four spaces Markdown makes
    them. Output lines count too: the reader sees them in the same block.

    >>> long_lines("```python\\n>>> x = '" + "a" * 70 + "'\\n```\\n")
    [(2, 80)]
    """
    found = []
    for fence in lex(markdown).fences:
        if fence.info != "python":
            continue
        for offset, line in enumerate(fence.body, start=1):
            width = len(line.rstrip().expandtabs(4))
            if width > limit:
                found.append((fence.line + offset, width))
    return found


def _width_problems(page: str, markdown: str) -> list[Problem]:
    return [
        Problem("code-width", page, line, f"{width} characters, at most {MAX_CODE_WIDTH}")
        for line, width in long_lines(markdown)
    ]


# -- captions and numbers ------------------------------------------------------------------------
def caption_problems(page: str, markdown: str) -> list[Problem]:
    """Captions longer than two sentences (45 words for a figure, 60 for a table), figures without an alt text.

    >>> [p.message for p in caption_problems("docs/p.md", '<!-- figure: f caption="Short." -->\\n')]
    ['a figure needs alt=, its full description, different from its caption']
    """
    problems = []
    for d in find_directives(markdown, page):
        caption = d.args.get("caption")
        if caption is None:
            continue
        sentences = len(_SENTENCE_END.findall(" ".join(caption.split()))) + 1
        # A figure's caption is a statement (its description is the alt text); a table's also names its columns.
        kind = kinds.get(d.kind)
        words = kind.caption_words
        if sentences > 2 or len(caption.split()) > words:
            problems.append(
                Problem(
                    "captions",
                    page,
                    d.line,
                    f"a caption is one or two short sentences ({sentences} sentences, {len(caption.split())} "
                    f"words, at most {words}); the full description of a figure goes to alt=",
                )
            )
        if kind.has_alt:
            alt = d.args.get("alt")
            if not (isinstance(alt, str) and alt.strip() and alt.strip() != caption.strip()):
                problems.append(
                    Problem(
                        "captions",
                        page,
                        d.line,
                        f"a {kind.name} needs alt=, its full description, different from its caption",
                    )
                )
    return problems


def number_problems(page: str, markdown: str, tables: list[str], allow: list[dict]) -> list[Problem]:
    """Every number ``page`` states that nothing on it produces (:func:`rnnmem.site.numbers.check_page`).

    ``tables`` are the page's rendered tables, ``allow`` the entries of the numbers policy.
    """
    from .numbers import check_page

    return [
        Problem("numbers", f.page, f.line, f"{f.number} is not produced on this page: \u2026{f.context}\u2026")
        for f in check_page(markdown, page, tables=tables, allow=allow)
    ]


# -- citations and reference links ---------------------------------------------------------------
def _cite(src_uri: str, markdown: str, entries: dict) -> tuple[list[str], list]:
    """(errors, citations) of a page's author-year citations, linked as the build links them."""
    import markdown as md

    from .citations import CitationError, link_citations

    html = md.markdown(
        markdown,
        extensions=["fenced_code", "attr_list", "md_in_html", "admonition", "pymdownx.arithmatex"],
        extension_configs={"pymdownx.arithmatex": {"generic": True}},
    )
    try:
        _, found = link_citations(
            html, entries, references_url="../references/", page=f"docs/{src_uri}", source=markdown
        )
    except CitationError as exc:
        return str(exc).splitlines(), []
    return [], found


def citation_problems(src_uri: str, markdown: str, docs_dir: Path) -> list[str]:
    """The citations of a page that match no entry of ``references.md``, with page and line.

    >>> citation_problems("chapters/x.md", "As Elman (1990) showed, and Nobody (1901).", Path("docs"))
    ['docs/chapters/x.md:1: "Nobody (1901)" matches no entry of docs/references.md (expected a key nobody1901)']
    """
    from .citations import parse_references

    references = Path(docs_dir) / "references.md"
    if not references.is_file():
        return []
    errors, _ = _cite(src_uri, markdown, parse_references(references.read_text(encoding="utf-8")))
    return errors


def _policy_entries(path: Path, table: str, keys: tuple[str, ...], needs: str, what: str) -> list[dict]:
    """The ``[[table]]`` entries of a policy file, each checked to give every one of ``keys``.

    A file that cannot be read or parsed, or an entry without one of the keys, is a ValueError naming the
    file, the entry and what it needs (``needs`` says what each entry names; ``what`` names the policy).
    """
    import tomllib

    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8")).get(table, [])
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{what} {path} cannot be read: {exc}") from None
    for i, entry in enumerate(entries, 1):
        missing = [k for k in keys if not str(entry.get(k, "")).strip()]
        if missing:
            raise ValueError(f"{path}: [[{table}]] entry {i} needs {', '.join(missing)} ({needs})")
    return entries


def load_no_doi(path: Path = REFERENCES_POLICY) -> dict[str, dict]:
    """The reference policy's ``[[no-doi]]`` entries by key: each names its ``link`` host and a ``reason``.

    >>> load_no_doi()["hochreiter1991"]["link"]
    'people.idsia.ch'
    """
    path = Path(path)
    entries = _policy_entries(
        path,
        "no-doi",
        ("key", "link", "reason"),
        "each names the entry's key, the site its link goes to, and why the work has no DOI or arXiv id",
        "the reference policy",
    )
    out: dict[str, dict] = {}
    for i, entry in enumerate(entries, 1):
        if entry["key"] in out:
            raise ValueError(f"{path}: [[no-doi]] entry {i} repeats the key {entry['key']!r}")
        out[entry["key"]] = entry
    return out


def _entry_blocks(references_markdown: str) -> dict[str, tuple[int, str]]:
    """key -> (line, text up to the next blank line) of each entry of ``references.md``."""
    blocks = {}
    for m in _ENTRY_ANCHOR.finditer(references_markdown):
        end = references_markdown.find("\n\n", m.start())
        block = references_markdown[m.start() : end if end != -1 else len(references_markdown)]
        blocks[m.group(1)] = (references_markdown.count("\n", 0, m.start()) + 1, block)
    return blocks


def reference_link_problems(
    references_markdown: str, keys: list[str], no_doi: dict[str, dict], *, cited_by: str = ""
) -> list[Problem]:
    """The entries among ``keys`` that link to the work by neither a DOI nor an arXiv id (nor as the policy allows).

    Reported on ``docs/references.md`` at the entry's line; ``cited_by`` names the citing page.

    >>> refs = '<a id="a2000"></a>\\n**A (2000).** T. [x](https://example.org/a).\\n'
    >>> [str(p) for p in reference_link_problems(refs, ["a2000"], {})]  # doctest: +ELLIPSIS
    ['docs/references.md:1: reference-links: the entry a2000 links to no DOI ... nor arXiv abstract ...']
    """
    blocks = _entry_blocks(references_markdown)
    problems = []
    for key in dict.fromkeys(keys):
        if key not in blocks:
            continue  # no such entry: the rule "citations" reports it
        line, block = blocks[key]
        if _WORK_LINK.search(block):
            continue
        exempt = no_doi.get(key)
        if exempt and any(f"](https://{w}{exempt['link']}" in block for w in ("", "www.")):
            continue
        if exempt:
            message = f"the entry {key} has no link to {exempt['link']}, the one the reference policy allows it"
        else:
            message = (
                f"the entry {key} links to no DOI (https://doi.org/10.…) nor arXiv abstract (https://arxiv.org/abs/…)"
            )
        if cited_by:
            message += f" (cited by {cited_by})"
        problems.append(Problem("reference-links", "docs/references.md", line, message))
    return problems


def _policy_problems(references_markdown: str, no_doi: dict[str, dict]) -> list[Problem]:
    """Policy entries that name no entry, or an entry that now has a DOI or arXiv link."""
    blocks = _entry_blocks(references_markdown)
    problems = []
    for key in no_doi:
        if key not in blocks:
            problems.append(
                Problem(
                    "reference-links",
                    "docs/references.md",
                    None,
                    f"{REFERENCES_POLICY.name} lists {key!r}, which is no entry here; remove it from the policy",
                )
            )
        elif _WORK_LINK.search(blocks[key][1]):
            problems.append(
                Problem(
                    "reference-links",
                    "docs/references.md",
                    blocks[key][0],
                    f"the entry {key} has a DOI or arXiv link now; remove it from {REFERENCES_POLICY.name}",
                )
            )
    return problems


# -- links and anchors -----------------------------------------------------------------------------
def _outside_fences(markdown: str):
    """(line number, line) of every line outside fenced code: the fences of :func:`rnnmem.site.markdown.lex`."""
    doc = lex(markdown)
    for number, line in enumerate(markdown.split("\n"), 1):
        if not doc.in_fence(number):
            yield number, line


def page_anchors(markdown: str) -> set[str]:
    """Every anchor a page defines: its headings' (made unique as ``toc`` does) and explicit ids.

    >>> sorted(page_anchors("# A b\\n\\n## Exercises\\n\\n## Exercises\\n\\n<a id='x1'></a>\\n"))
    ['a-b', 'exercises', 'exercises_1', 'x1']
    """
    anchors: set[str] = set()
    for _, line in _outside_fences(markdown):
        m = _HEADING.match(line)
        if m:
            explicit = _ATTR_ID.search(m.group(2))
            if explicit:
                anchors.add(explicit.group(1))
                continue
            slug, base, k = heading_anchor(m.group(2)), heading_anchor(m.group(2)), 0
            while slug in anchors:
                k += 1
                slug = f"{base}_{k}"
            anchors.add(slug)
        anchors.update(_HTML_ID.findall(line))
        explicit = _ATTR_ID.search(line)
        if explicit:
            anchors.add(explicit.group(1))
    return anchors


def page_links(markdown: str) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link outside code, images left out.

    >>> page_links("See [a](x.md#y) and `[b](z.md)`.\\n```\\n[c](w.md)\\n```\\n")
    [(1, 'x.md#y')]
    """
    found = []
    for number, line in _outside_fences(markdown):
        line = re.sub(r"`[^`]*`", "", line)
        found += [(number, m.group(1)) for m in _LINK.finditer(line)]
    return found


def _site_pages(docs_dir: Path) -> dict[str, str | None]:
    """Site path -> Markdown (None where the anchors cannot be read, e.g. notebooks and API pages)."""
    pages: dict[str, str | None] = {}
    for path in sorted(docs_dir.rglob("*")):
        if path.is_file():
            rel = path.relative_to(docs_dir).as_posix()
            pages[rel] = path.read_text(encoding="utf-8") if path.suffix == ".md" else None
    for page in apipages.api_pages():
        pages.setdefault(page.path, None)
    return pages


def link_problems(src_uri: str, markdown: str, pages: dict[str, str | None]) -> tuple[list[Problem], int]:
    """(problems, internal links checked) of a page's links; ``pages`` as :func:`_site_pages` gives them."""
    where = f"docs/{src_uri}"
    problems, count = [], 0
    for line, target in page_links(markdown):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("//"):
            continue  # another site (the build's own validation covers absolute links)
        count += 1
        path, _, anchor = target.partition("#")
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(src_uri), path)) if path else src_uri
        if path and resolved not in pages:
            problems.append(Problem("links", where, line, f"link to {target!r}: docs/{resolved} does not exist"))
            continue
        text = markdown if resolved == src_uri else pages.get(resolved)
        if anchor and text is not None and anchor not in page_anchors(text):
            problems.append(
                Problem("links", where, line, f"link to {target!r}: docs/{resolved} has no heading or id {anchor!r}")
            )
    return problems, count


# -- forward links -----------------------------------------------------------------------------------
def load_forward_links(path: Path = FORWARD_POLICY) -> dict[tuple[str, str], dict]:
    """The forward-link policy's ``[[ahead]]`` entries by (page, target): each gives its ``reason``.

    ``page`` is the chapter (``docs/chapters/...md``), ``target`` the link as written on it.

    >>> ("docs/chapters/horizon.md", "memory-measured.md#success-against-lag") in load_forward_links()
    True
    """
    path = Path(path)
    entries = _policy_entries(
        path,
        "ahead",
        ("page", "target", "reason"),
        "each names the chapter, the link as written on it, and why the chapter is complete without what "
        "the link points to",
        "the forward-link policy",
    )
    out: dict[tuple[str, str], dict] = {}
    for i, entry in enumerate(entries, 1):
        key = (entry["page"], entry["target"])
        if key in out:
            raise ValueError(f"{path}: [[ahead]] entry {i} repeats the link {entry['target']!r} of {entry['page']}")
        out[key] = entry
    return out


def forward_links(src_uri: str, markdown: str, order: list[str]) -> list[tuple[int, str]]:
    """(line, target) of each link from the chapter ``src_uri`` to a chapter after it in ``order``.

    ``order`` is the chapters' reading order (:func:`rnnmem.site.config.chapters`).

    >>> order = ["chapters/a.md", "chapters/b.md"]
    >>> forward_links("chapters/a.md", "See [b](b.md#x), [a](a.md) and [home](../index.md).", order)
    [(1, 'b.md#x')]
    """
    if src_uri not in order:
        return []
    here = order.index(src_uri)
    found = []
    for line, target in page_links(markdown):
        path = target.partition("#")[0]
        if not path or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(src_uri), path))
        if resolved in order and order.index(resolved) > here:
            found.append((line, target))
    return found


def forward_link_problems(
    src_uri: str, markdown: str, order: list[str], allowed: dict[tuple[str, str], dict]
) -> list[Problem]:
    """The page's forward links the policy does not list, and the policy's entries for it that match no link."""
    where = f"docs/{src_uri}"
    links = forward_links(src_uri, markdown, order)
    problems = [
        Problem(
            "forward-links",
            where,
            line,
            f"link to {target!r} points ahead, to a later chapter, and the forward-link policy does not list it",
        )
        for line, target in links
        if (where, target) not in allowed
    ]
    written = {target for _, target in links}
    problems += [
        Problem(
            "forward-links",
            where,
            None,
            f"the forward-link policy lists {target!r}, which this page no longer links ahead to; remove the entry",
        )
        for page, target in allowed
        if page == where and target not in written
    ]
    return problems


# -- notebooks ---------------------------------------------------------------------------------------
_NOT_PROSE = ("<", "```", "~~~", "$$", "|", "#", "!!!", "???", "===", "*", "-", "+", ">")


def _first_paragraph(markdown: str) -> tuple[int, str] | None:
    """(line, text) of the page's first paragraph of plain prose after its title, or None.

    Plain: outside code and comments, not a heading, list, table, quote, admonition, math
    block or HTML, and without a placeholder (whose value is the arithmetic's).
    """
    doc = lex(markdown)
    titles = [h.line for h in doc.headings if h.level == 1]
    commented = [(doc.line_of(c.start), doc.line_of(max(c.start, c.end - 1))) for c in doc.comments]
    lines = markdown.split("\n")
    n = titles[0] if titles else 0
    while n < len(lines):
        if not lines[n].strip():
            n += 1
            continue
        start = n
        while n < len(lines) and lines[n].strip():
            n += 1
        paragraph = "\n".join(lines[start:n])
        first = start + 1
        if (
            doc.in_code(first)
            or any(a <= first <= b for a, b in commented)
            or paragraph.lstrip().startswith(_NOT_PROSE)
            or re.match(r"\s*\d+[.)]\s", paragraph)
            or "{{" in paragraph
        ):
            continue
        return first, paragraph
    return None


def notebook_prose_problems(book: Book, src_uri: str, notebook_text: str | None = None) -> list[Problem]:
    """Whether the notebook of a chapter carries its ``##`` headings and its first paragraph.

    ``notebook_text`` is the notebook as the build makes it (made here when
    not given; a notebook that cannot be made is the rule ``notebook``'s).

    Each is compared as the notebook writes it: references as plain text
    ("Chapter 3", :meth:`rnnmem.site.numbering.Numbering.block_references`),
    links made absolute (:func:`rnnmem.site.notebook.prose_markdown`), white
    space as it falls.
    """
    from .notebook import prose_markdown

    page = book.pages[src_uri]
    where = f"docs/{src_uri}"
    if notebook_text is None:
        try:
            notebook_text = book.notebook_text(page)
        except DirectiveError:
            return []  # the rule "notebook" reports it
    cells = json.loads(notebook_text).get("cells", [])
    sources = [c.get("source", "") for c in cells if c.get("cell_type") == "markdown"]
    prose = " ".join(" ".join(("".join(s) if isinstance(s, list) else s).split()) for s in sources)
    url = posixpath.splitext(src_uri)[0] + "/"
    page_url = (book.site_url.rstrip("/") + "/" + url) if book.site_url else url
    site_url = book.site_url.rstrip("/") + "/" if book.site_url else ""

    def as_written(text: str, line: int) -> str:
        text = book.numbering().block_references(src_uri, text, line, plain=True)
        return " ".join(prose_markdown(text, page_url=page_url, site_url=site_url).split())

    wanted = [(h.line, "the heading", f"## {h.text}") for h in lex(page.markdown).headings if h.level == 2]
    first = _first_paragraph(page.markdown)
    if first is not None:
        wanted.append((first[0], "the first paragraph", first[1]))
    problems = []
    for line, what, text in sorted(wanted):
        try:
            expected = as_written(text, line)
        except DirectiveError:
            continue  # a broken reference: the rule "cross-references" reports it
        if expected not in prose:
            shown = expected if len(expected) <= 70 else expected[:67] + "..."
            problems.append(
                Problem(
                    "notebook-prose",
                    where,
                    line,
                    f"{what} is not in the notebook {book.notebook_path(page)}, which should read: {shown!r}",
                )
            )
    return problems


# -- one page, every rule ----------------------------------------------------------------------------
class Site:
    """The book's pages and policies, read once, for the page rules.

    Every page of ``docs/`` is read (the references and the numbering read the
    whole book); a page whose directives cannot be parsed is left out of the
    book, and the rule ``directives`` reports it when that page is checked.
    """

    def __init__(self, config_file: Path = Path("mkdocs.yml"), *, cache_dir: Path | None = None) -> None:
        from .citations import parse_references
        from .numbers import load_allowlist

        settings = load_mkdocs_settings(Path(config_file))
        self.docs_dir = Path(settings["docs_dir"])
        self.book = Book(
            self.docs_dir, repo_url=settings["repo_url"], site_url=settings["site_url"], cache_dir=cache_dir
        )
        self.broken: dict[str, DirectiveError] = {}
        self.sources: dict[str, str] = {}
        for path in sorted(self.docs_dir.rglob("*.md")):
            rel = path.relative_to(self.docs_dir).as_posix()
            self.sources[rel] = path.read_text(encoding="utf-8")
            try:
                self.book.add_page(rel, self.sources[rel])
            except DirectiveError as exc:
                self.broken[rel] = exc
        self.references = self.sources.get("references.md", "")
        self.entries = parse_references(self.references)
        self.allow = load_allowlist()
        self.no_doi = load_no_doi()
        self.ahead = load_forward_links()
        self.order = config.chapters(Path(config_file))
        self._pages: dict[str, str | None] | None = None
        self._notebooks: dict[str, str] = {}
        # The builder modules, imported once: one that fails to import, or that claims a name another
        # builder has, is a problem of the rule "directives" (builder_problems), not a traceback; the
        # other modules' builders are loaded all the same, so every other rule still runs.
        try:
            self.book.renderer.builders.load_builders()
        except BuilderImportError:
            pass

    def notebook(self, src_uri: str) -> str:
        """The chapter's notebook as the build makes it (made once); raises the build's DirectiveError."""
        if src_uri not in self._notebooks:
            self._notebooks[src_uri] = self.book.notebook_text(self.book.pages[src_uri])
        return self._notebooks[src_uri]

    @property
    def pages(self) -> dict[str, str | None]:
        if self._pages is None:
            self._pages = _site_pages(self.docs_dir)
        return self._pages

    def builder_problems(self, src_uri: str) -> list[Problem]:
        """The builder modules that failed to import or to register a builder, at their file and line; and
        each directive of the page that names a builder whose name two modules claim, at its line."""
        from .traces import _shown

        failures = sorted(self.book.renderer.builders.failures.values(), key=lambda f: f.module)
        problems = [Problem("directives", _shown(f.path), f.line, f.message) for f in failures]
        page = self.book.pages.get(src_uri)
        for f in failures:
            if f.clash is None or page is None:
                continue
            kind, name = f.clash
            for d in page.directives:
                if (d.kind, d.name) == (kind, name):
                    problems.append(
                        Problem(
                            "directives",
                            f"docs/{src_uri}",
                            d.line,
                            f"this directive names the {kind} builder {name!r}, which two modules define: {f.message}",
                        )
                    )
        return problems

    def render(self, src_uri: str) -> list[Problem]:
        """Render the page's directives (through the cache); the ones that fail, as problems of ``directives``."""
        if src_uri in self.broken:
            return _from_error("directives", self.broken[src_uri], f"docs/{src_uri}")
        page = self.book.pages[src_uri]
        if len(page.items) != len(page.directives):
            page.items = self.book.renderer.render_all(page.directives, keep_going=True)
        problems = []
        for item in page.items:
            if isinstance(item, DirectiveError):
                problems += _from_error("directives", item, f"docs/{src_uri}")
        return problems


def _rule_placeholders(site: Site, src_uri: str) -> list[Problem]:
    problems = placeholder_problems(f"docs/{src_uri}", site.sources[src_uri])
    if site.book.pages.get(src_uri) is not None and site.book.pages[src_uri].is_chapter:
        # The chapter's entry on the home page is written by `make chapter` too.
        index = site.sources.get("index.md", "")
        entry = re.compile(rf"\]\({re.escape(src_uri)}\)")
        problems += [
            p
            for p in placeholder_problems("docs/index.md", index)
            if entry.search(index.split("\n")[(p.line or 1) - 1])
        ]
    return problems


def _rule_numbers(site: Site, src_uri: str) -> list[Problem]:
    from .numbers import NOT_CHECKED

    if src_uri in NOT_CHECKED or src_uri in site.broken:
        return []
    page = site.book.pages[src_uri]
    site.render(src_uri)
    tables = [
        item.content.decode()
        for directive, item in zip(page.directives, page.items)
        if kinds.get(directive.kind).states_numbers and not isinstance(item, DirectiveError)
    ]
    return number_problems(f"docs/{src_uri}", site.sources[src_uri], tables, site.allow)


def _rule_cross_references(site: Site, src_uri: str) -> list[Problem]:
    if src_uri in site.broken:
        return []
    try:
        site.book.numbering().edits(src_uri, site.sources[src_uri])
    except DirectiveError as exc:
        return _from_error("cross-references", exc, f"docs/{src_uri}")
    return []


def _skips_citations(src_uri: str) -> bool:
    return src_uri == "references.md" or src_uri.startswith("api/")  # as the build (rnnmem.site.reader)


def _rule_citations(site: Site, src_uri: str) -> list[Problem]:
    if _skips_citations(src_uri) or not site.entries:
        return []
    errors, _ = _cite(src_uri, site.sources[src_uri], site.entries)
    return [p for e in errors for p in _from_error("citations", ValueError(e), f"docs/{src_uri}")]


def _rule_reference_links(site: Site, src_uri: str) -> list[Problem]:
    if src_uri == "references.md":
        return reference_link_problems(site.references, list(_entry_blocks(site.references)), site.no_doi) + (
            _policy_problems(site.references, site.no_doi)
        )
    if _skips_citations(src_uri) or not site.entries:
        return []
    _, found = _cite(src_uri, site.sources[src_uri], site.entries)
    return reference_link_problems(site.references, [c.key for c in found], site.no_doi, cited_by=f"docs/{src_uri}")


def _rule_links(site: Site, src_uri: str) -> list[Problem]:
    problems, _ = link_problems(src_uri, site.sources[src_uri], site.pages)
    return problems


def _rule_notebook(site: Site, src_uri: str) -> list[Problem]:
    if site.render(src_uri) or src_uri in site.broken:
        return []  # the notebook holds the rendered items: the rule "directives" reports why there are none
    try:
        site.notebook(src_uri)
    except NumberingError:
        return []  # a broken reference: the rule "cross-references" reports it
    except DirectiveError as exc:
        return _from_error("notebook", exc, f"docs/{src_uri}")
    return []


def _rule_notebook_prose(site: Site, src_uri: str) -> list[Problem]:
    if src_uri in site.broken or site.render(src_uri):
        return []
    try:
        text = site.notebook(src_uri)
    except DirectiveError:
        return []  # the rule "notebook" (or "cross-references") reports it
    return notebook_prose_problems(site.book, src_uri, text)


def _rule_fences(site: Site, src_uri: str) -> list[Problem]:
    return fence_problems(f"docs/{src_uri}", site.sources[src_uri])


def _rule_code_width(site: Site, src_uri: str) -> list[Problem]:
    return _width_problems(f"docs/{src_uri}", site.sources[src_uri])


def _rule_directives(site: Site, src_uri: str) -> list[Problem]:
    return site.builder_problems(src_uri) + site.render(src_uri)


def _rule_captions(site: Site, src_uri: str) -> list[Problem]:
    return [] if src_uri in site.broken else caption_problems(f"docs/{src_uri}", site.sources[src_uri])


def _rule_forward_links(site: Site, src_uri: str) -> list[Problem]:
    return forward_link_problems(src_uri, site.sources[src_uri], site.order, site.ahead)


def _rule_objectives(site: Site, src_uri: str) -> list[Problem]:
    return objectives_problems(f"docs/{src_uri}", site.sources[src_uri], src_uri, site.order)


def _rule_exercises(site: Site, src_uri: str) -> list[Problem]:
    return [
        Problem("exercises", f"docs/{src_uri}", line, message)
        for line, message in exercise_problems(site.sources[src_uri])
    ]


#: Every page rule, in the order ``make test-chapter`` reports them (CONTRIBUTING.md lists them so).
RULES: tuple[Rule, ...] = (
    Rule(
        "placeholders",
        "no sentence `make chapter` wrote for you to replace is left on the page or in its home entry, whole "
        "or any sentence of it",
        "a placeholder would be published as the chapter's text (and its meta description)",
        "replace the sentence with the chapter's own words",
        _rule_placeholders,
    ),
    Rule(
        "fences",
        "every block of Python is fenced ```python, with no >>> outside a fence, no fence or comment left "
        "open, no numpy scalar repr in an output, and a reason for each skip",
        "the tests run only ```python fences: any other Python is shown but never checked",
        "write the fence as ```python with nothing after the word, close what is open, print Python "
        "floats (round, float) instead of numpy scalars, and give a skip its reason",
        _rule_fences,
    ),
    Rule(
        "code-width",
        f"no line of a ```python block is wider than {MAX_CODE_WIDTH} characters",
        "a wider line scrolls sideways in the page's code column (narrower still inside an exercise's answer)",
        f"wrap the line (parentheses, one argument a line) so it fits in {MAX_CODE_WIDTH} characters",
        _rule_code_width,
    ),
    Rule(
        "directives",
        "every figure and table directive renders, and every builder module imports and has names of its own",
        "the build stops on a directive that does not, and on a builder module that fails to import",
        "correct the directive's name or arguments, or the builder it names, or the builder module at the "
        "file and line the message gives (a syntax error, a name another builder has)",
        _rule_directives,
    ),
    Rule(
        "captions",
        "a caption is one or two short sentences, and a figure has an alt text different from its caption",
        "readers who cannot see the figure get its full description from alt=",
        "shorten the caption and put the full description into alt=",
        _rule_captions,
    ),
    Rule(
        "numbers",
        "every number the prose, a heading, a caption or an alt text states is produced on the page",
        "a typed number goes stale when the code changes; a computed one cannot",
        "print it in a snippet, show it in a live table, or fill it in with a placeholder {{id.value}}; a "
        "number quoted from a paper goes, with its reason, into src/rnnmem/site/policy/numbers.toml",
        _rule_numbers,
    ),
    Rule(
        "cross-references",
        "every @fig:, @tab:, @eq: and @ch: reference names a target, and every id is unique",
        "the build numbers the targets and links the references; a missing one stops it",
        "correct the id, or give the figure, table or equation that id",
        _rule_cross_references,
    ),
    Rule(
        "citations",
        "every author-year citation matches an entry of docs/references.md",
        "the build links each citation to its entry and stops on one that has none",
        "add the entry to docs/references.md (anchor: first author's surname and year), or correct the citation",
        _rule_citations,
    ),
    Rule(
        "reference-links",
        "every entry the page cites links to the work by DOI (https://doi.org/10....) or arXiv "
        "(https://arxiv.org/abs/...)",
        "a DOI or an arXiv id outlives the publisher's pages",
        "add the DOI or arXiv link to the entry; a work that has neither goes, with its link and a reason, "
        "into src/rnnmem/site/policy/references.toml",
        _rule_reference_links,
    ),
    Rule(
        "links",
        "every internal link resolves to a page of the site, and every #anchor to a heading or an id on it",
        "the strict build refuses a broken link",
        "correct the path (relative to the page, ending in .md) or the anchor",
        _rule_links,
    ),
    Rule(
        "forward-links",
        "a chapter links to a later chapter only where src/rnnmem/site/policy/forward_links.toml lists the "
        "link as a pointer ahead, with its reason",
        "a student reads the chapters in order: no chapter may need a definition that only a later one gives",
        "define what the page uses on the page or in an earlier chapter; a link that only points ahead (to where "
        "a result is measured or developed further, the page complete without it) goes, with its reason, into "
        "src/rnnmem/site/policy/forward_links.toml",
        _rule_forward_links,
        chapters_only=True,
    ),
    Rule(
        "notebook",
        "the chapter's notebook (built with the site as downloads/<chapter>.ipynb) can be made",
        "the download and the Colab link serve that notebook",
        "fix what the message names (a placeholder or reference the notebook cannot write)",
        _rule_notebook,
        chapters_only=True,
    ),
    Rule(
        "notebook-prose",
        "the notebook carries the chapter's prose: every ## heading and the first paragraph",
        "the notebook is the chapter to read, not only its code",
        "the notebook writer (rnnmem.site.notebook) drops that text: keep the heading or paragraph "
        "plain Markdown, or fix the writer",
        _rule_notebook_prose,
        chapters_only=True,
    ),
    Rule(
        "exercises",
        "every exercise opens with its tag (**Routine.**, **Conceptual.**, **Coding.** or **Project.**) and has "
        f"one answer; a coding exercise has a starter before its answer and a check after it that calls rnnmem; "
        f"the chapter sets "
        f"at least {MIN_CODING} coding exercises",
        "a teacher picks homework by its tag, and the student's notebook (the chapter without the answers) "
        "keeps each coding exercise's starter and check, so the check meets the student's own code",
        "tag the exercise; for a coding exercise, put a ```python starter (a function or class that raises "
        "NotImplementedError) before the answer and a ```python check (an assert against rnnmem) after it; "
        "rnnmem.site.exercises shows the format",
        _rule_exercises,
        chapters_only=True,
    ),
    Rule(
        "objectives",
        f"the chapter opens with one {OBJECTIVES} block before its first section: {OBJECTIVES_COUNT[0]} to "
        f"{OBJECTIVES_COUNT[1]} objectives, each a verb phrase, then a **Prerequisites:** paragraph linking only "
        "earlier chapters (none for the first chapter, at least one for any other)",
        "a student sees what the chapter teaches and assumes, and a teacher assigns by them",
        f"write the block after the opening paragraphs: '{OBJECTIVES}', an indented 'After this chapter you "
        "can:' and bullets '* compute ....', then '**Prerequisites:** [Chapter](slug.md) (what of it); the "
        "mathematics assumed.'",
        _rule_objectives,
        chapters_only=True,
    ),
)
_RULES = {r.name: r for r in RULES}


def page_problems(site: Site, src_uri: str, rules: list[str] | None = None) -> list[Problem]:
    """Every problem of the page ``docs/<src_uri>`` under ``rules`` (default: all of :data:`RULES`), rule by rule.

    A rule for chapters only (the notebook's) is skipped on other pages. ValueError names an unknown rule.
    """
    names = list(_RULES) if rules is None else list(rules)
    unknown = [n for n in names if n not in _RULES]
    if unknown:
        raise ValueError(f"rules must be names of RULES ({', '.join(_RULES)}), got {unknown!r}")
    if src_uri not in site.sources:
        raise ValueError(f"src_uri must name a page of {site.docs_dir}, got {src_uri!r}")
    page = site.book.pages.get(src_uri)
    chapter = page.is_chapter if page is not None else src_uri.startswith(f"{CHAPTER_DIR}/")
    problems = []
    for name in names:
        rule = _RULES[name]
        if rule.chapters_only and not chapter:
            continue
        problems += rule.check(site, src_uri)
    return problems


# -- the check of one chapter ------------------------------------------------------------------------
@dataclass
class ChapterReport:
    """What :func:`check_chapter` found: problems (each naming rule, page and line) and what it checked."""

    slug: str
    problems: list[Problem] = field(default_factory=list)
    directives: int = 0
    rendered: int = 0
    links: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def check_chapter(slug: str, config_file: Path = Path("mkdocs.yml")) -> ChapterReport:
    """Every rule of :data:`RULES` on ``docs/chapters/<slug>.md``. The snippets are Sybil's (``make test-chapter``)."""
    settings = load_mkdocs_settings(Path(config_file))
    path = chapter_path(Path(settings["docs_dir"]), slug)
    site = Site(config_file)
    src_uri = path.relative_to(site.docs_dir).as_posix()
    report = ChapterReport(slug)
    report.problems = page_problems(site, src_uri)
    page = site.book.pages.get(src_uri)
    report.directives = len(page.directives) if page is not None else 0
    report.rendered = len(site.book.renderer.rendered)
    report.links = link_problems(src_uri, site.sources[src_uri], site.pages)[1]
    return report


def nav_chapters(config_file: Path = Path("mkdocs.yml")) -> list[tuple[str, str]]:
    """(title, path) of each entry of the navigation's chapters section, in order (:mod:`rnnmem.site.config`)."""
    return config.chapter_entries(config.read(config_file).get("nav"))


def home_chapters(index_markdown: str) -> list[tuple[str, str]]:
    """(title, path) of each numbered link in the home page's section :data:`HOME_SECTION`.

    >>> home_chapters("## The chapters, in reading order\\n\\n1. [A](chapters/a.md). Text.\\n\\n## Next\\n")
    [('A', 'chapters/a.md')]
    """
    m = re.search(rf"^##\s+{re.escape(HOME_SECTION)}\s*$(.*?)(?=^##\s|\Z)", index_markdown, re.M | re.S)
    if not m:
        return []
    return re.findall(r"^\d+\.\s+\[([^\]]+)\]\(([^)]+)\)", m.group(1), re.M)


def report_text(report: ChapterReport) -> str:
    """The problems rule by rule, in the order of :data:`RULES`, each rule's with its fix after them."""
    out = []
    for rule in RULES:
        mine = [p for p in report.problems if p.rule == rule.name]
        if mine:
            out += [str(p) for p in mine]
            out.append(f"  how to fix ({rule.name}): {rule.fix}")
    return "\n".join(out)


def run_check(args, parser) -> int:
    """``python -m rnnmem.site check CHAPTER``: 0 when the chapter passes, 1 on problems, 2 on a bad name."""
    import sys
    import time

    start = time.perf_counter()
    try:
        report = check_chapter(args.chapter, args.config)
    except ValueError as exc:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog} check: error: {exc}", file=sys.stderr)
        return 2
    if report.problems:
        print(report_text(report), file=sys.stderr)
    failed = sorted({p.rule for p in report.problems}, key=list(_RULES).index)
    status = f"FAILED ({', '.join(failed)})" if failed else "ok"
    print(
        f"docs/chapters/{report.slug}.md: {status}: {len(RULES)} rules; {report.directives} directives "
        f"({report.rendered} rendered, the rest from the cache), {report.links} internal links and anchors; "
        f"{time.perf_counter() - start:.1f} s"
    )
    return 1 if report.problems else 0

"""Every number a page states must be produced on that page.

A number in a page's prose, headings, figure captions or alt text is *stated*;
it is *produced* when something on the same page computes or fixes it:

* a code block, in its source or its printed output (Sybil checks the output);
* a live table's cells (rendered by its builder);
* a directive's arguments (the inputs of a figure or table);
* a placeholder, ``{{id.value}}``, filled from a builder's values at build time
  (its text is never checked: it is live by construction).

A stated number matches a produced one when they agree to the digits it is
written with (``0.57`` matches ``0.5731``; ``57.3%`` matches ``0.573``;
``4.3 × 10⁻⁵`` and ``$4.3\\times10^{-5}$`` match ``4.317e-05``). Some numbers
are not claims and are allowed without a source: whole numbers 0 to 9 (the
"1" of $1 - f$, "two layers"), years in a citation ("(1997)", "Hochreiter
1991", "et al. 2018"), section, chapter, figure, table and equation numbers
("§10.2.2", "Figure 4.2"), list markers. Anything else is listed, unless the
reviewed allow-list (:data:`ALLOWLIST`, ``src/rnnmem/site/policy/numbers.toml``)
names it for that page with a reason (a figure quoted from a paper, say). The
same file lists the pages not checked at all (:data:`NOT_CHECKED`: the
references, whose numbers are volumes and pages, and the instructors' page,
whose numbers are a teaching plan's).

This is the rule ``numbers`` of :mod:`rnnmem.site.check`, which ``make
test-chapter`` runs on a chapter and the test suite on every page; ``python -m
rnnmem.site numbers [PAGE ...]`` runs it alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .directives import Directive, find_directives
from .markdown import lex, prose_spans
from .placeholders import PLACEHOLDER

__all__ = [
    "ALLOWLIST",
    "NOT_CHECKED",
    "Finding",
    "Number",
    "check_page",
    "load_allowlist",
    "load_not_checked",
    "parse_numbers",
    "produced_numbers",
    "stated_numbers",
]

#: The reviewed policy of the rule: the numbers allowed without a source, and the pages not checked.
ALLOWLIST = Path(__file__).resolve().parent / "policy" / "numbers.toml"

_SUPER = {c: d for c, d in zip("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")}
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
#: A number in text: TeX or Unicode scientific notation first, then a plain (possibly 1,000-grouped) one.
_TOKEN = re.compile(
    r"(?P<mant>\d+(?:\.\d+)?)\s*(?:\\times|\\cdot|×|·)\s*10\s*\^\s*\{?\s*(?P<exp>[−-]?\s*\d+)\s*\}?"
    r"|(?P<umant>\d+(?:\.\d+)?)\s*×\s*10(?P<uexp>[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)"
    r"|(?<![\w.^])10\s*\^\s*\{?\s*(?P<pexp>[−-]?\s*\d+)\s*\}?"
    r"|(?<![\w.])(?P<emant>\d+(?:\.\d+)?)[eE](?P<eexp>[-+]?\d+)\b"
    r"|(?<![\w.,])(?P<plain>" + _NUM + r")(?P<pct>\s*(?:%|\\%|percent))?"
)
#: Numbers in code: 1e-4, 30_010_000, 0.5, 1,000 in printed output.
_CODE_NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d_])|"
    r"\d[\d_]*(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)"
)
_YEAR = r"(?:19[0-9]{2}|20[0-3][0-9])[a-z]?"
_ALLOWED_CONTEXT = re.compile(
    r"\(\s*(?:[^()]{0,80}?,\s*)?" + _YEAR + r"\s*(?:[;,][^()]{0,80})?\)"  # (1997), (Gal, 2016; ...)
    r"|(?:et\s+al\.?,?|[A-Z][A-Za-z'’\-]+,?)\s+\(?"
    + _YEAR  # Hochreiter 1991, et al. 2018
    + r"|§\s*\d+(?:\.\d+)*(?:\s*[–-]\s*\d+(?:\.\d+)*)?"  # §10.2.2, §3.1–3.3
    r"|(?:Section|Sections|Chapter|Chapters|Figure|Figures|Table|Tables|Equation|Equations|Eq\.|Eqs\.|"
    r"Exercise|Exercises|Step)\s+\(?\d+(?:\.\d+)*\)?(?:\s*(?:and|to|–|-)\s*\(?\d+(?:\.\d+)*\)?)?"
    r"|arXiv:\s*\d{4}\.\d{4,5}"
)
_STRIP = [
    re.compile(r"\]\([^)]*\)"),  # link targets: [text](target)
    re.compile(r"<[^>]+>"),  # HTML tags and their attributes
    re.compile(r"\{\s*[#.:][^}]*\}"),  # attribute lists {#id .class}
    re.compile(r":[a-z0-9-]+(?:-[a-z0-9]+)*:"),  # icons and emoji shortcodes
    re.compile(r"\\?@(?:fig|tab|eq|ch):[\w-]+|\\label\{[^}]*\}"),  # references and labels (rnnmem.site.numbering)
]
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]\s+)?\d{1,3}[.)]\s")
_BLOCK_PREFIX = re.compile(r"^\s*(?:(?:!!!|\?\?\?\+?|===)\s+\S+)?")


@dataclass(frozen=True)
class Number:
    """A number as written: its value and how far it may be from a produced value and still match it."""

    text: str
    value: float
    tolerance: float
    percent: bool = False

    def matches(self, produced: float) -> bool:
        eps = 1e-9 * max(1.0, abs(self.value))
        if abs(abs(produced) - self.value) <= self.tolerance + eps:
            return True
        return self.percent and abs(abs(produced) * 100 - self.value) <= self.tolerance + eps


@dataclass(frozen=True)
class Finding:
    """A stated number nothing on its page produces."""

    page: str
    line: int
    number: str
    context: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.number} is not produced on this page: \u2026{self.context}\u2026"


def _decimals(text: str) -> int:
    return len(text.split(".", 1)[1]) if "." in text else 0


def parse_numbers(text: str) -> list[tuple[int, Number]]:
    """(offset, number) for every number written in ``text`` (prose, TeX or Unicode).

    >>> [(n.text, n.value) for _, n in parse_numbers(r"crosses $10^{-4}$ at 916, or 4.3 × 10⁻⁵; 57.3%, 1.5e-05")]
    [('10^{-4}', 0.0001), ('916', 916.0), ('4.3 × 10⁻⁵', 4.3e-05), ('57.3%', 57.3), ('1.5e-05', 1.5e-05)]
    """
    out = []
    for m in _TOKEN.finditer(text):
        if m.group("mant"):
            mant, exp = m.group("mant"), int(m.group("exp").replace("−", "-").replace(" ", ""))
        elif m.group("umant"):
            mant, exp = m.group("umant"), int("".join(_SUPER[c] for c in m.group("uexp")))
        elif m.group("emant"):
            mant, exp = m.group("emant"), int(m.group("eexp"))
        elif m.group("pexp"):
            mant, exp = "1", int(m.group("pexp").replace("−", "-").replace(" ", ""))
        else:
            plain = m.group("plain").replace(",", "")
            value = float(plain)
            out.append(
                (m.start(), Number(m.group(0).strip(), value, 0.5 * 10.0 ** -_decimals(plain), bool(m.group("pct"))))
            )
            continue
        value = float(f"{mant}e{exp}")
        tol = 0.5 * 10.0 ** (exp - _decimals(mant)) if not m.group("pexp") else 0.0
        out.append((m.start(), Number(m.group(0).strip(), value, tol)))
    return out


def _code_numbers(text: str) -> list[float]:
    """Numbers in code or printed output.

    >>> _code_numbers("x = 1e-4; print('273,000', 30_010_000, .5, (1, 2))")
    [0.0001, 273000.0, 30010000.0, 0.5, 1.0, 2.0]
    """
    values = []
    for m in _CODE_NUMBER.finditer(text):
        token = m.group(1).replace("_", "").replace(",", "")
        try:
            values.append(abs(float(token)))
        except ValueError:
            continue
    # 10**-4 and 2**10 written as powers in code
    for base, exp in re.findall(r"(\d+(?:\.\d+)?)\s*\*\*\s*\(?\s*(-?\d+)", text):
        try:
            values.append(abs(float(base) ** int(exp)))
        except (OverflowError, ZeroDivisionError):
            pass
    return values


def _flatten(value: Any) -> Iterable[float]:
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield abs(float(value))
    elif isinstance(value, str):
        yield from _code_numbers(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _flatten(k)
            yield from _flatten(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _flatten(v)


def produced_numbers(markdown: str, directives: list[Directive], tables: Iterable[str] = ()) -> list[float]:
    """Every number the page's code, directive arguments and rendered tables produce."""
    values: list[float] = []
    for fence in lex(markdown).fences:
        values.extend(_code_numbers("\n".join(fence.body)))
    for d in directives:
        values.extend(_flatten({k: v for k, v in d.args.items() if k not in ("caption", "alt", "id")}))
    for table in tables:
        values.extend(_code_numbers(table))
        values.extend(n.value for _, n in parse_numbers(table))
    return values


def _blank(text: str, pattern: re.Pattern) -> str:
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


def _clean(text: str) -> str:
    """Placeholders, markup and allowed contexts blanked out (same length, so offsets keep their lines)."""
    text = _blank(text, PLACEHOLDER)
    for pattern in _STRIP:
        text = _blank(text, pattern)
    text = _blank(text, _ALLOWED_CONTEXT)
    return text


def stated_numbers(markdown: str, directives: list[Directive]) -> list[tuple[int, Number, str]]:
    """(line, number, context) for every number the page states in prose, captions and alt text."""
    doc = lex(markdown)
    found: list[tuple[int, Number, str]] = []

    def scan(text: str, offset: int, line_of) -> None:
        cleaned = _clean(text)
        for at, number in parse_numbers(cleaned):
            if (
                number.value == int(number.value)
                and number.value <= 9
                and "." not in number.text
                and "^" not in number.text
                and "×" not in number.text
            ):
                continue
            context = " ".join(text[max(0, at - 30) : at + len(number.text) + 30].split())
            found.append((line_of(offset + at), number, context))

    for start, end in prose_spans(markdown):
        line = doc.line_of(start)
        text = markdown[start:end]
        if start == doc.line_starts[line - 1]:  # a line's own start: drop a list marker or a block opener
            text = _blank(text, _LIST_MARKER)
        scan(text, start, doc.line_of)
    for d in directives:
        for key in ("caption", "alt"):
            value = d.args.get(key)
            if isinstance(value, str):
                scan(value, 0, lambda _, line=d.line: line)
    return found


def _allowed(allow: list[dict], page: str, number: Number) -> bool:
    for entry in allow:
        if entry.get("page") != page:
            continue
        text = str(entry.get("number", ""))
        if text == number.text or text.replace(",", "") == number.text.replace(",", ""):
            return True
    return False


def _policy(path: Path) -> dict:
    import tomllib

    path = Path(path)
    if not path.is_file():
        return {}  # no policy: no number allowed without a source, every page checked
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path} is not valid TOML: {exc}") from None


def load_not_checked(path: Path = ALLOWLIST) -> tuple[str, ...]:
    """The pages (``docs/...``) whose numbers are not checked: the policy's ``not_checked`` list.

    >>> "docs/references.md" in load_not_checked()
    True
    """
    pages = _policy(path).get("not_checked", [])
    if not isinstance(pages, list) or not all(isinstance(p, str) and p.startswith("docs/") for p in pages):
        raise ValueError(f"{path}: not_checked must be a list of pages written docs/..., got {pages!r}")
    return tuple(pages)


def load_allowlist(path: Path = ALLOWLIST) -> list[dict]:
    """The reviewed allow-list: ``[[allow]]`` entries with page, number and a reason each."""
    entries = _policy(path).get("allow", [])
    for i, entry in enumerate(entries):
        missing = [k for k in ("page", "number", "reason") if not str(entry.get(k, "")).strip()]
        if missing:
            raise ValueError(
                f"{path}: entry {i + 1} needs {', '.join(missing)} (every allowed number "
                "names its page and says why it is not computed)"
            )
    return entries


#: The pages the rule leaves alone, as site paths (``references.md``).
NOT_CHECKED = tuple(p.removeprefix("docs/") for p in load_not_checked())


def check_page(markdown: str, page: str, *, tables: Iterable[str] = (), allow: Sequence[dict] = ()) -> list[Finding]:
    """The numbers ``page`` states that nothing on it produces (see the module's docstring).

    ``tables`` are the page's rendered tables (Markdown), ``allow`` the allow-list's entries.

    >>> page = "The gate is 0.73 and the horizon 3.2 steps.\\n\\n```python\\n>>> round(3.19, 1)\\n3.2\\n```\\n"
    >>> [f.number for f in check_page(page, "p.md")]
    ['0.73']
    """
    directives = find_directives(markdown, page)
    produced = produced_numbers(markdown, directives, tables)
    findings = []
    for line, number, context in stated_numbers(markdown, directives):
        if any(number.matches(u) for u in produced) or _allowed(list(allow), page, number):
            continue
        findings.append(Finding(page, line, number.text, context))
    return findings


def value_count(markdown: str) -> tuple[int, int]:
    """(placeholders in prose, captions and alt text; numbers stated and produced): the page's live numbers."""
    directives = find_directives(markdown, "page")
    placeholders = sum(len(PLACEHOLDER.findall(markdown[a:b])) for a, b in prose_spans(markdown))
    placeholders += sum(
        len(PLACEHOLDER.findall(str(d.args.get(k, "")))) for d in directives for k in ("caption", "alt")
    )
    stated = len(stated_numbers(markdown, directives))
    return placeholders, stated

"""What a copy button copies from a Python session block, ready for the classic Python prompt.

The chapters' snippets are doctests, shown as Python sessions (``>>>`` and
``...`` prompts, then the printed output). Their copy button copies the
statements only. Pasted into the classic Python prompt, a compound statement
(``for``, ``if``, ``def``, ``with``, ...) needs a blank line to end it before
the next statement, or the prompt reports a syntax error. :func:`session_code`
writes the statements with that blank line; :func:`mark_sessions` puts the
text on each session block of a page as its ``data-copy`` attribute, which the
theme's copy button copies instead of the block's visible text.
"""

from __future__ import annotations

import html
import re

__all__ = ["mark_sessions", "session_code"]

_COMPOUND = re.compile(r"(?:async\s+)?(?:for|while|if|with|def|class|try)\b|@")
_SESSION = re.compile(
    r'<div class="(?P<cls>(?:language-[a-z]+ )?highlight)"(?P<attrs>[^>]*)>(?P<body><pre>.*?</code></pre>)', re.S
)
_PROMPT = '<span class="gp">&gt;&gt;&gt;'
_LANGUAGE = re.compile(r"language-(?!pycon\b)")
_CODE = re.compile(r"<code[^>]*>(.*?)</code>", re.S)
_TAG = re.compile(r"<[^>]+>")


def session_code(session: str) -> str:
    """The statements of a Python session, without prompts or output, each compound one closed by a blank line.

    >>> print(session_code('''>>> total = 0
    ... >>> for k in range(3):
    ... ...     total += k
    ... >>> total
    ... 3'''), end="")
    total = 0
    for k in range(3):
        total += k
    <BLANKLINE>
    total
    """
    statements: list[list[str]] = []
    for line in session.split("\n"):
        if line.startswith(">>> ") or line == ">>>":
            statements.append([line[4:]])
        elif (line.startswith("... ") or line == "...") and statements:
            statements[-1].append(line[4:])
        # anything else is output, which is not copied
    out: list[str] = []
    for lines in statements:
        code = [lines[0]] + [line for line in lines[1:] if line.strip()]
        out.extend(code)
        if _COMPOUND.match(code[0]):
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n" + ("\n" if out and out[-1] == "" else "")


def mark_sessions(page_html: str) -> str:
    """Give each Python session block of a page (``>>>`` prompts) a ``data-copy`` attribute: its :func:`session_code`.

    >>> page = ('<div class="language-pycon highlight"><pre><span></span><code>'
    ...         '<span class="gp">&gt;&gt;&gt; </span>1 + 1\\n<span class="go">2</span>\\n</code></pre></div>')
    >>> mark_sessions(page)[:61]
    '<div class="language-pycon highlight" data-copy="1 + 1&#10;">'
    """

    def mark(m: re.Match) -> str:
        if "data-copy=" in m["attrs"] or _PROMPT not in m["body"] or _LANGUAGE.search(m["cls"]):
            return m.group()
        code = _CODE.search(m["body"])
        if code is None:
            return m.group()
        text = html.unescape(_TAG.sub("", code.group(1)))
        value = html.escape(session_code(text), quote=True).replace("\n", "&#10;")
        return f'<div class="{m["cls"]}"{m["attrs"]} data-copy="{value}">{m["body"]}'

    return _SESSION.sub(mark, page_html)

"""Punctuation kept on the line of the math it follows.

A browser may break a line between a piece of typeset inline math and the
period or comma after it, so that a line starts with ". The next ...". In the
page's HTML, each inline formula (``<span class="arithmatex">``, typeset at
build time) that is directly followed by closing punctuation is wrapped,
together with that punctuation, in ``<span class="rnnmem-nobr">``, which the
site's stylesheet keeps on one line (``white-space: nowrap``). Called by the
MkDocs plugin on every finished page.
"""

from __future__ import annotations

import re

__all__ = ["bind_punctuation", "NOBREAK_CLASS"]

NOBREAK_CLASS = "rnnmem-nobr"
_MATH_OPEN = re.compile(r'<span class="arithmatex">')
_SPAN_TAG = re.compile(r"<span\b|</span>")
#: Closing punctuation that must not start a line: the run of it right after the math is kept with it.
_PUNCTUATION = re.compile(r"[.,;:!?)\]\u2019\u201d\u2026]+")


def _span_end(html: str, start: int) -> int:
    """The offset just after the ``</span>`` that closes the ``<span`` opened at ``start`` (-1 if none)."""
    depth = 0
    for tag in _SPAN_TAG.finditer(html, start):
        depth += 1 if tag.group() == "<span" else -1
        if depth == 0:
            return tag.end()
    return -1


def bind_punctuation(html: str) -> str:
    """Wrap each inline formula and the closing punctuation right after it in a no-break span.

    Formulas followed by a space, a word or a tag are left as they are; the
    text of the page does not change, only where a line may break.

    >>> page = '<p>the factor <span class="arithmatex">f</span>, then <span class="arithmatex">g</span> and.</p>'
    >>> print(bind_punctuation(page))
    <p>the factor <span class="rnnmem-nobr"><span class="arithmatex">f</span>,</span> then <span class="arithmatex">g</span> and.</p>
    >>> bind_punctuation(bind_punctuation(page)) == bind_punctuation(page)
    True
    """
    out = []
    pos = 0
    for match in _MATH_OPEN.finditer(html):
        if match.start() < pos:  # inside a formula already copied (none are nested; kept safe)
            continue
        end = _span_end(html, match.start())
        if end < 0:
            break
        punctuation = _PUNCTUATION.match(html, end)
        already = html.endswith(f'<span class="{NOBREAK_CLASS}">', 0, match.start())
        if punctuation is None or already:
            continue
        out.append(html[pos : match.start()])
        out.append(f'<span class="{NOBREAK_CLASS}">{html[match.start() : punctuation.end()]}</span>')
        pos = punctuation.end()
    out.append(html[pos:])
    return "".join(out)

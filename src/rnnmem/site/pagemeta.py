"""What search engines and the site's own search see of a page.

* :func:`describe`: a page's meta description, from its first paragraph of
  running text when its front matter gives none (each page gets its own).
* :func:`exclude_from_search`: marks the parts of a page that do not belong in
  the search index (the API pages' source listings, the chapter's notebook
  links), with the ``data-search-exclude`` attribute the theme's search honours.
"""

from __future__ import annotations

import html
import re

__all__ = ["describe", "exclude_from_search", "plain_tex"]

_PARAGRAPH = re.compile(r"<p(?:\s[^>]*)?>(.*?)</p>", re.S)
_MATH = re.compile(r'<span class="arithmatex">(.*?)</span>', re.S)
_TAG = re.compile(r"<[^>]+>")
_TEX_COMMAND = re.compile(r"\\(?:mathrm|text|operatorname|mathbf|boldsymbol)\{([^{}]*)\}")
_GREEK = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "epsilon": "ε",
    "eta": "η",
    "lambda": "λ",
    "mu": "μ",
    "rho": "ρ",
    "sigma": "σ",
    "tau": "τ",
    "theta": "θ",
    "partial": "∂",
    "cdot": "·",
    "times": "×",
    "le": "≤",
    "ge": "≥",
    "approx": "≈",
    "infty": "∞",
    "ln": "ln",
    "log": "log",
    "tanh": "tanh",
    "exp": "exp",
    "odot": "⊙",
    "to": "→",
    "ldots": "…",
    "dots": "…",
}


def plain_tex(tex: str) -> str:
    r"""Inline TeX read as plain text, for a description: ``\(\sigma(b_f)\)`` -> ``σ(b_f)``.

    >>> plain_tex(r"\(f^{n}\)"), plain_tex(r"\(\sigma(b_f) \approx 0.95\)")
    ('f^n', 'σ(b_f) ≈ 0.95')
    """
    tex = tex.strip()
    for a, b in ((r"\(", ""), (r"\)", ""), (r"\[", ""), (r"\]", ""), ("$", "")):
        tex = tex.replace(a, b)
    tex = _TEX_COMMAND.sub(r"\1", tex)
    tex = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"\1/\2", tex)
    tex = re.sub(r"\\([A-Za-z]+)", lambda m: _GREEK.get(m.group(1), m.group(1)), tex)
    tex = re.sub(r"\\[,;:! ]", " ", tex)
    tex = tex.replace("{", "").replace("}", "")
    return " ".join(tex.split())


def describe(page_html: str, limit: int = 160) -> str | None:
    r"""The first paragraph of running text, as plain text of at most ``limit`` characters.

    Paragraphs of a figure, a caption, the notebook links or an admonition's
    title are skipped; inline math is read as plain text.

    >>> page = r'<p class="rnnmem-notebook"><a>Notebook</a></p><p>A network that <em>feeds</em> itself, '
    >>> page += r'its new state <span class="arithmatex">\(h_t\)</span> read from the old.</p>'
    >>> describe(page)
    'A network that feeds itself, its new state h_t read from the old.'
    """
    for m in _PARAGRAPH.finditer(page_html):
        tag = page_html[m.start() : m.start() + 200]
        opening = tag[: tag.index(">") + 1] if ">" in tag else tag
        if re.search(r'class="(?:rnnmem-|admonition-title|md-)|data-search-exclude', opening):
            continue
        inner = _MATH.sub(lambda mm: plain_tex(html.unescape(_TAG.sub("", mm.group(1)))), m.group(1))
        text = " ".join(html.unescape(_TAG.sub("", inner)).split())
        if len(text) < 40:
            continue
        if len(text) > limit:
            cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:")
            text = cut + "…"
        return html.escape(text, quote=True)  # the theme writes it into an attribute as it is
    return None


_NOTEBOOK_LINKS = '<p class="rnnmem-notebook"'
#: A code block as Python-Markdown's highlighter writes it (a chapter's snippet, a docstring's example).
_CODE_BLOCK = '<div class="highlight"'
#: mkdocstrings' "Source code in ..." block under each function of an API page.
_SOURCE_BLOCK = re.compile(r'<details class="(?P<cls>quote|mkdocstrings-source)">\s*<summary>(?:<span>)?Source code in')


def exclude_from_search(page_html: str, *, api: bool = False) -> str:
    """Mark the notebook links, the API source listings and an API page's code ``data-search-exclude``.

    On an API page (``api``) every code block, the docstrings' examples, is
    left out of the search index too: a reader searches the prose for a
    name or an idea, and the examples' code doubled the index that every
    page's first load fetches. A chapter's snippets stay searchable.

    >>> exclude_from_search('<p class="rnnmem-notebook">x</p>')
    '<p data-search-exclude class="rnnmem-notebook">x</p>'
    >>> exclude_from_search('<div class="highlight"><pre>1</pre></div>', api=True)
    '<div data-search-exclude class="highlight"><pre>1</pre></div>'
    >>> exclude_from_search('<div class="highlight"><pre>1</pre></div>')
    '<div class="highlight"><pre>1</pre></div>'
    """
    page_html = page_html.replace(_NOTEBOOK_LINKS, '<p data-search-exclude class="rnnmem-notebook"')
    if api:
        page_html = page_html.replace(_CODE_BLOCK, '<div data-search-exclude class="highlight"')
    return _SOURCE_BLOCK.sub(lambda m: m.group().replace("<details ", "<details data-search-exclude ", 1), page_html)

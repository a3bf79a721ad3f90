"""A griffe extension: render the package's docstrings well on the API pages.

The package's docstrings put their runnable examples (``>>>`` lines and the
output they print) straight after the text, as doctest does, so that Sybil runs
them. Griffe's Google-style parser only recognises examples under an
``Examples:`` heading; elsewhere the lines would be read as Markdown (quotes,
links). This extension fences every bare run of example lines as ``pycon`` so
the API reference shows them as code, prompts and output marked.

The docstrings also use a few reStructuredText constructs that read well in
source and in ``help()``: ``:math:`...``` roles and ``.. math::`` blocks
become MathJax math, and ``:func:``/``:class:``/``:mod:`` roles become code.
"""

from __future__ import annotations

import re

import griffe

from .markdown import lex

_MATH_ROLE = re.compile(r":math:`([^`]+)`")
_NAME_ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj):`~?([^`]+)`")
_MATH_BLOCK = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*(?P<rest>.*)$")


def convert_roles(text: str) -> str:
    r"""reStructuredText roles to Markdown: math to ``$...$``, names to code.

    >>> convert_roles(":math:`f^n` by :func:`~rnnmem.memory.decay`")
    '$f^n$ by `decay`'
    """
    text = _MATH_ROLE.sub(lambda m: f"${m.group(1)}$", text)
    return _NAME_ROLE.sub(lambda m: f"`{m.group(1).split('.')[-1]}`", text)


def convert_math_blocks(text: str) -> str:
    r"""``.. math::`` directives (content on the same line or indented below) to ``$$`` blocks.

    Lines with ``&`` alignment are wrapped in an ``aligned`` environment.

    >>> convert_math_blocks(".. math::  a = b").splitlines()
    ['$$', 'a = b', '$$']
    """
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _MATH_BLOCK.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        indent = len(m.group("indent"))
        body = [m.group("rest")] if m.group("rest").strip() else []
        i += 1
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
            if lines[i].strip() or body:
                body.append(lines[i].strip())
            i += 1
        while body and not body[-1]:
            body.pop()
        math = "\n".join(b for b in body if b)
        if "&" in math or "\\\\" in math:
            math = "\\begin{aligned}\n" + math + "\n\\end{aligned}"
        out.extend(["$$", math, "$$", ""])
    return "\n".join(out)


def fence_examples(text: str) -> str:
    r"""Wrap each run of ``>>>`` lines and their output in a ```pycon fence.

    >>> fence_examples("Text.\n\n>>> 1 + 1\n2\n\nMore.").splitlines()
    ['Text.', '', '```pycon', '>>> 1 + 1', '2', '```', '', 'More.']
    """
    doc = lex(text)
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        if not doc.in_fence(i + 1) and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out.append(f"{indent}```pycon")
            out.extend(block)
            out.append(f"{indent}```")
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


class FenceDoctests(griffe.Extension):
    """Fence bare doctest examples, and turn reST math and roles into Markdown, in every docstring."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is None:
            return
        text = obj.docstring.value
        if ">>>" in text:
            text = fence_examples(text)
        text = convert_math_blocks(text)
        obj.docstring.value = _outside_fences(text, convert_roles)


def _outside_fences(text: str, convert) -> str:
    """Apply ``convert`` to the text outside fenced code blocks (the fences of :mod:`rnnmem.site.markdown`)."""
    doc = lex(text)
    parts, pos = [], 0
    for fence in doc.fences:
        parts.append(convert(text[pos : fence.start]))
        parts.append(text[fence.start : fence.end])
        pos = fence.end
    parts.append(convert(text[pos:]))
    return "".join(parts)

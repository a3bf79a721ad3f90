"""Two cells of the lab compared in words: counts, Fisher's exact test, and a verdict.

Every comparison a lab chapter words carries Fisher's exact test
(:func:`rnnmem.stats.fisher_exact`), and a difference with :math:`p \\ge`
:data:`ALPHA` is worded as none detected.
"""

from __future__ import annotations

from rnnmem import stats
from rnnmem.experiments import Outcome

__all__ = ["ALPHA", "compare", "p_text"]

ALPHA = 0.05
"""A difference is worded as one when Fisher's exact test gives p below this."""


def p_text(p: float) -> str:
    """A p-value as the page prints it: two significant digits, ``< 0.001`` below that.

    >>> p_text(0.0004), p_text(0.034), p_text(0.23)
    ('< 0.001', '0.034', '0.23')
    """
    return "< 0.001" if p < 0.001 else f"{p:.2g}" if p < 0.1 else f"{p:.2f}"


def compare(a: Outcome, b: Outcome) -> dict:
    """Two cells compared by Fisher's exact test: the counts, p, and the comparison in words.

    ``phrase`` is "more successes than" or "fewer successes than" (``a``
    against ``b``) when :math:`p <` :data:`ALPHA`, else "no detectable
    difference from"; ``verdict`` says the same of the pair; ``p`` is the
    p-value as a table prints it (:func:`p_text`) and ``p_eq`` as a sentence
    writes it ("*p* < 0.001", "*p* = 0.03").
    """
    p = stats.fisher_exact(a.successes, a.n, b.successes, b.n)
    differ = p < ALPHA
    phrase = (
        ("more successes than" if a.rate > b.rate else "fewer successes than")
        if differ
        else "no detectable difference from"
    )
    text = p_text(p)
    return {
        "a": a.successes,
        "b": b.successes,
        "n": a.n,
        "p": text,
        "p_eq": f"*p* {text}" if text.startswith("<") else f"*p* = {text}",
        "p_value": p,
        "phrase": phrase,
        "verdict": "a difference" if differ else "no detectable difference",
        "differ": differ,
    }

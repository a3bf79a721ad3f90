"""Two cells of the lab compared in words: counts, Fisher's exact test, and the verdict the counts carry.

Every comparison a lab chapter words goes through :func:`rnnmem.verdicts.compare`:
a difference where Fisher's exact test gives :math:`p <` :data:`ALPHA`; no verdict
where both arms sit at the floor or the ceiling; otherwise no detectable
difference, with the power the test had (:mod:`rnnmem.verdicts`).
"""

from __future__ import annotations

from rnnmem import verdicts
from rnnmem.experiments import Outcome

__all__ = ["ALPHA", "compare", "p_text"]

ALPHA = verdicts.ALPHA
"""A difference is worded as one when Fisher's exact test gives p below this."""

p_text = verdicts.p_text


def compare(a: Outcome, b: Outcome) -> dict:
    """Two cells compared: the counts, p, the verdict in words, and the power of a null.

    ``phrase`` words ``a`` against ``b`` inside a sentence ("more successes
    than", "no detectable difference from", "a count too near the floor to
    compare with", …); ``verdict`` is the comparison as a phrase of its own,
    a null with its power; ``p`` is the p-value as a page prints it after
    "p =" (:func:`rnnmem.verdicts.p_text`) and ``p_eq`` with "*p* =" before it;
    ``power`` is the power of Fisher's test against the design's effect
    (:data:`rnnmem.verdicts.EFFECT`) from ``b``'s rate, and ``detectable`` the
    smallest difference it finds with 80% power (``"none"`` if none).
    """
    v = verdicts.compare(a.successes, a.n, b.successes, b.n)
    text = p_text(v.p)
    return {
        "a": a.successes,
        "b": b.successes,
        "n": a.n,
        "p": text,
        "p_eq": f"*p* = {text}",
        "p_value": v.p,
        "phrase": v.phrase,
        "verdict": v.verdict,
        "differ": v.differ,
        "can_tell": v.can_tell,
        "kind": v.kind,
        "power": f"{v.power:.2f}",
        "effect": f"{v.effect:g}",
        "detectable": "none" if v.detectable is None else f"{v.detectable:.2f}",
    }

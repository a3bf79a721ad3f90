r"""Two counts of successes compared in words that the counts can carry.

Every comparison a lab chapter states between two arms (``a`` successes of
``n_a`` against ``b`` of ``n_b``) goes through :func:`compare`, which reads
Fisher's exact test (:func:`rnnmem.stats.fisher_exact`) by four rules, fixed
before any run:

1. **A difference** when :math:`p <` ``alpha`` (:data:`ALPHA`, 0.05): "more"
   or "fewer" successes, ``a`` against ``b``.
2. **The floor.** When both arms are at or below :data:`FLOOR` (10%) of
   successes, the comparison cannot tell: two arms that almost never learn
   look alike whatever their causes do. The verdict says so; it never says
   "no detectable difference" there.
3. **The ceiling**, the same at or above :data:`CEILING` (90%).
4. **A null** otherwise: no detectable difference, always with its *power*,
   the probability that Fisher's test at ``alpha`` finds a difference of
   ``effect`` (:data:`EFFECT`, the design's smallest difference worth
   finding) from the reference arm ``b``'s rate
   (:func:`rnnmem.stats.fisher_power`), and the smallest difference it
   would find with 80% power (:func:`rnnmem.stats.detectable_difference`).

A null with low power says little; a floor or ceiling says nothing about the
causes compared. Both are then worded as what they are.

>>> v = compare(17, 20, 2, 20)
>>> v.kind, v.phrase
('more', 'more successes than')
>>> compare(1, 20, 0, 20).verdict
'no verdict: both arms are at the floor'
>>> v = compare(10, 20, 11, 20)
>>> v.kind, round(v.power, 2)
('null', 0.69)
"""

from __future__ import annotations

from dataclasses import dataclass

from . import stats
from .checks import check_nonnegative_int, check_positive_int

__all__ = ["ALPHA", "CEILING", "EFFECT", "FLOOR", "POWER", "Verdict", "compare", "p_text"]

ALPHA = 0.05
"""A difference is stated when Fisher's exact test gives p below this."""

FLOOR = 0.1
"""Both arms at or below this share of successes: the comparison cannot tell."""

CEILING = 0.9
"""Both arms at or above this share of successes: the comparison cannot tell."""

EFFECT = 0.4
"""The smallest difference in success rate the lab's designs set out to find: 8 seeds of 20."""

POWER = 0.8
"""The power at which :attr:`Verdict.detectable` is read."""

KINDS = ("more", "fewer", "null", "floor", "ceiling")


@dataclass(frozen=True)
class Verdict:
    """What two counts of successes allow us to say, ``a`` (of ``n_a``) against ``b`` (of ``n_b``)."""

    a: int
    n_a: int
    b: int
    n_b: int
    p: float
    """Two-sided p of Fisher's exact test."""
    kind: str
    """One of ``"more"``, ``"fewer"`` (a difference), ``"null"``, ``"floor"``, ``"ceiling"``."""
    effect: float
    """The difference the power is computed against."""
    power: float
    """Power of Fisher's test at ``alpha`` against ``effect`` from ``b``'s rate."""
    detectable: float | None
    """The smallest difference (steps of 0.05) found with 80% power, or ``None`` if none is."""

    @property
    def differ(self) -> bool:
        """Whether the test found a difference."""
        return self.kind in ("more", "fewer")

    @property
    def can_tell(self) -> bool:
        """Whether the counts can speak: ``False`` at the floor or the ceiling."""
        return self.kind not in ("floor", "ceiling")

    @property
    def phrase(self) -> str:
        """The comparison inside a sentence "``a`` shows … ``b``"."""
        return {
            "more": "more successes than",
            "fewer": "fewer successes than",
            "null": "no detectable difference from",
            "floor": "a count too near the floor to compare with",
            "ceiling": "a count too near the ceiling to compare with",
        }[self.kind]

    @property
    def verdict(self) -> str:
        """The comparison as a phrase of its own; a null carries its power."""
        if self.kind == "null":
            return f"no detectable difference, at a power of {self.power:.2f} to detect a difference of {self.effect:g}"
        return {
            "more": "a difference",
            "fewer": "a difference",
            "floor": "no verdict: both arms are at the floor",
            "ceiling": "no verdict: both arms are at the ceiling",
        }[self.kind]


def _share(name: str, value: float) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or not 0.0 < float(value) < 1.0:
        raise ValueError(f"{name} must be a number strictly between 0 and 1, got {value!r}")
    return float(value)


def compare(a: int, n_a: int, b: int, n_b: int, *, effect: float = EFFECT, alpha: float = ALPHA) -> Verdict:
    """Compare ``a`` successes of ``n_a`` with ``b`` of ``n_b`` by the four rules of this module.

    ``b`` is the reference arm: power and the detectable difference are
    computed from its rate.

    >>> compare(20, 20, 19, 20).kind
    'ceiling'
    >>> compare(0, 20, 20, 20).kind
    'fewer'
    >>> compare(3, 20, 2, 20).kind
    'null'
    >>> compare(1, 20, 2, 0)
    Traceback (most recent call last):
    ...
    ValueError: n_b must be a whole number >= 1, got 0
    """
    n_a, n_b = check_positive_int("n_a", n_a), check_positive_int("n_b", n_b)
    a, b = check_nonnegative_int("a", a), check_nonnegative_int("b", b)
    if a > n_a or b > n_b:
        raise ValueError(f"a and b must be counts of at most n_a and n_b, got a={a} of {n_a} and b={b} of {n_b}")
    effect, alpha = _share("effect", effect), _share("alpha", alpha)
    p = stats.fisher_exact(a, n_a, b, n_b)
    ra, rb = a / n_a, b / n_b
    if p < alpha:
        kind = "more" if ra > rb else "fewer"
    elif ra <= FLOOR and rb <= FLOOR:
        kind = "floor"
    elif ra >= CEILING and rb >= CEILING:
        kind = "ceiling"
    else:
        kind = "null"
    toward = min(max(rb + effect if rb <= 0.5 else rb - effect, 0.0), 1.0)
    power = stats.fisher_power(toward, rb, n_a, n_b, alpha)
    detectable = stats.detectable_difference(rb, n_a, n_b, alpha, POWER)
    return Verdict(a, n_a, b, n_b, p, kind, effect, power, detectable)


def p_text(p: float) -> str:
    """A p-value as a page prints it after "p =": two significant digits, below 0.001 times a power of ten.

    Below 0.001 it is two significant digits (a trailing zero dropped) times a
    power of ten, in Unicode superscripts, so that "*p* = …" reads right at
    every size and no p is shown as "< 0.001".

    >>> p_text(0.034), p_text(0.23), p_text(1.0), p_text(3.24e-6)
    ('0.034', '0.23', '1.00', '3.2 × 10⁻⁶')
    >>> p_text(0.00096), p_text(1.0e-5)
    ('9.6 × 10⁻⁴', '1 × 10⁻⁵')
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be a probability from 0 to 1, got {p!r}")
    if p >= 0.001:
        return f"{p:.2g}" if p < 0.1 else f"{p:.2f}"
    if p == 0.0:
        return "0"
    mantissa, exponent = f"{p:.1e}".split("e")
    mantissa = mantissa.removesuffix(".0")
    sup = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return f"{mantissa} × 10{str(int(exponent)).translate(sup)}"

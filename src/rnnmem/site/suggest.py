"""Did you mean: the known names closest to a misspelt one, for the site's error messages.

An unknown directive kind, builder, builder argument, cross-reference id or citation key is
reported with the names that are known; :func:`did_you_mean` adds the closest of them
(:func:`difflib.get_close_matches`), so a typo is fixed at a glance.

>>> did_you_mean("decay_curve", ["decay_curves", "horizon_table"])
"; did you mean 'decay_curves'?"
>>> did_you_mean("hochreiter1998", ["hochreiter1997", "hochreiter1991", "elman1990"])
"; did you mean 'hochreiter1997' or 'hochreiter1991'?"
>>> did_you_mean("zzz", ["decay_curves"])
''
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["close_matches", "did_you_mean"]


def close_matches(word: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The names of ``known`` closest to ``word``, best first (at most ``n``; cutoff 0.6, difflib's default).

    >>> close_matches("hochreiter1998", ["hochreiter1997", "hochreiter1991", "elman1990"])
    ['hochreiter1997', 'hochreiter1991']
    """
    return difflib.get_close_matches(word, list(dict.fromkeys(known)), n=n)


def did_you_mean(word: str, known: Iterable[str], n: int = 3) -> str:
    """``"; did you mean 'x'?"`` (or ``'x' or 'y'``) naming the closest known names, or ``""`` when none is close."""
    found = close_matches(word, known, n)
    if not found:
        return ""
    names = [repr(f) for f in found]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return f"; did you mean {listed}?"

"""The planted-dependency experiment of "Real text: a character-level model": what truncated BPTT learns.

The cells of :mod:`rnnmem.planted`, for each of its two designs: the first
(:data:`rnnmem.planted.FIRST_DESIGN`, 300 updates: the grid
:data:`rnnmem.planted.FIRST_GRID`, then :data:`rnnmem.planted.FOLLOW_UP`)
and the second (:data:`rnnmem.planted.DESIGN`, 1,500 updates: the grid
:data:`rnnmem.planted.GRID`). Each cell's ``repr`` holds its design and the
digest of the corpus it reads; the cells are trained once per build,
costliest first, and kept on disk, by :func:`rnnmem.site.labruns.runs`.

Every sentence about an outcome that could read otherwise on another corpus
is written here, from the counts, by :func:`rnnmem.verdicts.compare`: a
difference only where Fisher's exact test gives :math:`p <`
:data:`rnnmem.verdicts.ALPHA`, no verdict at a floor or a ceiling, and a null
with its power. Chance is each cell's own: the share of the most frequent
digit at its held-out recall steps (:attr:`rnnmem.planted.CellResult.chance`).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from rnnmem import planted, stats, verdicts

from ..arithmetic import arithmetic
from ..labruns import runs
from ..registry import table
from ..tables import Table

FIRST_CONTRASTS = {1: (1, 2), 2: (2, 32), 4: (2, 8), 16: (8, 32)}
"""For each distance of the first design, the two truncations the page compares: the longest that credits no
pair against a longer one that credits some."""

DESIGNS = {
    "first": (planted.FIRST_DESIGN, planted.FIRST_GRID + planted.FOLLOW_UP, FIRST_CONTRASTS),
    "second": (planted.DESIGN, planted.GRID, planted.CONTRASTS),
}
"""Each design the page shows: how its members train, its cells (truncation, distance), its comparisons."""


# ---------------------------------------------------------------------------- runs


def _cells(design: str) -> dict[tuple[int, int], planted.CellResult]:
    """Every cell of ``design`` (a key of :data:`DESIGNS`), by (truncation, distance)."""
    how, keys, _ = DESIGNS[design]
    return dict(zip(keys, runs([planted.Cell(k, d, design=how) for k, d in keys])))


# ---------------------------------------------------------------------------- words


def _above_chance(result: planted.CellResult) -> int:
    """The members whose recall accuracy's 95% Wilson interval lies wholly above the cell's chance."""
    hits = [round(a * result.recalls) for a in result.accuracy]
    return sum(stats.wilson(h, result.recalls)[0] > result.chance for h in hits)


def _contrast(cells: dict, short: int, long: int, distance: int) -> dict:
    """Truncation ``short`` against ``long`` at ``distance``, compared by :func:`rnnmem.verdicts.compare`."""
    a, b = cells[(short, distance)], cells[(long, distance)]
    v = verdicts.compare(a.successes, a.n, b.successes, b.n)
    p = verdicts.p_text(v.p)
    sentence = (
        f"under truncation {short}, {a.successes} of {a.n} seeds succeeded, and under truncation {long}, "
        f"{b.successes}: truncation {short} shows {v.phrase} truncation {long} "
        f"(*p* = {p}, Fisher's exact test"
        + (f"; power {v.power:.2f} to detect a difference of {v.effect:g})" if v.kind == "null" else ")")
    )
    return {
        "sentence": sentence,
        "short": short,
        "long": long,
        "a": a.successes,
        "b": b.successes,
        "n": a.n,
        "p": p,
        "p_eq": f"*p* = {p}",
        "differ": v.differ,
        "kind": v.kind,
        "phrase": v.phrase,
        "verdict": v.verdict,
        "power": f"{v.power:.2f}",
    }


def _above_contrast(cells: dict, short: int, long: int, distance: int) -> dict:
    """The seeds reading the clue above chance under truncations ``short`` and ``long`` at ``distance``,
    compared by :func:`rnnmem.verdicts.compare` (a comparison added when the success counts had been read)."""
    a, b = _above_chance(cells[(short, distance)]), _above_chance(cells[(long, distance)])
    n = cells[(short, distance)].n
    v = verdicts.compare(a, n, b, n)
    p = verdicts.p_text(v.p)
    sentence = (
        f"{a} of {n} seeds read the clue above chance under truncation {short} and {b} under truncation {long}: "
        f"truncation {short} shows {v.phrase.replace('successes', 'such seeds')} truncation {long} "
        f"(*p* = {p}, Fisher's exact test"
        + (f"; power {v.power:.2f} to detect a difference of {v.effect:g})" if v.kind == "null" else ")")
    )
    return {"sentence": sentence, "a": a, "b": b, "n": n, "p": p, "differ": v.differ, "kind": v.kind}


def _carry_sentence(result: planted.CellResult) -> str:
    """How many seeds of the cell of truncation 1 at distance 1 read the clue better than chance, in words."""
    above = _above_chance(result)
    median = float(np.median(result.accuracy))
    if above == 0:
        return (
            f"none of the {result.n} seeds trained so at distance 1 read the clue better than chance "
            f"(median recall accuracy {median:.2f}, chance {result.chance:.3f})"
        )
    return (
        f"{above} of the {result.n} seeds trained so at distance 1 read the clue better than chance: the 95% "
        f"interval of their recall accuracy lies above {result.chance:.3f}, the share of the most frequent digit "
        f"(median over the seeds {median:.2f})"
    )


def _join(words: list[str], empty: str = "none") -> str:
    """``a``, ``a and b``, ``a, b and c``; ``empty`` for no words."""
    if not words:
        return empty
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _longest(cells: dict) -> dict[int, int | None]:
    """For each truncation trained, the longest distance that at least :data:`LEARNED_RATE <rnnmem.planted.LEARNED_RATE>`
    of its seeds learned (``None``: none)."""
    out: dict[int, int | None] = {}
    for k in sorted({k for k, _ in cells}):
        learned = [d for (kk, d), r in cells.items() if kk == k and r.successes >= planted.LEARNED_RATE * r.n]
        out[k] = max(learned) if learned else None
    return out


def _longest_sentence(longest: dict[int, int | None]) -> str:
    """ "under truncation 1 no distance was learned; under 2, 8 and 32 the longest learned was 1" (grouped)."""
    groups: dict[int | None, list[int]] = {}
    for k, d in longest.items():
        groups.setdefault(d, []).append(k)
    parts = []
    for d, ks in groups.items():
        names = _join([str(k) for k in ks])
        where = f"under truncation {names}" if len(ks) == 1 else f"under truncations {names}"
        parts.append(
            f"{where} no distance was learned" if d is None else f"{where} the longest distance learned was {d}"
        )
    return "; ".join(parts)


# ---------------------------------------------------------------------------- the table


@table()
def real_text_truncation(design: Literal["first", "second"] = "second"):
    """Success counts of one design of the planted-dependency experiment, by truncation and distance.

    ``design="first"``: 300 updates, its grid and the follow-up cells (marked
    †); ``"second"``: 1,500 updates, its grid. Values: ``cells``, keyed
    ``"k,d"``, each with ``successes``, ``n``, ``low`` and ``high`` (95%
    Wilson interval of the success rate), ``credited`` (the share of pairs
    whose gradient reaches the clue), ``median``, ``lowest`` and ``highest``
    (members' recall accuracy), ``chance`` (the share of the most frequent
    digit at the recall steps), ``above`` (members reading the clue above
    chance) and ``follow_up``; ``longest`` (by truncation),
    ``longest_sentence``; ``tests`` by distance (the design's comparisons),
    ``above_tests`` (the same truncations compared by their seeds above chance);
    ``seeds``, ``updates``, ``threshold``, ``chance`` (by distance, with
    ``chance_low`` and ``chance_high`` its range), ``recalls`` (by
    distance), ``carry`` (the cell of truncation 1 at distance 1, in words),
    ``arithmetic`` (:func:`rnnmem.site.arithmetic.arithmetic`).
    """
    how, _, contrasts = DESIGNS[design]
    cells = _cells(design)
    order = sorted(cells)
    rows, values = [], {}
    for k, d in order:
        r = cells[(k, d)]
        low, high = stats.wilson(r.successes, r.n)
        acc = np.array(r.accuracy)
        credited = planted.credited_share(k, d)
        follow = design == "first" and (k, d) in planted.FOLLOW_UP
        above = _above_chance(r)
        rows.append(
            [
                f"{k}" + (" †" if follow else ""),
                f"{d}",
                f"{credited:.2f}",
                f"{r.successes} [{low:.2f}, {high:.2f}]",
                f"{np.median(acc):.2f} [{acc.min():.2f}, {acc.max():.2f}]",
                f"{r.chance:.3f}",
                f"{above}",
            ]
        )
        values[f"{k},{d}"] = {
            "successes": r.successes,
            "n": r.n,
            "low": low,
            "high": high,
            "credited": credited,
            "median": float(np.median(acc)),
            "lowest": float(acc.min()),
            "highest": float(acc.max()),
            "chance": r.chance,
            "above": above,
            "follow_up": follow,
        }
    n = cells[order[0]].n
    chance = {d: cells[(k, d)].chance for k, d in order}
    tab = Table(
        [
            "truncation \\(k\\)",
            "distance \\(n\\)",
            "pairs credited",
            f"successes of {n} [95% interval]",
            "recall accuracy, median [range]",
            "chance",
            "above chance",
        ],
        rows,
        align=["right"] * 7,
        notes=(
            f"Each cell: {n} seeds, {how.updates} updates; a seed succeeds at a held-out recall accuracy of "
            f"{how.threshold:g} or more; chance is the share of the most frequent digit at the held-out recall "
            f'steps; "above chance" counts seeds whose accuracy\'s 95% Wilson interval lies above it.'
            + (" † added after the other cells had been read." if design == "first" else "")
        ),
    )
    longest = _longest(cells)
    return tab, {
        "cells": values,
        "longest": longest,
        "longest_sentence": _longest_sentence(longest),
        "tests": {d: _contrast(cells, *contrasts[d], d) for d in contrasts},
        "above_tests": {d: _above_contrast(cells, *contrasts[d], d) for d in contrasts},
        "seeds": n,
        "updates": how.updates,
        "threshold": how.threshold,
        "chance": chance,
        "chance_low": min(chance.values()),
        "chance_high": max(chance.values()),
        "recalls": {d: cells[(k, d)].recalls for k, d in order},
        "carry": _carry_sentence(cells[(1, 1)]) if (1, 1) in cells else "",
        "arithmetic": arithmetic(),
    }

"""Figures and tables of the clipping experiment (chapter "Controls and clipping, measured", section "Clipping").

What is trained and how it is read is :mod:`rnnmem.clip_lab`: the design, the
calibration at initialization that sets the ladder of learning rates and the
clipping threshold, the training loop with its gradient norms by parameter
group, and the reading of each rung (counts, Wilson intervals, Fisher's exact
test). This module draws them and words them.

The runs are trained through :func:`rnnmem.site.labruns.runs`, so the figure
and the table of one build share them. The
calibration runs in the builder's own process, once per design
(:func:`_ladder`).

The builders' arguments are checked from their signatures
(:func:`rnnmem.checks.check_arguments`); the relations between them
(``success`` below 1, ``diverge`` above 1, ``exponents`` increasing) by
:class:`rnnmem.clip_lab.ClipDesign`, whose errors name the argument.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from rnnmem import clip_lab, stats, verdicts
from rnnmem.checks import Positive, PositiveInt
from rnnmem.clip_lab import DESIGN, GROUPS, ClipDesign, ClipLadder, Rung
from rnnmem.experiments import AddingLength, Model, ModelSpec

from ..labruns import runs
from ..registry import figure, table
from ..style import PALETTE, new_figure
from ..tables import Table

FIGURE_WINDOWS = 60
"""The figure pools the updates into about this many windows, widening on its logarithmic update axis
(:func:`rnnmem.clip_lab.log_windows`, :func:`rnnmem.clip_lab.window_quantiles`): a line of every update of
every network would make the page too heavy, and a window's maximum still shows a spike. The first updates,
where a step that overshoots shows, keep a window each."""

ARM_COLOURS = {"unclipped": PALETTE[1], "clipped": PALETTE[0]}


# ---------------------------------------------------------------------------- the experiment


@functools.cache
def _ladder(design: ClipDesign) -> ClipLadder:
    """The experiment of ``design``: calibrated once per process (it is a pure function of the design)."""
    return clip_lab.ladder(design)


@functools.cache
def _start_reach(design: ClipDesign, seeds: tuple[int, ...]) -> float:
    """The median share of the last step's gradient that reaches the nearest first mark, untrained.

    The nearest the first marked value can lie is ``design.first_back[0]`` steps back.
    """
    return float(np.median(clip_lab.gradient_reach(design, list(seeds))[:, design.first_back[0]]))


def _experiment(
    model, length, window, hidden, batch, updates, seeds, exponents, success, diverge, eval_every, eval_size
):
    """The ladder, its rungs read, and the results of its runs (trained by the lab's pool)."""
    design = ClipDesign(
        model=ModelSpec.parse(model),
        length=length,
        window=window,
        hidden=hidden,
        batch=batch,
        updates=updates,
        seeds=seeds,
        exponents=tuple(exponents),
        success=success,
        diverge=diverge,
        eval_every=eval_every,
        eval_size=eval_size,
    )
    lad = _ladder(design)
    keys = lad.runs() + lad.high_runs()
    results = dict(zip(keys, runs(keys)))
    return lad, lad.read(results), results


# ---------------------------------------------------------------------------- words


def _join(words: list[str], empty: str = "none") -> str:
    """``a``, ``a and b``, ``a, b and c``; ``empty`` for no words."""
    if not words:
        return empty
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _rate(value: float) -> str:
    """A learning rate as the page prints it: three significant digits."""
    return f"{value:.3g}"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _p(value: float) -> str:
    """A p-value in prose: two significant digits, powers of ten in Unicode below 0.001."""
    if value >= 0.001:
        return f"{value:.2g}"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def _p_tex(value: float) -> str:
    """A p-value in a table cell: as :func:`_p`, the power of ten typeset."""
    if value >= 0.001:
        return f"{value:.2g}"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"\\({mantissa} \\times 10^{{{int(exponent)}}}\\)"


def _directions(rungs: list[Rung], field: str, level: float) -> tuple[list[Rung], list[Rung], list[Rung]]:
    """The rungs where clipping gave detectably fewer, detectably more, and no detectably different counts.

    ``field`` is ``"diverged"`` or ``"succeeded"``; a rung's difference is
    detectable when its Fisher p is below ``level``, and its direction is
    read from the two counts.
    """
    fewer: list[Rung] = []
    more: list[Rung] = []
    none: list[Rung] = []
    for r in rungs:
        p = r.p_diverged if field == "diverged" else r.p_success
        a, b = getattr(r.unclipped, field), getattr(r.clipped, field)
        (fewer if p < level and b < a else more if p < level and b > a else none).append(r)
    return fewer, more, none


def _differences(rungs: list[Rung], field: str, level: float) -> str:
    """Fisher's verdict on one outcome over the rungs, as a sentence with every p it rests on."""

    def p_of(r: Rung) -> float:
        return r.p_diverged if field == "diverged" else r.p_success

    fewer, more, none = _directions(rungs, field, level)
    noun = "diverged" if field == "diverged" else "learned"
    parts = []
    for group, word in ((fewer, "fewer"), (more, "more")):
        if group:
            rates = _join([f"{_rate(r.rate)} (p = {_p(p_of(r))})" for r in group])
            parts.append(f"{word} networks {noun} with clipping at learning rate {rates}")
    edge = [r for r in none if _at_an_edge(r, field)]
    if edge:
        where = "at every rate" if len(edge) == len(rungs) else f"at {_join([_rate(r.rate) for r in edge])}"
        parts.append(f"{where} both arms sit at the floor or the ceiling, where the test cannot tell")
    none = [r for r in none if r not in edge]
    if none:
        where = "at any other rate" if edge else "at any rate"
        where = where if len(none) + len(edge) == len(rungs) else f"at {_join([_rate(r.rate) for r in none])}"
        smallest = min(p_of(r) for r in none)
        bound = "p = 1" if smallest == 1.0 else f"p = {_p(smallest)}" if len(none) == 1 else f"p ≥ {_p(smallest)}"
        parts.append(f"the test finds no difference {where} ({bound})")
    sentence = "; ".join(parts)
    return sentence[0].upper() + sentence[1:]


def _at_an_edge(rung: Rung, field: str) -> bool:
    """Both arms of the rung at or below the floor, or at or above the ceiling, of :mod:`rnnmem.verdicts`."""
    shares = [getattr(arm, field) / arm.n for arm in (rung.unclipped, rung.clipped)]
    return all(v <= verdicts.FLOOR for v in shares) or all(v >= verdicts.CEILING for v in shares)


def _verdict(rungs: list[Rung], level: float) -> str:
    """What clipping did on this evidence, as a clause built from the two tests' directions."""
    said = []
    for field, noun, verb in (("diverged", "diverging", "diverge"), ("succeeded", "learning", "learn")):
        fewer, more, _ = _directions(rungs, field, level)
        if fewer:
            said.append(f"kept networks from {noun} at learning rate {_join([_rate(r.rate) for r in fewer])}")
        if more:
            said.append(f"made more networks {verb} at learning rate {_join([_rate(r.rate) for r in more])}")
        if not fewer and not more:
            if all(_at_an_edge(r, field) for r in rungs):
                said.append(f"left {noun} where the counts cannot tell, both arms at the floor or ceiling")
            else:
                said.append(f"made no detectable difference to {noun}")
    return _join(said)


def _share(value: float) -> str:
    return "–" if not math.isfinite(value) else f"{100 * value:.0f}%"


def _small(value: float) -> str:
    """A share in prose: two decimals, or a power of ten in Unicode below 0.01."""
    if not math.isfinite(value):
        return "–"
    if value >= 0.01:
        return f"{value:.2f}"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def _diagnosis(rung: Rung, results: dict) -> dict:
    """What the unclipped networks that diverged at ``rung`` looked like where they left, in numbers and words.

    The gradient *grew going back* for a network when some entry of its
    :func:`rnnmem.clip_lab.gradient_reach` past distance 0 is above 1: the
    mark of a gradient exploding through time. The words say which networks
    show it, from those numbers.
    """
    div = clip_lab.divergences(rung.unclipped, results)
    n = len(div.members)
    rec, out = GROUPS.index("recurrent"), GROUPS.index("readout")
    far = div.reach_last.shape[1] // 2
    if n == 0:
        return {
            "diverged": 0,
            "words": "No network diverged there without clipping.",
            "meaning": "",
            "cause": "nothing: none diverged",
            "distance": far,
        }
    peak_start = np.nanmax(div.reach_start[:, 1:], axis=1)
    peak_last = np.nanmax(div.reach_last[:, 1:], axis=1)
    values: dict[str, Any] = {
        "diverged": n,
        "distance": far,
        "median_update": float(np.median(div.updates)),
        "first_update": int(div.updates.min()),
        "last_update": int(div.updates.max()),
        "recurrent_first": float(np.nanmedian(div.shares_first[:, rec])),
        "recurrent_last": float(np.nanmedian(div.shares_last[:, rec])),
        "readout_first": float(np.nanmedian(div.shares_first[:, out])),
        "readout_last": float(np.nanmedian(div.shares_last[:, out])),
        "sigma_start": float(np.nanmedian(div.sigma_start)),
        "sigma_last": float(np.nanmedian(div.sigma_last)),
        "reach_start": float(np.nanmedian(div.reach_start[:, far])),
        "reach_last": float(np.nanmedian(div.reach_last[:, far])),
        "grew_start": int(np.sum(peak_start > 1.0)),
        "grew_last": int(np.sum(peak_last > 1.0)),
        "peak_last": float(peak_last.max()),
        "exploded": int(np.sum(peak_last >= clip_lab.EXPLOSION)),
    }
    when = (
        f"at update {values['first_update']}"
        if values["first_update"] == values["last_update"]
        else f"between updates {values['first_update']} and {values['last_update']} "
        f"(median {values['median_update']:g})"
    )
    values["words"] = (
        f"Without clipping, {n} of {rung.unclipped.n} networks diverged there, {when}. "
        f"Where they left, the readout carried a median {_share(values['readout_last'])} of the squared "
        f"gradient norm and $W_{{hh}}$ {_share(values['recurrent_last'])}, against "
        f"{_share(values['readout_first'])} and {_share(values['recurrent_first'])} at the first update, and "
        f"$\\|W_{{hh}}\\|_2$ had a median of {values['sigma_last']:.2f} ({values['sigma_start']:.2f} at the "
        f"start). Of the gradient at the last step, a median {_small(values['reach_last'])} reached {far} steps "
        f"back ({_small(values['reach_start'])} at the start)"
        + (
            "; for none did it grow anywhere on the way back."
            if values["grew_last"] == 0
            else f"; for {values['grew_last']} of the {n} it grew somewhere on the way back, to at most "
            f"{values['peak_last']:.3g} times its size at the last step."
        )
    )
    step = (
        "at a learning rate above the edge of stability"
        if rung.exponent > 0
        else "at the edge of stability"
        if rung.exponent == 0
        else "below the edge of stability"
    )
    k = values["exploded"]
    grow = f"grew, going back, to {clip_lab.EXPLOSION:g} times its size at the last step"
    if k == 0:
        values["meaning"] = (
            f"No gradient exploded through time: none {grow}. What threw these networks was the size of a step, {step}."
        )
        values["cause"] = f"the size of a step, {step}, not a gradient exploding through time"
    elif k == n:
        values["meaning"] = f"For every one of them the gradient {grow} or more: an explosion through time."
        values["cause"] = "a gradient exploding through time"
    else:
        values["meaning"] = (
            f"For {k} of them the gradient {grow} or more, an explosion through time; for the other {n - k} it "
            f"did not, and what threw them was the size of a step, {step}."
        )
        values["cause"] = (
            f"a gradient exploding through time ({k} of them) or the size of a step, {step} (the other {n - k})"
        )
    return values


def _range(values: list[float]) -> str:
    """``"between 0.99 and 1.04"``, or ``"1.00"`` when both ends print alike; ``"–"`` for none."""
    if not values:
        return "–"
    low, high = f"{min(values):.2f}", f"{max(values):.2f}"
    return low if low == high else f"between {low} and {high}"


def _learning(rungs: list[Rung]) -> str:
    """Whether any network learned, in a sentence with the counts by rate."""
    free = sum(r.unclipped.succeeded for r in rungs)
    clipped = sum(r.clipped.succeeded for r in rungs)
    if free == clipped == 0:
        return "No network learned, at any rate, with or without clipping."
    by = {
        arm: _join([f"{getattr(r, arm).succeeded} at {_rate(r.rate)}" for r in rungs])
        for arm in ("unclipped", "clipped")
    }
    return (
        f"Networks that learned: {free} without clipping ({by['unclipped']}) and {clipped} with it ({by['clipped']})."
    )


def _learning_limit(rungs: list[Rung], start_reach: float, far: int) -> str:
    """What the counts of learning can say, and the gradient that would teach the task at the start."""
    reach = (
        f"At the start, a median {_small(start_reach)} of the gradient at the last step reached {far} steps back, "
        f"the nearest the first marked value can lie; clipping only ever shrinks a gradient, so it cannot raise "
        f"that share."
    )
    if sum(r.unclipped.succeeded + r.clipped.succeeded for r in rungs) == 0:
        return (
            "Since no network learned at any rate, this design cannot tell whether clipping helps a network "
            "learn the adding problem, only that none learned here with it or without it. " + reach
        )
    return reach


def _what_learning_tells(rungs: list[Rung]) -> str:
    """Whether the design's networks learned the task at all, and so whether it can test clipping's effect on it."""
    learned = sum(r.unclipped.succeeded + r.clipped.succeeded for r in rungs)
    total = sum(r.unclipped.n + r.clipped.n for r in rungs)
    if learned == 0:
        return (
            "No network learned it within the budget, at any rate, so this design cannot say whether "
            "clipping changes what a network learns."
        )
    return f"{learned} of its {total} networks learned it within the budget."


def _survivors(rung: Rung) -> str:
    """What became of the clipped arm at ``rung``, in a sentence."""
    arm = rung.clipped
    learned = "none learned" if arm.succeeded == 0 else f"{arm.succeeded} learned"
    if arm.diverged == arm.n:
        return f"All {arm.n} clipped networks diverged too."
    median = arm.quartiles[1] if arm.quartiles is not None else math.nan
    if arm.diverged == 0:
        return (
            f"None of the {arm.n} clipped networks diverged; they ended with a median held-out error of "
            f"{median:.2f} times the baseline, and {learned}."
        )
    return (
        f"{arm.diverged} of the {arm.n} clipped networks diverged too; the other {arm.n - arm.diverged} ended "
        f"with a median held-out error of {median:.2f} times the baseline, and {learned}."
    )


def _figure_rule(rungs: list[Rung], chosen: int, level: float) -> str:
    r = rungs[chosen]
    if r.p_diverged < 1.0:
        return f"the rate at which Fisher's test gives the smallest p for the diverged counts (p = {_p(r.p_diverged)})"
    return "the lowest rate, since the two arms diverged equally often at every rate"


def _power_text(rungs: list[Rung], field: str, level: float) -> str:
    """The power of each rung's Fisher test to find the design's effect, as a range over the rungs."""
    powers = [clip_lab.null_power(r, field, verdicts.EFFECT, level) for r in rungs]
    low, high = f"{min(powers):.2f}", f"{max(powers):.2f}"
    return low if low == high else f"between {low} and {high}"


def _stratified_words(p: float) -> str:
    """The stratified test's result in a clause."""
    if p < clip_lab.ALPHA:
        return f"the exact stratified test finds a difference (p = {_p(p)})"
    return f"the exact stratified test finds none (p = {_p(p)})"


def _percent(value: float) -> str:
    """A share as a percentage: whole percents, two significant digits below 1%, and 0% only for none."""
    if value == 0 or value >= 0.01:
        return f"{100 * value:.0f}%"
    return f"{100 * value:.2g}%"


def _high_values(lad: ClipLadder, results: dict, level: float) -> dict:
    """The second threshold's arm against the unclipped arm, and how often each threshold acted."""
    high = lad.read_high(results)
    clipped = [m for r in lad.rates for m in lad.members(r, "clipped")]
    highs = [m for r in lad.rates for m in lad.high_members(r)]
    return {
        "high_clip": lad.high_clip,
        "high_multiple": clip_lab.HIGH_MULTIPLE,
        "high_diverged": sum(r.clipped.diverged for r in high),
        "high_succeeded": sum(r.clipped.succeeded for r in high),
        "high_by_rate": _join([f"{r.clipped.diverged} at {_rate(r.rate)}" for r in high]),
        "high_success_by_rate": _join([f"{r.clipped.succeeded} at {_rate(r.rate)}" for r in high]),
        "high_divergence_test": _differences(high, "diverged", level),
        "high_success_test": _differences(high, "succeeded", level),
        "high_verdict": _verdict(high, level),
        "first_seed_high": 2 * lad.design.seeds,
        "last_seed_high": 3 * lad.design.seeds - 1,
        "share_clipped": _percent(clip_lab.clipped_share(results, clipped)),
        "share_clipped_first": _percent(clip_lab.clipped_share(results, clipped, first=True)),
        "share_high": _percent(clip_lab.clipped_share(results, highs)),
        "share_high_first": _percent(clip_lab.clipped_share(results, highs, first=True)),
        "stratified": {
            field: _stratified_words(clip_lab.stratified(rs, field))
            for field, rs in (("diverged", lad.read(results)), ("succeeded", lad.read(results)))
        },
        "stratified_high": {
            field: _stratified_words(clip_lab.stratified(high, field)) for field in ("diverged", "succeeded")
        },
        "power": {field: _power_text(lad.read(results), field, level) for field in ("diverged", "succeeded")},
        "effect": verdicts.EFFECT,
    }


def _values(lad: ClipLadder, rungs: list[Rung], results: dict) -> dict:
    """Everything the section reads: the design, the calibration, the counts, the tests and their words."""
    d = lad.design
    level = clip_lab.detection_level(len(rungs))
    chosen = clip_lab.figure_rung(rungs)
    keys = [f"r{k}" for k in range(len(rungs))]
    cal = lad.calibration
    assert cal is not None, "the ladder of a build is made by clip_lab.ladder, which keeps its calibration"
    start_reach = _start_reach(d, cal.seeds)
    medians = {
        arm: [getattr(r, arm).quartiles[1] for r in rungs if getattr(r, arm).quartiles is not None]
        for arm in ("unclipped", "clipped")
    }
    return {
        "model": str(d.model),
        "length": d.length,
        "window": d.window,
        "far_start": d.first_back[0],
        "far_end": d.first_back[1],
        "hidden": d.hidden,
        "batch": d.batch,
        "updates": d.updates,
        "seeds": d.seeds,
        "networks": 2 * d.seeds,
        "last_free_seed": d.seeds - 1,
        "first_clipped_seed": d.seeds,
        "last_clipped_seed": 2 * d.seeds - 1,
        "eval_every": d.eval_every,
        "eval_size": d.eval_size,
        "success": d.success,
        "r2": 1.0 - d.success,
        "diverge": d.diverge,
        "rungs": len(rungs),
        "runs": len(rungs) * d.seeds,
        "edge": cal.edge,
        "sharpness": cal.sharpness_median,
        "sharpness_low": min(cal.sharpness),
        "sharpness_high": max(cal.sharpness),
        "clip": lad.clip,
        "rates": _join([_rate(r) for r in lad.rates]),
        "multiples": _join([f"{2.0**k:g}" for k in d.exponents]),
        "rate": {k: r.rate for k, r in zip(keys, rungs)},
        "level": level,
        "alpha": clip_lab.ALPHA,
        "free_diverged": sum(r.unclipped.diverged for r in rungs),
        "clipped_diverged": sum(r.clipped.diverged for r in rungs),
        "free_succeeded": sum(r.unclipped.succeeded for r in rungs),
        "clipped_succeeded": sum(r.clipped.succeeded for r in rungs),
        "free_by_rate": _join([f"{r.unclipped.diverged} at {_rate(r.rate)}" for r in rungs]),
        "clipped_by_rate": _join([f"{r.clipped.diverged} at {_rate(r.rate)}" for r in rungs]),
        "free_success_by_rate": _join([f"{r.unclipped.succeeded} at {_rate(r.rate)}" for r in rungs]),
        "clipped_success_by_rate": _join([f"{r.clipped.succeeded} at {_rate(r.rate)}" for r in rungs]),
        "diverged": {k: [r.unclipped.diverged, r.clipped.diverged] for k, r in zip(keys, rungs)},
        "succeeded": {k: [r.unclipped.succeeded, r.clipped.succeeded] for k, r in zip(keys, rungs)},
        "p_diverged": {k: r.p_diverged for k, r in zip(keys, rungs)},
        "p_success": {k: r.p_success for k, r in zip(keys, rungs)},
        "divergence_test": _differences(rungs, "diverged", level),
        "success_test": _differences(rungs, "succeeded", level),
        "verdict": _verdict(rungs, level),
        "learning": _learning(rungs),
        "what_learning_tells": _what_learning_tells(rungs),
        "start_reach": start_reach,
        "start_reach_text": _small(start_reach),
        "learning_limit": _learning_limit(rungs, start_reach, d.first_back[0]),
        "error_range": {arm: _range(v) for arm, v in medians.items()},
        "figure_survivors": _survivors(rungs[chosen]),
        "median_low": {arm: (min(v) if v else None) for arm, v in medians.items()},
        "median_high": {arm: (max(v) if v else None) for arm, v in medians.items()},
        "figure_rung": chosen,
        "figure_rate": rungs[chosen].rate,
        "figure_free_diverged": rungs[chosen].unclipped.diverged,
        "figure_clipped_diverged": rungs[chosen].clipped.diverged,
        "figure_rule": _figure_rule(rungs, chosen, level),
        "diagnosis": _diagnosis(rungs[chosen], results),
        **_high_values(lad, results, level),
    }


# ---------------------------------------------------------------------------- the table


def _count(k: int, n: int, interval: tuple[float, float]) -> str:
    return f"{k}/{n} ({interval[0]:.2f}–{interval[1]:.2f})"


def _ratios(arm) -> str:
    if arm.quartiles is None:
        return "–"
    q1, median, q3 = arm.quartiles
    return f"{median:.2f} ({q1:.2f}–{q3:.2f})"


@table()
def clipping_counts(
    model: Model = str(DESIGN.model),
    length: AddingLength = DESIGN.length,
    window: PositiveInt | None = DESIGN.window,
    hidden: PositiveInt = DESIGN.hidden,
    batch: PositiveInt = DESIGN.batch,
    updates: PositiveInt = DESIGN.updates,
    seeds: PositiveInt = DESIGN.seeds,
    exponents: Sequence[int] = DESIGN.exponents,
    success: Positive = DESIGN.success,
    diverge: Positive = DESIGN.diverge,
    eval_every: PositiveInt = DESIGN.eval_every,
    eval_size: PositiveInt = DESIGN.eval_size,
):
    """Per rung and arm: diverged and successful networks with 95% Wilson intervals, the held-out error
    ratio's median and quartiles, and Fisher's exact test between the arms."""
    lad, rungs, results = _experiment(
        model, length, window, hidden, batch, updates, seeds, exponents, success, diverge, eval_every, eval_size
    )
    values = _values(lad, rungs, results)
    rows = []
    high = {r.rate: r for r in lad.read_high(results)}
    for k, r in zip(lad.design.exponents, rungs):
        for arm in (r.unclipped, r.clipped, high[r.rate].clipped):
            first = arm is r.unclipped
            tested = r if arm is r.clipped else high[r.rate]
            rows.append(
                [
                    _rate(r.rate) if first else "",
                    f"{2.0**k:g}" if first else "",
                    "none" if first else f"at {arm.members[0].clip:.2f}",
                    _count(arm.diverged, arm.n, arm.diverged_interval),
                    _count(arm.succeeded, arm.n, arm.success_interval),
                    _ratios(arm),
                    "" if first else _p_tex(tested.p_diverged),
                    "" if first else _p_tex(tested.p_success),
                ]
            )
    table = Table(
        columns=[
            "learning rate",
            "× edge",
            "clipping",
            "diverged (95% interval)",
            "learned (95% interval)",
            "held-out error / baseline, median (quartiles)",
            "Fisher p, diverged",
            "Fisher p, learned",
        ],
        rows=rows,
        align=["right", "right", "left", "right", "right", "right", "right", "right"],
        notes=(
            f"Tanh RNN, {lad.design.hidden} units, adding problem of length {lad.design.length}"
            + ("" if lad.design.window is None else f" with both marks in its last {lad.design.window} steps")
            + ", "
            f"{lad.design.updates} updates of plain gradient descent on batches of {lad.design.batch}, "
            f"{lad.design.seeds} networks per row. Diverged: a loss or gradient not finite, or a training "
            f"loss above {lad.design.diverge:g} times the baseline. Learned: held-out error at most "
            f"{lad.design.success:g} times the baseline on {lad.design.eval_size} sequences. The error "
            f"ratio is taken over the networks that did not diverge, at success or at the end. Fisher's p "
            f"compares each clipped row with the row without clipping at the same rate; a p below "
            f"{values['level']:g} (0.05 over {len(rungs)} rates) counts as a detectable difference."
        ),
    )
    return table, values


# ---------------------------------------------------------------------------- the figure


@figure()
def clipping_curves(
    model: Model = str(DESIGN.model),
    length: AddingLength = DESIGN.length,
    window: PositiveInt | None = DESIGN.window,
    hidden: PositiveInt = DESIGN.hidden,
    batch: PositiveInt = DESIGN.batch,
    updates: PositiveInt = DESIGN.updates,
    seeds: PositiveInt = DESIGN.seeds,
    exponents: Sequence[int] = DESIGN.exponents,
    success: Positive = DESIGN.success,
    diverge: Positive = DESIGN.diverge,
    eval_every: PositiveInt = DESIGN.eval_every,
    eval_size: PositiveInt = DESIGN.eval_size,
):
    """Training loss and the gradient norms of W_hh and of the readout against updates, both arms, at the
    rung :func:`rnnmem.clip_lab.figure_rung` picks."""
    lad, rungs, results = _experiment(
        model, length, window, hidden, batch, updates, seeds, exponents, success, diverge, eval_every, eval_size
    )
    values = _values(lad, rungs, results)
    d = lad.design
    rung = rungs[values["figure_rung"]]
    by_member = {m: r for r in results.values() for m in r.members}
    edges = clip_lab.log_windows(d.updates, FIGURE_WINDOWS)
    from matplotlib.ticker import NullFormatter

    fig, axes = new_figure(nrows=3, height=6.4, sharex=True)
    panels = [
        (axes[0], "training loss\n(squared error)", lambda r, i: r.losses[i]),
        (axes[1], "gradient norm\nof $W_{hh}$", lambda r, i: r.norms[i, GROUPS.index("recurrent")]),
        (axes[2], "gradient norm\nof the readout", lambda r, i: r.norms[i, GROUPS.index("readout")]),
    ]
    baseline = d.task.baseline_mse
    for arm in (rung.unclipped, rung.clipped):
        colour = ARM_COLOURS[arm.arm]
        label = "no clipping" if arm.arm == "unclipped" else f"clipped at norm {lad.clip:.2f}"
        for ax, _, read in panels:
            series = np.array([read(by_member[m], by_member[m].index(m)) for m in arm.members])
            centres, q = clip_lab.window_quantiles(series, edges)
            ax.fill_between(centres, q[:, 0], q[:, 2], color=colour, alpha=0.22, linewidth=0)
            ax.plot(centres, q[:, 1], color=colour, linewidth=1.4, label=label if ax is axes[0] else None)
            ax.plot(centres, q[:, 3], color=colour, linewidth=0.8, linestyle=":")
            ax.set_yscale("log")
            ax.yaxis.set_minor_formatter(NullFormatter())
        for m, outcome in zip(arm.members, arm.outcomes):
            if outcome == "diverged":
                r = by_member[m]
                i = r.index(m)
                u = r.left_at[i]
                loss = r.losses[i, u - 1]
                y = loss if np.isfinite(loss) else d.diverge * baseline
                axes[0].plot(u, y, marker="x", color=colour, markersize=6, linestyle="none")
    axes[0].axhline(baseline, color="#777777", linestyle=":", linewidth=1.0)
    axes[0].axhline(d.diverge * baseline, color="#777777", linestyle="--", linewidth=0.8)
    axes[0].annotate(
        "baseline", (d.updates, baseline), textcoords="offset points", xytext=(-4, 3), ha="right", color="#555555"
    )
    for ax, ylabel, _ in panels:
        ax.set_ylabel(ylabel)
    axes[-1].set_xlabel(f"update (gradient descent at learning rate {_rate(rung.rate)})")
    axes[-1].set_xscale("log")
    axes[-1].set_xlim(1, d.updates)
    axes[0].legend(loc="upper right")
    values = dict(values, windows=len(edges) - 1, rate_text=_rate(rung.rate))
    return fig, values


# ---------------------------------------------------------------------------- at a rate the pilot picks


def _diverged(members: Sequence[clip_lab.Member], results: dict) -> int:
    """How many of ``members`` diverged in ``results``."""
    by_member = {m: r for r in results.values() for m in r.members}
    return sum(by_member[m].outcome[by_member[m].index(m)] == "diverged" for m in members)


def _piloted(lad: ClipLadder, rungs: list[Rung], results: dict) -> tuple[clip_lab.Pilot, dict]:
    """The pilot rule applied to the ladder (:func:`rnnmem.clip_lab.pilot`), and the results of every run
    it needed: the ladder's, the reference arm's at each midpoint, and the clipped arms' at a new rate."""
    results = dict(results)

    def train(rate: float) -> int:
        members = lad.members(rate, "unclipped")
        keys = lad.split(members)
        results.update(zip(keys, runs(keys)))
        return _diverged(members, results)

    counts = [r.unclipped.diverged for r in rungs]
    chosen = clip_lab.pilot(lad.rates, counts, lad.design.seeds, train)
    if chosen.rung is None:
        keys = lad.split(lad.members(chosen.rate, "clipped") + lad.high_members(chosen.rate))
        results.update(zip(keys, runs(keys)))
    return chosen, results


_FIELDS = {"diverged": "divergence", "succeeded": "learning"}


def _compared(v: verdicts.Verdict) -> str:
    """One :func:`rnnmem.verdicts.compare` of a clipped arm (``a``) with the unclipped arm (``b``), in words."""
    counts = f"{v.a} of {v.n_a} against {v.b} of {v.n_b}"
    if v.differ:
        return f"{counts}, {v.kind} with clipping (p = {verdicts.p_text(v.p)})"
    if not v.can_tell:
        return f"{counts}, no verdict, both arms at the {v.kind}"
    return (
        f"{counts}, no detectable difference (p = {verdicts.p_text(v.p)}; power {v.power:.2f} against a "
        f"difference of {v.effect:g})"
    )


def _held_out(arm: clip_lab.ArmReading, free: clip_lab.ArmReading) -> tuple[float | None, str]:
    """The Mann-Whitney test of the held-out error ratios of ``arm`` against ``free`` (the networks that did
    not diverge), its p and its words; none when either arm has no such network."""
    if arm.ratios.size == 0 or free.ratios.size == 0:
        return None, "no test, every network of an arm having diverged"
    p = stats.mann_whitney(arm.ratios, free.ratios).p
    return p, f"p = {verdicts.p_text(p)}"


def _pilot_values(lad: ClipLadder, chosen: clip_lab.Pilot, readings: tuple) -> dict:
    """Everything the subsection reads: the rule, the rate it picked, the counts and the comparisons."""
    free, clipped, high = readings
    d = lad.design
    if chosen.rung is not None:
        how = (
            f"a rung of the ladder, {_rate(chosen.rate)}, already lay in the band "
            f"({free.diverged} of {free.n} diverged without clipping), so no pilot run was trained"
        )
    else:
        steps = _join([f"{k} of {d.seeds} at {_rate(r)}" for r, k in chosen.tried])
        found = "" if chosen.found else f"; none lay in the band, so the last midpoint, {_rate(chosen.rate)}, is used"
        how = f"no rung lay in the band; the pilot's unclipped networks diverged {steps}{found}"
    arms: dict[str, Any] = {}
    for name, arm in (("clipped", clipped), ("high", high)):
        compared = {f: verdicts.compare(getattr(arm, f), arm.n, getattr(free, f), free.n) for f in _FIELDS}
        p_mw, mw_words = _held_out(arm, free)
        arms[name] = {
            "threshold": arm.members[0].clip,
            "diverged": arm.diverged,
            "succeeded": arm.succeeded,
            "kind": {f: v.kind for f, v in compared.items()},
            "p": {f: v.p for f, v in compared.items()},
            "power": {f: v.power for f, v in compared.items()},
            "words": {f: _compared(v) for f, v in compared.items()},
            "p_held_out": p_mw,
            "held_out": mw_words,
        }
    return {
        "band_low": round(100 * clip_lab.PILOT_BAND[0]),
        "band_high": round(100 * clip_lab.PILOT_BAND[1]),
        "steps": clip_lab.PILOT_STEPS,
        "length": d.length,
        "window": d.window,
        "seeds": d.seeds,
        "rate": chosen.rate,
        "rate_text": _rate(chosen.rate),
        "multiple": f"{chosen.rate / lad.calibration.edge:.2g}" if lad.calibration is not None else "–",
        "rung": chosen.rung,
        "found": chosen.found,
        "tried": [[r, k] for r, k in chosen.tried],
        "pilot_runs": len(chosen.tried),
        "how": how[0].upper() + how[1:],
        "free_diverged": free.diverged,
        "free_succeeded": free.succeeded,
        **{f"{name}_{key}": value for name, values in arms.items() for key, value in values.items()},
    }


def _p_power(values: dict, key: str, field: str) -> str:
    """A table cell: the p of one comparison and, in brackets, its power."""
    return f"{_p_tex(values[f'{key}_p'][field])} ({values[f'{key}_power'][field]:.2f})"


@table()
def clipping_pilot(
    model: Model = str(DESIGN.model),
    length: AddingLength = DESIGN.length,
    window: PositiveInt | None = DESIGN.window,
    hidden: PositiveInt = DESIGN.hidden,
    batch: PositiveInt = DESIGN.batch,
    updates: PositiveInt = DESIGN.updates,
    seeds: PositiveInt = DESIGN.seeds,
    exponents: Sequence[int] = DESIGN.exponents,
    success: Positive = DESIGN.success,
    diverge: Positive = DESIGN.diverge,
    eval_every: PositiveInt = DESIGN.eval_every,
    eval_size: PositiveInt = DESIGN.eval_size,
):
    """At the rate the pilot rule picks (:func:`rnnmem.clip_lab.pilot`): each arm's diverged and successful
    networks, its held-out error ratio, and each clipped arm against the unclipped one by
    :func:`rnnmem.verdicts.compare` (divergence, learning) and the Mann-Whitney test (held-out error)."""
    lad, rungs, results = _experiment(
        model, length, window, hidden, batch, updates, seeds, exponents, success, diverge, eval_every, eval_size
    )
    chosen, results = _piloted(lad, rungs, results)
    readings = lad.read_rate(chosen.rate, results)
    values = _pilot_values(lad, chosen, readings)
    rows = []
    for arm in readings:
        first = arm.arm == "unclipped"
        key = "clipped" if arm.arm == "clipped" else "high"
        rows.append(
            [
                "none" if first else f"at {arm.members[0].clip:.2f}",
                _count(arm.diverged, arm.n, arm.diverged_interval),
                _count(arm.succeeded, arm.n, arm.success_interval),
                _ratios(arm),
                "" if first else _p_power(values, key, "diverged"),
                "" if first else _p_power(values, key, "succeeded"),
                "" if first or values[f"{key}_p_held_out"] is None else _p_tex(values[f"{key}_p_held_out"]),
            ]
        )
    table = Table(
        columns=[
            "clipping",
            "diverged (95% interval)",
            "learned (95% interval)",
            "held-out error / baseline, median (quartiles)",
            "Fisher p, diverged (power)",
            "Fisher p, learned (power)",
            "Mann-Whitney p, held-out error",
        ],
        rows=rows,
        align=["left", "right", "right", "right", "right", "right", "right"],
        notes=(
            f"Learning rate {values['rate_text']}, picked by the pilot rule; {lad.design.seeds} networks per row, "
            f"the same seeds as the ladder's arms. Each clipped row is compared with the row without clipping; "
            f"the power is that of Fisher's test at {verdicts.ALPHA:g} against a difference of "
            f"{verdicts.EFFECT:g} from the unclipped arm's share. The held-out error is that of the networks "
            f"that did not diverge."
        ),
    )
    return table, values

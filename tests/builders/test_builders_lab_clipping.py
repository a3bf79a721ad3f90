"""The clipping experiment's figure and table: small runs render what they claim, and every sentence the
section builds from them says what the counts and tests say.

The science (design, calibration, training loop, reading) is tested in tests/core/test_clip_lab.py.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from one_directive import OneDirective

from rnnmem import clip_lab, engine, stats, verdicts
from rnnmem.checks import check_arguments
from rnnmem.clip_lab import ArmReading, ClipDesign, Divergence, Member, Rung
from rnnmem.site.builders import lab_clipping as lc
from rnnmem.site.directives import DirectiveError
from rnnmem.site.render import Renderer

UPDATES = 12
ARGS = dict(length=6, hidden=3, batch=4, updates=UPDATES, seeds=3, exponents=[-1, 0, 6], eval_every=4, eval_size=32)
TEXT = " ".join(f"{k}={v!r}".replace("'", '"') for k, v in ARGS.items())


one = OneDirective("docs/chapters/memory-measured.md")


def experiment(window=None):
    """The small experiment both builders draw (its runs are shared through the lab's pool)."""
    return lc._experiment("rnn", **ARGS, window=window, success=0.4, diverge=10.0)


# ---------------------------------------------------------------------------- the table and the figure


def test_the_table_shows_every_rung_and_arm_with_its_counts_intervals_and_tests(tmp_path):
    text = one.render(tmp_path, f"<!-- table: clipping_counts {TEXT} -->")
    lad, rungs, results = experiment()
    high = lad.read_high(results)
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in text.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == 3 * len(rungs)
    for k, rung in enumerate(rungs):
        first, second, third = rows[3 * k], rows[3 * k + 1], rows[3 * k + 2]
        assert first[0] == lc._rate(rung.rate) and second[0] == third[0] == "" and first[6] == first[7] == ""
        assert first[1] == f"{2.0 ** lad.design.exponents[k]:g}"
        assert first[2] == "none" and second[2] == f"at {lad.clip:.2f}" and third[2] == f"at {lad.high_clip:.2f}"
        for row, arm in ((first, rung.unclipped), (second, rung.clipped), (third, high[k].clipped)):
            lo, hi = stats.wilson(arm.diverged, arm.n)
            assert row[3] == f"{arm.diverged}/{arm.n} ({lo:.2f}–{hi:.2f})"
            lo, hi = stats.wilson(arm.succeeded, arm.n)
            assert row[4] == f"{arm.succeeded}/{arm.n} ({lo:.2f}–{hi:.2f})"
            if arm.diverged == arm.n:
                assert row[5] == "–"
            else:
                q1, median, q3 = stats.quartiles(arm.ratios)
                assert row[5] == f"{median:.2f} ({q1:.2f}–{q3:.2f})"
        assert second[6] == lc._p_tex(rung.p_diverged) and second[7] == lc._p_tex(rung.p_success)
        assert third[6] == lc._p_tex(high[k].p_diverged) and third[7] == lc._p_tex(high[k].p_success)
    # the rung of a step sixty-four times the edge: every unclipped network diverges
    assert rungs[-1].unclipped.diverged == rungs[-1].unclipped.n


def test_the_figure_draws_the_rung_the_rule_picks(tmp_path):
    svg = one.render(tmp_path, f'<!-- figure: clipping_curves {TEXT} caption="c" alt="a" -->')
    assert svg.lstrip().startswith("<?xml") or "<svg" in svg
    _, values = lc.clipping_curves(**ARGS)
    lad, rungs, _ = experiment()
    chosen = clip_lab.figure_rung(rungs)
    assert values["figure_rung"] == chosen and values["rate_text"] == lc._rate(rungs[chosen].rate)
    assert values["figure_free_diverged"] == rungs[chosen].unclipped.diverged
    assert values["figure_clipped_diverged"] == rungs[chosen].clipped.diverged
    assert values["windows"] == len(clip_lab.log_windows(UPDATES, lc.FIGURE_WINDOWS)) - 1


def test_the_figure_draws_what_its_caption_and_alt_text_say():
    fig, values = lc.clipping_curves(**ARGS)
    lad, rungs, _ = experiment()
    rung = rungs[values["figure_rung"]]
    top = fig.axes[0]
    crosses = [line for line in top.lines if line.get_marker() == "x"]
    assert len(crosses) == rung.unclipped.diverged + rung.clipped.diverged  # a cross per network that diverged
    orange, blue = lc.ARM_COLOURS["unclipped"], lc.ARM_COLOURS["clipped"]
    assert (orange, blue) == ("#d9731a", "#1f6fb2")  # the alt text names them orange and blue
    assert {line.get_color() for line in crosses} <= {orange} | ({blue} if rung.clipped.diverged else set())
    flat = {
        round(float(line.get_ydata()[0]), 12): line.get_linestyle()
        for line in top.lines
        if len(set(line.get_ydata())) == 1 and len(line.get_ydata()) == 2
    }
    baseline = lad.design.task.baseline_mse
    assert flat[round(baseline, 12)] == ":" and flat[round(lad.design.diverge * baseline, 12)] == "--"
    assert [ax.get_yscale() for ax in fig.axes] == ["log"] * 3 and fig.axes[2].get_xscale() == "log"
    assert "W_{hh}" in fig.axes[1].get_ylabel() and "readout" in fig.axes[2].get_ylabel()


def test_the_section_s_fixed_claims_about_the_task_and_gradient_descent():
    # "each step holds a value drawn uniformly from [0, 1] and a marker, one step in each half of the
    # sequence is marked, and the target is the sum of the two marked values"
    T = clip_lab.DESIGN.length
    b = clip_lab.DESIGN.task.sample(2000, seed=5)
    values, marks = b.inputs[:, :, 0], b.inputs[:, :, 1]
    assert values.min() >= 0 and values.max() <= 1 and set(np.unique(marks)) == {0.0, 1.0}
    assert np.all(marks[: T // 2].sum(axis=0) == 1) and np.all(marks[T // 2 :].sum(axis=0) == 1)
    assert np.allclose((values * marks).sum(axis=0), b.targets)
    # "on a quadratic of curvature lambda, gradient descent is stable only if eta < 2 / lambda"
    lam = 6.0
    for eta, shrinks in ((0.99 * 2 / lam, True), (1.01 * 2 / lam, False)):
        x = 1.0
        for _ in range(2000):
            x -= eta * lam * x
        assert (abs(x) < 1) == shrinks
    # "since tanh' <= 1, going back a step can stretch a gradient only if ||W_hh||_2 > 1"
    rng = np.random.default_rng(3)
    for _ in range(200):
        W = rng.standard_normal((6, 6))
        W /= np.linalg.norm(W, 2) * rng.uniform(1.0, 3.0)  # spectral norm at most one
        slope = 1 - np.tanh(rng.standard_normal(6)) ** 2
        g = rng.standard_normal(6)
        assert np.linalg.norm(W.T @ (slope * g)) <= np.linalg.norm(g) * (1 + 1e-12)


def test_the_figure_and_the_table_share_their_runs(tmp_path, monkeypatch):
    one.render(tmp_path, f"<!-- table: clipping_counts {TEXT} -->")
    monkeypatch.setattr(engine.Local, "submit", lambda self, run: pytest.fail(f"trained {run} again"))
    one.render(tmp_path / "other", f'<!-- figure: clipping_curves {TEXT} caption="c" -->')


# ---------------------------------------------------------------------------- the values the prose reads


def test_the_values_are_the_design_the_calibration_and_the_counts():
    _, values = lc.clipping_counts(**ARGS)
    lad, rungs, _ = experiment()
    d, cal = lad.design, lad.calibration
    assert cal is not None
    assert (values["length"], values["hidden"], values["batch"], values["updates"]) == (6, 3, 4, 12)
    # "the unclipped arm trains seeds 0 to ..., the clipped arm seeds ... to ..."
    assert d.arm_seeds("unclipped") == tuple(range(values["last_free_seed"] + 1))
    assert d.arm_seeds("clipped") == tuple(range(values["first_clipped_seed"], values["last_clipped_seed"] + 1))
    assert values["networks"] == len(cal.seeds) == 2 * d.seeds
    # "the first marked value, far_start to far_end steps back"
    assert values["far_start"] == d.length // 2 and values["far_end"] == d.length - 1
    assert values["window"] is None
    # "descent is stable at the start below 2 / lambda, the edge; the ladder takes these multiples of it"
    assert values["sharpness"] == cal.sharpness_median and values["edge"] == 2 / cal.sharpness_median
    assert values["rates"] == lc._join([lc._rate(cal.edge * 2.0**k) for k in d.exponents])
    assert values["multiples"] == lc._join([f"{2.0**k:g}" for k in d.exponents])
    assert values["clip"] == lad.clip == cal.clip
    assert values["r2"] == pytest.approx(1 - d.success)
    assert values["level"] == clip_lab.detection_level(len(rungs)) and values["alpha"] == clip_lab.ALPHA
    assert values["free_diverged"] == sum(r.unclipped.diverged for r in rungs)
    assert values["clipped_diverged"] == sum(r.clipped.diverged for r in rungs)
    assert values["free_succeeded"] == sum(r.unclipped.succeeded for r in rungs)
    assert values["clipped_succeeded"] == sum(r.clipped.succeeded for r in rungs)
    assert values["runs"] == len(rungs) * d.seeds
    for arm in ("unclipped", "clipped"):
        medians = [getattr(r, arm).quartiles[1] for r in rungs if getattr(r, arm).quartiles is not None]
        assert values["median_low"][arm] == min(medians) and values["median_high"][arm] == max(medians)
    for k, r in enumerate(rungs):
        assert f"{r.unclipped.diverged} at {lc._rate(r.rate)}" in values["free_by_rate"]
        assert values["diverged"][f"r{k}"] == [r.unclipped.diverged, r.clipped.diverged]
        assert values["p_diverged"][f"r{k}"] == r.p_diverged


# ---------------------------------------------------------------------------- the sentences


def arm(name: str, diverged: int, succeeded: int, n: int = 20) -> ArmReading:
    return ArmReading(
        arm=name,
        n=n,
        diverged=diverged,
        succeeded=succeeded,
        diverged_interval=stats.wilson(diverged, n),
        success_interval=stats.wilson(succeeded, n),
        ratios=np.linspace(0.5, 1.0, n - diverged),
        quartiles=None,
        outcomes=("diverged",) * diverged + ("succeeded",) * succeeded + ("trained",) * (n - diverged - succeeded),
        members=tuple(Member(s, 0.1) for s in range(n)),
    )


def rung(rate: float, free: tuple[int, int], clipped: tuple[int, int], n: int = 20) -> Rung:
    a, b = arm("unclipped", *free, n=n), arm("clipped", *clipped, n=n)
    return Rung(
        exponent=0,
        rate=rate,
        unclipped=a,
        clipped=b,
        p_diverged=stats.fisher_exact(a.diverged, n, b.diverged, n),
        p_success=stats.fisher_exact(a.succeeded, n, b.succeeded, n),
    )


LEVEL = clip_lab.detection_level(3)


def test_no_detectable_difference_is_said_where_fisher_says_so():
    rungs = [rung(0.1, (0, 0), (0, 0)), rung(0.2, (3, 0), (1, 0)), rung(0.4, (5, 2), (4, 2))]
    assert all(r.p_diverged >= LEVEL for r in rungs)
    sentence = lc._differences(rungs, "diverged", LEVEL)
    smallest = min(r.p_diverged for r in rungs)
    smallest = min(r.p_diverged for r in rungs[1:])
    assert sentence == (
        "At 0.1 both arms sit at the floor or the ceiling, where the test cannot tell; "
        f"the test finds no difference at any other rate (p ≥ {lc._p(smallest)})"
    )
    assert lc._differences(rungs[:1], "succeeded", LEVEL) == (
        "At every rate both arms sit at the floor or the ceiling, where the test cannot tell"
    )
    assert lc._differences(rungs[1:], "diverged", LEVEL).startswith("The test finds no difference at any rate")
    assert lc._verdict(rungs, LEVEL) == (
        "made no detectable difference to diverging and left learning where the counts cannot tell, "
        "both arms at the floor or ceiling"
    )


def test_a_detectable_difference_is_named_with_its_direction_and_its_p():
    rungs = [rung(0.1, (0, 0), (0, 0)), rung(0.2, (20, 0), (1, 0)), rung(0.4, (0, 0), (19, 0))]
    sentence = lc._differences(rungs, "diverged", LEVEL)
    assert sentence.startswith(
        f"Fewer networks diverged with clipping at learning rate 0.2 (p = {lc._p(rungs[1].p_diverged)})"
    )
    assert f"more networks diverged with clipping at learning rate 0.4 (p = {lc._p(rungs[2].p_diverged)})" in sentence
    assert sentence.endswith("at 0.1 both arms sit at the floor or the ceiling, where the test cannot tell")
    verdict = lc._verdict(rungs, LEVEL)
    assert verdict.startswith("kept networks from diverging at learning rate 0.2")
    assert "made more networks diverge at learning rate 0.4" in verdict
    assert verdict.endswith("left learning where the counts cannot tell, both arms at the floor or ceiling")


def test_learning_is_worded_from_the_success_counts():
    rungs = [rung(0.1, (0, 2), (0, 18)), rung(0.2, (0, 0), (0, 0))]
    level = clip_lab.detection_level(2)
    assert rungs[0].p_success < level
    assert lc._differences(rungs, "succeeded", level).startswith(
        "More networks learned with clipping at learning rate 0.1"
    )
    assert "made more networks learn at learning rate 0.1" in lc._verdict(rungs, level)


def test_the_figure_rule_is_worded_from_its_p():
    rungs = [rung(0.1, (0, 0), (0, 0)), rung(0.2, (9, 0), (1, 0))]
    chosen = clip_lab.figure_rung(rungs)
    assert chosen == 1 and f"(p = {lc._p(rungs[1].p_diverged)})" in lc._figure_rule(rungs, chosen, LEVEL)
    flat = [rung(0.1, (0, 0), (0, 0)), rung(0.2, (2, 0), (2, 0))]
    assert lc._figure_rule(flat, clip_lab.figure_rung(flat), LEVEL).startswith("the lowest rate")


def test_p_values_are_printed_to_two_digits_and_small_ones_as_powers_of_ten():
    assert lc._p(0.4857) == "0.49" and lc._p(1.0) == "1" and lc._p(7.7e-07) == "7.7 × 10⁻⁷"
    assert lc._p_tex(7.7e-07) == "\\(7.7 \\times 10^{-7}\\)" and lc._p_tex(0.012) == "0.012"


def divergence(peaks: list[float], T: int = 10) -> Divergence:
    """Synthetic divergences: network e's gradient shrinks going back, but peaks at ``peaks[e]`` at distance 2."""
    n = len(peaks)
    reach = np.tile(0.5 ** np.arange(T), (n, 1))
    reach_last = reach.copy()
    reach_last[:, 2] = peaks
    return Divergence(
        members=tuple(Member(s, 1.0) for s in range(n)),
        updates=np.arange(5, 5 + n),
        shares_first=np.tile([0.1, 0.1, 0.1, 0.7], (n, 1)),
        shares_last=np.tile([0.6, 0.1, 0.1, 0.2], (n, 1)),
        sigma_start=np.full(n, 0.6),
        sigma_last=np.full(n, 1.25),
        reach_start=reach,
        reach_last=reach_last,
    )


@pytest.mark.parametrize(
    "peaks, exponent, says",
    [
        (
            [0.7, 0.8, 0.9],
            1,
            "No gradient exploded through time: none grew, going back, to 2 times its size at the last step. "
            "What threw these networks was the size of a step, at a learning rate above the edge of stability.",
        ),
        ([1.2, 1.5, 1.9], 0, "No gradient exploded through time"),
        ([1.2, 1.5, 1.9], 0, "the size of a step, at the edge of stability."),
        (
            [2.5, 3.0, 4.0],
            1,
            "For every one of them the gradient grew, going back, to 2 times its size at the last "
            "step or more: an explosion through time.",
        ),
        (
            [0.9, 1.5, 3.0],
            -1,
            "For 1 of them the gradient grew, going back, to 2 times its size at the last step or more, an explosion "
            "through time; for the other 2 it did not, and what threw them was the size of a step, below the edge "
            "of stability.",
        ),
    ],
)
def test_the_diagnosis_says_what_the_gradient_reaching_back_shows(monkeypatch, peaks, exponent, says):
    r = dataclasses.replace(rung(0.3, (3, 0), (0, 0)), exponent=exponent)
    monkeypatch.setattr(clip_lab, "divergences", lambda reading, results: divergence(peaks))
    values = lc._diagnosis(r, {})
    assert says in values["meaning"]
    assert values["grew_last"] == sum(p > 1 for p in peaks) and values["grew_start"] == 0
    assert values["exploded"] == sum(p >= clip_lab.EXPLOSION for p in peaks)
    k = values["exploded"]
    assert ("not a gradient exploding" in values["cause"]) == (k == 0)
    assert (values["cause"] == "a gradient exploding through time") == (k == 3)
    words = values["words"]
    assert words.startswith(f"Without clipping, 3 of {r.unclipped.n} networks diverged there, between updates 5 and 7")
    assert (
        "the readout carried a median 20% of the squared gradient norm and $W_{hh}$ 60%, against 70% and 10%" in words
    )
    assert "had a median of 1.25 (0.60 at the start)" in words
    # distance 5 of 10: 0.5 ** 5, the same before and after (only distance 2 was changed)
    assert "a median 0.03 reached 5 steps back (0.03 at the start)" in words
    if values["grew_last"]:
        assert (
            f"for {values['grew_last']} of the 3 it grew somewhere on the way back, to at most {max(peaks):.3g}"
            in words
        )
    else:
        assert words.endswith("for none did it grow anywhere on the way back.")


def test_the_diagnosis_reads_real_divergences():
    lad, rungs, results = experiment()
    top = rungs[-1]
    values = lc._diagnosis(top, results)
    div = clip_lab.divergences(top.unclipped, results)
    assert values["diverged"] == len(div.members) == top.unclipped.n
    far = lad.design.length // 2
    assert values["distance"] == far
    assert values["reach_last"] == float(np.nanmedian(div.reach_last[:, far]))
    assert values["grew_last"] == int(np.sum(np.nanmax(div.reach_last[:, 1:], axis=1) > 1))
    assert values["exploded"] == int(np.sum(np.nanmax(div.reach_last[:, 1:], axis=1) >= clip_lab.EXPLOSION))
    rec = clip_lab.GROUPS.index("recurrent")
    assert values["recurrent_last"] == float(np.nanmedian(div.shares_last[:, rec]))
    assert re.search(r"the readout carried a median \d+% of the squared gradient norm", values["words"])
    quiet = dataclasses.replace(
        top, unclipped=dataclasses.replace(top.unclipped, outcomes=("trained",) * top.unclipped.n)
    )
    assert lc._diagnosis(quiet, results)["words"] == "No network diverged there without clipping."


def test_the_limit_of_what_the_learning_counts_say_is_worded_from_them():
    none = [rung(0.1, (0, 0), (0, 0)), rung(0.2, (3, 0), (0, 0))]
    words = lc._learning_limit(none, 3.8e-14, 50)
    assert words.startswith("Since no network learned at any rate, this design cannot tell")
    assert "a median 3.8 × 10⁻¹⁴ of the gradient at the last step reached 50 steps back" in words
    some = [rung(0.1, (0, 1), (0, 0))]
    assert lc._learning_limit(some, 0.2, 50).startswith("At the start, a median 0.20 of the gradient")
    assert lc._learning(none) == "No network learned, at any rate, with or without clipping."
    assert lc._learning(some) == "Networks that learned: 1 without clipping (1 at 0.1) and 0 with it (0 at 0.1)."


def test_whether_a_design_can_test_learning_is_worded_from_its_counts():
    none = [rung(0.1, (0, 0), (0, 0)), rung(0.2, (3, 0), (0, 0))]
    assert lc._what_learning_tells(none) == (
        "No network learned it within the budget, at any rate, so this design cannot say whether clipping "
        "changes what a network learns."
    )
    some = [rung(0.1, (0, 0), (0, 4)), rung(0.2, (3, 1), (0, 2))]
    assert lc._what_learning_tells(some) == "7 of its 80 networks learned it within the budget."


def test_the_fate_of_the_clipped_arm_is_worded_from_its_counts():
    calm = rung(0.2, (5, 0), (0, 0))
    assert lc._survivors(calm).startswith("None of the 20 clipped networks diverged; they ended with a median")
    assert lc._survivors(calm).endswith("and none learned.")
    some = rung(0.2, (5, 0), (3, 2))
    assert lc._survivors(some).startswith("3 of the 20 clipped networks diverged too; the other 17 ended")
    assert lc._survivors(some).endswith("and 2 learned.")
    assert lc._survivors(rung(0.2, (20, 0), (20, 0))) == "All 20 clipped networks diverged too."
    assert lc._range([0.997, 0.999]) == "1.00" and lc._range([0.997, 1.04]) == "between 1.00 and 1.04"


def test_the_start_reach_is_the_median_over_the_untrained_networks_of_both_arms():
    lad, _, _ = experiment()
    _, values = lc.clipping_counts(**ARGS)
    reach = clip_lab.gradient_reach(lad.design, list(lad.calibration.seeds))[:, lad.design.length // 2]
    assert values["start_reach"] == float(np.median(reach))


def test_with_a_window_the_table_and_its_words_are_of_the_late_task(tmp_path):
    text = one.render(tmp_path, f"<!-- table: clipping_counts {TEXT} window=4 -->")
    _, values = lc.clipping_counts(**ARGS, window=4)
    lad, rungs, _ = experiment(window=4)
    d = lad.design
    assert d.window == 4 and isinstance(d.task, clip_lab.LateAdding)
    assert "adding problem of length 6 with both marks in its last 4 steps" in text
    # "the first marked value now lies far_start to far_end steps back": two and three steps, for a window of 4
    assert (values["window"], values["far_start"], values["far_end"]) == (4, 2, 3) == (4, *d.first_back)
    reach = clip_lab.gradient_reach(d, list(lad.calibration.seeds))[:, 2]
    assert values["start_reach"] == float(np.median(reach))
    assert values["start_reach_text"] == lc._small(values["start_reach"])
    assert "reached 2 steps back, the nearest the first marked value can lie" in values["learning_limit"]
    assert values["free_succeeded"] == sum(r.unclipped.succeeded for r in rungs)
    assert values["edge"] == lad.calibration.edge and values["rates"] == lc._join([lc._rate(r) for r in lad.rates])


def test_small_shares_are_printed_as_powers_of_ten():
    assert lc._small(0.5) == "0.50" and lc._small(3.2e-7) == "3.2 × 10⁻⁷" and lc._small(float("nan")) == "–"


# ---------------------------------------------------------------------------- bad arguments


@pytest.mark.parametrize(
    "args, name",
    [
        ({"model": "cnn"}, "model"),
        ({"length": 1}, "length"),
        ({"seeds": 0}, "seeds"),
        ({"exponents": [0.5]}, "exponents[0]"),
        ({"exponents": []}, "exponents"),
        ({"success": -1}, "success"),
        ({"updates": 0}, "updates"),
        ({"window": 0}, "window"),
        ({"window": "ten"}, "window"),
    ],
)
def test_a_bad_argument_fails_naming_it(args, name):
    with pytest.raises(ValueError) as info:
        check_arguments(lc.clipping_counts, args)
    assert str(info.value).startswith(f"{name} must")


@pytest.mark.parametrize(
    "text, says",
    [
        ("success=1.5", "success must be a ratio to the baseline in (0, 1), got 1.5"),
        ("diverge=0.5", "diverge must be a ratio to the baseline above 1, got 0.5"),
        ("exponents=[1, 0]", "exponents must be increasing and distinct, got (1, 0)"),
        (
            "length=6 window=7",
            "window must be a whole number from 2 to length (6), or None for the whole sequence, got 7",
        ),
    ],
)
def test_a_relation_the_signature_cannot_state_fails_the_build_naming_it(tmp_path, text, says):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(f"<!-- table: clipping_counts {text} -->"))
    assert says in str(info.value)


def test_the_design_the_directives_default_to_is_the_core_design():
    d = lc.clipping_counts.__wrapped__ if hasattr(lc.clipping_counts, "__wrapped__") else lc.clipping_counts
    import inspect

    defaults = {k: p.default for k, p in inspect.signature(d).parameters.items()}
    design = ClipDesign(
        model=defaults["model"],
        **{k: v for k, v in defaults.items() if k not in ("model", "exponents")},
        exponents=tuple(defaults["exponents"]),
    )
    assert dataclasses.replace(design, calibration=clip_lab.DESIGN.calibration) == clip_lab.DESIGN


def test_the_values_carry_the_second_threshold_the_stratified_tests_and_the_share_clipped():
    lad, rungs, results = experiment()
    _, values = lc.clipping_counts(**ARGS)
    assert values["high_clip"] == pytest.approx(clip_lab.HIGH_MULTIPLE * lad.clip)
    assert values["high_diverged"] == sum(r.clipped.diverged for r in lad.read_high(results))
    p = clip_lab.stratified(rungs, "diverged")
    assert values["stratified"]["diverged"].endswith(f"(p = {lc._p(p)})")
    assert ("finds a difference" in values["stratified"]["diverged"]) == (p < clip_lab.ALPHA)
    clipped = [m for r in lad.rates for m in lad.members(r, "clipped")]
    assert values["share_clipped"] == lc._percent(clip_lab.clipped_share(results, clipped))
    assert lc._percent(0.0) == "0%" and lc._percent(0.0004) == "0.04%" and lc._percent(0.29) == "29%"


# ---------------------------------------------------------------------------- at a rate the pilot picks


def test_the_pilot_table_and_its_values_agree_with_the_counts(tmp_path):
    text = one.render(tmp_path, f"<!-- table: clipping_pilot {TEXT} -->")
    _, values = lc.clipping_pilot(**ARGS)
    lad, rungs, results = experiment()
    chosen, results = lc._piloted(lad, rungs, results)
    assert chosen == clip_lab.pilot(
        lad.rates,
        [r.unclipped.diverged for r in rungs],
        lad.design.seeds,
        lambda rate: lc._diverged(lad.members(rate, "unclipped"), results),
    )
    free, clipped, high = lad.read_rate(chosen.rate, results)
    assert values["rate"] == chosen.rate and values["rung"] == chosen.rung and values["found"] == chosen.found
    assert values["free_diverged"] == free.diverged and values["free_succeeded"] == free.succeeded
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in text.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == 3
    for key, arm, row in (("clipped", clipped, rows[1]), ("high", high, rows[2])):
        assert values[f"{key}_diverged"] == arm.diverged and values[f"{key}_succeeded"] == arm.succeeded
        for field in ("diverged", "succeeded"):
            v = verdicts.compare(getattr(arm, field), arm.n, getattr(free, field), free.n)
            assert values[f"{key}_p"][field] == v.p and values[f"{key}_power"][field] == v.power
            assert values[f"{key}_kind"][field] == v.kind
            assert values[f"{key}_words"][field].startswith(f"{v.a} of {v.n_a} against {v.b} of {v.n_b}, ")
        lo, hi = stats.wilson(arm.diverged, arm.n)
        assert row[1] == f"{arm.diverged}/{arm.n} ({lo:.2f}–{hi:.2f})"
        if arm.ratios.size and free.ratios.size:
            assert values[f"{key}_p_held_out"] == stats.mann_whitney(arm.ratios, free.ratios).p
        else:
            assert values[f"{key}_p_held_out"] is None
    assert rows[0][1].startswith(f"{free.diverged}/{free.n} ")
    if chosen.rung is None:
        assert values["how"].startswith("No rung lay in the band") and len(values["tried"]) == len(chosen.tried)
    else:
        assert "no pilot run was trained" in values["how"] and values["tried"] == []


def test_a_comparison_is_worded_from_its_verdict():
    assert lc._compared(verdicts.compare(0, 20, 9, 20)).endswith("fewer with clipping (p = 0.0012)")
    assert lc._compared(verdicts.compare(0, 20, 0, 20)) == "0 of 20 against 0 of 20, no verdict, both arms at the floor"
    null = lc._compared(verdicts.compare(6, 20, 9, 20))
    assert "no detectable difference (p = 0.51; power" in null


def test_the_pilot_words_say_which_branch_it_took():
    lad = clip_lab.ClipLadder(ClipDesign(seeds=20, exponents=(0, 1), parts=2), rates=(0.1, 0.2), clip=1.0)
    a = arm("unclipped", 9, 0)
    b = dataclasses.replace(arm("clipped", 0, 0), members=(Member(20, 0.1, 1.0),))
    c = dataclasses.replace(arm(clip_lab.HIGH_ARM, 6, 0), members=(Member(40, 0.1, 5.0),))
    found = lc._pilot_values(lad, clip_lab.Pilot(0.1, 0, (), True), (a, b, c))
    assert "no pilot run was trained" in found["how"] and found["pilot_runs"] == 0
    missed = lc._pilot_values(lad, clip_lab.Pilot(0.15, None, ((0.14, 2), (0.15, 3)), False), (a, b, c))
    assert (
        "2 of 20 at 0.14 and 3 of 20 at 0.15" in missed["how"] and "the last midpoint, 0.15, is used" in missed["how"]
    )
    assert missed["clipped_kind"]["diverged"] == "fewer" and missed["high_kind"]["diverged"] == "null"

"""rnnmem.clip_lab: the clipping experiment's design, calibration, training loop and reading."""

from __future__ import annotations

import dataclasses
import math
import re
from types import SimpleNamespace

import numpy as np
import pytest

from rnnmem import cells, clip_lab, lab, stats, tasks
from rnnmem.clip_lab import (
    DESIGN,
    GROUPS,
    PARAM_GROUPS,
    Calibration,
    ClipDesign,
    ClipLadder,
    ClipRun,
    Member,
)

TINY = ClipDesign(length=6, hidden=3, batch=4, updates=12, seeds=3, eval_every=4, eval_size=32, calibration=16)


# ---------------------------------------------------------------------------- the design


def test_the_design_is_the_one_the_section_states():
    assert str(DESIGN.model) == "rnn" and DESIGN.dtype == "float32"
    assert DESIGN.length >= 100 and DESIGN.updates >= 1500 and DESIGN.seeds >= 20
    assert DESIGN.exponents == (-2, -1, 0, 1)  # a quarter, a half, one and two times the edge
    assert DESIGN.checks[0] == 0 and DESIGN.checks[-1] == DESIGN.updates
    assert all(b - a == DESIGN.eval_every for a, b in zip(DESIGN.checks, DESIGN.checks[1:]))


def test_the_arms_draw_disjoint_seeds_so_they_are_independent_samples():
    free, clipped = DESIGN.arm_seeds("unclipped"), DESIGN.arm_seeds("clipped")
    assert len(free) == len(clipped) == DESIGN.seeds
    assert not set(free) & set(clipped)
    assert free == tuple(range(DESIGN.seeds)) and clipped == tuple(range(DESIGN.seeds, 2 * DESIGN.seeds))


@pytest.mark.parametrize(
    "kwargs, named",
    [
        (dict(length=1), "length"),
        (dict(hidden=0), "hidden"),
        (dict(updates=-3), "updates"),
        (dict(exponents=()), "exponents"),
        (dict(exponents=(1, 1)), "exponents"),
        (dict(exponents=(0.5,)), "exponents[0]"),
        (dict(success=1.0), "success"),
        (dict(success=0), "success"),
        (dict(diverge=0.5), "diverge"),
        (dict(dtype="float16"), "dtype"),
        (dict(parts=30), "parts"),
        (dict(model="cnn"), "model"),
        (dict(window=1), "window"),
        (dict(length=8, window=9), "window"),
        (dict(window=2.5), "window"),
        (dict(window=True), "window"),
    ],
)
def test_a_bad_design_is_refused_naming_the_argument(kwargs, named):
    with pytest.raises(ValueError) as info:
        ClipDesign(**kwargs)
    assert str(info.value).startswith(f"{named} ")


def test_the_success_threshold_lies_five_standard_errors_below_the_one_number_model():
    """The rule behind 0.4: half the baseline without the first value, less five standard errors."""
    rng = np.random.default_rng(7)
    u1 = rng.random(400_000)
    # the error of predicting u2 + 1/2 is (u1 - 1/2)^2: its mean and spread, against the formulas
    errors = (u1 - 0.5) ** 2
    baseline = tasks.adding(2).baseline_mse
    assert abs(errors.mean() / baseline - clip_lab.one_number_ratio()) < 0.005
    assert (
        abs(errors.std() / baseline / math.sqrt(DESIGN.eval_size) - clip_lab.held_out_se(0.5, DESIGN.eval_size)) < 1e-3
    )
    assert DESIGN.success <= clip_lab.one_number_ratio() - 5 * clip_lab.held_out_se(0.5, DESIGN.eval_size)
    with pytest.raises(ValueError, match="^ratio must be 0.5"):
        clip_lab.held_out_se(0.4, 512)


def test_the_first_marked_value_lies_half_the_length_back_or_more():
    task = tasks.adding(DESIGN.length)
    b = task.sample(5000, seed=3)
    first = b.inputs[:, :, 1].argmax(axis=0)  # the first marked step of each sequence
    back = DESIGN.length - 1 - first  # steps between it and the last step, where the target is read
    assert back.min() == DESIGN.length // 2 and back.max() == DESIGN.length - 1


def test_the_second_design_is_the_first_with_its_marks_in_the_last_tenth():
    assert clip_lab.LATE == dataclasses.replace(DESIGN, window=DESIGN.length // 10)
    assert clip_lab.LATE.window == 10 and clip_lab.LATE.task.length == DESIGN.length
    assert type(DESIGN.task) is tasks.Task and DESIGN.task.name == "adding"  # no window: the problem as posed


@pytest.mark.parametrize("length, window", [(100, 10), (9, 5), (6, 2), (7, 7)])
def test_late_marks_fall_one_in_each_half_of_the_window_and_every_step_of_it_is_drawn(length, window):
    task = clip_lab.late_adding(length, window)
    b = task.sample(4000, seed=3)
    values, marks = b.inputs[:, :, 0], b.inputs[:, :, 1]
    split = length - window + window // 2
    assert np.all(marks[: length - window] == 0)
    assert np.all(marks[length - window : split].sum(axis=0) == 1) and np.all(marks[split:].sum(axis=0) == 1)
    assert set(np.nonzero(marks)[0]) == set(range(length - window, length))
    assert np.array_equal((values * marks).sum(axis=0), b.targets)
    # what the section says: the first marked value lies first_back[0] to first_back[1] steps back
    back = length - 1 - marks.argmax(axis=0)
    design = ClipDesign(length=length, window=window)
    assert (back.min(), back.max()) == design.first_back
    # the values are the adding problem's, drawn first from the same stream; only the marks differ
    assert np.array_equal(values, tasks.adding(length).sample(4000, seed=3).inputs[:, :, 0])
    assert task.baseline_mse == tasks.adding(length).baseline_mse and task.kind == "regression"


def test_late_streams_draw_what_one_stream_draws_alone():
    task = clip_lab.late_adding(12, 4)
    both = task.sample_each(5, [0, 7])
    for k, seed in enumerate((0, 7)):
        one = task.sample(5, seed=seed)
        assert np.array_equal(both.inputs[:, k], one.inputs) and np.array_equal(both.targets[k], one.targets)
    for bad, named in (([], "seeds"), ("0", "seeds"), ([-1], "seeds[0]")):
        with pytest.raises(ValueError, match=f"^{re.escape(named)} must"):
            task.sample_each(5, bad)
    with pytest.raises(ValueError, match="^n must"):
        task.sample(0)


def test_the_lstm_computes_four_gate_blocks_where_the_tanh_rnn_computes_one():
    assert cells.GATES["lstm"] == 4 * cells.GATES["rnn"] == 4


# ---------------------------------------------------------------------------- the networks


def test_untrained_networks_differ_from_the_lab_draw_by_the_mean_target_only():
    ens = clip_lab.untrained(TINY, [0, 5])
    plain = lab.make_ensemble(TINY.task, "rnn", [0, 5], hidden=TINY.hidden)
    for name in PARAM_GROUPS:
        shift = clip_lab.TARGET_MEAN if name == "readout_bias" else 0.0
        assert np.allclose(ens.params[name], plain.params[name] + shift, rtol=0, atol=1e-15)
    targets = tasks.adding(DESIGN.length).sample(100_000, seed=1).targets
    assert abs(targets.mean() - clip_lab.TARGET_MEAN) < 0.01


def test_unmoved_networks_start_far_above_the_baseline_and_moved_ones_near_it():
    """The reason for the move: drawn as the lab draws them, some untrained networks of the design are
    already beyond the divergence rule."""
    seeds = list(DESIGN.arm_seeds("unclipped") + DESIGN.arm_seeds("clipped"))
    task = DESIGN.task
    held = task.sample(512, seed=0)
    baseline = task.baseline_mse
    drawn = lab.evaluate(lab.make_ensemble(task, "rnn", seeds, hidden=DESIGN.hidden), task, *held) / baseline
    moved = lab.evaluate(clip_lab.untrained(DESIGN, seeds), task, *held) / baseline
    assert np.median(drawn) > 3 and drawn.max() > DESIGN.diverge
    assert moved.max() < 3 and np.median(moved) < 2


# ---------------------------------------------------------------------------- gradients by group


def test_group_norms_split_the_global_norm_by_parameter_group():
    ens = clip_lab.untrained(TINY, [0, 1])
    b = TINY.task.sample(8, seed=2)
    _, grads = ens.loss_and_grads(b.inputs, b.targets, "regression")
    norms = clip_lab.group_norms(grads)
    total = np.sqrt(sum((g.reshape(2, -1) ** 2).sum(axis=1) for g in grads.values()))
    assert norms.shape == (2, len(GROUPS))
    assert np.allclose(np.sqrt((norms**2).sum(axis=1)), total)
    w_hh = np.linalg.norm(grads["weight_hh_l0"].reshape(2, -1), axis=1)
    assert np.allclose(norms[:, GROUPS.index("recurrent")], w_hh)
    readout = np.sqrt((grads["readout_weight"] ** 2).sum(axis=(1, 2)) + (grads["readout_bias"] ** 2).sum(axis=1))
    assert np.allclose(norms[:, GROUPS.index("readout")], readout)
    assert set(PARAM_GROUPS) == set(grads) and set(PARAM_GROUPS.values()) == set(GROUPS)


def test_the_top_singular_value_is_the_spectral_norm_and_nan_for_a_broken_matrix():
    W = np.random.default_rng(0).standard_normal((3, 4, 4))
    W[2, 0, 0] = np.inf
    s = clip_lab.top_singular_value(W)
    assert np.allclose(s[:2], [np.linalg.svd(w, compute_uv=False)[0] for w in W[:2]])
    assert np.isnan(s[2])


# ---------------------------------------------------------------------------- calibration


def _full_hessian(design: ClipDesign, seed: int) -> tuple[np.ndarray, float]:
    """One network's Hessian on the calibration batch, by central differences of its gradient, and its norm."""
    ens = clip_lab.untrained(design, [seed])
    batch = design.task.sample(design.calibration, seed=np.random.default_rng((0, 4)))
    theta = clip_lab._flat(ens.params, 1)[0]

    def grad(at):
        clip_lab._assign(ens, at[None])
        _, g = ens.loss_and_grads(batch.inputs, batch.targets, "regression")
        return clip_lab._flat(g, 1)[0]

    P, h = theta.size, 1e-5
    H = np.stack([(grad(theta + h * e) - grad(theta - h * e)) / (2 * h) for e in np.eye(P)])
    return (H + H.T) / 2, float(np.linalg.norm(grad(theta)))


def test_calibration_finds_the_largest_hessian_eigenvalue_and_the_median_norm():
    design = ClipDesign(length=4, hidden=2, seeds=2, calibration=16, lanczos=40)
    cal = clip_lab.calibrate(design)
    assert cal.seeds == (0, 1, 2, 3)
    for k, seed in enumerate(cal.seeds):
        H, norm = _full_hessian(design, seed)
        assert cal.sharpness[k] == pytest.approx(np.linalg.eigvalsh(H)[-1], rel=1e-4)
        assert cal.norms[k] == pytest.approx(norm, rel=1e-9)
    assert cal.sharpness_median == np.median(cal.sharpness)
    assert cal.edge == 2 / np.median(cal.sharpness) and cal.clip == np.median(cal.norms)


def test_the_ladder_doubles_from_the_edge_and_keeps_its_calibration():
    cal = Calibration(seeds=(0, 1, 2), sharpness=(2.0, 8.0, 5.0), norms=(1.0, 3.0, 2.0))
    lad = clip_lab.ladder(DESIGN, cal)
    assert lad.rates == tuple(0.4 * 2.0**k for k in DESIGN.exponents)
    assert lad.clip == 2.0 and lad.calibration is cal
    with pytest.raises(ValueError, match="^rates must give one learning rate per exponent"):
        ClipLadder(DESIGN, rates=(0.1,), clip=1.0)


# ---------------------------------------------------------------------------- training


def test_in_float64_a_member_computes_the_same_numbers_whichever_members_share_its_stack():
    design = dataclasses.replace(TINY, dtype="float64")
    alone = clip_lab.train_members(design, [Member(1, 0.05, 0.3)])
    crowd = clip_lab.train_members(design, [Member(0, 1e4), Member(1, 0.05, 0.3), Member(2, 0.2), Member(0, 1e5)])
    i = crowd.index(Member(1, 0.05, 0.3))
    assert crowd.outcome[0] == crowd.outcome[3] == "diverged"  # two left the stack early
    assert np.array_equal(alone.losses[0], crowd.losses[i], equal_nan=True)
    assert np.array_equal(alone.norms[0], crowd.norms[i], equal_nan=True)
    assert np.array_equal(alone.check_ratios[0], crowd.check_ratios[i], equal_nan=True)
    for name in PARAM_GROUPS:
        assert np.array_equal(alone.params[name][0], crowd.params[name][i])


def test_a_run_is_a_pure_function_of_itself_in_float32_too():
    run = ClipRun(TINY, (Member(0, 0.1), Member(0, 1e4), Member(1, 0.1, 0.5)))
    a, b = run.execute(), run.execute()
    assert a.outcome[1] == "diverged"
    for field in ("losses", "norms", "check_ratios", "ratio", "sigma"):
        assert np.array_equal(getattr(a, field), getattr(b, field), equal_nan=True)
    assert a.outcome == b.outcome and a.left_at == b.left_at
    same = ClipRun(TINY, tuple(run.members))
    assert run == same and hash(run) == hash(same)


def _one_step(design: ClipDesign, member: Member) -> tuple[dict, dict]:
    """The parameters before and after one update of ``member``, worked here from the public pieces."""
    ens = clip_lab.untrained(design, [member.seed], np.dtype(design.dtype))
    before = {k: v.astype(np.float64) for k, v in ens.params.items()}
    x, y = design.task.sample_each(design.batch, [np.random.default_rng((member.seed, 1))])
    _, grads = ens.loss_and_grads(x, y, "regression")
    norm = float(np.sqrt((clip_lab.group_norms(grads) ** 2).sum()))
    factor = 1.0 if member.clip is None else min(1.0, member.clip / norm)
    after = {k: before[k] - member.lr * factor * grads[k].astype(np.float64) for k in before}
    return before, after


@pytest.mark.parametrize("clip", [None, 0.05, 100.0])
def test_one_update_is_plain_gradient_descent_with_the_step_capped_by_clipping(clip):
    design = dataclasses.replace(TINY, updates=1, dtype="float64")
    member = Member(2, 0.3, clip)
    result = clip_lab.train_members(design, [member])
    before, expected = _one_step(design, member)
    step = np.sqrt(sum(((expected[k] - before[k]) ** 2).sum() for k in before))
    for k in before:
        assert np.allclose(result.params[k][0], expected[k], rtol=1e-12, atol=1e-14)
    if clip is not None:
        assert step <= 0.3 * clip * (1 + 1e-12)
    if clip == 100.0:  # a threshold above the norm changes nothing: clipping only ever shrinks
        free = clip_lab.train_members(design, [Member(2, 0.3)])
        assert all(np.array_equal(free.params[k], result.params[k]) for k in before)
    assert result.outcome == ("trained",) and result.left_at == (1,)


def test_a_diverged_member_takes_no_step_and_leaves_at_once():
    design = dataclasses.replace(TINY, dtype="float64")
    result = clip_lab.train_members(design, [Member(0, 1e4), Member(1, 1e-3)])
    u = result.left_at[0]
    baseline = design.task.baseline_mse
    assert result.outcome[0] == "diverged" and 1 <= u < design.updates
    loss = result.losses[0, u - 1]
    assert not np.isfinite(loss) or loss > design.diverge * baseline
    assert np.all(np.isfinite(result.losses[0, : u - 1]))
    assert np.all(result.losses[0, : u - 1] <= design.diverge * baseline)
    assert np.all(np.isnan(result.losses[0, u:])) and np.all(np.isnan(result.norms[0, :, u:]))
    # the step it did not take: its parameters are those its earlier updates left
    replay = clip_lab.train_members(dataclasses.replace(design, updates=u - 1), [Member(0, 1e4)])
    for name in PARAM_GROUPS:
        assert np.array_equal(result.params[name][0], replay.params[name][0])
    assert result.outcome[1] == "trained" and np.all(np.isfinite(result.losses[1]))


def test_a_member_that_reaches_the_threshold_at_a_check_leaves_there():
    design = ClipDesign(length=4, hidden=3, batch=8, updates=60, eval_every=5, eval_size=64, success=0.9)
    members = [Member(s, 0.3) for s in range(6)]
    result = clip_lab.train_members(design, members)
    # the setting makes some members succeed and some not, so both branches below are checked
    assert "succeeded" in result.outcome and "trained" in result.outcome
    for i, outcome in enumerate(result.outcome):
        if outcome == "succeeded":
            c = list(result.checks).index(result.left_at[i])
            assert result.check_ratios[i, c] <= design.success
            assert np.all(result.check_ratios[i, :c] > design.success)
            assert np.all(np.isnan(result.check_ratios[i, c + 1 :]))
            assert np.all(np.isnan(result.losses[i, result.left_at[i] :]))
            assert result.ratio[i] == result.check_ratios[i, c]
        elif outcome == "trained":
            assert np.all(result.check_ratios[i] > design.success)


# ---------------------------------------------------------------------------- reading


def test_the_runs_hold_every_member_once_each_with_every_rung_and_arm():
    design = dataclasses.replace(TINY, seeds=4, parts=2, exponents=(-1, 0, 2))
    lad = ClipLadder(design, rates=(0.05, 0.1, 0.4), clip=0.5)
    runs = lad.runs()
    everyone = [m for run in runs for m in run.members]
    assert len(everyone) == len(set(everyone)) == 2 * 4 * 3
    assert [len(run.members) for run in runs] == [12, 12]
    for run in runs:
        assert {(m.lr, m.clip) for m in run.members} == {(r, c) for r in lad.rates for c in (None, 0.5)}


def test_reading_counts_outcomes_with_the_stats_module():
    design = dataclasses.replace(TINY, seeds=4, exponents=(0, 6))
    lad = ClipLadder(design, rates=(0.05, 1e3), clip=0.1)
    results = {run: run.execute() for run in lad.runs()}
    rungs = lad.read(results)
    by_member = {m: r for r in results.values() for m in r.members}
    for rung in rungs:
        for arm in (rung.unclipped, rung.clipped):
            outcomes = [by_member[m].outcome[by_member[m].index(m)] for m in arm.members]
            assert list(arm.outcomes) == outcomes and arm.n == 4
            assert arm.diverged == outcomes.count("diverged") and arm.succeeded == outcomes.count("succeeded")
            assert arm.diverged_interval == stats.wilson(arm.diverged, 4)
            assert arm.success_interval == stats.wilson(arm.succeeded, 4)
            kept = sorted(
                float(by_member[m].ratio[by_member[m].index(m)])
                for m, o in zip(arm.members, outcomes)
                if o != "diverged"
            )
            assert arm.ratios.tolist() == kept
            assert arm.quartiles == (stats.quartiles(kept) if kept else None)
        assert rung.p_diverged == stats.fisher_exact(rung.unclipped.diverged, 4, rung.clipped.diverged, 4)
        assert rung.p_success == stats.fisher_exact(rung.unclipped.succeeded, 4, rung.clipped.succeeded, 4)
    assert rungs[1].unclipped.diverged == 4  # a step of a thousand diverges


def test_the_figure_shows_the_smallest_p_and_among_equals_the_lowest_rate():
    def rung(p, rate):
        return SimpleNamespace(p_diverged=p, rate=rate)

    assert clip_lab.figure_rung([rung(0.5, 0.1), rung(0.01, 0.4), rung(0.01, 0.2)]) == 2
    assert clip_lab.figure_rung([rung(1.0, 0.3), rung(1.0, 0.1)]) == 1
    with pytest.raises(ValueError, match="^rungs must hold"):
        clip_lab.figure_rung([])


def test_the_detection_level_shares_alpha_among_the_rungs():
    assert clip_lab.detection_level(4) == clip_lab.ALPHA / 4 == 0.0125
    with pytest.raises(ValueError, match="^rungs"):
        clip_lab.detection_level(0)


def test_divergences_read_the_shares_where_each_member_left():
    design = dataclasses.replace(TINY, seeds=3, exponents=(0,), dtype="float64")
    lad = ClipLadder(design, rates=(1e3,), clip=1.0)
    results = {run: run.execute() for run in lad.runs()}
    arm = lad.read(results)[0].unclipped
    div = clip_lab.divergences(arm, results)
    assert len(div.members) == arm.diverged == 3
    by_member = {m: r for r in results.values() for m in r.members}
    for k, m in enumerate(div.members):
        r = by_member[m]
        i = r.index(m)
        assert div.updates[k] == r.left_at[i]
        squares = r.norms[i, :, 0] ** 2
        assert np.allclose(div.shares_first[k], squares / squares.sum())
        u = r.left_at[i] - 1
        if np.isfinite(r.norms[i, :, u]).all():
            assert np.allclose(div.shares_last[k], r.norms[i, :, u] ** 2 / (r.norms[i, :, u] ** 2).sum())
        assert div.sigma_last[k] == r.sigma[i, 1]
        left = {name: p[i : i + 1] for name, p in r.params.items()}
        assert np.array_equal(div.reach_last[k : k + 1], clip_lab.gradient_reach(design, [m.seed], left))
        assert np.array_equal(div.reach_start[k : k + 1], clip_lab.gradient_reach(design, [m.seed]))
    assert np.allclose(div.shares_last.sum(axis=1), 1)


def test_gradient_reach_is_the_share_of_the_last_steps_gradient_that_reaches_each_step_back():
    design = ClipDesign(length=8, hidden=4)
    reach = clip_lab.gradient_reach(design, [0, 1])
    norms = lab.gradient_by_step(clip_lab.untrained(design, [0, 1]), design.task, n=256, seed=1)
    assert np.allclose(reach, norms[:, ::-1] / norms[:, -1:]) and np.all(reach[:, 0] == 1)
    ens = clip_lab.untrained(design, [0, 1])
    params = {k: v.copy() for k, v in ens.params.items()}
    params["weight_hh_l0"][0] = 0.0  # no recurrence: nothing reaches back
    params["weight_hh_l0"][1] = 1.5 * np.eye(4)  # a gain of 1.5 near a state of zero, where tanh' is one:
    params["weight_ih_l0"][1] *= 1e-3  # tiny inputs and no biases keep the state there,
    params["bias_ih_l0"][1] = params["bias_hh_l0"][1] = 0.0
    reach = clip_lab.gradient_reach(design, [0, 1], params)
    assert np.all(reach[0, 1:] == 0)
    assert np.allclose(reach[1], 1.5 ** np.arange(8), rtol=1e-2)  # and the gradient grows by 1.5 per step back


def test_window_quantiles_pool_the_finite_values_of_each_window():
    rng = np.random.default_rng(0)
    values = rng.random((5, 23))
    values[1, 10:] = np.nan  # a member that left
    centres, q = clip_lab.window_quantiles(values, [1, 11, 21, 24])
    assert centres.tolist() == [5.5, 15.5, 22.0]
    for w, (a, b) in enumerate([(0, 10), (10, 20), (20, 23)]):
        block = values[:, a:b][np.isfinite(values[:, a:b])]
        assert np.allclose(q[w], [*np.quantile(block, [0.25, 0.5, 0.75]), block.max()])
    _, empty = clip_lab.window_quantiles(np.full((2, 4), np.nan), [1, 3, 5])
    assert np.isnan(empty).all()
    with pytest.raises(ValueError, match="^edges must be"):
        clip_lab.window_quantiles(values, [3, 3])


def test_log_windows_cover_every_update_once_and_keep_the_first_ones_apart():
    edges = clip_lab.log_windows(1500, 150)
    assert edges[0] == 1 and edges[-1] == 1501 and np.all(np.diff(edges) >= 1)
    assert edges[:20].tolist() == list(range(1, 21))  # the first updates, one window each
    assert 100 <= len(edges) - 1 <= 200


def test_the_members_train_through_the_labs_trainer(monkeypatch):
    calls = []
    real = clip_lab.lab.train

    def spy(task, model, schedule, **hooks):
        calls.append(schedule)
        return real(task, model, schedule, **hooks)

    monkeypatch.setattr(clip_lab.lab, "train", spy)
    design = dataclasses.replace(TINY, dtype="float64")
    result = clip_lab.train_members(design, [Member(0, 0.05), Member(1, 1e4)])
    assert len(calls) == 1 and calls[0].retire and calls[0].stop_when_done and callable(calls[0].optimizer)
    assert result.outcome[1] == "diverged"


def test_the_second_threshold_is_a_third_arm_of_its_own_seeds_and_runs():
    d = clip_lab.ClipDesign(length=4, hidden=2, updates=2, seeds=3, exponents=(0, 1), parts=2)
    lad = clip_lab.ClipLadder(d, rates=(0.1, 0.2), clip=0.5)
    first = {m.seed for r in lad.rates for arm in clip_lab.ARMS for m in lad.members(r, arm)}
    high = {m.seed for r in lad.rates for m in lad.high_members(r)}
    assert not first & high and high == {6, 7, 8}
    assert {m.clip for r in lad.rates for m in lad.high_members(r)} == {clip_lab.HIGH_MULTIPLE * 0.5}
    assert not set(lad.runs()) & set(lad.high_runs())  # the first arms' runs are not changed by the third
    results = {run: run.execute() for run in lad.runs() + lad.high_runs()}
    rungs = lad.read_high(results)
    assert [r.clipped.arm for r in rungs] == [clip_lab.HIGH_ARM] * 2
    assert [r.unclipped.outcomes for r in rungs] == [r.unclipped.outcomes for r in lad.read(results)]


def test_the_clipped_share_counts_the_updates_whose_norm_passed_the_threshold():
    d = clip_lab.ClipDesign(length=4, hidden=2, updates=5, seeds=1, parts=1)
    tight, loose, free = clip_lab.Member(0, 0.1, 1e-9), clip_lab.Member(0, 0.1, 1e9), clip_lab.Member(0, 0.1)
    r = clip_lab.ClipRun(d, (tight, loose, free)).execute()
    norms = np.sqrt((r.norms[2] ** 2).sum(axis=0))
    middle = clip_lab.Member(1, 0.1, float(np.median(norms)))
    r2 = clip_lab.ClipRun(d, (middle,)).execute()
    expected = float(np.mean(np.sqrt((r2.norms[0] ** 2).sum(axis=0)) > middle.clip))
    results = {0: r, 1: r2}
    assert clip_lab.clipped_share(results, [tight]) == 1.0
    assert clip_lab.clipped_share(results, [loose, free]) == 0.0
    assert clip_lab.clipped_share(results, [middle]) == pytest.approx(expected)


def test_the_stratified_test_of_one_rate_is_fishers_and_pools_evidence_across_rates():
    from types import SimpleNamespace as N

    def rung(free, clipped):
        return N(unclipped=N(succeeded=free, diverged=0, n=20), clipped=N(succeeded=clipped, diverged=0, n=20))

    assert clip_lab.stratified([rung(0, 4)], "succeeded") == pytest.approx(stats.fisher_exact(4, 20, 0, 20))
    four = [rung(0, 2), rung(0, 2), rung(0, 1), rung(0, 1)]
    assert all(stats.fisher_exact(r.clipped.succeeded, 20, 0, 20) > 0.2 for r in four)
    assert clip_lab.stratified(four, "succeeded") < 0.05
    assert clip_lab.null_power(rung(0, 0), "succeeded", 0.4, 0.0125) > clip_lab.null_power(
        rung(0, 0), "succeeded", 0.2, 0.0125
    )


# ---------------------------------------------------------------------------- the pilot rule


def never(rate):
    raise AssertionError(f"the pilot trained at {rate} where it had a rung in the band")


def test_a_rung_in_the_band_is_taken_nearest_half_ties_to_the_smaller_rate_without_training():
    chosen = clip_lab.pilot((0.1, 0.2, 0.4, 0.8), (0, 8, 12, 20), 20, never)
    assert chosen == clip_lab.Pilot(0.2, 1, (), True)
    chosen = clip_lab.pilot((0.1, 0.2, 0.4, 0.8), (0, 6, 11, 20), 20, never)
    assert chosen.rung == 2 and chosen.rate == 0.4
    # the band's ends are in it
    assert clip_lab.pilot((0.1, 0.2), (14, 20), 20, never).rung == 0


def test_the_bisection_halves_the_bracket_in_log_rate_and_stops_in_the_band():
    asked = []

    def train(rate):
        asked.append(rate)
        return {1: 2, 2: 19, 3: 10}[len(asked)]  # below, above, in the band

    chosen = clip_lab.pilot((0.05, 0.1, 0.8, 1.6), (0, 1, 20, 20), 20, train)
    first = np.sqrt(0.1 * 0.8)
    second = np.sqrt(first * 0.8)
    third = np.sqrt(first * second)
    assert np.allclose(asked, [first, second, third])
    assert chosen.found and chosen.rung is None and chosen.rate == asked[-1]
    assert chosen.tried == tuple(zip(asked, (2, 19, 10)))


def test_with_no_midpoint_in_the_band_the_last_is_used_and_marked_not_found():
    asked = []

    def train(rate):
        asked.append(rate)
        return 0

    chosen = clip_lab.pilot((0.1, 0.4), (0, 20), 20, train)
    assert len(asked) == clip_lab.PILOT_STEPS and not chosen.found
    assert chosen.rate == asked[-1] and asked == sorted(asked)
    assert 0.1 < chosen.rate < 0.4


@pytest.mark.parametrize(
    "rates, diverged, n, name",
    [
        ((0.2, 0.1), (0, 20), 20, "rates"),
        ((0.1, 0.2), (0,), 20, "diverged"),
        ((0.1, 0.2), (0, 21), 20, "diverged"),
        ((0.1, 0.2), (0, 20), 0, "n"),
        ((0.1, 0.2), (20, 20), 20, "diverged"),  # no rung below the band
        ((0.1, 0.2), (0, 0), 20, "diverged"),  # no rung above it
    ],
)
def test_a_bad_pilot_input_fails_naming_it(rates, diverged, n, name):
    with pytest.raises(ValueError, match=f"^{name} must"):
        clip_lab.pilot(rates, diverged, n, never)


def test_split_deals_each_arm_like_the_ladder_and_read_rate_reads_three_arms():
    d = ClipDesign(length=4, hidden=2, updates=2, seeds=3, exponents=(0,), parts=2)
    lad = ClipLadder(d, rates=(0.1,), clip=1.0)
    members = lad.members(0.3, "clipped") + lad.high_members(0.3)
    runs = lad.split(members)
    assert [[m.seed for m in r.members] for r in runs] == [[3, 5, 6, 8], [4, 7]]
    results = {r: r.execute() for r in runs + lad.split(lad.members(0.3, "unclipped"))}
    free, clipped, high = lad.read_rate(0.3, results)
    assert (free.arm, clipped.arm, high.arm) == ("unclipped", "clipped", clip_lab.HIGH_ARM)
    assert [a.n for a in (free, clipped, high)] == [3, 3, 3]
    assert high.members[0].clip == lad.high_clip

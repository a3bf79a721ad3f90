"""rnnmem.experiments: one model-spec language, runs as values, and how their results are read."""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Literal

import numpy as np
import pytest

from rnnmem import experiments as ex
from rnnmem import lab, memory, tasks
from rnnmem.experiments import Design, DropoutRun, ModelSpec, RecallRun, RunResult, SGDResult, SGDRun, Sweep

SMALL = Design(hidden=4, steps=6, threshold=0.5)
SCHEMES: tuple[Literal["none", "per-step", "per-sequence"], ...] = ("none", "per-step", "per-sequence")


# ---------------------------------------------------------------------------- model specs


@pytest.mark.parametrize(
    "text, cell, bias, init",
    [
        ("rnn", "rnn", None, "default"),
        ("gru", "gru", None, "default"),
        ("lstm", "lstm", None, "default"),
        ("lstm:2", "lstm", 2.0, "default"),
        ("lstm:-0.5", "lstm", -0.5, "default"),
        ("lstm:1e0", "lstm", 1.0, "default"),
        ("lstm:chrono", "lstm", None, "chrono"),
    ],
)
def test_a_spec_names_a_cell_and_its_starting_biases(text, cell, bias, init):
    spec = ModelSpec.parse(text)
    assert (spec.cell, spec.forget_bias, spec.init) == (cell, bias, init)
    assert ModelSpec.parse(str(spec)) == spec  # the text reads back as the same model
    assert ModelSpec.parse(spec) is spec


@pytest.mark.parametrize(
    "value", ["lstm:x", "lstm:", "lstm:nan", "lstm:inf", "gru:1", "rnn:chrono", "transformer", "LSTM", " lstm", 3, None]
)
def test_a_bad_spec_is_refused_naming_the_argument_the_value_and_what_is_allowed(value):
    with pytest.raises(ValueError) as info:
        ModelSpec.parse(value, "models[2]")
    message = str(info.value)
    assert message.startswith("models[2] must be a model: ")
    assert "'lstm:B'" in message and "'lstm:chrono'" in message
    assert message.endswith(f"got {value!r}")


@pytest.mark.parametrize(
    "kwargs, named",
    [
        (dict(cell="gru", forget_bias=1.0), "forget_bias sets the LSTM's forget gate; cell must be 'lstm'"),
        (dict(cell="rnn", init="chrono"), "init='chrono' sets the LSTM's gate biases; cell must be 'lstm'"),
        (dict(cell="lstm", forget_bias=1.0, init="chrono"), "forget_bias and init='chrono' both set"),
        (dict(cell="lstm", forget_bias=math.nan), "forget_bias must not be NaN"),
        (dict(cell="cnn"), "cell must be one of 'rnn', 'gru', 'lstm', got 'cnn'"),
        (dict(cell="lstm", init="xavier"), "init must be one of 'default', 'chrono', got 'xavier'"),
    ],
)
def test_a_model_that_cannot_be_built_is_refused(kwargs, named):
    with pytest.raises(ValueError, match="^" + named.replace("(", r"\(").replace(")", r"\)")):
        ModelSpec(**kwargs)


def test_the_text_of_a_spec_reads_back_exactly():
    for bias in (0.1 + 0.2, 1e-7, 0.1234567, -3.0):
        spec = ModelSpec("lstm", bias)
        assert ModelSpec.parse(str(spec)) == spec
    assert str(ModelSpec("lstm", 2.0)) == "lstm:2" and str(ModelSpec("lstm", 0.1234567)) == "lstm:0.1234567"


def test_specs_key_values_and_equal_specs_are_one_model():
    assert [ModelSpec.parse(s).key for s in ex.CONFIGS] == ["rnn", "gru", "lstm0", "lstm1", "lstm2", "chrono"]
    assert ModelSpec.parse("lstm:1") == ModelSpec.parse("lstm:1.0") == ModelSpec("lstm", 1)
    assert len({ModelSpec.parse("lstm:1"), ModelSpec.parse("lstm:1.0")}) == 1


def test_the_lstms_are_ordered_by_their_starting_horizons():
    order = ex.by_starting_horizon(["lstm:chrono", "gru", "lstm:2", "lstm:-1", "lstm", "lstm:0", "rnn"])
    assert [str(m) for m in order] == ["lstm:-1", "lstm", "lstm:0", "lstm:2", "lstm:chrono"]
    gates = [memory.sigmoid(m.forget_bias or 0.0) for m in order[:-1]]
    assert gates == sorted(gates)


# ---------------------------------------------------------------------------- the design and the rules


def test_the_design_is_what_the_chapter_states():
    assert ex.ALPHABET == 8 and ex.CONFIGS == ("rnn", "gru", "lstm:0", "lstm:1", "lstm:2", "lstm:chrono")
    assert dataclasses.asdict(ex.DESIGN) == dict(
        hidden=16, batch=32, lr=0.01, clip=1.0, steps=300, eval_every=25, eval_size=256, threshold=0.9
    )


@pytest.mark.parametrize(
    "field, value, named",
    [
        ("hidden", 0, "hidden must be a whole number >= 1"),
        ("steps", 2.5, "steps must be a whole number >= 1"),
        ("lr", -1, "lr must be a positive finite number"),
        ("clip", 0, "clip must be a positive finite number"),
        ("threshold", 1.5, "threshold must be a number in (0, 1]"),
    ],
)
def test_a_bad_design_is_refused_naming_the_field(field, value, named):
    with pytest.raises(ValueError) as info:
        dataclasses.replace(ex.DESIGN, **{field: value})
    assert str(info.value).startswith(named)


def test_a_design_converts_whole_numbers_and_allows_no_clipping():
    d = Design(hidden=8.0, clip=None, lr=1)  # type: ignore[arg-type]  # a float converted on purpose
    assert d.hidden == 8 and isinstance(d.hidden, int) and d.clip is None and isinstance(d.lr, float)


def test_lags_must_be_increasing_whole_numbers():
    assert ex.check_lags("lags", (1, 2.0, 40)) == [1, 2, 40]
    for bad, named in (([2, 2], "lags must be increasing"), ([0, 3], "lags[0] must"), ([], "lags must be a non")):
        with pytest.raises(ValueError, match=r"^" + re.escape(named)):
            ex.check_lags("lags", bad)
    with pytest.raises(ValueError, match="^length must be a whole number >= 2, got 1"):
        ex.check_adding_length("length", 1)


# ---------------------------------------------------------------------------- runs


def test_a_run_is_a_value_holding_everything_it_depends_on():
    a = RecallRun("lstm:1", 3, [0, 1], SMALL)  # type: ignore[arg-type]  # text and a list, converted on purpose
    assert a == RecallRun(ModelSpec("lstm", 1.0), 3.0, (0, 1), SMALL) and hash(a) == hash(a)  # type: ignore[arg-type]  # a float lag, converted on purpose
    assert a != RecallRun(ModelSpec("lstm", 1.0), 3, (0, 1), dataclasses.replace(SMALL, steps=7))
    assert (
        a != RecallRun(ModelSpec("lstm", 1.0), 3, (0, 2), SMALL) != RecallRun(ModelSpec("lstm", 2.0), 3, (0, 1), SMALL)
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.lag = 4  # type: ignore[misc]
    for bad, named in (
        (lambda: RecallRun(ModelSpec("lstm"), 0, (0,)), "lag must"),
        (lambda: RecallRun(ModelSpec("lstm"), 2, ()), "seeds must"),
        (lambda: RecallRun(ModelSpec("lstm"), 2, (-1,)), "seeds[0] must"),
        (lambda: RecallRun(ModelSpec("lstm"), 2, (0,), design={"hidden": 4}), "design must be a Design"),  # type: ignore[arg-type]  # a bad value on purpose
        (lambda: DropoutRun("sometimes", 0.9, 2, 3, (0,)), "scheme must be one of"),  # type: ignore[arg-type]  # a bad value on purpose
        (lambda: DropoutRun("none", 1.5, 2, 3, (0,)), "keep must be a keep probability"),
        (lambda: SGDRun(ModelSpec("rnn"), 1, 0.1, None, (0,)), "length must be a whole number >= 2"),
        (lambda: SGDRun(ModelSpec("rnn"), 6, 0.0, None, (0,)), "lr must be a positive"),
    ):
        with pytest.raises(ValueError, match="^" + re.escape(named)):
            bad()


def test_a_recall_run_trains_what_lab_train_trains_with_the_design():
    run = RecallRun(ModelSpec("lstm", 2.0), 2, (0, 1), SMALL)
    got = run.execute()
    want = lab.train(
        tasks.recall(2, ex.ALPHABET), "lstm", seeds=[0, 1], forget_bias=2.0, stop_when_done=True, **vars(SMALL)
    )
    assert np.array_equal(got.scores, want.scores) and np.array_equal(got.losses, want.losses, equal_nan=True)
    assert got.successes == want.successes and got.success_step == tuple(want.success_step)
    assert np.array_equal(got.params["weight_hh_l0"], want.ensemble.params["weight_hh_l0"])
    again = run.execute()  # a pure function of the run
    assert np.array_equal(again.losses, got.losses, equal_nan=True)


def test_dropout_schemes_differ_only_in_their_masks():
    assert SCHEMES == ex.SCHEMES
    runs = [DropoutRun(s, 0.5, 1.0, 2, (0,), SMALL).execute() for s in SCHEMES]
    none, step, sequence = runs
    assert none.losses[0, 0] != step.losses[0, 0] != sequence.losses[0, 0]  # masks change the first loss
    plain = RecallRun(ModelSpec("lstm", 1.0), 2, (0,), SMALL).execute()
    assert np.array_equal(none.scores[:, 0], plain.scores[:, 0])  # same start, evaluated without masks


def test_success_needs_the_threshold_and_no_divergence():
    r = RunResult(
        eval_steps=np.array([0, 25, 50]),
        scores=np.array([[0.1, 0.95, 0.97], [0.1, 0.2, 0.3], [0.1, 0.9, np.nan]]),
        losses=np.zeros((3, 50)),
        grad_norms=np.zeros((3, 50)),
        success_step=(50, None, 25),
        diverged_at=(None, None, 30),
        params={},
    )
    assert r.succeeded == [True, False, False] and r.successes == 1 and r.updates_to_success == [50]
    assert r.final_scores.tolist()[:2] == [0.97, 0.3]


# ---------------------------------------------------------------------------- reading results


@pytest.mark.parametrize(
    "lags, counts, seeds, horizon",
    [
        ([2, 5, 10], [3, 2, 1], 3, 5),  # 2 of 3 pass, 1 of 3 does not
        ([2, 5, 10], [1, 0, 2], 4, 10),  # half is enough, and a failure in between does not stop it
        ([2, 5], [0, 0], 3, None),
        ([2, 5], [2, 1], 2, 5),
    ],
)
def test_measured_horizon_is_the_longest_lag_half_the_seeds_pass(lags, counts, seeds, horizon):
    assert ex.measured_horizon(lags, counts, seeds) == horizon


def test_the_sweep_counts_successes_per_model_and_lag():
    sweep = Sweep((ModelSpec("rnn"), ModelSpec("lstm", 2.0)), (1, 2), (0, 1), SMALL)
    results = {run: run.execute() for run in sweep.runs()}
    counts = sweep.counts(results)
    assert list(counts) == [ModelSpec("rnn"), ModelSpec("lstm", 2.0)]
    for model, row in counts.items():
        assert row == [results[RecallRun(model, lag, (0, 1), SMALL)].successes for lag in (1, 2)]
    with pytest.raises(ValueError, match=r"^models\[1\] must be a model"):
        Sweep(["rnn", "lstm:x"], (1,), (0,))  # type: ignore[arg-type]  # a bad value on purpose
    with pytest.raises(ValueError, match="^models must be a non-empty list"):
        Sweep((), (1,), (0,))


def test_starting_factor_of_the_gates_is_sigma_of_the_bias():
    assert ex.starting_factor("lstm:2", 3, (0, 1), 8) == pytest.approx(1 / (1 + np.exp(-2.0)))
    H = 16
    gru = ex.starting_factor("gru", 3, (0, 1, 2), H)
    bound = memory.sigmoid(2 / math.sqrt(H))  # b_ih + b_hh, each drawn from U(-1/sqrt(H), 1/sqrt(H))
    assert 1 - bound < gru < bound


def test_starting_factor_of_the_rnn_is_the_median_spectral_radius():
    ens = lab.make_ensemble(tasks.recall(3, ex.ALPHABET), "rnn", [0, 1, 2], hidden=16)
    radii = sorted(max(abs(np.linalg.eigvals(W))) for W in ens.params["weight_hh_l0"])
    assert ex.starting_factor("rnn", 3, (0, 1, 2), 16) == pytest.approx(radii[1])
    assert 0.3 < radii[1] < 0.9  # near 1/sqrt(3) for PyTorch's uniform draw


def test_gradient_reach_starts_at_one_and_reads_trained_parameters():
    before = ex.gradient_reach("rnn", 3, (0, 1), 4, sequences=8)
    assert before.shape == (5,) and before[0] == 1.0 and np.all(before > 0)
    fresh = lab.make_ensemble(tasks.recall(3, ex.ALPHABET), "rnn", [0, 1], hidden=4).params
    assert np.array_equal(ex.gradient_reach("rnn", 3, (0, 1), 4, params=fresh, sequences=8), before)
    trained = RecallRun(ModelSpec("rnn"), 3, (0, 1), SMALL).execute().params
    assert not np.array_equal(ex.gradient_reach("rnn", 3, (0, 1), 4, params=trained, sequences=8), before)


def test_carry_survival_per_scheme():
    assert ex.carry_survival("none", 0.9, 20) == 1.0
    assert ex.carry_survival("per-step", 0.9, 20) == pytest.approx(0.9**21)
    assert ex.carry_survival("per-sequence", 0.9, 20) == 0.9
    with pytest.raises(ValueError, match="^scheme must be one of"):
        ex.carry_survival("per-batch", 0.9, 20)


# ---------------------------------------------------------------------------- plain gradient descent


def test_clipping_changes_every_step_of_gradient_descent_after_the_first():
    free = ex.sgd_run("rnn", 6, 0.3, None, (0,), hidden=4, batch=8, steps=5)
    clipped = ex.sgd_run("rnn", 6, 0.3, 0.01, (0,), hidden=4, batch=8, steps=5)
    assert free.losses[0, 0] == clipped.losses[0, 0]  # same start, same batch
    assert not np.array_equal(free.losses[0, 1:], clipped.losses[0, 1:])
    assert clipped.baseline == pytest.approx(1 / 6)
    assert np.array_equal(free.grad_norms[0, :1], clipped.grad_norms[0, :1])  # norms are before clipping


def test_a_run_whose_loss_overflows_is_reported_as_diverged():
    run = ex.sgd_run("rnn", 6, 1e12, None, (0,), hidden=4, batch=8, steps=20)
    assert run.diverged_at[0] is not None and run.diverged == 1 and np.isnan(run.mse[0])
    assert math.isnan(run.median_ratio)


def test_the_error_ratio_is_over_the_baseline_and_its_median_skips_diverged_members():
    r = SGDResult(np.zeros((3, 1)), np.zeros((3, 1)), (None, 0, None), np.array([1 / 6, np.nan, 1 / 2]), 1 / 6)
    assert r.error_ratio[0] == pytest.approx(1.0) and np.isnan(r.error_ratio[1])
    assert r.median_ratio == pytest.approx(2.0) and r.diverged == 1


def test_the_clip_ladder_pairs_each_rate_and_the_figure_shows_the_first_rung_where_all_diverge():
    ladder = ex.clip_ladder("lstm:1", 20, [0.5, 1.0, 2.0], 1.0, range(2), hidden=8, steps=10)
    assert [(a.lr, a.clip, b.lr, b.clip) for a, b in ladder] == [(r, None, r, 1.0) for r in (0.5, 1.0, 2.0)]
    assert all(a.seeds == (0, 1) and a.model == ModelSpec("lstm", 1.0) for pair in ladder for a in pair)

    def result(diverged):
        return SGDResult(np.zeros((2, 1)), np.zeros((2, 1)), diverged, np.zeros(2), 1 / 6)

    some, every, none = result((3, None)), result((3, 5)), result((None, None))
    assert ex.figure_rung([none, some, every, every]) == 2
    assert ex.figure_rung([none, some]) == 1  # none where every seed diverged: the last rung
    with pytest.raises(ValueError, match=r"^rates\[1\] must be a positive"):
        ex.clip_ladder("rnn", 6, [0.5, -1], 1.0, [0])


def test_an_sgd_run_is_the_sgd_function_of_its_fields():
    run = SGDRun("rnn", 6, 0.3, 0.01, [0], hidden=4, batch=8, steps=5)  # type: ignore[arg-type]  # text and a list, converted on purpose
    direct = ex.sgd_run("rnn", 6, 0.3, 0.01, (0,), hidden=4, batch=8, steps=5)
    assert np.array_equal(run.execute().losses, direct.losses)
    assert run == SGDRun(ModelSpec("rnn"), 6.0, 0.3, 0.01, (0,), hidden=4, batch=8, steps=5)  # type: ignore[arg-type]  # a float length, converted on purpose

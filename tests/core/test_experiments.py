"""rnnmem.experiments: one model-spec language, runs as values, and how their results are read."""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Literal

import numpy as np
import pytest

from rnnmem import ensemble, lab, memory, stats, tasks
from rnnmem import experiments as ex
from rnnmem.experiments import Design, DropoutRun, ModelSpec, RecallRun, RunResult, Sweep

SMALL = Design(hidden=4, steps=6, threshold=0.5)
SCHEMES: tuple[Literal["none", "carry-step", "carry-sequence", "hidden-sequence"], ...] = (
    "none",
    "carry-step",
    "carry-sequence",
    "hidden-sequence",
)


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
        (dict(cell="cnn"), f"cell must be one of {', '.join(map(repr, ensemble.MODELS))}, got 'cnn'"),
        (dict(cell="lstm", init="xavier"), "init must be one of 'default', 'chrono', got 'xavier'"),
    ],
)
def test_a_model_that_cannot_be_built_is_refused(kwargs, named):
    with pytest.raises(ValueError, match="^" + named.replace("(", r"\(").replace(")", r"\)")):
        ModelSpec(**kwargs)


@pytest.mark.parametrize(
    "text, bias, init, input_bias, key",
    [
        ("lstm:chrono:i0", None, "chrono", 0.0, "chrono_i0"),
        ("lstm:3:i-3", 3.0, "default", -3.0, "lstm3_im3"),
        ("lstm:i0.5", None, "default", 0.5, "lstm_i0.5"),
    ],
)
def test_an_lstm_spec_may_set_its_input_gate_bias(text, bias, init, input_bias, key):
    spec = ModelSpec.parse(text)
    assert (spec.forget_bias, spec.init, spec.input_bias, spec.key) == (bias, init, input_bias, key)
    assert str(spec) == text and ModelSpec.parse(str(spec)) == spec
    for bad in ("lstm:2:ix", "lstm:2:3", "lstm:chrono:i0:i1", "gru:i0"):
        with pytest.raises(ValueError, match="^model must be a model"):
            ModelSpec.parse(bad)
    with pytest.raises(ValueError, match="^input_bias sets the LSTM's input gate; cell must be 'lstm'"):
        ModelSpec("rnn", input_bias=0.0)


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
        hidden=16, batch=32, lr=0.01, clip=1.0, steps=300, eval_every=25, eval_size=256, threshold=0.9, optimizer="adam"
    )
    assert ex.SEEDS == tuple(range(20)) and ex.PRECISION == "float32" and (ex.SHORT, ex.LONG) == (300, 1500)
    assert ex.SHORT_LAGS == tuple(range(4, 41, 4)) and ex.LONG_LAGS_DESIGNED == (8, 16, 24, 32, 40)
    assert ex.LONG_LAGS == ex.LONG_LAGS_FALLBACK == (8, 24, 40)  # chosen by the cold cost
    assert set(ex.LONG_LAGS_DESIGNED) <= set(ex.SHORT_LAGS) and set(ex.LONG_LAGS_FALLBACK) <= set(ex.LONG_LAGS_DESIGNED)
    assert (ex.EXTEND_STEP, ex.EXTEND_TO, ex.LONG_RATE) == (8, 64, 0.25)
    assert set(ex.SURVIVAL_LAGS) <= set(ex.LONG_LAGS) and ex.DIAGNOSTIC_LAG in ex.LONG_LAGS


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
    ):
        with pytest.raises(ValueError, match="^" + re.escape(named)):
            bad()


def test_a_recall_run_trains_what_lab_train_trains_with_the_design():
    run = RecallRun(ModelSpec("lstm", 2.0), 2, (0, 1), SMALL, dtype="float64", probe=0)
    got = run.execute()
    model = lab.Model("lstm", seeds=[0, 1], hidden=SMALL.hidden, forget_bias=2.0)
    want = lab.train(tasks.recall(2, ex.ALPHABET), model, SMALL.schedule(stop_when_done=True, retire=True))
    assert np.array_equal(got.scores, want.scores, equal_nan=True)
    assert np.array_equal(got.losses, want.losses, equal_nan=True)
    assert got.successes == want.successes and got.success_step == tuple(want.success_step)
    assert np.array_equal(got.params["weight_hh_l0"], want.ensemble.params["weight_hh_l0"])
    again = run.execute()  # a pure function of the run
    assert np.array_equal(again.losses, got.losses, equal_nan=True)


def test_the_probe_files_each_diagnostic_under_its_member_and_changes_nothing():
    design = Design(hidden=4, steps=10, eval_every=5, threshold=0.5)
    probed = RecallRun("rnn", 2, (3, 1), design, probe=8).execute()  # type: ignore[arg-type]  # converted on purpose
    plain = RecallRun("rnn", 2, (3, 1), design, probe=0).execute()  # type: ignore[arg-type]  # converted on purpose
    assert np.array_equal(probed.losses, plain.losses, equal_nan=True) and plain.diagnostics == {}
    rho = probed.diagnostics["spectral_radius"]
    assert rho.shape == (2, len(probed.eval_steps))
    start = lab.make_ensemble(tasks.recall(2, ex.ALPHABET), "rnn", [3, 1], hidden=4, dtype=np.float32)
    for e in range(2):
        W = start.params["weight_hh_l0"][e].astype(np.float64)
        assert rho[e, 0] == pytest.approx(max(abs(np.linalg.eigvals(W))), rel=1e-4)


def test_the_first_updates_are_the_same_whatever_the_budget():
    """The short budget is read from the long runs: a member's first updates do not depend on the budget."""
    short, long = (
        Design(hidden=8, steps=20, eval_every=5, threshold=0.3),
        Design(hidden=8, steps=60, eval_every=5, threshold=0.3),
    )
    for model in ("rnn", "lstm:1"):
        a = RecallRun(model, 2, (0, 1, 2), short).execute()  # type: ignore[arg-type]  # converted on purpose
        b = RecallRun(model, 2, (0, 1, 2), long).execute()  # type: ignore[arg-type]  # converted on purpose
        assert np.array_equal(a.losses[:, :20], b.losses[:, :20], equal_nan=True)
        k = len(a.eval_steps)
        assert np.array_equal(a.scores, b.scores[:, :k], equal_nan=True)
        oa, ob = a.outcome(20), b.outcome(20)
        assert oa.success_step == ob.success_step and np.array_equal(oa.final, ob.final)
        for name, values in a.diagnostics.items():
            assert np.array_equal(values, b.diagnostics[name][:, :k], equal_nan=True), name
        assert b.outcome(60).successes >= ob.successes


def test_dropout_schemes_differ_only_in_their_masks():
    assert SCHEMES == ex.SCHEMES
    runs = [DropoutRun(s, 0.5, 1.0, 2, (0,), SMALL).execute() for s in SCHEMES]
    none, step, sequence, hidden = runs
    firsts = {r.losses[0, 0] for r in runs}
    assert len(firsts) == 4  # each mask changes the first loss its own way
    plain = RecallRun(ModelSpec("lstm", 1.0), 2, (0,), SMALL, probe=0).execute()
    assert np.array_equal(none.scores[:, 0], plain.scores[:, 0])  # same start, evaluated without masks
    assert np.array_equal(none.losses, plain.losses, equal_nan=True)


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


def test_an_outcome_reads_a_retired_member_at_its_success_and_the_others_at_the_budget():
    r = RunResult(
        eval_steps=np.array([0, 25, 50, 75]),
        scores=np.array([[0.1, 0.95, np.nan, np.nan], [0.1, 0.2, 0.3, 0.92], [0.1, 0.4, 0.5, 0.6]]),
        losses=np.zeros((3, 75)),
        grad_norms=np.zeros((3, 75)),
        success_step=(25, 75, None),
        diverged_at=(None, None, None),
        params={},
    )
    at50, at75 = r.outcome(50), r.outcome(75)
    assert at50.success_step == (25, None, None) and at50.final.tolist() == [0.95, 0.3, 0.5]
    assert at75.successes == 2 and at75.final.tolist() == [0.95, 0.92, 0.6]
    assert at50.times.tolist() == [25, 50, 50] and at50.observed.tolist() == [True, False, False]
    lo, hi = at75.interval()
    assert (lo, hi) == stats.wilson(2, 3) and lo < at75.rate < hi
    with pytest.raises(ValueError, match="^budget must be at most the 75 updates trained"):
        r.outcome(100)


# ---------------------------------------------------------------------------- the sweep and its rules


def fake_result(successes: int, n: int, budget: int, at: int) -> RunResult:
    """A run whose first ``successes`` members succeed at update ``at`` (0 < at <= budget)."""
    steps = np.array([0, at, budget]) if at < budget else np.array([0, budget])
    scores = np.full((n, len(steps)), 0.1)
    scores[:successes, 1:] = 0.95
    return RunResult(
        eval_steps=steps,
        scores=scores,
        losses=np.zeros((n, budget)),
        grad_norms=np.zeros((n, budget)),
        success_step=tuple([at] * successes + [None] * (n - successes)),
        diverged_at=(None,) * n,
        params={},
    )


def test_the_sweep_extends_each_grid_by_its_rule_and_reads_the_short_budget_from_the_long_runs():
    sweep = Sweep(
        ["rnn", "lstm:2"],  # type: ignore[arg-type]  # converted on purpose
        short_lags=(4, 8),
        long_lags=(8,),
        seeds=range(4),  # type: ignore[arg-type]  # converted on purpose
        design=SMALL,
        budgets=(10, 30),
        extend_step=4,
        extend_to=20,
    )

    def table(run: RecallRun) -> RunResult:
        # the RNN: 1 of 4 by update 5 up to lag 12, none beyond; the LSTM: 2 of 4 at update 20 up to lag 16
        if run.model.cell == "rnn":
            return fake_result(1 if run.lag <= 12 else 0, 4, run.design.steps, 5)
        if run.design.steps < 20:
            return fake_result(0, 4, run.design.steps, run.design.steps)
        return fake_result(2 if run.lag <= 16 else 0, 4, run.design.steps, 20)

    trained: list = []

    def train(keys):
        trained.extend(keys)
        return [table(k) for k in keys]

    res = sweep.execute(train)
    rnn, lstm = ModelSpec("rnn"), ModelSpec("lstm", 2.0)
    assert res.lags(rnn, 10) == [4, 8, 12, 16]  # one success at 12 allows 16, none there stops it
    assert res.lags(rnn, 30) == [8, 12, 16]  # a rate of 1/4 allows the next lag
    assert res.lags(lstm, 10) == [4, 8]  # no success within 10 updates
    assert res.lags(lstm, 30) == [8, 12, 16, 20]  # 2/4 up to 16; 20 is the limit anyway
    assert len(trained) == len(set(trained)), "no run is trained twice"
    assert all(k.design.steps == 30 for k in trained if k.lag in (12, 16) and k.model == lstm)
    assert res.source(rnn, 8, 10).design.steps == 30 and res.source(rnn, 4, 10).design.steps == 10
    assert res.outcome(rnn, 8, 10).successes == 1 and res.outcome(lstm, 8, 10).successes == 0
    assert res.counts(lstm, 30) == [2, 2, 2, 0]
    with pytest.raises(ValueError, match=r"^models\[1\] must be a model"):
        Sweep(["rnn", "lstm:x"], (1,), (1,))  # type: ignore[arg-type]  # a bad value on purpose
    with pytest.raises(ValueError, match="^models must be a non-empty list"):
        Sweep((), (1,), (1,))
    with pytest.raises(ValueError, match="^budgets must be two numbers of updates, short then long"):
        Sweep(["rnn"], (1,), (1,), budgets=(30, 10))  # type: ignore[arg-type]  # converted on purpose


def test_the_lag_learned_is_the_logistic_fit_of_the_counts():
    fit = ex.lag_learned([4, 8, 12, 16, 20], [20, 18, 10, 3, 0], 20)
    direct = stats.logistic_fit([4, 8, 12, 16, 20], [20, 18, 10, 3, 0], [20] * 5)
    assert fit.x50 == pytest.approx(direct.x50) and 8 < fit.x50 < 16 and fit.slope < 0
    with pytest.raises(ValueError, match="^successes must be one count in 0..20 per lag"):
        ex.lag_learned([4, 8], [21, 3], 20)


def test_the_sgd_rate_has_the_most_successes_and_a_tie_goes_to_the_smaller():
    assert ex.sgd_rate([0.1, 0.3, 1.0, 3.0], [2, 7, 7, 1]) == 0.3
    assert ex.sgd_rate([0.1, 0.3], [0, 0]) == 0.1
    with pytest.raises(ValueError, match="^successes must give one count per rate"):
        ex.sgd_rate([0.1, 0.3], [1])


def test_the_dropout_equivalent_bias_has_the_gate_sigma_over_p():
    b = ex.dropout_equivalent_bias(2.0, 0.9)
    assert memory.sigmoid(b) == pytest.approx(memory.sigmoid(2.0) / 0.9)
    with pytest.raises(ValueError, match="must be below 1"):
        ex.dropout_equivalent_bias(4.0, 0.5)


def test_starting_factor_of_the_gates_is_sigma_of_the_bias():
    assert ex.starting_factor("lstm:2", 3, (0, 1), 8) == pytest.approx(1 / (1 + np.exp(-2.0)))
    H = 16
    gru = ex.starting_factor("gru", 3, (0, 1, 2), H)
    bound = memory.sigmoid(2 / math.sqrt(H))  # b_ih + b_hh, each drawn from U(-1/sqrt(H), 1/sqrt(H))
    assert 1 - bound < gru < bound


def test_starting_factor_of_the_rnn_is_the_median_spectral_radius_below_the_spectral_norm():
    ens = lab.make_ensemble(tasks.recall(3, ex.ALPHABET), "rnn", [0, 1, 2], hidden=16)
    radii = sorted(max(abs(np.linalg.eigvals(W))) for W in ens.params["weight_hh_l0"])
    assert ex.starting_factor("rnn", 3, (0, 1, 2), 16) == pytest.approx(radii[1])
    assert 0.3 < radii[1] < 0.9  # near 1/sqrt(3) for PyTorch's uniform draw
    rho, norm = ex.rnn_spectra(3, (0, 1, 2), 16)
    assert sorted(rho) == pytest.approx(radii) and np.all(norm > rho)
    assert ex.starting_horizon("rnn", 3, (0, 1, 2), 16) == pytest.approx(memory.horizon(radii[1]))


def test_chrono_starts_with_a_horizon_that_grows_with_the_sequence():
    short, long = (ex.starting_horizon("lstm:chrono", lag, (0, 1), 16) for lag in (8, 40))
    assert long > short > 8 and ex.starting_factor("lstm:chrono:i0", 8, (0, 1), 16) == pytest.approx(
        ex.starting_factor("lstm:chrono", 8, (0, 1), 16)
    )


def test_gradient_reach_starts_at_one_and_reads_trained_parameters():
    before = ex.gradient_reach("rnn", 3, (0, 1), 4, sequences=8)
    assert before.shape == (5,) and before[0] == 1.0 and np.all(before > 0)
    fresh = lab.make_ensemble(tasks.recall(3, ex.ALPHABET), "rnn", [0, 1], hidden=4).params
    assert np.array_equal(ex.gradient_reach("rnn", 3, (0, 1), 4, params=fresh, sequences=8), before)
    trained = RecallRun(ModelSpec("rnn"), 3, (0, 1), SMALL).execute().params
    assert not np.array_equal(ex.gradient_reach("rnn", 3, (0, 1), 4, params=trained, sequences=8), before)


def test_start_rates_raised_to_the_steps_back_are_each_members_share_at_the_first_token():
    lag, seeds = 4, (0, 1, 2)
    rates = ex.start_rates("lstm", lag, seeds, 8, sequences=16)
    assert rates.shape == (3,) and np.all((rates > 0) & (rates < 1))
    for seed, rate in zip(seeds, rates):  # one member alone: the median over its seeds is its own share
        share = ex.gradient_reach("lstm", lag, (seed,), 8, sequences=16)
        assert rate ** (lag + 1) == pytest.approx(share[-1], rel=1e-12)


def test_start_rates_grow_with_the_forget_bias_and_read_the_spec():
    default, biased = (ex.start_rates(m, 6, (0, 1, 2), 16, sequences=32) for m in ("lstm", "lstm:2"))
    assert np.all(biased > default)
    assert np.array_equal(
        ex.start_rates("lstm:chrono", 6, (0, 1), 16, sequences=32)[:1],
        ex.start_rates("lstm:chrono", 6, (0,), 16, sequences=32),
    )
    with pytest.raises(ValueError, match="model"):
        ex.start_rates("lstm:x", 6, (0,), 16)


def test_carry_survival_per_scheme():
    assert ex.carry_survival("none", 0.9, 20) == 1.0
    assert ex.carry_survival("carry-step", 0.9, 20) == pytest.approx(0.9**21)
    assert ex.carry_survival("carry-sequence", 0.9, 20) == ex.carry_survival("hidden-sequence", 0.9, 20) == 0.9
    with pytest.raises(ValueError, match="^scheme must be one of"):
        ex.carry_survival("per-batch", 0.9, 20)

"""The lab of "Looking back: attention": its attention ensembles, trained by the lab's trainer.

The last-state arm is held to :func:`rnnmem.lab.train` on the lab's LSTM bit for bit; the attention readouts'
gradients to finite differences (:func:`rnnmem.gradcheck.gradcheck_loss`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rnnmem import attention, attention_lab, gradcheck, inside, lab, stats
from rnnmem.attention_lab import AttentionEnsemble, AttentionRun, make_model, train
from rnnmem.ensemble import OneHot
from rnnmem.experiments import Design
from rnnmem.tasks import adding, recall

SMALL = Design(hidden=8, steps=100, batch=16, lr=0.02, eval_every=25, eval_size=64)


def test_the_design_is_fixed_in_the_module():
    assert attention_lab.ARMS == ("last", "attention", "uniform")
    assert attention_lab.MODEL == "lstm:chrono" and attention_lab.TASK == "recall"
    assert attention_lab.LAGS_DESIGNED == (10, 30, 100, 300) and attention_lab.LAGS == (10, 30, 50, 100)
    assert attention_lab.LAG_ADDED == 50 and attention_lab.MEMORY_LAGS == (10, 30, 50)
    assert attention_lab.MEMORY_GROUPS == 32 and attention_lab.MEMORY_SEED == (0, 5) and attention_lab.HOLD == 5
    assert attention_lab.SEEDS == tuple(range(20)) and attention_lab.BUDGET == 300
    assert attention_lab.DESIGN == Design(steps=300) and attention_lab.PRECISION == "float32"


@pytest.mark.parametrize("arm", ["attention", "uniform"])
@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_the_attention_readouts_gradients_match_finite_differences(arm, kind):
    task = recall(lag=4, alphabet=4) if kind == "classification" else adding(7)
    model = make_model(task, arm, [0, 1], hidden=5)
    if arm == "attention":  # a query away from zero, so that the weights are not uniform
        model.params["query"][...] = np.random.default_rng(3).normal(size=(2, 5))
    b = task.sample(6, seed=2)
    result = gradcheck.gradcheck_loss(model, b.inputs, b.targets, kind, eps=1e-5)
    assert result.worst < 1e-6, result.rows
    assert ("query" in dict(result.rows)) == (arm == "attention")


def test_the_readout_is_the_attention_of_rnnmem_attention_over_the_lstms_states():
    task = recall(lag=5, alphabet=8)
    model = make_model(task, "attention", [2, 7], hidden=4)
    model.params["query"][...] = np.random.default_rng(1).normal(size=(2, 4))
    x = task.sample(3, seed=0).inputs
    logits = model.predict(x)
    weights = model.weights(x)
    for e in range(2):
        states = model.ensemble.member(e).forward(x)[0]  # (T, B, H), member e alone
        out = attention.attend(states, model.params["query"][e])
        assert np.allclose(weights[e], out.weights.T)
        V, c = model.params["readout_weight"][e], model.params["readout_bias"][e]
        assert np.allclose(logits[e], out.context @ V.T + c)


def test_every_arm_starts_from_the_same_weights():
    task = recall(lag=3)
    models = {arm: make_model(task, arm, [0, 4], hidden=4) for arm in attention_lab.ARMS}
    for name, p in models["last"].params.items():
        for arm in ("attention", "uniform"):
            assert np.array_equal(models[arm].params[name], p), (arm, name)
    assert (models["attention"].params["query"] == 0).all() and "query" not in models["uniform"].params
    x = task.sample(4).inputs
    assert np.array_equal(models["attention"].predict(x), models["uniform"].predict(x))


def test_the_parameters_are_one_block_that_the_ensemble_reads():
    task = recall(lag=3)
    model = make_model(task, "attention", [0, 1], hidden=4)
    model._flat[:, 0] += 1.0  # the first entry of weight_ih_l0, through the block
    assert model.ensemble.params["weight_ih_l0"][0, 0, 0] == model._flat[0, 0]
    assert np.shares_memory(model.params["query"], model._flat)
    picked = model.select([1])
    assert picked.seeds == (1,) and np.array_equal(picked._flat[0], model._flat[1])
    assert not np.shares_memory(picked._flat, model._flat)


@pytest.mark.parametrize("arm", ["attention", "uniform"])
def test_members_never_mix(arm):
    """A member's loss, gradients and scores are the same in any stack, bit for bit."""
    task = recall(lag=5, alphabet=8)
    together = make_model(task, arm, [3, 8, 1], hidden=6, dtype=np.float32)
    if arm == "attention":
        together.params["query"][...] = np.random.default_rng(0).normal(size=(3, 6))
    ids, y = task.sample_ids_each(7, [np.random.default_rng((s, 1)) for s in (3, 8, 1)])
    loss, grads = together.loss_and_grads(OneHot(ids), y, "classification")
    for e in range(3):
        alone = together.select([e])
        loss_e, grads_e = alone.loss_and_grads(OneHot(ids[:, e : e + 1]), y[e : e + 1], "classification")
        assert loss_e[0] == loss[e]
        for name in grads:
            assert np.array_equal(grads_e[name][0], grads[name][e]), name


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_loops_last_state_arm_is_lab_train_bit_for_bit(dtype):
    """Retirement, evaluation, Adam and clipping as rnnmem.lab.train does them: every number equal."""
    task = recall(lag=2, alphabet=4)
    seeds = [0, 1, 2, 3, 4, 5]
    mine = train(task, "last", seeds=seeds, dtype=dtype, design=SMALL)
    lstm = lab.Model("lstm", seeds=seeds, hidden=SMALL.hidden, init="chrono", dtype=dtype)
    theirs = lab.train(task, lstm, SMALL.schedule(retire=True, stop_when_done=True))
    assert len(set(mine.success_step)) > 1  # members retire at different updates
    assert mine.success_step == tuple(theirs.success_step) and mine.diverged_at == tuple(theirs.diverged_at)
    for name in ("eval_steps", "scores", "losses", "grad_norms"):
        assert np.array_equal(getattr(mine, name), getattr(theirs, name), equal_nan=True), name
    for name, p in theirs.ensemble.params.items():
        assert np.array_equal(mine.params[name], p), name


def test_the_loops_last_state_arm_is_lab_train_on_a_regression_too():
    task = adding(6)
    small = dataclasses.replace(SMALL, steps=30)
    mine = train(task, "last", seeds=[0, 1], design=small)
    lstm = lab.Model("lstm", seeds=[0, 1], hidden=small.hidden, init="chrono")
    theirs = lab.train(task, lstm, small.schedule(retire=True, stop_when_done=True))
    assert np.array_equal(mine.scores, theirs.scores, equal_nan=True)
    assert np.array_equal(mine.losses, theirs.losses, equal_nan=True)


def test_an_attention_member_trains_as_it_would_train_alone():
    task = recall(lag=3, alphabet=4)
    together = train(task, "attention", seeds=[2, 6], design=SMALL)
    for e, seed in enumerate((2, 6)):
        alone = train(task, "attention", seeds=[seed], design=SMALL)
        assert together.success_step[e] == alone.success_step[0]
        assert np.array_equal(together.scores[e], alone.scores[0], equal_nan=True)
        assert np.array_equal(together.losses[e], alone.losses[0], equal_nan=True)
        assert np.array_equal(together.params["query"][e], alone.params["query"][0])


def test_the_attention_readout_learns_a_short_recall():
    result = train(recall(lag=2, alphabet=4), "attention", seeds=[0, 1, 2], design=Design(steps=200, lr=0.02))
    assert result.successes == 3 and result.outcome(200).successes == 3


def test_a_run_is_a_value_that_trains_the_design():
    run = AttentionRun("uniform", lag=2, seeds=range(2), design=Design(hidden=4, steps=10))  # type: ignore[arg-type]
    assert run.seeds == (0, 1) and run == AttentionRun("uniform", 2, (0, 1), Design(hidden=4, steps=10))
    again = dataclasses.replace(run).execute()
    result = run.execute()
    assert np.array_equal(result.scores, again.scores, equal_nan=True)
    assert AttentionRun("attention", 10).cost > AttentionRun("last", 10).cost


def test_the_gradient_reaches_the_clue_at_about_one_over_t():
    """At initialization (zero query) the share at step 1 is about alpha_1 = 1/T (the direct term, plus what
    the recurrence adds), where the last-state readout of a fixed forget bias falls geometrically."""
    for lag in (8, 40):
        share = attention_lab.clue_share("attention", lag, [0, 1, 2], 8, sequences=32)
        assert 0.8 / (lag + 2) < share < 1.25 / (lag + 2)
        assert share == attention_lab.clue_share("uniform", lag, [0, 1, 2], 8, sequences=32)
    fixed = [attention_lab.clue_share("last", lag, [0, 1, 2], 8, sequences=32, model="lstm:1") for lag in (8, 40)]
    assert fixed[1] < 0.01 * fixed[0]


def test_the_clue_share_of_the_last_arm_is_the_labs_gradient_by_step():
    task = recall(lag=6, alphabet=8)
    ens = make_model(task, "last", [0, 1, 2], hidden=8)
    norms = lab.gradient_by_step(ens, task, n=32, seed=1)
    expected = float(np.median(norms[:, 0] / norms[:, -1]))
    assert attention_lab.clue_share("last", 6, [0, 1, 2], 8, sequences=32) == pytest.approx(expected, rel=1e-12)


def test_the_profile_of_an_untrained_query_is_uniform():
    task = recall(lag=4)
    params = {"query": np.zeros((2, 6))}
    profile = attention_lab.attention_profile(4, [0, 1], 6, params, sequences=10)
    assert np.allclose(profile.weights, 1 / task.length) and np.allclose(profile.effective, task.length)
    peaked = attention_lab.attention_profile(4, [0, 1], 6, {"query": np.full((2, 6), 50.0)}, sequences=10)
    assert (peaked.effective < profile.effective).all()
    assert np.allclose(peaked.weights.sum(axis=1), 1.0)


def _spread_by_hand(states: np.ndarray, tokens: int) -> np.ndarray:
    """M_t of eq. inside-memory from the states (T, H, B) of groups of ``tokens`` consecutive sequences."""
    T, H, B = states.shape
    h = states.reshape(T, H, B // tokens, tokens)
    spread = ((h - h.mean(axis=3, keepdims=True)) ** 2).sum(axis=(1, 2, 3))
    return np.sqrt(spread / spread[0])


@pytest.mark.parametrize("arm", attention_lab.ARMS)
def test_token_memory_is_the_spread_of_the_states_the_readout_reads(arm):
    """M_t computed by hand from the states the arm's own forward pass keeps, on the same sequences."""
    task = recall(lag=5, alphabet=8)
    rng = np.random.default_rng(7)
    trained = make_model(task, arm, [0, 1], hidden=6)
    params = {name: value + 0.3 * rng.normal(size=value.shape) for name, value in trained.params.items()}
    kept = attention_lab.token_memory(arm, 5, [0, 1], 6, params, groups=3)
    batch = inside.token_variants(task, 3, seed=np.random.default_rng(attention_lab.MEMORY_SEED))
    model = AttentionEnsemble(make_model(task, "last", [0, 1], hidden=6), "uniform")
    for name, value in params.items():
        if name != "query":
            model.params[name][...] = value
    states, _, _ = model._attend(batch.inputs, keep=False)  # (T, H, E, B)
    for e in range(2):
        assert kept[e] == pytest.approx(_spread_by_hand(states[:, :, e], 8), rel=1e-10)
    assert kept.shape == (2, task.length) and (kept[:, 0] == 1.0).all()


def test_token_memory_does_not_depend_on_the_readout():
    """The three arms share the recurrent layer: with the same LSTM weights, the same M_t (the query is not read)."""
    params = make_model(recall(lag=4), "attention", [3], hidden=5).params
    lstm_only = {name: value for name, value in params.items() if name != "query"}
    query = dict(params, query=np.full((1, 5), 4.0))
    last = attention_lab.token_memory("last", 4, [3], 5, lstm_only, groups=2)
    assert np.array_equal(attention_lab.token_memory("attention", 4, [3], 5, query, groups=2), last)
    assert np.array_equal(attention_lab.token_memory("uniform", 4, [3], 5, lstm_only, groups=2), last)


def test_token_memory_fades_in_a_layer_that_forgets_and_not_in_one_that_holds():
    """The measure can tell forgetting from holding: with the forget gate shut (bias -8) the token's imprint
    fades by the query; held open (bias +8), much of it is left."""
    task = recall(lag=6)
    H = 4
    base = make_model(task, "last", [0], hidden=H).params
    shut, held = ({k: v.copy() for k, v in base.items()} for _ in range(2))
    shut["bias_ih_l0"][0, H : 2 * H] = -8.0
    held["bias_ih_l0"][0, H : 2 * H] = 8.0
    forget = attention_lab.token_memory("last", 6, [0], H, shut, groups=2)
    hold = attention_lab.token_memory("last", 6, [0], H, held, groups=2)
    assert forget[0, -1] < 0.1 < hold[0, -1]


def test_wilson_and_fisher_read_the_runs():
    """A count of a run reads as the lab reads it (the chapter's table)."""
    result = AttentionRun("attention", lag=2, seeds=(0, 1, 2), design=Design(hidden=8, steps=50, lr=0.02)).execute()
    o = result.outcome(50)
    assert o.interval() == stats.wilson(o.successes, 3)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: make_model(recall(lag=2), "middle", [0]), "arm must be one of"),
        (lambda: make_model(recall(lag=2), "last", [0], model="gru"), "model must be an LSTM"),
        (lambda: AttentionEnsemble(lab.make_ensemble(recall(lag=2), "gru", [0]), "attention"), "LSTM Ensemble"),
        (lambda: AttentionEnsemble(lab.make_ensemble(recall(lag=2), "lstm", [0]), "last"), "arm must be"),
        (lambda: train("recall", "last"), "task must be a Task"),  # type: ignore[arg-type]
        (lambda: train(recall(lag=2), "last", design=dataclasses.asdict(SMALL)), "design must be a Design"),  # type: ignore[arg-type]
        (lambda: AttentionRun("attention", lag=0), "lag must be"),
        (lambda: AttentionRun("attention", lag=3, seeds=()), "seeds must be"),
        (lambda: AttentionRun("attention", lag=3, dtype="float16"), "dtype must be one of"),
        (lambda: attention_lab.clue_share("last", 3, [0], 4, sequences=0), "sequences must be"),
        (lambda: attention_lab.token_memory("middle", 3, [0], 4, {}), "arm must be one of"),
        (lambda: attention_lab.token_memory("last", 3, [0], 4, {}, groups=0), "groups must be"),
        (
            lambda: make_model(recall(lag=2), "uniform", [0]).loss_and_grads(
                np.zeros((4, 1, 10)), np.zeros(1, dtype=int), "classification", carry_masks=np.ones(1)
            ),
            "without dropout",
        ),
    ],
)
def test_bad_input_is_refused_by_name(call, match):
    with pytest.raises(ValueError, match=match):
        call()

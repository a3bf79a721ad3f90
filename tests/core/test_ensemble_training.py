"""Training ensembles: each member trains exactly as it would alone; success, divergence, bad input."""

import dataclasses
from typing import Any

import numpy as np
import pytest

from rnnmem import lab
from rnnmem.ensemble import Ensemble
from rnnmem.lab import ALL_MODELS, Dropout, Model, Schedule, gradient_by_step, make_ensemble
from rnnmem.tasks import adding, recall

MODEL_FIELDS = {f.name for f in dataclasses.fields(Model)} - {"model"}
DROPOUT_FIELDS = {f.name for f in dataclasses.fields(Dropout)}


def train(task: Any, model: Any = "lstm", *, progress: Any = None, on_evaluation: Any = None, **options: Any):
    """lab.train with every option as a keyword, split among Model, Schedule and Dropout (the tests' shorthand)."""
    made = Model(model, **{k: v for k, v in options.items() if k in MODEL_FIELDS})
    dropout = Dropout(**{k: v for k, v in options.items() if k in DROPOUT_FIELDS})
    rest = {k: v for k, v in options.items() if k not in MODEL_FIELDS | DROPOUT_FIELDS}
    return lab.train(task, made, Schedule(dropout=dropout, **rest), progress=progress, on_evaluation=on_evaluation)


SMALL: dict[str, Any] = dict(hidden=6, steps=12, batch=8, eval_every=4, eval_size=40)


def assert_same_run(together, alone, e, k=0):
    """Member e of `together` and member k (default 0) of `alone`: the same numbers, bit for bit."""
    assert np.array_equal(together.losses[e], alone.losses[k], equal_nan=True)
    assert np.array_equal(together.grad_norms[e], alone.grad_norms[k], equal_nan=True)
    assert np.array_equal(together.scores[e], alone.scores[k], equal_nan=True)
    assert together.success_step[e] == alone.success_step[k]
    assert together.diverged_at[e] == alone.diverged_at[k]
    for name, p in together.ensemble.params.items():
        assert np.array_equal(p[e], alone.ensemble.params[name][k], equal_nan=True), name


@pytest.mark.parametrize("model", ["rnn", "gru", "lstm"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_ensemble_trains_each_member_as_it_would_train_alone(model, dtype):
    """Identical to the last bit: the batched products compute each member's product by itself."""
    task = recall(lag=3, alphabet=3)
    seeds = [4, 0, 9]
    together = train(task, model, seeds=seeds, dtype=dtype, **SMALL)
    assert together.losses.dtype == np.float64 and together.ensemble.dtype == dtype
    assert len({float(together.losses[e, -1]) for e in range(3)}) == 3  # the members differ
    for e, seed in enumerate(seeds):
        assert_same_run(together, train(task, model, seeds=[seed], dtype=dtype, **SMALL), e)


def test_configurations_stack_too():
    task = adding(6)
    together = train(task, "lstm", seeds=[1, 1, 2], forget_bias=[0.0, 2.0, 1.0], **SMALL)
    for e, (seed, b) in enumerate([(1, 0.0), (1, 2.0), (2, 1.0)]):
        assert_same_run(together, train(task, "lstm", seeds=[seed], forget_bias=b, **SMALL), e)


def test_initializations_stack_too():
    """b_f = 0, b_f = 2 and chrono in one ensemble, each member as it trains alone."""
    task = recall(lag=4, alphabet=3)
    members = [(3, 0.0, "default"), (3, 2.0, "default"), (3, None, "chrono"), (4, None, "default")]
    together = train(
        task,
        "lstm",
        seeds=[m[0] for m in members],
        forget_bias=[m[1] for m in members],
        init=[m[2] for m in members],
        **SMALL,
    )
    assert isinstance(together.ensemble, Ensemble)
    assert together.ensemble.t_max == task.length
    for e, (seed, b, init) in enumerate(members):
        assert_same_run(together, train(task, "lstm", seeds=[seed], forget_bias=b, init=init, **SMALL), e)


def test_curves_and_norms_are_recorded():
    result = train(
        recall(lag=2, alphabet=4),
        "gru",
        seeds=[0, 1],
        hidden=8,
        steps=30,
        batch=16,
        eval_every=10,
        eval_size=64,
        clip=0.5,
    )
    assert result.eval_steps.tolist() == [0, 10, 20, 30]
    assert result.scores.shape == (2, 4) and result.losses.shape == (2, 30)
    assert ((result.scores >= 0) & (result.scores <= 1)).all()
    assert (result.grad_norms > 0).all() and np.isfinite(result.losses).all()
    # the recorded norm is before clipping: with clip=0.5 some exceed it
    assert (result.grad_norms > 0.5).any()
    assert result.losses[:, :5].mean() > result.losses[:, -5:].mean()  # it learns something


def test_a_short_dependency_is_learned_and_counted():
    """Lag 2, alphabet 4: every seed reaches the threshold, at an evaluation step."""
    result = train(
        recall(lag=2, alphabet=4), "lstm", seeds=[0, 1, 2], hidden=16, steps=150, lr=0.02, eval_every=25, eval_size=256
    )
    assert result.successes == 3
    assert all(s % 25 == 0 and 0 < s <= 150 for s in result.success_step)
    for e, s in enumerate(result.success_step):
        k = list(result.eval_steps).index(s)
        assert result.scores[e, k] >= 0.9 and (k == 0 or result.scores[e, k - 1] < 0.9)


def test_regression_success_is_a_fraction_of_the_baseline():
    task = adding(4)
    strict = train(
        task, "gru", seeds=[0, 1], hidden=16, steps=200, lr=0.01, eval_every=50, eval_size=256, threshold=0.99
    )
    loose = train(task, "gru", seeds=[0, 1], hidden=16, steps=200, lr=0.01, eval_every=50, eval_size=256, threshold=0.5)
    for result in (strict, loose):
        limit = (1 - result.threshold) * task.baseline_mse
        for e in range(2):
            reached = result.scores[e] <= limit
            first = int(result.eval_steps[np.argmax(reached)]) if reached.any() else None
            assert result.success_step[e] == first
    assert loose.successes >= 1
    assert np.array_equal(strict.scores, loose.scores)


def test_stop_when_done_stops_at_the_first_evaluation_all_have_succeeded():
    kwargs: dict[str, Any] = dict(seeds=[0, 1], hidden=16, steps=400, lr=0.02, eval_every=25, eval_size=128)
    full = train(recall(lag=2, alphabet=4), "lstm", **kwargs)
    short = train(recall(lag=2, alphabet=4), "lstm", stop_when_done=True, **kwargs)
    assert short.success_step == full.success_step
    last = max(full.success_step)
    assert short.eval_steps[-1] == last and np.isnan(short.losses[:, last:]).all()
    assert np.array_equal(short.losses[:, :last], full.losses[:, :last])


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_a_diverging_run_stops_and_says_so(optimizer):
    """An absurd learning rate without clipping: the loss stops being finite, the member is frozen."""
    result = train(
        adding(5),
        "rnn",
        seeds=[0, 1],
        hidden=4,
        steps=20,
        batch=8,
        lr=1e200,
        clip=None,
        eval_every=5,
        eval_size=16,
        optimizer=optimizer,
    )
    assert all(d is not None and d < 20 for d in result.diverged_at)
    assert result.successes == 0 and not result.succeeded.any()
    for e, d in enumerate(result.diverged_at):
        assert np.isfinite(result.losses[e, :d]).all() and np.isnan(result.losses[e, d:]).all()
        assert result.outcome(e) == f"diverged at update {d}"
    for e, d in enumerate(result.diverged_at):  # frozen: as they were after d updates
        if d > 0:
            before = train(
                adding(5),
                "rnn",
                seeds=[e],
                hidden=4,
                steps=d,
                batch=8,
                lr=1e200,
                clip=None,
                eval_every=5,
                eval_size=16,
                optimizer=optimizer,
            )
            for k, p in result.ensemble.params.items():
                assert np.array_equal(p[e], before.ensemble.params[k][0], equal_nan=True), k
    # the same setting with clipping and plain descent stays finite
    clipped = train(
        adding(5),
        "rnn",
        seeds=[0, 1],
        hidden=4,
        steps=20,
        batch=8,
        lr=0.1,
        clip=1.0,
        eval_every=5,
        eval_size=16,
        optimizer="sgd",
    )
    assert clipped.diverged_at == [None, None]


def test_gradient_by_step_on_a_fresh_and_a_trained_ensemble():
    task = recall(lag=12, alphabet=4)
    fresh = make_ensemble(task, "rnn", [0, 1], hidden=8)
    norms = gradient_by_step(fresh, task, n=64)
    assert norms.shape == (2, 14) and (norms > 0).all()
    assert (norms[:, 0] < norms[:, -1]).all()  # the tanh RNN's gradient fades back in time
    result = train(task, "rnn", seeds=[0, 1], hidden=8, steps=5, batch=8, eval_every=5, eval_size=16)
    again = make_ensemble(task, "rnn", [0, 1], hidden=8)
    assert np.array_equal(gradient_by_step(again, task, n=64), norms)  # fresh is reproducible
    assert not np.array_equal(gradient_by_step(result.ensemble, task, n=64), norms)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(steps=0), "steps must be a whole number >= 1, got 0"),
        (dict(batch=0), "batch must be a whole number >= 1, got 0"),
        (
            dict(threshold=0),
            "threshold must be a number in (0, 1] (an accuracy, or a fraction of variance explained), got 0",
        ),
        (
            dict(threshold=1.5),
            "threshold must be a number in (0, 1] (an accuracy, or a fraction of variance explained), got 1.5",
        ),
        (dict(model="lstmx"), f"model must be one of {', '.join(map(repr, ALL_MODELS))}, got 'lstmx'"),
        (dict(init="xavier"), "init must be one of 'default', 'chrono', got 'xavier'"),
        (dict(lr=0), "lr must be a positive finite number, got 0"),
        (dict(clip=-1.0), "clip must be a positive finite number, got -1.0"),
        (dict(optimizer="rmsprop"), "optimizer must be one of 'adam', 'sgd', got 'rmsprop'"),
        (dict(eval_every=0), "eval_every must be a whole number >= 1, got 0"),
        (dict(hidden=0), "hidden must be a whole number >= 1, got 0"),
        (dict(seeds=[0, -2]), "seeds[1] must be a whole number >= 0, got -2"),
        (dict(eval_size=0), "eval_size must be a whole number >= 1, got 0"),
    ],
)
def test_bad_training_arguments_are_named(kwargs, message):
    args: dict[str, Any] = dict(model="lstm", seeds=[0], steps=2)
    args.update(kwargs)
    model = args.pop("model")
    with pytest.raises(ValueError) as info:
        train(recall(lag=2), model, **args)
    assert str(info.value) == message
    with pytest.raises(ValueError, match="task must be a Task"):
        train("recall", "lstm")  # a bad value on purpose


@pytest.mark.parametrize("carry_mask", ["step", "sequence"])
def test_carry_dropout_trains_each_member_as_alone_and_changes_training(carry_mask):
    task = recall(lag=3, alphabet=3)
    kwargs: dict[str, Any] = dict(carry_keep=0.8, carry_mask=carry_mask, **SMALL)
    together = train(task, "lstm", seeds=[2, 5], **kwargs)
    for e, seed in enumerate([2, 5]):
        assert_same_run(together, train(task, "lstm", seeds=[seed], **kwargs), e)
    plain = train(task, "lstm", seeds=[2, 5], **SMALL)
    assert not np.array_equal(plain.losses, together.losses)
    assert np.array_equal(plain.scores[:, 0], together.scores[:, 0])  # evaluation uses no mask
    with pytest.raises(ValueError, match=r"carry_keep must be a keep probability in \(0, 1\], got 0.0"):
        train(task, "lstm", carry_keep=0.0, **SMALL)
    with pytest.raises(ValueError, match="carry_keep drops the LSTM's cell state; model must be 'lstm', got 'gru'"):
        train(task, "gru", carry_keep=0.5, **SMALL)
    with pytest.raises(ValueError, match="carry_mask must be one of 'step', 'sequence', got 'layer'"):
        train(task, "lstm", carry_keep=0.5, carry_mask="layer", **SMALL)


@pytest.mark.parametrize("task", [recall(lag=4, alphabet=3), recall(lag=4, distractors="blank"), adding(7)])
def test_each_members_batches_are_what_its_stream_draws_alone(task):
    """Task.sample_each (the lab's one draw per update for all members) = Task.sample stream by stream."""
    together = [np.random.default_rng((s, 1)) for s in (3, 8, 3)]
    alone = [np.random.default_rng((s, 1)) for s in (3, 8, 3)]
    for _ in range(2):  # the streams go on from one draw to the next
        both = task.sample_each(5, together)
        assert both.inputs.shape == (task.length, 3, 5, task.input_size) and both.targets.shape == (3, 5)
        for k, rng in enumerate(alone):
            one = task.sample(5, seed=rng)
            assert np.array_equal(both.inputs[:, k], one.inputs) and np.array_equal(both.targets[k], one.targets)
    assert np.array_equal(task.sample_each(5, [1, 2]).inputs[:, 1], task.sample(5, seed=2).inputs)
    if task.one_hot:  # the lab's draw: the same batches, each input vector by the index of its 1
        by_index = [np.random.default_rng((s, 1)) for s in (3, 8, 3)]
        by_vector = [np.random.default_rng((s, 1)) for s in (3, 8, 3)]
        for _ in range(2):
            ids, targets = task.sample_ids_each(5, by_index)
            vectors = task.sample_each(5, by_vector)
            assert np.array_equal(np.eye(task.input_size)[ids], vectors.inputs)
            assert np.array_equal(targets, vectors.targets)
    else:
        with pytest.raises(ValueError, match="sample_ids_each needs one-hot inputs"):
            task.sample_ids_each(5, [0])
    assert not np.array_equal(both.inputs[:, 0], both.inputs[:, 1])
    with pytest.raises(ValueError, match=r"seeds must be a non-empty list of seeds, one per stream, got \[\]"):
        task.sample_each(5, [])
    with pytest.raises(ValueError, match=r"seeds\[1\] must be a whole number >= 0, None or a numpy.random.Generator"):
        task.sample_each(5, [0, -1])
    with pytest.raises(ValueError, match="n must be a whole number >= 1, got 0"):
        task.sample_each(0, [0])


def test_the_evaluation_hook_sees_every_checkpoint_with_the_parameters_of_that_moment():
    seen: list = []

    def record(done: int, ens: Any) -> None:
        seen.append((done, ens.params["weight_hh_l0"].copy()))

    result = train(
        recall(lag=2, alphabet=4), "rnn", seeds=[0, 1], hidden=4, steps=6, eval_every=3, on_evaluation=record
    )
    assert [done for done, _ in seen] == result.eval_steps.tolist() == [0, 3, 6]
    assert not np.array_equal(seen[0][1], seen[1][1])  # the weights of each checkpoint, not a shared view
    np.testing.assert_array_equal(seen[-1][1], result.ensemble.params["weight_hh_l0"])


RETIRING: dict[str, Any] = dict(steps=40, batch=16, eval_every=5, eval_size=64)
"""Settings under which the members succeed at different evaluations (some never), so the stack shrinks."""


def retiring_task_and_args(model: str) -> tuple:
    if model == "lstm":
        return recall(lag=2, alphabet=3), dict(hidden=6, lr=0.1, hidden_keep=0.9, carry_keep=0.9, **RETIRING)
    return recall(lag=3, alphabet=3), dict(hidden=8, lr=0.05, hidden_keep=0.95, **RETIRING)


@pytest.mark.parametrize("model", ["rnn", "gru", "lstm"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_member_retires_at_its_first_success_and_the_others_train_as_before(model, dtype):
    """retire=True: each member's numbers are those of the full stack until it leaves, and after it
    leaves the others' (their Adam moments, data and mask streams moved into the smaller stack) too."""
    task, kwargs = retiring_task_and_args(model)
    seeds = [0, 1, 2, 3, 4]
    full = train(task, model, seeds=seeds, dtype=dtype, **kwargs)
    retired = train(task, model, seeds=seeds, dtype=dtype, retire=True, **kwargs)
    assert retired.success_step == full.success_step and retired.diverged_at == full.diverged_at
    assert None in full.success_step and len(set(full.success_step)) >= 3  # the stack shrinks, some stay to the end
    assert retired.ensemble.seeds == full.ensemble.seeds and retired.ensemble.size == len(seeds)
    for e, s in enumerate(full.success_step):
        if s is None:  # trained to the end beside members that left: every number as in the full stack
            assert_same_run(retired, full, e, e)
            continue
        k = list(full.eval_steps).index(s)
        assert np.array_equal(retired.losses[e, :s], full.losses[e, :s])
        assert np.array_equal(retired.grad_norms[e, :s], full.grad_norms[e, :s])
        assert np.isnan(retired.losses[e, s:]).all() and np.isnan(retired.grad_norms[e, s:]).all()
        assert np.array_equal(retired.scores[e, : k + 1], full.scores[e, : k + 1])
        assert (retired.scores[e, k:] == full.scores[e, k]).all()  # its score at retirement, repeated
        assert retired.final_scores[e] == full.scores[e, k]
        stopped = train(task, model, seeds=[seeds[e]], dtype=dtype, **(kwargs | dict(steps=s)))
        for name, p in retired.ensemble.params.items():  # its parameters as it retired
            assert np.array_equal(p[e], stopped.ensemble.params[name][0]), (e, name)
    for e, seed in enumerate(seeds):  # and each member with retire=True alone
        assert_same_run(retired, train(task, model, seeds=[seed], dtype=dtype, retire=True, **kwargs), e)


def test_a_diverged_member_leaves_at_once_with_the_score_of_its_frozen_parameters():
    kwargs: dict[str, Any] = dict(seeds=[0, 1], hidden=4, steps=20, batch=8, lr=1e200, clip=None, eval_every=5)
    full = train(adding(5), "rnn", eval_size=16, **kwargs)
    retired = train(adding(5), "rnn", eval_size=16, retire=True, **kwargs)
    assert all(d is not None for d in full.diverged_at) and retired.diverged_at == full.diverged_at
    for e in range(2):
        assert_same_run(retired, full, e, e)


def test_the_evaluation_hook_sees_every_member_in_order_while_members_retire():
    task, kwargs = retiring_task_and_args("rnn")
    seen: dict = {False: [], True: []}
    for retire in (False, True):

        def record(done: int, ens: Any, retire: bool = retire) -> None:
            seen[retire].append((done, ens.size, ens.seeds, ens.params["weight_hh_l0"].copy()))

        result = train(task, "rnn", seeds=[0, 1, 2, 3, 4], retire=retire, on_evaluation=record, **kwargs)
    assert [s[:3] for s in seen[True]] == [s[:3] for s in seen[False]]
    assert all(size == 5 for _, size, _, _ in seen[True])
    for (done, _, _, with_retire), (_, _, _, without) in zip(seen[True], seen[False]):
        for e, s in enumerate(result.success_step):
            if s is None or done <= s:  # not yet retired (or retiring here): its parameters of this moment
                assert np.array_equal(with_retire[e], without[e]), (done, e)
            else:  # retired: those it retired with
                assert np.array_equal(with_retire[e], result.ensemble.params["weight_hh_l0"][e]), (done, e)
    np.testing.assert_array_equal(seen[True][-1][3], result.ensemble.params["weight_hh_l0"])


def test_everyone_retired_stops_with_stop_when_done_and_idles_without_it():
    kwargs: dict[str, Any] = dict(seeds=[0, 1, 2], hidden=16, steps=100, lr=0.02, eval_every=25, eval_size=128)
    task = recall(lag=2, alphabet=4)
    calls: list = []
    idle = train(task, "lstm", retire=True, progress=calls.append, **kwargs)
    stopped = train(task, "lstm", retire=True, stop_when_done=True, **kwargs)
    assert idle.successes == 3 and calls == list(range(1, 101))
    last = max(idle.success_step)
    assert stopped.eval_steps[-1] == last and idle.eval_steps.tolist() == [0, 25, 50, 75, 100]
    assert np.array_equal(idle.scores[:, : stopped.scores.shape[1]], stopped.scores)
    assert (idle.scores[:, -1] == stopped.scores[:, -1]).all()


@pytest.mark.parametrize("model", ["rnn", "gru", "lstm"])
@pytest.mark.parametrize("hidden_mask", ["sequence", "step"])
def test_hidden_dropout_trains_each_member_as_alone_and_changes_training(model, hidden_mask):
    task = recall(lag=3, alphabet=3)
    kwargs: dict[str, Any] = dict(hidden_keep=0.8, hidden_mask=hidden_mask, **SMALL)
    together = train(task, model, seeds=[2, 5], **kwargs)
    for e, seed in enumerate([2, 5]):
        assert_same_run(together, train(task, model, seeds=[seed], **kwargs), e)
    plain = train(task, model, seeds=[2, 5], **SMALL)
    assert not np.array_equal(plain.losses, together.losses)
    assert np.array_equal(plain.losses[:, 0] == together.losses[:, 0], [False, False])  # the first update differs
    assert np.array_equal(plain.scores[:, 0], together.scores[:, 0])  # evaluation uses no mask
    other = train(
        task, model, seeds=[2, 5], **(kwargs | dict(hidden_mask="step" if hidden_mask == "sequence" else "sequence"))
    )
    assert not np.array_equal(other.losses, together.losses)


def test_hidden_dropout_draws_from_a_stream_of_its_own():
    """With both dropouts on, the carry masks are what they are alone: each from its own stream."""
    task = recall(lag=3, alphabet=3)
    both = train(task, "lstm", seeds=[2], carry_keep=0.8, hidden_keep=1.0, **SMALL)  # hidden masks all ones
    carry = train(task, "lstm", seeds=[2], carry_keep=0.8, **SMALL)
    assert np.array_equal(both.losses, carry.losses)
    with pytest.raises(ValueError, match=r"hidden_keep must be a keep probability in \(0, 1\], got 1.5"):
        train(task, "gru", hidden_keep=1.5, **SMALL)
    with pytest.raises(ValueError, match="hidden_mask must be one of 'sequence', 'step', got 'unit'"):
        train(task, "gru", hidden_keep=0.5, hidden_mask="unit", **SMALL)


def test_input_bias_sets_the_input_gate_after_chrono_and_forget_bias():
    task = recall(lag=6, alphabet=3)
    H = 5
    i, f = slice(0, H), slice(H, 2 * H)

    def effective(ens):
        return ens.params["bias_ih_l0"] + ens.params["bias_hh_l0"]

    chrono = make_ensemble(task, "lstm", [0, 1], hidden=H, init="chrono")
    zero = make_ensemble(task, "lstm", [0, 1], hidden=H, init="chrono", input_bias=0.0)
    assert np.array_equal(effective(zero)[:, f], effective(chrono)[:, f])  # chrono's b_f, drawn as before
    assert (effective(zero)[:, i] == 0.0).all() and (zero.params["bias_hh_l0"][:, i] == 0.0).all()
    assert np.array_equal(effective(chrono)[:, i], -effective(chrono)[:, f])
    fixed = make_ensemble(task, "lstm", [0], hidden=H, forget_bias=3.0, input_bias=-3.0)
    assert (effective(fixed)[0, f] == 3.0).all() and (effective(fixed)[0, i] == -3.0).all()
    rest = slice(2 * H, 4 * H)  # g and o: as drawn
    plain = make_ensemble(task, "lstm", [0], hidden=H)
    assert np.array_equal(fixed.params["bias_ih_l0"][:, rest], plain.params["bias_ih_l0"][:, rest])
    assert np.array_equal(fixed.params["weight_hh_l0"], plain.params["weight_hh_l0"])
    trained = train(task, "lstm", seeds=[0], input_bias=-2.0, **SMALL)
    same = train(task, "lstm", seeds=[0], input_bias=-2.0, **SMALL)
    assert np.array_equal(trained.losses, same.losses)
    assert not np.array_equal(trained.losses, train(task, "lstm", seeds=[0], **SMALL).losses)
    with pytest.raises(ValueError, match="input_bias sets the LSTM's input gate; model must be 'lstm', got 'gru'"):
        train(task, "gru", input_bias=1.0, **SMALL)
    with pytest.raises(ValueError, match="input_bias must not be NaN, got nan"):
        make_ensemble(task, "lstm", [0], input_bias=float("nan"))


def test_an_update_rule_of_ones_own_is_driven_as_the_labs_own():
    """An optimizer of the Schedule that repeats the lab's Adam gives the lab's numbers, stacks shrinking included."""
    task = recall(lag=2, alphabet=3)
    seen: list[int] = []

    class Logged:
        def __init__(self, ens: Any, rule: Any) -> None:
            self.ens, self.rule = ens, rule

        def select(self, ens: Any, rows: Any) -> "Logged":
            return Logged(ens, self.rule.select(ens, rows))

        def update(self, loss: Any, grads: Any, frozen: Any) -> Any:
            seen.append(self.ens.size)
            return self.rule.update(loss, grads, frozen)

    def own(ens: Any) -> Logged:
        return Logged(ens, lab._GlobalNorm(lab._Adam(ens, lr=0.05), 1.0))

    options: dict[str, Any] = dict(SMALL, steps=60, retire=True, stop_when_done=True)
    mine = train(task, "gru", seeds=[0, 1, 2], optimizer=own, **options)
    theirs = train(task, "gru", seeds=[0, 1, 2], lr=0.05, **options)
    assert np.array_equal(mine.losses, theirs.losses, equal_nan=True)
    assert np.array_equal(mine.scores, theirs.scores, equal_nan=True)
    assert mine.success_step == theirs.success_step and len(set(seen)) > 1  # the stack shrank


def test_a_success_rule_of_ones_own_replaces_the_threshold():
    task = recall(lag=2, alphabet=3)
    never = train(task, "rnn", seeds=[0, 1], succeeds=lambda score: False, **SMALL)
    at_once = train(task, "rnn", seeds=[0, 1], succeeds=lambda score: True, **SMALL)
    assert never.success_step == [None, None] and at_once.success_step == [0, 0]
    with pytest.raises(ValueError, match="succeeds must be a function"):
        Schedule(succeeds=0.5)  # type: ignore[arg-type]

"""rnnmem.inside: where the gradient from the query lands, what the state keeps of the first token, over training."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnnmem import lab, tasks
from rnnmem.experiments import Design
from rnnmem.inside import (
    InsideRun,
    gradient_landing,
    input_gradient_norms,
    shown_member,
    token_memory,
    token_variants,
)

TASK = tasks.recall(lag=3, alphabet=3)  # T = 5, D = 5


# ---------------------------------------------------------------------------- the sequences


def test_token_variants_differ_only_in_the_first_token_and_ask_for_it():
    task = tasks.recall(lag=6, alphabet=5)
    batch = token_variants(task, 3, seed=2)
    base = task.sample(3, seed=2)
    assert batch.inputs.shape == (8, 15, 7)
    tokens = batch.inputs.argmax(axis=2)  # (T, N)
    for g in range(3):
        group = slice(5 * g, 5 * g + 5)
        assert tokens[0, group].tolist() == list(range(5))
        assert batch.targets[group].tolist() == list(range(5))
        # every later step is the base sequence's, one-hot
        assert (batch.inputs[1:, group] == base.inputs[1:, g : g + 1]).all()
    assert (batch.inputs.sum(axis=2) == 1).all()


def test_token_variants_need_a_recall_task():
    with pytest.raises(ValueError, match="task must be a recall task"):
        token_variants(tasks.adding(10), 2)
    with pytest.raises(ValueError, match="n must be"):
        token_variants(TASK, 0)


# ---------------------------------------------------------------------------- the gradient


def _sequence_losses(ens: lab.Ensemble, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(E, N): each sequence's own cross-entropy at the query, from the ensemble's forward pass."""
    out = ens.predict(x)  # (E, N, O)
    out = out - out.max(axis=2, keepdims=True)
    log_p = out - np.log(np.exp(out).sum(axis=2, keepdims=True))
    return -np.take_along_axis(log_p, np.broadcast_to(y, out.shape[:2])[:, :, None], axis=2)[:, :, 0]


@pytest.mark.parametrize("model", ["rnn", "gru", "lstm"])
def test_input_gradient_norms_match_finite_differences(model):
    ens = lab.make_ensemble(TASK, model, seeds=[0, 1], hidden=3)
    x, y = TASK.sample(2, seed=4)
    norms = input_gradient_norms(ens, x, y)
    assert norms.shape == (2, 2, TASK.length)
    eps = 1e-6
    for n in range(2):
        for s in range(TASK.length):
            grad = np.zeros((2, TASK.input_size))
            for d in range(TASK.input_size):
                up, down = x.copy(), x.copy()
                up[s, n, d] += eps
                down[s, n, d] -= eps
                grad[:, d] = (_sequence_losses(ens, up, y)[:, n] - _sequence_losses(ens, down, y)[:, n]) / (2 * eps)
            np.testing.assert_allclose(norms[:, n, s], np.linalg.norm(grad, axis=1), rtol=1e-6, atol=1e-10)


def test_the_input_gradient_is_the_state_gradient_one_step_earlier_when_w_ih_is_w_hh():
    """For the tanh RNN, dl/dx_s = W_ih^T diag(1 - h_s^2) dl/dh_s and dl/dh_{s-1} = W_hh^T diag(1 - h_s^2) dl/dh_s:
    with W_ih = W_hh, the norms at step s are lab.gradient_by_step's at step s - 1, sequence by sequence."""
    task = tasks.recall(lag=6, alphabet=4)  # D = 6
    ens = lab.make_ensemble(task, "rnn", seeds=[0, 3], hidden=task.input_size)
    ens.params["weight_ih_l0"][...] = ens.params["weight_hh_l0"]
    x, y = task.sample(16, seed=5)
    mine = input_gradient_norms(ens, x, y).mean(axis=1)  # (E, T)
    theirs = lab.gradient_by_step(ens, task, n=16, seed=5)  # (E, T): ||dl/dh_s||, averaged the same way
    np.testing.assert_allclose(mine[:, 1:], theirs[:, :-1], rtol=1e-10)
    assert not np.allclose(mine[:, 1:], theirs[:, 1:], rtol=1e-3)  # one step apart, not the same step


def test_gradient_landing_is_the_mean_norm_over_the_mean_norm_at_the_query():
    ens = lab.make_ensemble(TASK, "lstm", seeds=[0, 1, 2], hidden=4, forget_bias=1.0)
    x, y = token_variants(TASK, 2, seed=1)
    norms = input_gradient_norms(ens, x, y)
    share = gradient_landing(ens, x, y)
    np.testing.assert_allclose(share, norms.mean(axis=1) / norms.mean(axis=1)[:, -1:], rtol=1e-12)
    assert (share[:, -1] == 1.0).all()


def test_regression_gradients_use_the_squared_error():
    task = tasks.adding(6)
    ens = lab.make_ensemble(task, "gru", seeds=[0], hidden=3)
    x, y = task.sample(3, seed=0)
    norms = input_gradient_norms(ens, x, y, kind="regression")
    eps = 1e-6
    n, s = 1, 2
    grad = []
    for d in range(2):
        up, down = x.copy(), x.copy()
        up[s, n, d] += eps
        down[s, n, d] -= eps
        loss = [float((ens.predict(v)[0, n, 0] - y[n]) ** 2) for v in (up, down)]
        grad.append((loss[0] - loss[1]) / (2 * eps))
    assert norms[0, n, s] == pytest.approx(math.hypot(*grad), rel=1e-6)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda ens, x, y: input_gradient_norms("lstm", x, y), "ensemble must be an Ensemble"),  # type: ignore[arg-type]  # a bad value on purpose
        (lambda ens, x, y: input_gradient_norms(ens, x[:, :, :2], y), "inputs must have shape"),
        (lambda ens, x, y: input_gradient_norms(ens, x, y[:1]), "targets must have shape"),
        (lambda ens, x, y: input_gradient_norms(ens, x, y + 7), "targets must be class indices"),
        (lambda ens, x, y: input_gradient_norms(ens, x, y, kind="ranking"), "kind must be one of"),
        (lambda ens, x, y: input_gradient_norms(ens, x, y.astype(float), kind="regression"), "output_size must be 1"),
    ],
)
def test_bad_gradient_arguments_are_named(call, message):
    ens = lab.make_ensemble(TASK, "rnn", seeds=[0], hidden=2)
    x, y = TASK.sample(2, seed=0)
    with pytest.raises(ValueError, match=message):
        call(ens, x, y)


# ---------------------------------------------------------------------------- the memory


def test_memory_is_what_its_definition_says_on_a_hand_built_one_unit_rnn():
    """One tanh unit, h_t = tanh(w[x_t] + u h_{t-1}), worked with math.tanh: M_t = sqrt(S_t / S_1)."""
    task = tasks.recall(lag=4, alphabet=3)  # tokens 0-2, blank 3, query 4
    w = np.array([0.9, -0.4, 0.2, 0.0, 0.5])
    u = 0.7
    ens = lab.make_ensemble(task, "rnn", seeds=[0], hidden=1)
    ens.params["weight_ih_l0"][0] = w[None, :]
    ens.params["weight_hh_l0"][0] = u
    ens.params["bias_ih_l0"][0] = 0.0
    ens.params["bias_hh_l0"][0] = 0.0
    x, _ = token_variants(task, 2, seed=3)
    symbols = x.argmax(axis=2)  # (T, 6)
    states = np.zeros((task.length, 6))
    for n in range(6):
        h = 0.0
        for t in range(task.length):
            h = math.tanh(w[symbols[t, n]] + u * h)
            states[t, n] = h
    groups = states.reshape(task.length, 2, 3)
    spread = ((groups - groups.mean(axis=2, keepdims=True)) ** 2).sum(axis=(1, 2))
    expected = np.sqrt(spread / spread[0])
    got = token_memory(ens, x, tokens=3)
    np.testing.assert_allclose(got[0], expected, rtol=1e-12)
    assert got[0, 0] == 1.0
    assert np.all(np.diff(got[0]) < 0)  # |u| < 1 and tanh' <= 1: the imprint only shrinks


def test_memory_is_zero_before_the_token_one_at_it_and_matches_the_unshared_computation():
    task = tasks.recall(lag=6, alphabet=4)
    base = task.sample(3, seed=1)
    p = 3  # vary the token at step 3 instead of step 1
    x = np.repeat(base.inputs[:, :, None, :], 4, axis=2)
    x[p - 1] = 0.0
    x[p - 1, :, np.arange(4), np.arange(4)] = 1.0
    x = x.reshape(task.length, 12, task.input_size)
    for model in ("rnn", "gru", "lstm"):
        ens = lab.make_ensemble(task, model, seeds=[0, 1], hidden=5)
        got = token_memory(ens, x, tokens=4, position=p)
        assert (got[:, : p - 1] == 0.0).all()
        assert (got[:, p - 1] == 1.0).all()
        for e in range(2):  # every state computed for every sequence, no shared prefix
            outputs, _ = ens.member(e).forward(x)
            h = outputs.reshape(task.length, 3, 4, -1)
            spread = ((h - h.mean(axis=2, keepdims=True)) ** 2).sum(axis=(1, 2, 3))
            np.testing.assert_allclose(got[e, p - 1 :], np.sqrt(spread[p - 1 :] / spread[p - 1]), rtol=1e-9)
            assert np.all(spread[: p - 1] < 1e-28)  # the same inputs: the same states, up to rounding


def test_a_model_that_forgets_at_once_keeps_nothing_after_the_token():
    """W_hh = 0: h_t depends on x_t alone, and after step 1 the versions of a group read the same inputs."""
    ens = lab.make_ensemble(TASK, "rnn", seeds=[0], hidden=4)
    ens.params["weight_hh_l0"][...] = 0.0
    x, _ = token_variants(TASK, 3, seed=0)
    got = token_memory(ens, x, tokens=3)
    assert got[0, 0] == 1.0
    assert np.all(np.abs(got[0, 1:]) < 1e-12)


def test_a_model_blind_to_the_token_has_no_memory_to_measure():
    ens = lab.make_ensemble(TASK, "lstm", seeds=[0], hidden=3)
    ens.params["weight_ih_l0"][0, :, :3] = 0.0  # the three tokens' columns: every token writes the same
    x, _ = token_variants(TASK, 2, seed=0)
    assert np.isnan(token_memory(ens, x, tokens=3)).all()


def test_bad_memory_arguments_are_named():
    ens = lab.make_ensemble(TASK, "rnn", seeds=[0], hidden=2)
    x, _ = token_variants(TASK, 2, seed=0)
    with pytest.raises(ValueError, match="tokens must be a whole number >= 2 that divides the 6 sequences"):
        token_memory(ens, x, tokens=4)
    with pytest.raises(ValueError, match="position must be a step from 1 to 5, got 6"):
        token_memory(ens, x, tokens=3, position=6)
    with pytest.raises(ValueError, match="differ only at step 2"):
        token_memory(ens, x, tokens=3, position=2)
    other = x.copy()
    other[2, 1] = np.roll(other[2, 1], 1)  # one sequence of the first group differs at step 3
    with pytest.raises(ValueError, match="differ only at step 1"):
        token_memory(ens, other, tokens=3)


# ---------------------------------------------------------------------------- over training


def test_the_shown_member_is_the_lowest_that_succeeded_else_the_first():
    assert shown_member([False, False, True, True]) == 2
    assert shown_member([True, False]) == 0
    assert shown_member([False, False, False]) == 0
    with pytest.raises(ValueError, match="succeeded must hold one boolean per member"):
        shown_member([])


def test_a_watched_run_is_the_lab_run_measured_at_every_checkpoint():
    design = Design(hidden=8, steps=75, eval_every=25, eval_size=64, threshold=0.5)
    task = tasks.recall(lag=2, alphabet=3)
    run = InsideRun("lstm:1", lag=2, seeds=(0, 1, 2), design=design, alphabet=3, sequences=2, seed=3)
    got = run.execute()
    model = lab.Model("lstm", seeds=[0, 1, 2], hidden=design.hidden, forget_bias=1.0, dtype=np.float32)
    trained = lab.train(task, model, design.schedule())
    k = shown_member(trained.succeeded)
    assert got.seed == run.seeds[k]
    assert got.succeeded == bool(trained.succeeded[k])
    assert got.success_step == (trained.success_step[k] if got.succeeded else None)
    assert got.eval_steps.tolist() == trained.eval_steps.tolist() == [0, 25, 50, 75]
    np.testing.assert_array_equal(got.scores, trained.scores[k])
    # the last checkpoint is the trained member, measured in float64
    member = lab.make_ensemble(task, "lstm", [got.seed], hidden=8, forget_bias=1.0)
    for name, p in trained.ensemble.params.items():
        member.params[name][...] = p[k : k + 1]
    x, y = token_variants(task, 2, seed=3)
    np.testing.assert_allclose(got.memory[-1], token_memory(member, x, 3)[0], rtol=1e-12)
    np.testing.assert_allclose(got.landing[-1], gradient_landing(member, x, y)[0], rtol=1e-12)
    # and the first is the untrained member
    fresh = lab.make_ensemble(task, "lstm", [got.seed], hidden=8, forget_bias=1.0, dtype=np.float32)
    fresh64 = lab.make_ensemble(task, "lstm", [got.seed], hidden=8, forget_bias=1.0)
    for name, p in fresh.params.items():
        fresh64.params[name][...] = p
    np.testing.assert_allclose(got.memory[0], token_memory(fresh64, x, 3)[0], rtol=1e-12)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(model="lstm:x"), "model must be a model"),
        (dict(seeds=(1, 0)), "seeds must be distinct and in increasing order"),
        (dict(seeds=()), "seeds must be a non-empty list"),
        (dict(lag=0), "lag must be"),
        (dict(dtype="float16"), "dtype must be float32 or float64"),
        (dict(sequences=0), "sequences must be"),
        (dict(design="fast"), "design must be a Design"),
    ],
)
def test_bad_runs_are_named(kwargs, message):
    args = dict(model="rnn", lag=2, seeds=(0, 1)) | kwargs
    with pytest.raises(ValueError, match=message):
        InsideRun(**args)

"""Checkpoint diagnostics: gate biases, the recurrent matrix, and the gradients that reach the states."""

from typing import Any

import numpy as np
import pytest

from rnnmem import diagnostics
from rnnmem.ensemble import Ensemble
from rnnmem.lab import Model, Schedule, make_ensemble, train
from rnnmem.lstm import step as lstm_step
from rnnmem.tasks import adding, recall


def per_sequence_losses(ens, e, x, y, state):
    """Member e's cross-entropy per sequence, run from `state` (after step 1) over the steps 2..T."""
    single = ens.member(e)
    out, _ = single.forward(x[1:], state)
    logits = out[-1] @ ens.params["readout_weight"][e].T + ens.params["readout_bias"][e]
    log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return -log_p[np.arange(len(y)), y]


def first_states(ens, e, x):
    """Member e's state after step 1: h_1 (and c_1 and o_1 for the LSTM)."""
    single = ens.member(e)
    B = x.shape[1]
    if ens.model != "lstm":
        out, _ = single.forward(x[:1])
        return out[0], None, None
    s = lstm_step(x[0], np.zeros((B, ens.hidden_size)), np.zeros((B, ens.hidden_size)), *single.parameters().values())
    return s.h, s.c, s.o


@pytest.mark.parametrize("model", ["rnn", "gru", "lstm"])
def test_the_gradient_at_step_one_is_each_sequences_own_by_finite_differences(model):
    """grad_h_first (and the LSTM's grad_c_first): central differences of each sequence's loss."""
    task = recall(lag=4, alphabet=3)
    ens = make_ensemble(task, model, [0, 1], hidden=5)
    x, y = task.sample(6, seed=3)
    d = diagnostics.checkpoint(ens, task, x, y)
    eps = 1e-6
    for e in range(2):
        h1, c1, o1 = first_states(ens, e, x)
        grad_h = np.zeros_like(h1)
        grad_c = np.zeros_like(h1)
        for j in range(ens.hidden_size):
            step = np.zeros_like(h1)
            step[:, j] = eps
            if model == "lstm":  # h at step 1 with c_1 held; c_1 a node, h_1 = o_1 tanh(c_1) recomputed
                up = per_sequence_losses(ens, e, x, y, (h1 + step, c1))
                down = per_sequence_losses(ens, e, x, y, (h1 - step, c1))
                c_up = per_sequence_losses(ens, e, x, y, (o1 * np.tanh(c1 + step), c1 + step))
                c_down = per_sequence_losses(ens, e, x, y, (o1 * np.tanh(c1 - step), c1 - step))
                grad_c[:, j] = (c_up - c_down) / (2 * eps)
            else:
                up = per_sequence_losses(ens, e, x, y, h1 + step)
                down = per_sequence_losses(ens, e, x, y, h1 - step)
            grad_h[:, j] = (up - down) / (2 * eps)
        assert d["grad_h_first"][e] == pytest.approx(np.linalg.norm(grad_h, axis=1).mean(), rel=1e-6)
        if model == "lstm":
            assert d["grad_c_first"][e] == pytest.approx(np.linalg.norm(grad_c, axis=1).mean(), rel=1e-6)


def test_the_gradient_at_the_query_comes_from_the_readout():
    task = recall(lag=3, alphabet=4)
    ens = make_ensemble(task, "gru", [2, 3], hidden=6)
    x, y = task.sample(10, seed=1)
    d = diagnostics.checkpoint(ens, task, x, y)
    logits = ens.predict(x)
    h_last = ens.forward(x)
    for e in range(2):
        p = np.exp(logits[e] - logits[e].max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        p[np.arange(10), y] -= 1.0  # d loss_n / d logits, one sequence at a time
        expected = np.linalg.norm(p @ ens.params["readout_weight"][e], axis=1).mean()
        assert d["grad_h_last"][e] == pytest.approx(expected, rel=1e-12)
        log_p = np.log(np.exp(logits[e]) / np.exp(logits[e]).sum(axis=1, keepdims=True))
        assert d["loss"][e] == pytest.approx(-log_p[np.arange(10), y].mean(), rel=1e-12)
    assert h_last.shape == (2, 10, 6)


def test_gate_biases_and_the_recurrent_matrix():
    task = recall(lag=6, alphabet=3)
    H = 7
    lstm = make_ensemble(task, "lstm", [0, 1], hidden=H, forget_bias=[2.0, None], input_bias=-3.0)
    d = diagnostics.checkpoint(lstm, task, *task.sample(8, seed=0))
    assert sorted(d) == [
        "forget_bias_median",
        "grad_c_first",
        "grad_h_first",
        "grad_h_last",
        "input_bias_median",
        "loss",
    ]
    drawn = lstm.params["bias_ih_l0"][1, H : 2 * H] + lstm.params["bias_hh_l0"][1, H : 2 * H]
    assert d["forget_bias_median"].tolist() == [2.0, float(np.sort(drawn)[H // 2])]
    assert d["input_bias_median"].tolist() == [-3.0, -3.0]
    chrono = make_ensemble(task, "lstm", [0], hidden=H, init="chrono")
    c = diagnostics.checkpoint(chrono, task, *task.sample(8, seed=0))
    assert c["input_bias_median"] == pytest.approx(-c["forget_bias_median"])
    gru = make_ensemble(task, "gru", [4], hidden=H)
    g = diagnostics.checkpoint(gru, task, *task.sample(8, seed=0))
    z = gru.params["bias_ih_l0"][0, H : 2 * H] + gru.params["bias_hh_l0"][0, H : 2 * H]
    assert sorted(g) == ["grad_h_first", "grad_h_last", "loss", "update_bias_median"]
    assert g["update_bias_median"][0] == np.median(z)
    rnn = make_ensemble(task, "rnn", [5, 6], hidden=H)
    rnn.params["weight_hh_l0"][1] = np.diag(np.arange(1.0, H + 1.0)) * 0.1  # rho = ||W||_2 = 0.7
    rnn.params["weight_hh_l0"][1, 0, -1] = 3.0  # now ||W||_2 > rho, and rho stays 0.7 (triangular)
    r = diagnostics.checkpoint(rnn, task, *task.sample(8, seed=0))
    W = rnn.params["weight_hh_l0"][0]
    assert r["spectral_radius"][0] == pytest.approx(np.abs(np.linalg.eigvals(W)).max(), rel=1e-12)
    assert r["spectral_norm"][0] == pytest.approx(np.linalg.norm(W, 2), rel=1e-12)
    assert r["spectral_radius"][1] == pytest.approx(0.7, rel=1e-12) and r["spectral_norm"][1] > 3.0
    assert (r["spectral_radius"] <= r["spectral_norm"] + 1e-12).all()


def test_a_checkpoint_changes_nothing_and_works_in_float32_and_regression():
    task = adding(8)
    ens = make_ensemble(task, "lstm", [0, 1, 2], hidden=4, dtype=np.float32)
    before = {k: v.copy() for k, v in ens.params.items()}
    d = diagnostics.checkpoint(ens, task, *task.sample(16, seed=0))
    assert all(np.array_equal(before[k], v) for k, v in ens.params.items())
    assert all(v.shape == (3,) and v.dtype == np.float64 and np.isfinite(v).all() for v in d.values())
    again = diagnostics.checkpoint(ens, task, *task.sample(16, seed=0))
    assert all(np.array_equal(d[k], again[k]) for k in d)


def test_checkpoints_from_the_lab_hook():
    task = recall(lag=3, alphabet=3)
    held_out = task.sample(64, seed=11)
    seen: list = []

    def record(done: int, ens: Any) -> None:
        seen.append((done, diagnostics.checkpoint(ens, task, *held_out)))

    result = train(
        task,
        Model("lstm", seeds=[0, 1], hidden=6),
        Schedule(steps=20, batch=8, eval_every=10, eval_size=32),
        on_evaluation=record,
    )
    assert [done for done, _ in seen] == result.eval_steps.tolist()
    assert isinstance(result.ensemble, Ensemble)
    final = diagnostics.checkpoint(result.ensemble, task, *held_out)
    assert all(np.array_equal(seen[-1][1][k], final[k]) for k in final)
    assert not np.array_equal(seen[0][1]["forget_bias_median"], final["forget_bias_median"])  # training moved them


def test_bad_arguments_are_named():
    task = recall(lag=3, alphabet=3)
    ens = make_ensemble(task, "rnn", [0], hidden=4)
    x, y = task.sample(4, seed=0)
    with pytest.raises(ValueError, match="ens must be an Ensemble"):
        diagnostics.checkpoint("lstm", task, x, y)  # type: ignore[arg-type]  # a bad value on purpose
    with pytest.raises(ValueError, match="task must be a Task"):
        diagnostics.checkpoint(ens, "recall", x, y)  # type: ignore[arg-type]  # a bad value on purpose
    with pytest.raises(ValueError, match=r"inputs must have shape \(5, N, 5\) .*got shape \(4, 4, 5\)"):
        diagnostics.checkpoint(ens, task, x[1:], y)
    with pytest.raises(ValueError, match=r"ens must fit the task: input and output sizes \(6, 4\), got \(5, 3\)"):
        diagnostics.checkpoint(ens, recall(lag=3, alphabet=4), x, y)
    with pytest.raises(ValueError, match=r"targets must have shape \(4,\)"):
        diagnostics.checkpoint(ens, task, x, y[:2])

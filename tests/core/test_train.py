"""The trainer: cross-entropy and its gradient, Adam by hand, clipping inside the loop, batches."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnnmem import train
from rnnmem.train import Adam, History, fit, minibatches, pad_batch, softmax_cross_entropy

# ---------------------------------------------------------------- cross-entropy


def test_cross_entropy_of_uniform_logits_is_log_of_the_vocabulary():
    loss, grad = softmax_cross_entropy(np.zeros((3, 7)), [0, 3, 6])
    assert loss == pytest.approx(math.log(7), rel=1e-15)
    assert grad.sum(axis=1) == pytest.approx(np.zeros(3), abs=1e-15)


def test_cross_entropy_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((5, 4)) * 3
    targets = np.array([0, 3, 1, 1, 2])
    mask = np.array([True, False, True, True, True])
    _, grad = softmax_cross_entropy(logits, targets, mask)
    eps = 1e-6
    numeric = np.zeros_like(logits)
    for idx in np.ndindex(*logits.shape):
        up, down = logits.copy(), logits.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (softmax_cross_entropy(up, targets, mask)[0] - softmax_cross_entropy(down, targets, mask)[0]) / (
            2 * eps
        )
    assert np.max(np.abs(grad - numeric)) < 1e-9
    assert not grad[1].any()  # a masked row has no gradient


def test_cross_entropy_survives_huge_logits():
    loss, grad = softmax_cross_entropy(np.array([[1000.0, 0.0]]), [1])
    assert loss == pytest.approx(1000.0) and np.isfinite(grad).all()


# ---------------------------------------------------------------- Adam


def test_adam_two_steps_against_a_hand_computation():
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-8
    w = {"w": np.array([1.0])}
    opt = Adam(w, lr=lr, beta1=b1, beta2=b2, eps=eps)
    # step 1, g = 0.5: m = 0.05, v = 0.00025, bias-corrected 0.5 and 0.25
    opt.step({"w": np.array([0.5])})
    step1 = lr * (0.05 / 0.1) / (math.sqrt(0.00025 / 0.001) + eps)
    assert w["w"][0] == pytest.approx(1.0 - step1, rel=1e-14)
    assert step1 == pytest.approx(0.1, rel=1e-7)
    # step 2, g = -0.2: m = 0.9*0.05 - 0.1*0.2 = 0.025, v = 0.999*0.00025 + 0.001*0.04 = 0.00028975
    opt.step({"w": np.array([-0.2])})
    m_hat = 0.025 / (1 - 0.9**2)
    v_hat = 0.00028975 / (1 - 0.999**2)
    step2 = lr * m_hat / (math.sqrt(v_hat) + eps)
    assert w["w"][0] == pytest.approx(1.0 - step1 - step2, rel=1e-13)  # m is still positive
    assert opt.t == 2 and opt.m["w"][0] == pytest.approx(0.025) and opt.v["w"][0] == pytest.approx(0.00028975)


def test_adam_updates_the_live_arrays_in_place():
    arr = np.ones(3)
    Adam({"a": arr}, lr=0.5).step({"a": np.ones(3)})
    assert arr == pytest.approx(np.full(3, 0.5), rel=1e-7)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"lr": 0.0}, "lr must be a positive finite number, got 0.0"),
        ({"beta1": 1.0}, r"beta1 must be in \[0, 1\), got 1.0"),
        ({"beta2": -0.1}, r"beta2 must be in \[0, 1\), got -0.1"),
        ({"eps": -1.0}, "eps must be a positive finite number, got -1.0"),
    ],
)
def test_adam_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Adam({"w": np.zeros(2)}, **kwargs)


def test_adam_bad_params_and_grads():
    with pytest.raises(ValueError, match="params must be a non-empty dict"):
        Adam({})
    with pytest.raises(ValueError, match=r"params\['w'\] must be a float numpy array"):
        Adam({"w": [1.0]})  # type: ignore[dict-item]  # a bad value on purpose
    opt = Adam({"w": np.zeros(2)})
    with pytest.raises(ValueError, match="grads must be a dict with the keys of params"):
        opt.step({"v": np.zeros(2)})
    with pytest.raises(ValueError, match=r"grads\['w'\] must have the shape of params\['w'\], \(2,\), got \(3,\)"):
        opt.step({"w": np.zeros(3)})


# ---------------------------------------------------------------- batches


def test_pad_batch_pads_at_the_end_time_first():
    ids, mask = pad_batch([[4, 5], [6, 7, 8], [9]], pad_id=1)
    assert ids.shape == (3, 3) and ids.dtype == np.int64
    assert ids[:, 0].tolist() == [4, 5, 1] and mask[:, 2].tolist() == [True, False, False]


def test_minibatches_visit_every_item_once_per_epoch_and_follow_the_seed():
    batches = minibatches(10, 3, seed=5)
    epoch = [next(batches) for _ in range(4)]  # 3 + 3 + 3 + 1
    assert sorted(np.concatenate(epoch).tolist()) == list(range(10))
    again = minibatches(10, 3, seed=5)
    assert all(np.array_equal(a, next(again)) for a in epoch)
    other = minibatches(10, 3, seed=6)
    assert not all(np.array_equal(a, next(other)) for a in epoch)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: pad_batch([]), "sequences must be a non-empty list"),
        (lambda: pad_batch([[1], []]), r"sequences\[1\] must be a non-empty list of whole numbers >= 0"),
        (lambda: pad_batch([[1.5]]), r"sequences\[0\] must be a non-empty list of whole numbers >= 0"),  # type: ignore[list-item]  # a bad value on purpose
        (lambda: pad_batch([[1]], pad_id=-1), "pad_id must be a whole number >= 0, got -1"),
        (lambda: next(minibatches(0, 2)), "n_items must be a whole number >= 1, got 0"),
        (lambda: next(minibatches(3, 0)), "batch_size must be a whole number >= 1, got 0"),
        (lambda: softmax_cross_entropy(np.zeros(3), [0]), r"logits must have shape \(N, V\)"),
        (
            lambda: softmax_cross_entropy(np.zeros((2, 3)), [0, 1], mask=[1, 1]),
            "mask must be an array of N = 2 booleans",
        ),
        (
            lambda: softmax_cross_entropy(np.zeros((1, 3)), [0], mask=np.array([False])),
            "mask must keep at least one row",
        ),
        (lambda: softmax_cross_entropy(np.array([[np.nan, 0.0]]), [0]), "logits must not be NaN"),
    ],
)
def test_bad_batches_and_losses_name_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---------------------------------------------------------------- the loop


def _scripted(grads_per_step):
    """A 'model' whose gradient at step k is grads_per_step[k], whatever the batch."""
    w = {"w": np.array([0.0])}
    calls = iter(grads_per_step)

    def loss_and_grads(batch):
        return 1.0, {"w": np.array([next(calls)])}

    return w, loss_and_grads


def _adam_alone(grads, lr):
    w = {"w": np.array([0.0])}
    opt = Adam(w, lr=lr)
    for g in grads:
        opt.step({"w": np.array([g])})
    return float(w["w"][0])


def test_fit_clips_by_global_norm_before_adam_sees_the_gradient():
    w, loss_and_grads = _scripted([10.0, 0.5])
    history = fit(w, loss_and_grads, [0], steps=2, batch_size=1, lr=0.1, max_norm=1.0)
    assert history.grad_norms == [10.0, 0.5] and history.clipped == 1
    assert float(w["w"][0]) == pytest.approx(_adam_alone([1.0, 0.5], 0.1), rel=1e-12)
    assert abs(_adam_alone([10.0, 0.5], 0.1) - _adam_alone([1.0, 0.5], 0.1)) > 1e-3  # the check can fail


def test_fit_without_clipping_passes_the_gradient_through():
    w, loss_and_grads = _scripted([10.0, 0.5])
    history = fit(w, loss_and_grads, [0], steps=2, batch_size=1, lr=0.1, max_norm=None)
    assert history.clipped == 0
    assert float(w["w"][0]) == pytest.approx(_adam_alone([10.0, 0.5], 0.1), rel=1e-12)


def _least_squares(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal(40)
    w = {"w": np.zeros(3)}

    def loss_and_grads(batch):
        idx = np.array(batch)
        err = X[idx] @ w["w"] - y[idx]
        return float(np.mean(err**2) / 2), {"w": X[idx].T @ err / len(idx)}

    return w, loss_and_grads, list(range(40))


def test_fit_is_deterministic_for_a_seed_and_decreases_the_loss():
    w1, f1, data = _least_squares(0)
    h1 = fit(w1, f1, data, steps=150, batch_size=8, lr=0.05, seed=7)
    w2, f2, _ = _least_squares(0)
    h2 = fit(w2, f2, data, steps=150, batch_size=8, lr=0.05, seed=7)
    assert h1.losses == h2.losses and np.array_equal(w1["w"], w2["w"])
    w3, f3, _ = _least_squares(0)
    h3 = fit(w3, f3, data, steps=150, batch_size=8, lr=0.05, seed=8)
    assert h3.losses != h1.losses
    assert np.mean(h1.losses[-10:]) < 0.05 * np.mean(h1.losses[:10])
    assert w1["w"] == pytest.approx([1.0, -2.0, 0.5], abs=0.1)
    assert isinstance(h1, History) and h1.steps == 150 and all(isinstance(x, float) for x in h1.losses)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"steps": 0}, "steps must be a whole number >= 1, got 0"),
        ({"batch_size": -2}, "batch_size must be a whole number >= 1, got -2"),
        ({"max_norm": 0.0}, "max_norm must be a positive finite number, got 0.0"),
        ({"seed": "a"}, "seed must be a whole number >= 0, None or a numpy.random.Generator, got 'a'"),
        ({"lr": -1.0}, "lr must be a positive finite number, got -1.0"),
    ],
)
def test_fit_bad_settings_name_the_argument(kwargs, message):
    w, f, data = _least_squares(0)
    with pytest.raises(ValueError, match=message):
        fit(w, f, data, **kwargs)


def test_fit_bad_model_or_data():
    w, f, data = _least_squares(0)
    with pytest.raises(ValueError, match="loss_and_grads must be a function"):
        fit(w, "not a function", data)  # type: ignore[arg-type]  # a bad value on purpose
    with pytest.raises(ValueError, match="data must be a non-empty list of training items"):
        fit(w, f, [])
    with pytest.raises(ValueError, match="loss_and_grads returned a loss that is not finite, nan, at step 0"):
        fit(w, lambda batch: (float("nan"), {"w": np.zeros(3)}), data)


def test_module_lists_its_public_names():
    for name in train.__all__:
        assert hasattr(train, name)

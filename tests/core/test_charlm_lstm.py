"""The LSTM character model of rnnmem.charlm, its run, and connectivity by distance."""

from __future__ import annotations

import numpy as np
import pytest

from rnnmem import charlm
from rnnmem.gradcheck import gradcheck_loss
from rnnmem.lstm import LSTM


class _Loss:
    """CharLSTM seen as gradcheck_loss sees an ensemble: params, dtype and loss_and_grads(x, targets, kind)."""

    def __init__(self, model: charlm.CharLSTM, state0, mask) -> None:
        self.model, self.state0, self.mask = model, state0, mask
        self.params, self.dtype = model.params, model.dtype

    def loss_and_grads(self, x, targets, kind):
        losses, grads, _ = self.model.loss_and_grads(x, targets, self.state0, mask=self.mask)
        return losses, {k: grads[k] for k in self.params}


def _batch(V: int = 11, T: int = 6, E: int = 2, B: int = 3, H: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    state = (rng.uniform(-0.5, 0.5, (E, B, H)), rng.uniform(-0.5, 0.5, (E, B, H)))
    return rng.integers(0, V, (T, E, B)), rng.integers(0, V, (T, E, B)), state


@pytest.mark.parametrize("masked", [False, True])
def test_every_parameter_gradient_passes_gradcheck_in_float64(masked):
    model = charlm.CharLSTM(11, 4, seeds=[0, 1])
    x, y, state = _batch()
    mask = np.random.default_rng(2).random((6, 2, 3)) < 0.5 if masked else None
    if mask is not None:
        mask[0] = True
    result = gradcheck_loss(_Loss(model, state, mask), x, y, "lm")
    assert [name for name, _ in result.rows] == list(model.params)
    assert result.worst < 1e-6, result.rows


def test_the_state_and_input_gradients_are_those_of_the_members_own_LSTM():
    model = charlm.CharLSTM(11, 4, seeds=[0, 1])
    x, y, state = _batch()
    _, grads, _ = model.loss_and_grads(x, y, state, input_grads=True)
    eps = 1e-6
    for which, key in ((0, "h0"), (1, "c0")):
        for idx in [(0, 1, 2), (1, 0, 3)]:
            up = [s.copy() for s in state]
            down = [s.copy() for s in state]
            up[which][idx] += eps
            down[which][idx] -= eps
            diff = model.loss_and_grads(x, y, tuple(up))[0] - model.loss_and_grads(x, y, tuple(down))[0]
            assert diff[idx[0]] / (2 * eps) == pytest.approx(grads[key][idx], abs=1e-8)
    layer = model.member(1)
    W_hy = model.params["readout_weight"][1]
    out, _ = layer.forward(np.eye(11)[x[:, 1]], (state[0][1], state[1][1]))
    z = out @ W_hy.T + model.params["readout_bias"][1]
    p = np.exp(z - z.max(axis=2, keepdims=True))
    p /= p.sum(axis=2, keepdims=True)
    dz = (p - np.eye(11)[y[:, 1]]) / y[:, 1].size
    ref = layer.backward(dz @ W_hy)
    np.testing.assert_allclose(grads["x"][:, 1], ref["x"], rtol=0, atol=1e-14)


def test_each_member_draws_and_computes_what_rnnmem_LSTM_does():
    model = charlm.CharLSTM(charlm.VOCAB_SIZE, 6, seeds=[3, 5])
    for e, seed in enumerate((3, 5)):
        ref = LSTM(charlm.VOCAB_SIZE, 6, seed=np.random.default_rng(seed))
        for name in ("W_ih", "W_hh", "b_ih", "b_hh"):
            np.testing.assert_array_equal(getattr(model.member(e), name), getattr(ref, name))
    ids = charlm.encode("for x in y:")
    out, _ = model.member(1).forward(np.eye(charlm.VOCAB_SIZE)[ids][:, None, :])
    hs, _ = model.forward(ids[:, None])
    np.testing.assert_allclose(hs[:, 1, 0], out[:, 0], rtol=0, atol=1e-13)


def test_members_never_mix():
    together = charlm.CharLSTM(11, 5, seeds=[4, 5, 6])
    alone = charlm.CharLSTM(11, 5, seeds=[5])
    x, y, _ = _batch(E=3)
    lt, gt, _ = together.loss_and_grads(x, y)
    la, ga, _ = alone.loss_and_grads(x[:, 1:2], y[:, 1:2])
    assert lt[1] == pytest.approx(la[0], abs=1e-13)
    np.testing.assert_allclose(gt["weight_hh_l0"][1], ga["weight_hh_l0"][0], rtol=0, atol=1e-13)


def test_nats_is_the_mean_loss_of_the_streams_read_whole():
    model = charlm.CharLSTM(charlm.VOCAB_SIZE, 6, seeds=[0, 1])
    ids = charlm.encode("def f(x):\n    return x + 1\n" * 3)
    x, y, mask = charlm.split_streams(ids, 3)
    losses, _, _ = model.loss_and_grads(x, y, mask=mask)
    np.testing.assert_allclose(model.nats(ids, streams=3, size=7), losses, rtol=1e-12)


def test_training_learns_a_repeated_text_and_sampling_continues_it():
    model = charlm.CharLSTM(charlm.VOCAB_SIZE, 16, seeds=[0])
    losses = charlm.train(model, charlm.encode("abcabcabc" * 40)[None], window=8, updates=80, lr=0.05)
    assert losses[-1, 0] < 0.1 < losses[0, 0]
    assert charlm.sample(model, "ab", 6, temperature=0.5) == "cabcab"


def test_a_run_of_the_lstm_is_another_run_and_gives_back_lstm_checkpoints():
    recipe = charlm.Recipe(hidden=8, window=16, batch=2, updates=3, checkpoints=(0, 3), model="lstm")
    run = charlm.TextRun(recipe, ("textwrap",), ("colorsys",))
    assert run != charlm.TextRun(
        charlm.Recipe(hidden=8, window=16, batch=2, updates=3, checkpoints=(0, 3)), ("textwrap",), ("colorsys",)
    )
    result = run.execute()
    assert result.kind == "lstm"
    model = result.model(3)
    assert isinstance(model, charlm.CharLSTM)
    valid = charlm.encode(charlm.stdlib_corpus(("textwrap",), ("colorsys",)).valid)
    assert float(model.nats(valid, 32)[0]) == pytest.approx(result.valid_nats[-1], abs=1e-12)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: charlm.Recipe(model="gru"), "model"),
        (lambda: charlm.CharLSTM(11, 4, seeds=[]), "seeds"),
        (lambda: charlm.CharLSTM(11, 4, seeds=[0]).loss_and_grads([[1]], [[2]], truncation=4), "truncation"),
        (lambda: charlm.CharLSTM(11, 4, seeds=[0]).loss_and_grads([[1]], [[2]], (np.zeros(4),)), "state0"),
        (lambda: charlm.CharLSTM.from_params({"w": 1}), "params"),
        (
            lambda: charlm.connectivity(
                "rnn",  # type: ignore[arg-type]
                charlm.encode("abc" * 50),
                3,
                2,
            ),
            "model",
        ),
        (lambda: charlm.connectivity(charlm.CharRNN(97, 4, seeds=[0]), charlm.encode("abc" * 50), 0, 2), "max_lag"),
        (lambda: charlm.connectivity(charlm.CharRNN(97, 4, seeds=[0]), charlm.encode("abc" * 5), 30, 2), "ids"),
        (
            lambda: charlm.connectivity(charlm.CharRNN(97, 4, seeds=[0]), charlm.encode("abc" * 50), 3, 2, warmup=-1),
            "warmup",
        ),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_connectivity_is_the_norm_of_each_positions_own_input_gradient(kind):
    """Batched positions give what each position's loss, differentiated alone, gives."""
    model = charlm.MODELS[kind](charlm.VOCAB_SIZE, 6, seeds=[0, 1])
    ids = charlm.encode("def f(x):\n    return [x, x + 1]\n" * 6)
    K, P, warm = 7, 5, 4
    conn = charlm.connectivity(model, ids, K, P, warmup=warm)
    L = warm + K + 1
    ends = np.linspace(L - 1, ids.size - 2, P).round().astype(int)
    expected = np.zeros((2, K + 1))
    for t in ends:
        x, y = ids[t - L + 1 : t + 1, None], ids[t - L + 2 : t + 2, None]
        mask = np.zeros((L, 1), dtype=bool)
        mask[-1] = True
        _, g, _ = model.loss_and_grads(x, y, mask=mask, input_grads=True)
        for k in range(K + 1):
            expected[:, k] += np.linalg.norm(g["x"][L - 1 - k, :, 0], axis=1) / P
    np.testing.assert_allclose(conn, expected, rtol=1e-10)
    assert (conn > 0).all()


def test_nats_at_a_temperature_is_the_loss_of_the_tempered_readout():
    model = charlm.CharLSTM(charlm.VOCAB_SIZE, 6, seeds=[0])
    ids = charlm.encode("for x in y:\n    pass\n" * 3)
    hot = charlm.CharLSTM.from_params(model.params)
    hot.params["readout_weight"] /= 2.0
    hot.params["readout_bias"] /= 2.0
    np.testing.assert_allclose(model.nats(ids, 2, temperature=2.0), hot.nats(ids, 2), rtol=1e-12)
    with pytest.raises(ValueError, match="temperature"):
        model.nats(ids, 2, temperature=0.0)

"""The models' single-step functions and sequence classes without PyTorch: checks, dtypes, agreement."""

import numpy as np
import pytest

from rnnmem import gru, lstm, rnn

GATES = {"rnn": 1, "lstm": 4, "gru": 3}


def weights(kind, D, H, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    G = GATES[kind]
    return [rng.normal(size=s).astype(dtype) for s in [(G * H, D), (G * H, H), (G * H,), (G * H,)]]


def test_rnn_step_is_the_equation():
    D, H, B = 3, 2, 4
    rng = np.random.default_rng(1)
    x, h = rng.normal(size=(B, D)), rng.normal(size=(B, H))
    W_ih, W_hh, b_ih, b_hh = weights("rnn", D, H)
    expected = np.tanh(x @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
    np.testing.assert_allclose(rnn.step(x, h, W_ih, W_hh, b_ih, b_hh), expected, rtol=1e-14)


def test_lstm_step_gates_are_in_torch_order():
    D, H = 2, 3
    W_ih, W_hh, b_ih, b_hh = weights("lstm", D, H)
    W_ih[:] = 0
    W_hh[:] = 0
    b_ih[:] = np.repeat([1.0, 2.0, 3.0, 4.0], H)
    b_hh[:] = 0
    s = lstm.step(np.ones(D), np.zeros(H), np.full(H, 0.5), W_ih, W_hh, b_ih, b_hh)
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    np.testing.assert_allclose(s.i, sig(1.0))
    np.testing.assert_allclose(s.f, sig(2.0))
    np.testing.assert_allclose(s.g, np.tanh(3.0))
    np.testing.assert_allclose(s.o, sig(4.0))
    np.testing.assert_allclose(s.c, sig(2.0) * 0.5 + sig(1.0) * np.tanh(3.0))
    np.testing.assert_allclose(s.h, sig(4.0) * np.tanh(s.c))
    assert s._fields == ("i", "f", "g", "o", "c", "h")


@pytest.mark.parametrize("reset", gru.RESET_CONVENTIONS)
def test_gru_update_conventions_mirror_each_other(reset):
    D, H, B = 2, 3, 2
    rng = np.random.default_rng(2)
    x, h = rng.normal(size=(B, D)), rng.normal(size=(B, H))
    W_ih, W_hh, b_ih, b_hh = weights("gru", D, H)
    keeps = gru.step(x, h, W_ih, W_hh, b_ih, b_hh, update="z_keeps", reset=reset)
    # Negating the update gate's pre-activation turns z into 1 - z.
    W_ih2, W_hh2, b_ih2, b_hh2 = (w.copy() for w in (W_ih, W_hh, b_ih, b_hh))
    for w in (W_ih2, W_hh2, b_ih2, b_hh2):
        w[H:2 * H] *= -1
    writes = gru.step(x, h, W_ih2, W_hh2, b_ih2, b_hh2, update="z_writes", reset=reset)
    np.testing.assert_allclose(writes.h, keeps.h, rtol=1e-13)
    np.testing.assert_allclose(writes.z, 1 - keeps.z, rtol=1e-13)


def test_gru_reset_conventions_differ_only_through_the_reset_gate():
    D, H = 2, 3
    rng = np.random.default_rng(3)
    x, h = rng.normal(size=D), rng.normal(size=H)
    W_ih, W_hh, b_ih, b_hh = weights("gru", D, H)
    b_hh[2 * H:] = 0
    after = gru.step(x, h, W_ih, W_hh, b_ih, b_hh, reset="after")
    before = gru.step(x, h, W_ih, W_hh, b_ih, b_hh, reset="before")
    assert not np.allclose(after.n, before.n)
    # With the reset gate fully open (r = 1) the two agree.
    b_ih[:H] = 60.0
    after = gru.step(x, h, W_ih, W_hh, b_ih, b_hh, reset="after")
    before = gru.step(x, h, W_ih, W_hh, b_ih, b_hh, reset="before")
    np.testing.assert_allclose(after.h, before.h, rtol=1e-12)


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_step_keeps_dtype_and_accepts_one_sequence(kind, dtype):
    D, H = 3, 2
    W = weights(kind, D, H, dtype=dtype)
    x, h = np.ones(D, dtype=dtype), np.zeros(H, dtype=dtype)
    if kind == "lstm":
        one = lstm.step(x, h, h, *W).h
        batch = lstm.step(x[None], h[None], h[None], *W).h
    else:
        one = getattr(globals()[kind], "step")(x, h, *W)
        batch = getattr(globals()[kind], "step")(x[None], h[None], *W)
        one, batch = (getattr(v, "h", v) for v in (one, batch))
    assert one.dtype == dtype and one.shape == (H,)
    np.testing.assert_array_equal(batch[0], one)


def test_step_rejects_bad_shapes_naming_the_argument():
    W_ih, W_hh, b_ih, b_hh = weights("lstm", 3, 2)
    x, h = np.zeros(3), np.zeros(2)
    with pytest.raises(ValueError, match="x must have shape"):
        lstm.step(np.zeros(4), h, h, W_ih, W_hh, b_ih, b_hh)
    with pytest.raises(ValueError, match="c_prev must have shape"):
        lstm.step(x, h, np.zeros(3), W_ih, W_hh, b_ih, b_hh)
    with pytest.raises(ValueError, match="h_prev must have shape"):
        lstm.step(x[None], h, h, W_ih, W_hh, b_ih, b_hh)
    with pytest.raises(ValueError, match="W_hh must have shape"):
        lstm.step(x, h, h, W_ih, W_hh[:6], b_ih, b_hh)
    with pytest.raises(ValueError, match="b_hh must have shape"):
        lstm.step(x, h, h, W_ih, W_hh, b_ih, b_hh[:7])
    with pytest.raises(ValueError, match="W_ih must have shape"):
        rnn.step(x, h, W_ih, W_hh[:2], b_ih[:2], b_hh[:2])
    with pytest.raises(ValueError, match="update must be one of 'z_keeps', 'z_writes', got 'keep'"):
        gru.step(x, h, *weights("gru", 3, 2), update="keep")
    with pytest.raises(ValueError, match="reset must be one of"):
        gru.step(x, h, *weights("gru", 3, 2), reset="middle")

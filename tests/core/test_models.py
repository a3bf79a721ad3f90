"""The models' single-step functions and sequence classes without PyTorch: checks, dtypes, agreement."""

import numpy as np
import pytest

from rnnmem import cells, gru, lstm, rnn
from rnnmem.cells import GATES


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
        w[H : 2 * H] *= -1
    writes = gru.step(x, h, W_ih2, W_hh2, b_ih2, b_hh2, update="z_writes", reset=reset)
    np.testing.assert_allclose(writes.h, keeps.h, rtol=1e-13)
    np.testing.assert_allclose(writes.z, 1 - keeps.z, rtol=1e-13)


def test_gru_reset_conventions_differ_only_through_the_reset_gate():
    D, H = 2, 3
    rng = np.random.default_rng(3)
    x, h = rng.normal(size=D), rng.normal(size=H)
    W_ih, W_hh, b_ih, b_hh = weights("gru", D, H)
    b_hh[2 * H :] = 0
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
        one = globals()[kind].step(x, h, *W)
        batch = globals()[kind].step(x[None], h[None], *W)
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


# ---------------------------------------------------------------- sequence models

from rnnmem import GRU, LSTM, RNN  # noqa: E402

CLASSES = dict(cells.MODELS)  # every cell of the registry gets these tests (ARCHITECTURE.md)


def state_for(model, B, rng):
    parts = [rng.standard_normal((B, model.hidden_size)) for _ in model.state_names]
    return parts[0] if len(parts) == 1 else tuple(parts)


@pytest.mark.parametrize("kind", list(CLASSES))
def test_parameters_have_torch_layout_and_torch_bounds(kind):
    model = CLASSES[kind](5, 3, seed=0)
    G = GATES[kind]
    assert model.W_ih.shape == (G * 3, 5) and model.W_hh.shape == (G * 3, 3)
    assert model.b_ih.shape == model.b_hh.shape == (G * 3,)
    assert list(model.parameters()) == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    assert all(np.abs(w).max() <= 1 / np.sqrt(3) for w in model.parameters().values())


def test_seed_reproduces_and_accepts_a_generator():
    a, b = LSTM(3, 4, seed=11), LSTM(3, 4, seed=11)
    np.testing.assert_array_equal(a.W_hh, b.W_hh)
    c = LSTM(3, 4, seed=np.random.default_rng(11))
    np.testing.assert_array_equal(a.W_hh, c.W_hh)
    assert not np.array_equal(a.W_hh, LSTM(3, 4, seed=12).W_hh)


@pytest.mark.parametrize("kind", list(CLASSES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_is_kept_through_forward_and_backward(kind, dtype):
    model = CLASSES[kind](2, 3, dtype=dtype, seed=0)
    assert all(w.dtype == dtype for w in model.parameters().values())
    rng = np.random.default_rng(0)
    outputs, final = model.forward(rng.standard_normal((4, 2, 2)), state_for(model, 2, rng))
    assert outputs.dtype == dtype
    for part in final if kind == "lstm" else (final,):
        assert part.dtype == dtype
    grads = model.backward(np.ones((4, 2, 3), dtype=np.float64))
    assert all(g.dtype == dtype for g in grads.values())
    assert model.astype(np.float64).dtype == np.float64


def test_float32_and_float64_agree():
    model = LSTM(3, 4, seed=1)
    x = np.random.default_rng(2).standard_normal((20, 2, 3))
    out64, _ = model.forward(x)
    out32, _ = model.astype(np.float32).forward(x)
    np.testing.assert_allclose(out32, out64, atol=1e-5)


@pytest.mark.parametrize("scale", [1.0, 6.0])
def test_lstm_float32_path_agrees_with_float64_in_every_gradient(monkeypatch, scale):
    """float32 activates the gates through tanh, float64 through exp: both are the same LSTM.

    Weights scaled by 6 drive most gates into saturation, where the two formulas
    differ most; backward runs in chunks of two steps, the last one short.
    """
    monkeypatch.setattr(LSTM, "_chunk_elements", 2 * 5 * 4 * 3)  # 2 steps of 5 H B values
    rng = np.random.default_rng(7)
    model = LSTM(3, 4, seed=8)
    for w in model.parameters().values():
        w *= scale
    x = rng.standard_normal((9, 3, 3))
    state = (rng.standard_normal((3, 4)), rng.standard_normal((3, 4)))
    d_out, d_final = rng.standard_normal((9, 3, 4)), (rng.standard_normal((3, 4)), rng.standard_normal((3, 4)))
    results = {}
    for dtype in (np.float64, np.float32):
        m = model.astype(dtype)
        outputs, (h, c) = m.forward(x, state)
        results[dtype] = {"outputs": outputs, "h": h, "c": c, **m.backward(d_out, d_final)}
    for key, expected in results[np.float64].items():
        got = results[np.float32][key]
        assert got.dtype == np.float32, key
        error = np.abs(got - expected).max() / np.abs(expected).max()
        assert error < 1e-5, f"{key}: {error:.1e}"


@pytest.mark.parametrize("update", gru.UPDATE_CONVENTIONS)
@pytest.mark.parametrize("reset", gru.RESET_CONVENTIONS)
def test_gru_backward_in_short_chunks_equals_one_chunk(monkeypatch, update, reset):
    """The GRU sums its weight gradients a chunk of steps at a time: chunks of two steps, the last one
    short, give every gradient that one chunk of all nine steps gives, to rounding."""
    rng = np.random.default_rng(11)
    model = GRU(3, 4, seed=12, update=update, reset=reset)
    x, h0, d_out, d_final = (rng.standard_normal(s) for s in [(9, 3, 3), (3, 4), (9, 3, 4), (3, 4)])
    rows = 4 * 4 if reset == "after" else 3 * 4  # gate-gradient rows per step: [r; z; r n; n] or [r; z; n]
    results = []
    for elements in (GRU._chunk_elements, 2 * rows * 3):
        monkeypatch.setattr(GRU, "_chunk_elements", elements)
        model.forward(x, h0)
        results.append(model.backward(d_out, d_final))
    one, short = results
    for key in one:
        error = np.abs(short[key] - one[key]).max() / np.abs(one[key]).max()
        assert error < 1e-12, f"{key}: {error:.1e}"


@pytest.mark.parametrize("bad", ["float16", np.int32, "complex128", "nonsense"])
def test_bad_dtype_is_refused(bad):
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        LSTM(2, 2, dtype=bad)


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="input_size must be a whole number >= 1, got 0"):
        RNN(0, 2)
    with pytest.raises(ValueError, match="hidden_size must be a whole number >= 1, got 2.5"):
        GRU(2, 2.5)  # type: ignore[arg-type]  # a bad value on purpose


def test_bad_gru_conventions_are_refused():
    with pytest.raises(ValueError, match="update must be one of 'z_keeps', 'z_writes', got 'keep'"):
        GRU(2, 2, update="keep")
    with pytest.raises(ValueError, match="reset must be one of 'after', 'before', got 'pytorch'"):
        GRU(2, 2, reset="pytorch")
    sd = GRU(2, 2, seed=0).to_torch_state_dict()
    with pytest.raises(ValueError, match="reset must be one of"):
        GRU.from_torch_state_dict(sd, reset="both")


@pytest.mark.parametrize("kind", list(CLASSES))
def test_state_dict_round_trip(kind):
    model = CLASSES[kind](3, 2, seed=4)
    sd = model.to_torch_state_dict()
    sd["weight_ih_l0"][:] = 0.0  # copies: the model is unchanged
    assert np.abs(model.W_ih).max() > 0
    again = CLASSES[kind].from_torch_state_dict(model.to_torch_state_dict())
    for key, value in again.to_torch_state_dict().items():
        np.testing.assert_array_equal(value, model.parameters()[key])
    as_lists = {k: v.tolist() for k, v in model.to_torch_state_dict().items()}
    assert CLASSES[kind].from_torch_state_dict(as_lists).dtype == np.float64


def test_state_dict_errors_name_the_key_and_the_shapes():
    sd = LSTM(3, 2, seed=0).to_torch_state_dict()
    missing = {k: v for k, v in sd.items() if k != "bias_hh_l0"}
    with pytest.raises(ValueError, match="missing the key 'bias_hh_l0'"):
        LSTM.from_torch_state_dict(missing)
    with pytest.raises(ValueError, match="unexpected key 'weight_ih_l1'"):
        LSTM.from_torch_state_dict({**sd, "weight_ih_l1": sd["weight_ih_l0"]})
    with pytest.raises(ValueError, match=r"sd\['weight_ih_l0'\] must have shape \(8, D\).*got shape \(8, 4, 1\)"):
        LSTM.from_torch_state_dict({**sd, "weight_ih_l0": np.zeros((8, 4, 1))})
    with pytest.raises(ValueError, match=r"sd\['weight_ih_l0'\] must have shape \(8, 3\), got shape \(7, 3\)"):
        LSTM.from_torch_state_dict({**sd, "weight_ih_l0": np.zeros((7, 3))})
    with pytest.raises(ValueError, match=r"sd\['bias_ih_l0'\] must have shape \(8,\), got shape \(8, 1\)"):
        LSTM.from_torch_state_dict({**sd, "bias_ih_l0": np.zeros((8, 1))})
    with pytest.raises(ValueError, match=r"sd\['weight_hh_l0'\] must have shape \(4\*H, H\).*got shape \(8, 3\)"):
        LSTM.from_torch_state_dict({**sd, "weight_hh_l0": np.zeros((8, 3))})
    with pytest.raises(ValueError, match=r"sd\['weight_hh_l0'\] must have shape \(3\*H, H\).*got shape \(8, 2\)"):
        GRU.from_torch_state_dict(sd)  # an LSTM's state dict is not a GRU's
    with pytest.raises(ValueError, match=r"sd\['weight_ih_l0'\] must be finite"):
        LSTM.from_torch_state_dict({**sd, "weight_ih_l0": np.full((8, 3), np.inf)})
    with pytest.raises(ValueError, match="sd must be a mapping"):
        LSTM.from_torch_state_dict([("weight_ih_l0", sd["weight_ih_l0"])])  # type: ignore[arg-type]  # a bad value on purpose
    with pytest.raises(ValueError, match=r"sd\['bias_hh_l0'\] must be an array of real numbers"):
        LSTM.from_torch_state_dict({**sd, "bias_hh_l0": np.array(["a"] * 8)})


@pytest.mark.parametrize("kind", list(CLASSES))
def test_forward_rejects_bad_shapes_naming_the_argument(kind):
    model = CLASSES[kind](3, 2, seed=0)
    for bad in (
        np.zeros((4, 3)),
        np.zeros((4, 2, 5)),
        np.zeros((0, 2, 3)),
        np.zeros((4, 0, 3)),
        np.zeros((1, 4, 2, 3)),
    ):
        with pytest.raises(ValueError, match=r"^x must have shape \(T, B, 3\)"):
            model.forward(bad)
    with pytest.raises(ValueError, match="x must hold real numbers"):
        model.forward(np.full((2, 1, 3), "a"))
    x = np.zeros((4, 2, 3))
    if kind == "lstm":
        with pytest.raises(ValueError, match=r"state must be a pair \(h, c\) of arrays of shape \(2, 2\)"):
            model.forward(x, np.zeros((2, 2)))
        with pytest.raises(ValueError, match=r"state \(c\) must have shape \(2, 2\), got shape \(3, 2\)"):
            model.forward(x, (np.zeros((2, 2)), np.zeros((3, 2))))
        with pytest.raises(ValueError, match="state must hold arrays, got None for h"):
            model.forward(x, (None, np.zeros((2, 2))))
    else:
        with pytest.raises(ValueError, match=r"state must have shape \(2, 2\), got shape \(1, 2\)"):
            model.forward(x, np.zeros((1, 2)))
        with pytest.raises(ValueError, match=r"state must have shape \(2, 2\), got shape \(2, 3\)"):
            model.forward(x, np.zeros((2, 3)))


@pytest.mark.parametrize("kind", list(CLASSES))
def test_backward_checks(kind):
    model = CLASSES[kind](3, 2, seed=0)
    with pytest.raises(ValueError, match="backward needs a forward pass first"):
        model.backward(np.zeros((4, 2, 2)))
    model.forward(np.zeros((4, 2, 3)))
    with pytest.raises(ValueError, match=r"d_outputs must have shape \(4, 2, 2\), got shape \(4, 1, 2\)"):
        model.backward(np.zeros((4, 1, 2)))
    if kind == "lstm":
        with pytest.raises(ValueError, match=r"d_final_state \(h\) must have shape \(2, 2\)"):
            model.backward(np.zeros((4, 2, 2)), (np.zeros((2, 3)), None))
        grads = model.backward(np.zeros((4, 2, 2)), (None, np.ones((2, 2))))
        assert np.abs(grads["c0"]).max() > 0
    else:
        with pytest.raises(ValueError, match=r"d_final_state must have shape \(2, 2\), got shape \(2,\)"):
            model.backward(np.zeros((4, 2, 2)), np.zeros(2))
    with pytest.raises(ValueError, match="x must have shape"):
        model.forward(np.zeros((4, 2, 5)))  # a failed forward pass leaves nothing to differentiate
    with pytest.raises(ValueError, match="backward needs a forward pass first"):
        model.backward(np.zeros((4, 2, 2)))


@pytest.mark.parametrize("kind", list(CLASSES))
def test_backward_belongs_to_the_latest_forward_and_can_be_repeated(kind):
    """Scratch arrays are reused from call to call: results must not leak between calls."""
    rng = np.random.default_rng(3)
    model = CLASSES[kind](3, 4, seed=1)
    fresh = CLASSES[kind](3, 4, seed=1)
    x1, x2 = rng.standard_normal((5, 2, 3)), rng.standard_normal((5, 2, 3))
    dy = rng.standard_normal((5, 2, 4))
    first, _ = model.forward(x1)
    kept = first.copy()
    model.forward(rng.standard_normal((7, 3, 3)))  # another shape in between
    model.forward(x2)
    np.testing.assert_array_equal(first, kept)  # earlier outputs are not overwritten
    grads = model.backward(dy)
    again = model.backward(dy)
    fresh.forward(x2)
    expected = fresh.backward(dy)
    for key in expected:
        np.testing.assert_array_equal(grads[key], expected[key])
        np.testing.assert_array_equal(again[key], expected[key])


def test_backward_is_the_gradient_of_the_stated_loss():
    """One directional derivative of L = sum(dY * Y) + <dh, h_T> + <dc, c_T> by central differences."""
    rng = np.random.default_rng(8)
    model = LSTM(2, 3, seed=2)
    x = rng.standard_normal((4, 2, 2))
    state = state_for(model, 2, rng)
    dy, dh, dc = rng.standard_normal((4, 2, 3)), rng.standard_normal((2, 3)), rng.standard_normal((2, 3))

    def loss():
        y, (h, c) = model.forward(x, state)
        return np.sum(dy * y) + np.sum(dh * h) + np.sum(dc * c)

    model.forward(x, state)
    grads = model.backward(dy, (dh, dc))
    direction = {k: rng.standard_normal(v.shape) for k, v in model.parameters().items()}
    expected = sum(np.sum(grads[k] * direction[k]) for k in direction)
    eps = 1e-6
    for k in direction:
        model.parameters()[k] += eps * direction[k]
    plus = loss()
    for k in direction:
        model.parameters()[k] -= 2 * eps * direction[k]
    minus = loss()
    assert (plus - minus) / (2 * eps) == pytest.approx(expected, rel=1e-7)


STEP_CASES: list[tuple[str, dict[str, str]]] = [("rnn", {}), ("lstm", {})] + [
    ("gru", {"update": u, "reset": r}) for u in gru.UPDATE_CONVENTIONS for r in gru.RESET_CONVENTIONS
]


@pytest.mark.parametrize("kind,options", STEP_CASES)
def test_step_functions_agree_with_the_sequence(kind, options):
    rng = np.random.default_rng(5)
    model = CLASSES[kind](3, 4, seed=6, **options)
    for w in model.parameters().values():
        w *= 3.0  # into saturation, where the fast path differs most
    x = rng.standard_normal((12, 2, 3))
    state = state_for(model, 2, rng)
    outputs, final = model.forward(x, state)
    W = model.weights  # keyed as the step functions take them
    assert list(W) == ["W_ih", "W_hh", "b_ih", "b_hh"] and W["W_hh"] is model.W_hh
    if kind == "lstm":
        h, c = state
        for t in range(12):
            s = lstm.step(x[t], h, c, **W)
            h, c = s.h, s.c
            np.testing.assert_allclose(outputs[t], h, rtol=0, atol=1e-13)
        np.testing.assert_allclose(final[1], c, rtol=0, atol=1e-12)
    else:
        h = state
        for t in range(12):
            h = rnn.step(x[t], h, **W) if kind == "rnn" else gru.step(x[t], h, **W, **options).h
            np.testing.assert_allclose(outputs[t], h, rtol=0, atol=1e-13)
        np.testing.assert_allclose(final, h, rtol=0, atol=1e-13)


def test_parameters_are_live():
    model = LSTM(2, 2, seed=0)
    x = np.ones((3, 1, 2))
    before, _ = model.forward(x)
    model.parameters()["bias_hh_l0"][:] += 1.0
    after, _ = model.forward(x)
    assert not np.allclose(before, after)


def test_missing_torch_skips_here_and_fails_under_ci(monkeypatch):
    """The helper of tests/conftest.py: without torch, skip with the reason; under CI, fail."""
    import importlib.util
    from pathlib import Path
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location("torch_helper", Path(__file__).resolve().parents[1] / "conftest.py")
    assert spec is not None and spec.loader is not None
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)

    def no_torch(name):
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(helper, "importlib", SimpleNamespace(import_module=no_torch))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="torch is not installed"):
        helper.require_torch()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set and torch is not installed"):
        helper.require_torch()

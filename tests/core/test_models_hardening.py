"""The models refuse what would give a wrong answer quietly: non-finite numbers, stale weights, unknown options."""

import warnings

import numpy as np
import pytest

from rnnmem import gru, lstm, rnn
from rnnmem.gradcheck import gradcheck
from rnnmem.gru import GRU
from rnnmem.lstm import LSTM
from rnnmem.rnn import RNN

CLASSES = {"rnn": RNN, "lstm": LSTM, "gru": GRU}
BAD = [np.nan, np.inf, -np.inf]


def state(model, B, fill=0.0):
    h = np.full((B, model.hidden_size), fill)
    return (h, h.copy()) if model.state_names == ("h", "c") else h


@pytest.mark.parametrize("kind", list(CLASSES))
@pytest.mark.parametrize("bad", BAD)
def test_forward_refuses_non_finite_inputs_and_states(kind, bad):
    model = CLASSES[kind](3, 2, seed=0)
    x = np.zeros((4, 2, 3))
    x[2, 1, 0] = bad
    with pytest.raises(ValueError, match=r"^x must be finite \(no NaN or infinity\), got .* at index \(2, 1, 0\)"):
        model.forward(x)
    h0 = state(model, 2)
    if kind == "lstm":
        h0[1][0, 1] = bad
        with pytest.raises(ValueError, match=r"^state \(c\) must be finite"):
            model.forward(np.zeros((4, 2, 3)), h0)
    else:
        h0[0, 1] = bad
        with pytest.raises(ValueError, match=r"^state must be finite"):
            model.forward(np.zeros((4, 2, 3)), h0)
    with pytest.raises(ValueError, match="backward needs a forward pass first"):
        model.backward(np.zeros((4, 2, 2)))  # a refused forward leaves nothing behind


@pytest.mark.parametrize("kind", list(CLASSES))
@pytest.mark.parametrize("bad", BAD)
def test_backward_refuses_non_finite_upstream_gradients(kind, bad):
    model = CLASSES[kind](3, 2, seed=0)
    outputs, final = model.forward(np.ones((4, 2, 3)))
    d = np.zeros_like(outputs)
    d[3, 0, 1] = bad
    with pytest.raises(ValueError, match=r"^d_outputs must be finite .* at index \(3, 0, 1\)"):
        model.backward(d)
    d_final = state(model, 2)
    if kind == "lstm":
        d_final = (None, np.full((2, 2), bad))
        with pytest.raises(ValueError, match=r"^d_final_state \(c\) must be finite"):
            model.backward(np.zeros_like(outputs), d_final)
    else:
        d_final[1, 1] = bad
        with pytest.raises(ValueError, match=r"^d_final_state must be finite"):
            model.backward(np.zeros_like(outputs), d_final)
    assert np.isfinite(model.backward(np.ones_like(outputs))["x"]).all()  # the pass is still usable


def test_the_step_functions_refuse_non_finite_arguments_by_name():
    W = LSTM(2, 3, seed=0).weights
    h = c = np.zeros(3)
    with pytest.raises(ValueError, match=r"^x must be finite"):
        lstm.step(np.array([0.0, np.nan]), h, c, **W)
    with pytest.raises(ValueError, match=r"^c_prev must be finite"):
        lstm.step(np.zeros(2), h, np.array([0.0, np.inf, 0.0]), **W)
    bad_W = dict(W, b_hh=np.where(np.arange(12) == 5, np.nan, W["b_hh"]))
    with pytest.raises(ValueError, match=r"^b_hh must be finite.* at index \(5,\)"):
        lstm.step(np.zeros(2), h, c, **bad_W)
    with pytest.raises(ValueError, match=r"^h_prev must be finite"):
        rnn.step(np.zeros(2), np.array([-np.inf, 0.0, 0.0]), **RNN(2, 3, seed=0).weights)
    with pytest.raises(ValueError, match=r"^W_hh must be finite"):
        gru_W = GRU(2, 3, seed=0).weights
        gru_W["W_hh"] = gru_W["W_hh"].copy()
        gru_W["W_hh"][0, 0] = np.inf
        gru.step(np.zeros(2), h, **gru_W)


@pytest.mark.parametrize("kind", list(CLASSES))
@pytest.mark.parametrize("change", ["in place", "replaced", "through parameters()"])
def test_backward_after_the_weights_changed_raises(kind, change):
    model = CLASSES[kind](3, 2, seed=0)
    outputs, _ = model.forward(np.ones((4, 2, 3)))
    if change == "in place":
        model.W_hh[0, 0] += 1e-9
    elif change == "replaced":
        model.b_ih = model.b_ih + 0.5
    else:
        model.parameters()["weight_ih_l0"][:] *= 2.0
    with pytest.raises(ValueError, match=r"backward needs the weights of the latest forward pass, but \w+ has changed"):
        model.backward(np.ones_like(outputs))
    outputs, _ = model.forward(np.ones((4, 2, 3)))  # a new forward pass makes backward valid again
    fresh = CLASSES[kind].from_torch_state_dict(model.to_torch_state_dict(), **model._options())
    fresh.forward(np.ones((4, 2, 3)))
    expected = fresh.backward(np.ones_like(outputs))
    got = model.backward(np.ones_like(outputs))
    for key in expected:
        np.testing.assert_array_equal(got[key], expected[key])


def test_gradcheck_validates_seed_include_x_and_eps():
    model, x = RNN(1, 1, seed=0), np.ones((2, 1, 1))
    for seed in (-1, 0.5, "1", True):
        with pytest.raises(ValueError, match=r"^seed must be a whole number >= 0"):
            gradcheck(model, x, seed=seed)
    for include_x in (1, "no", None):
        with pytest.raises(ValueError, match=r"^include_x must be True or False"):
            gradcheck(model, x, include_x=include_x)  # type: ignore[arg-type]  # a bad value on purpose
    for eps, message in [
        (0.0, "eps must be a positive"),
        (-1e-6, "eps must be a positive"),
        (np.nan, "eps must not be NaN"),
        (np.inf, "eps must be a positive finite"),
        (1.0, r"eps must be a small step, a number with 2.2e-16 <= eps < 1 \(.*\), got 1.0"),
        (1e-300, r"eps must be a small step, a number with 2.2e-16 <= eps < 1 \(.*\), got 1e-300"),
        ([1e-6, 1e-5], "eps must be a single step"),
        ("1e-6", "eps must be a real number"),
    ]:
        with pytest.raises(ValueError, match=message):
            gradcheck(model, x, eps=eps)  # type: ignore[arg-type]  # a bad value on purpose
    assert [name for name, _ in gradcheck(model, x, include_x=np.False_).rows][-1] == "h0"
    assert gradcheck(model, x, seed=np.random.default_rng(0)).worst < 1e-6


@pytest.mark.parametrize("kind", list(CLASSES))
def test_from_torch_state_dict_names_unknown_keyword_arguments(kind):
    sd = CLASSES[kind](2, 3, seed=0).to_torch_state_dict()
    cls = CLASSES[kind]
    takes = "dtype, update, reset" if kind == "gru" else "dtype"
    with pytest.raises(
        ValueError,
        match=rf"^{cls.__name__}.from_torch_state_dict got unknown keyword arguments "
        rf"'seeds', 'hidden': it takes {takes}$",
    ):
        cls.from_torch_state_dict(sd, seeds=1, hidden=3)
    if kind != "gru":
        with pytest.raises(ValueError, match="unknown keyword arguments 'update'"):
            cls.from_torch_state_dict(sd, update="z_keeps")
    else:
        assert GRU.from_torch_state_dict(sd, reset="before").reset == "before"


def test_gradcheck_refuses_a_step_too_small_to_move_an_entry_and_warns_nothing():
    """eps = 1e-300 once gave NaN and dozens of warnings; a step that vanishes against a large entry is named too."""
    model, x = LSTM(2, 3, seed=0), np.ones((3, 1, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            ValueError, match=r"^eps must be a small step, a number with 2\.2e-16 <= eps < 1 .*got 1e-300$"
        ):
            gradcheck(model, x, eps=1e-300)
        large = model.W_hh.copy()
        large[0, 0] = 100.0  # float64's spacing at 100 is 1.4e-14: a step of 3e-16 leaves it where it is
        model.W_hh = large
        before = model.to_torch_state_dict()
        spacing = np.spacing(100.0)
        with pytest.raises(
            ValueError, match=rf"^eps must move every entry it steps, got eps=3e-16: .* eps >= {spacing:.3g}"
        ):
            gradcheck(model, x, eps=3e-16)
        for key, value in model.to_torch_state_dict().items():
            np.testing.assert_array_equal(value, before[key])  # nothing was moved
        assert np.isfinite(gradcheck(model, x, eps=float(spacing)).worst)  # the smallest step allowed runs


@pytest.mark.parametrize("kind", list(CLASSES))
def test_a_weight_of_the_wrong_shape_is_refused_when_assigned(kind):
    """model.W_hh = W is checked at the assignment: attribute, shape got and shape allowed named; the model unchanged."""
    model = CLASSES[kind](3, 2, seed=0)
    G = len(model.gate_names)
    kept = model.W_hh
    with pytest.raises(ValueError) as info:
        model.W_hh = np.zeros((5, 2))
    assert str(info.value) == (
        f"W_hh must have shape ({G * 2}, 2) for {type(model).__name__} with input_size=3 and hidden_size=2 "
        f"({G}*H, H), got shape (5, 2)"
    )
    assert model.W_hh is kept
    with pytest.raises(
        ValueError, match=rf"^b_ih must have shape \({G * 2},\) .*\({G}\*H,\), got shape \({G * 2}, 1\)$"
    ):
        model.b_ih = np.zeros((G * 2, 1))
    with pytest.raises(ValueError, match=rf"^W_ih must have shape \({G * 2}, 3\) .*got shape \({G * 2}, 4\)$"):
        model.W_ih = np.zeros((G * 2, 4))
    with pytest.raises(ValueError, match=r"^W_hh must be finite \(no NaN or infinity\), got nan at index \(1, 0\)$"):
        model.W_hh = np.where(np.arange(G * 2)[:, None] == 1, np.nan, kept)
    with pytest.raises(ValueError, match=r"^W_hh must be an array of real numbers, got dtype <U5$"):
        model.W_hh = "zeros"
    assert model.W_hh is kept
    # An array of the right shape is taken as it is (no copy), or cast to the model's dtype.
    replacement = np.full((G * 2, 2), 0.5)
    model.W_hh = replacement
    assert model.W_hh is replacement and model.weights["W_hh"] is replacement
    small = CLASSES[kind](3, 2, dtype=np.float32, seed=0)
    small.W_hh = replacement
    assert small.W_hh.dtype == np.float32
    outputs, _ = small.forward(np.ones((4, 1, 3)))
    assert outputs.dtype == np.float32

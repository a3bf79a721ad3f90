"""Stacked ensembles: each member is the single model it says it is, with exact gradients."""

from typing import Any

import numpy as np
import pytest

from rnnmem import cells, ensemble
from rnnmem.ensemble import Ensemble
from rnnmem.gru import GRU
from rnnmem.lstm import LSTM

MODELS = {name: cells.MODELS[name] for name in ensemble.MODELS}  # the cells the ensemble stacks
RECURRENT = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")


def last_state(model, outputs_and_state):
    _, state = outputs_and_state
    return state[0] if isinstance(model, LSTM) else state


@pytest.mark.parametrize("model", MODELS)
def test_members_draw_what_the_single_models_draw(model):
    ens = Ensemble(model, 3, 4, 2, seeds=[7, 0, 7])
    for e, seed in enumerate([7, 0, 7]):
        single = MODELS[model](3, 4, seed=seed)
        for name, value in single.parameters().items():
            assert np.array_equal(ens.params[name][e], value), (name, e)
    assert np.array_equal(ens.params["readout_weight"][0], ens.params["readout_weight"][2])
    assert not np.array_equal(ens.params["readout_weight"][0], ens.params["readout_weight"][1])
    bound = 1 / np.sqrt(4)
    assert np.abs(ens.params["readout_weight"]).max() <= bound


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("shared", [False, True], ids=["own-batches", "shared-batch"])
def test_forward_and_backward_match_the_single_models(model, shared):
    """Member e's last state and gradients are those of rnnmem's single model (float64, to 1e-12)."""
    rng = np.random.default_rng(1)
    E, T, B, D, H = 3, 7, 5, 4, 6
    ens = Ensemble(model, D, H, 2, seeds=[3, 4, 5])
    x = rng.normal(size=(T, B, D)) if shared else rng.normal(size=(T, E, B, D))
    h = ens.forward(x)
    d_last = rng.normal(size=h.shape)
    grads = ens.backward(d_last)
    for e in range(E):
        single = ens.member(e)
        xe = x if shared else x[:, e]
        outputs_and_state = single.forward(xe)
        np.testing.assert_allclose(h[e], last_state(single, outputs_and_state), rtol=0, atol=1e-13)
        d_outputs = np.zeros((T, B, H))
        d_outputs[-1] = d_last[e]
        expected = single.backward(d_outputs)
        for name in RECURRENT:
            scale = np.abs(expected[name]).max()
            np.testing.assert_allclose(
                grads[name][e], expected[name], rtol=0, atol=1e-12 * scale, err_msg=f"{model} member {e} {name}"
            )


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_loss_gradients_match_finite_differences(model, kind):
    """Central differences of each member's loss, for entries of every parameter array."""
    rng = np.random.default_rng(2)
    E, T, B, D, H = 2, 5, 3, 3, 4
    outputs = 3 if kind == "classification" else 1
    ens = Ensemble(model, D, H, outputs, seeds=[0, 1])
    x = rng.normal(size=(T, E, B, D))
    y = rng.integers(0, outputs, size=(E, B)) if kind == "classification" else rng.normal(size=(E, B))
    losses, grads = ens.loss_and_grads(x, y, kind)
    eps = 1e-6
    for name, p in ens.params.items():
        for e in range(E):
            flat = p[e].reshape(-1)
            for j in rng.choice(flat.size, size=min(4, flat.size), replace=False):
                saved = flat[j]
                flat[j] = saved + eps
                up = ens.loss_and_grads(x, y, kind)[0][e]
                flat[j] = saved - eps
                down = ens.loss_and_grads(x, y, kind)[0][e]
                flat[j] = saved
                numeric = (up - down) / (2 * eps)
                analytic = grads[name][e].reshape(-1)[j]
                assert analytic == pytest.approx(numeric, rel=1e-5, abs=1e-8), (name, e, j)
    # a change in one member's weights leaves the other member's loss alone
    ens.params["weight_hh_l0"][0] += 0.1
    assert ens.loss_and_grads(x, y, kind)[0][1] == losses[1]


@pytest.mark.parametrize("model", MODELS)
def test_step_norms_are_the_gradient_reaching_each_step(model):
    """||dL/dh_s|| per step, checked by running the single model from step s with h_s as its state."""
    rng = np.random.default_rng(3)
    T, B, D, H = 6, 4, 3, 5
    ens = Ensemble(model, D, H, 2, seeds=[0])
    x = rng.normal(size=(T, B, D))
    y = rng.integers(0, 2, size=B)
    _, grads = ens.loss_and_grads(x, y, "classification", step_norms=True)
    norms = grads["step_norms"][0]
    single = ens.member(0)
    outputs, _ = single.forward(x)
    d_last = _last_state_gradient(ens, x, y)
    for s in range(1, T + 1):
        if s == T:
            d_hs = d_last
        else:
            state = outputs[s - 1]
            if model == "lstm":
                cells = _lstm_cells(single, x)
                state = (outputs[s - 1], cells[s - 1])
            out_rest, _ = single.forward(x[s:], state)
            d_outputs = np.zeros_like(out_rest)
            d_outputs[-1] = d_last
            d_hs = single.backward(d_outputs)["h0"]
        expected = np.linalg.norm(d_hs, axis=1).mean() * B
        assert norms[s - 1] == pytest.approx(expected, rel=1e-10), s


def _last_state_gradient(ens, x, y):
    """dL/dh_T of the batch-mean cross-entropy, from the readout."""
    logits = ens.predict(x)[0]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(y)), y] -= 1
    return p @ ens.params["readout_weight"][0] / len(y)


def _lstm_cells(model, x):
    h = np.zeros((x.shape[1], model.hidden_size))
    c = np.zeros_like(h)
    cells = []
    for t in range(x.shape[0]):
        _, (h, c) = model.forward(x[t : t + 1], (h, c))
        cells.append(c)
    return cells


def test_forget_bias_and_chrono_set_the_gate_rows():
    H = 5
    ens = Ensemble("lstm", 2, H, 1, seeds=[0, 1], forget_bias=[0.0, 2.0])
    f = slice(H, 2 * H)
    assert ens.params["bias_ih_l0"][:, f].tolist() == [[0.0] * H, [2.0] * H]
    assert (ens.params["bias_hh_l0"][:, f] == 0).all()
    same = Ensemble("lstm", 2, H, 1, seeds=[0, 1])
    assert np.array_equal(ens.params["weight_hh_l0"], same.params["weight_hh_l0"])  # only the rows change
    chrono = Ensemble("lstm", 2, 400, 1, seeds=[0], init="chrono", t_max=50)
    b = chrono.params["bias_ih_l0"][0] + chrono.params["bias_hh_l0"][0]
    b_i, b_f = b[:400], b[400:800]
    assert np.array_equal(b_i, -b_f)
    lifetimes = 1 + np.exp(b_f)  # 1/(1 - sigma(b_f)) = 1 + u
    assert lifetimes.min() >= 2 and lifetimes.max() <= 50
    assert lifetimes.min() < 4 and lifetimes.max() > 45  # spread over [2, T_max]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            dict(model="transformer"),
            f"model must be one of {', '.join(map(repr, ensemble.KERNELS))}, got 'transformer'",
        ),
        (
            dict(model="gru", forget_bias=1.0),
            "forget_bias sets the LSTM's forget gate; model must be 'lstm', got 'gru'",
        ),
        (dict(init="orthogonal"), "init must be one of 'default', 'chrono', got 'orthogonal'"),
        (dict(init="chrono"), "init='chrono' needs t_max, the longest lifetime wanted (a number > 2)"),
        (dict(init="chrono", t_max=2), "t_max must be greater than 2 (u is drawn from [1, t_max - 1]), got 2.0"),
        (
            dict(init="chrono", t_max=10, forget_bias=1.0),
            "forget_bias and init='chrono' both set the forget bias: give one of them",
        ),
        (dict(forget_bias=[1.0]), "forget_bias must be one number or one per member (2), got 1 values"),
        (dict(forget_bias=float("nan")), "forget_bias must not be NaN, got nan"),
        (dict(t_max=10), "t_max is used only with init='chrono', got t_max=10 with init='default'"),
        (dict(seeds=[]), "seeds must be a non-empty list of whole numbers >= 0, got []"),
        (dict(init=["default"]), "init must be one of 'default', 'chrono' or one per member (2), got 1 values"),
        (dict(init=["default", "he"]), "init[1] must be one of 'default', 'chrono', got 'he'"),
        (
            dict(init=["default", "chrono"], t_max=10, forget_bias=[1.0, 1.0]),
            "forget_bias and init='chrono' both set the forget bias (member 1): give one of them",
        ),
        (dict(init=["default", "chrono"]), "init='chrono' needs t_max, the longest lifetime wanted (a number > 2)"),
        (dict(seeds=[0, -1]), "seeds[1] must be a whole number >= 0, got -1"),
    ],
)
def test_bad_construction_is_named(kwargs, message):
    args: dict[str, Any] = dict(model="lstm", seeds=[0, 1])
    args.update(kwargs)
    model, seeds = args.pop("model"), args.pop("seeds")
    with pytest.raises(ValueError) as info:
        Ensemble(model, 2, 3, 1, seeds, **args)
    assert str(info.value) == message


def test_bad_inputs_are_named():
    ens = Ensemble("lstm", 2, 3, 4, seeds=[0, 1])
    with pytest.raises(ValueError, match=r"x must have shape \(T, B, 2\) .* got shape \(5, 3, 3\)"):
        ens.forward(np.zeros((5, 3, 3)))
    with pytest.raises(ValueError, match="backward needs a forward pass first"):
        Ensemble("rnn", 1, 1, 1, seeds=[0]).backward(np.zeros((1, 1, 1)))
    with pytest.raises(ValueError, match=r"targets must be class indices from 0 to 3, got values from 0 to 4"):
        ens.loss_and_grads(np.zeros((5, 3, 2)), np.array([0, 4, 1]), "classification")
    with pytest.raises(ValueError, match="kind must be one of 'classification', 'regression', got 'ranking'"):
        ens.loss_and_grads(np.zeros((5, 3, 2)), np.array([0, 1, 1]), "ranking")
    with pytest.raises(ValueError, match="e must be a member index from 0 to 1, got 2"):
        ens.member(2)


def test_carry_masks_multiply_the_cell_state_with_exact_gradients():
    rng = np.random.default_rng(4)
    E, T, B, D, H = 2, 5, 3, 2, 4
    ens = Ensemble("lstm", D, H, 3, seeds=[0, 1])
    x = rng.normal(size=(T, E, B, D))
    y = rng.integers(0, 3, size=(E, B))
    ones = np.ones((T, E, B, H))
    plain, plain_grads = ens.loss_and_grads(x, y, "classification")
    same, same_grads = ens.loss_and_grads(x, y, "classification", carry_masks=ones)
    assert np.array_equal(plain, same)
    assert all(np.array_equal(plain_grads[k], same_grads[k]) for k in plain_grads)
    masks = (rng.random((T, E, B, H)) < 0.7) / 0.7
    losses, grads = ens.loss_and_grads(x, y, "classification", carry_masks=masks)
    assert not np.allclose(losses, plain)
    # against the equations written out for member 1, one step at a time
    from rnnmem.lstm import step

    p = {k: v[1] for k, v in ens.params.items()}
    h, c = np.zeros((B, H)), np.zeros((B, H))
    for t in range(T):
        s = step(x[t, 1], h, masks[t, 1] * c, p["weight_ih_l0"], p["weight_hh_l0"], p["bias_ih_l0"], p["bias_hh_l0"])
        h, c = s.h, s.c
    logits = h @ p["readout_weight"].T + p["readout_bias"]
    log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    assert losses[1] == pytest.approx(-log_p[np.arange(B), y[1]].mean(), rel=1e-12)
    eps = 1e-6
    for name in ("weight_hh_l0", "bias_ih_l0", "weight_ih_l0"):
        flat = ens.params[name][1].reshape(-1)
        for j in range(0, flat.size, 5):
            saved = flat[j]
            flat[j] = saved + eps
            up = ens.loss_and_grads(x, y, "classification", carry_masks=masks)[0][1]
            flat[j] = saved - eps
            down = ens.loss_and_grads(x, y, "classification", carry_masks=masks)[0][1]
            flat[j] = saved
            assert grads[name][1].reshape(-1)[j] == pytest.approx((up - down) / (2 * eps), rel=1e-5, abs=1e-8)
    with pytest.raises(ValueError, match=r"carry_masks must have shape \(5, 2, 3, 4\)"):
        ens.loss_and_grads(x, y, "classification", carry_masks=np.ones((5, 2, 4, 3)))
    with pytest.raises(ValueError, match="carry_masks multiply the LSTM's cell state; model must be 'lstm'"):
        Ensemble("gru", D, H, 3, seeds=[0, 1]).loss_and_grads(x, y, "classification", carry_masks=ones)


@pytest.mark.parametrize("model", ["gru", "lstm"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_backward_in_spans_of_steps_matches_the_single_model(model, dtype):
    """Long enough that the backward pass computes its coefficients in several spans of steps
    (float32: and reads the rows member-major, span by span)."""
    rng = np.random.default_rng(5)
    E, T, B, D, H = 2, 41, 64, 3, 32
    ens = Ensemble(model, D, H, 1, seeds=[0, 1], dtype=dtype)
    assert len(list(ens._chunks(T, 4 * H, B))) > 2
    x = rng.normal(size=(T, E, B, D))
    h = ens.forward(x)
    d_last = rng.normal(size=h.shape)
    grads = ens.backward(d_last)
    single = Ensemble(model, D, H, 1, seeds=[0, 1]).member(1)  # float64
    outputs, _ = single.forward(x[:, 1])
    d_outputs = np.zeros_like(outputs)
    d_outputs[-1] = d_last[1]
    expected = single.backward(d_outputs)
    for name in RECURRENT:
        np.testing.assert_allclose(
            grads[name][1],
            expected[name],
            rtol=0,
            atol=(1e-12 if dtype == np.float64 else 1e-4) * np.abs(expected[name]).max(),
            err_msg=name,
        )


def test_a_cell_without_a_stacked_implementation_is_refused_by_name(monkeypatch):
    """A new cell in rnnmem.cells is not trained through another cell's stacked equations."""
    monkeypatch.setitem(cells.MODELS, "mingru", GRU)
    allowed = ", ".join(map(repr, ensemble.KERNELS))
    with pytest.raises(ValueError, match=f"model must be one of {allowed}, got 'mingru'"):
        Ensemble("mingru", 2, 3, 1, seeds=[0, 1])


def test_forward_and_backward_dispatch_on_the_kernel_table_alone():
    """Both passes read the cell's entry in KERNELS; a cell without one is refused, never run as another."""
    assert ensemble.MODELS == tuple(ensemble.KERNELS) and set(ensemble.MODELS) <= set(cells.MODELS)
    assert all(k.name == name for name, k in ensemble.KERNELS.items())
    ens = Ensemble("rnn", 2, 3, 1, seeds=[0])
    ens.forward(np.ones((4, 2, 2)))
    saved = dict(ensemble.KERNELS)
    del ensemble.KERNELS["rnn"]
    try:
        allowed = ", ".join(map(repr, ensemble.KERNELS))
        for call in (lambda: ens.backward(np.ones((1, 2, 3))), lambda: ens.forward(np.ones((4, 2, 2)))):
            with pytest.raises(ValueError, match=f"model must be one of {allowed}, got 'rnn'"):
                call()
    finally:  # the table back in its order (monkeypatch.delitem would put "rnn" back last)
        ensemble.KERNELS.clear()
        ensemble.KERNELS.update(saved)


def _masked_reference_loss(model, p, x, y, masks):
    """A member's classification loss with hidden masks, its equations written out one step at a time."""
    from rnnmem import gru as gru_module
    from rnnmem import lstm as lstm_module
    from rnnmem import rnn as rnn_module

    T, B, _ = x.shape
    H = p["weight_hh_l0"].shape[1]
    h, c = np.zeros((B, H)), np.zeros((B, H))
    W_ih, W_hh, b_ih, b_hh = p["weight_ih_l0"], p["weight_hh_l0"], p["bias_ih_l0"], p["bias_hh_l0"]
    for t in range(T):
        seen = masks[t] * h  # what enters the recurrent product
        if model == "lstm":
            s = lstm_module.step(x[t], seen, c, W_ih, W_hh, b_ih, b_hh)
            h, c = s.h, s.c
        elif model == "rnn":
            h = rnn_module.step(x[t], seen, W_ih, W_hh, b_ih, b_hh)
        else:  # the GRU's gates and candidate see M h; its interpolation keeps h itself
            g = gru_module.step(x[t], seen, W_ih, W_hh, b_ih, b_hh)
            h = g.z * h + (1 - g.z) * g.n
    logits = h @ p["readout_weight"].T + p["readout_bias"]
    log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return -log_p[np.arange(B), y].mean()


@pytest.mark.parametrize("model", MODELS)
def test_hidden_masks_multiply_the_state_entering_the_product_with_exact_gradients(model):
    rng = np.random.default_rng(6)
    E, T, B, D, H = 2, 5, 3, 2, 4
    ens = Ensemble(model, D, H, 3, seeds=[0, 1])
    x = rng.normal(size=(T, E, B, D))
    y = rng.integers(0, 3, size=(E, B))
    ones = np.ones((T, E, B, H))
    plain, plain_grads = ens.loss_and_grads(x, y, "classification", step_norms=True)
    same, same_grads = ens.loss_and_grads(x, y, "classification", hidden_masks=ones, step_norms=True)
    assert np.array_equal(plain, same)
    assert all(np.array_equal(plain_grads[k], same_grads[k]) for k in plain_grads)
    masks = (rng.random((T, E, B, H)) < 0.7) / 0.7
    losses, grads = ens.loss_and_grads(x, y, "classification", hidden_masks=masks)
    assert not np.allclose(losses, plain)
    for e in range(E):
        p = {k: v[e] for k, v in ens.params.items()}
        assert losses[e] == pytest.approx(_masked_reference_loss(model, p, x[:, e], y[e], masks[:, e]), rel=1e-12)
    eps = 1e-6
    for name in ("weight_hh_l0", "bias_hh_l0", "weight_ih_l0", "readout_weight"):
        flat = ens.params[name][1].reshape(-1)
        for j in range(0, flat.size, 3):
            saved = flat[j]
            flat[j] = saved + eps
            up = ens.loss_and_grads(x, y, "classification", hidden_masks=masks)[0][1]
            flat[j] = saved - eps
            down = ens.loss_and_grads(x, y, "classification", hidden_masks=masks)[0][1]
            flat[j] = saved
            numeric = (up - down) / (2 * eps)
            assert grads[name][1].reshape(-1)[j] == pytest.approx(numeric, rel=1e-5, abs=1e-8), (name, j)
    with pytest.raises(ValueError, match=r"hidden_masks must have shape \(5, 2, 3, 4\) like the hidden states"):
        ens.loss_and_grads(x, y, "classification", hidden_masks=np.ones((5, 2, 4, 3)))


def test_hidden_and_carry_masks_together_match_the_equations():
    rng = np.random.default_rng(7)
    E, T, B, D, H = 1, 4, 3, 2, 3
    ens = Ensemble("lstm", D, H, 2, seeds=[4])
    x, y = rng.normal(size=(T, E, B, D)), rng.integers(0, 2, size=(E, B))
    hidden, carry = (rng.random((T, E, B, H)) < 0.6) / 0.6, (rng.random((T, E, B, H)) < 0.8) / 0.8
    losses, _ = ens.loss_and_grads(x, y, "classification", hidden_masks=hidden, carry_masks=carry)
    from rnnmem.lstm import step

    p = {k: v[0] for k, v in ens.params.items()}
    h, c = np.zeros((B, H)), np.zeros((B, H))
    for t in range(T):
        s = step(x[t, 0], hidden[t, 0] * h, carry[t, 0] * c, *(p[k] for k in RECURRENT))
        h, c = s.h, s.c
    logits = h @ p["readout_weight"].T + p["readout_bias"]
    log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    assert losses[0] == pytest.approx(-log_p[np.arange(B), y[0]].mean(), rel=1e-12)


def test_cell_step_norms_are_the_gradient_reaching_each_cell_state():
    """||dL/dc_s|| per step, c_s a node of the computation: through h_s = o_s tanh(c_s) and through c_{s+1}.

    rnnmem.lstm's gradient of an initial cell state holds the initial h fixed, so the single LSTM run from
    step s with (h_s, c_s) as its state gives the second path, and its h0 gradient (times o_s and the slope
    of tanh at c_s) the first.
    """
    from rnnmem.lstm import step

    rng = np.random.default_rng(8)
    T, B, D, H = 6, 4, 3, 5
    ens = Ensemble("lstm", D, H, 2, seeds=[1])
    x = rng.normal(size=(T, B, D))
    y = rng.integers(0, 2, size=B)
    _, grads = ens.loss_and_grads(x, y, "classification", step_norms=True)
    norms = grads["cell_step_norms"][0]
    single = ens.member(0)
    weights = (single.W_ih, single.W_hh, single.b_ih, single.b_hh)
    d_last = _last_state_gradient(ens, x, y)
    h, c = np.zeros((B, H)), np.zeros((B, H))
    for s in range(1, T + 1):
        now = step(x[s - 1], h, c, *weights)  # step s: o_s, c_s, h_s
        h, c = now.h, now.c
        if s == T:
            d_hs, carried = d_last, 0.0
        else:
            out_rest, _ = single.forward(x[s:], (h, c))
            d_outputs = np.zeros_like(out_rest)
            d_outputs[-1] = d_last
            restart = single.backward(d_outputs)
            d_hs, carried = restart["h0"], restart["c0"]
        d_cs = d_hs * now.o * (1.0 - np.tanh(c) ** 2) + carried
        expected = np.linalg.norm(d_cs, axis=1).mean() * B
        assert norms[s - 1] == pytest.approx(expected, rel=1e-10), s
    assert "cell_step_norms" not in ens.loss_and_grads(x, y, "classification")[1]
    rnn = Ensemble("rnn", D, H, 2, seeds=[1])
    assert "cell_step_norms" not in rnn.loss_and_grads(x, y, "classification", step_norms=True)[1]


def test_select_copies_members_that_compute_as_before():
    rng = np.random.default_rng(9)
    ens = Ensemble("lstm", 2, 3, 2, seeds=[4, 5, 6], forget_bias=[0.0, 1.0, None], init="default")
    part = ens.select([2, 0])
    assert part.seeds == (6, 4) and part.forget_bias == (None, 0.0) and part.size == 2
    x, y = rng.normal(size=(4, 3, 2)), rng.integers(0, 2, size=3)
    losses, grads = ens.loss_and_grads(x, y, "classification")
    part_losses, part_grads = part.loss_and_grads(x, y, "classification")
    assert part_losses.tolist() == [losses[2], losses[0]]
    for name, g in grads.items():
        assert np.array_equal(part_grads[name], g[[2, 0]]), name
    part.params["weight_hh_l0"][...] = 0.0  # a copy: the original is untouched
    assert (ens.params["weight_hh_l0"] != 0.0).any()
    with pytest.raises(ValueError, match=r"members\[1\] must be a member index from 0 to 2, got 3"):
        ens.select([0, 3])
    with pytest.raises(ValueError, match=r"members must be a non-empty list of member indices, got \[\]"):
        ens.select([])


def test_input_bias_is_applied_last_and_refused_outside_the_lstm():
    H = 4
    ens = Ensemble("lstm", 2, H, 1, seeds=[0, 1], init="chrono", t_max=20, input_bias=0.5)
    b = ens.params["bias_ih_l0"] + ens.params["bias_hh_l0"]
    assert (b[:, :H] == 0.5).all() and (ens.params["bias_hh_l0"][:, :H] == 0).all()
    chrono = Ensemble("lstm", 2, H, 1, seeds=[0, 1], init="chrono", t_max=20)
    assert np.array_equal(b[:, H:], (chrono.params["bias_ih_l0"] + chrono.params["bias_hh_l0"])[:, H:])
    assert ens.input_bias == 0.5 and chrono.input_bias is None
    with pytest.raises(ValueError, match="input_bias sets the LSTM's input gate; model must be 'lstm', got 'rnn'"):
        Ensemble("rnn", 2, H, 1, seeds=[0], input_bias=0.0)


@pytest.mark.parametrize("model", MODELS)
def test_float32_computes_the_same_equations_through_tanh(model):
    """float32 runs its nonlinearities through tanh, float64 through exp: both are the single model's equations."""
    rng = np.random.default_rng(10)
    E, T, B, D, H = 2, 9, 5, 4, 6
    ens64 = Ensemble(model, D, H, 3, seeds=[3, 4])
    ens32 = Ensemble(model, D, H, 3, seeds=[3, 4], dtype=np.float32)
    x = rng.normal(size=(T, E, B, D))
    y = rng.integers(0, 3, size=(E, B))
    masks = (rng.random((T, E, B, H)) < 0.8) / 0.8
    loss64, grads64 = ens64.loss_and_grads(x, y, "classification", hidden_masks=masks)
    loss32, grads32 = ens32.loss_and_grads(x, y, "classification", hidden_masks=masks)
    assert grads32["weight_hh_l0"].dtype == np.float32
    np.testing.assert_allclose(loss32, loss64, rtol=1e-5)
    for name, g in grads64.items():
        np.testing.assert_allclose(grads32[name], g, rtol=0, atol=2e-5 * np.abs(g).max(), err_msg=name)
    h32 = ens32.forward(x)
    for e in range(E):
        outputs_and_state = ens64.member(e).forward(x[:, e])
        np.testing.assert_allclose(h32[e], last_state(ens64.member(e), outputs_and_state), rtol=0, atol=1e-5)


def test_one_hot_inputs_by_index_are_the_vectors_themselves():
    from rnnmem.ensemble import OneHot

    rng = np.random.default_rng(11)
    E, T, B, D, H = 3, 6, 4, 5, 3
    for model in MODELS:
        ens = Ensemble(model, D, H, 2, seeds=[0, 1, 2])
        ids = rng.integers(0, D, size=(T, E, B))
        y = rng.integers(0, 2, size=(E, B))
        by_vector = ens.loss_and_grads(np.eye(D)[ids], y, "classification")
        by_index = ens.loss_and_grads(OneHot(ids), y, "classification")
        assert np.array_equal(by_vector[0], by_index[0])
        assert all(np.array_equal(by_vector[1][k], by_index[1][k]) for k in by_vector[1])
        shared = rng.integers(0, D, size=(T, B))
        assert np.array_equal(ens.predict(np.eye(D)[shared]), ens.predict(OneHot(shared)))
    with pytest.raises(ValueError, match=r"x.ids must be indices from 0 to 4 \(the input size\), got 0 to 5"):
        ens.forward(OneHot(np.array([[0, 5]])))
    with pytest.raises(ValueError, match=r"x.ids must have shape \(T, B\) or \(T, 3, B\), got shape \(2, 2, 2\)"):
        ens.forward(OneHot(np.zeros((2, 2, 2), dtype=int)))
    with pytest.raises(ValueError, match="x.ids must be whole numbers of shape"):
        ens.forward(OneHot(np.zeros((2, 2))))

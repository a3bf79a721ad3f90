"""The LRU, minGRU, the selective scan and Mamba's block, stacked: each checked against a plain loop, finite differences and closed forms."""

import dataclasses
from typing import Any

import numpy as np
import pytest

from rnnmem import cells, ensemble, lab, lru, mamba, mingru, scan, selective
from rnnmem.ensemble import OneHot
from rnnmem.gradcheck import gradcheck_loss
from rnnmem.linear_ensemble import LINEAR_MODELS, METHODS, LinearEnsemble
from rnnmem.tasks import recall

SMALL = {"lru": 3, "mingru": None, "selective": 2, "mamba": 2}  # state sizes for the small models


def small(model, layers=1, output=3, seeds=(0, 1), dtype=np.float64, **kw):
    return LinearEnsemble(model, 2, 4, output, list(seeds), layers=layers, state_size=SMALL[model], dtype=dtype, **kw)


def sample(T=7, B=5, D=2, seed=0):
    return np.random.default_rng(seed).standard_normal((T, B, D))


# -- an independent computation: one member, one step at a time, straight from the equations ------------------


def reference_predict(ens, e, x):
    """Member e's readout on x (T, B, D), by a loop over time written from the module docstrings."""
    p = {k: v[e].astype(np.float64) for k, v in ens.params.items()}
    u = np.asarray(x, dtype=np.float64)
    T, B, _ = u.shape
    for layer in range(ens.layers):
        q = {k[: -len(f"_l{layer}")]: v for k, v in p.items() if k.endswith(f"_l{layer}")}
        ys = []
        if ens.model == "lru":
            lam = np.exp(-np.exp(q["nu_log"]) + 1j * q.get("theta", 0.0))
            gamma = np.sqrt(1 - np.abs(lam) ** 2)
            Bc, Cc = q["B_re"] + 1j * q["B_im"], q["C_re"] + 1j * q["C_im"]
            h = np.zeros((B, lam.size), dtype=complex)
            for t in range(T):
                h = lam * h + gamma * (u[t] @ Bc.T)
                ys.append((h @ Cc.T).real + u[t] @ q["D"].T)
        elif ens.model == "mingru":
            h = np.zeros((B, ens.hidden_size))
            for t in range(T):
                z = 1 / (1 + np.exp(-(u[t] @ q["W_z"].T + q["b_z"])))
                h = (1 - z) * h + z * (u[t] @ q["W_h"].T + q["b_h"])
                ys.append(h)
        elif ens.model == "mamba":
            A = -np.exp(q["A_log"])
            h = np.zeros((B,) + A.shape)
            K = q["conv_w"].shape[1]
            xs = [np.zeros((B, A.shape[0]))] * (K - 1) + [u[t] @ q["W_x"].T for t in range(T)]  # zeros before step 0
            for t in range(T):
                window = np.stack(xs[t : t + K], axis=-1)  # (B, C, K): steps t-K+1..t
                xc = (window * q["conv_w"]).sum(axis=-1) + q["conv_b"]
                xt = xc / (1 + np.exp(-xc))
                delta = np.log1p(np.exp(xt @ q["W_dt"].T + q["b_dt"]))
                Bt, Ct = xt @ q["W_B"].T, xt @ q["W_C"].T
                h = np.exp(delta[:, :, None] * A) * h + (delta * xt)[:, :, None] * Bt[:, None, :]
                s = np.einsum("bdn,bn->bd", h, Ct) + q["Dskip"] * xt
                z = u[t] @ q["W_z"].T
                ys.append((s * z / (1 + np.exp(-z))) @ q["W_out"].T)
        else:
            A = -np.exp(q["A_log"])
            h = np.zeros((B,) + A.shape)
            for t in range(T):
                xt = u[t] @ q["W_in"].T + q["b_in"]
                delta = np.log1p(np.exp(xt @ q["W_dt"].T + q["b_dt"]))
                Bt, Ct = xt @ q["W_B"].T, xt @ q["W_C"].T
                h = np.exp(delta[:, :, None] * A) * h + (delta * xt)[:, :, None] * Bt[:, None, :]
                ys.append(np.einsum("bdn,bn->bd", h, Ct) + q["Dskip"] * xt)
        y = np.array(ys)
        u = y + np.tanh(y @ q["mlp_W1"].T + q["mlp_b1"]) @ q["mlp_W2"].T + q["mlp_b2"]
    return u[-1] @ p["readout_weight"].T + p["readout_bias"]


@pytest.mark.parametrize("method", ["scan", "loop"])
@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("model", LINEAR_MODELS)
def test_predict_is_the_loop_over_the_equations(model, layers, method):
    ens = small(model, layers, method=method)
    x = sample()
    out = ens.predict(x)
    for e in range(ens.size):
        np.testing.assert_allclose(out[e], reference_predict(ens, e, x), rtol=1e-11, atol=1e-12)


# -- exact gradients ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", ["classification", "regression"])
@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("model", LINEAR_MODELS)
def test_gradients_match_finite_differences(model, layers, kind, method):
    ens = LinearEnsemble(
        model, 2, 3, 3 if kind == "classification" else 1, [0], layers=layers, state_size=SMALL[model], method=method
    )
    if model in ("selective", "mamba"):
        # At Mamba's initialization Delta is 0.001..0.1, so A_log's gradient is ~1e-4 of the others and sits at
        # the finite differences' rounding floor; a larger step size (softplus(0.5) ~ 0.97) checks the same code.
        for layer in range(layers):
            ens.params[f"b_dt_l{layer}"][...] = 0.5
    eps, tolerance = 1e-6, 1e-6
    if model == "mamba":
        # In the block the scan's arrays reach the loss through the gate and the output projection, and their
        # gradients are ~1e-3 of the projection's (W_dt of the top layer's less): the differences' rounding floor,
        # which falls as 1/eps (measured: 9e-4 at eps 1e-6, 1e-5 at 1e-4). Larger B and C and a step of 1e-4 lift
        # them above it; a wrong gradient is off by its own size. tests/core/test_mamba.py checks the block
        # alone, every array and the input, at 1e-6.
        eps, tolerance = 1e-4, 1e-5
        for layer in range(layers):
            for k in ("W_B", "W_C"):
                ens.params[f"{k}_l{layer}"][...] *= 3.0
    rng = np.random.default_rng(1)
    x = rng.standard_normal((7, ens.size, 4, 2))  # T = 7, not a power of two; one batch per member
    y = rng.integers(0, 3, (ens.size, 4)) if kind == "classification" else rng.standard_normal(4)
    result = gradcheck_loss(ens, x, y, kind, eps=eps)
    assert [name for name, _ in result.rows] == list(ens.params)
    assert result.worst < tolerance, str(result)


@pytest.mark.parametrize("method", METHODS)
def test_gradients_through_several_spans_of_the_selective_scan(monkeypatch, method):
    monkeypatch.setattr(selective, "chunk_steps", lambda batch, hidden, state: 3)  # spans of 3, 3, 1 steps
    ens = small("selective", 2, seeds=(0,), method=method)
    for layer in range(2):
        ens.params[f"b_dt_l{layer}"][...] = 0.5
    x, y = sample(), np.arange(5) % 3
    assert gradcheck_loss(ens, x, y, "classification").worst < 1e-6
    monkeypatch.undo()
    spans = small("selective", 2, seeds=(0,), method=method)
    for layer in range(2):
        spans.params[f"b_dt_l{layer}"][...] = 0.5
    np.testing.assert_allclose(ens.predict(x), spans.predict(x), rtol=1e-12)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("limit", [None, 0])
def test_kept_selective_states_give_the_recomputed_gradients_bit_for_bit(monkeypatch, method, limit):
    """A training step keeps each span's decays and states (up to KEEP_LIMIT); the backward pass gives the same bits."""
    monkeypatch.setattr(selective, "chunk_steps", lambda batch, hidden, state: 3)  # spans of 3, 3, 1 steps
    if limit is not None:
        monkeypatch.setattr(selective, "KEEP_LIMIT", limit)
    p = {k: v[None] for k, v in selective.draw(np.random.default_rng(0), 2, 3, 4).items()}
    p["b_dt"][...] = 0.5
    x = np.random.default_rng(1).standard_normal((7, 1, 5, 3))
    dy = np.random.default_rng(2).standard_normal((7, 1, 5, 3))
    y_kept, kept = selective.forward(p, x, last_only=False, method=method, keep_states=True)
    y_again, again = selective.forward(p, x, last_only=False, method=method)
    assert (kept["kept"] is None) == (limit == 0) and again["kept"] is None
    assert kept["kept"] is None or len(kept["kept"]) == 3
    assert np.array_equal(y_kept, y_again)
    g_kept, dx_kept, n_kept = selective.backward(p, kept, dy, norms=True)
    g_again, dx_again, n_again = selective.backward(p, again, dy, norms=True)
    assert np.array_equal(dx_kept, dx_again) and np.array_equal(n_kept, n_again)
    for name in g_again:
        assert np.array_equal(g_kept[name], g_again[name]), name


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("every_step", [True, False])
@pytest.mark.parametrize("with_h0", [True, False])
def test_the_selective_loop_computes_the_coefficients_and_the_loop_bit_for_bit(dtype, every_step, with_h0):
    """The loop's span computes each step's decay and input as it goes: the numbers of the whole-span arrays."""
    rng = np.random.default_rng(3)
    K, E, B, H, N = 5, 2, 3, 4, 6
    A = -np.exp(rng.uniform(0.0, 2.0, (E, H, N))).astype(dtype)
    delta = rng.uniform(0.001, 0.5, (K, E, B, H)).astype(dtype)
    written = rng.standard_normal((K, E, B, H)).astype(dtype)
    Bt = rng.standard_normal((K, E, B, N)).astype(dtype)
    h0 = rng.standard_normal((E, B, H, N)).astype(dtype) if with_h0 else None
    a_ref, b_ref = selective._coefficients(A, delta, written, Bt)
    h_ref = scan.sequential_scan(a_ref, b_ref, h0)
    buffers = selective._span_buffers(K, (E, B, H, N), dtype, every_step=every_step)
    a, h = selective._steps(A, delta, written, Bt, h0, *buffers)
    assert a.dtype == h.dtype == dtype
    if every_step:
        assert np.array_equal(a, a_ref) and np.array_equal(h, h_ref)
    else:  # one decay and two states, reused: the last step's
        assert a.shape[0] == 1 and h.shape[0] == 2
        assert np.array_equal(a[0], a_ref[-1]) and np.array_equal(h[(K - 1) % 2], h_ref[-1])


def test_gradcheck_loss_refuses_float32():
    with pytest.raises(ValueError, match="float64"):
        gradcheck_loss(small("lru", dtype=np.float32), sample(), np.zeros(5, dtype=int), "classification")


# -- the variants: the LRU with real decays (phases from 0, or frozen at 0), minGRU with a shifted gate --------

VARIANTS = [("lru", {"phases": "zero"}), ("lru", {"phases": "frozen"}), ("mingru", {"gate_shift": -3.0})]


@pytest.mark.parametrize("model, options", VARIANTS)
def test_variants_compute_their_equations_with_exact_gradients(model, options):
    ens = small(model, 2, **options)
    x = sample()
    for e in range(ens.size):
        np.testing.assert_allclose(ens.predict(x)[e], reference_predict(ens, e, x), rtol=1e-11, atol=1e-12)
    for method in METHODS:
        one = LinearEnsemble(model, 2, 3, 3, [0], layers=2, state_size=SMALL[model], method=method, **options)
        rng = np.random.default_rng(1)
        result = gradcheck_loss(one, rng.standard_normal((7, 1, 4, 2)), rng.integers(0, 3, (1, 4)), "classification")
        assert [name for name, _ in result.rows] == list(one.params)
        assert result.worst < 1e-6, str(result)


@pytest.mark.parametrize("model, options", VARIANTS)
def test_variants_draw_the_same_numbers_but_their_own(model, options):
    plain, variant = small(model, 2), small(model, 2, **options)
    changed = {"phases": "theta", "gate_shift": "b_z"}[next(iter(options))]
    for name, value in plain.params.items():
        if not name.startswith(changed):
            assert np.array_equal(variant.params[name], value), name
        elif name in variant.params:
            assert not np.array_equal(variant.params[name], value), name
    if options.get("phases") == "frozen":
        assert not any(name.startswith("theta") for name in variant.params)
    if model == "lru":
        for layer in range(2):
            lam = lru.decay(variant.params[f"nu_log_l{layer}"], variant.params.get(f"theta_l{layer}", 0.0))
            assert np.all(lam.imag == 0.0) and np.all((lam.real > 0) & (lam.real < 1))
    else:
        z = 1 / (1 + np.exp(-variant.params["b_z_l0"]))
        bound = 1 / np.sqrt(2)  # the draw's range for an input of 2
        assert np.all((1 - z > 1 - 1 / (1 + np.exp(3 - bound))) & (1 - z < 1 - 1 / (1 + np.exp(3 + bound))))


def test_phases_from_zero_are_trained_and_frozen_phases_are_not_parameters():
    task = recall(lag=3, alphabet=4)
    trained = {}
    for phases in ("zero", "frozen"):
        ens = LinearEnsemble("lru", task.input_size, 4, task.output_size, [0, 1], phases=phases)
        start = ens.params["nu_log_l0"].copy()
        lab.train(task, ens, lab.Schedule(steps=20, lr=0.05, eval_every=10, eval_size=32))
        assert not np.array_equal(ens.params["nu_log_l0"], start)
        trained[phases] = ens
    assert np.abs(trained["zero"].params["theta_l0"]).max() > 0
    assert "theta_l0" not in trained["frozen"].params


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"model": "mingru", "phases": "zero"}, "phases"),
        ({"model": "lru", "gate_shift": -1.0}, "gate_shift"),
        ({"model": "lru", "phases": "real"}, "phases"),
        ({"model": "mingru", "gate_shift": np.inf}, "gate_shift"),
    ],
)
def test_variant_options_are_refused_by_name(kwargs, name):
    args = {"input_size": 2, "hidden_size": 4, "output_size": 3, "seeds": [0]} | kwargs
    with pytest.raises(ValueError, match=name):
        LinearEnsemble(args.pop("model"), **args)


# -- members, precision, inputs ------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", LINEAR_MODELS)
def test_a_member_computes_the_same_numbers_alone_or_in_any_stack(model):
    x, y = sample(), np.array([0, 1, 2, 0, 1])
    stack = small(model, 2, seeds=(3, 1, 4))
    alone = small(model, 2, seeds=(1,))
    loss_s, grads_s = stack.loss_and_grads(x, y, "classification", step_norms=True)
    loss_a, grads_a = alone.loss_and_grads(x, y, "classification", step_norms=True)
    assert loss_s[1] == loss_a[0]
    for name in grads_a:
        assert np.array_equal(grads_s[name][1], grads_a[name][0]), name
    assert np.array_equal(stack.select([1]).predict(x), alone.predict(x))
    task = recall(lag=3, alphabet=4)
    batch = task.sample(40, seed=0)
    stack, alone = (lab.make_ensemble(task, model, seeds, hidden=4, layers=2) for seeds in ([3, 1, 4], [1]))
    assert lab.evaluate(stack, task, *batch)[1] == lab.evaluate(alone, task, *batch)[0]


@pytest.mark.parametrize("model", LINEAR_MODELS)
def test_float32_agrees_with_float64(model):
    x, y = sample(), np.array([0, 1, 2, 0, 1])
    l64, g64 = small(model, 2).loss_and_grads(x, y, "classification")
    l32, g32 = small(model, 2, dtype=np.float32).loss_and_grads(x, y, "classification")
    np.testing.assert_allclose(l32, l64, rtol=1e-5)
    for name, g in g64.items():
        assert g32[name].dtype == np.float32
        np.testing.assert_allclose(g32[name], g, rtol=1e-3, atol=1e-5 * np.abs(g).max(), err_msg=name)


@pytest.mark.parametrize("model", LINEAR_MODELS)
def test_one_hot_ids_compute_what_the_vectors_compute(model):
    ens = LinearEnsemble(model, 6, 4, 4, [0, 1], layers=2, state_size=SMALL[model])
    ids = np.random.default_rng(0).integers(0, 6, (7, 2, 5))  # (T, E, B)
    y = np.random.default_rng(1).integers(0, 4, (2, 5))
    vectors = np.eye(6)[ids]
    loss_i, grads_i = ens.loss_and_grads(OneHot(ids), y, "classification")
    loss_v, grads_v = ens.loss_and_grads(vectors, y, "classification")
    assert np.array_equal(loss_i, loss_v)
    for name in grads_v:
        assert np.array_equal(grads_i[name], grads_v[name]), name
    shared = ids[:, 0]
    assert np.array_equal(ens.predict(OneHot(shared)), ens.predict(np.eye(6)[shared]))


@pytest.mark.parametrize("model", LINEAR_MODELS)
def test_scan_and_loop_agree(model):
    x, y = sample(T=33), np.array([0, 1, 2, 0, 1])
    ls, gs = small(model, 2, method="scan").loss_and_grads(x, y, "classification")
    ll, gl = small(model, 2, method="loop").loss_and_grads(x, y, "classification")
    np.testing.assert_allclose(ls, ll, rtol=1e-12)
    for name in gs:
        np.testing.assert_allclose(gs[name], gl[name], rtol=1e-9, atol=1e-13, err_msg=name)


# -- the LRU's ring and its memory -------------------------------------------------------------------------------


def test_ring_initialization_lies_on_the_ring():
    ens = LinearEnsemble("lru", 3, 64, 2, [0, 1, 2], layers=2, r_min=0.5, r_max=0.8, max_phase=np.pi / 4)
    for layer in range(2):
        lam = lru.decay(ens.params[f"nu_log_l{layer}"], ens.params[f"theta_l{layer}"])
        assert np.all((np.abs(lam) >= 0.5 - 1e-12) & (np.abs(lam) <= 0.8 + 1e-12))
        assert np.all((np.angle(lam) >= 0) & (np.angle(lam) <= np.pi / 4 + 1e-12))
    # |lambda|^2 is uniform on [r_min^2, r_max^2]: its mean is the midpoint
    nu, _ = lru.ring_init(20000, 0.5, 0.8, seed=0)
    assert abs(np.mean(np.exp(-2 * np.exp(nu))) - (0.25 + 0.64) / 2) < 0.01


def test_normalization_and_horizon_closed_forms():
    lam = lru.decay(*lru.ring_init(5, seed=3))
    np.testing.assert_allclose(lru.normalization(lam) ** 2 + np.abs(lam) ** 2, 1.0, rtol=1e-14)
    h = lru.ring_horizon(0.95, level=0.05)
    assert abs(0.95 ** h["level"] - 0.05) < 1e-12
    assert abs(0.95 ** h["efold"] - np.exp(-1.0)) < 1e-12 and abs(h["lifetime"] - 20.0) < 1e-9


def test_the_gradient_reaching_step_s_falls_as_r_to_the_distance():
    """One complex state: g_s = conj(lambda)^(T - s) g_T exactly, so the norms fall as |lambda|^(T - s)."""
    task = recall(lag=30, alphabet=4)
    ens = lab.make_ensemble(task, "lru", [0, 1], hidden=8, state_size=1, r_min=0.8, r_max=0.95)
    norms = lab.gradient_by_step(ens, task, n=64)
    r = np.abs(lru.decay(ens.params["nu_log_l0"], ens.params["theta_l0"]))[:, 0]
    T = task.length
    expected = norms[:, -1:] * r[:, None] ** (T - np.arange(1, T + 1))[None, :]
    np.testing.assert_allclose(norms, expected, rtol=1e-10)


# -- arguments ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"model": "lstm"}, "model"),
        ({"layers": 0}, "layers"),
        ({"r_min": 0.99, "r_max": 0.9}, "r_min"),
        ({"r_max": 1.0}, "r_max"),
        ({"r_min": 0.0}, "r_min"),
        ({"state_size": 0}, "state_size"),
        ({"model": "mingru", "state_size": 5}, "state_size"),
        ({"dtype": np.complex128}, "dtype"),
        ({"dtype": np.int32}, "dtype"),
        ({"method": "tree"}, "method"),
        ({"seeds": []}, "seeds"),
        ({"max_phase": 0.0}, "max_phase"),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs, name):
    args = {"model": "lru", "input_size": 2, "hidden_size": 4, "output_size": 3, "seeds": [0]} | kwargs
    model = args.pop("model")
    with pytest.raises(ValueError, match=name):
        LinearEnsemble(model, **args)


def test_bad_calls_are_refused_by_name():
    ens = small("lru")
    x, y = sample(), np.zeros(5, dtype=int)
    for name in ("carry_masks", "hidden_masks"):
        with pytest.raises(ValueError, match=name):
            ens.loss_and_grads(x, y, "classification", **{name: np.ones((7, 2, 5, 4))})
    with pytest.raises(ValueError, match="x must have shape"):
        ens.forward(np.ones((7, 5, 3)))
    with pytest.raises(ValueError, match="x.ids"):
        ens.forward(OneHot(np.full((7, 5), 2)))
    with pytest.raises(ValueError, match="targets"):
        ens.loss_and_grads(x, np.full(5, 3), "classification")
    with pytest.raises(ValueError, match="kind"):
        ens.loss_and_grads(x, y, "ranking")
    with pytest.raises(ValueError, match="members"):
        ens.select([2])


def test_the_lab_refuses_options_of_the_other_family():
    task = recall(lag=3, alphabet=4)
    lstm_options: tuple[tuple[str, Any], ...] = (
        ("forget_bias", 1.0),
        ("init", "chrono"),
        ("t_max", 10.0),
        ("input_bias", 0.0),
    )
    for name, value in lstm_options:
        with pytest.raises(ValueError, match=name):
            lab.make_ensemble(task, "lru", [0], hidden=4, **{name: value})
    linear_options: tuple[tuple[str, Any], ...] = (("layers", 2), ("state_size", 4), ("r_min", 0.5))
    for name, value in linear_options:
        with pytest.raises(ValueError, match=name):
            lab.make_ensemble(task, "lstm", [0], hidden=4, **{name: value})
    with pytest.raises(ValueError, match="hidden_keep"):
        lab.train(task, lab.Model("mingru", hidden=4), lab.Schedule(steps=1, dropout=lab.Dropout(hidden_keep=0.5)))
    with pytest.raises(ValueError, match="carry_keep"):
        lab.train(task, lab.Model("selective", hidden=4), lab.Schedule(steps=1, dropout=lab.Dropout(carry_keep=0.5)))
    assert LINEAR_MODELS == tuple(cells.LINEAR) and lab.ALL_MODELS == ensemble.MODELS + LINEAR_MODELS


# -- the lab trains them -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model, distractors",
    [("lru", "random"), ("mingru", "blank"), ("selective", "blank"), ("mamba", "blank")],
)
def test_the_lab_trains_them_to_recall(model, distractors):
    """Recall at lag 5 over 4 tokens (chance 0.25): in this setting every member reaches 0.9 within 75 updates."""
    task = recall(lag=5, alphabet=4, distractors=distractors)
    result = lab.train(
        task,
        lab.Model(model, seeds=[0, 1, 2], hidden=16),
        lab.Schedule(steps=150, batch=32, lr=0.01, eval_every=25, eval_size=256, stop_when_done=True),
    )
    assert result.successes > 0
    assert result.final_scores.max() >= 0.9 > 3 * task.chance
    assert result.scores[:, 0].max() < 0.5  # untrained: near chance
    assert isinstance(result.ensemble, LinearEnsemble) and result.model == model


def test_retire_keeps_a_member_as_it_is_alone():
    task = recall(lag=3, alphabet=4, distractors="blank")
    schedule = lab.Schedule(steps=60, batch=16, lr=0.02, eval_every=20, eval_size=64)
    full = lab.train(task, lab.Model("mingru", seeds=[0, 1], hidden=8), schedule)
    retired = lab.train(task, lab.Model("mingru", seeds=[0, 1], hidden=8), dataclasses.replace(schedule, retire=True))
    alone = lab.train(task, lab.Model("mingru", seeds=[1], hidden=8), schedule)
    assert retired.success_step == full.success_step
    assert np.array_equal(full.losses[1], alone.losses[0])


def test_modules_draw_their_documented_shapes():
    rng = np.random.default_rng(0)
    assert {k: v.shape for k, v in lru.draw(rng, 3, 4, 2).items()} == lru.shapes(3, 4, 2)
    assert {k: v.shape for k, v in mingru.draw(rng, 3, 4).items()} == mingru.shapes(3, 4)
    assert {k: v.shape for k, v in selective.draw(rng, 3, 4, 2).items()} == selective.shapes(3, 4, 2)
    assert {k: v.shape for k, v in mamba.draw(rng, 3, 4, 2).items()} == mamba.shapes(3, 4, 2)


@pytest.mark.parametrize(
    "ids",
    [np.array([[0, 5]]), np.zeros((2, 2, 2), dtype=int), np.zeros((2, 2))],
    ids=["index too large", "members", "not whole numbers"],
)
def test_one_hot_inputs_are_checked_as_the_cells_ensemble_checks_them(ids):
    """Both ensembles check one-hot indices with the one function, rnnmem.ensemble.check_one_hot."""
    from rnnmem.ensemble import Ensemble, check_one_hot

    messages = []
    for call in (
        lambda: check_one_hot(OneHot(ids), 5, 3),
        lambda: Ensemble("rnn", 5, 4, 1, seeds=[0, 1, 2]).forward(OneHot(ids)),
        lambda: LinearEnsemble("mingru", 5, 4, 1, seeds=[0, 1, 2]).forward(OneHot(ids)),
    ):
        with pytest.raises(ValueError) as info:
            call()
        messages.append(str(info.value))
    assert messages[0].startswith("x.ids must") and messages == [messages[0]] * 3

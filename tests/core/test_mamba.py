"""Mamba's block: its exact gradients, its two scans, its causality and the zero padding of its convolution.

The block is also among the models of every generic test of the linear ensembles (tests/core/test_linear_models.py,
parametrized over LINEAR_MODELS): the loop over its equations, finite differences of the ensemble's loss,
members alone or stacked, float32, one-hot inputs, the lab's training.
"""

import numpy as np
import pytest

from rnnmem import by_design, cells, lab, mamba, selective
from rnnmem.gradcheck import relative_error
from rnnmem.linear_ensemble import LINEAR_MODELS, METHODS, LinearEnsemble
from rnnmem.tasks import recall

H, N, D = 3, 2, 4  # the block's width, the scan's state per channel, the input's width
C = mamba.EXPAND * H


def members(seeds=(0, 1), lift=True):
    """The block's parameters for one member per seed, stacked ``(E, ...)``, float64.

    ``lift``: a step size near 1 and larger B and C (as the linear ensembles' gradient test does), so that the
    scan's arrays carry gradients well above the finite differences' rounding floor.
    """
    drawn = [mamba.draw(np.random.default_rng(seed), D, H, N) for seed in seeds]
    p = {k: np.stack([q[k] for q in drawn]) for k in drawn[0]}
    if lift:
        p["b_dt"][...] = 0.5
        p["W_B"] *= 3.0
        p["W_C"] *= 3.0
    return p


def projection(p, u):
    """``[W_x u; W_z u]`` for inputs ``u`` ``(T, E, B, D)``: the layer's ``proj``."""
    W = np.concatenate([p["W_x"], p["W_z"]], axis=1)
    return np.einsum("teBd,ecd->teBc", u, W)


def numeric(loss, array):
    """Central differences of ``loss()`` with respect to every entry of ``array`` (moved and put back)."""
    out = np.empty(array.shape)
    for index in np.ndindex(array.shape):
        original = array[index]
        array[index] = up = original + 1e-6
        plus = loss()
        array[index] = down = original - 1e-6
        minus = loss()
        array[index] = original
        out[index] = (plus - minus) / (up - down)
    return out


# -- exact gradients ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("last_only", [False, True])
@pytest.mark.parametrize("method", METHODS)
def test_the_block_passes_gradcheck_for_every_array_and_its_input(method, last_only):
    """L = sum P * o (P fixed, standard normal): backward's gradients against central differences, array by array."""
    p = members()
    rng = np.random.default_rng(1)
    proj = rng.standard_normal((7, 2, 3, 2 * C))  # T = 7, not a power of two; two members, three sequences
    o, cache = mamba.forward(p, proj, last_only=last_only, method=method, keep_states=True)
    P = rng.standard_normal(o.shape)
    grads, d_proj, _ = mamba.backward(p, cache, P)

    def loss():
        return float(np.sum(P * mamba.forward(p, proj, last_only=last_only, method=method)[0]))

    assert sorted(grads) == sorted(set(mamba.shapes(D, H, N)) - set(mamba.PROJECTION))
    errors = {name: relative_error(grads[name], numeric(loss, p[name])) for name in grads}
    errors["proj"] = relative_error(d_proj, numeric(loss, proj))
    assert max(errors.values()) < 1e-7, errors
    assert min(float(np.abs(g).max()) for g in grads.values()) > 1e-3  # every array carries a gradient to check


@pytest.mark.parametrize("method", METHODS)
def test_the_gradients_cross_the_scans_spans(monkeypatch, method):
    """With spans of 3, 3 and 1 steps (the scan's state handed from span to span), the same gradients."""
    p = members(seeds=(0,))
    rng = np.random.default_rng(2)
    proj = rng.standard_normal((7, 1, 2, 2 * C))
    dy = rng.standard_normal((7, 1, 2, H))
    whole = mamba.backward(p, mamba.forward(p, proj, last_only=False, method=method)[1], dy)
    monkeypatch.setattr(selective, "chunk_steps", lambda batch, hidden, state: 3)
    spans = mamba.backward(p, mamba.forward(p, proj, last_only=False, method=method)[1], dy)
    np.testing.assert_allclose(spans[1], whole[1], rtol=1e-12, atol=1e-14)
    for name in whole[0]:
        np.testing.assert_allclose(spans[0][name], whole[0][name], rtol=1e-12, atol=1e-14, err_msg=name)


def test_the_block_matches_pytorchs_conv1d_silu_and_autograd(torch):
    """The block written with PyTorch's Conv1d semantics (padding K - 1, the first T outputs), F.silu, a loop for the
    scan and autograd: the same outputs and the same gradients of every array and of the input u."""
    F = torch.nn.functional
    p = members(seeds=(0,))
    rng = np.random.default_rng(8)
    T, B = 6, 3
    u = rng.standard_normal((T, 1, B, D))
    P = rng.standard_normal((T, 1, B, H))
    o, cache = mamba.forward(p, projection(p, u), last_only=False, method="scan")
    grads, d_proj, _ = mamba.backward(p, cache, P)
    grads["W_x"] = np.einsum("teBc,teBd->ecd", d_proj[..., :C], u)
    grads["W_z"] = np.einsum("teBc,teBd->ecd", d_proj[..., C:], u)
    d_u = np.einsum("teBc,ecd->teBd", d_proj, np.concatenate([p["W_x"], p["W_z"]], axis=1))

    q = {k: torch.tensor(v[0], requires_grad=True) for k, v in p.items()}
    uu = torch.tensor(u[:, 0].transpose(1, 0, 2), requires_grad=True)  # (B, T, D), batch first
    x, z = F.linear(uu, q["W_x"]), F.linear(uu, q["W_z"])
    conv = F.conv1d(x.transpose(1, 2), q["conv_w"][:, None, :], q["conv_b"], padding=mamba.CONV_WIDTH - 1, groups=C)
    v = F.silu(conv[..., :T].transpose(1, 2))
    delta = F.softplus(F.linear(v, q["W_dt"], q["b_dt"]))
    Bt, Ct, A = F.linear(v, q["W_B"]), F.linear(v, q["W_C"]), -torch.exp(q["A_log"])
    h = torch.zeros(B, C, N, dtype=torch.float64)
    s = []
    for t in range(T):
        h = torch.exp(delta[:, t, :, None] * A) * h + (delta[:, t] * v[:, t])[..., None] * Bt[:, t, None, :]
        s.append((h * Ct[:, t, None, :]).sum(-1) + q["Dskip"] * v[:, t])
    out = F.linear(torch.stack(s, 1) * F.silu(z), q["W_out"])  # (B, T, H)
    (out * torch.tensor(P[:, 0].transpose(1, 0, 2))).sum().backward()
    np.testing.assert_allclose(o[:, 0], out.detach().numpy().transpose(1, 0, 2), rtol=1e-12, atol=1e-14)
    for name, value in q.items():
        np.testing.assert_allclose(grads[name][0], value.grad.numpy(), rtol=1e-10, atol=1e-14, err_msg=name)
    np.testing.assert_allclose(d_u[:, 0], uu.grad.numpy().transpose(1, 0, 2), rtol=1e-10, atol=1e-14)


# -- the parallel scan and the loop ------------------------------------------------------------------------------


@pytest.mark.parametrize("T", [1, 2, 33, 100])
def test_the_parallel_scan_computes_what_the_loop_computes(T):
    p = members(lift=False)
    proj = np.random.default_rng(3).standard_normal((T, 2, 4, 2 * C))
    dy = np.random.default_rng(4).standard_normal((T, 2, 4, H))
    (o_scan, c_scan), (o_loop, c_loop) = (
        mamba.forward(p, proj, last_only=False, method=method) for method in ("scan", "loop")
    )
    np.testing.assert_allclose(o_scan, o_loop, rtol=1e-12, atol=1e-14)
    g_scan, d_scan, n_scan = mamba.backward(p, c_scan, dy, norms=True)
    g_loop, d_loop, n_loop = mamba.backward(p, c_loop, dy, norms=True)
    np.testing.assert_allclose(d_scan, d_loop, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(n_scan, n_loop, rtol=1e-10)
    for name in g_loop:
        np.testing.assert_allclose(g_scan[name], g_loop[name], rtol=1e-10, atol=1e-14, err_msg=name)


def test_the_last_step_alone_is_the_last_of_every_step():
    p = members(lift=False)
    proj = np.random.default_rng(5).standard_normal((9, 2, 3, 2 * C))
    every = mamba.forward(p, proj, last_only=False)[0]
    last = mamba.forward(p, proj, last_only=True)[0]
    np.testing.assert_allclose(last, every[-1:], rtol=1e-13, atol=1e-15)


# -- causality and the zero padding ------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("t", [0, 3, 6])
def test_an_input_changes_no_output_before_it(method, t):
    p = members(lift=False)
    proj = np.random.default_rng(6).standard_normal((10, 2, 3, 2 * C))
    changed = proj.copy()
    changed[t] += 1.0
    before, after = (mamba.forward(p, x, last_only=False, method=method)[0] for x in (proj, changed))
    assert np.array_equal(before[:t], after[:t])
    assert np.all(np.abs(before[t:] - after[t:]).max(axis=(1, 2, 3)) > 1e-6)  # it moves every later output
    dy = np.zeros_like(before)
    dy[t] = 1.0  # the gradient of step t's outputs reaches no later input
    _, d_proj, _ = mamba.backward(p, mamba.forward(p, proj, last_only=False, method=method)[1], dy)
    assert not np.any(d_proj[t + 1 :]) and np.all(np.abs(d_proj[: t + 1, :, :, :C]).max(axis=(1, 2, 3)) > 0)


def test_the_convolution_is_its_sum_over_the_last_k_steps_with_zeros_before_the_first():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 2, 3, C))
    w, b = rng.standard_normal((2, C, mamba.CONV_WIDTH)), rng.standard_normal((2, C))
    K = mamba.CONV_WIDTH
    padded = np.concatenate([np.zeros((K - 1,) + x.shape[1:]), x])
    loop = np.array([b[:, None, :] + np.einsum("keBc,eck->eBc", padded[t : t + K], w) for t in range(6)])
    np.testing.assert_allclose(mamba.causal_conv(x, w, b), loop, rtol=1e-13, atol=1e-14)
    # the padding is zeros: a past of zero vectors gives the first steps' outputs again
    later = mamba.causal_conv(np.concatenate([np.zeros((5,) + x.shape[1:]), x]), w, b)[5:]
    np.testing.assert_allclose(later, mamba.causal_conv(x, w, b), rtol=1e-13, atol=1e-14)


def _one_hot(tokens, alphabet=D):
    """One sequence of one-hot tokens for two members: ``(T, 2, 1, alphabet)``."""
    return np.broadcast_to(np.eye(alphabet)[tokens][:, None, None, :], (len(tokens), 2, 1, alphabet))


def test_the_gate_tells_the_first_token_from_a_later_copy_where_the_bare_scan_cannot():
    """Token 0, three blanks (token 3), token 0, three blanks, token 0: the first copy's window holds the padding's
    zeros, the later two the same three blanks. The block's step size Delta differs at the first copy and is the
    same at the later two; the bare scan's, which reads the current token alone, is the same at all three."""
    tokens = [0, 3, 3, 3, 0, 3, 3, 3, 0]
    u = _one_hot(tokens)
    p = members(lift=False)
    delta = mamba.forward(p, projection(p, u), last_only=False)[1]["inner"]["delta"]
    first, second, third = delta[0], delta[4], delta[8]
    np.testing.assert_allclose(third, second, rtol=1e-12)
    assert np.all(np.abs(first - second).max(axis=(1, 2)) > 1e-3 * np.abs(second).max())  # every member
    bare = {k: v[None] for k, v in selective.draw(np.random.default_rng(0), D, C, N).items()}
    x = np.einsum("teBd,ecd->teBc", u[:, :1], bare["W_in"]) + bare["b_in"][None, :, None, :]
    bare_delta = selective.forward(bare, x, last_only=False)[1]["delta"]
    np.testing.assert_allclose(bare_delta[0], bare_delta[4], rtol=1e-12)
    np.testing.assert_allclose(bare_delta[8], bare_delta[4], rtol=1e-12)
    # a past of zero vectors is the padding itself: then the later copy's step size is the first's
    zeros = np.array(_one_hot([0, 0, 0, 0, 0]))
    zeros[1:4] = 0.0
    delta = mamba.forward(p, projection(p, zeros), last_only=False)[1]["inner"]["delta"]
    np.testing.assert_allclose(delta[4], delta[0], rtol=1e-12)


# -- in the lab --------------------------------------------------------------------------------------------------


def test_the_block_is_a_model_of_the_lab_and_of_the_chapters_specs():
    assert "mamba" in LINEAR_MODELS and "mamba" in lab.ALL_MODELS and cells.protocol("mamba") == "linear"
    assert cells.LABELS["mamba"] == "Mamba block" and cells.LABELS["selective"] == "S6 without its convolution"
    task = recall(lag=4, alphabet=4)
    ens = lab.make_ensemble(task, "mamba", [0, 1], hidden=16)
    assert isinstance(ens, LinearEnsemble) and ens.state_size == 8
    assert ens.params["conv_w_l0"].shape == (2, mamba.EXPAND * 16, mamba.CONV_WIDTH)
    assert lab.Model(model="mamba", hidden=16).model == "mamba"
    spec = by_design.Spec.parse("mamba:2")
    assert (str(spec), spec.label, spec.key) == ("mamba:2", "Mamba block, 2 layers", "mamba2")
    assert spec.options() == {"model": "mamba", "layers": 2}
    assert by_design.Spec.parse("mamba").label == "Mamba block"
    run = by_design.DesignRun(by_design.Spec.parse("mamba:2"), "recall", lag=3, seeds=(0, 1))
    assert run.cost == by_design.STEP_COST["mamba"] * 2 * (3 + 2) * 2 * by_design.BUDGET
    assert by_design.Spec.parse("selective").label == "S6 without its convolution"


def test_a_member_of_the_block_draws_the_scans_arrays_as_the_bare_scan_draws_them():
    """After the projection and the convolution, the block draws S6's arrays with selective.draw_scan."""
    rng = np.random.default_rng(0)
    rng.uniform(size=2 * C * D + C * mamba.CONV_WIDTH + C)  # the projection, the convolution's weights and bias
    inner = selective.draw_scan(rng, C, N)
    p = mamba.draw(np.random.default_rng(0), D, H, N)
    for name, value in inner.items():
        assert np.array_equal(p[name], value), name
    assert np.array_equal(np.exp(p["A_log"][0]), np.arange(1.0, N + 1))
    assert np.all(np.abs(p["conv_w"]) <= 0.5) and np.all(np.abs(p["W_out"]) <= 1 / np.sqrt(C))


# -- arguments ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: LinearEnsemble("mamba", 2, 4, 1, [0], state_size=0), "state_size must be .*got 0"),
        (lambda: LinearEnsemble("mamba", 2, 4, 1, [0], layers=0), "layers must be .*got 0"),
        (lambda: LinearEnsemble("mamba", 2, 4, 1, [0], method="tree"), "method must be one of 'loop', 'scan'"),
        (lambda: LinearEnsemble("mamba", 2, 0, 1, [0]), "hidden_size must be .*got 0"),
        (lambda: LinearEnsemble("mambo", 2, 4, 1, [0]), "model must be one of .*'mamba'.*got 'mambo'"),
        (lambda: lab.make_ensemble(recall(lag=3), "mamba", [0], init="chrono"), "init sets the LSTM's gates.*'mamba'"),
        (lambda: by_design.Spec.parse("mamba:r0.9"), "model must be a model: .*'mamba'.*got 'mamba:r0.9'"),
        (lambda: by_design.Spec.parse("mamba:0"), "model must be a model: .*got 'mamba:0'"),
    ],
)
def test_bad_arguments_are_refused_naming_the_argument_the_value_and_what_is_allowed(call, message):
    with pytest.raises(ValueError, match=message):
        call()

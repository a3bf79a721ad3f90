"""rnnmem's RNN, LSTM and GRU against torch.nn.RNN, LSTM and GRU (one layer, time first).

Outputs, final states and every gradient (the four parameters, ``x``, ``h0``,
``c0``) must agree to 1e-10 in float64 and 1e-4 in float32, measured as the
largest difference relative to the largest entry of torch's array, on small
and degenerate shapes (T, B, H = 1), a sequence of 300 steps, and weights
scaled up until the gates saturate.

A tanh RNN with weights scaled up is chaotic: over 300 steps float32 rounding
alone moves its outputs by more than 1e-4 (torch in float32 against torch in
float64 on the same weights). Where the float32 comparison misses 1e-4, it must
be within three times torch's own float32 error against float64.
"""

import numpy as np
import pytest

from rnnmem import gru, lstm, rnn
from rnnmem.gru import GRU
from rnnmem.lstm import LSTM
from rnnmem.rnn import RNN

pytestmark = pytest.mark.torch

OURS = {"rnn": RNN, "lstm": LSTM, "gru": GRU}
TOLERANCE = {np.float64: 1e-10, np.float32: 1e-4}
KEYS = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")

SHAPES = [  # T, B, D, H, weight scale
    (1, 1, 1, 1, 1.0),
    (1, 3, 2, 4, 1.0),
    (6, 1, 3, 1, 1.0),
    (9, 4, 5, 6, 1.0),
    (300, 2, 3, 8, 1.0),
    (40, 3, 4, 5, 5.0),
    (40, 3, 4, 5, 10.0),
    (300, 2, 3, 6, 8.0),
    (120, 16, 5, 64, 1.0),  # several LSTM backward chunks of steps (51 each here), the last one short
]


def relative(ours, theirs):
    theirs = np.asarray(theirs, dtype=np.float64)
    diff = np.abs(np.asarray(ours, dtype=np.float64) - theirs).max()
    return float(diff / max(np.abs(theirs).max(), np.finfo(np.float64).tiny))


def torch_module(torch, kind, D, H, dtype, scale, seed):
    torch.manual_seed(seed)
    module = {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[kind](D, H)
    module = module.to({np.float64: torch.float64, np.float32: torch.float32}[dtype])
    with torch.no_grad():
        for p in module.parameters():
            p.mul_(scale)
    return module


def make_data(kind, T, B, D, H, dtype, seed=0):
    """Input, initial state, and the loss's weights on the outputs and final state."""
    rng = np.random.default_rng(seed)
    parts = 2 if kind == "lstm" else 1
    return {
        "x": rng.standard_normal((T, B, D)).astype(dtype),
        "states": [rng.standard_normal((B, H)).astype(dtype) for _ in range(parts)],
        "d_out": rng.standard_normal((T, B, H)).astype(dtype),
        "d_final": [rng.standard_normal((B, H)).astype(dtype) for _ in range(parts)],
    }


def run_torch(torch, kind, module, data):
    """Outputs, final state and every gradient from torch, as numpy arrays keyed like ours."""
    dtype = next(module.parameters()).dtype
    names = ("h", "c") if kind == "lstm" else ("h",)
    x = torch.tensor(data["x"], dtype=dtype, requires_grad=True)
    states = [torch.tensor(s[None], dtype=dtype, requires_grad=True) for s in data["states"]]
    outputs, final = module(x, tuple(states) if kind == "lstm" else states[0])
    final = final if kind == "lstm" else (final,)
    loss = (outputs * torch.tensor(data["d_out"], dtype=dtype)).sum()
    for f, d in zip(final, data["d_final"]):
        loss = loss + (f * torch.tensor(d[None], dtype=dtype)).sum()
    for p in module.parameters():
        p.grad = None
    loss.backward()
    result = {"outputs": outputs.detach().numpy(), "x": x.grad.numpy()}
    for name, f, s in zip(names, final, states):
        result[f"{name}_T"] = f.detach().numpy()[0]
        result[f"{name}0"] = s.grad.numpy()[0]
    result.update({key: p.grad.numpy() for key, p in module.named_parameters()})
    return result


def run_ours(kind, model, data):
    """The same from rnnmem, checking the dtype and the keys of the gradients."""
    pack = tuple if kind == "lstm" else (lambda parts: parts[0])
    outputs, final = model.forward(data["x"], pack(data["states"]))
    grads = model.backward(data["d_out"], pack(data["d_final"]))
    final = final if kind == "lstm" else (final,)
    assert set(grads) == set(KEYS) | {"x"} | {f"{n}0" for n in model.state_names}
    result = {"outputs": outputs, **grads}
    result.update({f"{name}_T": f for name, f in zip(model.state_names, final)})
    for key, value in result.items():
        assert value.dtype == model.dtype, key
    return result


def errors(ours, theirs):
    assert set(ours) == set(theirs)
    return {key: relative(ours[key], theirs[key]) for key in theirs}


def from_module(kind, module):
    return OURS[kind].from_torch_state_dict({k: v.detach().numpy() for k, v in module.state_dict().items()})


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("T,B,D,H,scale", SHAPES)
@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_matches_torch(torch, kind, T, B, D, H, scale, dtype):
    module = torch_module(torch, kind, D, H, dtype, scale, seed=0)
    model = from_module(kind, module)
    assert model.dtype == dtype
    data = make_data(kind, T, B, D, H, dtype)
    ours = run_ours(kind, model, data)
    err = errors(ours, run_torch(torch, kind, module, data))
    worst = max(err, key=err.get)
    if dtype == np.float32 and err[worst] >= TOLERANCE[dtype]:
        # Ill-conditioned (see the module): both float32 runs against float64.
        reference = run_torch(torch, kind, module.double(), data)
        torch_own = errors(run_torch(torch, kind, module.float(), data), reference)
        ours_err = errors(ours, reference)
        allowed = {k: 3 * max(torch_own[k], TOLERANCE[dtype]) for k in ours_err}
        worst = max(ours_err, key=lambda k: ours_err[k] / allowed[k])
        assert ours_err[worst] < allowed[worst], (
            f"{worst}: {ours_err[worst]:.2e} against float64, torch's own {torch_own[worst]:.2e}"
        )
        return
    assert err[worst] < TOLERANCE[dtype], f"{worst}: {err[worst]:.2e} ({err})"


def saturated_fraction(kind, model, x):
    """The share of sigmoid gate values within 0.01 of 0 or 1 (slope below 0.01) along a run."""
    outputs, _ = model.forward(x)
    T, B, _ = x.shape
    h = np.concatenate([np.zeros((1, B, model.hidden_size)), outputs])
    W = [model.W_ih, model.W_hh, model.b_ih, model.b_hh]
    fractions = []
    for t in range(T):
        if kind == "lstm":
            cell = lstm.step(x[t], h[t], np.zeros_like(h[t]), *W)
            gates = np.concatenate([cell.i, cell.f, cell.o])
        else:
            unit = gru.step(x[t], h[t], *W)
            gates = np.concatenate([unit.r, unit.z])
        fractions.append(np.mean((gates < 0.01) | (gates > 0.99)))
    return float(np.mean(fractions))


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_scaled_weights_do_saturate_the_gates(torch, kind):
    """The scaled cases above test what they claim: scaled by 8, a third of the gates or more saturate."""
    x = np.random.default_rng(0).standard_normal((40, 3, 4))
    scaled = from_module(kind, torch_module(torch, kind, 4, 5, np.float64, 8.0, seed=0))
    plain = from_module(kind, torch_module(torch, kind, 4, 5, np.float64, 1.0, seed=0))
    assert saturated_fraction(kind, scaled, x) > 0.3
    assert saturated_fraction(kind, plain, x) < 0.05


def test_torch_state_dict_round_trips_both_ways(torch):
    module = torch.nn.LSTM(3, 4).double()
    sd = module.state_dict()
    # torch -> rnnmem: tensors are accepted as they are.
    model = LSTM.from_torch_state_dict(sd)
    for key, value in model.to_torch_state_dict().items():
        np.testing.assert_array_equal(value, sd[key].numpy())
    # rnnmem -> torch: a fresh module loads ours and computes the same outputs.
    ours = LSTM(3, 4, seed=7)
    fresh = torch.nn.LSTM(3, 4).double()
    fresh.load_state_dict({k: torch.from_numpy(v) for k, v in ours.to_torch_state_dict().items()})
    x = np.random.default_rng(1).standard_normal((5, 2, 3))
    expected, _ = fresh(torch.from_numpy(x))
    outputs, _ = ours.forward(x)
    assert relative(outputs, expected.detach().numpy()) < 1e-12


def test_float32_state_dict_gives_a_float32_model(torch):
    module = torch.nn.GRU(2, 3)
    model = GRU.from_torch_state_dict(module.state_dict())
    assert model.dtype == np.float32 and model.W_hh.dtype == np.float32
    assert GRU.from_torch_state_dict(module.state_dict(), dtype=np.float64).dtype == np.float64


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_initialization_is_torch_like(torch, kind):
    """Every parameter uniform on (-1/sqrt(H), 1/sqrt(H)): same bounds, close moments."""
    H = 64
    model = OURS[kind](16, H, seed=0)
    module = torch_module(torch, kind, 16, H, np.float64, 1.0, seed=0)
    bound = 1 / np.sqrt(H)
    for key, theirs in module.state_dict().items():
        ours = model.parameters()[key]
        assert ours.shape == tuple(theirs.shape)
        assert np.abs(ours).max() <= bound and np.abs(theirs.numpy()).max() <= bound
        assert abs(ours.std() - bound / np.sqrt(3)) < 0.2 * bound


def test_step_functions_match_torch_cells(torch):
    rng = np.random.default_rng(4)
    x, h, c = rng.standard_normal((3, 2)), rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    for kind, cell in (
        ("rnn", torch.nn.RNNCell(2, 4)),
        ("lstm", torch.nn.LSTMCell(2, 4)),
        ("gru", torch.nn.GRUCell(2, 4)),
    ):
        cell = cell.double()
        W = [p.detach().numpy() for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)]
        xt, ht, ct = (torch.from_numpy(a) for a in (x, h, c))
        if kind == "lstm":
            h_t, c_t = cell(xt, (ht, ct))
            s = lstm.step(x, h, c, *W)
            assert relative(s.c, c_t.detach().numpy()) < 1e-14
            assert relative(s.h, h_t.detach().numpy()) < 1e-14
        elif kind == "gru":
            assert relative(gru.step(x, h, *W).h, cell(xt, ht).detach().numpy()) < 1e-14
        else:
            assert relative(rnn.step(x, h, *W), cell(xt, ht).detach().numpy()) < 1e-14

"""The recorded torch.nn.LSTM run in rnnmem.data: rnnmem reproduces it, and so does torch.

The first tests need numpy alone. The last two compare with PyTorch through
the ``torch`` fixture of ``tests/conftest.py`` (its ``require_torch``):
skipped with the reason where torch is missing, failed under CI.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from rnnmem.data import load_torch_lstm_example
from rnnmem.lstm import LSTM

TOLERANCE = 1e-12
SCRIPT = Path(__file__).resolve().parents[1] / "tools" / "make_torch_lstm_example.py"


def max_diff(a, b) -> float:
    return float(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)).max())


def test_the_example_is_float64_and_shaped_as_documented():
    ex = load_torch_lstm_example()
    T, B, D = ex.x.shape
    H = ex.state_dict["weight_hh_l0"].shape[1]
    assert (T, B, D, H) == (7, 2, 3, 4)
    shapes = {k: v.shape for k, v in ex.state_dict.items()}
    assert shapes == {
        "weight_ih_l0": (4 * H, D),
        "weight_hh_l0": (4 * H, H),
        "bias_ih_l0": (4 * H,),
        "bias_hh_l0": (4 * H,),
    }
    arrays = [ex.x, ex.outputs, *ex.state, *ex.final_state, *ex.state_dict.values()]
    assert all(a.dtype == np.float64 for a in arrays)
    assert ex.outputs.shape == (T, B, H) and all(s.shape == (B, H) for s in (*ex.state, *ex.final_state))
    assert np.array_equal(ex.outputs[-1], ex.final_state[0])


def test_rnnmem_reproduces_the_recorded_outputs():
    ex = load_torch_lstm_example()
    model = LSTM.from_torch_state_dict(ex.state_dict)
    outputs, (h, c) = model.forward(ex.x, ex.state)
    assert max_diff(outputs, ex.outputs) < TOLERANCE
    assert max_diff(h, ex.final_state[0]) < TOLERANCE
    assert max_diff(c, ex.final_state[1]) < TOLERANCE


def test_a_wrong_state_is_not_reproduced():
    """The check has teeth: a perturbed weight moves the outputs far beyond the tolerance."""
    ex = load_torch_lstm_example()
    sd = {k: v.copy() for k, v in ex.state_dict.items()}
    sd["weight_hh_l0"][5, 1] += 1e-6
    outputs, _ = LSTM.from_torch_state_dict(sd).forward(ex.x, ex.state)
    assert max_diff(outputs, ex.outputs) > 1e-9


@pytest.mark.torch
def test_torch_reproduces_the_recorded_outputs(torch):
    ex = load_torch_lstm_example()
    D, H = ex.x.shape[2], ex.state_dict["weight_hh_l0"].shape[1]
    module = torch.nn.LSTM(D, H).to(torch.float64)
    module.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in ex.state_dict.items()})
    h0, c0 = (torch.from_numpy(s.copy())[None] for s in ex.state)
    with torch.no_grad():
        outputs, (h_n, c_n) = module(torch.from_numpy(ex.x.copy()), (h0, c0))
    assert max_diff(outputs.numpy(), ex.outputs) < TOLERANCE
    assert max_diff(h_n[0].numpy(), ex.final_state[0]) < TOLERANCE
    assert max_diff(c_n[0].numpy(), ex.final_state[1]) < TOLERANCE


@pytest.mark.torch
def test_the_seeded_script_writes_the_saved_example(torch):
    spec = importlib.util.spec_from_file_location("make_torch_lstm_example", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    fresh = script.make_example()
    ex = load_torch_lstm_example()
    saved = {
        **ex.state_dict,
        "x": ex.x,
        "h0": ex.state[0],
        "c0": ex.state[1],
        "outputs": ex.outputs,
        "h_n": ex.final_state[0],
        "c_n": ex.final_state[1],
    }
    assert sorted(fresh) == sorted([*saved, "torch_version"])
    for key, value in saved.items():
        assert fresh[key].shape == value.shape, key
        assert max_diff(fresh[key], value) < TOLERANCE, key

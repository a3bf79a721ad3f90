"""The ensemble's backward pass with a gradient entering at every step (``Ensemble.backward(d_steps=...)``)."""

from __future__ import annotations

import numpy as np
import pytest

from rnnmem.ensemble import MODELS, Ensemble


def _states(ens: Ensemble, x: np.ndarray) -> np.ndarray:
    """Every hidden state of the latest forward pass, ``(T, E, B, H)``."""
    ens.forward(x)
    cache = ens._cache
    assert cache is not None
    return cache["rows"][1 : cache["T"] + 1, : ens.hidden_size].transpose(0, 2, 3, 1).copy()


@pytest.mark.parametrize("model", MODELS)
def test_a_gradient_at_every_step_matches_finite_differences(model):
    """The loss sum_t <G_t, h_t>, which reads every state: its gradient, weight by weight, against differences."""
    rng = np.random.default_rng(0)
    ens = Ensemble(model, 3, 4, 2, seeds=[0, 1])
    x = rng.normal(size=(5, 3, 3))
    G = rng.normal(size=(5, 2, 3, 4))
    _states(ens, x)
    grads = ens.backward(None, d_steps=G)
    eps = 1e-6
    for name in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0"):
        p = ens.params[name]
        for index in [(0,) + (0,) * (p.ndim - 1), (1,) + tuple(s - 1 for s in p.shape[1:])]:
            keep = p[index]
            p[index] = keep + eps
            up = (G * _states(ens, x)).sum(axis=(0, 2, 3))
            p[index] = keep - eps
            down = (G * _states(ens, x)).sum(axis=(0, 2, 3))
            p[index] = keep
            numeric = (up - down)[index[0]] / (2 * eps)
            assert np.isclose(grads[name][index], numeric, rtol=1e-5, atol=1e-7), (name, index)


@pytest.mark.parametrize("model", MODELS)
def test_a_gradient_at_the_last_step_alone_is_the_last_states_gradient_bit_for_bit(model):
    rng = np.random.default_rng(1)
    ens = Ensemble(model, 3, 4, 2, seeds=[0, 1], dtype=np.float32)
    x = rng.normal(size=(6, 5, 3)).astype(np.float32)
    h = ens.forward(x)
    d_last = rng.normal(size=h.shape)
    every = np.zeros((6,) + h.shape)
    every[-1] = d_last
    want = ens.backward(d_last, step_norms=True)
    got = ens.backward(None, d_steps=every, step_norms=True)
    assert sorted(got) == sorted(want)
    for name in want:
        assert np.array_equal(got[name], want[name]), name


def test_the_gradients_must_have_the_shapes_of_the_states():
    ens = Ensemble("gru", 3, 4, 2, seeds=[0, 1])
    ens.forward(np.zeros((5, 3, 3)))
    with pytest.raises(ValueError, match=r"d_steps must have shape \(5, 2, 3, 4\)"):
        ens.backward(None, d_steps=np.zeros((4, 2, 3, 4)))

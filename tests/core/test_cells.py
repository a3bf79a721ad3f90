"""The cell registry: each cell's class, gate names and gate count, and the modules that read them there."""

from __future__ import annotations

import numpy as np
import pytest

from rnnmem import GRU, LSTM, RNN, cells, ensemble, gate_arithmetic, lab, linear_ensemble, lstm, params
from rnnmem.cell_paths import random_gru


def test_the_gates_are_those_of_the_books_equations():
    # rnnmem.rnn, rnnmem.lstm, rnnmem.gru: one block for the tanh RNN, i|f|g|o, r|z|n.
    assert {name: cells.gate_names(name) for name in ("rnn", "gru", "lstm")} == {
        "rnn": ("h",),
        "gru": ("r", "z", "n"),
        "lstm": ("i", "f", "g", "o"),
    }
    assert {name: cells.MODELS[name] for name in ("rnn", "gru", "lstm")} == {"rnn": RNN, "gru": GRU, "lstm": LSTM}


def test_one_registry_two_protocols_and_everything_derived_from_it():
    """Every model is registered once, under one protocol; the ensembles' and the lab's lists are read from it."""
    assert cells.MODELS is cells.CLASSIC and cells.NAMES == tuple(cells.CLASSIC)
    assert not set(cells.CLASSIC) & set(cells.LINEAR)
    assert cells.PROTOCOLS == {"classic": cells.CLASSIC, "linear": cells.LINEAR}
    for kind, part in cells.PROTOCOLS.items():
        assert all(cells.protocol(name) == kind for name in part)
    assert set(cells.LABELS) == set(cells.CLASSIC) | set(cells.LINEAR)
    assert cells.GATES == {name: len(model.gate_names) for name, model in cells.CLASSIC.items()}
    assert set(cells.TAUGHT) <= set(cells.CLASSIC)
    assert set(ensemble.MODELS) <= set(cells.CLASSIC) and ensemble.MODELS == tuple(ensemble.KERNELS)
    assert linear_ensemble.LINEAR_MODELS == tuple(cells.LINEAR)
    assert lab.ALL_MODELS == ensemble.MODELS + linear_ensemble.LINEAR_MODELS
    for module in cells.LINEAR.values():  # the linear protocol (rnnmem.cells's docstring)
        assert all(callable(getattr(module, f)) for f in ("shapes", "draw", "forward", "backward"))
        assert isinstance(module.PROJECTION, tuple)


def test_gate_counts_are_read_from_the_registry_as_it_is_now(monkeypatch):
    Two = type("Two", (RNN,), {"gate_names": ("a", "b")})  # a cell of two blocks
    monkeypatch.setitem(cells.CLASSIC, "two", Two)
    assert cells.GATES["two"] == 2 and "two" in cells.GATES and cells.check_cell("two") == "two"
    assert params.layer_count("two", 3, 5) == 2 * 5 * (3 + 5 + 1)


@pytest.mark.parametrize("name", cells.NAMES)
def test_every_module_that_stacks_blocks_reads_the_registry(name):
    G = cells.GATES[name]
    model = cells.MODELS[name](3, 5, seed=0)
    assert model.W_hh.shape == (G * 5, 5) and model.b_ih.shape == (G * 5,)
    assert params.layer_parameters(name, 3, 5).rows[1] == ("recurrent weights", G * 5 * 5)
    if name not in ensemble.KERNELS:  # ARCHITECTURE.md: the ensemble refuses a cell without kernels by name
        with pytest.raises(ValueError, match=f"model must be one of .*, got {name!r}"):
            ensemble.Ensemble(name, 3, 5, 4, [0, 1])
        return
    ens = ensemble.Ensemble(name, 3, 5, 4, [0, 1])
    assert ens.params["weight_hh_l0"].shape == (2, G * 5, 5)
    assert type(ens.member(1)) is cells.MODELS[name]


def test_gate_slice_picks_the_block_the_step_function_reads():
    H = 3
    model = LSTM(2, H, seed=0)
    forget = cells.gate_slice("lstm", "f", H)
    model.b_ih[:] = 0
    model.b_ih[forget] = 50.0  # the forget gate alone held at one
    step = lstm.step(np.zeros(2), np.zeros(H), np.ones(H), model.W_ih, model.W_hh, model.b_ih, model.b_hh)
    assert np.all(step.f > 0.999) and np.all(step.i < 0.999)
    gru_bias = random_gru(2, H, seed=0, update_bias=40.0)["b_ih"]
    assert np.all(gru_bias[cells.gate_slice("gru", "z", H)] > 39)
    assert np.all(np.abs(np.delete(gru_bias, np.arange(H, 2 * H))) < 1)


def test_the_solved_cells_have_the_registry_s_block_count():
    case = gate_arithmetic.two_unit_lstm()
    assert case.W_ih.shape[0] == case.b_ih.size == cells.GATES["lstm"] * 2
    assert [r.gate for r in gate_arithmetic.two_unit_rows("gru")][::2] == list(cells.gate_names("gru"))


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: cells.gate_names("transformer"),
            f"cell must be one of {', '.join(map(repr, cells.CLASSIC))}, got 'transformer'",
        ),
        (
            lambda: cells.protocol("cnn"),
            f"model must be one of {', '.join(map(repr, [*cells.CLASSIC, *cells.LINEAR]))}, got 'cnn'",
        ),
        (lambda: cells.gate_slice("gru", "f", 3), "gate must be one of 'r', 'z', 'n', got 'f'"),
        (lambda: cells.gate_slice("lstm", "f", 0), "hidden must be a whole number >= 1, got 0"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == message

"""rnnmem.checks and the rules the whole package shares: one seed rule, one sigmoid and logit, one draw."""

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import rnnmem
from rnnmem import checks, dropout, init, jacobians, memory, tasks, train
from rnnmem.checks import check_seed
from rnnmem.gradcheck import gradcheck
from rnnmem.gru import GRU
from rnnmem.lstm import LSTM
from rnnmem.rnn import RNN

CORE = [importlib.import_module(f"rnnmem.{m.name}") for m in pkgutil.iter_modules(rnnmem.__path__) if m.name != "site"]

SEED_TAKERS: dict[str, Callable[[Any], Any]] = {
    "LSTM": lambda seed: LSTM(2, 3, seed=seed).W_hh,
    "init.pytorch_weights": lambda seed: init.pytorch_weights(2, 3, gates=4, seed=seed)["W_hh"],
    "init.chrono_biases": lambda seed: init.chrono_biases(3, 10.0, seed=seed)[0],
    "dropout.inverted_mask": lambda seed: dropout.inverted_mask((6,), 0.5, seed=seed),
    "jacobians.random_rnn": lambda seed: jacobians.random_rnn(2, 3, 0.9, seed=seed)["W_ih"],
    "train.minibatches": lambda seed: next(train.minibatches(8, 8, seed=seed)),
    "tasks.recall().sample": lambda seed: tasks.recall(lag=3).sample(4, seed=seed).inputs,
    "gradcheck": lambda seed: gradcheck(RNN(1, 1, seed=0), np.ones((2, 1, 1)), seed=seed).worst,
}


@pytest.mark.parametrize("name", list(SEED_TAKERS))
@pytest.mark.parametrize("bad", [-1, 1.5, "0", True, [0]])
def test_every_seed_taker_refuses_the_same_seeds_with_the_same_message(name, bad):
    with pytest.raises(ValueError, match=r"^seed must be a whole number >= 0, None or a numpy.random.Generator, got "):
        SEED_TAKERS[name](bad)


@pytest.mark.parametrize("name", [n for n in SEED_TAKERS if n != "gradcheck"])
def test_every_seed_taker_takes_an_int_a_generator_and_none(name):
    take = SEED_TAKERS[name]
    np.testing.assert_array_equal(take(7), take(np.int64(7)))
    np.testing.assert_array_equal(take(7), take(np.random.default_rng(7)))
    assert np.shape(take(None)) == np.shape(take(7))


def test_check_seed_passes_a_generator_through_and_makes_one_from_an_int():
    rng = np.random.default_rng(3)
    assert check_seed("seed", rng) is rng
    assert check_seed("seed", 3).integers(1 << 30) == np.random.default_rng(3).integers(1 << 30)
    assert isinstance(check_seed("seed", None), np.random.Generator)


def test_one_sigmoid_and_one_logit_in_the_whole_core():
    owners: dict[str, set[str]] = {}
    for module in CORE:
        for name, obj in vars(module).items():
            if inspect.isfunction(obj) and name.lstrip("_") in ("sigmoid", "logit", "expit", "rng"):
                owners.setdefault(name.lstrip("_"), set()).add(obj.__module__ + "." + obj.__qualname__)
    assert owners == {"sigmoid": {"rnnmem.memory.sigmoid"}, "logit": {"rnnmem.memory.logit"}}


def test_sigmoid_keeps_float32_and_refuses_nan_but_takes_infinities():
    z = np.array([-1e4, -30.0, 0.0, 30.0], dtype=np.float32)
    assert memory.sigmoid(z).dtype == np.float32
    assert memory.sigmoid(np.array([-np.inf, np.inf])).tolist() == [0.0, 1.0]
    assert memory.sigmoid(-30.0) == pytest.approx(9.357622968840175e-14, rel=1e-14)
    with pytest.raises(ValueError, match="z must not be NaN"):
        memory.sigmoid(np.array([0.0, np.nan]))
    assert memory.logit(memory.sigmoid(np.array([-3.0, 0.5]))) == pytest.approx([-3.0, 0.5], rel=1e-12)


@pytest.mark.parametrize("cls,gates", [(RNN, 1), (LSTM, 4), (GRU, 3)])
def test_the_models_start_from_the_one_draw(cls, gates):
    model = cls(3, 5, seed=4)
    drawn = init.pytorch_weights(3, 5, gates=gates, seed=4)
    for name, value in drawn.items():
        np.testing.assert_array_equal(getattr(model, name), value)
    assert all(np.abs(w).max() <= 1 / np.sqrt(5) for w in drawn.values())


def test_random_lstm_is_the_one_draw_scaled():
    W = jacobians.random_lstm(2, 4, seed=1, scale=3.0)
    drawn = init.pytorch_weights(2, 4, gates=4, seed=1, scale=3.0)
    for name, value in W.items():
        np.testing.assert_array_equal(value, drawn[name])


def test_checks_is_public_and_documented():
    assert not hasattr(rnnmem, "_validate")
    assert "checks" in rnnmem.__all__ and set(checks.__all__) >= {"check_seed", "check_finite", "check_shape"}

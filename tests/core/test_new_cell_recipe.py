"""ARCHITECTURE.md's "A new recurrent cell", carried out: a toy cell registered as the guide says trains in the lab.

The toy is the linear recurrence :math:`h_t = W_{hh} h_{t-1} + W_{ih} x_t + b_{ih} + b_{hh}` (one block), defined
here in the places the guide lists: its ``Recurrent`` subclass (place 1, its module), one entry in
``rnnmem.cells.CLASSIC`` and ``LABELS`` (place 2), and, for the lab, one entry in ``rnnmem.ensemble.KERNELS`` with
its stacked kernels (place 3); these tests are place 4. Registered so (monkeypatched), it trains in the lab, passes
``gradcheck`` single and stacked, leaves the book's tables, the ``gated --params`` command and the API index as they
were, and its module is listed among the API's models with no list edited.
"""

from __future__ import annotations

import argparse
import contextlib
import io

import numpy as np
import pytest

from rnnmem import cells, ensemble, lab, params, tasks
from rnnmem._recurrent import Recurrent
from rnnmem.gradcheck import gradcheck, gradcheck_loss


class Toy(Recurrent):
    """The linear recurrence h_t = W_hh h_{t-1} + W_ih x_t + b_ih + b_hh, torch layout, one block."""

    gate_names = ("h",)
    state_names = ("h",)

    def _forward(self, x: np.ndarray, state: tuple) -> tuple:
        T = x.shape[0]
        hidden = np.empty((T + 1,) + state[0].shape, dtype=self.dtype)
        hidden[0] = state[0]
        for t in range(T):
            hidden[t + 1] = x[t] @ self.W_ih.T + hidden[t] @ self.W_hh.T + self.b_ih + self.b_hh
        return hidden[1:].copy(), (hidden[T].copy(),), {"x": x, "hidden": hidden}

    def _backward(self, cache: dict, d_outputs: np.ndarray, d_final: tuple) -> dict:
        x, hidden = cache["x"], cache["hidden"]
        d_pre = np.empty_like(d_outputs)
        d_rec = np.zeros_like(hidden[0]) if d_final[0] is None else d_final[0].copy()
        for t in range(x.shape[0] - 1, -1, -1):
            d_pre[t] = d_outputs[t] + d_rec
            d_rec = d_pre[t] @ self.W_hh
        d_bias = d_pre.sum(axis=(0, 1))
        return {
            "weight_ih_l0": np.einsum("tbh,tbd->hd", d_pre, x),
            "weight_hh_l0": np.einsum("tbh,tbk->hk", d_pre, hidden[:-1]),
            "bias_ih_l0": d_bias,
            "bias_hh_l0": d_bias.copy(),
            "x": d_pre @ self.W_ih,
            "h0": d_rec,
        }


def toy_forward(ens, rows, T, B, masks, keep, hidden, states):
    """The stacked forward pass (rnnmem.ensemble.Kernels): h_t = [W_hh, W_ih, b] [h_{t-1}; x_t; 1]."""
    p = ens.params
    W = np.concatenate([p["weight_hh_l0"], p["weight_ih_l0"], (p["bias_ih_l0"] + p["bias_hh_l0"])[:, :, None]], axis=2)
    for t in range(T):
        ens._new_state(rows, t, hidden, states)[...] = np.matmul(W, rows[t].transpose(1, 0, 2)).transpose(1, 0, 2)
        ens._mask_state(rows, t, T, hidden, states)
    return {}


def toy_backward(ens, cache, dh, norms):
    """The stacked backward pass: every weight's gradient from the rows, dh_{t-1} = W_hh^T dh_t (times M_t)."""
    H, D = ens.hidden_size, ens.input_size
    rows, T, B = cache["rows"], cache["T"], cache["B"]
    total = np.zeros((ens.size, H, H + D + 1), dtype=ens.dtype)
    for t in range(T - 1, -1, -1):
        if norms is not None:
            norms["h"][:, t] = np.sqrt((dh * dh).sum(axis=0)).mean(axis=1) * B
        total += np.matmul(dh.transpose(1, 0, 2), rows[t].transpose(1, 2, 0))
        dh = np.matmul(ens.params["weight_hh_l0"].transpose(0, 2, 1), dh.transpose(1, 0, 2)).transpose(1, 0, 2)
        if cache["hidden"] is not None:
            dh = dh * cache["hidden"][t]
    bias = total[:, :, H + D]
    return {
        "weight_ih_l0": total[:, :, H : H + D].copy(),
        "weight_hh_l0": total[:, :, :H].copy(),
        "bias_ih_l0": bias.copy(),
        "bias_hh_l0": bias.copy(),
    }


def published() -> dict:
    """What the book and the CLI print of the cells: the chapters' tables, params.cell_comparison, gated --params."""
    from rnnmem.cli import gated
    from rnnmem.site import apipages
    from rnnmem.site.builders import counting_scaling, gates

    parser = argparse.ArgumentParser()
    gated.configure(parser)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = gated.run(parser.parse_args(["--params"]))
    return {
        "gate_costs": repr(gates.gate_costs()),
        "mechanisms": repr(gates.mechanisms()),
        "cell_convention_table": repr(counting_scaling.cell_convention_table()),
        "model_tally_table": repr(counting_scaling.model_tally_table()),
        "cell_comparison": params.cell_comparison(100, 500),
        "gated --params": (code, out.getvalue()),
        "API index": apipages.api_pages()[0].markdown,
    }


def register(monkeypatch) -> str:
    """The toy cell registered as ARCHITECTURE.md says: the registry's entries and the kernel table's.

    The lists derived from them when the modules are imported (cells.NAMES, params.CELLS, ensemble.MODELS,
    lab.ALL_MODELS) are derived again, as a cell written into the source would find them.
    """
    monkeypatch.setitem(cells.CLASSIC, "toy", Toy)
    monkeypatch.setitem(cells.LABELS, "toy", "toy linear RNN")
    monkeypatch.setitem(ensemble.KERNELS, "toy", ensemble.Kernels("toy", toy_forward, toy_backward))
    monkeypatch.setattr(cells, "NAMES", tuple(cells.CLASSIC))
    monkeypatch.setattr(params, "CELLS", cells.NAMES)
    monkeypatch.setattr(ensemble, "MODELS", tuple(ensemble.KERNELS))
    monkeypatch.setattr(lab, "ALL_MODELS", ensemble.MODELS + tuple(cells.LINEAR))
    return "toy"


@pytest.fixture
def toy(monkeypatch):
    return register(monkeypatch)


def test_the_toy_is_refused_by_name_until_registered():
    with pytest.raises(ValueError, match="model must be one of .*, got 'toy'"):
        lab.make_ensemble(tasks.recall(lag=3, alphabet=3), "toy", seeds=[0], hidden=4)
    with pytest.raises(ValueError, match="cell must be one of .*, got 'toy'"):
        params.layer_count("toy", 3, 4)


def test_the_registered_toy_gets_its_counts_and_passes_gradcheck_single_and_stacked(toy):
    assert cells.GATES[toy] == 1 and cells.protocol(toy) == "classic"
    assert params.layer_count(toy, 3, 4) == 4 * (3 + 4 + 1)
    model = Toy(3, 4, seed=0)
    rng = np.random.default_rng(1)
    assert gradcheck(model, rng.standard_normal((5, 2, 3)), rng.standard_normal((2, 4))).worst < 1e-7
    ens = ensemble.Ensemble(toy, 3, 4, 2, seeds=[0, 1])
    x, y = rng.standard_normal((5, 6, 3)), rng.integers(0, 2, 6)
    assert gradcheck_loss(ens, x, y, "classification").worst < 1e-7
    member = ens.member(1)  # the stacked forward pass computes what the single model computes
    assert type(member) is Toy and np.allclose(member.forward(x)[1], ens.forward(x)[1], rtol=0, atol=1e-12)


def test_the_registered_toy_trains_in_the_lab(toy):
    task = tasks.recall(lag=2, alphabet=3)
    result = lab.train(
        task, lab.Model(toy, seeds=[0, 1], hidden=8), lab.Schedule(steps=60, lr=0.01, eval_every=20, batch=16)
    )
    assert result.model == toy and result.ensemble.model == toy
    assert (
        np.isfinite(result.losses).all()
        and (result.losses[:, -5:].mean(axis=1) < result.losses[:, :5].mean(axis=1)).all()
    )


def test_registering_the_toy_leaves_the_book_the_cli_and_the_api_index_unchanged(monkeypatch):
    before = published()
    register(monkeypatch)
    assert "toy" in cells.NAMES and "toy" in lab.ALL_MODELS
    assert published() == before


def test_the_toys_module_is_listed_among_the_models_by_its_registration(monkeypatch, tmp_path):
    """Place 1 is a new module of the package: registered, the API reference lists it among the models, so no
    group of rnnmem.site.apipages is edited (tests/builders/test_apipages.py asks every module to have one)."""
    from rnnmem.site import apipages

    assert apipages.group_of("toy") == apipages.OTHER_GROUP
    register(monkeypatch)
    monkeypatch.setattr(Toy, "__module__", "rnnmem.toy")  # as if written in src/rnnmem/toy.py
    assert apipages.group_of("toy") == apipages.MODELS_GROUP
    package = tmp_path / "rnnmem"
    package.mkdir()
    for name in ("__init__", "rnn", "memory", "toy"):
        (package / f"{name}.py").write_text(f'"""What ``{name}`` holds."""\n')
    models = apipages.nav_entries(apipages.api_pages(package))[1][apipages.MODELS_GROUP]
    assert [next(iter(item)) for item in models] == ["rnnmem.rnn", "rnnmem.toy"]

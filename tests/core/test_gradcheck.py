"""Finite-difference checks of every model's backpropagation, and of the checker itself."""

import numpy as np
import pytest

from rnnmem.gradcheck import GradcheckResult, gradcheck, relative_error
from rnnmem.gru import GRU
from rnnmem.lstm import LSTM
from rnnmem.rnn import RNN

MODELS = {
    "rnn": lambda: RNN(3, 4, seed=1),
    "lstm": lambda: LSTM(3, 4, seed=1),
    "gru-z_keeps-after": lambda: GRU(3, 4, seed=1, update="z_keeps", reset="after"),
    "gru-z_keeps-before": lambda: GRU(3, 4, seed=1, update="z_keeps", reset="before"),
    "gru-z_writes-after": lambda: GRU(3, 4, seed=1, update="z_writes", reset="after"),
    "gru-z_writes-before": lambda: GRU(3, 4, seed=1, update="z_writes", reset="before"),
}


def data(model, T=5, B=2, seed=2):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((T, B, model.input_size))
    parts = [rng.standard_normal((B, model.hidden_size)) for _ in model.state_names]
    return x, parts[0] if len(parts) == 1 else tuple(parts)


@pytest.mark.parametrize("blocks", ["torch", "equations"])
@pytest.mark.parametrize("name", list(MODELS))
def test_every_model_passes(name, blocks):
    model = MODELS[name]()
    x, state = data(model)
    result = gradcheck(model, x, state, blocks=blocks)
    assert result.worst < 1e-7, str(result)
    assert all(0 <= err < 1e-7 for _, err in result.rows)


def test_lstm_rows_in_both_views():
    model = LSTM(2, 3, seed=0)
    x, state = data(model, T=3)
    torch_view = [name for name, _ in gradcheck(model, x, state).rows]
    assert torch_view[:4] == ["W_ih[i]", "W_ih[f]", "W_ih[g]", "W_ih[o]"]
    assert torch_view[12:] == ["b_hh[i]", "b_hh[f]", "b_hh[g]", "b_hh[o]", "h0", "c0", "x"]
    equations = [name for name, _ in gradcheck(model, x, state, blocks="equations", include_x=False).rows]
    assert equations == [
        "W_ii",
        "W_if",
        "W_ig",
        "W_io",
        "W_hi",
        "W_hf",
        "W_hg",
        "W_ho",
        "b_i",
        "b_f",
        "b_g",
        "b_o",
        "h0",
        "c0",
    ]


def test_gru_and_rnn_rows():
    after = GRU(2, 3, seed=0)
    x, h = data(after, T=3)
    rows = [name for name, _ in gradcheck(after, x, h, blocks="equations").rows]
    assert rows == ["W_ir", "W_iz", "W_in", "W_hr", "W_hz", "W_hn", "b_r", "b_z", "b_in", "b_hn", "h0", "x"]
    before = GRU(2, 3, seed=0, reset="before")
    rows = [name for name, _ in gradcheck(before, x, h, blocks="equations").rows]
    assert rows[6:9] == ["b_r", "b_z", "b_n"]
    rnn = RNN(2, 3, seed=0)
    assert [n for n, _ in gradcheck(rnn, x, h).rows] == ["W_ih", "W_hh", "b_ih", "b_hh", "h0", "x"]
    assert [n for n, _ in gradcheck(rnn, x, h, blocks="equations").rows] == ["W_ih", "W_hh", "b", "h0", "x"]


class ForgetGateSlip(LSTM):
    """An LSTM whose backward gets the forget gate's recurrent weights 1% wrong."""

    def _backward(self, cache, d_outputs, d_final):
        grads = super()._backward(cache, d_outputs, d_final)
        H = self.hidden_size
        grads["weight_hh_l0"][H : 2 * H] *= 1.01
        return grads


class DropsFinalCell(LSTM):
    """An LSTM whose backward ignores the gradient arriving at the final cell."""

    def _backward(self, cache, d_outputs, d_final):
        return super()._backward(cache, d_outputs, (d_final[0], None))


def test_detects_a_corrupted_block_and_only_that_block():
    model = ForgetGateSlip(3, 4, seed=1)
    x, state = data(model)
    result = gradcheck(model, x, state)
    errors = result.as_dict()
    assert errors["W_hh[f]"] > 1e-3
    assert result.worst == errors["W_hh[f]"]
    assert all(err < 1e-7 for name, err in errors.items() if name != "W_hh[f]")


def test_detects_a_dropped_final_state_term():
    model = DropsFinalCell(3, 4, seed=1)
    x, state = data(model)
    result = gradcheck(model, x, state)
    assert result.as_dict()["c0"] > 1e-3
    assert result.worst > 1e-3


def test_float32_model_is_refused():
    with pytest.raises(ValueError, match="model must be float64.*got float32.*astype"):
        gradcheck(LSTM(2, 2, dtype=np.float32, seed=0), np.ones((2, 1, 2)))
    model = LSTM(2, 2, dtype=np.float32, seed=0).astype(np.float64)
    assert gradcheck(model, np.ones((2, 1, 2))).worst < 1e-7


def test_bad_arguments_are_refused():
    model = RNN(2, 2, seed=0)
    with pytest.raises(ValueError, match="eps must be a positive"):
        gradcheck(model, np.ones((2, 1, 2)), eps=0.0)
    with pytest.raises(ValueError, match="blocks must be one of 'torch', 'equations', got 'gates'"):
        gradcheck(model, np.ones((2, 1, 2)), blocks="gates")
    with pytest.raises(ValueError, match="x must have shape"):
        gradcheck(model, np.ones((2, 1, 3)))
    with pytest.raises(ValueError, match="model must be an RNN, LSTM or GRU"):
        gradcheck("lstm", np.ones((2, 1, 2)))  # type: ignore[arg-type]  # a bad value on purpose


def test_parameters_are_restored_exactly():
    model = GRU(3, 4, seed=5)
    before = model.to_torch_state_dict()
    x, h = data(model)
    gradcheck(model, x, h, blocks="equations")
    for key, value in model.to_torch_state_dict().items():
        np.testing.assert_array_equal(value, before[key])
    np.testing.assert_array_equal(h, data(model)[1])


def test_result_table_and_relative_error():
    result = GradcheckResult([("W_hh[f]", 1.25e-9), ("h0", 3e-11)], eps=1e-6, blocks="torch")
    text = str(result).splitlines()
    assert text[0].split() == ["block", "worst", "relative", "error"]
    assert text[1].split() == ["W_hh[f]", "1.2e-09"] or text[1].split() == ["W_hh[f]", "1.3e-09"]
    assert text[-1].split()[0] == "worst"
    assert relative_error([2.0, 0.0], [2.0, 0.002]) == pytest.approx(1e-3)
    assert relative_error(np.zeros(3), np.zeros(3)) == 0.0
    assert GradcheckResult().worst == 0.0


def test_the_markdown_table_lives_in_the_site_package():
    from rnnmem.site.tables import gradcheck_table

    assert not hasattr(GradcheckResult, "to_markdown")
    table = gradcheck_table(GradcheckResult([("W_hh[f]", 1.5e-9), ("h0", 3e-11)]))
    assert table.to_markdown().splitlines()[2:] == ["| `W_hh[f]` | 1.5 × 10⁻⁹ |", "| `h0` | 3.0 × 10⁻¹¹ |"]

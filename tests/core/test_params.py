"""Parameter counts: the formulas, the source's numbers, and torch.nn's allocations."""

import pytest

from rnnmem import params


def _numel(module):
    return sum(p.numel() for p in module.parameters())


# --------------------------------------------------------------------------- the source's numbers


def test_gated_layer_formula():
    for d_in, d_h in [(1, 1), (100, 500), (512, 512), (1500, 1500), (3, 7)]:
        assert params.layer_count("lstm", d_in, d_h) == 4 * d_h * (d_in + d_h + 1)


def test_the_66_million_parameter_language_model():
    m = params.model_parameters(10_000, 1500, 1500, layers=2)
    rows = dict(m.rows)
    assert rows["embedding"] == 10_000 * 1500 == 15_000_000
    assert rows["layer 1 (lstm)"] == rows["layer 2 (lstm)"] == 6000 * 3001 == 18_006_000
    assert rows["output projection"] == 1500 * 10_000 + 10_000 == 15_010_000
    assert m.total == 66_022_000
    assert m.vocabulary == 30_010_000
    assert round(100 * m.vocabulary_share) == 45
    assert m.non_embedding == 2 * 18_006_000
    assert m.non_embedding_share == pytest.approx(1 - m.vocabulary_share)
    assert m.table()[-1] == ("total", 66_022_000)


def test_one_512_layer():
    assert params.layer_count("lstm", 512, 512) == 2048 * 1025 == 2_099_200
    assert params.layer_count("lstm", 512, 512, "pytorch") == 2_101_248


def test_lstm_against_gru_at_d100_h500():
    lstm1, gru1 = params.layer_count("lstm", 100, 500), params.layer_count("gru", 100, 500)
    assert (lstm1, gru1) == (1_202_000, 901_500)
    assert lstm1 - gru1 == 300_500
    assert gru1 * 4 == lstm1 * 3  # three quarters, exactly, with one bias vector
    lstm2, gru2 = params.layer_count("lstm", 100, 500, "pytorch"), params.layer_count("gru", 100, 500, "pytorch")
    assert (lstm2, gru2) == (1_204_000, 903_000)
    assert lstm2 - gru2 == 301_000
    assert params.cell_comparison(100, 500)[-1] == ("lstm - gru", 300_500)


def test_bias_conventions():
    assert params.bias_vectors("lstm", "keras") == 1
    assert params.bias_vectors("rnn", "keras") == 1
    assert params.bias_vectors("gru", "keras", reset_after=True) == 2
    assert params.bias_vectors("gru", "keras", reset_after=False) == 1
    assert all(params.bias_vectors(c, "pytorch") == 2 for c in params.CELLS)
    # Keras GRU(units=500) on 100 inputs, reset_after=True: kernel 100x1500, recurrent 500x1500, bias 2x1500
    assert params.layer_count("gru", 100, 500, "keras") == 100 * 1500 + 500 * 1500 + 2 * 1500


def test_layer_breakdown_rows_sum_to_total():
    t = params.layer_parameters("gru", 7, 5, "pytorch")
    assert [p for p, _ in t.rows] == ["input weights", "recurrent weights", "biases"]
    assert t.total == sum(n for _, n in t.rows) == 3 * 5 * (7 + 5 + 2)


def test_tied_readout_keeps_only_its_bias():
    untied = params.model_parameters(1000, 64, 64, layers=1)
    tied = params.model_parameters(1000, 64, 64, layers=1, tied=True)
    assert untied.total - tied.total == 1000 * 64
    assert dict(tied.rows)["output projection (tied: bias only)"] == 1000
    assert tied.vocabulary == 1000 * 64 + 1000


# --------------------------------------------------------------------------- against torch.nn

SIZES = [(1, 1, 1), (3, 5, 1), (10, 20, 2), (32, 64, 3), (100, 500, 1), (512, 512, 1)]


@pytest.mark.torch
@pytest.mark.parametrize("d_in, d_h, layers", SIZES)
@pytest.mark.parametrize("cell, module", [("rnn", "RNN"), ("lstm", "LSTM"), ("gru", "GRU")])
def test_stacks_match_torch(torch, cell, module, d_in, d_h, layers):
    m = getattr(torch.nn, module)(d_in, d_h, num_layers=layers)
    assert params.stack_parameters(cell, d_in, d_h, layers, "pytorch").total == _numel(m)
    single = getattr(torch.nn, module)(d_in, d_h)
    assert params.layer_count(cell, d_in, d_h, "pytorch") == _numel(single)


@pytest.mark.torch
@pytest.mark.parametrize(
    "vocab, d_emb, d_h, layers, cell",
    [
        (50, 8, 16, 2, "lstm"),
        (1000, 32, 32, 1, "gru"),
        (300, 12, 20, 3, "rnn"),
        (10_000, 64, 128, 2, "lstm"),
    ],
)
def test_language_models_match_torch(torch, vocab, d_emb, d_h, layers, cell):
    rnn_type = {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[cell]
    parts = [torch.nn.Embedding(vocab, d_emb), rnn_type(d_emb, d_h, num_layers=layers), torch.nn.Linear(d_h, vocab)]
    m = params.model_parameters(vocab, d_emb, d_h, layers, cell, "pytorch")
    assert m.total == sum(_numel(p) for p in parts)
    assert m.vocabulary == _numel(parts[0]) + _numel(parts[2])
    assert params.embedding_count(vocab, d_emb) == _numel(parts[0])
    assert params.linear_count(d_h, vocab, bias=False) == _numel(torch.nn.Linear(d_h, vocab, bias=False))


@pytest.mark.torch
def test_tied_model_matches_torch(torch):
    emb, lstm, out = torch.nn.Embedding(500, 32), torch.nn.LSTM(32, 32, num_layers=2), torch.nn.Linear(32, 500)
    out.weight = emb.weight  # tying: one shared parameter
    model = torch.nn.ModuleList([emb, lstm, out])
    assert params.model_parameters(500, 32, 32, 2, "lstm", "pytorch", tied=True).total == _numel(model)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: params.layer_count("transformer", 3, 3), "cell"),
        (lambda: params.layer_count("lstm", 0, 3), "d_in"),
        (lambda: params.layer_count("lstm", 3, -1), "d_h"),
        (lambda: params.layer_count("lstm", 3, 2.5), "d_h"),  # type: ignore[arg-type]  # a bad value on purpose
        (lambda: params.layer_count("lstm", 3, 3, "jax"), "convention"),
        (lambda: params.bias_vectors("gru", "keras", reset_after="yes"), "reset_after"),  # type: ignore[arg-type]  # a bad value on purpose
        (lambda: params.stack_parameters("lstm", 3, 3, 0), "layers"),
        (lambda: params.model_parameters(0, 3, 3, 1), "vocab"),
        (lambda: params.model_parameters(10, 3, 4, 1, tied=True), "d_h"),
        (lambda: params.model_parameters(10, 3, 3, 1, tied="no"), "tied"),  # type: ignore[arg-type]  # a bad value on purpose
        (lambda: params.linear_count(3, 3, bias=None), "bias"),  # type: ignore[arg-type]  # a bad value on purpose
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()

"""Where the masks between layers sit: Zaremba et al.'s L + 1 against PyTorch's L - 1, checked against torch."""

from __future__ import annotations

import warnings

import pytest

from rnnmem import dropout


@pytest.mark.parametrize("layers", [1, 2, 3, 5])
def test_counts(layers):
    assert dropout.vertical_mask_count(layers) == layers + 1
    assert dropout.vertical_mask_count(layers, "zaremba") == layers + 1
    assert dropout.vertical_mask_count(layers, "pytorch") == layers - 1


@pytest.mark.parametrize("args, name", [((0,), "layers"), ((2.5,), "layers"), ((2, "keras"), "placement")])
def test_bad_input_names_the_argument(args, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        dropout.vertical_mask_count(*args)


def _one_layer(torch, stack, layer, input_size):
    single = torch.nn.LSTM(input_size, stack.hidden_size)
    with torch.no_grad():
        for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(single, f"{kind}_l0").copy_(getattr(stack, f"{kind}_l{layer}"))
    return single


def test_pytorch_drops_between_layers_only(torch):
    """nn.LSTM(dropout=q) masks the output of every layer but the last: L - 1 masks."""
    torch.manual_seed(0)
    x = torch.randn(6, 2, 3)
    # one layer: no mask at all, training or not (PyTorch warns that dropout needs two layers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        one = torch.nn.LSTM(3, 4, num_layers=1, dropout=0.5)
    one.train()
    with torch.no_grad():
        trained, _ = one(x)
        one.eval()
        evaluated, _ = one(x)
    assert torch.equal(trained, evaluated)
    assert dropout.vertical_mask_count(1, "pytorch") == 0
    # two and three layers with every unit dropped: the last layer reads zeros, and its output is not masked
    for layers in (2, 3):
        stack = torch.nn.LSTM(3, 4, num_layers=layers, dropout=1.0)
        stack.train()
        top = _one_layer(torch, stack, layers - 1, 4)
        with torch.no_grad():
            out, _ = stack(x)
            expected, _ = top(torch.zeros(6, 2, 4))
        assert torch.allclose(out, expected, atol=1e-6)
        assert out.abs().max() > 0.01
        assert dropout.vertical_mask_count(layers, "pytorch") == layers - 1

r"""Small recorded examples that ship with the package, loaded with numpy alone.

``torch_lstm_small.npz`` holds a one-layer ``torch.nn.LSTM(3, 4)`` in float64
(seeded, PyTorch's default initialization), an input of 7 steps for a batch of
2, an initial state, and the outputs and final state that PyTorch computed
from them. ``tests/tools/make_torch_lstm_example.py`` wrote it;
``tests/core/test_torch_example.py`` checks that :class:`rnnmem.lstm.LSTM` gives
the same outputs to 1e-12 and, where torch is installed, that torch still
does. The chapter on gates uses it to load PyTorch weights into ``rnnmem``
on a machine without PyTorch.
"""

from __future__ import annotations

from importlib import resources
from typing import NamedTuple

import numpy as np

__all__ = ["TorchLSTMExample", "load_torch_lstm_example"]

_PARAMETERS = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")


class TorchLSTMExample(NamedTuple):
    """A recorded ``torch.nn.LSTM`` run: its weights, its input and state, and what it returned.

    States are in rnnmem's shape ``(B, H)``; torch's have a leading axis of
    one layer, ``(1, B, H)``.
    """

    state_dict: dict
    """The module's ``state_dict()`` as numpy arrays: ``weight_ih_l0`` ``(4H, D)``, ``weight_hh_l0``
    ``(4H, H)``, ``bias_ih_l0`` and ``bias_hh_l0`` ``(4H,)``, gates ``i|f|g|o``."""
    x: np.ndarray
    """The input ``(T, B, D)``, time first."""
    state: tuple
    """The initial state ``(h0, c0)``, each ``(B, H)``."""
    outputs: np.ndarray
    """The hidden state after every step, ``(T, B, H)``, as torch computed it."""
    final_state: tuple
    """The final state ``(h_n, c_n)``, each ``(B, H)``, as torch computed it."""
    torch_version: str
    """The PyTorch version that computed the outputs."""


def load_torch_lstm_example() -> TorchLSTMExample:
    """Load the recorded ``torch.nn.LSTM(3, 4)`` run (numpy only; torch is not needed).

    >>> ex = load_torch_lstm_example()
    >>> sorted(ex.state_dict), ex.state_dict["weight_hh_l0"].shape
    (['bias_hh_l0', 'bias_ih_l0', 'weight_hh_l0', 'weight_ih_l0'], (16, 4))
    >>> ex.x.shape, ex.outputs.shape, ex.state[1].shape, ex.torch_version
    ((7, 2, 3), (7, 2, 4), (2, 4), '2.13.0')
    """
    source = resources.files(__name__).joinpath("torch_lstm_small.npz")
    with source.open("rb") as handle, np.load(handle, allow_pickle=False) as npz:
        arrays = {key: npz[key] for key in npz.files}
    return TorchLSTMExample(
        state_dict={key: arrays[key] for key in _PARAMETERS},
        x=arrays["x"],
        state=(arrays["h0"], arrays["c0"]),
        outputs=arrays["outputs"],
        final_state=(arrays["h_n"], arrays["c_n"]),
        torch_version=str(arrays["torch_version"]),
    )

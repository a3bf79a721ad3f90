"""Write src/rnnmem/data/torch_lstm_small.npz: a small torch.nn.LSTM, an input, and what torch computed.

The chapter on gates loads this file to show that a ``torch.nn.LSTM``'s state
dict, loaded into ``rnnmem.lstm.LSTM``, gives torch's outputs, without needing
torch to run. Everything is seeded, so running this script again (with the
pinned torch) writes the same numbers::

    .venv/bin/python tests/tools/make_torch_lstm_example.py

The arrays, all float64, states in rnnmem's shape ``(B, H)`` (torch's have a
leading layer axis of 1):

* ``weight_ih_l0`` ``(4H, D)``, ``weight_hh_l0`` ``(4H, H)``, ``bias_ih_l0``,
  ``bias_hh_l0`` ``(4H,)``: the module's state dict, gates ``i|f|g|o``;
* ``x`` ``(T, B, D)``, time first; ``h0``, ``c0``: the initial state;
* ``outputs`` ``(T, B, H)``, ``h_n``, ``c_n``: what torch returned;
* ``torch_version``: the version that computed them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SEED = 2024
T, B, D, H = 7, 2, 3, 4
OUT = Path(__file__).resolve().parents[2] / "src" / "rnnmem" / "data" / "torch_lstm_small.npz"


def make_example() -> dict[str, np.ndarray]:
    """Build the seeded module and input, run torch, and return every array to be saved."""
    import torch

    torch.manual_seed(SEED)
    module = torch.nn.LSTM(D, H).to(torch.float64)
    x = torch.randn(T, B, D, dtype=torch.float64)
    h0 = 0.5 * torch.randn(1, B, H, dtype=torch.float64)
    c0 = 0.5 * torch.randn(1, B, H, dtype=torch.float64)
    with torch.no_grad():
        outputs, (h_n, c_n) = module(x, (h0, c0))
    arrays = {name: p.detach().numpy().copy() for name, p in module.state_dict().items()}
    arrays.update(
        x=x.numpy(), h0=h0[0].numpy(), c0=c0[0].numpy(), outputs=outputs.numpy(), h_n=h_n[0].numpy(), c_n=c_n[0].numpy()
    )
    arrays = {k: np.ascontiguousarray(v, dtype=np.float64) for k, v in arrays.items()}
    arrays["torch_version"] = np.array(torch.__version__.split("+")[0])
    return arrays


def main() -> None:
    arrays = make_example()
    np.savez_compressed(OUT, **arrays)  # type: ignore[arg-type]  # no array is named allow_pickle (numpy >= 2.1 has that keyword)
    print(
        f"wrote {OUT} with torch {arrays['torch_version']}: "
        + ", ".join(f"{k} {v.shape}" for k, v in arrays.items() if k != "torch_version")
    )


if __name__ == "__main__":
    main()

r"""Where the forget gate starts: bias initialization schemes and the horizons they give.

At initialization the weights are small, so a forget gate's value is close to
the logistic function of its bias, :math:`f \approx \sigma(b_f)`, and its
memory horizon follows from :mod:`rnnmem.memory`: the e-fold horizon
:math:`-1/\ln f`, the level horizon :math:`\ln 0.01/\ln f` and the mean
lifetime :math:`1/(1-f) = 1 + e^{b_f}`. A gradient that stays on the carry
line keeps :math:`f^n` of itself after :math:`n` steps.

The schemes, for an LSTM layer of width :math:`H` (forget slice = the second
block of :math:`H` entries in both PyTorch's i|f|g|o and Keras' i|f|c|o):

* **zero**: :math:`b_f = 0`, so :math:`f = 1/2`;
* **Keras** ``unit_forget_bias=True``: one bias vector, 1 on the forget slice
  and 0 elsewhere, so :math:`f = \sigma(1)`;
* **PyTorch** default: every weight and both bias vectors :math:`b_{ih}` and
  :math:`b_{hh}` drawn from :math:`U(-a, a)` with :math:`a = 1/\sqrt H`; the
  effective forget bias is the sum of two independent draws, triangular on
  :math:`(-2a, 2a)` with density :math:`(2a - |b|)/(4a^2)`;
* **chrono** (Tallec and Ollivier, 2018): :math:`b_f = \ln u` with
  :math:`u \sim U[1, T_{\max} - 1]` and :math:`b_i = -b_f`. Then
  :math:`1/(1-f) = 1 + u`, so the mean lifetimes are uniform on
  :math:`[2, T_{\max}]` and the e-fold horizons run from :math:`1/\ln 2 = 1.44`
  to just under :math:`T_{\max}`.

Random draws take a ``seed`` (``None``, an int, or a :class:`numpy.random.Generator`; :func:`rnnmem.checks.check_seed`).
Scalars in give Python floats out. Bad input raises :class:`ValueError` naming
the argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np

from . import memory
from .checks import check_choice, check_finite, check_positive, check_positive_int, check_seed

__all__ = [
    "SCHEMES",
    "ForgetBiasRow",
    "forget_bias",
    "forget_gate",
    "forget_bias_row",
    "forget_bias_table",
    "retained_gradient",
    "gate_slice",
    "keras_unit_forget_bias",
    "keras_lstm_weights",
    "pytorch_uniform",
    "pytorch_weights",
    "Weights",
    "RECURRENT_INITS",
    "recurrent_matrix",
    "pytorch_default_biases",
    "pytorch_forget_bias_samples",
    "pytorch_forget_bias_density",
    "chrono_biases",
    "initial_forget_biases",
    "initial_horizons",
    "sample_initial_horizons",
]

SCHEMES = ("zero", "keras", "pytorch", "chrono")
"""The initialization schemes :func:`initial_forget_biases` knows."""

_GATE_ORDER = {"lstm": ("i", "f", "g", "o"), "keras": ("i", "f", "c", "o"), "gru": ("r", "z", "n")}


# --------------------------------------------------------------------------- one bias, one gate


def forget_bias(
    *,
    gate: Any = None,
    horizon: Any = None,
    efold_horizon: Any = None,
    mean_lifetime: Any = None,
    level: float = memory.DEFAULT_LEVEL,
) -> Any:
    r"""The forget bias :math:`b_f` for exactly one target: a gate value or a horizon.

    ``gate`` uses :math:`b = \ln(f/(1-f))`; ``horizon`` the level horizon
    (1% unless ``level`` is given); ``efold_horizon`` the e-fold horizon
    :math:`-1/\ln f`; ``mean_lifetime`` the bias :math:`\ln(m-1)` with
    :math:`1/(1-f) = m` exactly. All come from :mod:`rnnmem.memory`.

    >>> round(forget_bias(gate=0.95), 2), round(forget_bias(horizon=300), 2)
    (2.94, 4.17)
    """
    given = {
        k: v
        for k, v in (
            ("gate", gate),
            ("horizon", horizon),
            ("efold_horizon", efold_horizon),
            ("mean_lifetime", mean_lifetime),
        )
        if v is not None
    }
    if len(given) != 1:
        raise ValueError(
            "forget_bias needs exactly one of gate, horizon, efold_horizon, mean_lifetime, "
            f"got {sorted(given) or 'none'}"
        )
    ((kind, value),) = given.items()
    if kind == "gate":
        return memory.bias_for_gate(value)
    if kind == "horizon":
        return memory.bias_for_horizon(value, level)
    if kind == "efold_horizon":
        return memory.bias_for_efold_horizon(check_positive("efold_horizon", value))
    if np.any(np.asarray(check_positive("mean_lifetime", value), dtype=np.float64) <= 1):
        raise ValueError(f"mean_lifetime must be greater than 1 (a lifetime of at least one step), got {value!r}")
    return memory.bias_for_mean_lifetime(value)


def forget_gate(bias: Any) -> Any:
    r"""The forget gate at initialization, :math:`f = \sigma(b_f)`.

    >>> round(forget_gate(2.0), 4)
    0.8808
    """
    return memory.sigmoid(bias)


def retained_gradient(bias: Any, steps: Any) -> Any:
    r"""What the carry line keeps after ``steps`` steps at the starting gate: :math:`\sigma(b_f)^n`.

    >>> f"{retained_gradient(2.0, 47):.3g} {retained_gradient(0.0, 47):.3g}"
    '0.00257 7.11e-15'
    >>> f"{retained_gradient(2.0, 47) / retained_gradient(0.0, 47):.2g}"
    '3.6e+11'
    """
    return memory.decay(memory.sigmoid(bias), steps)


@dataclass(frozen=True)
class ForgetBiasRow:
    """One bias and what it starts: gate, e-fold and level horizons, mean lifetime."""

    bias: float
    gate: float
    efold_horizon: float
    horizon: float
    mean_lifetime: float
    level: float


def forget_bias_row(bias: float, level: float = memory.DEFAULT_LEVEL) -> ForgetBiasRow:
    r"""The gate :math:`\sigma(b)` and its three horizons for one bias.

    >>> r = forget_bias_row(1.0)
    >>> round(r.gate, 6), round(r.efold_horizon, 2), round(r.mean_lifetime, 2), round(1 + math.e, 2)
    (0.731059, 3.19, 3.72, 3.72)
    """
    b = check_finite("bias", bias)
    if np.ndim(b) != 0:
        raise ValueError(f"bias must be a single real number, got {bias!r}")
    f = memory.sigmoid(float(b))
    return ForgetBiasRow(
        bias=float(b),
        gate=f,
        efold_horizon=memory.efold_horizon(f),
        horizon=memory.horizon(f, level),
        mean_lifetime=memory.mean_lifetime(f),
        level=float(level),
    )


_TABLE_BIASES = (0.0, 1.0, 2.0, math.log(19.0))  # ln 19: the bias of f = 0.95


def forget_bias_table(biases: Any = _TABLE_BIASES, level: float = memory.DEFAULT_LEVEL) -> list[ForgetBiasRow]:
    r"""One :class:`ForgetBiasRow` per bias; the defaults are 0, 1, 2 and :math:`\ln 19` (:math:`f = 0.95`).

    >>> for r in forget_bias_table():
    ...     print(f"{r.bias:5.2f} {r.gate:.4f} {r.efold_horizon:6.2f} {r.horizon:5.1f} {r.mean_lifetime:6.2f}")
     0.00 0.5000   1.44   6.6   2.00
     1.00 0.7311   3.19  14.7   3.72
     2.00 0.8808   7.88  36.3   8.39
     2.94 0.9500  19.50  89.8  20.00
    """
    return [forget_bias_row(b, level) for b in biases]


# --------------------------------------------------------------------------- bias vectors of a layer


def gate_slice(gate: str, hidden: int, order: str = "lstm") -> slice:
    """The slice of a stacked gate vector that belongs to ``gate``.

    ``order`` is ``"lstm"`` (PyTorch i|f|g|o), ``"keras"`` (Keras LSTM i|f|c|o)
    or ``"gru"`` (PyTorch r|z|n).

    >>> gate_slice("f", 3)
    slice(3, 6, None)
    """
    order = check_choice("order", order, tuple(_GATE_ORDER))
    gate = check_choice("gate", gate, _GATE_ORDER[order])
    h = check_positive_int("hidden", hidden)
    k = _GATE_ORDER[order].index(gate)
    return slice(k * h, (k + 1) * h)


def keras_unit_forget_bias(hidden: int) -> np.ndarray:
    """Keras' LSTM bias with ``unit_forget_bias=True``: 1 on the forget slice, 0 elsewhere (i|f|c|o).

    >>> keras_unit_forget_bias(2).tolist()
    [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    """
    h = check_positive_int("hidden", hidden)
    b = np.zeros(4 * h)
    b[gate_slice("f", h, "keras")] = 1.0
    return b


def keras_lstm_weights(input_size: int, hidden: int, seed: Any = None) -> dict[str, np.ndarray]:
    r"""An LSTM layer drawn as Keras' defaults draw it, in PyTorch's layout (gates ``i|f|g|o``).

    Keras' ``kernel`` ``(D, 4H)`` is Glorot-uniform, every entry from
    :math:`U(-l, l)` with :math:`l = \sqrt{6/(D + 4H)}`; its
    ``recurrent_kernel`` ``(H, 4H)`` is orthogonal (orthonormal rows, from the
    QR factorization of a Gaussian matrix); its one bias is
    :func:`keras_unit_forget_bias`. Returned transposed to ``W_ih`` ``(4H, D)``
    and ``W_hh`` ``(4H, H)``, the bias as ``b_ih``, with ``b_hh`` zero, ready
    for :func:`rnnmem.lstm.step`. Keras' gate order ``i, f, c, o`` is
    PyTorch's ``i, f, g, o`` under other names, so no block moves. The draws
    are the same distributions as Keras', not the same numbers.

    >>> W = keras_lstm_weights(3, 2, seed=0)
    >>> {k: v.shape for k, v in W.items()}
    {'W_ih': (8, 3), 'W_hh': (8, 2), 'b_ih': (8,), 'b_hh': (8,)}
    >>> bool(np.allclose(W["W_hh"].T @ W["W_hh"], np.eye(2)))
    True
    """
    D = check_positive_int("input_size", input_size)
    H = check_positive_int("hidden", hidden)
    rng = check_seed("seed", seed)
    limit = math.sqrt(6.0 / (D + 4 * H))
    kernel = rng.uniform(-limit, limit, (D, 4 * H))
    q, r = np.linalg.qr(rng.standard_normal((4 * H, H)))
    q = q * np.sign(np.diag(r))  # a uniformly random orthonormal frame
    return {"W_ih": kernel.T.copy(), "W_hh": q, "b_ih": keras_unit_forget_bias(H), "b_hh": np.zeros(4 * H)}


def pytorch_uniform(shape: Any, hidden: int, seed: Any = None, scale: float = 1.0) -> np.ndarray:
    r"""PyTorch's default draw for a recurrent layer: every entry from :math:`U(-s/\sqrt H, s/\sqrt H)`.

    ``hidden`` is the layer's width :math:`H`, ``scale`` the factor :math:`s`
    (1 is PyTorch's ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU``), ``seed`` follows
    :func:`rnnmem.checks.check_seed`. Every random weight of the package comes
    from here.

    >>> w = pytorch_uniform((3, 4), hidden=16, seed=0)
    >>> w.shape, bool(np.abs(w).max() <= 0.25)
    ((3, 4), True)
    """
    h = check_positive_int("hidden", hidden)
    s = float(check_positive("scale", scale))
    bound = s / math.sqrt(h)
    return check_seed("seed", seed).uniform(-bound, bound, shape)


class Weights(TypedDict):
    r"""The four arrays of one recurrent layer in torch layout, keyed as the chapters and the step functions write them.

    ``W_ih`` ``(G*H, D)``, ``W_hh`` ``(G*H, H)``, ``b_ih`` and ``b_hh``
    ``(G*H,)``, the gates' blocks stacked by rows. A model's
    :attr:`~rnnmem.lstm.LSTM.weights` is one, and ``**`` passes it to a step
    function (the type checker then knows each keyword's type):

    >>> from rnnmem import gru
    >>> model = gru.GRU(2, 3, seed=0)
    >>> W: Weights = model.weights
    >>> gru.step(np.zeros(2), np.zeros(3), **W, reset="before").h.shape
    (3,)
    """

    W_ih: np.ndarray
    W_hh: np.ndarray
    b_ih: np.ndarray
    b_hh: np.ndarray


def pytorch_weights(
    input_size: int, hidden: int, gates: int = 1, seed: Any = None, scale: float = 1.0
) -> dict[str, np.ndarray]:
    r"""A recurrent layer's four arrays drawn as PyTorch does, keyed as the chapters write them.

    ``W_ih`` ``(G*H, D)``, ``W_hh`` ``(G*H, H)``, ``b_ih`` and ``b_hh``
    ``(G*H,)``, drawn in that order from one generator with
    :func:`pytorch_uniform`; ``gates`` :math:`G` is 1 for the tanh RNN, 4 for
    the LSTM, 3 for the GRU. The models of :mod:`rnnmem.rnn`,
    :mod:`rnnmem.lstm` and :mod:`rnnmem.gru` start from it, and the result is
    ready for their step functions' ``**``.

    >>> W = pytorch_weights(3, 2, gates=4, seed=0)
    >>> {k: v.shape for k, v in W.items()}
    {'W_ih': (8, 3), 'W_hh': (8, 2), 'b_ih': (8,), 'b_hh': (8,)}
    """
    D = check_positive_int("input_size", input_size)
    H = check_positive_int("hidden", hidden)
    G = check_positive_int("gates", gates)
    rng = check_seed("seed", seed)
    shapes = {"W_ih": (G * H, D), "W_hh": (G * H, H), "b_ih": (G * H,), "b_hh": (G * H,)}
    return {name: pytorch_uniform(shape, H, rng, scale) for name, shape in shapes.items()}


RECURRENT_INITS = ("pytorch", "orthogonal", "identity")
"""The starting recurrent matrices :func:`recurrent_matrix` knows."""


def recurrent_matrix(kind: str, hidden: int, seed: Any = 0) -> np.ndarray:
    r"""A starting :math:`W_{hh}` of shape ``(H, H)``: PyTorch's draw, a random orthogonal matrix, or the identity.

    * ``"pytorch"``: every entry from :math:`U(-1/\sqrt H, 1/\sqrt H)`
      (:func:`pytorch_uniform`), variance :math:`1/(3H)`;
    * ``"orthogonal"``: :math:`Q` of the QR factorization of a standard
      normal matrix, each column's sign fixed by :math:`R`'s diagonal so the
      draw is uniform over orthogonal matrices (``torch.nn.init.orthogonal_``
      does the same); every singular value is 1, so :math:`\|W v\| = \|v\|`;
    * ``"identity"``: :math:`I`, the start of Le, Jaitly and Hinton's IRNN
      (2015, with ReLU units and zero biases).

    >>> Q = recurrent_matrix("orthogonal", 4, seed=0)
    >>> bool(np.allclose(Q.T @ Q, np.eye(4))), recurrent_matrix("identity", 2).tolist()
    (True, [[1.0, 0.0], [0.0, 1.0]])
    """
    kind = check_choice("kind", kind, RECURRENT_INITS)
    h = check_positive_int("hidden", hidden)
    rng = check_seed("seed", seed)
    if kind == "pytorch":
        return pytorch_uniform((h, h), h, rng)
    if kind == "identity":
        return np.eye(h)
    q, r = np.linalg.qr(rng.standard_normal((h, h)))
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)


def pytorch_default_biases(hidden: int, seed: Any = 0, gates: int = 4) -> tuple[np.ndarray, np.ndarray]:
    r"""PyTorch's default draw of ``(b_ih, b_hh)``: each entry :math:`U(-1/\sqrt H, 1/\sqrt H)`.

    ``gates`` is 4 for an LSTM, 3 for a GRU, 1 for a plain RNN.

    >>> b_ih, b_hh = pytorch_default_biases(100, seed=0)
    >>> b_ih.shape, bool(np.abs(np.concatenate([b_ih, b_hh])).max() <= 0.1)
    ((400,), True)
    """
    h = check_positive_int("hidden", hidden)
    g = check_positive_int("gates", gates)
    rng = check_seed("seed", seed)
    return pytorch_uniform(g * h, h, rng), pytorch_uniform(g * h, h, rng)


def pytorch_forget_bias_samples(hidden: int, size: int, seed: Any = 0) -> np.ndarray:
    r"""``size`` draws of PyTorch's effective forget bias :math:`b_{ih,f} + b_{hh,f}`.

    >>> s = pytorch_forget_bias_samples(100, 100_000, seed=0)
    >>> bool(np.abs(s).max() < 0.2), round(float(s.std()), 3)
    (True, 0.081)
    """
    h = check_positive_int("hidden", hidden)
    n = check_positive_int("size", size)
    rng = check_seed("seed", seed)
    return pytorch_uniform(n, h, rng) + pytorch_uniform(n, h, rng)


def pytorch_forget_bias_density(b: Any, hidden: int) -> Any:
    r"""The density of the sum of two :math:`U(-a, a)` draws, :math:`a = 1/\sqrt H`.

    Triangular: :math:`(2a - |b|)/(4a^2)` on :math:`(-2a, 2a)`, zero outside;
    its peak is :math:`1/(2a) = \sqrt H / 2`.

    >>> round(pytorch_forget_bias_density(0.0, 100), 9), round(pytorch_forget_bias_density(0.1, 100), 9)
    (5.0, 2.5)
    """
    b = check_finite("b", b)
    h = check_positive_int("hidden", hidden)
    a = 1.0 / math.sqrt(h)
    bb = np.asarray(b, dtype=np.float64)
    dens = np.maximum(0.0, 2.0 * a - np.abs(bb)) / (4.0 * a * a)
    if np.ndim(b) == 0 and not isinstance(b, np.ndarray):
        return float(dens)
    return dens


def chrono_biases(hidden: int, t_max: float, seed: Any = 0) -> tuple[np.ndarray, np.ndarray]:
    r"""Chrono initialization: ``(b_f, b_i)`` with :math:`b_f = \ln u`, :math:`u \sim U[1, T_{\max}-1]`, :math:`b_i = -b_f`.

    The mean lifetime :math:`1/(1-\sigma(b_f)) = 1 + u` is uniform on
    :math:`[2, T_{\max}]`.

    >>> b_f, b_i = chrono_biases(1000, t_max=100, seed=0)
    >>> life = 1 + np.exp(b_f)
    >>> bool(life.min() >= 2 and life.max() <= 100), bool(np.all(b_i == -b_f))
    (True, True)
    """
    h = check_positive_int("hidden", hidden)
    t = float(check_positive("t_max", t_max))
    if t <= 2.0:
        raise ValueError(f"t_max must be greater than 2 (u is drawn from [1, t_max - 1]), got {t_max!r}")
    u = check_seed("seed", seed).uniform(1.0, t - 1.0, h)
    b_f = np.log(u)
    return b_f, -b_f


# --------------------------------------------------------------------------- schemes side by side


def initial_forget_biases(scheme: str, hidden: int, seed: Any = 0, t_max: float | None = None) -> np.ndarray:
    """The effective starting forget bias of each of ``hidden`` units under ``scheme``.

    ``scheme`` is one of :data:`SCHEMES`; ``"chrono"`` needs ``t_max``. For
    ``"pytorch"`` the value is the sum of the two bias vectors' forget slices.

    >>> initial_forget_biases("keras", 3).tolist()
    [1.0, 1.0, 1.0]
    """
    scheme = check_choice("scheme", scheme, SCHEMES)
    h = check_positive_int("hidden", hidden)
    if scheme == "zero":
        return np.zeros(h)
    if scheme == "keras":
        return keras_unit_forget_bias(h)[gate_slice("f", h, "keras")]
    if scheme == "pytorch":
        b_ih, b_hh = pytorch_default_biases(h, seed)
        f = gate_slice("f", h, "lstm")
        return b_ih[f] + b_hh[f]
    if t_max is None:
        raise ValueError("t_max must be given for the 'chrono' scheme (the longest dependency expected), got None")
    return chrono_biases(h, t_max, seed)[0]


_MEASURES = ("efold", "level", "mean_lifetime")


def initial_horizons(
    scheme: str,
    hidden: int,
    seed: Any = 0,
    t_max: float | None = None,
    measure: str = "efold",
    level: float = memory.DEFAULT_LEVEL,
) -> np.ndarray:
    r"""The starting horizon of each unit under ``scheme``, gates at :math:`\sigma(b_f)`.

    ``measure`` is ``"efold"`` (:math:`-1/\ln f`), ``"level"``
    (:math:`\ln\text{level}/\ln f`) or ``"mean_lifetime"`` (:math:`1/(1-f)`).

    >>> initial_horizons("zero", 2).round(2).tolist()
    [1.44, 1.44]
    >>> m = initial_horizons("chrono", 1000, seed=0, t_max=100, measure="mean_lifetime")
    >>> bool(m.min() >= 2 and m.max() <= 100)
    True
    """
    measure = check_choice("measure", measure, _MEASURES)
    f = memory.sigmoid(initial_forget_biases(scheme, hidden, seed, t_max))
    if measure == "efold":
        return memory.efold_horizon(f)
    if measure == "level":
        return memory.horizon(f, level)
    return memory.mean_lifetime(f)


def sample_initial_horizons(hidden: int, t_max: float, seed: Any = 0, measure: str = "efold") -> dict[str, np.ndarray]:
    """Starting horizons of ``hidden`` units under every scheme of :data:`SCHEMES`, for one figure.

    >>> hs = sample_initial_horizons(500, t_max=1000, seed=1)
    >>> {k: round(float(np.median(v)), 1) for k, v in hs.items() if k != "chrono"}
    {'zero': 1.4, 'keras': 3.2, 'pytorch': 1.4}
    >>> bool(hs["chrono"].max() > 900)
    True
    """
    rng = check_seed("seed", seed)
    return {s: initial_horizons(s, hidden, rng, t_max if s == "chrono" else None, measure) for s in SCHEMES}

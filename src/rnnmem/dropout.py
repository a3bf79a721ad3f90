r"""Dropout and the carried state: noise that compounds in time against noise that does not.

Inverted dropout with keep probability :math:`p` multiplies a signal by
:math:`m/p`, with :math:`m \sim \text{Bernoulli}(p)`. One such factor has mean 1
and variance :math:`1/p - 1`. A product of :math:`n` independent factors still
has mean 1, but

.. math::

    \operatorname{Var}\Big[\prod_{k=1}^{n} \frac{m_k}{p}\Big] = \Big(\frac1p\Big)^{n} - 1,

since :math:`E[(m/p)^2] = 1/p`: the rescaling fixes the mean, the variance
compounds. The chance that a value passes :math:`n` masks untouched is
:math:`p^n` (:math:`0.9^{100} = 2.7 \times 10^{-5}`).

Where the masks sit decides :math:`n`. For a value carried along an ideal
carry line (forget value 1) and read at step :math:`t`:

* ``"recurrent"``: a fresh mask on the carried path at every step, so
  :math:`n = t`: variance :math:`p^{-t} - 1`, survival :math:`p^t`;
* ``"vertical"``: masks only on the non-recurrent connections (Zaremba,
  Sutskever and Vinyals, 2014); the carried path is deterministic and the
  value meets each mask of the vertical path once, so :math:`n =
  \text{depth}` whatever :math:`t` is (:math:`L + 1` masks for :math:`L`
  layers in their placement, :func:`vertical_mask_count`);
* ``"variational"``: one mask per sequence, the same at every step (Gal and
  Ghahramani, 2016), here on the carried value itself. For a binary mask
  :math:`m^t = m`, so the product over the steps is the mask itself and the
  mean-keeping scale is :math:`1/p`, applied once: variance :math:`1/p - 1`
  and survival :math:`p` at every :math:`t`. A unit is dropped for the whole
  sequence or kept for all of it. "Once" holds for this identity carry line
  only: Gal and Ghahramani, and Keras' ``recurrent_dropout``, mask
  :math:`h_{t-1}` where it enters the recurrent product, a new value at
  every step, and scale it by :math:`1/p` at every step.

A masked carry line is all or nothing: the carried value, and the gradient
that flows back along the same line, is :math:`p^{-n}` with probability
:math:`p^n` and 0 otherwise. Its expectation is the unmasked one (unbiased);
a forget gate of value :math:`p` would instead scale every run by
:math:`p^n`, deterministically.

Random draws take a ``seed`` (``None``, an int, or a :class:`numpy.random.Generator`; :func:`rnnmem.checks.check_seed`).
Bad input raises :class:`ValueError` naming the argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .checks import check_choice, check_finite, check_nonnegative_int, check_positive_int, check_seed

__all__ = [
    "SCHEMES",
    "CarrySimulation",
    "check_keep",
    "untouched_probability",
    "mask_product_variance",
    "perturbation_count",
    "spread_variance",
    "survival_table",
    "inverted_mask",
    "per_step_masks",
    "variational_masks",
    "inverted_dropout",
    "simulate_carried_state",
    "VERTICAL_PLACEMENTS",
    "vertical_mask_count",
]

SCHEMES = ("recurrent", "vertical", "variational")
"""Where the dropout masks sit: see the module docstring."""

VERTICAL_PLACEMENTS = ("zaremba", "pytorch")
"""Who places the masks between layers: see :func:`vertical_mask_count`."""


def check_keep(name: str, keep: Any) -> float:
    """A keep probability: a number with :math:`0 < p \\le 1` (1 means no dropout).

    >>> check_keep("keep", 0.9)
    0.9
    """
    if np.ndim(keep) != 0:
        raise ValueError(f"{name} must be a single keep probability in (0, 1], got {keep!r}")
    p = float(check_finite(name, keep))
    if not 0.0 < p <= 1.0:
        raise ValueError(f"{name} must be a keep probability in (0, 1], got {keep!r}")
    return p


def untouched_probability(keep: float, steps: int) -> float:
    r"""The chance that a value passes ``steps`` independent masks untouched: :math:`p^n`.

    >>> f"{untouched_probability(0.9, 100):.2g}"
    '2.7e-05'
    """
    p = check_keep("keep", keep)
    n = check_nonnegative_int("steps", steps)
    return float(p**n)


def mask_product_variance(keep: float, n: int) -> float:
    r"""The variance of a product of ``n`` independent inverted masks: :math:`(1/p)^n - 1`.

    >>> round(mask_product_variance(0.9, 1), 6), round(mask_product_variance(0.9, 100), 1)
    (0.111111, 37647.6)
    """
    p = check_keep("keep", keep)
    n = check_nonnegative_int("n", n)
    return float((1.0 / p) ** n - 1.0)


def perturbation_count(scheme: str, steps: int, depth: int = 2) -> int:
    """How many independent masks a value meets on its way to step ``steps`` under ``scheme``.

    >>> [perturbation_count(s, 100, depth=2) for s in SCHEMES]
    [100, 2, 1]
    """
    scheme = check_choice("scheme", scheme, SCHEMES)
    t = check_nonnegative_int("steps", steps)
    d = check_positive_int("depth", depth)
    if scheme == "recurrent":
        return t
    if scheme == "vertical":
        return d
    return min(t, 1)


def spread_variance(scheme: str, steps: int, keep: float, depth: int = 2) -> float:
    r"""The variance of the carried value at step ``steps`` (mean 1) under ``scheme``.

    :math:`(1/p)^n - 1` with :math:`n` from :func:`perturbation_count`.

    >>> [round(spread_variance(s, 10, 0.9), 4) for s in SCHEMES]
    [1.868, 0.2346, 0.1111]
    """
    return mask_product_variance(keep, perturbation_count(scheme, steps, depth))


def survival_table(keep: float, steps: Any = (1, 10, 50, 100), depth: int = 2) -> list[tuple[int, float, float, float]]:
    """Rows ``(steps, recurrent, vertical, variational)``: the chance a value arrives untouched.

    >>> for t, rec, ver, var in survival_table(0.9, (10, 100)):
    ...     print(f"{t:4d} {rec:9.2e} {ver:.2f} {var:.2f}")
      10  3.49e-01 0.81 0.90
     100  2.66e-05 0.81 0.90
    """
    p = check_keep("keep", keep)
    rows = []
    for t in steps:
        n = check_nonnegative_int("steps", t)
        recurrent, vertical, variational = (untouched_probability(p, perturbation_count(s, n, depth)) for s in SCHEMES)
        rows.append((n, recurrent, vertical, variational))
    return rows


def vertical_mask_count(layers: int, placement: str = "zaremba") -> int:
    r"""How many dropout masks sit on the vertical path of a stack of ``layers`` recurrent layers.

    The vertical path runs from the input up through the layers to the
    readout, one step at a time; a value read at the top crosses each mask
    on it once.

    * ``"zaremba"``: Zaremba, Sutskever and Vinyals (2014, §3.2) drop out
      every non-recurrent connection, the input into the first layer, each
      layer into the next and the last into the readout: :math:`L + 1`
      masks.
    * ``"pytorch"``: ``torch.nn.LSTM(num_layers=L, dropout=q)`` (and
      ``nn.GRU``, ``nn.RNN``) drops the output of every layer but the last:
      :math:`L - 1` masks, none for one layer; dropout on the input or on
      the top layer's output is left to the code around the module
      (documented under the ``dropout`` argument; the book's tests check
      it against PyTorch).

    >>> [vertical_mask_count(2, p) for p in VERTICAL_PLACEMENTS]
    [3, 1]
    """
    n = check_positive_int("layers", layers)
    placement = check_choice("placement", placement, VERTICAL_PLACEMENTS)
    return n + 1 if placement == "zaremba" else n - 1


# --------------------------------------------------------------------------- masks


def inverted_mask(shape: Any, keep: float, seed: Any = 0) -> np.ndarray:
    r"""An inverted-dropout mask: entries :math:`m/p`, 0 with probability :math:`1-p`, else :math:`1/p`.

    >>> inverted_mask((8,), 0.5, seed=0).tolist()
    [0.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0]
    """
    p = check_keep("keep", keep)
    dims = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    dims = tuple(check_nonnegative_int("shape", n) for n in dims)
    rng = check_seed("seed", seed)
    return (rng.random(dims) < p).astype(np.float64) / p


def per_step_masks(steps: int, batch: int, units: int, keep: float, seed: Any = 0) -> np.ndarray:
    """A fresh inverted mask per step: shape ``(steps, batch, units)``.

    >>> per_step_masks(3, 2, 4, 0.5, seed=0).shape
    (3, 2, 4)
    """
    shape = (check_positive_int("steps", steps), check_positive_int("batch", batch), check_positive_int("units", units))
    return inverted_mask(shape, keep, seed)


def variational_masks(batch: int, units: int, keep: float, seed: Any = 0) -> np.ndarray:
    """One inverted mask per sequence, shape ``(batch, units)``: reuse it at every step.

    >>> m = variational_masks(2, 4, 0.5, seed=0)
    >>> m.shape, sorted(set(m.ravel().tolist()))
    ((2, 4), [0.0, 2.0])
    """
    shape = (check_positive_int("batch", batch), check_positive_int("units", units))
    return inverted_mask(shape, keep, seed)


def inverted_dropout(x: Any, keep: float, seed: Any = 0) -> np.ndarray:
    r"""Inverted dropout of an array: :math:`x \odot m / p`.

    >>> inverted_dropout(np.ones(4), 0.5, seed=0).tolist()
    [0.0, 2.0, 2.0, 2.0]
    """
    arr = np.asarray(check_finite("x", np.asarray(x)), dtype=np.float64)
    return arr * inverted_mask(arr.shape, keep, seed)


# --------------------------------------------------------------------------- Monte Carlo


@dataclass(frozen=True)
class CarrySimulation:
    """Monte Carlo of a carried value (starting at 1) against steps ``1..T``.

    ``mean``, ``variance`` and ``untouched`` (the fraction of runs in which
    the value met no zero) are measured over ``runs`` runs; ``analytic_variance``
    is :func:`spread_variance` and ``analytic_untouched`` the matching
    :math:`p^n`.
    """

    scheme: str
    keep: float
    depth: int
    runs: int
    steps: np.ndarray
    mean: np.ndarray
    variance: np.ndarray
    untouched: np.ndarray
    analytic_variance: np.ndarray
    analytic_untouched: np.ndarray

    @property
    def std(self) -> np.ndarray:
        """The measured spread, the square root of ``variance``."""
        return np.sqrt(self.variance)


def simulate_carried_state(
    scheme: str, steps: int, keep: float, runs: int = 10_000, depth: int = 2, seed: Any = 0
) -> CarrySimulation:
    """Carry a value of 1 for ``steps`` steps under ``scheme`` and measure its spread over ``runs`` runs.

    ``"recurrent"`` multiplies the carried value by a fresh mask each step;
    ``"vertical"`` leaves it alone and passes the read value through ``depth``
    fresh masks; ``"variational"`` draws one binary mask per run, applies it
    at every step (:math:`m^t = m`) and rescales once by :math:`1/p`.

    >>> sim = simulate_carried_state("recurrent", 5, 0.8, runs=100_000, seed=0)
    >>> sim.variance.round(2).tolist(), sim.analytic_variance.round(2).tolist()
    ([0.25, 0.56, 0.95, 1.44, 2.05], [0.25, 0.56, 0.95, 1.44, 2.05])
    """
    scheme = check_choice("scheme", scheme, SCHEMES)
    t_max = check_positive_int("steps", steps)
    p = check_keep("keep", keep)
    n_runs = check_positive_int("runs", runs)
    depth = check_positive_int("depth", depth)
    rng = check_seed("seed", seed)
    mean, var, untouched = np.empty(t_max), np.empty(t_max), np.empty(t_max)
    carried = np.ones(n_runs)
    # "variational": one mask per run, drawn once (the other schemes draw nothing here).
    fixed = (rng.random(n_runs) < p).astype(np.float64) if scheme == "variational" else np.ones(n_runs)
    for t in range(t_max):
        if scheme == "recurrent":
            carried = carried * (rng.random(n_runs) < p) / p
            read = carried
        elif scheme == "vertical":
            read = carried * np.prod(rng.random((depth, n_runs)) < p, axis=0) / p**depth
        else:
            carried = carried * fixed
            read = carried / p
        mean[t], var[t], untouched[t] = read.mean(), read.var(), np.mean(read != 0)
    ts = np.arange(1, t_max + 1)
    n = np.array([perturbation_count(scheme, t, depth) for t in range(1, t_max + 1)])
    return CarrySimulation(
        scheme=scheme,
        keep=p,
        depth=depth,
        runs=n_runs,
        steps=ts,
        mean=mean,
        variance=var,
        untouched=untouched,
        analytic_variance=(1.0 / p) ** n - 1.0,
        analytic_untouched=p ** n.astype(np.float64),
    )

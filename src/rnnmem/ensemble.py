r"""Many independent recurrent models at once, their parameters stacked on a leading axis.

An :class:`Ensemble` holds :math:`E` models of one kind (``"rnn"``, ``"gru"``
or ``"lstm"``) and one size, each a recurrent layer in the conventions of
:mod:`rnnmem.rnn`, :mod:`rnnmem.gru` (PyTorch's: ``z`` keeps the old state,
reset after the product) and :mod:`rnnmem.lstm`, followed by a readout of the
**last hidden state**:

.. math::

    \hat y = V h_T + c, \qquad
    L = -\tfrac1B \textstyle\sum_n \log \operatorname{softmax}(\hat y_n)_{y_n}
    \ \text{(classification)}, \qquad
    L = \tfrac1B \textstyle\sum_n (\hat y_n - y_n)^2 \ \text{(regression)}.

Every parameter array carries the member on its first axis: ``weight_ih_l0``
is ``(E, G H, D)``, ``weight_hh_l0`` ``(E, G H, H)``, ``bias_ih_l0`` and
``bias_hh_l0`` ``(E, G H)`` (torch layout per member, gates ``i|f|g|o``,
``r|z|n`` or one block), ``readout_weight`` :math:`V` ``(E, O, H)`` and
``readout_bias`` :math:`c` ``(E, O)``. A step of all members is one batched
matrix product, ``np.matmul`` of the stacked weights
:math:`[W_{hh}, W_{ih}, b]` ``(E, G H, H + D + 1)`` with the rows
:math:`[h_{t-1}; x_t; 1]` ``(E, H + D + 1, B)`` (the GRU's candidate takes
two row blocks, one for its state part and one for its input part), so a
Python loop runs over time steps, never over members. Member :math:`e` computes what
a single model with its parameters computes (:meth:`Ensemble.member` returns
it as an :class:`~rnnmem.lstm.LSTM`, :class:`~rnnmem.gru.GRU` or
:class:`~rnnmem.rnn.RNN`), and its gradients are the exact backpropagation
through time of its own loss: members never mix.

**Initialization**, member by member from ``numpy.random.default_rng(seed)``:
the recurrent layer draws exactly what ``LSTM(D, H, seed=seed)`` (or ``GRU``,
``RNN``) draws, every weight and both biases from
:math:`U(-1/\sqrt H, 1/\sqrt H)`; the readout then draws :math:`V` and
:math:`c` from the same range (PyTorch's ``nn.Linear(H, O)``). For the LSTM,
two options then overwrite the forget-gate rows:

* ``forget_bias=b``: the effective forget bias :math:`b_{if} + b_{hf}` is
  exactly :math:`b`, assigned as ``b_ih[f] = b`` and ``b_hh[f] = 0`` (only
  the sum enters the gate);
* ``init="chrono"`` (Tallec and Ollivier, 2018): :math:`b_f = \ln u`,
  :math:`u \sim U[1, T_{\max} - 1]` per unit, and :math:`b_i = -b_f`, assigned
  the same way (``b_ih`` holds the value, ``b_hh``'s slice is 0), with
  :math:`u` drawn by :func:`rnnmem.init.chrono_biases` from the member's
  generator after the readout;
* ``input_bias=b``, applied last (after the draw, ``forget_bias`` and
  chrono): the effective input-gate bias :math:`b_{ii} + b_{hi}` of every
  unit is exactly :math:`b`, assigned as ``b_ih[i] = b`` and ``b_hh[i] = 0``.
  So chrono with ``input_bias=0`` is chrono with :math:`b_i = 0`, and
  ``forget_bias=3, input_bias=-3`` a fixed :math:`b_f = 3` with
  :math:`b_i = -b_f`.

Sequences are time first, ``(T, B, D)`` shared by every member or
``(T, E, B, D)`` one batch per member; one-hot inputs can be given by the
index of each vector's 1 (:class:`OneHot`), which computes the same numbers
without building the vectors. :meth:`Ensemble.loss_and_grads` also takes
dropout masks on the LSTM's cell state (``carry_masks``) and on the hidden
state where it enters the recurrent product (``hidden_masks``, every cell),
and :meth:`Ensemble.select` copies some members into an ensemble of their
own. Bad input raises :class:`ValueError` naming the argument.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from . import cells
from . import init as _init
from ._recurrent import PARAMETER_NAMES, Recurrent
from .checks import check_choice, check_dtype, check_finite, check_nonnegative_int, check_positive, check_positive_int
from .gru import GRU  # noqa: F401  (the examples use it)

__all__ = ["MODELS", "KERNELS", "Kernels", "INITS", "KINDS", "Ensemble", "OneHot", "check_targets", "check_one_hot"]

INITS = ("default", "chrono")
"""Initializations: PyTorch's uniform draw, or chrono (LSTM only)."""

KINDS = ("classification", "regression")
"""Readouts: softmax cross-entropy over classes, or squared error of one number."""

RECURRENT_NAMES = PARAMETER_NAMES
"""A recurrent layer's parameters, in torch's names (:data:`rnnmem._recurrent.PARAMETER_NAMES`)."""

READOUT_NAMES = ("readout_weight", "readout_bias")


class OneHot(NamedTuple):
    """Inputs that are one-hot vectors, given by the index of each one's single 1: ``ids`` ``(T, B)`` shared
    by the members or ``(T, E, B)`` one batch per member, whole numbers below the input size.

    ``Ensemble`` methods that take ``x`` take this too, and compute exactly what they compute from the
    vectors themselves (``np.eye(D)[ids]``), without building them.
    """

    ids: np.ndarray


def _seeds(seeds: Any) -> tuple:
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        seeds = [seeds]
    if not isinstance(seeds, (list, tuple, np.ndarray)) or len(seeds) == 0:
        raise ValueError(f"seeds must be a non-empty list of whole numbers >= 0, got {seeds!r}")
    return tuple(check_nonnegative_int(f"seeds[{k}]", s) for k, s in enumerate(seeds))


class Ensemble:
    r"""``E`` independent models (recurrent layer and readout), parameters stacked on axis 0.

    ``Ensemble(model, input_size, hidden_size, output_size, seeds, *,
    forget_bias=None, init="default", t_max=None, input_bias=None,
    dtype=np.float64)``: one member per seed (see the module for what each
    draws). ``forget_bias`` is
    ``None``, one number for every member, or a list with one entry per
    member, a number or ``None`` (LSTM only); ``init`` is ``"default"`` or
    ``"chrono"``, or a list of them, one per member; chrono needs
    ``t_max > 2`` (LSTM only); ``input_bias`` is ``None`` or one number for
    every member (LSTM only). So configurations stack like seeds: members
    with :math:`b_f = 0`, :math:`b_f = 1` and chrono in one ensemble.
    ``params`` maps each name to its live stacked array (views into one
    block of every parameter, member by member).

    >>> ens = Ensemble("lstm", 3, 4, 2, seeds=[0, 1, 2], forget_bias=1.0)
    >>> ens.size, ens.params["weight_hh_l0"].shape, ens.params["readout_weight"].shape
    (3, (3, 16, 4), (3, 2, 4))
    >>> b = ens.params["bias_ih_l0"] + ens.params["bias_hh_l0"]
    >>> b[:, 4:8].tolist() == [[1.0] * 4] * 3            # forget rows of i|f|g|o
    True
    >>> x = np.zeros((5, 7, 3))                           # T=5, B=7, shared by the members
    >>> h = ens.forward(x)
    >>> h.shape
    (3, 7, 4)
    >>> member = ens.member(1)                            # an rnnmem.LSTM with member 1's weights
    >>> bool(np.allclose(member.forward(x)[1][0], h[1]))
    True
    """

    def __init__(
        self,
        model: str,
        input_size: int,
        hidden_size: int,
        output_size: int,
        seeds: Any,
        *,
        forget_bias: Any = None,
        init: Any = "default",
        t_max: float | None = None,
        input_bias: float | None = None,
        dtype: Any = np.float64,
    ) -> None:
        self.model = _kernels(model).name
        self.input_size = check_positive_int("input_size", input_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        self.output_size = check_positive_int("output_size", output_size)
        self.seeds = _seeds(seeds)
        self.dtype = check_dtype("dtype", dtype)
        E, D, H = len(self.seeds), self.input_size, self.hidden_size
        inits = self._inits(init, E)
        self.init = inits[0] if isinstance(init, str) else inits
        self.inits = inits
        biases = self._forget_biases(forget_bias, E)
        if "chrono" in inits:
            if self.model != "lstm":
                raise ValueError(f"init='chrono' sets LSTM gate biases; model must be 'lstm', got {model!r}")
            for k, (b, i) in enumerate(zip(biases or [None] * E, inits)):
                if b is not None and i == "chrono":
                    where = (
                        ""
                        if isinstance(init, str) and not isinstance(forget_bias, (list, tuple, np.ndarray))
                        else f" (member {k})"
                    )
                    raise ValueError(f"forget_bias and init='chrono' both set the forget bias{where}: give one of them")
            if t_max is None:
                raise ValueError("init='chrono' needs t_max, the longest lifetime wanted (a number > 2)")
            t_max = float(check_positive("t_max", t_max))
            if t_max <= 2:
                raise ValueError(f"t_max must be greater than 2 (u is drawn from [1, t_max - 1]), got {t_max!r}")
        elif t_max is not None:
            raise ValueError(f"t_max is used only with init='chrono', got t_max={t_max!r} with init={init!r}")
        if input_bias is not None:
            if self.model != "lstm":
                raise ValueError(f"input_bias sets the LSTM's input gate; model must be 'lstm', got {model!r}")
            input_bias = float(check_finite("input_bias", input_bias))
        self.forget_bias = None if biases is None else tuple(biases)
        self.t_max = t_max
        self.input_bias = input_bias
        G = cells.GATES[self.model]
        shapes = {
            "weight_ih_l0": (G * H, D),
            "weight_hh_l0": (G * H, H),
            "bias_ih_l0": (G * H,),
            "bias_hh_l0": (G * H,),
            "readout_weight": (self.output_size, H),
            "readout_bias": (self.output_size,),
        }
        stacked = {name: np.empty((E,) + shape) for name, shape in shapes.items()}
        for e, seed in enumerate(self.seeds):
            rng = np.random.default_rng(seed)
            for name, shape in shapes.items():  # the order the single models draw in
                stacked[name][e] = _init.pytorch_uniform(shape, H, rng)
            if biases is not None and biases[e] is not None:
                stacked["bias_ih_l0"][e, H : 2 * H] = biases[e]
                stacked["bias_hh_l0"][e, H : 2 * H] = 0.0
            if inits[e] == "chrono":
                assert t_max is not None  # checked above: a chrono member needs t_max
                b_f, b_i = _init.chrono_biases(H, t_max, seed=rng)
                stacked["bias_ih_l0"][e, H : 2 * H], stacked["bias_ih_l0"][e, 0:H] = b_f, b_i
                stacked["bias_hh_l0"][e, 0 : 2 * H] = 0.0
            if input_bias is not None:  # last: after the draw, forget_bias and chrono
                stacked["bias_ih_l0"][e, 0:H] = input_bias
                stacked["bias_hh_l0"][e, 0:H] = 0.0
        # The live arrays are views into one (E, P) block, member e's parameters in row e, so that an
        # optimizer can update every array of every member in one pass (rnnmem.lab does).
        self._shapes = shapes
        self._flat = np.empty((E, sum(int(np.prod(shape)) for shape in shapes.values())), dtype=self.dtype)
        self._bind()
        for name, value in stacked.items():
            self.params[name][...] = value

    def _bind(self) -> None:
        """Make ``params`` views into ``_flat`` (member e's parameters in row e) and empty the scratch space."""
        E, start = self._flat.shape[0], 0
        self.params = {}
        for name, shape in self._shapes.items():
            size = int(np.prod(shape))
            self.params[name] = self._flat[:, start : start + size].reshape((E,) + shape)
            start += size
        self._cache: Any = None
        self._workspace: dict = {}

    def _inits(self, init: Any, E: int) -> tuple:
        if isinstance(init, (list, tuple)):
            if len(init) != E:
                raise ValueError(
                    f"init must be one of {', '.join(map(repr, INITS))} or one per member ({E}), got {len(init)} values"
                )
            return tuple(check_choice(f"init[{k}]", i, INITS) for k, i in enumerate(init))
        return (check_choice("init", init, INITS),) * E

    def _forget_biases(self, forget_bias: Any, E: int) -> list | None:
        if forget_bias is None or (
            isinstance(forget_bias, (list, tuple)) and all(b is None for b in forget_bias) and len(forget_bias) == E
        ):
            return None
        if self.model != "lstm":
            raise ValueError(f"forget_bias sets the LSTM's forget gate; model must be 'lstm', got {self.model!r}")
        if isinstance(forget_bias, (list, tuple, np.ndarray)):
            if len(forget_bias) != E:
                raise ValueError(
                    f"forget_bias must be one number or one per member ({E}), got {len(forget_bias)} values"
                )
            return [
                None if b is None else float(check_finite(f"forget_bias[{k}]", b)) for k, b in enumerate(forget_bias)
            ]
        return [float(check_finite("forget_bias", forget_bias))] * E

    @property
    def size(self) -> int:
        """The number of members, :math:`E`."""
        return len(self.seeds)

    def __repr__(self) -> str:
        return (
            f"Ensemble({self.model!r}, input_size={self.input_size}, hidden_size={self.hidden_size}, "
            f"output_size={self.output_size}, members={self.size}, dtype={self.dtype.name})"
        )

    # ------------------------------------------------------------------ members

    def member(self, e: int) -> Recurrent:
        """Member ``e``'s recurrent layer as a single model (a copy): an LSTM, GRU or RNN.

        >>> ens = Ensemble("gru", 2, 3, 1, seeds=[5, 6])
        >>> from rnnmem.gru import GRU
        >>> bool(np.array_equal(ens.member(0).W_hh, GRU(2, 3, seed=5).W_hh))
        True
        """
        e = self._check_member(e)
        sd = {name: self.params[name][e].copy() for name in RECURRENT_NAMES}
        return cells.MODELS[self.model].from_torch_state_dict(sd, dtype=self.dtype)

    def select(self, members: Any) -> Ensemble:
        """A new ensemble of the given members, in the given order, with copies of their parameters.

        Each member keeps its seed and configuration; the copy computes what
        the member computes here, bit for bit (members never mix).

        >>> ens = Ensemble("rnn", 2, 3, 1, seeds=[5, 6, 7])
        >>> two = ens.select([2, 0])
        >>> two.seeds, bool(np.array_equal(two.params["weight_hh_l0"][1], ens.params["weight_hh_l0"][0]))
        ((7, 5), True)
        """
        if isinstance(members, (str, bytes)) or not isinstance(members, (list, tuple, np.ndarray)) or not len(members):
            raise ValueError(f"members must be a non-empty list of member indices, got {members!r}")
        rows = [self._check_member(e, f"members[{k}]") for k, e in enumerate(members)]
        new = object.__new__(Ensemble)
        new.__dict__.update(
            {k: v for k, v in self.__dict__.items() if k not in ("_flat", "params", "_cache", "_workspace")}
        )
        new.seeds = tuple(self.seeds[e] for e in rows)
        new.inits = tuple(self.inits[e] for e in rows)
        new.init = self.init if isinstance(self.init, str) else new.inits
        if self.forget_bias is not None:
            new.forget_bias = tuple(self.forget_bias[e] for e in rows)
        new._flat = self._flat[rows]  # a copy, C-contiguous
        new._bind()
        return new

    def _check_member(self, e: Any, name: str = "e") -> int:
        k = check_nonnegative_int(name, e)
        if k >= self.size:
            raise ValueError(f"{name} must be a member index from 0 to {self.size - 1}, got {e!r}")
        return k

    # ------------------------------------------------------------------ layout, buffers and inputs
    #
    # Inside, every per-step array is stored time first and feature-major, member by member inside
    # each feature row, the batch last: (T, rows, E, B). Row block t of the array `rows` holds
    # [h_t; x_t; 1] for every member, (K, E, B) with K = H + D + 1, so that a step of all members is
    # ONE batched product with the stacked weights [W_hh, W_ih, b] (E, G H, K), giving every
    # pre-activation, biases included; in the backward pass the same rows give every weight and
    # bias gradient, one product per step. Member e's matrix is the slice [:, e] of such an array, (rows, B) with a row stride of
    # E B numbers: the products read and write it in place (:func:`_matmul`). A gate (or the state)
    # of every member is then a block of rows, (H, E, B), ONE contiguous stretch of memory, so each
    # elementwise operation of a step is a single pass over contiguous numbers (numpy runs those
    # several times faster than strided ones).
    #
    # The LSTM's forward pass stacks its gate blocks in the order o|i|f|g (torch's is i|f|g|o), so
    # that the three sigmoid gates are one block; its backward pass keeps torch's order, in which the
    # three gates that dc_t drives (i, f, g) are one block.
    #
    # Nonlinearities, with the factors folded into the stacked weights (scaling by a power of two is
    # exact), so that a pre-activation comes out of the product already scaled:
    # * float64: through one exp, sigma(z) = 1/(1 + exp(-z)) and tanh(z) = 2/(1 + exp(-2z)) - 1
    #   (numpy's float64 tanh costs about two exps);
    # * float32: through one tanh, numpy's fastest float32 function, sigma(z) = (1 + tanh(z/2))/2.

    def _buffer(self, name: str, shape: tuple) -> np.ndarray:
        key = (name, shape)
        buf = self._workspace.get(key)
        if buf is None:
            buf = self._workspace[key] = np.empty(shape, dtype=self.dtype)
        return buf

    @property
    def _member_major(self) -> bool:
        """Whether the weight gradients read member-major copies of the rows (:meth:`_gradient_rows`).

        float32 GRUs and LSTMs do (measured 5 to 20% faster updates at the lab's sizes); the RNN's
        products are too small for the copy to pay, and float64 keeps the sums of the versions before.
        A backward pass with a gradient entering at every step (``d_steps``, an attention readout's)
        always does: those are the sums the attention lab's results were computed with.
        """
        every_step = self._cache is not None and self._cache.get("d_steps") is not None
        return every_step or (self.dtype == np.float32 and self.model != "rnn")

    @property
    def _through_tanh(self) -> bool:
        """Whether the nonlinearities go through tanh (float32) or through exp (float64)."""
        return self.dtype == np.float32

    def _rows(self, x: Any) -> tuple:
        """The (T + 1, K, E, B) array of rows [h_t; x_t; 1], with x filled in and h_0 = 0; and T, B."""
        D, E, H = self.input_size, self.size, self.hidden_size
        if isinstance(x, OneHot):
            return self._one_hot_rows(x)
        arr = np.asarray(x)
        if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
            raise ValueError(f"x must hold real numbers, got dtype {arr.dtype}")
        if arr.ndim == 3 and arr.shape[0] >= 1 and arr.shape[1] >= 1 and arr.shape[2] == D:
            arr = arr[:, None]
        elif not (
            arr.ndim == 4 and arr.shape[0] >= 1 and arr.shape[1] == E and arr.shape[2] >= 1 and arr.shape[3] == D
        ):
            raise ValueError(
                f"x must have shape (T, B, {D}) shared by the members or (T, {E}, B, {D}) one batch "
                f"per member, time first, with T >= 1 and B >= 1, got shape {arr.shape}"
            )
        T, B = arr.shape[0], arr.shape[2]
        rows = self._buffer("rows", (T + 1, H + D + 1, E, B))
        rows[0, :H] = 0.0
        rows[:T, H : H + D] = arr.transpose(0, 3, 1, 2)
        rows[:, H + D] = 1.0
        return rows, T, B

    def _one_hot_rows(self, x: OneHot) -> tuple:
        """_rows for one-hot inputs given by their indices: zeros, and a one where each index says."""
        D, E, H = self.input_size, self.size, self.hidden_size
        ids = check_one_hot(x, D, E)
        T, B = ids.shape[0], ids.shape[-1]
        K = H + D + 1
        rows = self._buffer("rows", (T + 1, K, E, B))
        rows[0, :H] = 0.0
        rows[:T, H : H + D] = 0.0
        rows[:, H + D] = 1.0
        key = ("one_hot_at", T, B)
        at = self._workspace.get(key)
        if at is None:  # where index 0 of step t, member e, sequence b goes in the flat rows
            t, e, b = np.ogrid[:T, :E, :B]
            at = self._workspace[key] = ((t * K + H) * E + e) * B + b
        where = at + (ids if ids.ndim == 3 else ids[:, None, :]) * (E * B)
        rows.reshape(-1)[where.reshape(-1)] = 1.0
        return rows, T, B

    def _stacked(self, blocks: list, scale: np.ndarray) -> np.ndarray:
        """Row blocks [W_h, W_x, b] side by side, (E, rows, K), each row times its scale."""
        W = np.concatenate([blocks[0], blocks[1], blocks[2][:, :, None]], axis=2)
        W *= scale[:, None]
        return W

    def _gate_rows(self, a: np.ndarray) -> np.ndarray:
        """An (E, G H, ...) array of the LSTM's gate rows from torch's order i|f|g|o to the inside's o|i|f|g."""
        H = self.hidden_size
        return np.concatenate([a[:, 3 * H :], a[:, : 3 * H]], axis=1)

    # ------------------------------------------------------------------ forward

    def forward(self, x: Any) -> np.ndarray:
        """Run every member over its sequences; return the last hidden states ``(E, B, H)``.

        ``x`` is ``(T, B, D)`` (the same sequences for every member) or
        ``(T, E, B, D)``, or a :class:`OneHot`; the state starts at zero. What
        :meth:`backward` needs is kept until the next call.

        >>> ens = Ensemble("rnn", 1, 2, 1, seeds=[0, 1])
        >>> ens.forward(np.ones((4, 3, 1))).shape
        (2, 3, 2)
        """
        return self._forward(x).transpose(1, 2, 0).copy()

    def _forward(self, x: Any, carry_masks: Any = None, keep: bool = True, hidden_masks: Any = None) -> np.ndarray:
        """The forward pass; the last hidden states feature-major, (H, E, B).

        ``keep=False`` (scoring only) stores one step of gates at a time instead of every step's,
        so the work stays in the cache; the numbers computed are the same. No backward pass follows.

        With ``hidden_masks``, the rows that enter the products hold :math:`M_t \\odot h_{t-1}` and
        the states themselves are kept in ``states`` (T + 1, H, E, B): the GRU's interpolation, the
        RNN's slope and the readout read them, unmasked.
        """
        self._cache = None
        rows, T, B = self._rows(x)
        masks = None if carry_masks is None else self._check_masks(carry_masks, T, B)
        hidden = None if hidden_masks is None else self._check_masks(hidden_masks, T, B, "hidden_masks")
        states = None
        if hidden is not None:
            states = self._buffer("states", (T + 1, self.hidden_size, self.size, B))
            states[0] = 0.0
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            cache = _kernels(self.model).forward(self, rows, T, B, masks, keep, hidden, states)
        if keep:
            cache.update(rows=rows, T=T, B=B, masks=masks, hidden=hidden, states=states)
            self._cache = cache
        return rows[T, : self.hidden_size] if states is None else states[T]

    def _new_state(self, rows, t, hidden, states):
        """Where step t writes h_t: the rows of step t + 1, or (hidden masks) the unmasked states."""
        return rows[t + 1, : self.hidden_size] if states is None else states[t + 1]

    def _mask_state(self, rows, t, T, hidden, states):
        """With hidden masks, step t + 1's rows get M_{t+1} h_t (the product's input)."""
        if states is not None and t + 1 < T:
            np.multiply(hidden[t + 1], states[t + 1], out=rows[t + 1, : self.hidden_size])

    def _forward_rnn(self, rows, T, B, masks=None, keep=True, hidden=None, states=None):
        H = self.hidden_size
        p = self.params
        tanh = self._through_tanh
        W = self._stacked(
            [p["weight_hh_l0"], p["weight_ih_l0"], p["bias_ih_l0"] + p["bias_hh_l0"]],
            np.full(H, 1.0 if tanh else -2.0, dtype=self.dtype),
        )
        product = self._buffer("step_product", (H, self.size, B))  # reused: the product writes into the cache
        for t in range(T):
            _matmul(W, rows[t], product)  # z_t (float32) or -2 z_t (float64)
            _tanh(product, self._new_state(rows, t, hidden, states), tanh)  # h_t = tanh(z_t)
            self._mask_state(rows, t, T, hidden, states)
        return {}

    def _forward_gru(self, rows, T, B, masks=None, keep=True, hidden=None, states=None):
        # Four row blocks: r and z from the state, the input and both biases; the candidate's
        # state part W_hn h + b_hn (which r multiplies); its input part W_in x + b_in.
        E, H, D = self.size, self.hidden_size, self.input_size
        p = self.params
        tanh = self._through_tanh
        W_ih, W_hh, b_ih, b_hh = p["weight_ih_l0"], p["weight_hh_l0"], p["bias_ih_l0"], p["bias_hh_l0"]
        rz, n = slice(0, 2 * H), slice(2 * H, 3 * H)
        zero_h, zero_x = np.zeros((E, H, H), dtype=self.dtype), np.zeros((E, H, D), dtype=self.dtype)
        W = self._stacked(
            [
                np.concatenate([W_hh[:, rz], W_hh[:, n], zero_h], axis=1),
                np.concatenate([W_ih[:, rz], zero_x, W_ih[:, n]], axis=1),
                np.concatenate([b_ih[:, rz] + b_hh[:, rz], b_hh[:, n], b_ih[:, n]], axis=1),
            ],
            np.repeat(np.array([0.5, 0.5, 1.0, 1.0] if tanh else [-1.0, -1.0, -2.0, -2.0], dtype=self.dtype), H),
        )
        kept = T if keep else 1
        gates = self._buffer("gates", (kept, 4 * H, E, B))  # r | z | s (W_hn h + b_hn) | s a_n, s = 1 or -2
        candidate = self._buffer("candidate", (kept, H, E, B))
        scratch = self._buffer("scratch", (H, E, B))
        product = self._buffer("step_product", (4 * H, E, B))  # reused: the product writes into the cache
        for t in range(T):
            k = t if keep else 0
            g, n_t = gates[k], candidate[k]
            _matmul(W, rows[t], product)
            _squash_in_place(product[: 2 * H], tanh, out=g[: 2 * H])  # r_t, z_t
            np.copyto(g[2 * H : 3 * H], product[2 * H : 3 * H])  # s (W_hn h + b_hn), kept for the backward pass
            np.multiply(g[:H], product[2 * H : 3 * H], out=scratch)
            a = product[3 * H :]
            a += scratch  # s a_n, a_n = W_in x + b_in + r (W_hn h + b_hn)
            _tanh(a, n_t, tanh)  # n_t = tanh(a_n)
            h_prev = rows[t, :H] if states is None else states[t]
            h_next = self._new_state(rows, t, hidden, states)
            np.subtract(h_prev, n_t, out=h_next)  # h_t = n + z (h_{t-1} - n)
            h_next *= g[H : 2 * H]
            h_next += n_t
            self._mask_state(rows, t, T, hidden, states)
        return {"gates": gates, "candidate": candidate}

    def _check_masks(self, masks: Any, T: int, B: int, name: str = "carry_masks") -> np.ndarray:
        """Carry-line masks (LSTM only) or hidden-state masks (T, E, B, H), as (T, H, E, B)."""
        E, H = self.size, self.hidden_size
        if name == "carry_masks" and self.model != "lstm":
            raise ValueError(f"carry_masks multiply the LSTM's cell state; model must be 'lstm', got {self.model!r}")
        arr = np.asarray(masks)
        if arr.shape != (T, E, B, H):
            what = "the cell states" if name == "carry_masks" else "the hidden states"
            raise ValueError(f"{name} must have shape ({T}, {E}, {B}, {H}) like {what}, got shape {arr.shape}")
        return np.ascontiguousarray(arr.transpose(0, 3, 1, 2), dtype=self.dtype)

    def _forward_lstm(self, rows, T, B, masks=None, keep=True, hidden=None, states=None):
        # Gate blocks o|i|f|g: the sigmoid gates o, i, f, then the candidate g = tanh(z_g).
        E, H = self.size, self.hidden_size
        p = self.params
        tanh = self._through_tanh
        W = self._stacked(
            [self._gate_rows(p[k]) for k in ("weight_hh_l0", "weight_ih_l0")]
            + [self._gate_rows(p["bias_ih_l0"] + p["bias_hh_l0"])],
            np.repeat(np.array([0.5, 0.5, 0.5, 1.0] if tanh else [-1.0, -1.0, -1.0, -2.0], dtype=self.dtype), H),
        )
        numerators = np.repeat(np.array([1.0, 1.0, 1.0, 2.0], dtype=self.dtype), H)[:, None, None]
        kept = T if keep else 1
        gates = self._buffer("gates", (kept, 4 * H, E, B))  # o | i | f | g
        cell = self._buffer("cell", (T + 1 if keep else 2, H, E, B))
        tanh_cell = self._buffer("tanh_cell", (kept, H, E, B))
        written = self._buffer("written", (H, E, B))
        carried = cell if masks is None else self._buffer("carried", (T, H, E, B))
        product = self._buffer("step_product", (4 * H, E, B))  # reused: the product writes into the cache
        cell[0] = 0.0
        for t in range(T):
            k, c_prev, c_next = (t, t, t + 1) if keep else (0, t % 2, (t + 1) % 2)
            g = gates[k]
            _matmul(W, rows[t], product)
            if tanh:
                np.tanh(product, out=g)
                sig = g[: 3 * H]
                sig += 1.0
                sig *= 0.5  # o, i, f = (1 + tanh(z/2)) / 2; g = tanh(z)
            else:
                np.exp(product, out=g)
                g += 1.0
                np.divide(numerators, g, out=g)  # o, i, f = 1/(1 + exp(-z)); 2/(1 + exp(-2 z_g))
                g[3 * H :] -= 1.0  # g = tanh(z_g)
            o, i, f, candidate = g[:H], g[H : 2 * H], g[2 * H : 3 * H], g[3 * H :]
            if masks is not None:  # dropout on the carry line:
                np.multiply(masks[t], cell[c_prev], out=carried[t])  # f multiplies M_t c_{t-1}
                c_prev_used = carried[t]
            else:
                c_prev_used = cell[c_prev]
            np.multiply(f, c_prev_used, out=cell[c_next])
            np.multiply(i, candidate, out=written)
            cell[c_next] += written  # c_t = f c_{t-1} + i g
            tc = tanh_cell[k]
            if tanh:
                np.tanh(cell[c_next], out=tc)
            else:
                np.multiply(cell[c_next], -2.0, out=tc)
                _tanh(tc, tc, False)  # tanh(c_t)
            np.multiply(o, tc, out=self._new_state(rows, t, hidden, states))  # h_t = o tanh(c_t)
            self._mask_state(rows, t, T, hidden, states)
        return {"gates": gates, "cell": cell, "tanh_cell": tanh_cell, "carried": carried}

    # ------------------------------------------------------------------ backward

    def backward(self, d_last: Any, *, d_steps: Any = None, step_norms: bool = False) -> dict:
        r"""Gradients of :math:`\sum_e \langle \delta h^{(e)}, h^{(e)}_T \rangle` for the latest :meth:`forward`.

        ``d_last`` ``(E, B, H)`` is the gradient of the loss with respect to
        the last hidden states (``None``: zero). ``d_steps`` ``(T, E, B, H)``,
        if given, adds a gradient entering at every step, for a loss that
        reads every state (:math:`\partial\mathcal{L}/\partial h_t` through
        that reading alone, an attention readout's): the total derivative is
        then :math:`\delta_t = \partial\mathcal{L}/\partial h_t +
        (\text{what comes back through step } t + 1)`, and entry ``T - 1``
        adds to ``d_last``. Returns the gradients of the four recurrent
        arrays, stacked like ``params``; with ``step_norms=True`` also
        ``"step_norms"`` ``(E, T)``: entry ``[e, s - 1]`` is the mean over the
        batch of :math:`\|\partial L / \partial h_s\|` per sequence (``B``
        times the norm of that sequence's row of the gradient, the loss being
        a mean over the batch), the gradient that reaches step :math:`s`
        through the recurrence; for the LSTM also ``"cell_step_norms"``
        ``(E, T)``, the same for the cell state, :math:`\|\partial L /
        \partial c_s\|`. Each is the total derivative with respect to the
        state as a node of the computation, through every later step: for the
        LSTM, :math:`\delta c_s = \delta h_s \odot o_s \odot (1 -
        \tanh^2 c_s) + f_{s+1} \odot \delta c_{s+1}` (through :math:`h_s =
        o_s \tanh c_s` and the carry line), where :math:`\delta h_s` reaches
        :math:`h_s` through the products of step :math:`s + 1` (its
        :math:`c_s` is upstream of it). (The gradient of an *initial* cell
        state in :meth:`rnnmem.lstm.LSTM.backward` holds the initial
        :math:`h` fixed: the carry term alone.)

        >>> ens = Ensemble("lstm", 2, 3, 1, seeds=[0])
        >>> h = ens.forward(np.ones((6, 4, 2)))
        >>> grads = ens.backward(np.ones_like(h), step_norms=True)
        >>> grads["weight_hh_l0"].shape, grads["step_norms"].shape, grads["cell_step_norms"].shape
        ((1, 12, 3), (1, 6), (1, 6))

        The gradient of the last state is a gradient entering at the last step
        (to the last bit in float32; in float64 the weights' gradients are
        summed in another order, from member-major copies of the rows):

        >>> every = np.zeros((6,) + h.shape)
        >>> every[-1] = 1.0
        >>> same = ens.backward(None, d_steps=every)
        >>> all(np.allclose(same[k], grads[k], rtol=1e-12, atol=0) for k in same)
        True
        """
        if self._cache is None:
            raise ValueError("backward needs a forward pass first: call forward(x) before backward(d_last)")
        E, T, B, H = self.size, self._cache["T"], self._cache["B"], self.hidden_size
        d = np.zeros((E, B, H)) if d_last is None else np.asarray(d_last)
        if d.shape != (E, B, H):
            raise ValueError(f"d_last must have shape ({E}, {B}, {H}), got shape {d.shape}")
        every = None
        if d_steps is not None:
            every = np.asarray(d_steps)
            if every.shape != (T, E, B, H):
                raise ValueError(f"d_steps must have shape ({T}, {E}, {B}, {H}), got shape {every.shape}")
            every = np.array(every.transpose(0, 3, 1, 2), dtype=self.dtype, order="C")
        return self._backward(np.array(d.transpose(2, 0, 1), dtype=self.dtype, order="C"), step_norms, every)

    def _backward(self, dh: np.ndarray, step_norms: bool, d_steps: np.ndarray | None = None) -> dict:
        """backward, from the gradient of the last hidden states feature-major, (H, E, B).

        ``d_steps`` (T, H, E, B), feature-major, is the gradient entering at every step (or ``None``);
        each cell's backward reads it from the cache as ``cache["d_steps"]`` and adds entry ``t`` to the
        gradient of step t's state before it uses it.
        """
        E, T = self.size, self._cache["T"]
        norms = {"h": np.zeros((E, T)), "c": np.zeros((E, T))} if step_norms else None
        self._cache["d_steps"] = d_steps
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                grads = _kernels(self.model).backward(self, self._cache, dh, norms)
        finally:
            self._cache["d_steps"] = None  # the cache keeps the forward pass, not a backward pass's input
        if norms is not None:
            grads["step_norms"] = norms["h"]
            if self.model == "lstm":
                grads["cell_step_norms"] = norms["c"]
        return grads

    def _gradient_rows(self, rows: np.ndarray, start: int, stop: int) -> np.ndarray:
        """Steps start..stop - 1 of ``rows`` as the weight gradients' products read them.

        Either ``rows`` itself, (steps, K, E, B), each member's (K, B) block read transposed; or (see
        :attr:`_member_major`) a member-major copy, (steps, E, B, K), each member's (B, K) block
        contiguous, which BLAS multiplies about twice as fast (and sums in another order).
        """
        if not self._member_major:
            return rows[start:stop]
        out = self._buffer("member_rows", (stop - start,) + rows.shape[2:] + rows.shape[1:2])
        np.copyto(out, rows[start:stop].transpose(0, 2, 3, 1))
        return out

    def _accumulate(self, total: np.ndarray, d_rows: np.ndarray, rows_t: np.ndarray) -> None:
        """total += d_rows (R, E, B) @ rows_t^T: step t's share of every weight and bias gradient, (E, R, K).

        ``rows_t`` is one step of :meth:`_gradient_rows`: (K, E, B), or member-major (E, B, K).
        """
        product = self._buffer("product", total.shape)
        second = rows_t if self._member_major else rows_t.transpose(1, 2, 0)
        np.matmul(d_rows.transpose(1, 0, 2), second, out=product)
        total += product

    def _split(self, total: np.ndarray, rows: slice = slice(None)) -> tuple:
        """The W_hh, W_ih and bias columns of a gradient of the stacked weights."""
        H, D = self.hidden_size, self.input_size
        return total[:, rows, :H], total[:, rows, H : H + D], total[:, rows, H + D]

    def _chunks(self, T: int, rows_per_step: int, B: int):
        """Spans of steps, last first, each small enough (about 2**18 numbers per array) to stay in cache.

        The backward pass computes its coefficients one span at a time, from
        the forward pass's stored values, just before the steps that use them.
        """
        chunk = max(1, min(T, 2**18 // (self.size * rows_per_step * B)))
        for start in range(((T - 1) // chunk) * chunk, -1, -chunk):
            yield start, min(start + chunk, T)

    def _backward_rnn(self, cache, dh, norms):
        E, T, B, H = self.size, cache["T"], cache["B"], self.hidden_size
        d_steps = cache.get("d_steps")
        rows, hidden, states = cache["rows"], cache["hidden"], cache["states"]
        total = np.zeros((E, H, H + self.input_size + 1), dtype=self.dtype)
        d_pre = self._buffer("d_pre", (H, E, B))
        W_hhT = self.params["weight_hh_l0"].transpose(0, 2, 1)
        for start, stop in self._chunks(T, H + self.input_size + 1, B):
            gradient_rows = self._gradient_rows(rows, start, stop)
            for t in range(stop - 1, start - 1, -1):
                if d_steps is not None:
                    dh += d_steps[t]
                if norms is not None:
                    norms["h"][:, t] = _sequence_norms(dh)
                h = rows[t + 1, :H] if states is None else states[t + 1]
                np.multiply(h, h, out=d_pre)
                np.subtract(1.0, d_pre, out=d_pre)  # tanh' = 1 - h^2
                d_pre *= dh
                self._accumulate(total, d_pre, gradient_rows[t - start])
                _matmul(W_hhT, d_pre, dh)
                if hidden is not None:
                    dh *= hidden[t]  # h_{t-1} entered the product as M_t h_{t-1}
        d_W_hh, d_W_ih, d_b = self._split(total)
        return {
            "weight_ih_l0": d_W_ih.copy(),
            "weight_hh_l0": d_W_hh.copy(),
            "bias_ih_l0": d_b.copy(),
            "bias_hh_l0": d_b.copy(),
        }

    def _backward_gru(self, cache, dh, norms):
        E, T, B, H = self.size, cache["T"], cache["B"], self.hidden_size
        d_steps = cache.get("d_steps")
        rows, gates, candidate = cache["rows"], cache["gates"], cache["candidate"]
        hidden, states = cache["hidden"], cache["states"]
        total = np.zeros((E, 4 * H, H + self.input_size + 1), dtype=self.dtype)
        d_rows = self._buffer("d_rows", (4 * H, E, B))
        kept = self._buffer("kept", (H, E, B))
        W_hhT = self.params["weight_hh_l0"].transpose(0, 2, 1)
        state_scale = 1.0 if self._through_tanh else -0.5  # the forward pass kept s (W_hn h + b_hn), s = 1 or -2
        for start, stop in self._chunks(T, 4 * H, B):
            span = slice(start, stop)
            r, z, n = gates[span, :H], gates[span, H : 2 * H], candidate[span]
            # Gradients of the four row blocks' outputs = dh_t * coefficient, known from the forward pass.
            coef = self._buffer("coef", (stop - start, 4 * H, E, B))
            c_r, c_z, c_sn, c_n = (coef[:, k * H : (k + 1) * H] for k in range(4))
            slope = self._buffer("slope", (stop - start, H, E, B))  # scratch, in place of temporaries
            np.multiply(n, n, out=c_n)
            np.subtract(1.0, c_n, out=c_n)
            np.subtract(1.0, z, out=slope)
            c_n *= slope  # n's input part: (1 - z)(1 - n^2)
            np.subtract(rows[span, :H] if states is None else states[span], n, out=c_z)
            slope *= z
            c_z *= slope  # z: (h_prev - n) z (1 - z)
            np.multiply(c_n, gates[span, 2 * H : 3 * H], out=c_r)
            if state_scale != 1.0:
                c_r *= state_scale
            np.subtract(1.0, r, out=slope)
            slope *= r
            c_r *= slope  # r: via r * (W_hn h + b_hn)
            np.multiply(c_n, r, out=c_sn)  # W_hn h + b_hn sits inside r * (.)
            gradient_rows = self._gradient_rows(rows, start, stop)
            for t in range(stop - 1, start - 1, -1):
                if d_steps is not None:
                    dh += d_steps[t]
                if norms is not None:
                    norms["h"][:, t] = _sequence_norms(dh)
                np.multiply(coef[t - start].reshape(4, H, E, B), dh, out=d_rows.reshape(4, H, E, B))
                self._accumulate(total, d_rows, gradient_rows[t - start])
                np.multiply(dh, gates[t, H : 2 * H], out=kept)
                _matmul(W_hhT, d_rows[: 3 * H], dh)
                if hidden is not None:
                    dh *= hidden[t]  # through the products, h_{t-1} entered as M_t h_{t-1}
                dh += kept
        H2, H3 = 2 * H, 3 * H
        d_W_hh_rz, d_W_ih_rz, d_b_rz = self._split(total, slice(0, H2))
        d_W_hn, _, d_b_hn = self._split(total, slice(H2, H3))
        _, d_W_in, d_b_in = self._split(total, slice(H3, 4 * H))
        return {
            "weight_ih_l0": np.concatenate([d_W_ih_rz, d_W_in], axis=1),
            "weight_hh_l0": np.concatenate([d_W_hh_rz, d_W_hn], axis=1),
            "bias_ih_l0": np.concatenate([d_b_rz, d_b_in], axis=1),
            "bias_hh_l0": np.concatenate([d_b_rz, d_b_hn], axis=1),
        }

    def _backward_lstm(self, cache, dh, norms):
        # The forward pass kept the gates in the order o|i|f|g; the gradients of the pre-activations are
        # in torch's order i|f|g|o, the three that dc_t drives first, as the weights' gradients are.
        E, T, B, H = self.size, cache["T"], cache["B"], self.hidden_size
        rows, gates, masks, hidden = cache["rows"], cache["gates"], cache["masks"], cache["hidden"]
        d_steps = cache.get("d_steps")  # a gradient entering at every step, or None
        total = np.zeros((E, 4 * H, H + self.input_size + 1), dtype=self.dtype)
        d_pre = self._buffer("d_pre", (4 * H, E, B))  # i | f | g | o
        dc = np.zeros((H, E, B), dtype=self.dtype)
        scratch = self._buffer("scratch", (H, E, B))
        W_hhT = self.params["weight_hh_l0"].transpose(0, 2, 1)
        for start, stop in self._chunks(T, 4 * H, B):
            span = slice(start, stop)
            o, i_f = gates[span, :H], gates[span, H : 3 * H]
            i, candidate, tanh_cell = gates[span, H : 2 * H], gates[span, 3 * H :], cache["tanh_cell"][span]
            # d(pre-activation) of i, f, g = dc_t * coefficient, of o = dh_t * coefficient:
            # the slope of the gate's nonlinearity times what the gate multiplies.
            coef = self._buffer("coef", (stop - start, 4 * H, E, B))
            c_i, c_f, c_g, c_o = (coef[:, k * H : (k + 1) * H] for k in range(4))
            c_if = coef[:, : 2 * H]
            np.subtract(1.0, i_f, out=c_if)
            c_if *= i_f  # s (1 - s) of i and f
            c_i *= candidate  # i multiplies g
            c_f *= cache["carried"][span]  # f multiplies c_{t-1} (times its mask)
            np.multiply(candidate, candidate, out=c_g)
            np.subtract(1.0, c_g, out=c_g)
            c_g *= i  # g is multiplied by i
            np.subtract(1.0, o, out=c_o)
            c_o *= o
            c_o *= tanh_cell  # o multiplies tanh(c_t)
            to_cell = self._buffer("to_cell", (stop - start, H, E, B))  # dc_t += dh_t o (1 - tanh^2 c_t)
            np.multiply(tanh_cell, tanh_cell, out=to_cell)
            np.subtract(1.0, to_cell, out=to_cell)
            to_cell *= o
            gradient_rows = self._gradient_rows(rows, start, stop)
            for t in range(stop - 1, start - 1, -1):
                j = t - start
                if d_steps is not None:
                    dh += d_steps[t]
                if norms is not None:
                    norms["h"][:, t] = _sequence_norms(dh)
                np.multiply(dh, to_cell[j], out=scratch)
                dc += scratch
                if norms is not None:
                    norms["c"][:, t] = _sequence_norms(dc)  # dL/dc_{t+1}, through every later step
                np.multiply(coef[j, : 3 * H].reshape(3, H, E, B), dc, out=d_pre[: 3 * H].reshape(3, H, E, B))
                np.multiply(c_o[j], dh, out=d_pre[3 * H :])
                dc *= gates[t, 2 * H : 3 * H]  # f_t
                if masks is not None:
                    dc *= masks[t]
                self._accumulate(total, d_pre, gradient_rows[j])
                _matmul(W_hhT, d_pre, dh)
                if hidden is not None:
                    dh *= hidden[t]  # h_{t-1} entered the products as M_t h_{t-1}
        d_W_hh, d_W_ih, d_b = self._split(total)
        return {
            "weight_ih_l0": d_W_ih.copy(),
            "weight_hh_l0": d_W_hh.copy(),
            "bias_ih_l0": d_b.copy(),
            "bias_hh_l0": d_b.copy(),
        }

    # ------------------------------------------------------------------ readout and loss

    def readout(self, h_last: np.ndarray) -> np.ndarray:
        r"""The readout :math:`V h + c` of last hidden states ``(E, B, H)``: ``(E, B, O)``.

        >>> ens = Ensemble("gru", 1, 2, 3, seeds=[0, 1])
        >>> ens.readout(ens.forward(np.ones((2, 5, 1)))).shape
        (2, 5, 3)
        """
        out = np.matmul(h_last, self.params["readout_weight"].transpose(0, 2, 1))
        out += self.params["readout_bias"][:, None, :]
        return out

    def _readout(self, hT: np.ndarray) -> np.ndarray:
        """The readout of feature-major last states (H, E, B): (E, O, B)."""
        out = np.matmul(self.params["readout_weight"], hT.transpose(1, 0, 2))
        out += self.params["readout_bias"][:, :, None]
        return out

    def predict(self, x: Any) -> np.ndarray:
        """The readout of every member on ``x``: ``(E, B, O)`` (logits, or the predicted number).

        >>> Ensemble("rnn", 2, 3, 4, seeds=[0]).predict(np.zeros((3, 5, 2))).shape
        (1, 5, 4)
        """
        with np.errstate(over="ignore", invalid="ignore"):
            return self._readout(self._forward(x, keep=False)).transpose(0, 2, 1)

    def loss_and_grads(
        self,
        x: Any,
        targets: Any,
        kind: str,
        *,
        step_norms: bool = False,
        carry_masks: Any = None,
        hidden_masks: Any = None,
    ) -> tuple:
        r"""Each member's loss on its batch and the gradients of every parameter array.

        ``kind`` is ``"classification"`` (``targets`` class indices, mean
        softmax cross-entropy in nats) or ``"regression"`` (``targets``
        numbers, mean squared error with ``output_size`` 1). ``targets`` is
        ``(B,)`` shared or ``(E, B)``. Returns ``(losses (E,), grads)`` with
        ``grads`` keyed like ``params`` (plus ``"step_norms"`` on request, see
        :meth:`backward`). A member whose loss is not finite has a NaN or
        infinite loss here; nothing is raised.

        ``carry_masks`` (LSTM only), ``(T, E, B, H)`` like the cell states,
        multiplies the carry line: :math:`c_t = f_t \odot (M_t \odot c_{t-1})
        + i_t \odot g_t` (dropout on the cell state; the caller draws the
        masks and their scale).

        ``hidden_masks`` (any cell), ``(T, E, B, H)`` like the hidden states,
        multiplies the previous hidden state where it enters the recurrent
        product, :math:`W_{hh} h_{t-1} \to W_{hh} (M_t \odot h_{t-1})`, in
        every gate block at once (one mask shared by the LSTM's four gates and
        the GRU's three, as Gal and Ghahramani 2016 tie them); entry ``t``
        multiplies :math:`h_{t-1}` at step ``t`` (entry 0 multiplies the zero
        initial state). The state itself, its other paths (the GRU's
        interpolation) and the readout are not masked.

        >>> ens = Ensemble("lstm", 1, 2, 1, seeds=[0, 1])
        >>> losses, grads = ens.loss_and_grads(np.ones((3, 4, 1)), np.ones(4), "regression")
        >>> losses.shape, sorted(grads)[:2]
        ((2,), ['bias_hh_l0', 'bias_ih_l0'])
        """
        kind = check_choice("kind", kind, KINDS)
        E = self.size
        hT = self._forward(x, carry_masks, hidden_masks=hidden_masks)  # (H, E, B)
        B = self._cache["B"]
        y = self._check_targets(targets, kind, E, B)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out = self._readout(hT)  # (E, O, B)
            if kind == "classification":
                shifted = out - out.max(axis=1, keepdims=True)
                log_norm = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
                log_p = shifted - log_norm
                picked = np.take_along_axis(log_p, y[:, None, :], axis=1)[:, 0]
                losses = -picked.mean(axis=1)
                d_out = np.exp(log_p)  # softmax - onehot, over B
                np.put_along_axis(d_out, y[:, None, :], np.take_along_axis(d_out, y[:, None, :], axis=1) - 1.0, axis=1)
                d_out /= B
            else:
                err = out[:, 0] - y
                losses = (err * err).mean(axis=1)
                d_out = (2.0 / B) * err[:, None, :]
            V = self.params["readout_weight"]
            dh = np.empty(hT.shape, dtype=self.dtype)
            _matmul(V.transpose(0, 2, 1), d_out.transpose(1, 0, 2), dh)
            grads = self._backward(dh, step_norms)
            grads["readout_weight"] = np.matmul(d_out, hT.transpose(1, 2, 0))
            grads["readout_bias"] = d_out.sum(axis=2)
        return losses, grads

    def _check_targets(self, targets: Any, kind: str, E: int, B: int) -> np.ndarray:
        return check_targets(targets, kind, E, B, self.output_size, self.dtype)


class Kernels(NamedTuple):
    """A cell's stacked forward and backward passes: what :class:`Ensemble` runs for a member of that cell.

    ``forward(ens, rows, T, B, masks, keep, hidden, states)`` runs the ``T`` steps of every member: it reads
    ``rows[t]`` ``(H + D + 1, E, B)`` (:math:`[h_{t-1}; x_t; 1]`), writes :math:`h_t` where
    ``ens._new_state`` says (and masks it with ``ens._mask_state`` when ``hidden`` masks are given), and
    returns the dict of what its backward pass reads (``masks`` are the LSTM's carry masks, ``None`` for
    the other cells; ``keep=False`` keeps one step only, no backward pass follows).
    ``backward(ens, cache, dh, norms)`` takes that dict (with ``rows``, ``T``, ``B``, ``masks``,
    ``hidden``, ``states`` and ``d_steps`` added), the gradient of the last states ``dh`` ``(H, E, B)``
    and, when step norms are asked, ``norms["h"]`` ``(E, T)`` to fill; ``cache["d_steps"]``, unless
    ``None``, is a gradient entering at every step, ``(T, H, E, B)`` (:meth:`Ensemble.backward`), whose
    entry ``t`` it adds to the gradient of step ``t``'s state before using it. It returns the gradients
    of :data:`RECURRENT_NAMES`, stacked like :attr:`Ensemble.params`.
    """

    name: str
    forward: Callable[..., dict]
    backward: Callable[..., dict]


KERNELS: dict[str, Kernels] = {
    "rnn": Kernels("rnn", Ensemble._forward_rnn, Ensemble._backward_rnn),
    "gru": Kernels("gru", Ensemble._forward_gru, Ensemble._backward_gru),
    "lstm": Kernels("lstm", Ensemble._forward_lstm, Ensemble._backward_lstm),
}
"""Cell name (of :data:`rnnmem.cells.CLASSIC`) -> its stacked kernels: the one table :class:`Ensemble`
dispatches on. A cell without an entry is refused by name, never run through another cell's equations."""

MODELS = tuple(KERNELS)
"""The cells an :class:`Ensemble` stacks, those of :data:`KERNELS`: ``("rnn", "gru", "lstm")``."""


def _kernels(model: Any) -> Kernels:
    """The stacked kernels of ``model``, read from :data:`KERNELS` as it is now; a ValueError naming the cell if none."""
    return KERNELS[check_choice("model", model, tuple(KERNELS))]


def check_one_hot(x: OneHot, input_size: int, members: int) -> np.ndarray:
    """The indices of one-hot inputs, checked: whole numbers from 0 to ``input_size - 1``, of shape ``(T, B)``
    shared by the members or ``(T, members, B)``. Every ensemble of the lab checks its :class:`OneHot` inputs here.

    >>> check_one_hot(OneHot(np.zeros((3, 2), dtype=int)), input_size=4, members=5).shape
    (3, 2)
    """
    D, E = input_size, members
    ids = np.asarray(x.ids)
    if ids.dtype.kind not in "iu" or ids.ndim not in (2, 3) or min(ids.shape) < 1:
        raise ValueError(
            f"x.ids must be whole numbers of shape (T, B) shared by the members or (T, {E}, B), "
            f"got {ids.dtype} of shape {ids.shape}"
        )
    if ids.ndim == 3 and ids.shape[1] != E:
        raise ValueError(f"x.ids must have shape (T, B) or (T, {E}, B), got shape {ids.shape}")
    if ids.min() < 0 or ids.max() >= D:
        raise ValueError(f"x.ids must be indices from 0 to {D - 1} (the input size), got {ids.min()} to {ids.max()}")
    return ids


def check_targets(targets: Any, kind: str, E: int, B: int, output_size: int, dtype: Any) -> np.ndarray:
    """The targets of a batch of ``B`` sequences for ``E`` members, checked: ``(E, B)`` class indices
    (``kind="classification"``, below ``output_size``) or finite numbers in ``dtype`` (``"regression"``,
    one output); ``(B,)`` targets are shared by every member. Every ensemble of the lab checks its targets here.

    >>> check_targets([0, 2], "classification", 3, 2, output_size=3, dtype=np.float64).shape
    (3, 2)
    """
    y = np.asarray(targets)
    if y.shape == (B,):
        y = np.broadcast_to(y, (E, B))
    if y.shape != (E, B):
        raise ValueError(f"targets must have shape ({B},) or ({E}, {B}), got shape {np.shape(targets)}")
    if kind == "classification":
        if y.dtype.kind not in "iu" or y.min() < 0 or y.max() >= output_size:
            raise ValueError(
                f"targets must be class indices from 0 to {output_size - 1}, "
                f"got values from {y.min()} to {y.max()} (dtype {y.dtype})"
            )
        return y.astype(np.intp)
    if output_size != 1:
        raise ValueError(f"kind='regression' reads one number: output_size must be 1, got {output_size}")
    return np.asarray(check_finite("targets", y), dtype=dtype)


def _squash_in_place(a: np.ndarray, through_tanh: bool, out: np.ndarray | None = None) -> None:
    """``out`` (default ``a``) = sigma(z): from ``a = z/2``, (1 + tanh(z/2))/2; else from ``a = -z``, 1/(1 + exp(-z)).

    (exp may overflow to inf: sigma = 0.)
    """
    out = a if out is None else out
    if through_tanh:
        np.tanh(a, out=out)
        out += 1.0
        out *= 0.5
    else:
        np.exp(a, out=out)
        out += 1.0
        np.divide(1.0, out, out=out)  # as np.reciprocal computes it, in one vectorized pass


def _tanh(a: np.ndarray, out: np.ndarray, through_tanh: bool) -> None:
    """``out`` = tanh(z): from ``a = z``, numpy's tanh; else from ``a = -2z``, 2/(1 + exp(-2z)) - 1 (``a`` is overwritten)."""
    if through_tanh:
        np.tanh(a, out=out)
    else:
        np.exp(a, out=a)
        a += 1.0
        np.divide(2.0, a, out=out)  # = 2 (1/a) exactly: the factor 2 is a power of two
        out -= 1.0


def _sequence_norms(dh: np.ndarray) -> np.ndarray:
    """Mean over the batch of each sequence's gradient norm, from dL/dh (H, E, B) of a batch-mean loss."""
    B = dh.shape[2]
    return np.sqrt((dh * dh).sum(axis=0)).mean(axis=1) * B


def _matmul(W: np.ndarray, a: np.ndarray, out: np.ndarray) -> None:
    """``out[:, e] = W[e] @ a[:, e]`` for every member e: ``a`` (K, E, B) and ``out`` (R, E, B) in place, W (E, R, K).

    Member e's matrices are the slices ``[:, e]``, (rows, B) with a row stride of E B numbers, which
    BLAS reads and writes where they are: one product per member, each computing what the same member
    computes alone.
    """
    np.matmul(W, a.transpose(1, 0, 2), out=out.transpose(1, 0, 2))

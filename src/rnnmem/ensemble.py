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
matrix product, ``np.matmul`` over ``(E, B, H) @ (E, H, G H)``, so a Python
loop runs over time steps, never over members. Member :math:`e` computes what
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
  generator after the readout.

Sequences are time first, ``(T, B, D)`` shared by every member or
``(T, E, B, D)`` one batch per member. Bad input raises :class:`ValueError`
naming the argument.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import init as _init
from ._validate import check_choice, check_dtype, check_finite, check_nonnegative_int, check_positive, \
    check_positive_int
from .gru import GRU
from .lstm import LSTM
from .rnn import RNN

__all__ = ["MODELS", "INITS", "KINDS", "Ensemble"]

MODELS = ("rnn", "gru", "lstm")
"""The recurrent layers an :class:`Ensemble` stacks: the tanh RNN, the GRU, the LSTM."""

INITS = ("default", "chrono")
"""Initializations: PyTorch's uniform draw, or chrono (LSTM only)."""

KINDS = ("classification", "regression")
"""Readouts: softmax cross-entropy over classes, or squared error of one number."""

_GATES = {"rnn": 1, "gru": 3, "lstm": 4}
_CLASSES = {"rnn": RNN, "gru": GRU, "lstm": LSTM}
RECURRENT_NAMES = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")
READOUT_NAMES = ("readout_weight", "readout_bias")


def _seeds(seeds: Any) -> tuple:
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        seeds = [seeds]
    if not isinstance(seeds, (list, tuple, np.ndarray)) or len(seeds) == 0:
        raise ValueError(f"seeds must be a non-empty list of whole numbers >= 0, got {seeds!r}")
    return tuple(check_nonnegative_int(f"seeds[{k}]", s) for k, s in enumerate(seeds))


class Ensemble:
    r"""``E`` independent models (recurrent layer and readout), parameters stacked on axis 0.

    ``Ensemble(model, input_size, hidden_size, output_size, seeds, *,
    forget_bias=None, init="default", t_max=None, dtype=np.float64)``: one
    member per seed (see the module for what each draws). ``forget_bias`` is
    ``None``, one number for every member, or a list with one number per
    member (LSTM only); ``init="chrono"`` needs ``t_max > 2`` (LSTM only).
    ``params`` maps each name to its live stacked array.

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

    def __init__(self, model: str, input_size: int, hidden_size: int, output_size: int, seeds: Any, *,
                 forget_bias: Any = None, init: str = "default", t_max: float | None = None,
                 dtype: Any = np.float64) -> None:
        self.model = check_choice("model", model, MODELS)
        self.input_size = check_positive_int("input_size", input_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        self.output_size = check_positive_int("output_size", output_size)
        self.seeds = _seeds(seeds)
        self.dtype = check_dtype("dtype", dtype)
        self.init = check_choice("init", init, INITS)
        E, D, H, O = len(self.seeds), self.input_size, self.hidden_size, self.output_size
        biases = self._forget_biases(forget_bias, E)
        if self.init == "chrono":
            if self.model != "lstm":
                raise ValueError(f"init='chrono' sets LSTM gate biases; model must be 'lstm', got {model!r}")
            if biases is not None:
                raise ValueError("forget_bias and init='chrono' both set the forget bias: give one of them")
            if t_max is None:
                raise ValueError("init='chrono' needs t_max, the longest lifetime wanted (a number > 2)")
            t_max = float(check_positive("t_max", t_max))
            if t_max <= 2:
                raise ValueError(f"t_max must be greater than 2 (u is drawn from [1, t_max - 1]), got {t_max!r}")
        elif t_max is not None:
            raise ValueError(f"t_max is used only with init='chrono', got t_max={t_max!r} with init={init!r}")
        self.forget_bias = None if biases is None else tuple(biases)
        self.t_max = t_max
        G = _GATES[self.model]
        shapes = {"weight_ih_l0": (G * H, D), "weight_hh_l0": (G * H, H), "bias_ih_l0": (G * H,),
                  "bias_hh_l0": (G * H,), "readout_weight": (O, H), "readout_bias": (O,)}
        stacked = {name: np.empty((E,) + shape) for name, shape in shapes.items()}
        bound = 1.0 / np.sqrt(H)
        for e, seed in enumerate(self.seeds):
            rng = np.random.default_rng(seed)
            for name, shape in shapes.items():          # the order the single models draw in
                stacked[name][e] = rng.uniform(-bound, bound, size=shape)
            if self.model == "lstm" and biases is not None:
                stacked["bias_ih_l0"][e, H:2 * H] = biases[e]
                stacked["bias_hh_l0"][e, H:2 * H] = 0.0
            if self.init == "chrono":
                b_f, b_i = _init.chrono_biases(H, t_max, seed=rng)
                stacked["bias_ih_l0"][e, H:2 * H], stacked["bias_ih_l0"][e, 0:H] = b_f, b_i
                stacked["bias_hh_l0"][e, 0:2 * H] = 0.0
        self.params = {name: value.astype(self.dtype) for name, value in stacked.items()}
        self._cache: Any = None
        self._workspace: dict = {}

    def _forget_biases(self, forget_bias: Any, E: int) -> list | None:
        if forget_bias is None:
            return None
        if self.model != "lstm":
            raise ValueError(f"forget_bias sets the LSTM's forget gate; model must be 'lstm', got {self.model!r}")
        if isinstance(forget_bias, (list, tuple, np.ndarray)):
            if len(forget_bias) != E:
                raise ValueError(f"forget_bias must be one number or one per member ({E}), "
                                 f"got {len(forget_bias)} values")
            return [float(check_finite(f"forget_bias[{k}]", b)) for k, b in enumerate(forget_bias)]
        return [float(check_finite("forget_bias", forget_bias))] * E

    @property
    def size(self) -> int:
        """The number of members, :math:`E`."""
        return len(self.seeds)

    def __repr__(self) -> str:
        return (f"Ensemble({self.model!r}, input_size={self.input_size}, hidden_size={self.hidden_size}, "
                f"output_size={self.output_size}, members={self.size}, dtype={self.dtype.name})")

    # ------------------------------------------------------------------ members

    def member(self, e: int) -> Any:
        """Member ``e``'s recurrent layer as a single model (a copy): an LSTM, GRU or RNN.

        >>> ens = Ensemble("gru", 2, 3, 1, seeds=[5, 6])
        >>> from rnnmem.gru import GRU
        >>> bool(np.array_equal(ens.member(0).W_hh, GRU(2, 3, seed=5).W_hh))
        True
        """
        e = self._check_member(e)
        sd = {name: self.params[name][e].copy() for name in RECURRENT_NAMES}
        return _CLASSES[self.model].from_torch_state_dict(sd, dtype=self.dtype)

    def _check_member(self, e: Any) -> int:
        k = check_nonnegative_int("e", e)
        if k >= self.size:
            raise ValueError(f"e must be a member index from 0 to {self.size - 1}, got {e!r}")
        return k

    # ------------------------------------------------------------------ buffers and inputs

    def _buffer(self, name: str, shape: tuple) -> np.ndarray:
        key = (name, shape)
        buf = self._workspace.get(key)
        if buf is None:
            buf = self._workspace[key] = np.empty(shape, dtype=self.dtype)
        return buf

    def _check_x(self, x: Any) -> np.ndarray:
        """x as (E or 1, T*B, D) float, member first, and T, B."""
        D, E = self.input_size, self.size
        arr = np.asarray(x)
        if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
            raise ValueError(f"x must hold real numbers, got dtype {arr.dtype}")
        if arr.ndim == 3 and arr.shape[0] >= 1 and arr.shape[1] >= 1 and arr.shape[2] == D:
            T, B = arr.shape[:2]
            return np.ascontiguousarray(arr, dtype=self.dtype).reshape(1, T * B, D), T, B
        if arr.ndim == 4 and arr.shape[0] >= 1 and arr.shape[1] == E and arr.shape[2] >= 1 and arr.shape[3] == D:
            T, B = arr.shape[0], arr.shape[2]
            buf = self._buffer("x", (E, T, B, D))
            np.copyto(buf, arr.transpose(1, 0, 2, 3))
            return buf.reshape(E, T * B, D), T, B
        raise ValueError(f"x must have shape (T, B, {D}) shared by the members or (T, {E}, B, {D}) one batch "
                         f"per member, time first, with T >= 1 and B >= 1, got shape {arr.shape}")

    # ------------------------------------------------------------------ forward

    def forward(self, x: Any) -> np.ndarray:
        """Run every member over its sequences; return the last hidden states ``(E, B, H)``.

        ``x`` is ``(T, B, D)`` (the same sequences for every member) or
        ``(T, E, B, D)``; the state starts at zero. What :meth:`backward`
        needs is kept until the next call.

        >>> ens = Ensemble("rnn", 1, 2, 1, seeds=[0, 1])
        >>> ens.forward(np.ones((4, 3, 1))).shape
        (2, 3, 2)
        """
        self._cache = None
        xs, T, B = self._check_x(x)
        run = {"rnn": self._forward_rnn, "gru": self._forward_gru, "lstm": self._forward_lstm}[self.model]
        with np.errstate(over="ignore", invalid="ignore"):
            h_last, cache = run(xs, T, B)
        cache.update(x=xs, T=T, B=B)
        self._cache = cache
        return h_last

    def _input_projection(self, xs: np.ndarray, T: int, B: int, columns: int) -> np.ndarray:
        """W_ih x for every step and member, (E, T, B, G H), plus b_ih: one batched product."""
        E = self.size
        out = self._buffer("projection", (E, T, B, columns))
        np.matmul(xs, self.params["weight_ih_l0"].transpose(0, 2, 1), out=out.reshape(E, T * B, columns))
        out += self.params["bias_ih_l0"][:, None, None, :]
        return out

    def _forward_rnn(self, xs, T, B):
        E, H = self.size, self.hidden_size
        pre = self._input_projection(xs, T, B, H)
        pre += self.params["bias_hh_l0"][:, None, None, :]
        hidden = self._buffer("hidden", (E, T + 1, B, H))
        hidden[:, 0] = 0.0
        W_hT = self.params["weight_hh_l0"].transpose(0, 2, 1).copy()
        recurrent = self._buffer("recurrent", (E, B, H))
        for t in range(T):
            np.matmul(hidden[:, t], W_hT, out=recurrent)
            recurrent += pre[:, t]
            np.tanh(recurrent, out=hidden[:, t + 1])
        return hidden[:, T].copy(), {"hidden": hidden}

    def _forward_gru(self, xs, T, B):
        E, H = self.size, self.hidden_size
        b_hh = self.params["bias_hh_l0"]
        gates = self._input_projection(xs, T, B, 3 * H)          # becomes r | z | n in place
        gates[..., :2 * H] += b_hh[:, None, None, :2 * H]
        b_hn = b_hh[:, None, 2 * H:].copy()                      # (E, 1, H)
        hidden = self._buffer("hidden", (E, T + 1, B, H))
        hidden[:, 0] = 0.0
        reset_input = self._buffer("reset_input", (E, T, B, H))  # W_hn h + b_hn, which r multiplies
        from_state = self._buffer("from_state", (E, B, 3 * H))
        W_hT = self.params["weight_hh_l0"].transpose(0, 2, 1).copy()
        for t in range(T):
            g = gates[:, t]
            np.matmul(hidden[:, t], W_hT, out=from_state)
            rz = g[..., :2 * H]
            rz += from_state[..., :2 * H]
            _sigmoid_inplace(rz)
            np.add(from_state[..., 2 * H:], b_hn, out=reset_input[:, t])
            n = g[..., 2 * H:]
            n += g[..., :H] * reset_input[:, t]
            np.tanh(n, out=n)
            h_next = hidden[:, t + 1]
            np.subtract(hidden[:, t], n, out=h_next)             # h = n + z (h_prev - n)
            h_next *= g[..., H:2 * H]
            h_next += n
        return hidden[:, T].copy(), {"hidden": hidden, "gates": gates, "reset_input": reset_input}

    def _forward_lstm(self, xs, T, B):
        # Gate columns are scaled so that one exp activates all four: 1/(1 + exp(s z))
        # with s = -1 is sigma(z) for i, f, o, and with s = -2 sigma(2z) for g, whence
        # the candidate tanh(z) = 2 sigma(2z) - 1 (the scalings by powers of 2 are exact).
        E, H = self.size, self.hidden_size
        scale = np.repeat(np.array([-1.0, -1.0, -2.0, -1.0], dtype=self.dtype), H)
        gates = self._input_projection(xs, T, B, 4 * H)
        gates += self.params["bias_hh_l0"][:, None, None, :]
        gates *= scale
        W_hT = (self.params["weight_hh_l0"] * scale[:, None]).transpose(0, 2, 1).copy()
        hidden = self._buffer("hidden", (E, T + 1, B, H))
        cell = self._buffer("cell", (E, T + 1, B, H))
        candidate = self._buffer("candidate", (E, T, B, H))
        tanh_cell = self._buffer("tanh_cell", (E, T, B, H))
        recurrent = self._buffer("recurrent", (E, B, 4 * H))
        written = self._buffer("written", (E, B, H))
        hidden[:, 0] = 0.0
        cell[:, 0] = 0.0
        for t in range(T):
            g = gates[:, t]
            np.matmul(hidden[:, t], W_hT, out=recurrent)
            g += recurrent
            np.exp(g, out=g)
            g += 1.0
            np.reciprocal(g, out=g)
            np.multiply(g[..., 2 * H:3 * H], 2.0, out=candidate[:, t])
            candidate[:, t] -= 1.0
            np.multiply(g[..., H:2 * H], cell[:, t], out=cell[:, t + 1])
            np.multiply(g[..., :H], candidate[:, t], out=written)
            cell[:, t + 1] += written
            np.tanh(cell[:, t + 1], out=tanh_cell[:, t])
            np.multiply(g[..., 3 * H:], tanh_cell[:, t], out=hidden[:, t + 1])
        return hidden[:, T].copy(), {"hidden": hidden, "gates": gates, "cell": cell, "candidate": candidate,
                                     "tanh_cell": tanh_cell}

    # ------------------------------------------------------------------ backward

    def backward(self, d_last: Any, *, step_norms: bool = False) -> dict:
        r"""Gradients of :math:`\sum_e \langle \delta h^{(e)}, h^{(e)}_T \rangle` for the latest :meth:`forward`.

        ``d_last`` ``(E, B, H)`` is the gradient of the loss with respect to
        the last hidden states. Returns the gradients of the four recurrent
        arrays, stacked like ``params``; with ``step_norms=True`` also
        ``"step_norms"`` ``(E, T)``: entry ``[e, s - 1]`` is the mean over the
        batch of :math:`\|\partial L / \partial h_s\|` per sequence, the
        gradient that reaches step :math:`s` through the recurrence.

        >>> ens = Ensemble("lstm", 2, 3, 1, seeds=[0])
        >>> h = ens.forward(np.ones((6, 4, 2)))
        >>> grads = ens.backward(np.ones_like(h), step_norms=True)
        >>> grads["weight_hh_l0"].shape, grads["step_norms"].shape
        ((1, 12, 3), (1, 6))
        """
        if self._cache is None:
            raise ValueError("backward needs a forward pass first: call forward(x) before backward(d_last)")
        E, B, H = self.size, self._cache["B"], self.hidden_size
        d = np.asarray(d_last)
        if d.shape != (E, B, H):
            raise ValueError(f"d_last must have shape ({E}, {B}, {H}), got shape {d.shape}")
        run = {"rnn": self._backward_rnn, "gru": self._backward_gru, "lstm": self._backward_lstm}[self.model]
        norms = np.zeros((E, self._cache["T"])) if step_norms else None
        with np.errstate(over="ignore", invalid="ignore"):
            grads = run(self._cache, np.array(d, dtype=self.dtype), norms)
        if step_norms:
            grads["step_norms"] = norms
        return grads

    def _weight_grads(self, cache: dict, d_input: np.ndarray, d_state: np.ndarray) -> dict:
        """One batched product each for W_ih, W_hh and the biases, from (E, T, B, G H) pre-activation gradients."""
        E, T, B, H = self.size, cache["T"], cache["B"], self.hidden_size
        GH = d_input.shape[-1]
        d_in = d_input.reshape(E, T * B, GH)
        d_st = d_state.reshape(E, T * B, GH)
        h_prev = cache["hidden"][:, :T].reshape(E, T * B, H)
        return {"weight_ih_l0": np.matmul(d_in.transpose(0, 2, 1), cache["x"]),
                "weight_hh_l0": np.matmul(d_st.transpose(0, 2, 1), h_prev),
                "bias_ih_l0": d_in.sum(axis=1),
                "bias_hh_l0": d_st.sum(axis=1) if d_state is not d_input else d_in.sum(axis=1)}

    def _backward_rnn(self, cache, dh, norms):
        E, T, B, H = self.size, cache["T"], cache["B"], self.hidden_size
        hidden = cache["hidden"]
        d_pre = self._buffer("d_pre", (E, T, B, H))
        np.multiply(hidden[:, 1:], hidden[:, 1:], out=d_pre)
        np.subtract(1.0, d_pre, out=d_pre)                        # tanh' = 1 - h^2
        W_hh = self.params["weight_hh_l0"]
        for t in range(T - 1, -1, -1):
            if norms is not None:
                norms[:, t] = _row_norms(dh, B)
            d_pre[:, t] *= dh
            np.matmul(d_pre[:, t], W_hh, out=dh)
        return self._weight_grads(cache, d_pre, d_pre)

    def _backward_gru(self, cache, dh, norms):
        E, T, B, H = self.size, cache["T"], cache["B"], self.hidden_size
        hidden, gates, reset_input = cache["hidden"], cache["gates"], cache["reset_input"]
        r, z, n = gates[..., :H], gates[..., H:2 * H], gates[..., 2 * H:]
        # d(pre-activation) = dh_t * coefficient, all known from the forward pass.
        coef = self._buffer("coef", (E, T, B, 3 * H))
        c_r, c_z, c_n = coef[..., :H], coef[..., H:2 * H], coef[..., 2 * H:]
        np.multiply(n, n, out=c_n)
        np.subtract(1.0, c_n, out=c_n)
        c_n *= 1.0 - z                                            # n: (1 - z)(1 - n^2)
        np.subtract(hidden[:, :T], n, out=c_z)
        c_z *= z * (1.0 - z)                                      # z: (h_prev - n) z (1 - z)
        np.multiply(c_n, reset_input, out=c_r)
        c_r *= r * (1.0 - r)                                      # r: via r * (W_hn h + b_hn)
        coef_state = self._buffer("coef_state", (E, T, B, 3 * H))
        coef_state[..., :2 * H] = coef[..., :2 * H]
        np.multiply(c_n, r, out=coef_state[..., 2 * H:])          # W_hn h sits inside r * (.)
        d_input = self._buffer("d_input", (E, T, B, 3 * H))
        d_state = self._buffer("d_state", (E, T, B, 3 * H))
        W_hh = self.params["weight_hh_l0"]
        kept = self._buffer("kept", (E, B, H))
        for t in range(T - 1, -1, -1):
            if norms is not None:
                norms[:, t] = _row_norms(dh, B)
            d3 = dh[:, :, None, :]
            np.multiply(coef[:, t].reshape(E, B, 3, H), d3, out=d_input[:, t].reshape(E, B, 3, H))
            np.multiply(coef_state[:, t].reshape(E, B, 3, H), d3, out=d_state[:, t].reshape(E, B, 3, H))
            np.multiply(dh, z[:, t], out=kept)
            np.matmul(d_state[:, t], W_hh, out=dh)
            dh += kept
        return self._weight_grads(cache, d_input, d_state)

    def _backward_lstm(self, cache, dh, norms):
        E, T, B, H = self.size, cache["T"], cache["B"], self.hidden_size
        gates, cell, candidate, tanh_cell = cache["gates"], cache["cell"], cache["candidate"], cache["tanh_cell"]
        i, f, o = gates[..., :H], gates[..., H:2 * H], gates[..., 3 * H:]
        # d(pre-activation) of i, f, g = dc_t * coefficient, of o = dh_t * coefficient:
        # the slope of the gate's nonlinearity times what the gate multiplies.
        coef = self._buffer("coef", (E, T, B, 4 * H))
        c_i, c_f, c_g, c_o = (coef[..., k * H:(k + 1) * H] for k in range(4))
        np.subtract(1.0, i, out=c_i)
        c_i *= i
        c_i *= candidate                                          # i multiplies g
        np.subtract(1.0, f, out=c_f)
        c_f *= f
        c_f *= cell[:, :T]                                        # f multiplies c_{t-1}
        np.multiply(candidate, candidate, out=c_g)
        np.subtract(1.0, c_g, out=c_g)
        c_g *= i                                                  # g is multiplied by i
        np.subtract(1.0, o, out=c_o)
        c_o *= o
        c_o *= tanh_cell                                          # o multiplies tanh(c_t)
        to_cell = self._buffer("to_cell", (E, T, B, H))           # dc_t += dh_t * o (1 - tanh^2 c_t)
        np.multiply(tanh_cell, tanh_cell, out=to_cell)
        np.subtract(1.0, to_cell, out=to_cell)
        to_cell *= o
        d_pre = self._buffer("d_pre", (E, T, B, 4 * H))
        dc = np.zeros((E, B, H), dtype=self.dtype)
        scratch = self._buffer("scratch", (E, B, H))
        W_hh = self.params["weight_hh_l0"]
        for t in range(T - 1, -1, -1):
            if norms is not None:
                norms[:, t] = _row_norms(dh, B)
            np.multiply(dh, to_cell[:, t], out=scratch)
            dc += scratch
            np.multiply(coef[:, t, :, :3 * H].reshape(E, B, 3, H), dc[:, :, None, :],
                        out=d_pre[:, t, :, :3 * H].reshape(E, B, 3, H))
            np.multiply(c_o[:, t], dh, out=d_pre[:, t, :, 3 * H:])
            dc *= f[:, t]
            np.matmul(d_pre[:, t], W_hh, out=dh)
        return self._weight_grads(cache, d_pre, d_pre)

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

    def predict(self, x: Any) -> np.ndarray:
        """The readout of every member on ``x``: ``(E, B, O)`` (logits, or the predicted number).

        >>> Ensemble("rnn", 2, 3, 4, seeds=[0]).predict(np.zeros((3, 5, 2))).shape
        (1, 5, 4)
        """
        with np.errstate(over="ignore", invalid="ignore"):
            return self.readout(self.forward(x))

    def loss_and_grads(self, x: Any, targets: Any, kind: str, *, step_norms: bool = False) -> tuple:
        r"""Each member's loss on its batch and the gradients of every parameter array.

        ``kind`` is ``"classification"`` (``targets`` class indices, mean
        softmax cross-entropy in nats) or ``"regression"`` (``targets``
        numbers, mean squared error with ``output_size`` 1). ``targets`` is
        ``(B,)`` shared or ``(E, B)``. Returns ``(losses (E,), grads)`` with
        ``grads`` keyed like ``params`` (plus ``"step_norms"`` on request, see
        :meth:`backward`). A member whose loss is not finite has a NaN or
        infinite loss here; nothing is raised.

        >>> ens = Ensemble("lstm", 1, 2, 1, seeds=[0, 1])
        >>> losses, grads = ens.loss_and_grads(np.ones((3, 4, 1)), np.ones(4), "regression")
        >>> losses.shape, sorted(grads)[:2]
        ((2,), ['bias_hh_l0', 'bias_ih_l0'])
        """
        kind = check_choice("kind", kind, KINDS)
        h_last = self.forward(x)
        E, B, O = self.size, self._cache["B"], self.output_size
        y = self._check_targets(targets, kind, E, B)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out = self.readout(h_last)
            if kind == "classification":
                shifted = out - out.max(axis=2, keepdims=True)
                log_norm = np.log(np.exp(shifted).sum(axis=2, keepdims=True))
                log_p = shifted - log_norm
                picked = np.take_along_axis(log_p, y[:, :, None], axis=2)[:, :, 0]
                losses = -picked.mean(axis=1)
                d_out = np.exp(log_p)
                np.put_along_axis(d_out, y[:, :, None],
                                  np.take_along_axis(d_out, y[:, :, None], axis=2) - 1.0, axis=2)
                d_out /= B
            else:
                err = out[:, :, 0] - y
                losses = (err * err).mean(axis=1)
                d_out = (2.0 / B) * err[:, :, None]
            grads = self.backward(np.matmul(d_out, self.params["readout_weight"]), step_norms=step_norms)
            grads["readout_weight"] = np.matmul(d_out.transpose(0, 2, 1), h_last)
            grads["readout_bias"] = d_out.sum(axis=1)
        return losses, grads

    def _check_targets(self, targets: Any, kind: str, E: int, B: int) -> np.ndarray:
        y = np.asarray(targets)
        if y.shape == (B,):
            y = np.broadcast_to(y, (E, B))
        if y.shape != (E, B):
            raise ValueError(f"targets must have shape ({B},) or ({E}, {B}), got shape {np.shape(targets)}")
        if kind == "classification":
            if y.dtype.kind not in "iu" or y.min() < 0 or y.max() >= self.output_size:
                raise ValueError(f"targets must be class indices from 0 to {self.output_size - 1}, "
                                 f"got values from {y.min()} to {y.max()} (dtype {y.dtype})")
            return y.astype(np.intp)
        if self.output_size != 1:
            raise ValueError(f"kind='regression' reads one number: output_size must be 1, got {self.output_size}")
        return np.asarray(check_finite("targets", y), dtype=self.dtype)


def _sigmoid_inplace(a: np.ndarray) -> None:
    np.negative(a, out=a)
    np.exp(a, out=a)
    a += 1.0
    np.reciprocal(a, out=a)


def _row_norms(dh: np.ndarray, B: int) -> np.ndarray:
    """Mean over the batch of each sequence's gradient norm; dL/dh of a batch mean is 1/B of a sequence's."""
    return np.sqrt((dh * dh).sum(axis=2)).mean(axis=1) * B

r"""Many recurrences built not to forget, stacked on a leading axis: the LRU, minGRU and selective decay.

A :class:`LinearEnsemble` holds :math:`E` models of one kind, each ``layers``
recurrent layers whose recurrence is linear in the state,
:math:`h_t = a_t \odot h_{t-1} + b_t`, computed by :mod:`rnnmem.scan`:

* ``"lru"``: :mod:`rnnmem.lru` (Orvieto et al. 2023), a complex diagonal
  state of ``state_size`` numbers with a fixed decay :math:`\lambda`, ring
  initialized;
* ``"mingru"``: :mod:`rnnmem.mingru` (Feng et al. 2024), gates that read the
  input only; its state is ``hidden_size`` wide;
* ``"selective"``: :mod:`rnnmem.selective` (Gu and Dao 2023), the
  selective scan S6 alone (without Mamba's convolution and gate), a decay
  :math:`e^{\Delta_t A}` chosen by the input, ``hidden_size`` channels of
  ``state_size`` numbers each;
* ``"mamba"``: :mod:`rnnmem.mamba`, Mamba's whole block around S6 (input
  projection to two branches, causal convolution, SiLU, the gate, output
  projection), :data:`rnnmem.mamba.EXPAND` times ``hidden_size`` channels of
  ``state_size`` numbers each.

Every layer's output :math:`y_t` (``hidden_size`` wide) passes through a
position-wise residual MLP, the nonlinearity between layers,

.. math::

    o_t = y_t + W_2 \tanh(W_1 y_t + b_1) + b_2

(width ``hidden_size``, :math:`\tanh`), and layer :math:`l + 1` reads
:math:`o_t` of layer :math:`l`. The readout reads the top layer's last step,
:math:`\hat y = V o_T + c`, with the loss of
:meth:`rnnmem.ensemble.Ensemble.loss_and_grads`: mean softmax cross-entropy
(classification) or mean squared error (regression) over the batch. The top
layer's :math:`y_t` and MLP are computed at the last step only, the one the
readout reads.

Parameters are named ``<array>_l<layer>`` (``nu_log_l0``, ``W_z_l1``, ...,
``mlp_W1_l0``, ``mlp_b1_l0``, ``mlp_W2_l0``, ``mlp_b2_l0``) and
``readout_weight`` ``(E, O, H)``, ``readout_bias`` ``(E, O)``, each ``(E,
...)``, views into one ``(E, P)`` block ``_flat`` (the lab's optimizers update
it in one pass). Member :math:`e` draws from ``numpy.random.default_rng(seed)``
layer by layer (the layer's arrays as its module's ``draw``, then the MLP's
:math:`W_1, b_1, W_2, b_2` from :math:`U(-1/\sqrt H, 1/\sqrt H)`), then
:math:`V, c` from the same range (PyTorch's ``nn.Linear``). Members never
mix: each product is one member's own (``np.matmul`` over a stack), every other
operation elementwise or a sum within one member, and every span of a scan
is set by the sizes, never by :math:`E`, so a member computes the same numbers,
bit for bit, alone or in any stack.

**Precision.** ``dtype`` float64 computes the LRU's state in complex128,
float32 in complex64; the parameters themselves are real.

**method.** The forward recurrences run by the odd–even scan
(``method="scan"``, :func:`rnnmem.scan.linear_scan`) or step by step
(``"loop"``, :func:`rnnmem.scan.sequential_scan`), and the backward pass
likewise (:func:`rnnmem.scan.linear_scan_backward` or
:func:`rnnmem.scan.sequential_scan_backward`). The two agree to rounding.
The default, ``"loop"``, was the faster at the lab's sizes (E=20, B=32,
H=32, T=102 and 1002, float32; see :data:`METHODS`), forward and backward.

>>> ens = LinearEnsemble("lru", 3, 8, 2, seeds=[0, 1], state_size=4)
>>> ens.forward(np.zeros((5, 7, 3))).shape, ens.predict(np.zeros((5, 7, 3))).shape
((2, 7, 8), (2, 7, 2))
>>> losses, grads = ens.loss_and_grads(np.ones((5, 7, 3)), np.zeros(7, dtype=int), "classification")
>>> losses.shape, grads["nu_log_l0"].shape
((2,), (2, 4))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import cells, lru, mamba, mingru, selective
from .checks import check_choice, check_dtype, check_finite, check_nonnegative_int, check_positive, check_positive_int
from .ensemble import KINDS, OneHot, _seeds, check_one_hot, check_targets

__all__ = ["LINEAR_MODELS", "METHODS", "LinearEnsemble"]

LINEAR_MODELS = tuple(cells.LINEAR)
"""The models a :class:`LinearEnsemble` stacks, those of the linear protocol (:data:`rnnmem.cells.LINEAR`):
``("lru", "mingru", "selective", "mamba")``."""

METHODS = ("loop", "scan")
"""How the recurrences run, forward and backward: step by step (the default, measured the faster for the lab's sizes), or by the scan."""

_MODULES = cells.LINEAR
_MLP = ("mlp_W1", "mlp_b1", "mlp_W2", "mlp_b2")


def _matmul(x: np.ndarray, W: np.ndarray) -> np.ndarray:
    return lru._mm(x, W)


class LinearEnsemble:
    r"""``E`` independent stacks of linear recurrent layers with a readout, parameters stacked on axis 0.

    ``LinearEnsemble(model, input_size, hidden_size, output_size, seeds, *,
    layers=1, state_size=None, r_min=0.9, r_max=0.999, max_phase=2*pi,
    dtype=np.float64, method=None, phases="ring", gate_shift=0.0)``: ``model`` one of :data:`LINEAR_MODELS`;
    ``state_size`` defaults to ``hidden_size`` (LRU; minGRU, whose state *is*
    ``hidden_size`` and takes no other) or 8 (selective, mamba); ``r_min``,
    ``r_max``, ``max_phase`` set the LRU's ring and ``phases`` its phases
    (:data:`rnnmem.lru.PHASES`: ``"frozen"`` makes its decays real, with no
    ``theta_l<layer>``); ``gate_shift`` is added to minGRU's gate bias
    :math:`b_z` (:func:`rnnmem.mingru.draw`); ``method`` is ``"loop"``
    (default) or ``"scan"``. The interface is :class:`rnnmem.ensemble.Ensemble`'s.

    >>> ens = LinearEnsemble("mingru", 2, 4, 1, seeds=[0, 1, 2], layers=2)
    >>> ens.size, ens.params["W_z_l1"].shape, ens.params["readout_weight"].shape
    (3, (3, 4, 4), (3, 1, 4))
    """

    def __init__(
        self,
        model: str,
        input_size: int,
        hidden_size: int,
        output_size: int,
        seeds: Any,
        *,
        layers: int = 1,
        state_size: int | None = None,
        r_min: float = 0.9,
        r_max: float = 0.999,
        max_phase: float = 2 * np.pi,
        dtype: Any = np.float64,
        method: str | None = None,
        phases: str = "ring",
        gate_shift: float = 0.0,
    ) -> None:
        self.model = check_choice("model", model, tuple(cells.LINEAR))
        self.input_size = check_positive_int("input_size", input_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        self.output_size = check_positive_int("output_size", output_size)
        self.seeds = _seeds(seeds)
        self.layers = check_positive_int("layers", layers)
        try:
            is_complex = np.dtype(dtype).kind == "c"
        except TypeError:
            is_complex = False
        if is_complex:
            raise ValueError(
                f"dtype must be float32 or float64 (the parameters are real; the LRU's state is complex inside, "
                f"complex64 or complex128), got {np.dtype(dtype).name}"
            )
        self.dtype = check_dtype("dtype", dtype)
        self.method = "loop" if method is None else check_choice("method", method, METHODS)
        H = self.hidden_size
        if state_size is None:
            state_size = 8 if self.model in ("selective", "mamba") else H
        self.state_size = check_positive_int("state_size", state_size)
        if self.model == "mingru" and self.state_size != H:
            raise ValueError(
                f"state_size must be hidden_size ({H}) for 'mingru', whose state is its hidden vector, got {state_size!r}"
            )
        self.r_min, self.r_max = lru.check_ring(r_min, r_max)
        self.max_phase = float(check_positive("max_phase", max_phase))
        self.phases = check_choice("phases", phases, lru.PHASES)
        self.gate_shift = float(check_finite("gate_shift", gate_shift))
        for name, value, unset, owner in (
            ("phases", self.phases, "ring", "lru"),
            ("gate_shift", self.gate_shift, 0.0, "mingru"),
        ):
            if value != unset and self.model != owner:
                raise ValueError(
                    f"{name} is an option of model {owner!r} only, got {name}={value!r} with model {self.model!r}"
                )
        module = _MODULES[self.model]
        shapes: dict = {}
        for layer in range(self.layers):
            D_l = self.input_size if layer == 0 else H
            shapes.update({f"{k}_l{layer}": s for k, s in self._layer_shapes(module, D_l).items()})
            shapes.update({f"{k}_l{layer}": s for k, s in zip(_MLP, [(H, H), (H,), (H, H), (H,)])})
        shapes["readout_weight"] = (self.output_size, H)
        shapes["readout_bias"] = (self.output_size,)
        self._shapes = shapes
        E = len(self.seeds)
        self._flat = np.empty((E, sum(int(np.prod(s)) for s in shapes.values())), dtype=self.dtype)
        self._bind()
        for e, seed in enumerate(self.seeds):
            rng = np.random.default_rng(seed)
            for layer in range(self.layers):
                D_l = self.input_size if layer == 0 else H
                for k, v in self._layer_draw(module, rng, D_l).items():
                    self.params[f"{k}_l{layer}"][e] = v
                bound = 1.0 / np.sqrt(H)
                for k in _MLP:
                    self.params[f"{k}_l{layer}"][e] = rng.uniform(-bound, bound, shapes[f"{k}_l{layer}"])
            bound = 1.0 / np.sqrt(H)
            self.params["readout_weight"][e] = rng.uniform(-bound, bound, shapes["readout_weight"])
            self.params["readout_bias"][e] = rng.uniform(-bound, bound, shapes["readout_bias"])

    def _layer_shapes(self, module: Any, D_l: int) -> dict:
        if module is mingru:
            return mingru.shapes(D_l, self.hidden_size)
        if module is lru:
            return lru.shapes(D_l, self.hidden_size, self.state_size, self.phases)
        return module.shapes(D_l, self.hidden_size, self.state_size)

    def _layer_draw(self, module: Any, rng: np.random.Generator, D_l: int) -> dict:
        if module is mingru:
            return mingru.draw(rng, D_l, self.hidden_size, gate_shift=self.gate_shift)
        if module is lru:
            return lru.draw(
                rng,
                D_l,
                self.hidden_size,
                self.state_size,
                r_min=self.r_min,
                r_max=self.r_max,
                max_phase=self.max_phase,
                phases=self.phases,
            )
        return module.draw(rng, D_l, self.hidden_size, self.state_size)  # the protocol's draw (rnnmem.cells)

    def _bind(self) -> None:
        """Make ``params`` views into ``_flat`` (member e's parameters in row e) and empty the scratch space."""
        E, start = self._flat.shape[0], 0
        self.params: dict = {}
        for name, shape in self._shapes.items():
            size = int(np.prod(shape))
            self.params[name] = self._flat[:, start : start + size].reshape((E,) + shape)
            start += size
        self._cache: Any = None
        self._workspace: dict = {}

    @property
    def size(self) -> int:
        """The number of members, :math:`E`."""
        return len(self.seeds)

    def __repr__(self) -> str:
        return (
            f"LinearEnsemble({self.model!r}, input_size={self.input_size}, hidden_size={self.hidden_size}, "
            f"output_size={self.output_size}, members={self.size}, layers={self.layers}, "
            f"state_size={self.state_size}, dtype={self.dtype.name})"
        )

    def select(self, members: Any) -> LinearEnsemble:
        """A new ensemble of the given members, in the given order, with copies of their parameters.

        >>> ens = LinearEnsemble("lru", 2, 3, 1, seeds=[5, 6, 7])
        >>> two = ens.select([2, 0])
        >>> two.seeds, bool(np.array_equal(two.params["nu_log_l0"][1], ens.params["nu_log_l0"][0]))
        ((7, 5), True)
        """
        if isinstance(members, (str, bytes)) or not isinstance(members, (list, tuple, np.ndarray)) or not len(members):
            raise ValueError(f"members must be a non-empty list of member indices, got {members!r}")
        rows = []
        for k, e in enumerate(members):
            i = check_nonnegative_int(f"members[{k}]", e)
            if i >= self.size:
                raise ValueError(f"members[{k}] must be a member index from 0 to {self.size - 1}, got {e!r}")
            rows.append(i)
        new = object.__new__(LinearEnsemble)
        new.__dict__.update(
            {k: v for k, v in self.__dict__.items() if k not in ("_flat", "params", "_cache", "_workspace")}
        )
        new.seeds = tuple(self.seeds[e] for e in rows)
        new._flat = self._flat[rows]
        new._bind()
        return new

    def evaluation_chunk(self, T: int, N: int) -> int:
        """Sequences per chunk when scoring ``N`` sequences of ``T`` steps: about ``2**20`` state numbers per member.

        Set by the state's size and the length, never by the number of members (so a member scores the same
        in any stack).

        >>> LinearEnsemble("lru", 2, 32, 1, seeds=[0]).evaluation_chunk(1002, 512)
        16
        """
        # selective and mamba: the scan runs over spans, its stored per-step arrays are H (mamba: EXPAND H) wide
        per_step = {
            "lru": 2 * self.state_size,
            "mingru": 2 * self.hidden_size,
            "mamba": 2 * mamba.EXPAND * self.hidden_size,
        }.get(self.model, 2 * self.hidden_size)
        return max(1, min(N, 2**20 // (T * per_step)))

    # ------------------------------------------------------------------ inputs

    def _inputs(self, x: Any) -> tuple:
        """``(kind, array, T, B)``: dense ``(T, E or 1, B, D)``, or one-hot ids ``(T, E or 1, B)``."""
        D, E = self.input_size, self.size
        if isinstance(x, OneHot):
            ids = check_one_hot(x, D, E)
            ids = ids if ids.ndim == 3 else ids[:, None, :]
            return "ids", ids, ids.shape[0], ids.shape[2]
        arr = np.asarray(x)
        if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
            raise ValueError(f"x must hold real numbers, got dtype {arr.dtype}")
        if arr.ndim == 3 and min(arr.shape) >= 1 and arr.shape[2] == D:
            arr = arr[:, None]
        elif not (arr.ndim == 4 and min(arr.shape) >= 1 and arr.shape[1] == E and arr.shape[3] == D):
            raise ValueError(
                f"x must have shape (T, B, {D}) shared by the members or (T, {E}, B, {D}) one batch "
                f"per member, time first, with T >= 1 and B >= 1, got shape {arr.shape}"
            )
        return "dense", arr.astype(self.dtype, copy=False), arr.shape[0], arr.shape[2]

    def _projection(self, layer: int) -> tuple:
        """The stacked input weights ``(E, P, D_l)`` and bias ``(E, P)`` (or None) of a layer."""
        module = _MODULES[self.model]
        W = np.concatenate([self.params[f"{k}_l{layer}"] for k in module.PROJECTION], axis=1)
        b = None
        if module.PROJECTION_BIASES is not None:
            b = np.concatenate([self.params[f"{k}_l{layer}"] for k in module.PROJECTION_BIASES], axis=1)
        return W, b

    def _project(self, u: tuple, W: np.ndarray, b: np.ndarray | None) -> np.ndarray:
        """``W u_t + b`` for every step, member and sequence: (T, E, B, P); one-hot ids gather W's columns."""
        kind, arr = u[0], u[1]
        E = self.size
        if kind == "ids":
            T, _, B = arr.shape
            ids = np.broadcast_to(arr, (T, E, B))
            D = self.input_size
            columns = np.ascontiguousarray(W.transpose(0, 2, 1)).reshape(E * D, -1)  # row e D + k: W[e]'s column k
            out = np.take(columns, ids + (np.arange(E) * D)[None, :, None], axis=0)  # (T, E, B, P)
        elif arr.shape[1] == 1 and E > 1:
            T, _, B, D = arr.shape
            xm = np.ascontiguousarray(arr[:, 0]).reshape(1, T * B, D)
            out = np.matmul(xm, W.transpose(0, 2, 1)).reshape(E, T, B, -1).transpose(1, 0, 2, 3)
        else:
            out = _matmul(np.broadcast_to(arr, (arr.shape[0], E) + arr.shape[2:]), W)
        out = np.ascontiguousarray(out)
        if b is not None:
            out += b[None, :, None, :]
        return out

    def _project_grads(self, u: tuple, d_proj: np.ndarray, W: np.ndarray, need_input: bool) -> tuple:
        """The gradients of the stacked input weights (E, P, D_l), and of the input (dense, when asked)."""
        kind, arr = u[0], u[1]
        E = self.size
        T, _, B, P = d_proj.shape
        if (
            kind == "ids"
        ):  # the indicator of each id, (T, E, B, D): the product the dense inputs make, number for number
            indicator = np.zeros((T, E, B, self.input_size), dtype=d_proj.dtype)
            np.put_along_axis(indicator, np.broadcast_to(arr, (T, E, B))[..., None], 1.0, axis=3)
            return lru._mm_grad(d_proj, indicator), None
        full = np.broadcast_to(arr, (T, E) + arr.shape[2:])
        dW = lru._mm_grad(d_proj, full)
        du = _matmul(d_proj, W.transpose(0, 2, 1)) if need_input else None
        return dW, du

    # ------------------------------------------------------------------ forward and backward

    def _mlp(self, layer: int, y: np.ndarray) -> tuple:
        p = self.params
        act = np.tanh(_matmul(y, p[f"mlp_W1_l{layer}"]) + p[f"mlp_b1_l{layer}"][None, :, None, :])
        o = _matmul(act, p[f"mlp_W2_l{layer}"])
        o += y
        o += p[f"mlp_b2_l{layer}"][None, :, None, :]
        return o, act

    def _run(self, x: Any, keep: bool) -> np.ndarray:
        """The forward pass; the top layer's last outputs (E, B, H)."""
        module = _MODULES[self.model]
        self._cache = None
        u = self._inputs(x)
        T, B = u[2], u[3]
        caches = []
        for layer in range(self.layers):
            W, b = self._projection(layer)
            proj = self._project(u, W, b)
            p = {k[: -len(f"_l{layer}")]: v for k, v in self.params.items() if k.endswith(f"_l{layer}")}
            options = {"keep_states": keep} if module in (selective, mamba) else {}
            y, cache = module.forward(p, proj, last_only=layer == self.layers - 1, method=self.method, **options)
            o, act = self._mlp(layer, y)
            caches.append({"u": u, "W": W, "p": p, "cache": cache, "y": y, "act": act})
            u = ("dense", o, T, B)
        if keep:
            self._cache = {"layers": caches, "T": T, "B": B}
        return u[1][-1]

    def forward(self, x: Any) -> np.ndarray:
        """Run every member over its sequences; return the top layer's last outputs :math:`o_T` ``(E, B, H)``.

        ``x`` is ``(T, B, D)`` shared by the members, ``(T, E, B, D)`` one batch per member, or a
        :class:`~rnnmem.ensemble.OneHot`; the states start at zero.

        >>> LinearEnsemble("selective", 2, 4, 1, seeds=[0, 1]).forward(np.ones((6, 3, 2))).shape
        (2, 3, 4)
        """
        with np.errstate(over="ignore", invalid="ignore"):
            return np.ascontiguousarray(self._run(x, keep=True))

    def readout(self, last: np.ndarray) -> np.ndarray:
        r"""The readout :math:`V o_T + c` of top-layer last outputs ``(E, B, H)``: ``(E, B, O)``.

        >>> ens = LinearEnsemble("lru", 1, 2, 3, seeds=[0, 1])
        >>> ens.readout(ens.forward(np.ones((2, 5, 1)))).shape
        (2, 5, 3)
        """
        out = np.matmul(last, self.params["readout_weight"].transpose(0, 2, 1))
        out += self.params["readout_bias"][:, None, :]
        return out

    def predict(self, x: Any) -> np.ndarray:
        """The readout of every member on ``x``: ``(E, B, O)`` (logits, or the predicted number).

        >>> LinearEnsemble("mingru", 2, 3, 4, seeds=[0]).predict(np.zeros((3, 5, 2))).shape
        (1, 5, 4)
        """
        with np.errstate(over="ignore", invalid="ignore"):
            return self.readout(self._run(x, keep=False))

    def loss_and_grads(
        self,
        x: Any,
        targets: Any,
        kind: str,
        *,
        carry_masks: Any = None,
        hidden_masks: Any = None,
        step_norms: bool = False,
    ) -> tuple:
        r"""Each member's loss on its batch and the exact gradients of every parameter array.

        As :meth:`rnnmem.ensemble.Ensemble.loss_and_grads`: ``kind``
        ``"classification"`` (mean softmax cross-entropy) or ``"regression"``
        (mean squared error, ``output_size`` 1), ``targets`` ``(B,)`` or
        ``(E, B)``; returns ``(losses (E,), grads)`` keyed like ``params``.
        With ``step_norms=True`` also ``grads["step_norms"]`` ``(E, T)``: the
        mean over sequences of :math:`\|\partial \ell / \partial h_s\|` for
        the **first** layer's state (complex modulus for the LRU; all
        :math:`H N` numbers for selective), the total gradient through every
        later step, the last entry at step :math:`T`. Dropout is not defined
        for these models: ``carry_masks`` and ``hidden_masks`` must be ``None``.

        >>> ens = LinearEnsemble("selective", 1, 4, 1, seeds=[0, 1], layers=2)
        >>> losses, grads = ens.loss_and_grads(np.ones((3, 5, 1)), np.ones(5), "regression", step_norms=True)
        >>> losses.shape, grads["A_log_l1"].shape, grads["step_norms"].shape
        ((2,), (2, 4, 8), (2, 3))
        """
        for name, value in (("carry_masks", carry_masks), ("hidden_masks", hidden_masks)):
            if value is not None:
                raise ValueError(f"{name} must be None: dropout masks are not defined for model {self.model!r}")
        kind = check_choice("kind", kind, KINDS)
        step_norms = bool(step_norms)
        E = self.size
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            last = self._run(x, keep=True)  # (E, B, H)
            B = self._cache["B"]
            y = self._check_targets(targets, kind, E, B)
            out = self.readout(last)  # (E, B, O)
            if kind == "classification":
                shifted = out - out.max(axis=2, keepdims=True)
                log_p = shifted - np.log(np.exp(shifted).sum(axis=2, keepdims=True))
                losses = -np.take_along_axis(log_p, y[:, :, None], axis=2)[:, :, 0].mean(axis=1)
                d_out = np.exp(log_p)
                np.put_along_axis(d_out, y[:, :, None], np.take_along_axis(d_out, y[:, :, None], axis=2) - 1.0, axis=2)
                d_out /= B
            else:
                err = out[:, :, 0] - y
                losses = (err * err).mean(axis=1)
                d_out = (2.0 / B) * err[:, :, None]
            grads = {
                "readout_weight": np.matmul(d_out.transpose(0, 2, 1), last),
                "readout_bias": d_out.sum(axis=1),
            }
            d_o = np.matmul(d_out, self.params["readout_weight"])[None]  # (1, E, B, H)
            grads.update(self._backward(d_o, step_norms))
        ordered = {name: np.asarray(grads[name], dtype=self.dtype) for name in self._shapes}
        if step_norms:
            ordered["step_norms"] = grads["step_norms"]
        return losses, ordered

    def _backward(self, d_o: np.ndarray, step_norms: bool) -> dict:
        module = _MODULES[self.model]
        p_all = self.params
        grads: dict = {}
        for layer in range(self.layers - 1, -1, -1):
            c = self._cache["layers"][layer]
            y, act = c["y"], c["act"]
            tag = f"_l{layer}"
            # o = y + W2 tanh(W1 y + b1) + b2
            grads["mlp_W2" + tag] = lru._mm_grad(d_o, act)
            grads["mlp_b2" + tag] = d_o.sum(axis=(0, 2))
            d_pre = _matmul(d_o, p_all["mlp_W2" + tag].transpose(0, 2, 1))
            d_pre *= 1.0 - act * act
            grads["mlp_W1" + tag] = lru._mm_grad(d_pre, y)
            grads["mlp_b1" + tag] = d_pre.sum(axis=(0, 2))
            d_y = _matmul(d_pre, p_all["mlp_W1" + tag].transpose(0, 2, 1))
            d_y += d_o
            own, d_proj, norms = module.backward(c["p"], c["cache"], d_y, norms=step_norms and layer == 0)
            for k, v in own.items():
                grads[k + tag] = v
            dW, du = self._project_grads(c["u"], d_proj, c["W"], need_input=layer > 0)
            start = 0
            for k in module.PROJECTION:
                rows = self.params[k + tag].shape[1]
                grads[k + tag] = dW[:, start : start + rows]
                start += rows
            if module.PROJECTION_BIASES is not None:
                db = d_proj.sum(axis=(0, 2))
                start = 0
                for k in module.PROJECTION_BIASES:
                    rows = self.params[k + tag].shape[1]
                    grads[k + tag] = db[:, start : start + rows]
                    start += rows
            if norms is not None:
                grads["step_norms"] = norms
            d_o = du
        return grads

    def _check_targets(self, targets: Any, kind: str, E: int, B: int) -> np.ndarray:
        return check_targets(targets, kind, E, B, self.output_size, self.dtype)

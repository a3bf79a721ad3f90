r"""What the three recurrent models share: parameters, shapes, dtype, the cache.

Conventions, the same as PyTorch's single-layer ``nn.RNN``, ``nn.LSTM`` and
``nn.GRU`` (``batch_first=False``):

* **time first**: an input sequence ``x`` has shape ``(T, B, D)`` (steps,
  batch, input size); the outputs have shape ``(T, B, H)``;
* **torch layout**: four parameter arrays ``W_ih`` ``(G*H, D)``, ``W_hh``
  ``(G*H, H)``, ``b_ih`` ``(G*H,)`` and ``b_hh`` ``(G*H,)``, the gates stacked
  by rows in the order of :attr:`Recurrent.gate_names` (``G = 1`` for the tanh
  RNN, 4 for the LSTM with ``i|f|g|o``, 3 for the GRU with ``r|z|n``);
* **two biases** per gate, ``b_ih`` and ``b_hh``, as in PyTorch; where they
  enter as a sum only the sum matters;
* **state** ``h`` of shape ``(B, H)`` (and ``c`` for the LSTM); ``None`` means
  zeros;
* **backward** of a forward pass returns the gradient of the scalar

  .. math::  L = \sum_t \langle \delta y_t, y_t \rangle + \langle \delta s_T, s_T \rangle,

  where :math:`\delta y` (``d_outputs``) and :math:`\delta s_T`
  (``d_final_state``) are given, keyed by PyTorch's parameter names
  (``weight_ih_l0``, ...) plus ``x``, ``h0`` and, for the LSTM, ``c0``.

A model runs in float32 or float64, its ``dtype``: every input is cast to it
and every output and gradient has it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, overload

import numpy as np

from .checks import check_dtype, check_finite, check_positive_int, check_seed, check_shape
from .init import Weights, pytorch_weights
from .memory import sigmoid  # noqa: F401  (the package's one sigmoid, importable here as before)

__all__ = ["Recurrent", "PARAMETER_NAMES", "WEIGHT_NAMES", "sigmoid_inplace", "sigmoid_by_tanh", "check_step_args"]

PARAMETER_NAMES = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")
"""PyTorch's names of the four parameter arrays of a single-layer model."""

WEIGHT_NAMES = ("W_ih", "W_hh", "b_ih", "b_hh")
"""The same four arrays as the chapters and the step functions name them (:attr:`Recurrent.weights`)."""

_ATTRIBUTE = dict(zip(PARAMETER_NAMES, WEIGHT_NAMES))


def sigmoid_inplace(a: np.ndarray) -> np.ndarray:
    r"""Overwrite ``a`` with :math:`1/(1+e^{-a})`, PyTorch's formula (exp may overflow to inf: the result is 0).

    >>> a = np.array([0.0, 2.0])
    >>> sigmoid_inplace(a).round(4).tolist()
    [0.5, 0.8808]
    """
    np.negative(a, out=a)
    with np.errstate(over="ignore"):
        np.exp(a, out=a)
    a += 1.0
    np.reciprocal(a, out=a)
    return a


def sigmoid_by_tanh(z: np.ndarray) -> np.ndarray:
    r""":math:`\sigma(z)` computed as :math:`(1 + \tanh(z/2))/2`: a new array, in ``z``'s precision.

    One formula for float32 and float64 that never overflows and lets NaN through (training marks a run
    that produces one as diverged); equal to :func:`rnnmem.memory.sigmoid` to rounding. The gates of
    :mod:`rnnmem.mingru` and the slope of the softplus in :mod:`rnnmem.selective` use it; the float32
    cells of :mod:`rnnmem.ensemble` compute their gates by the same formula, in place.

    >>> sigmoid_by_tanh(np.array([0.0, 2.0])).round(4).tolist()
    [0.5, 0.8808]
    """
    s = np.tanh(z * 0.5)
    s += 1.0
    s *= 0.5
    return s


def _as_float_array(name: str, value: Any) -> np.ndarray:
    """``value`` as a float array (float32 stays float32; anything else float64)."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers, got {type(value).__name__}") from None
    if arr.dtype == np.float32 or arr.dtype == np.float64:
        return arr
    if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
        raise ValueError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    return arr.astype(np.float64)


def _require_finite(name: str, arr: np.ndarray) -> np.ndarray:
    """``arr`` itself, or :class:`ValueError` naming ``name`` and the first entry that is NaN or infinite."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.sum(arr)  # one pass, no temporary: a NaN or an infinity makes the sum so
    if np.isfinite(total):
        return arr
    finite = np.isfinite(arr)  # the sum may also overflow: look entry by entry
    if not finite.all():
        index = tuple(int(i) for i in np.argwhere(~finite)[0])
        where = f" at index {index}" if arr.ndim else ""
        raise ValueError(f"{name} must be finite (no NaN or infinity), got {arr[index].item()!r}{where}")
    return arr


def check_step_args(
    gates: int, x: Any, h_prev: Any, W_ih: Any, W_hh: Any, b_ih: Any, b_hh: Any, **more_states: Any
) -> tuple:
    """Validate the arguments of a single-step function; return them as arrays of one dtype.

    ``x`` is ``(B, D)`` or ``(D,)``; ``h_prev`` (and each of ``more_states``)
    ``(B, H)`` or ``(H,)``, with as many dimensions as ``x``; the weights are
    in torch layout with ``gates`` blocks of rows. The common dtype is float32
    when every array is float32, float64 otherwise. An entry that is NaN or
    infinite raises :class:`ValueError` naming its argument.

    >>> check_step_args(1, [0.5], [np.inf], [[1.0]], [[1.0]], [0.0], [0.0])
    Traceback (most recent call last):
    ...
    ValueError: h_prev must be finite (no NaN or infinity), got inf at index (0,)
    """
    arrays = {"x": x, "h_prev": h_prev, **more_states, "W_ih": W_ih, "W_hh": W_hh, "b_ih": b_ih, "b_hh": b_hh}
    arrays = {name: _require_finite(name, _as_float_array(name, value)) for name, value in arrays.items()}
    dtype = np.result_type(*arrays.values())
    W_hh = arrays["W_hh"]
    if W_hh.ndim != 2 or W_hh.shape[1] < 1 or W_hh.shape[0] != gates * W_hh.shape[1]:
        raise ValueError(f"W_hh must have shape ({gates}*H, H) for a hidden size H >= 1, got shape {W_hh.shape}")
    H = W_hh.shape[1]
    W_ih = check_shape("W_ih", arrays["W_ih"], (gates * H, None))
    D = W_ih.shape[1]
    check_shape("b_ih", arrays["b_ih"], (gates * H,))
    check_shape("b_hh", arrays["b_hh"], (gates * H,))
    x = arrays["x"]
    if x.ndim not in (1, 2) or x.shape[-1] != D:
        raise ValueError(f"x must have shape (B, {D}) or ({D},), got shape {x.shape}")
    for name in ["h_prev", *more_states]:
        check_shape(name, arrays[name], x.shape[:-1] + (H,))
    return tuple(np.asarray(a, dtype=dtype) for a in arrays.values())


class _Weight:
    """One of a model's four parameter arrays (``W_ih``, ``W_hh``, ``b_ih``, ``b_hh``), checked when assigned.

    Reading it gives the live array: changing it in place changes the model.
    Assigning it (``model.W_hh = W``) takes the array in torch layout, the shape
    of :meth:`Recurrent._shapes` for the model's sizes, cast to the model's
    ``dtype`` (not copied when it has that dtype already); an array of another
    shape, or with an entry that is NaN or infinite, raises :class:`ValueError`
    naming the attribute, what it got and what is allowed, and leaves the model
    as it was.

    >>> from rnnmem.lstm import LSTM
    >>> model = LSTM(3, 2, seed=0)
    >>> model.W_hh = np.zeros((2, 2))
    Traceback (most recent call last):
    ...
    ValueError: W_hh must have shape (8, 2) for LSTM with input_size=3 and hidden_size=2 (4*H, H), got shape (2, 2)
    """

    _LAYOUT = {"W_ih": "G*H, D", "W_hh": "G*H, H", "b_ih": "G*H,", "b_hh": "G*H,"}

    def __set_name__(self, owner: type, name: str) -> None:
        if name not in WEIGHT_NAMES:
            raise TypeError(f"_Weight names one of {', '.join(WEIGHT_NAMES)}, not {name!r}")
        self.name = name
        self.key = PARAMETER_NAMES[WEIGHT_NAMES.index(name)]

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _Weight: ...
    @overload
    def __get__(self, obj: Recurrent, owner: type | None = None) -> np.ndarray: ...
    def __get__(self, obj: Recurrent | None, owner: type | None = None) -> _Weight | np.ndarray:
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            raise AttributeError(f"{type(obj).__name__} has no {self.name} yet") from None

    def __set__(self, obj: Recurrent, value: Any) -> None:
        arr = _as_float_array(self.name, value)
        shape = obj._shapes()[self.key]
        if arr.shape != shape:
            layout = self._LAYOUT[self.name].replace("G", str(len(obj.gate_names)))
            raise ValueError(
                f"{self.name} must have shape {shape} for {type(obj).__name__} with input_size={obj.input_size} "
                f"and hidden_size={obj.hidden_size} ({layout}), got shape {arr.shape}"
            )
        obj.__dict__[self.name] = _require_finite(self.name, np.asarray(arr, dtype=obj.dtype))


class Recurrent:
    """Base class of :class:`~rnnmem.rnn.RNN`, :class:`~rnnmem.lstm.LSTM` and :class:`~rnnmem.gru.GRU`.

    Holds the four parameter arrays in torch layout as the attributes
    ``W_ih``, ``W_hh``, ``b_ih`` and ``b_hh`` (an array assigned to one is
    checked: shape, dtype, finite entries), checks every input, and keeps
    what the latest :meth:`forward` needs for :meth:`backward`. Subclasses set
    :attr:`gate_names` and :attr:`state_names` and write ``_forward`` and
    ``_backward``.
    """

    gate_names: tuple = ()
    """The gates, in the order their blocks of rows are stacked."""
    state_names: tuple = ("h",)
    """The parts of the recurrent state: ``("h",)``, or ``("h", "c")`` for the LSTM."""
    option_names: tuple = ()
    """The model's own keyword options beyond sizes, dtype and seed (the GRU's ``update`` and ``reset``)."""

    W_ih = _Weight()
    """``weight_ih_l0``, ``(G*H, D)``: the input-to-hidden weights, the gates' blocks stacked by rows."""
    W_hh = _Weight()
    """``weight_hh_l0``, ``(G*H, H)``: the hidden-to-hidden weights, the gates' blocks stacked by rows."""
    b_ih = _Weight()
    """``bias_ih_l0``, ``(G*H,)``: the bias added to the input's part of each gate."""
    b_hh = _Weight()
    """``bias_hh_l0``, ``(G*H,)``: the bias added to the recurrent part of each gate."""

    def __init__(self, input_size: int, hidden_size: int, *, dtype: Any = np.float64, seed: Any = None) -> None:
        self.input_size = check_positive_int("input_size", input_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        self.dtype = check_dtype("dtype", dtype)
        drawn = pytorch_weights(
            self.input_size, self.hidden_size, gates=len(self.gate_names), seed=check_seed("seed", seed)
        )
        self.W_ih, self.W_hh = drawn["W_ih"], drawn["W_hh"]
        self.b_ih, self.b_hh = drawn["b_ih"], drawn["b_hh"]
        self._cache: Any = None
        self._weights_of_cache: tuple = ()
        self._workspace: dict = {}

    def _buffer(self, name: str, shape: tuple) -> np.ndarray:
        """A scratch array of the model's dtype, kept and reused from call to call.

        Large arrays freshly allocated on every call cost page faults that
        can take as long as the arithmetic; the forward pass's buffers are
        the cache of the backward pass, and both are overwritten by the next
        forward pass, never returned.
        """
        buf = self._workspace.get(name)
        if buf is None or buf.shape != shape:
            buf = self._workspace[name] = np.empty(shape, dtype=self.dtype)
        return buf

    # ------------------------------------------------------------------ parameters

    def _shapes(self) -> dict[str, tuple[int, ...]]:
        """The shape of each parameter array, keyed by PyTorch's names."""
        G, D, H = len(self.gate_names), self.input_size, self.hidden_size
        return {"weight_ih_l0": (G * H, D), "weight_hh_l0": (G * H, H), "bias_ih_l0": (G * H,), "bias_hh_l0": (G * H,)}

    def _options(self) -> dict:
        """Keyword options beyond sizes and dtype (the GRU's conventions)."""
        return {}

    def parameters(self) -> dict[str, np.ndarray]:
        """The four parameter arrays keyed by PyTorch's names: the live arrays, not copies.

        Changing an entry in place changes the model (a chapter sets a
        forget-gate bias this way); use :meth:`to_torch_state_dict` for copies.

        >>> from rnnmem.lstm import LSTM
        >>> model = LSTM(3, 2, seed=0)
        >>> {k: v.shape for k, v in model.parameters().items()}
        {'weight_ih_l0': (8, 3), 'weight_hh_l0': (8, 2), 'bias_ih_l0': (8,), 'bias_hh_l0': (8,)}
        >>> model.parameters()["bias_ih_l0"][2:4] = 3.0     # forget-gate rows of b_ih (i|f|g|o)
        >>> model.b_ih[2:4].tolist()
        [3.0, 3.0]
        """
        return {name: getattr(self, _ATTRIBUTE[name]) for name in PARAMETER_NAMES}

    @property
    def weights(self) -> Weights:
        """The four parameter arrays keyed as the chapters and the step functions write them: the live arrays.

        ``W_ih``, ``W_hh``, ``b_ih`` and ``b_hh``, the same arrays as
        :meth:`parameters` under PyTorch's names, so a step function takes a
        model's weights as they are:

        >>> from rnnmem import lstm
        >>> model = lstm.LSTM(3, 2, seed=0)
        >>> sorted(model.weights)
        ['W_hh', 'W_ih', 'b_hh', 'b_ih']
        >>> s = lstm.step(np.ones(3), np.zeros(2), np.zeros(2), **model.weights)
        >>> outputs, (h, c) = model.forward(np.ones((1, 1, 3)))
        >>> bool(np.allclose(s.h, h[0]))
        True
        """
        return Weights(W_ih=self.W_ih, W_hh=self.W_hh, b_ih=self.b_ih, b_hh=self.b_hh)

    def to_torch_state_dict(self) -> dict:
        """Copies of the four parameter arrays keyed by PyTorch's names.

        ``torch.nn.LSTM(D, H).load_state_dict({k: torch.from_numpy(v) ...})``
        loads them.

        >>> from rnnmem.rnn import RNN
        >>> sd = RNN(2, 3, seed=0).to_torch_state_dict()
        >>> sorted(sd), sd["weight_hh_l0"].shape
        (['bias_hh_l0', 'bias_ih_l0', 'weight_hh_l0', 'weight_ih_l0'], (3, 3))
        """
        return {name: value.copy() for name, value in self.parameters().items()}

    @classmethod
    def from_torch_state_dict(cls, sd: Mapping, *, dtype: Any = None, **options: Any) -> Self:
        """A model with the parameters of a single-layer PyTorch state dict.

        ``sd`` maps ``weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0`` and
        ``bias_hh_l0`` (no other key) to arrays, or to tensors (detached and
        copied). The sizes are read from the shapes. ``dtype`` defaults to
        float32 when every array is float32, float64 otherwise. ``options``
        are the model's own (the GRU's conventions, :attr:`option_names`); any
        other keyword raises :class:`ValueError` naming it. A missing or extra
        key, or an array of the wrong shape, raises :class:`ValueError` naming
        the key, the shape it has and the shape expected.

        >>> from rnnmem.gru import GRU
        >>> sd = GRU(4, 2, seed=0).to_torch_state_dict()
        >>> model = GRU.from_torch_state_dict(sd, reset="before")
        >>> model.input_size, model.hidden_size, model.reset
        (4, 2, 'before')
        >>> sd["bias_hh_l0"] = np.zeros(5)
        >>> GRU.from_torch_state_dict(sd)
        Traceback (most recent call last):
        ...
        ValueError: sd['bias_hh_l0'] must have shape (6,), got shape (5,)
        """
        unknown = [name for name in options if name not in cls.option_names]
        if unknown:
            takes = ", ".join(("dtype", *cls.option_names))
            raise ValueError(
                f"{cls.__name__}.from_torch_state_dict got unknown keyword arguments "
                f"{', '.join(map(repr, unknown))}: it takes {takes}"
            )
        if not isinstance(sd, Mapping):
            raise ValueError(f"sd must be a mapping from parameter names to arrays, got {type(sd).__name__}")
        expected = ", ".join(PARAMETER_NAMES)
        for key in sd:
            if key not in PARAMETER_NAMES:
                raise ValueError(f"sd has an unexpected key {key!r}: a single-layer state dict has exactly {expected}")
        for key in PARAMETER_NAMES:
            if key not in sd:
                raise ValueError(f"sd is missing the key {key!r}: a single-layer state dict has exactly {expected}")
        arrays = {key: _as_float_array(f"sd[{key!r}]", sd[key]) for key in PARAMETER_NAMES}
        G = len(cls.gate_names)
        W_hh = arrays["weight_hh_l0"]
        if W_hh.ndim != 2 or W_hh.shape[1] < 1 or W_hh.shape[0] != G * W_hh.shape[1]:
            raise ValueError(
                f"sd['weight_hh_l0'] must have shape ({G}*H, H) for a hidden size H >= 1, got shape {W_hh.shape}"
            )
        H = W_hh.shape[1]
        W_ih = arrays["weight_ih_l0"]
        if W_ih.ndim != 2 or W_ih.shape[1] < 1:
            raise ValueError(
                f"sd['weight_ih_l0'] must have shape ({G * H}, D) for an input size D >= 1, got shape {W_ih.shape}"
            )
        D = W_ih.shape[1]
        if dtype is None:
            dtype = np.float32 if all(a.dtype == np.float32 for a in arrays.values()) else np.float64
        model = cls(D, H, dtype=dtype, seed=0, **options)
        copies = {}
        for key, shape in model._shapes().items():
            arr = check_shape(f"sd[{key!r}]", arrays[key], shape)
            check_finite(f"sd[{key!r}]", arr)
            copies[key] = np.array(arr, dtype=model.dtype)
        model.W_ih, model.W_hh = copies["weight_ih_l0"], copies["weight_hh_l0"]
        model.b_ih, model.b_hh = copies["bias_ih_l0"], copies["bias_hh_l0"]
        return model

    def astype(self, dtype: Any) -> Self:
        """A copy of the model in another dtype (float32 or float64), with the same options.

        >>> from rnnmem.lstm import LSTM
        >>> LSTM(2, 2, seed=0).astype(np.float32)
        LSTM(input_size=2, hidden_size=2, dtype=float32)
        """
        dtype = check_dtype("dtype", dtype)
        return type(self).from_torch_state_dict(self.to_torch_state_dict(), dtype=dtype, **self._options())

    def __repr__(self) -> str:
        options = "".join(f", {k}={v!r}" for k, v in self._options().items())
        return (
            f"{type(self).__name__}(input_size={self.input_size}, hidden_size={self.hidden_size}, "
            f"dtype={self.dtype.name}{options})"
        )

    # ------------------------------------------------------------------ checks

    def _check_x(self, x: Any) -> np.ndarray:
        D = self.input_size
        arr = np.asarray(x)
        if arr.ndim != 3 or arr.shape[0] < 1 or arr.shape[1] < 1 or arr.shape[2] != D:
            raise ValueError(
                f"x must have shape (T, B, {D}) with T >= 1 steps and B >= 1 sequences "
                f"(time first), got shape {arr.shape}"
            )
        if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
            raise ValueError(f"x must hold real numbers, got dtype {arr.dtype}")
        return _require_finite("x", np.ascontiguousarray(arr, dtype=self.dtype))

    def _check_state(self, name: str, state: Any, B: int, *, allow_none_parts: bool = False) -> tuple:
        """The state as a tuple of (B, H) arrays (or None parts where allowed)."""
        H, parts = self.hidden_size, self.state_names
        if len(parts) == 1:
            values = (state,)
        else:
            if not isinstance(state, (tuple, list)) or len(state) != len(parts):
                raise ValueError(
                    f"{name} must be a pair (h, c) of arrays of shape ({B}, {H}), got {type(state).__name__}"
                )
            values = tuple(state)
        out: list[np.ndarray | None] = []
        for part, value in zip(parts, values):
            if value is None:
                if not allow_none_parts:
                    raise ValueError(f"{name} must hold arrays, got None for {part}")
                out.append(None)
                continue
            label = name if len(parts) == 1 else f"{name} ({part})"
            arr = _as_float_array(label, value)
            check_shape(label, arr, (B, H))
            out.append(_require_finite(label, np.ascontiguousarray(arr, dtype=self.dtype)))
        return tuple(out)

    def _pack_state(self, parts: tuple) -> Any:
        return parts[0] if len(parts) == 1 else tuple(parts)

    # ------------------------------------------------------------------ forward and backward

    def forward(self, x: Any, state: Any = None) -> tuple:
        """Run the model over a sequence; return ``(outputs, final_state)``.

        ``x`` has shape ``(T, B, D)``, time first; ``state`` is the initial
        state (``h``, or ``(h, c)`` for the LSTM, each ``(B, H)``), zeros when
        ``None``. ``outputs`` has shape ``(T, B, H)``: the hidden state after
        every step. What :meth:`backward` needs is kept until the next call.
        ``x`` and ``state`` are cast to the model's dtype; a wrong shape,
        ``T = 0``, or an entry that is NaN or infinite raises
        :class:`ValueError` naming ``x`` or ``state``.

        >>> from rnnmem.lstm import LSTM
        >>> model = LSTM(3, 2, dtype=np.float32, seed=0)
        >>> outputs, (h, c) = model.forward(np.zeros((6, 4, 3)))
        >>> outputs.shape, outputs.dtype, bool((outputs[-1] == h).all())
        ((6, 4, 2), dtype('float32'), True)
        >>> model.forward(np.zeros((6, 4, 5)))
        Traceback (most recent call last):
        ...
        ValueError: x must have shape (T, B, 3) with T >= 1 steps and B >= 1 sequences (time first), got shape (6, 4, 5)
        """
        self._cache = None  # a failed call leaves nothing for backward
        x = self._check_x(x)
        B, H = x.shape[1], self.hidden_size
        if state is None:
            parts = tuple(np.zeros((B, H), dtype=self.dtype) for _ in self.state_names)
        else:
            parts = self._check_state("state", state, B)
        outputs, final, cache = self._forward(x, parts)
        self._cache = cache
        self._weights_of_cache = tuple(np.array(getattr(self, name), copy=True) for name in WEIGHT_NAMES)
        return outputs, self._pack_state(final)

    def backward(self, d_outputs: Any, d_final_state: Any = None) -> dict:
        r"""Gradients of :math:`L = \sum \delta y \cdot y + \langle \delta s_T, s_T\rangle` for the latest forward.

        ``d_outputs`` has the shape of the outputs, ``(T, B, H)``;
        ``d_final_state`` that of the final state (``dh_T``, or ``(dh_T,
        dc_T)`` for the LSTM, where either may be ``None``), zeros when
        ``None``. Returns a dict keyed ``weight_ih_l0``, ``weight_hh_l0``,
        ``bias_ih_l0``, ``bias_hh_l0``, ``x``, ``h0`` (and ``c0``), each shaped
        like what it is the gradient of. Calling it before any forward pass,
        with shapes that do not match that pass, with an entry that is NaN or
        infinite, or after a weight was changed (in place or replaced) since
        that pass raises :class:`ValueError`: the gradient would belong to
        neither the old weights nor the new.

        The gradient of the final state is the gradient of the last output:

        >>> from rnnmem.rnn import RNN
        >>> model = RNN(1, 1, seed=0)
        >>> outputs, h = model.forward(np.ones((3, 1, 1)))
        >>> d_outputs = np.zeros_like(outputs)
        >>> d_outputs[-1] = 1.0
        >>> via_outputs = model.backward(d_outputs)
        >>> via_state = model.backward(np.zeros_like(outputs), d_final_state=np.ones_like(h))
        >>> via_outputs["x"].shape, bool(np.allclose(via_outputs["h0"], via_state["h0"]))
        ((3, 1, 1), True)
        """
        if self._cache is None:
            raise ValueError("backward needs a forward pass first: call forward(x) before backward(d_outputs)")
        for name, before in zip(WEIGHT_NAMES, self._weights_of_cache):
            now = getattr(self, name)
            if not (isinstance(now, np.ndarray) and now.shape == before.shape and np.array_equal(now, before)):
                raise ValueError(
                    f"backward needs the weights of the latest forward pass, but {name} has changed "
                    f"since: call forward(x) again after changing a weight, then backward"
                )
        T, B = self._cache["x"].shape[:2]
        H = self.hidden_size
        d_out = _as_float_array("d_outputs", d_outputs)
        check_shape("d_outputs", d_out, (T, B, H))
        d_out = _require_finite("d_outputs", np.ascontiguousarray(d_out, dtype=self.dtype))
        if d_final_state is None:
            d_final = tuple(None for _ in self.state_names)
        else:
            d_final = self._check_state("d_final_state", d_final_state, B, allow_none_parts=True)
        return self._backward(self._cache, d_out, d_final)

    def _forward(self, x: np.ndarray, state: tuple) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError

    def _backward(self, cache: dict, d_outputs: np.ndarray, d_final: tuple) -> dict:  # pragma: no cover
        raise NotImplementedError

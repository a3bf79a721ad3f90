"""Argument checks: the one place that says what each argument may be.

Every module of the package, and every site builder, checks its arguments with
these. Each check raises :class:`ValueError` with a message that names the
argument, shows the value it got and says what is allowed, for example::

    ValueError: f must be a gate value strictly between 0 and 1, got 1.5

The functions return the checked value (converted where that is safe) so that
callers can write ``f = check_open_unit("f", f)``. A builder written for a new
chapter should check its arguments the same way.

A function can also state its rules in its signature, with the annotations
below (:data:`OpenUnit`, :data:`PositiveInt`, ``list[OpenUnit]``, ``Literal``, ...),
and have every argument checked by :func:`check_arguments` or the
:func:`checked` decorator: the site's figure and table builders do.

The seed rule of the whole package is :func:`check_seed`: a seed is ``None``
(fresh entropy), a whole number >= 0, or a :class:`numpy.random.Generator`
(used as it is, so that one generator can feed several draws).
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

import numpy as np

__all__ = [
    "check_open_unit",
    "check_positive",
    "check_nonnegative_int",
    "check_positive_int",
    "check_finite",
    "check_real",
    "check_choice",
    "check_shape",
    "check_dtype",
    "check_list",
    "check_seed",
    "check_bool",
    "Check",
    "OpenUnit",
    "Positive",
    "Finite",
    "Real",
    "PositiveInt",
    "NonNegativeInt",
    "Bool",
    "check_arguments",
    "checked",
]


def _show(value: Any) -> str:
    """A short, readable rendering of ``value`` for an error message."""
    if isinstance(value, np.ndarray):
        if value.size <= 6:
            return f"array({value.tolist()!r})"
        return f"array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, np.generic):
        return repr(value.item())
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _as_real(name: str, value: Any) -> np.ndarray:
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        raise ValueError(f"{name} must be a real number, got {_show(value)}")
    try:
        raw = np.asarray(value)
        if raw.dtype.kind == "O":  # a sequence of Python objects: each must be a real number
            if not all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in raw.ravel()):
                raise TypeError
        elif raw.dtype.kind not in "iuf":  # strings, booleans, complex numbers
            raise TypeError
        arr = raw.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number or an array of them, got {_show(value)}") from None
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not be NaN, got {_show(value)}")
    return arr


def _back(value: Any, arr: np.ndarray) -> Any:
    """Return a Python float for scalar input, the float array otherwise."""
    if arr.ndim == 0 and not isinstance(value, np.ndarray):
        return float(arr)
    return arr


def check_open_unit(name: str, value: Any) -> Any:
    """A gate value, or an array of them, strictly inside (0, 1).

    >>> check_open_unit("f", 0.9)
    0.9
    >>> check_open_unit("f", 1.5)
    Traceback (most recent call last):
    ...
    ValueError: f must be a gate value strictly between 0 and 1, got 1.5
    """
    arr = _as_real(name, value)
    if not ((arr > 0) & (arr < 1)).all():
        raise ValueError(f"{name} must be a gate value strictly between 0 and 1, got {_show(value)}")
    return _back(value, arr)


def check_positive(name: str, value: Any, *, allow_inf: bool = False) -> Any:
    """A real number, or array, strictly greater than 0 (finite unless ``allow_inf``).

    >>> check_positive("eps", 1e-6), check_positive("t_max", float("inf"), allow_inf=True)
    (1e-06, inf)
    >>> check_positive("eps", 0)
    Traceback (most recent call last):
    ...
    ValueError: eps must be a positive finite number, got 0
    """
    arr = _as_real(name, value)
    bad = ~(arr > 0) | (~np.isfinite(arr) if not allow_inf else False)
    if np.any(bad):
        what = "a positive number" if allow_inf else "a positive finite number"
        raise ValueError(f"{name} must be {what}, got {_show(value)}")
    return _back(value, arr)


def check_finite(name: str, value: Any) -> Any:
    """A finite real number, or array of them.

    >>> check_finite("c0", 2)
    2.0
    >>> check_finite("x", np.array([0.0, np.inf]))
    Traceback (most recent call last):
    ...
    ValueError: x must be finite, got array([0.0, inf])
    """
    arr = _as_real(name, value)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, got {_show(value)}")
    return _back(value, arr)


def check_real(name: str, value: Any) -> Any:
    """A real number, or array of them, that is not NaN (infinities pass).

    >>> check_real("z", float("-inf"))
    -inf
    >>> check_real("z", "x")
    Traceback (most recent call last):
    ...
    ValueError: z must be a real number, got 'x'
    """
    return _back(value, _as_real(name, value))


def _as_int(name: str, value: Any, allowed: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        if (
            isinstance(value, numbers.Real)
            and not isinstance(value, (bool, np.bool_))
            and math.isfinite(value)
            and float(value).is_integer()
        ):
            return int(math.trunc(value))  # a Real promises __trunc__ (to an Integral), not __int__
        raise ValueError(f"{name} must be {allowed}, got {_show(value)}")
    return int(value)


def check_nonnegative_int(name: str, value: Any) -> int:
    """A whole number >= 0 (a step count, a distance).

    >>> check_nonnegative_int("steps", 3), check_nonnegative_int("steps", 4.0)
    (3, 4)
    """
    allowed = "a whole number >= 0"
    n = _as_int(name, value, allowed)
    if n < 0:
        raise ValueError(f"{name} must be {allowed}, got {_show(value)}")
    return n


def check_positive_int(name: str, value: Any) -> int:
    """A whole number >= 1 (a width, a batch size, a sequence length).

    >>> check_positive_int("hidden", 0)
    Traceback (most recent call last):
    ...
    ValueError: hidden must be a whole number >= 1, got 0
    """
    allowed = "a whole number >= 1"
    n = _as_int(name, value, allowed)
    if n < 1:
        raise ValueError(f"{name} must be {allowed}, got {_show(value)}")
    return n


def check_choice(name: str, value: Any, allowed: tuple) -> Any:
    """One of a fixed set of options.

    >>> check_choice("reset", "after", ("after", "before"))
    'after'
    """
    if value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {options}, got {_show(value)}")
    return value


def check_shape(name: str, array: Any, shape: tuple) -> np.ndarray:
    """An array of an exact shape; ``None`` in ``shape`` matches any length.

    >>> check_shape("W_ih", np.zeros((8, 3)), (8, None)).shape
    (8, 3)
    """
    arr = np.asarray(array)
    ok = arr.ndim == len(shape) and all(s is None or s == a for s, a in zip(shape, arr.shape))
    if not ok:
        want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + (",)" if len(shape) == 1 else ")")
        raise ValueError(f"{name} must have shape {want}, got shape {arr.shape}")
    return arr


def check_dtype(name: str, dtype: Any) -> np.dtype:
    """float32 or float64: the two precisions the models run in.

    >>> check_dtype("dtype", "float32")
    dtype('float32')
    """
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"{name} must be float32 or float64, got {_show(dtype)}") from None
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"{name} must be float32 or float64, got {dt.name}")
    return dt


def check_list(name: str, values: Any, check, what: str) -> list:
    """A non-empty list or tuple whose items each pass ``check`` (named ``name[i]`` in its errors).

    >>> check_list("factors", [0.9, 0.99], check_open_unit, "gate values")
    [0.9, 0.99]
    """
    if not isinstance(values, (list, tuple)) or not values:
        raise ValueError(f"{name} must be a non-empty list of {what}, got {_show(values)}")
    return [check(f"{name}[{i}]", value) for i, value in enumerate(values)]


def check_bool(name: str, value: Any) -> bool:
    """``True`` or ``False`` (numpy's booleans too), nothing that merely converts to one.

    >>> check_bool("include_x", False)
    False
    >>> check_bool("include_x", "no")
    Traceback (most recent call last):
    ...
    ValueError: include_x must be True or False, got 'no'
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {_show(value)}")
    return bool(value)


def check_seed(name: str, seed: Any) -> np.random.Generator:
    """The package's one seed rule: a whole number >= 0, ``None``, or a :class:`numpy.random.Generator`.

    Returns a generator: the one given (not copied, so consecutive draws from
    it continue its stream), or ``numpy.random.default_rng(seed)``.

    >>> rng = check_seed("seed", 0)
    >>> float(rng.uniform()) == float(np.random.default_rng(0).uniform())
    True
    >>> check_seed("seed", rng) is rng
    True
    >>> check_seed("seed", -1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be a whole number >= 0, None or a numpy.random.Generator, got -1
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_)) and int(seed) >= 0:
        return np.random.default_rng(int(seed))
    raise ValueError(f"{name} must be a whole number >= 0, None or a numpy.random.Generator, got {_show(seed)}")


# ---------------------------------------------------------------------------------------------
# Rules written in a signature: ``def f(factors: list[OpenUnit], steps: PositiveInt = 10)``.


@dataclass(frozen=True)
class Check:
    """The rule of an ``Annotated`` parameter: a check function and, for lists, what the items are.

    ``func(name, value)`` raises :class:`ValueError` or returns the checked
    value; ``items`` names a list of such values in an error ("gate values").
    """

    func: Callable[[str, Any], Any]
    items: str


#: A gate value strictly inside (0, 1).
OpenUnit = Annotated[float, Check(check_open_unit, "gate values strictly between 0 and 1")]
#: A positive finite number.
Positive = Annotated[float, Check(check_positive, "positive finite numbers")]
#: A finite real number.
Finite = Annotated[float, Check(check_finite, "finite numbers")]
#: A real number that is not NaN.
Real = Annotated[float, Check(check_real, "real numbers")]
#: A whole number >= 1.
PositiveInt = Annotated[int, Check(check_positive_int, "whole numbers >= 1")]
#: A whole number >= 0.
NonNegativeInt = Annotated[int, Check(check_nonnegative_int, "whole numbers >= 0")]
#: True or False.
Bool = Annotated[bool, Check(check_bool, "True or False")]


def _check_str(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, got {_show(value)}")
    return value


def _check_int(name: str, value: Any) -> int:
    return _as_int(name, value, "a whole number")


_PLAIN: dict[Any, Check] = {
    bool: Check(check_bool, "True or False"),
    int: Check(_check_int, "whole numbers"),
    float: Check(check_finite, "finite numbers"),
    str: Check(_check_str, "strings"),
}


def _rule(hint: Any) -> Callable[[str, Any], Any] | None:
    """The check a type hint asks for, or None where it asks for none (``Any``, no hint, other types)."""
    origin = typing.get_origin(hint)
    if origin is Annotated:
        rule = next((m for m in hint.__metadata__ if isinstance(m, Check)), None)
        return rule.func if rule is not None else _rule(typing.get_args(hint)[0])
    if hint in _PLAIN:
        return _PLAIN[hint].func
    if origin is Literal:
        options = typing.get_args(hint)
        return lambda name, value: check_choice(name, value, options)
    if origin in (Union, types.UnionType):
        members = typing.get_args(hint)
        optional = type(None) in members
        rest = [m for m in members if m is not type(None)]
        if len(rest) == 1:
            member = _rule(rest[0])
            if member is None:
                return None
            return lambda name, value: None if (optional and value is None) else member(name, value)
        return None
    if origin in (list, tuple, Sequence) and typing.get_args(hint):
        args = typing.get_args(hint)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return None  # a fixed-length tuple: the function checks it itself
        item = args[0]
        inner = _rule(item) or (lambda name, value: value)
        what = _items(item)
        return lambda name, value: check_list(name, value, inner, what)
    return None


def _items(hint: Any) -> str:
    if typing.get_origin(hint) is Annotated:
        rule = next((m for m in hint.__metadata__ if isinstance(m, Check)), None)
        if rule is not None:
            return rule.items
        hint = typing.get_args(hint)[0]
    if hint in _PLAIN:
        return _PLAIN[hint].items
    if typing.get_origin(hint) is Literal:
        return "values among " + ", ".join(repr(a) for a in typing.get_args(hint))
    return "values"


@functools.cache
def _rules(func: Callable) -> dict[str, Callable[[str, Any], Any]]:
    hints = typing.get_type_hints(inspect.unwrap(func), include_extras=True)
    rules = {}
    for name in inspect.signature(inspect.unwrap(func)).parameters:
        rule = _rule(hints[name]) if name in hints else None
        if rule is not None:
            rules[name] = rule
    return rules


def check_arguments(func: Callable, arguments: dict[str, Any]) -> dict[str, Any]:
    """Check each argument against its parameter's annotation; returns the checked (converted) values.

    An annotation made with :class:`Check` (:data:`OpenUnit`, :data:`PositiveInt`
    ...) runs its check; ``list[X]`` and ``tuple[X, ...]`` ask for a non-empty
    list or tuple of X (:func:`check_list`); ``Literal[...]`` for one of its
    options; ``X | None`` for None or X; ``bool``, ``int``, ``float`` (finite)
    and ``str`` for a value of that type. Parameters without an annotation, or
    with another one (``Any``, a class), are passed through unchecked: the
    function checks those itself. Relations between arguments (``mark <=
    steps``) are the function's too.

    >>> def decay(factors: list[OpenUnit], steps: PositiveInt = 10, label: str | None = None): ...
    >>> check_arguments(decay, {"factors": (0.9, 0.5), "steps": 4.0})
    {'factors': [0.9, 0.5], 'steps': 4}
    >>> check_arguments(decay, {"factors": [0.9, 1.5]})
    Traceback (most recent call last):
    ...
    ValueError: factors[1] must be a gate value strictly between 0 and 1, got 1.5
    >>> check_arguments(decay, {"factors": []})
    Traceback (most recent call last):
    ...
    ValueError: factors must be a non-empty list of gate values strictly between 0 and 1, got []
    """
    rules = _rules(func)
    return {name: (rules[name](name, value) if name in rules else value) for name, value in arguments.items()}


def checked(func: Callable) -> Callable:
    """Decorator: every call checks its arguments with :func:`check_arguments` (defaults are not checked).

    >>> @checked
    ... def horizon_of(f: OpenUnit, level: OpenUnit = 0.01) -> float:
    ...     return math.log(level) / math.log(f)
    >>> round(horizon_of(0.9), 1)
    43.7
    >>> horizon_of(0.9, level=2)
    Traceback (most recent call last):
    ...
    ValueError: level must be a gate value strictly between 0 and 1, got 2
    """
    signature = inspect.signature(func)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.arguments.update(check_arguments(func, dict(bound.arguments)))
        return func(*bound.args, **bound.kwargs)

    return wrapper

"""Option types shared by the commands: each reads one option's text or says what is allowed.

argparse reports the message as ``argument --lag: must be a whole number >= 1,
got '0'`` and exits with status 2 and the usage.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _parse(text: str, convert: Callable[[str], float], ok: Callable[[float], bool], allowed: str):
    try:
        value = convert(text)
    except ValueError:
        value = None
    if value is None or not ok(value):
        raise argparse.ArgumentTypeError(f"must be {allowed}, got {text!r}")
    return value


def whole(minimum: int, noun: str = "whole number") -> Callable[[str], int]:
    """A whole number at least ``minimum``."""
    return lambda text: _parse(text, int, lambda v: v >= minimum, f"a {noun} >= {minimum}")


def real(text: str) -> float:
    """A finite real number."""
    return _parse(text, float, math.isfinite, "a finite real number")


def positive(text: str) -> float:
    """A finite real number above zero."""
    return _parse(text, float, lambda v: math.isfinite(v) and v > 0, "a real number > 0")


def gate(text: str) -> float:
    """A gate value, strictly between 0 and 1."""
    return _parse(text, float, lambda v: 0 < v < 1, "a gate value in (0, 1)")


def share(text: str) -> float:
    """A share in (0, 1]: a threshold of accuracy, say."""
    return _parse(text, float, lambda v: 0 < v <= 1, "a number in (0, 1]")

"""Shared test helpers.

:func:`require_torch` imports PyTorch for the tests that compare with it. Where
torch is missing those tests are skipped with the reason, except under CI (the
environment variable ``CI`` set and non-empty), where a missing torch fails
them: CI must never pass by silently skipping the comparisons.
"""

import importlib
import os

import pytest

TORCH_REASON = "torch is not installed (the PyTorch comparisons need it: `make test` installs torch==2.13.0)"


def require_torch():
    """Return the ``torch`` module; skip the calling test without it, or fail it under CI."""
    try:
        return importlib.import_module("torch")
    except ImportError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and {TORCH_REASON}: {exc}", pytrace=False)
        pytest.skip(TORCH_REASON)


@pytest.fixture(scope="session")
def torch():
    """The ``torch`` module, through :func:`require_torch`."""
    return require_torch()

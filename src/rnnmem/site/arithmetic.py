"""The floating-point arithmetic a process computes with, named in one line.

A value that a builder computes can depend on more than its code and its
arguments: numpy dispatches its element-wise loops (``exp``, ``tanh``, ...) to
the widest vector instructions the processor has, and these round differently
in the last bit; the BLAS picks a kernel for the processor, and each sums a
matrix product in its own order. Training carries such a difference forward
until a seed may learn on one machine and not on another. The lab chapter
states this line beside the counts it trains
(:mod:`rnnmem.site.builders.memory_measured`), so a reader whose counts
differ can see whether the arithmetic does.

The chapter notebooks record nothing of it: they are built with the site, so
their values are those of the page they come from (:mod:`rnnmem.site.notebook`).
"""

from __future__ import annotations

__all__ = ["arithmetic"]


def arithmetic() -> str:
    """The floating-point arithmetic this process computes with, in one line.

    numpy's version and the vector instruction sets its dispatched loops use
    here (``exp``, ``tanh`` and the other element-wise functions round
    differently in their last bit from one set to another), and the BLAS
    library with the kernel it chose (threadpoolctl reads it): matrix products
    sum in a kernel's own order. Builders run with the BLAS on one thread
    (:func:`rnnmem.site.render.build_content`), so the thread count is not part
    of it. Two processes that print the same line compute the same bits from
    the same inputs.
    """
    import importlib

    import numpy as np
    from threadpoolctl import threadpool_info

    # A private module without type stubs, named differently in numpy 1.x: looked up by name.
    try:
        umath = importlib.import_module("numpy._core._multiarray_umath")
    except ImportError:  # numpy 1.x
        umath = importlib.import_module("numpy.core._multiarray_umath")
    simd = " ".join(t for t in umath.__cpu_dispatch__ if umath.__cpu_features__.get(t)) or "baseline only"
    blas = [
        f"{p.get('internal_api')} {p.get('version')} {p.get('architecture')}"
        for p in threadpool_info()
        if p.get("user_api") == "blas"
    ]
    return f"numpy {np.__version__}; SIMD {simd}; BLAS {', '.join(blas) or 'none found'}"

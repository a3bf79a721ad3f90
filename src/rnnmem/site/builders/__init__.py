"""Figure and table builders, one module per chapter.

Every module in this package is imported by :func:`rnnmem.site.registry.load_builders`;
a builder is registered by decorating it with ``@figure()`` or ``@table()``.
"""

"""The book's site builder: live figures, tables and chapter notebooks.

This subpackage is the only part of :mod:`rnnmem` that imports matplotlib (to
draw figures) or reads MkDocs configuration. The MkDocs plugin is a thin adapter
over :class:`~rnnmem.site.book.Book`; ``python -m rnnmem.site build`` renders
every figure and table without MkDocs.

To add a figure or a table, write a builder in a module of
:mod:`rnnmem.site.builders` and decorate it::

    from rnnmem.site.registry import figure

    @figure()
    def decay_curves(factors=(0.9, 0.99), steps=1000):
        fig, ax = new_figure()
        ...
        return fig

then ask for it in a chapter with ``<!-- figure: decay_curves steps=500 caption="..." -->``.
"""

from .book import Book
from .directives import Directive, DirectiveError, find_directives, parse_arguments
from .registry import figure, table
from .tables import Table

__all__ = ["Book", "Directive", "DirectiveError", "Table", "figure", "find_directives", "parse_arguments", "table"]

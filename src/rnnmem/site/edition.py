"""The book's edition: the version of ``rnnmem`` it is computed by, and the day it was built.

The site shows both in every page's footer, on the home page and in the citation
(``{{edition.version}}`` and ``{{edition.date}}`` in any page's prose), and links the
footer to the page of changes and errata. The date is that of ``SOURCE_DATE_EPOCH``
(the Makefile exports the last commit's time), so the same sources build the same
bytes; without it the site is a development build and says so.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["CHANGES_PAGE", "Edition", "edition"]

#: The page that lists each edition's changes and the book's own errata.
CHANGES_PAGE = "changes.md"


@dataclass(frozen=True)
class Edition:
    """``version`` of rnnmem; ``date``, the build's day (ISO, UTC), empty for a development build."""

    version: str
    date: str

    @property
    def year(self) -> str:
        """The build's year, for a citation; empty for a development build."""
        return self.date[:4]

    @property
    def label(self) -> str:
        """The edition as the footer names it.

        >>> Edition("0.1.0", "2026-12-02").label, Edition("0.1.0", "").label
        ('edition 0.1.0, built 2026-12-02', 'edition 0.1.0, development build')
        """
        return f"edition {self.version}, " + (f"built {self.date}" if self.date else "development build")

    def values(self) -> dict[str, str]:
        """The values a page's prose reads as ``{{edition.NAME}}``."""
        return {"version": self.version, "date": self.date or "a development build", "year": self.year}


def edition(environ: Mapping[str, str] | None = None) -> Edition:
    """The edition being built, from ``rnnmem.__version__`` and ``SOURCE_DATE_EPOCH`` in ``environ``.

    >>> edition({"SOURCE_DATE_EPOCH": "1764633600"}).date
    '2025-12-02'
    >>> edition({"SOURCE_DATE_EPOCH": "yesterday"})
    Traceback (most recent call last):
    ...
    ValueError: SOURCE_DATE_EPOCH must be a whole number of seconds since 1970-01-01 UTC, got 'yesterday'
    """
    from rnnmem import __version__

    env = os.environ if environ is None else environ
    epoch = env.get("SOURCE_DATE_EPOCH", "").strip()
    if not epoch:
        return Edition(__version__, "")
    if not epoch.isdigit():
        raise ValueError(f"SOURCE_DATE_EPOCH must be a whole number of seconds since 1970-01-01 UTC, got {epoch!r}")
    day = dt.datetime.fromtimestamp(int(epoch), tz=dt.UTC).date()
    return Edition(__version__, day.isoformat())

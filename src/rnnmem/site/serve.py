"""Serving the book (``mkdocs serve``): what a server's builds do that a one-off build does not.

The plugin (:mod:`rnnmem.site.plugin`) keeps one :class:`Serve` from one
rebuild to the next and calls it from its events; nothing here imports MkDocs.

* The first build starts without waiting for the items missing from the
  cache (:meth:`Serve.defers`): each page that has one says so
  (:meth:`Serve.waiting_page`); once the server runs, :meth:`Serve.start`
  renders them in a new interpreter (:func:`rnnmem.site.render.render_later`)
  and, when they are done, writes a file in a folder the server watches, so
  it rebuilds every page.
* A dirty rebuild (``--dirty``) rebuilds a page only when its source is newer
  than its output: :meth:`Serve.mark_changed_pages` removes the output of a
  page whose items changed (a builder edited) though its Markdown did not,
  and :func:`back_generated_page` backs a generated page (the API pages) by a
  file rewritten only when it changes.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from .book import Book
from .render import Deferred, LaterRender, render_later

__all__ = ["GENERATED_DIR", "SERVE_DIR", "Serve", "back_generated_page"]

#: The folder, under the cache folder, that the server watches for the rebuild after the deferred items.
SERVE_DIR = "rnnmem-serve"
#: The folder, under the cache folder, of the files that back the generated pages.
GENERATED_DIR = "rnnmem-generated"


class Serve:
    """The state of one ``mkdocs serve`` from one rebuild to the next (see the module's docstring)."""

    def __init__(self) -> None:
        #: The server runs (its ``on_serve`` was called); only the build before it defers items.
        self.started = False
        #: The items left for later are rendered; the next build rebuilds every page.
        self.rebuild_all = False
        #: Each page's item keys at the previous build, to rebuild the pages whose items changed.
        self.last_keys: dict[str, tuple[str, ...]] = {}
        #: The render of the items the first build left for later (ended with the server).
        self.later: LaterRender | None = None

    def defers(self, render_after_start: bool) -> bool:
        """Whether this build leaves the items missing from the cache for later: the first build, when asked."""
        return render_after_start and not self.started

    @staticmethod
    def deferred_items(book: Book, src_uri: str) -> int:
        """How many of the page's items wait to be rendered after the server starts."""
        page = book.pages.get(src_uri)
        return sum(isinstance(item, Deferred) for item in page.items) if page is not None else 0

    def waiting_page(self, book: Book, src_uri: str, markdown: str) -> str | None:
        """The page while its items are rendered after the server started: its title and a note (None: none wait)."""
        waiting = self.deferred_items(book, src_uri)
        if not waiting:
            return None
        title = re.search(r"^# .*$", markdown, re.MULTILINE)
        return (title.group(0) + "\n\n" if title else "") + (
            '!!! info "Rendering this page\'s figures and tables"\n'
            f"    {waiting} of them were not in the cache when the server started. They are being rendered "
            "now (the terminal shows the progress); this page reloads by itself when they are ready.\n"
        )

    def mark_changed_pages(self, book: Book, pages: Iterable[tuple[str, str]]) -> None:
        """Remove the output (``abs_dest_path``) of each page (``src_uri``) whose items changed since the last build.

        MkDocs rebuilds a page when its source is newer than its output; removing
        the output of a page whose items changed (a builder edited) makes it so.
        After the items left for later are rendered, every page is rebuilt.
        """
        rebuild_all, self.rebuild_all = self.rebuild_all, False
        for src_uri, output in pages:
            keys = book.keys(src_uri)
            if rebuild_all or self.last_keys.get(src_uri, keys) != keys or any(not k or " " in k for k in keys):
                Path(output).unlink(missing_ok=True)
            self.last_keys[src_uri] = keys

    def start(
        self,
        book: Book,
        cache_root: Path,
        watch: Callable[[str], object],
        packages: Iterable[str],
        *,
        progress: bool,
    ) -> None:
        """The server runs: render the items the first build left for later, then have it rebuild every page.

        The rebuild is asked for by writing a file in a folder the server
        watches (``watch``, under ``cache_root``); every page is rebuilt then, as the
        first build would have built it (the search index, the references'
        back-links). With ``progress``, the bar shows as for any render.
        """
        self.started = True
        deferred = book.renderer.deferred
        if not deferred:
            return
        folder = cache_root / SERVE_DIR
        folder.mkdir(parents=True, exist_ok=True)
        stamp = folder / "rendered"
        stamp.write_text("", encoding="utf-8")
        watch(str(folder))

        def done() -> None:
            self.rebuild_all = True
            stamp.write_text(str(time.time_ns()), encoding="utf-8")  # the server rebuilds

        self.later = render_later(book.renderer.cache_dir, list(deferred), packages, progress=progress, when_done=done)

    def stop(self) -> None:
        """The server stops: end a render left for later that still runs."""
        if self.later is not None:
            self.later.stop()


def back_generated_page(folder: Path, src_uri: str, text: str, source: Path | None = None) -> Path:
    """The file that backs a generated page while serving with ``--dirty`` (under ``folder``, never in ``docs/``).

    MkDocs rebuilds a page held in memory on every change anywhere; a page
    backed by a file is rebuilt only when that file is newer than its output, so
    an edit elsewhere no longer re-renders every API page. The file is rewritten
    only when ``text`` changed; an API page shows its module's docstrings, so its
    file is touched when ``source``, its module (or a package's modules), is newer.
    """
    path = folder / src_uri
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    elif source is not None:
        code = [source] if source.name != "__init__.py" else list(source.parent.glob("*.py"))
        if max(p.stat().st_mtime for p in code) > path.stat().st_mtime:
            os.utime(path)
    return path

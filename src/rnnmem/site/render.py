"""Render a directive's figure or table, through a cache.

Each rendered item is stored under ``.cache/rnnmem-site/`` and keyed by

* the directive's kind, builder name and arguments (not its caption, alt
  text or id, which only place the item),
* the source of the builder's module and of every ``rnnmem`` module it
  imports, transitively (core modules such as ``rnnmem.memory``, and site
  modules such as ``style`` and ``tables``; see
  :func:`rnnmem.site.sources.dependencies`), so an
  edit re-renders only the items that depend on the edited code,
* the numpy and matplotlib versions.

A rebuild with nothing changed reads every item from the cache and imports
neither matplotlib nor a builder's dependencies' heavy paths. The key is also
the item's file name, so the built site names each figure by its content's
recipe and never serves a stale one. A figure has three files there: its SVG, the
values its builder returned (``.values.json``) and its desktop rendition
(``.wide.svg``, empty when it has none: :func:`rnnmem.site.style.to_svgs`).

While :meth:`Renderer.render_all` renders items missing from the cache, a
progress bar on standard error (tqdm) names the item being rendered
(``page:line kind name``), counts the items left and estimates the time per
item and the time to go. It shows only when standard error is a terminal
(``Renderer(progress=True)`` forces it, ``False`` turns it off), so logs and
CI output stay clean; a build with nothing to render shows none. Console
logging (MkDocs' own) is written above the bar while it shows.

``mkdocs serve`` starts without waiting for the items missing from the cache
(``Renderer.defer_missing``): each becomes a :class:`Deferred` in its page's
place, and :func:`render_later` renders them in a new interpreter after the
server has started, with the same bar, then asks for a rebuild.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import kinds, registry, runcache
from .directives import Directive, DirectiveError
from .numbering import id_problem
from .placeholders import jsonable
from .registry import Builder, Registry
from .sources import dependencies, sources_digest, version
from .suggest import did_you_mean
from .traces import describe

CACHE_VERSION = "3"
#: Directive arguments that belong to the page, not to the builder: never passed to it, not in the key.
RESERVED = ("caption", "alt", "id")


def default_cache_dir() -> Path:
    """``$RNNMEM_CACHE_DIR/rnnmem-site``, or ``.cache/rnnmem-site`` without that variable."""
    return Path(os.environ.get("RNNMEM_CACHE_DIR", ".cache")) / "rnnmem-site"


def _canonical(value: Any) -> Any:
    if isinstance(value, tuple):
        return {"__tuple__": [_canonical(v) for v in value]}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, float):
        return {"__float__": repr(value)}
    return value


@dataclass(frozen=True)
class Item:
    """A rendered figure or table: its content, the values its builder returned, and where it came from."""

    kind: str
    name: str
    key: str
    content: bytes
    from_cache: bool
    #: What the builder computed besides the figure or table (placeholders in captions and prose read it).
    values: dict[str, Any] = field(default_factory=dict, compare=False)
    #: A figure's desktop rendition (:func:`rnnmem.site.style.to_svgs`), or None.
    wide: bytes | None = None

    @property
    def filename(self) -> str:
        return f"{self.name}-{self.key[:16]}.{kinds.get(self.kind).extension}"

    @property
    def wide_filename(self) -> str:
        """The file of the figure's desktop rendition (beside :attr:`filename`)."""
        return f"{self.name}-{self.key[:16]}.wide.svg"


def split_caption(directive: Directive) -> tuple[dict[str, Any], str | None]:
    """The builder's arguments, and the caption; checks the arguments that belong to the page.

    ``caption`` (short, Markdown with math), ``alt`` (a figure's full description,
    plain text) and ``id`` (the item's label) are the page's, not the builder's.
    """
    args = dict(directive.args)
    caption = args.pop("caption", None)
    alt = args.pop("alt", None)
    ident = args.pop("id", None)
    for name, value in (("caption", caption), ("alt", alt)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise directive.error(f"{name} must be a non-empty string, got {value!r}")
    kind = kinds.get(directive.kind)
    if kind.needs_caption and caption is None:
        raise directive.error(f'a {kind.name} needs caption="..." (short) and alt="..." (what it shows, in full)')
    if alt is not None and not kind.has_alt:
        raise directive.error("alt= describes a figure's image; a table's header cells describe it (drop alt=)")
    if alt is not None and caption is not None and alt.strip() == caption.strip():
        raise directive.error(
            "alt= repeats the caption: the caption is the short statement, "
            "alt= the full description of what the figure shows"
        )
    problem = id_problem(ident)  # the numbering's rule (rnnmem.site.numbering.ID_PATTERN)
    if problem is not None:
        raise directive.error(problem)
    return args, caption


def cache_key(directive: Directive, digest: str | None = None, *, builders: Registry | None = None) -> str:
    """The item's key: its recipe (see the module's docstring). ``digest`` overrides the modules' digest.

    ``builders``: the registry the directive's builder is in (default :data:`rnnmem.site.registry.default`).
    """
    builder = (builders or registry.default).get(directive.kind, directive.name)
    args, _ = split_caption(directive)
    recipe = {
        "cache": CACHE_VERSION,
        "kind": directive.kind,
        "name": directive.name,
        "args": _canonical(args),
        "modules": digest if digest is not None else sources_digest(dependencies(builder.module)),
        "numpy": version("numpy"),
        "matplotlib": version("matplotlib"),
    }
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()


def _check_arguments(directive: Directive, builder: Builder, args: dict[str, Any]) -> None:
    params = builder.parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    allowed = [
        n
        for n, p in params.items()
        if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        raise directive.error(
            f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} for {directive.kind} "
            f"{directive.name!r}{''.join(did_you_mean(u, allowed) for u in unknown)}; "
            f"it takes: {', '.join(allowed + ['caption']) or 'caption only'}"
        )
    missing = [n for n in allowed if params[n].default is inspect.Parameter.empty and n not in args]
    if missing:
        raise directive.error(f"{directive.kind} {directive.name!r} needs argument(s): {', '.join(missing)}")


def build_content(
    directive: Directive, *, builders: Registry | None = None
) -> tuple[bytes, dict[str, Any], bytes | None]:
    """Run the builder now (no cache); return the rendered bytes, the values it computed, and a
    figure's desktop rendition (:func:`rnnmem.site.style.to_svgs`; None for the rest).

    A builder returns its figure or table, or ``(figure_or_table, values)``
    with ``values`` a dict of JSON data (numpy scalars and arrays allowed).
    It runs with the BLAS held to one thread, however the process was
    started: a product split over threads sums in another order, and a
    trained network's values would depend on the thread count.
    """
    from threadpoolctl import threadpool_limits

    builder = (builders or registry.default).get(directive.kind, directive.name)
    args, _ = split_caption(directive)
    _check_arguments(directive, builder, args)
    from rnnmem.checks import check_arguments

    try:  # each argument against the rule its parameter's annotation states
        args = check_arguments(builder.func, args)
    except ValueError as exc:
        raise directive.error(f"{directive.kind} {directive.name!r}: {exc}") from None
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            result = builder.func(**args)
    except Exception as exc:  # a builder that raises fails the build, with its location and the code's
        raise directive.error(
            f"the {directive.kind} builder {directive.name!r} raised "
            f"{describe(exc, inspect.getsourcefile(builder.func))}"
        ) from exc
    values: dict[str, Any] = {}
    if isinstance(result, tuple):
        if len(result) != 2 or not isinstance(result[1], dict):
            raise directive.error(
                f"{directive.kind} builder {directive.name!r} returned a tuple: it must be "
                f"(figure_or_table, values) with values a dict, got {len(result)} items"
            )
        result, raw = result
        try:
            values = jsonable(raw, f"the values of {directive.name!r}")
        except ValueError as exc:
            raise directive.error(str(exc)) from None
    content, wide = _content(directive, result)
    return content, values, wide


def _content(directive: Directive, result: Any) -> tuple[bytes, bytes | None]:
    """The item's bytes, as its kind writes what the builder returned (:mod:`rnnmem.site.kinds`)."""
    kind = kinds.get(directive.kind)
    if not kind.accepts(result):
        raise directive.error(
            f"{kind.name} builder {directive.name!r} must return {kind.returns}, got {type(result).__name__}"
        )
    try:
        return kind.to_bytes(result)
    except Exception as exc:
        raise directive.error(
            f"saving the {kind.name} of {directive.name!r} as {kind.format} failed: {describe(exc)}"
        ) from exc


def show_progress(force: bool | None = None, stream: Any = None) -> bool:
    """Whether to show a progress bar on ``stream`` (default standard error): ``force`` if given, else
    whether the stream is a terminal (so a pipe, a log file or CI output gets no bar)."""
    if force is not None:
        return force
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except ValueError:  # a closed stream
        return False


#: The bar: rendered and total, the bar, time per item, time to go, then the postfix (items left and the item).
BAR_FORMAT = "{desc} {n_fmt}/{total_fmt} |{bar:10}| {rate_inv_fmt}, {remaining} to go{postfix}"


class Deferred(DirectiveError):
    """An item missing from the cache while ``mkdocs serve`` starts: rendered afterwards (:func:`render_later`)."""


class _AboveTheBar(logging.Handler):
    """Writes what a console handler would, with ``tqdm.write``: above the bar, which is then drawn again."""

    def __init__(self, console: logging.StreamHandler, bar: Any) -> None:
        super().__init__(console.level)
        self.setFormatter(console.formatter)
        self.filters = list(console.filters)
        self.stream, self.bar = console.stream, bar

    def emit(self, record: logging.LogRecord) -> None:
        try:
            type(self.bar).write(self.format(record), file=self.stream)
        except Exception:
            self.handleError(record)


@contextlib.contextmanager
def _console_logging_above(bar: Any) -> Iterator[None]:
    """Console logging (the root logger's, MkDocs') written above ``bar`` while it shows.

    Each console handler (a stream handler on standard error or output) is
    replaced by one that keeps its level, formatter and filters and writes with
    ``tqdm.write``, so a log line never lands in the middle of the bar; the
    handlers are put back afterwards. Other handlers (a log file) are untouched.
    """
    saved = []
    for logger in (logging.getLogger(), logging.getLogger("mkdocs")):
        handlers = list(logger.handlers)
        saved.append((logger, handlers))
        logger.handlers = [
            _AboveTheBar(h, bar) if isinstance(h, logging.StreamHandler) and h.stream in (sys.stdout, sys.stderr) else h
            for h in handlers
        ]
    try:
        yield
    finally:
        for logger, handlers in saved:
            logger.handlers = handlers


def terminal_size(stream: Any) -> tuple[int, int]:
    """The terminal's columns and lines; 100 and 24 for what the stream does not report.

    A pseudo-terminal that was never given a size reports 0 x 0, with which
    tqdm would print nothing at all.
    """
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return 100, 24
    return size.columns or 100, size.lines or 24


class _Progress:
    """The bar of one :meth:`Renderer.render_all`: ``start(directive)`` before an item, ``done(n)`` after."""

    def __init__(self, total: int, stream: Any) -> None:
        from tqdm import tqdm

        self.total = total
        columns, lines = terminal_size(stream)
        self.bar = tqdm(
            total=total,
            desc="rnnmem",
            unit="item",
            file=stream,
            bar_format=BAR_FORMAT,
            ncols=columns,
            nrows=lines,
            mininterval=0.2,
            disable=False,
        )

    def start(self, what: str) -> None:
        left = self.total - self.bar.n
        self.bar.set_postfix_str(f"{left} left: {what}", refresh=True)

    def done(self, n: int = 1) -> None:
        self.bar.update(n)

    def close(self) -> None:
        self.bar.set_postfix_str("rendered", refresh=False)
        self.bar.close()


class Renderer:
    """Renders directives through the cache, counting what it really rendered and how long it took.

    ``progress``: show a progress bar on standard error while items are
    rendered (True), never (False), or when standard error is a terminal
    (None, the default); see the module's docstring.
    """

    def __init__(
        self, cache_dir: Path | None = None, *, builders: Registry | None = None, progress: bool | None = None
    ) -> None:
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        #: Where the builders are looked up (:data:`rnnmem.site.registry.default` unless a test brings its own).
        self.builders = builders if builders is not None else registry.default
        #: Show a progress bar on standard error: True, False, or None (when standard error is a terminal).
        self.progress = progress
        #: Serving, the first build: an item missing from the cache is not rendered but given as a
        #: :class:`Deferred` (and listed in :attr:`deferred`), for :func:`render_later`.
        self.defer_missing = False
        self.deferred: list[Directive] = []
        self.rendered: list[str] = []
        self.cached: list[str] = []
        #: (directive, seconds, "hit" or "miss") for every item this renderer produced.
        self.timings: list[tuple[Directive, float, str]] = []
        self.used: set[Path] = set()
        self._digests: dict[str, str] = {}

    def modules_digest(self, module: str) -> str:
        if module not in self._digests:
            self._digests[module] = sources_digest(dependencies(module))
        return self._digests[module]

    def _lookup(self, directive: Directive) -> tuple[str, Path]:
        try:
            builder = self.builders.get(directive.kind, directive.name)
        except KeyError as exc:
            raise directive.error(str(exc.args[0])) from exc
        key = cache_key(directive, self.modules_digest(builder.module), builders=self.builders)
        return key, self.cache_dir / directive.kind / f"{directive.name}-{key}"

    def _in_cache(self, directive: Directive) -> bool:
        """Whether the item is in the cache (its content and its values); an error counts as not."""
        try:
            path = self._lookup(directive)[1]
        except DirectiveError:
            return False
        return all(p.is_file() for p in self._files(directive, path))

    @staticmethod
    def _files(directive: Directive, path: Path) -> list[Path]:
        """An item's files in the cache: its content, its values and, for a figure, its desktop
        rendition (an empty file when it has none)."""
        files = [path, path.with_name(path.name + ".values.json")]
        if kinds.get(directive.kind).has_wide:
            files.append(path.with_name(path.name + ".wide.svg"))
        return files

    def render(self, directive: Directive) -> Item:
        self.builders.load_builders()  # once per process; not part of any item's time
        start = time.perf_counter()
        key, path = self._lookup(directive)
        files = self._files(directive, path)
        values_path = files[1]
        self.used.update(files)
        if all(p.is_file() for p in files):
            self.cached.append(directive.where)
            self.timings.append((directive, time.perf_counter() - start, "hit"))
            values = json.loads(values_path.read_text(encoding="utf-8"))
            wide = (files[2].read_bytes() or None) if len(files) > 2 else None
            return Item(directive.kind, directive.name, key, path.read_bytes(), True, values, wide)
        with runcache.directory(self.cache_dir / "runs"):
            content, values, wide = build_content(directive, builders=self.builders)
        path.parent.mkdir(parents=True, exist_ok=True)
        writes = [(values_path, json.dumps(values, sort_keys=True).encode())]
        if len(files) > 2:
            writes.append((files[2], wide or b""))
        for target, data in [*writes, (path, content)]:
            # A name of this process's own: two processes rendering the same item (the test
            # workers, or a build beside a test) never write into one temporary file.
            tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
            tmp.write_bytes(data)
            tmp.replace(target)
        self.rendered.append(directive.where)
        self.timings.append((directive, time.perf_counter() - start, "miss"))
        return Item(directive.kind, directive.name, key, content, False, values, wide)

    def needs_fresh_process(self, directive: Directive, stale: set[str]) -> bool:
        """True when the item depends on a module whose code in this process is older than on disk."""
        builder = self.builders.get(directive.kind, directive.name)
        return bool(stale.intersection(dependencies(builder.module)))

    def render_all(
        self, directives: Iterable[Directive], *, fresh_process: bool = False, keep_going: bool = False
    ) -> list[Item | DirectiveError]:
        """Render every directive, in order.

        ``fresh_process`` (a long-lived ``mkdocs serve``): an item missing from
        the cache that depends on a module changed since this process imported
        it is rendered by ``python -m rnnmem.site render-json`` in a new
        interpreter, so the code that runs is the code the key names. (Edited
        builder modules themselves are imported again by
        :meth:`rnnmem.site.registry.Registry.refresh` and render here.)

        ``keep_going``: a failing directive gives its :class:`DirectiveError` in
        the list instead of stopping the others (what ``mkdocs serve`` shows).

        With a progress bar (:attr:`progress`), the items missing from the cache
        are counted first; the bar names each as it renders (those rendered in
        a fresh interpreter count together). Nothing to render: no bar.
        """
        directives = list(directives)
        stream = sys.stderr
        progress = None
        todo: set[int] = set()  # the positions of the items missing from the cache
        if directives and not self.defer_missing and show_progress(self.progress, stream):
            self.builders.load_builders()
            todo = {n for n, d in enumerate(directives) if not self._in_cache(d)}
            if todo:
                progress = _Progress(len(todo), stream)
        with contextlib.ExitStack() as stack:
            if progress is not None:
                stack.callback(progress.close)
                stack.enter_context(_console_logging_above(progress.bar))
            return self._render_all(directives, fresh_process, keep_going, progress, todo)

    def _render_all(
        self,
        directives: list[Directive],
        fresh_process: bool,
        keep_going: bool,
        progress: _Progress | None,
        todo: set[int],
    ) -> list[Item | DirectiveError]:
        errors: dict[tuple[str, int], DirectiveError] = {}
        if fresh_process:
            stale = self.builders.stale_modules()
            missing: dict[int, Directive] = {}
            for n, d in enumerate(directives):
                try:
                    if stale and not self._lookup(d)[1].is_file() and self.needs_fresh_process(d, stale):
                        missing[n] = d
                except DirectiveError:
                    pass  # reported again below, in order
            if missing:
                if progress is not None:
                    progress.start(f"{len(missing)} whose code changed, in a fresh interpreter")
                errors = _render_in_subprocess(self.cache_dir, list(missing.values()), self.builders.packages)
                if progress is not None:
                    done = todo.intersection(missing)
                    todo = todo - done  # read back from the cache below, not counted again
                    progress.done(len(done))
                if errors and not keep_going:
                    raise next(iter(errors.values()))
        out: list[Item | DirectiveError] = []
        for n, d in enumerate(directives):
            counted = progress is not None and n in todo
            if progress is not None and counted:
                progress.start(f"{d.where} {d.kind} {d.name}")
            try:
                if (d.page, d.line) in errors:
                    raise errors[(d.page, d.line)]
                if self.defer_missing and not self._in_cache(d):
                    self.deferred.append(d)
                    out.append(Deferred(f"{d.where}: {d.kind} {d.name} is rendered after the server starts"))
                    continue
                out.append(self.render(d))
            except DirectiveError as exc:
                if not keep_going:
                    raise
                out.append(exc)
            finally:
                if progress is not None and counted:
                    progress.done()
        return out

    def prune(self) -> list[Path]:
        """Delete the cached items this renderer did not use (call after rendering every page)."""
        removed = []
        for kind in kinds.KINDS:
            folder = self.cache_dir / kind
            if folder.is_dir():
                for path in folder.iterdir():
                    if path.is_file() and path not in self.used:
                        path.unlink(missing_ok=True)
                        removed.append(path)
        return removed

    def timing_report(self) -> str:
        """One line per item, slowest first: seconds, hit or miss, page:line, kind and builder."""
        rows = sorted(self.timings, key=lambda t: -t[1])
        lines = [f"{'seconds':>8}  {'cache':5}  directive"]
        for d, seconds, status in rows:
            lines.append(f"{seconds:8.3f}  {status:5}  {d.where} {d.kind} {d.name}")
        total = sum(t[1] for t in rows)
        lines.append(f"{total:8.3f}  total  {len(rows)} items, {sum(t[2] == 'miss' for t in rows)} rendered")
        return "\n".join(lines)


def _render_in_subprocess(
    cache_dir: Path, directives: list[Directive], packages: Iterable[str] = (registry.BUILDER_PACKAGE,)
) -> dict[tuple[str, int], DirectiveError]:
    """Render in a new interpreter (its builders from ``packages``); returns the errors by (page, line)."""
    payload = json.dumps([{"page": d.page, "line": d.line, "text": d.text} for d in directives])
    where = [arg for package in packages for arg in ("--package", package)]
    proc = subprocess.run(
        [sys.executable, "-m", "rnnmem.site", "render-json", "--cache", str(cache_dir), *where],
        input=payload,
        text=True,
        capture_output=True,
    )
    try:
        reported = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError:
        reported = None
    if proc.returncode not in (0, 1) or reported is None:
        raise DirectiveError(proc.stderr.strip() or f"rendering failed with exit status {proc.returncode}")
    return {(e["page"], e["line"]): DirectiveError(e["error"]) for e in reported}


@dataclass
class LaterRender:
    """The render :func:`render_later` started: its interpreter and the thread that follows it."""

    proc: subprocess.Popen
    thread: threading.Thread

    def stop(self, timeout: float = 10) -> None:
        """End the interpreter (the server stops) and wait for the thread."""
        if self.proc.poll() is None:
            self.proc.terminate()
        self.thread.join(timeout)


def render_later(
    cache_dir: Path,
    directives: list[Directive],
    packages: Iterable[str] = (registry.BUILDER_PACKAGE,),
    *,
    progress: bool,
    when_done: Callable[[], object],
) -> LaterRender:
    """Render ``directives`` into the cache in a new interpreter, followed on a thread; then call ``when_done``.

    ``mkdocs serve`` calls it once the server runs, for the items its first
    build deferred (:attr:`Renderer.defer_missing`). The interpreter reports
    each item as it starts and finishes (``render-json --each``), so with
    ``progress`` this process draws the bar (console logging written above
    it). A failure is not reported here: the rebuild ``when_done`` asks for
    renders the item again and shows the error on its page.
    """
    payload = json.dumps([{"page": d.page, "line": d.line, "text": d.text} for d in directives])
    names = {f"{d.page}:{d.line}": f"{d.where} {d.kind} {d.name}" for d in directives}
    where = [arg for package in packages for arg in ("--package", package)]
    cmd = [sys.executable, "-m", "rnnmem.site", "render-json", "--each", "--cache", str(cache_dir), *where]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def run() -> None:
        assert proc.stdin is not None and proc.stdout is not None  # both pipes
        bar = _Progress(len(directives), sys.stderr) if progress else None
        try:
            with contextlib.ExitStack() as stack:
                if bar is not None:
                    stack.enter_context(_console_logging_above(bar.bar))
                proc.stdin.write(payload)
                proc.stdin.close()
                for line in proc.stdout:
                    try:
                        event = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    if bar is not None and isinstance(event, dict) and "start" in event:
                        bar.start(names.get(str(event["start"]), str(event["start"])))
                    elif bar is not None and isinstance(event, dict) and "done" in event:
                        bar.done()
                proc.wait()
        finally:
            if bar is not None:
                bar.close()
            when_done()

    thread = threading.Thread(target=run, name="rnnmem-render-later", daemon=True)
    thread.start()
    return LaterRender(proc, thread)

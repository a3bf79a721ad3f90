"""Shared test helpers.

:func:`require_torch` imports PyTorch for the tests that compare with it. Where
torch is missing those tests are skipped with the reason, except under CI (the
environment variable ``CI`` set and non-empty), where a missing torch fails
them: CI must never pass by silently skipping the comparisons.

The render cache: the test session renders the book's figures and tables once,
into one cache that every test and every process a test starts reads
(:func:`shared_cache_dir`: ``$RNNMEM_CACHE_DIR``, else the repository's
``.cache``, the one ``make build`` fills). The fixture ``book_items`` gives
every item of the book's pages from it. A test that must render cold renders
small directives into its own folder, or builds the tiny fixture book
(``tests/tinybook``; ``tiny_builds``: built once per session, cold and warm).
``site_build`` builds a site as ``make build`` does, ``shared_cache`` is the cache's folder.
A build prunes from its cache every item its own pages do not use: only a build of the
whole book may use the shared cache.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pty
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import pytest

if TYPE_CHECKING:
    from rnnmem.site.directives import Directive
    from rnnmem.site.render import Item

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: The tiny fixture book of the site machinery's tests: its mkdocs.yml, docs/ (two chapters, home, references).
TINYBOOK = Path(__file__).resolve().parent / "tinybook"

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


DISTRIBUTED_REASON = (
    "distributed is not installed (the cluster extra: pip install 'rnnmem[cluster]'; make test installs it)"
)


@pytest.fixture(scope="session")
def distributed():
    """The ``distributed`` module (Dask's scheduler, the ``cluster`` extra); the test is skipped without it, except
    under CI (``CI`` set), where it fails: CI must never pass by silently skipping the cluster's tests."""
    try:
        return importlib.import_module("distributed")
    except ImportError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and {DISTRIBUTED_REASON}: {exc}", pytrace=False)
        pytest.skip(DISTRIBUTED_REASON)


# -- the shared render cache ----------------------------------------------------------------------------------
def shared_cache_dir() -> Path:
    """The cache folder of the whole session: ``$RNNMEM_CACHE_DIR``, else the repository's ``.cache``
    (where ``make build`` renders), as an absolute path; the items are in its ``rnnmem-site``."""
    return Path(os.environ.get("RNNMEM_CACHE_DIR") or ROOT / ".cache").resolve()


def pytest_configure(config):
    # Every test, and every process a test starts (builds, the command line, pytest-xdist's workers),
    # reads and fills the same cache, whatever its working directory; a test that wants a cold cache
    # names a folder of its own.
    os.environ["RNNMEM_CACHE_DIR"] = str(shared_cache_dir())
    sys.addaudithook(_note_a_started_program)


# -- tests that start another program ---------------------------------------------------------------------------
#: Programs whose start-up costs a new interpreter (a Python that imports rnnmem, Node, make). A test that
#: starts one is marked ``process``: ``make test-fast`` leaves it out, ``make test`` and CI run it.
INTERPRETERS = ("python", "node", "make", "mkdocs")
#: Marks whose tests ``make test-fast`` already leaves out: they may start programs unmarked.
LEFT_OUT_OF_TEST_FAST = ("process", "build", "site", "browser")

_running: list[pytest.Item] = []  # the test whose set-up or body runs now
_started: dict[str, list[str]] = {}  # node id -> the programs it started without the mark


def program_name(args: object) -> str:
    """The file name of the program a ``subprocess`` call starts (``args`` a list, or a shell string)."""
    first = args.split()[0] if isinstance(args, str) and args.split() else args
    if isinstance(first, (list, tuple)):
        first = first[0] if first else ""
    return Path(os.fsdecode(first)).name if isinstance(first, (str, bytes, os.PathLike)) else ""


def starts_an_interpreter(name: str) -> bool:
    """Whether the program ``name`` is one of :data:`INTERPRETERS` (or this Python under another name)."""
    return name == Path(sys.executable).name or name.startswith(INTERPRETERS)


def _note_a_started_program(event: str, args: tuple) -> None:
    # The audit event every subprocess.Popen raises: (executable, args, cwd, env).
    if event != "subprocess.Popen" or not _running:
        return
    item = _running[-1]
    name = program_name(args[1] if args[1] is not None else args[0])
    if starts_an_interpreter(name) and not any(item.get_closest_marker(m) for m in LEFT_OUT_OF_TEST_FAST):
        _started.setdefault(item.nodeid, []).append(name)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _watching(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _watching(item))


def _watching(item: pytest.Item):
    """Run a test's set-up or body (the hook's ``yield``), and fail it if it started an interpreter unmarked."""
    _running.append(item)
    try:
        result = yield
    finally:
        _running.pop()
    started = _started.pop(item.nodeid, [])
    if started:
        pytest.fail(
            f"{item.nodeid} starts {', '.join(sorted(set(started)))} in a new process but is not marked "
            "`process`: add @pytest.mark.process (make test-fast leaves such tests out; make test runs them)",
            pytrace=False,
        )
    return result


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    """Close the figures a test left open (a builder called directly returns its figure)."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (pytest-xdist's workers take turns; the lock is the
    kernel's, released when the process ends however it ends). Without ``fcntl`` (Windows) it holds nothing:
    two processes then may render the same item, each into a file of its own, which is still correct."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def book_directives() -> list[Directive]:
    """Every figure, table and widget directive of the book's pages (docs/), in page order."""
    from rnnmem.site.directives import find_directives

    return [
        d
        for page in sorted(DOCS.rglob("*.md"))
        for d in find_directives(page.read_text(encoding="utf-8"), f"docs/{page.relative_to(DOCS).as_posix()}")
    ]


@pytest.fixture(scope="session")
def book_items() -> dict[str, tuple[Directive, Item]]:
    """Every item of the book's pages, rendered once per test session into the shared cache, by place
    (``"docs/chapters/horizon.md:86"`` -> (directive, item)).

    Under pytest-xdist the first worker to ask renders what the cache lacks (nothing after
    ``make build``) while the others wait for it, then read. A directive that fails raises its
    :class:`~rnnmem.site.directives.DirectiveError`, naming page and line.
    """
    from rnnmem.site.render import Item, Renderer

    directives = book_directives()
    cache = shared_cache_dir()
    with locked(cache / "rnnmem-tests.lock"):
        items = Renderer(cache / "rnnmem-site").render_all(directives)
    return {d.where: (d, item) for d, item in zip(directives, items) if isinstance(item, Item)}


# -- builds -----------------------------------------------------------------------------------------------------
def source_date_epoch() -> str:
    """As the Makefile exports it: the environment's, else the last commit's time."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return os.environ["SOURCE_DATE_EPOCH"]
    result = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=ROOT, capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 and result.stdout.strip() else "0"


def mkdocs_build(config: Path, site: Path, cache: Path, *, timeout: float = 600) -> subprocess.CompletedProcess:
    """``mkdocs build --strict --clean`` of ``config`` into ``site`` with the render cache ``cache``, from the
    repository's root and with the environment the Makefile exports (SOURCE_DATE_EPOCH, PYTHONHASHSEED=0)."""
    env = dict(
        os.environ,
        SOURCE_DATE_EPOCH=source_date_epoch(),
        PYTHONHASHSEED="0",
        NO_MKDOCS_2_WARNING="1",
        RNNMEM_CACHE_DIR=str(cache),
    )
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean", "-f", str(config), "-d", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def shared_cache() -> Path:
    """The session's render cache folder (:func:`shared_cache_dir`), for a build that is to read it."""
    return shared_cache_dir()


@pytest.fixture(scope="session")
def site_build():
    """:func:`mkdocs_build`, for the tests of other folders (a test module cannot import this conftest by name)."""
    return mkdocs_build


def files_under(root: Path) -> set[str]:
    """Every file under ``root``, as paths relative to it."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


class TinyBuilds(NamedTuple):
    """The tiny book built twice into two folders, with one render cache: first cold, then warm.

    (A NamedTuple, not a dataclass: tests/core/test_models.py loads this file as a module of no package.)"""

    cold: Path
    warm: Path
    cache: Path
    cold_log: str
    warm_log: str
    #: The files of tests/tinybook/docs before the builds and after them (a build writes nothing there).
    docs_before: list[str]
    docs_after: list[str]


@pytest.fixture(scope="session")
def tiny_builds(tmp_path_factory) -> TinyBuilds:
    """The fixture book (tests/tinybook) built with an empty cache of its own, then again with that cache."""
    root = tmp_path_factory.mktemp("tinybook")
    before = sorted(files_under(TINYBOOK / "docs"))
    logs = []
    for name in ("cold", "warm"):
        done = mkdocs_build(TINYBOOK / "mkdocs.yml", root / name, root / "cache")
        if done.returncode != 0:
            pytest.fail(f"the {name} build of the tiny book failed:\n{done.stderr[-4000:]}")
        logs.append(done.stderr)
    after = sorted(files_under(TINYBOOK / "docs"))
    cold, warm = logs
    return TinyBuilds(root / "cold", root / "warm", root / "cache" / "rnnmem-site", cold, warm, before, after)


def shown_on_terminal(run: Callable[[int], object]) -> str:
    """What a pseudo-terminal shows while ``run(fd)`` writes to the descriptor of its terminal side."""
    master, slave = pty.openpty()
    shown: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the terminal side is closed and everything was read
                return
            if not chunk:
                return
            shown.append(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        run(slave)
    finally:
        os.close(slave)
        reader.join(timeout=60)
        os.close(master)
    return b"".join(shown).decode()


@pytest.fixture
def terminal() -> Callable[[Callable[[int], object]], str]:
    """``terminal(run)``: what a pseudo-terminal shows while ``run(fd)`` writes to its terminal side (a bar's test)."""
    return shown_on_terminal

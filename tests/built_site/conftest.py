"""Fixtures for the checks of the built site in ./site (run `make build` first).

Every test collected from this directory is marked ``site`` (so ``make test-fast``,
which deselects ``-m "not site and not browser"``, never builds or opens anything);
the browser tests are marked ``browser`` as well, in their module.

* ``site_dir``: the built site, ./site (or ``$RNNMEM_SITE``, to check a site built
  elsewhere); fails (does not skip) when it has not been built.
* ``site_server``: the site served on a free loopback port by a threaded ``http.server``,
  under the path prefix of ``site_url`` as on GitHub Pages.
* ``page_soup``: ``page_soup("chapters/horizon/index.html")`` is that page of the built
  site parsed by BeautifulSoup (``html.parser``), parsed once per session and shared by
  every test that reads it (read it, never change it).
* ``browser``: one headless Chromium for the whole session, driven by Playwright.
  The executable is ``$RNNMEM_CHROMIUM`` or Debian's ``/usr/bin/chromium``;
  Playwright's own browser downloads are never used.

A missing browser skips the browser tests locally, but fails them when ``CI`` is set.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from rnnmem.site import pdf

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("RNNMEM_SITE") or ROOT / "site").resolve()
HERE = Path(__file__).resolve().parent

# The browser and flags the book is printed with (rnnmem.site.pdf), and two more for checking.
DEFAULT_CHROMIUM = pdf.DEFAULT_CHROMIUM
CHROMIUM_ARGS = [*pdf.CHROMIUM_ARGS, "--disable-sync", "--disable-quic"]


@pytest.hookimpl(tryfirst=True)  # before -m deselects anything
def pytest_collection_modifyitems(config, items):
    # This hook sees every collected item of the session: mark only ours.
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.site)


@pytest.fixture(scope="session")
def site_dir() -> Path:
    if not (SITE / "index.html").is_file():
        pytest.fail(
            f"run `make build` first: {SITE / 'index.html'} does not exist "
            "(these tests check the built site and never build it themselves)"
        )
    return SITE


@functools.cache
def _parsed(path: Path):
    from bs4 import BeautifulSoup

    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


@pytest.fixture(scope="session")
def page_soup(site_dir):
    """rel -> the BeautifulSoup tree of site/rel, parsed once per session (shared: read only)."""

    def parse(rel: str):
        return _parsed(site_dir / rel)

    return parse


def pytest_generate_tests(metafunc):
    # One test per HTML page of the built site. Without a built site there is a
    # single "index.html" case, which fails in the site_dir fixture with its advice.
    if "html_page" in metafunc.fixturenames:
        pages = sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html")) or ["index.html"]
        metafunc.parametrize("html_page", pages)


def configured_site_url() -> str:
    """site_url from mkdocs.yml ("https://rnnmem.github.io/why-rnns-forget/")."""
    match = re.search(r"^site_url:\s*(\S+)", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    url = match.group(1) if match else "http://localhost/"
    return url if url.endswith("/") else url + "/"


@pytest.fixture(scope="session")
def site_url() -> str:
    return configured_site_url()


def site_prefix() -> str:
    """The path of site_url ("/why-rnns-forget/" on GitHub Pages)."""
    return urlsplit(configured_site_url()).path


class _SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site under the same path prefix as GitHub Pages, so that the
    root-absolute URLs of 404.html work; anything outside the prefix is a 404."""

    prefix = "/"

    def translate_path(self, path):
        if not path.startswith(self.prefix):
            return os.path.join(self.directory, "-outside-the-site-", "-")
        return super().translate_path("/" + path[len(self.prefix) :])

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


@pytest.fixture(scope="session")
def site_server(site_dir):
    """Base URL of the built site served on 127.0.0.1 at a free port, under the
    site_url path: "http://127.0.0.1:PORT/why-rnns-forget/"."""
    prefix = site_prefix()
    handler = functools.partial(type("Handler", (_SiteHandler,), {"prefix": prefix}), directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{prefix}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


#: The page has started and settled: a11y.js has drawn every block of the article (left out of
#: the first paint while off the screen) and measured the blocks that scroll, a few at a time
#: while the browser was idle, after the theme's scripts started (rnnmem.site.speed).
SCROLLERS_DONE = "() => document.documentElement.dataset.rnnmemScrollers === 'done'"


def _unavailable(message: str):
    """Skip locally; with CI set, a browser check that cannot run is a failure."""
    if os.environ.get("CI"):
        pytest.fail(message + " (CI is set, so the browser checks may not be skipped)")
    pytest.skip(message)


def chromium_path() -> str:
    return os.environ.get("RNNMEM_CHROMIUM") or DEFAULT_CHROMIUM


@pytest.fixture(scope="session")
def browser():
    executable = chromium_path()
    if not (os.path.isfile(executable) and os.access(executable, os.X_OK)):
        _unavailable(
            f"chromium not found at {executable}; install Debian's chromium "
            "(make test does it when run as root) or set RNNMEM_CHROMIUM to a Chromium or Chrome executable"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed: run `make setup`")
    playwright = sync_playwright().start()
    try:
        chromium = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
    finally:
        playwright.stop()

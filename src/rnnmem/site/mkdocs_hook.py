"""MkDocs hook: a thin adapter between MkDocs and :class:`rnnmem.site.book.Book`.

* ``on_config``: start a build (and notice when a long-running ``mkdocs serve``
  has outlived the package code it imported).
* ``on_files``: read every page, render its figures and tables through the
  cache, add the figures, the MathJax files and the API pages
  (:mod:`rnnmem.site.apipages`) as generated files (nothing is written into
  ``docs/``).
* ``on_page_markdown``: replace each directive with its figure or table.
* ``on_post_page``: tidy the pages rendered from notebooks (no outside
  loaders, reproducible cell ids).

Every failure becomes a ``PluginError`` naming page, line and directive, so
the build stops instead of shipping a blank or stale figure.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files, InclusionLevel

from rnnmem.site import apipages
from rnnmem.site.book import Book, NotebookAltError, clean_notebook_html
from rnnmem.site.directives import DirectiveError
from rnnmem.site.render import environment_key, package_digest

log = logging.getLogger("mkdocs.hooks.rnnmem")

_IMPORTED_DIGEST = package_digest()
_book: Book | None = None

#: MathJax 3 (from the npm registry, pinned in package-lock.json), copied into the site.
MATHJAX_SOURCE = Path("node_modules/mathjax/es5")
MATHJAX_TARGET = "assets/mathjax"
MATHJAX_PARTS = ["tex-chtml.js", "input/tex/extensions", "output/chtml/fonts/woff-v2", "ui", "a11y", "sre"]


def on_config(config):
    global _book
    fresh = package_digest() != _IMPORTED_DIGEST
    if fresh:
        log.info("rnnmem changed since this process started: rendering changed figures in a fresh interpreter")
    _book = Book(Path(config["docs_dir"]), repo_url=config["repo_url"] or "", site_url=config["site_url"] or "",
                 fresh_process=fresh)
    # mkdocs-jupyter caches executed notebooks by their own source only; a notebook's output
    # also depends on rnnmem and the numeric libraries, so key its cache folder on them too.
    jupyter = config["plugins"].get("mkdocs-jupyter")
    if jupyter is not None and jupyter.config.get("cache"):
        base = Path(jupyter.config["cache_dir"])
        if os.environ.get("RNNMEM_CACHE_DIR"):
            base = Path(os.environ["RNNMEM_CACHE_DIR"]) / "mkdocs-jupyter"
        if base.name.startswith("rnnmem-"):
            base = base.parent
        current = base / f"rnnmem-{environment_key()[:16]}"
        jupyter.config["cache_dir"] = str(current)
        _prune(base, keep=current)
    apipages.set_nav(config)  # the API section lists the generated pages
    return config


def _prune(base: Path, keep: Path) -> None:
    """Remove notebook caches of earlier package versions: they can never be hit again by this code."""
    if base.is_dir():
        for old in base.glob("rnnmem-*"):
            if old != keep and old.is_dir():
                shutil.rmtree(old, ignore_errors=True)


def on_files(files: Files, config) -> Files:
    assert _book is not None
    try:
        for file in files.documentation_pages():
            _book.add_page(file.src_uri, file.content_string)
        _book.render()
    except DirectiveError as exc:
        raise PluginError(str(exc)) from None
    for path, content in sorted(_book.generated_files().items()):
        files.append(File.generated(config, path, content=content))
    _add_mathjax(files, config)
    try:
        apipages.add_files(files, config)  # api/*.md, generated from the package's modules
    except ValueError as exc:
        raise PluginError(str(exc)) from None
    stale = _book.stale_notebooks()
    if stale:
        log.warning("chapter notebooks out of date (run `make notebooks`): " + "; ".join(stale))
    r = _book.renderer
    log.info(f"rnnmem: {len(r.rendered)} figures/tables rendered, {len(r.cached)} from the cache")
    return files


def _add_mathjax(files: Files, config) -> None:
    """Copy MathJax into the site when the config's extra_javascript asks for it."""
    wanted = f"{MATHJAX_TARGET}/tex-chtml.js"
    if not any(str(getattr(js, "path", js)) == wanted for js in config["extra_javascript"]):
        return
    root = Path(config["config_file_path"]).parent
    source = root / MATHJAX_SOURCE
    if not (source / "tex-chtml.js").is_file():
        raise PluginError(f"MathJax not found at {source}: run `make setup` (npm ci installs it from package-lock.json)")
    for part in MATHJAX_PARTS:
        path = source / part
        paths = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for p in paths:
            rel = p.relative_to(source).as_posix()
            files.append(File.generated(config, f"{MATHJAX_TARGET}/{rel}", abs_src_path=str(p),
                                        inclusion=InclusionLevel.NOT_IN_NAV))


def on_page_markdown(markdown: str, page, config, files) -> str:
    assert _book is not None
    try:
        return _book.page_markdown(page.file.src_uri, markdown)
    except DirectiveError as exc:
        raise PluginError(str(exc)) from None


def on_post_page(output: str, page, config) -> str:
    if not page.file.src_uri.startswith("notebooks/"):
        return output
    import jupytext

    alts = [cell.metadata.get("alt") for cell in jupytext.read(page.file.abs_src_path).cells]
    try:
        return clean_notebook_html(output, alts, where=f"docs/{page.file.src_uri}")
    except NotebookAltError as exc:
        raise PluginError(str(exc)) from None

"""MkDocs hook: a thin adapter between MkDocs and :class:`rnnmem.site.book.Book`.

* ``on_startup``: note whether this process serves (``mkdocs serve``).
* ``on_config``: start a build; while serving, import new and edited builder
  modules again (:func:`rnnmem.site.registry.refresh`) and render items whose
  other code changed in a fresh interpreter.
* ``on_files``: read every page, render its figures and tables through the
  cache, add the figures and the API pages
  (:mod:`rnnmem.site.apipages`) as generated files (nothing is written into
  ``docs/``).
* ``on_nav``: number the chapters' titles (nav, browser title) from the nav order
  (:mod:`rnnmem.site.numbering`).
* ``on_page_markdown``: replace each directive with its figure or table; number the
  chapter's title, figures, tables and equations, and link the references to them.
* ``on_page_content``: finish the figures and tables that stand in indented blocks,
  the numbered equations, link citations, mark what search leaves out, describe
  the page and set what copy buttons copy (:mod:`rnnmem.site.reader`), and
  typeset the page's math (:mod:`rnnmem.site.mathjax`).
* ``on_page_context``: on the references page, link each entry back to its citations.
* ``on_post_page``: keep punctuation on the line of the formula it follows
  (:mod:`rnnmem.site.typography`); start the theme's scripts after the first paint and
  resolve the stylesheets' addresses in the head, so the theme does not load them again
  (:mod:`rnnmem.site.speed`; ``on_post_template`` does both for the 404 page); tidy
  the pages rendered from notebooks (no outside loaders, reproducible cell ids).
* ``on_post_build``: the math stylesheet and fonts into the site; the site's own
  stylesheets as one file (:mod:`rnnmem.site.stylesheet`, which takes their place in
  ``extra_css`` in ``on_config``); keep the executed-notebook cache of pages a dirty
  rebuild skipped.

Every failure becomes a ``PluginError`` naming page, line and directive (and,
for a builder that raises, its file and line), so the build stops instead of
shipping a blank or stale figure. While serving, a failure is logged in the
terminal and shown on its page instead, so the browser never waits for a
build that will not come.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import jinja2
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

from rnnmem.site import apipages, mathjax, numbering, registry, speed, stylesheet, typography
from rnnmem.site.book import (
    Book,
    NotebookAltError,
    add_notebook_links,
    clean_notebook_html,
    load_mkdocs_settings,
    unwrap_nested_blocks,
)
from rnnmem.site.citations import CitationError
from rnnmem.site.directives import DirectiveError
from rnnmem.site.reader import REFERENCES, ReaderSteps
from rnnmem.site.render import default_cache_dir
from rnnmem.site.sources import environment_key

log = logging.getLogger("mkdocs.hooks.rnnmem")

_book: Book | None = None
_serving = False
#: Serving: each page's item keys at the previous build, to rebuild the pages whose items changed.
_last_keys: dict[str, tuple[str, ...]] = {}
#: Citations, search exclusions, descriptions, copy texts (rnnmem.site.reader).
_reader = ReaderSteps()
#: The stylesheets of extra_css that the bundle holds, in order (rnnmem.site.stylesheet).
_stylesheets: list[str] = []


def on_startup(command, dirty):
    global _serving
    _serving = command == "serve"


def on_config(config):
    global _book
    try:
        reloaded = registry.refresh()
    except registry.BuilderImportError as exc:
        if not _serving:
            raise PluginError(str(exc)) from exc
        log.error(str(exc))
        reloaded = []
    if _serving and reloaded and _book is not None:
        log.info("rnnmem: builder modules imported again: " + ", ".join(reloaded))
    # `mkdocs serve` rewrites site_url to its own address; the notebooks embed the book's.
    site_url = config["site_url"] or ""
    if config.get("config_file_path"):
        site_url = load_mkdocs_settings(Path(config["config_file_path"]))["site_url"] or site_url
    _book = Book(
        Path(config["docs_dir"]),
        repo_url=config["repo_url"] or "",
        site_url=site_url,
        fresh_process=_serving,
        keep_going=_serving,
        chapters=numbering.chapter_order(config["nav"]),
    )
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
    global _stylesheets
    _stylesheets = stylesheet.take_stylesheets(config["extra_css"])  # one request instead of six
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
        raise PluginError(str(exc)) from exc
    for error in _book.errors:  # serving only: shown on the page as well
        log.error(f"rnnmem: {error}")
    if not _book.errors:
        _book.renderer.prune()
    if _serving:
        _mark_changed_pages(files)
    for path, content in sorted(_book.generated_files().items()):
        files.append(File.generated(config, path, content=content))
    try:
        apipages.add_files(files, config)  # api/*.md, generated from the package's modules
    except ValueError as exc:
        raise PluginError(str(exc)) from None
    if _serving:
        _file_backed_pages(files, config)
    try:
        stale = _book.stale_notebooks()
    except DirectiveError as exc:  # a reference to no target (the notebooks show references as text)
        raise PluginError(str(exc)) from exc
    if stale:
        log.warning("chapter notebooks out of date (run `make notebooks`): " + "; ".join(stale))
    references = files.get_file_from_path(REFERENCES)
    _reader.start(references.content_string if references else None, references.url if references else "references/")
    r = _book.renderer
    log.info(f"rnnmem: {len(r.rendered)} figures/tables rendered, {len(r.cached)} from the cache")
    return files


def _file_backed_pages(files: Files, config) -> None:
    """Serving with --dirty: back each generated page (the API pages) by a file rewritten only when it changes.

    MkDocs rebuilds a page held in memory on every change anywhere; a page
    backed by a file is rebuilt only when that file is newer than its output,
    so an edit elsewhere no longer re-renders every API page. The files live
    under the cache folder, never in ``docs/``.
    """
    folder = default_cache_dir().parent / "rnnmem-generated"
    sources = {page.path: page.source for page in apipages.api_pages()}
    for file in list(files.documentation_pages()):
        if file.generated_by is None or file.abs_src_path is not None:
            continue
        path = folder / file.src_uri
        text = file.content_string
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        elif file.src_uri in sources:
            # An API page shows its module's docstrings: rebuild it when the module (or package) changed.
            source = sources[file.src_uri]
            code = [source] if source.name != "__init__.py" else list(source.parent.glob("*.py"))
            if max(p.stat().st_mtime for p in code) > path.stat().st_mtime:
                os.utime(path)
        backed = File.generated(config, file.src_uri, abs_src_path=str(path), inclusion=file.inclusion)
        backed.edit_uri = file.edit_uri
        files.remove(file)
        files.append(backed)


def _mark_changed_pages(files: Files) -> None:
    """Serving with --dirty: rebuild the pages whose figures or tables changed, though their Markdown did not.

    MkDocs rebuilds a page when its source is newer than its output; removing
    the output of a page whose items changed (a builder edited) makes it so.
    """
    assert _book is not None
    for file in files.documentation_pages():
        keys = _book.keys(file.src_uri)
        if _last_keys.get(file.src_uri, keys) != keys or any(not k or " " in k for k in keys):
            Path(file.abs_dest_path).unlink(missing_ok=True)
        _last_keys[file.src_uri] = keys


def on_nav(nav, config, files):
    """Number the chapters' titles in the nav (and so in the browser title and the footer): "4. Title"."""
    assert _book is not None
    for page in nav.pages:
        number = _book.numbering().chapter_number(page.file.src_uri)
        if number is not None and page.title:
            page.title = f"{number}. {page.title}"
    return nav


def on_page_markdown(markdown: str, page, config, files) -> str:
    assert _book is not None
    try:
        return _book.page_markdown(page.file.src_uri, markdown)
    except DirectiveError as exc:
        raise PluginError(str(exc)) from exc


class _TemplateCache(jinja2.BytecodeCache):
    """Compiled theme templates kept in memory, so a rebuild while serving does not compile them again."""

    store: dict[str, bytes] = {}

    def load_bytecode(self, bucket):
        if bucket.key in self.store:
            bucket.bytecode_from_string(self.store[bucket.key])

    def dump_bytecode(self, bucket):
        self.store[bucket.key] = bucket.bytecode_to_string()


def on_env(env, config, files):
    env.bytecode_cache = _TemplateCache()
    return env


@event_priority(100)  # before mkdocs-jupyter's own on_post_build, which evicts the caches it did not use
def on_post_build(config):
    """Serving with --dirty: a notebook page not rebuilt this time still needs its executed-notebook cache.

    mkdocs-jupyter drops every cache file its build did not read; a dirty
    rebuild reads none for the pages it skips, so the next full build would run
    those notebooks again. (Caches of earlier package versions are removed in
    ``on_config``; within one version the plugin's own eviction bounds the folder.)
    """
    jupyter = config["plugins"].get("mkdocs-jupyter")
    used = getattr(jupyter, "_used_cache_paths", None)
    if _serving and isinstance(used, set):
        used.update(Path(jupyter.config["cache_dir"]).glob("*.json"))
    # Math typeset at build time: its stylesheet into the site. While serving with
    # --dirty, pages not rebuilt still need it, even when this rebuild typeset nothing.
    mathjax.on_post_build(config, keep=_serving)
    site_dir = Path(config["site_dir"])
    # A site without math has no math stylesheet (mathjax.on_post_build writes none).
    sources = [s for s in _stylesheets if s != mathjax.STYLESHEET or (site_dir / s).is_file()]
    try:
        stylesheet.bundle(site_dir, sources)
    except ValueError as exc:
        raise PluginError(str(exc)) from None


def on_page_content(html: str, page, config, files) -> str:
    html = unwrap_nested_blocks(html)
    anchors: set[str] = set()
    html = numbering.equation_html(html, anchors)
    if page.present_anchor_ids is not None:  # so links to equations pass MkDocs' anchor validation
        page.present_anchor_ids |= anchors
    try:  # citations linked, search exclusions, meta description, copy texts (rnnmem.site.reader)
        html = _reader.page_content(
            html,
            src_uri=page.file.src_uri,
            url=page.url,
            meta=page.meta,
            source=page.file.content_string if not page.file.generated_by else "",
        )
    except CitationError as exc:
        if not _serving:
            raise PluginError(str(exc)) from exc
        log.error(str(exc))
    try:  # math typeset at build time (rnnmem.site.mathjax): no MathJax in the reader's browser
        return mathjax.on_page_content(html, page, config)
    except mathjax.MathError as exc:
        raise PluginError(str(exc)) from exc


def on_page_context(context, page, config, nav):
    if page.file.src_uri == REFERENCES:  # every page has been read: each entry links back to its citations
        pages = [(p.file.src_uri, p.title, p.url) for p in nav.pages]
        page.content = _reader.references_page(page.content, pages, page.url)
    return context


def _scripts_after_first_paint(output: str, config, where: str) -> str:
    if config["theme"].name != "material":  # the loader knows Material's script (the tests' small sites use mkdocs')
        return output
    try:
        output = speed.resolve_links_in_head(output, where=where)
        return speed.start_scripts_after_first_paint(output, where=where)
    except ValueError as exc:
        raise PluginError(str(exc)) from exc


def on_post_template(output: str, template_name: str, config) -> str:
    if template_name == "404.html":
        return _scripts_after_first_paint(output, config, "the 404 page")
    return output


def on_post_page(output: str, page, config) -> str:
    output = typography.bind_punctuation(output)  # no line starts with the period after a formula
    output = _scripts_after_first_paint(output, config, f"docs/{page.file.src_uri}")  # drawn first, scripts after
    if not page.file.src_uri.startswith("notebooks/"):
        return output
    import jupytext

    alts = [cell.metadata.get("alt") for cell in jupytext.read(page.file.abs_src_path).cells]
    try:
        output = clean_notebook_html(output, alts, where=f"docs/{page.file.src_uri}")
        return add_notebook_links(output, _book.notebook_page_links(page.file.src_uri))
    except NotebookAltError as exc:
        raise PluginError(str(exc)) from exc

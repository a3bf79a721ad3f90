"""The MkDocs plugin ``rnnmem``: a thin adapter between MkDocs and :class:`rnnmem.site.book.Book`.

Each event is a few lines that call the machinery: the book (:mod:`rnnmem.site.book`),
serving (:mod:`rnnmem.site.serve`), the notebook pages and mkdocs-jupyter's cache
(:mod:`rnnmem.site.notebook_pages`), the reader's steps, math, stylesheets and speed.

Registered as the entry point ``rnnmem`` of ``mkdocs.plugins`` and named in
``mkdocs.yml`` (last of ``plugins:``, so its events run after the other
plugins' as a hook's did)::

    plugins:
      - search
      - rnnmem:
          math_timeout: 120

Its options (:class:`RnnmemConfig`) are all optional. Its events:

* ``on_startup``: note whether this process serves (``mkdocs serve``);
* ``on_serve``: render the items the first build left for later
  (``render_after_start``) in a new interpreter, then rebuild (:mod:`rnnmem.site.serve`);
* ``on_config``: start a build; while serving, import new and edited builder
  modules again (:meth:`rnnmem.site.registry.Registry.refresh`) and render
  items whose other code changed in a fresh interpreter; key the
  executed-notebook cache of mkdocs-jupyter on the package
  (:mod:`rnnmem.site.notebook_pages`); list the API pages
  in the nav; put the site's stylesheets in one file;
* ``on_files``: read every page, render its figures and tables through the
  cache (with a progress bar on a terminal while items are missing from it), add the figures and the API pages (:mod:`rnnmem.site.apipages`) as
  generated files (nothing is written into ``docs/``);
* ``on_nav``: number the chapters' titles (nav, browser title) from the nav
  order (:mod:`rnnmem.site.numbering`);
* ``on_page_markdown``: replace each directive with its figure or table;
  number the chapter's title, figures, tables and equations, and link the
  references to them;
* ``on_page_content``: finish the figures and tables that stand in indented
  blocks, the numbered equations, link citations, mark what search leaves out,
  describe the page and set what copy buttons copy (:mod:`rnnmem.site.reader`),
  and typeset the page's math (:mod:`rnnmem.site.mathjax`);
* ``on_page_context``: on the references page, link each entry back to its citations;
* ``on_post_page``: keep punctuation on the line of the formula it follows
  (:mod:`rnnmem.site.typography`); start the theme's scripts after the first
  paint and resolve the stylesheets' addresses in the head
  (:mod:`rnnmem.site.speed`; ``on_post_template`` does both for the 404 page);
  tidy the pages rendered from notebooks (no outside loaders, reproducible cell ids);
* ``on_post_build``: the math stylesheet into the site, the site's own
  stylesheets as one file (:mod:`rnnmem.site.stylesheet`); while serving, keep
  the executed-notebook caches of pages a dirty rebuild skipped;
* ``on_shutdown``: stop the MathJax process, and a render left for later that still runs.

Every failure becomes a ``PluginError`` naming page, line and directive (and,
for a builder that raises, its file and line), so the build stops instead of
shipping a blank or stale figure. While serving, a failure is logged in the
terminal and shown on its page instead, so the browser never waits for a build
that will not come. All state lives on the plugin instance, which MkDocs keeps
from one rebuild of ``mkdocs serve`` to the next.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import jinja2
from mkdocs.config import config_options as c
from mkdocs.config.base import Config
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import File, Files
from mkdocs.utils.templates import TemplateContext

from . import apipages, check, config, mathjax, notebook_pages, registry, speed, stylesheet, typography
from .book import Book, unwrap_nested_blocks
from .citations import CitationError
from .directives import DirectiveError
from .numbering import equation_html
from .reader import REFERENCES, ReaderSteps
from .render import Deferred, show_progress
from .serve import GENERATED_DIR, Serve, back_generated_page

__all__ = ["RnnmemConfig", "RnnmemPlugin"]

log = logging.getLogger("mkdocs.plugins.rnnmem")


class _Seconds(c.Type[float]):
    """A positive number of seconds."""

    def __init__(self, default: float) -> None:
        super().__init__((int, float), default=default)

    def run_validation(self, value: object) -> float:
        seconds = super().run_validation(value)
        if isinstance(seconds, bool) or seconds <= 0:
            raise c.ValidationError(f"expected a positive number of seconds, got {seconds!r}")
        return float(seconds)


class RnnmemConfig(Config):
    """The plugin's options in ``mkdocs.yml``; each has a default that suits the book."""

    #: The folder of the caches (rendered items, executed notebooks, generated pages), relative to
    #: ``mkdocs.yml``. Default: ``$RNNMEM_CACHE_DIR``, else ``.cache``.
    cache_dir = c.Optional(c.Type(str))
    #: Render an item whose code changed since this process imported it in a new interpreter.
    #: Default: while serving (a build's process is new anyway).
    fresh_process = c.Optional(c.Type(bool))
    #: Show a failing directive on its page and go on, instead of failing the build. Default: while serving.
    keep_going = c.Optional(c.Type(bool))
    #: Key mkdocs-jupyter's executed-notebook cache on the package and the numeric libraries too.
    key_notebook_cache = c.Type(bool, default=True)
    #: Typeset the math when the site is built (:mod:`rnnmem.site.mathjax`).
    typeset_math = c.Type(bool, default=True)
    #: Where npm installed mathjax-full, relative to ``mkdocs.yml``.
    node_modules = c.Type(str, default="node_modules")
    #: How long MathJax may take over one page before the build fails naming it.
    math_timeout = _Seconds(default=120)
    #: Serve the site's own stylesheets of ``extra_css`` as one file (:mod:`rnnmem.site.stylesheet`).
    bundle_stylesheets = c.Type(bool, default=True)
    #: A progress bar on standard error while figures and tables are rendered (:mod:`rnnmem.site.render`):
    #: true or false. Default: when standard error is a terminal (never in a log or on CI).
    progress = c.Optional(c.Type(bool))
    #: Serving: start without waiting for the figures and tables missing from the cache (a cold cache, a builder
    #: edited while the server was stopped); their pages say they are being rendered, which happens in a new
    #: interpreter once the server runs, and reload when it is done. Default: while serving.
    render_after_start = c.Optional(c.Type(bool))


class _TemplateCache(jinja2.BytecodeCache):
    """Compiled theme templates kept in memory (``store``), so a rebuild while serving does not compile them again."""

    def __init__(self, store: dict[str, bytes]) -> None:
        self.store = store

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self.store:
            bucket.bytecode_from_string(self.store[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.store[bucket.key] = bucket.bytecode_to_string()


class RnnmemPlugin(BasePlugin[RnnmemConfig]):
    """Renders the book's figures, tables and numbers into the pages MkDocs builds (see the module's docstring)."""

    def __init__(self) -> None:
        #: ``mkdocs serve``: errors are shown on their pages, and the plugin lives from one rebuild to the next.
        self.serving = False
        #: This build's book (a new one for each build).
        self.book: Book | None = None
        #: The builders (the book's registry, brought up to date before each build).
        self.builders = registry.default
        #: Serving: what the server's builds do that a one-off build does not (rnnmem.site.serve).
        self.serve = Serve()
        #: Citations, search exclusions, descriptions, copy texts (rnnmem.site.reader).
        self.reader = ReaderSteps()
        #: The stylesheets of extra_css that the bundle holds, in order (rnnmem.site.stylesheet).
        self.stylesheets: list[str] = []
        #: Compiled theme templates, by key (kept while serving).
        self.templates: dict[str, bytes] = {}
        #: The MathJax process (started on the first formula, kept while serving).
        self.typesetter: mathjax.Typesetter | None = None
        #: Whether any formula was typeset since the process started (a dirty rebuild's pages still need the CSS).
        self.math_seen = False
        #: Serving: mkdocs-jupyter's cache files, put back after it evicts those a dirty rebuild did not read.
        self.notebook_caches = notebook_pages.KeptCaches()

    # -- options ---------------------------------------------------------------------------
    def _root(self, mkdocs_config) -> Path:
        path = mkdocs_config.get("config_file_path")
        return Path(path).resolve().parent if path else Path.cwd()

    def cache_root(self, mkdocs_config) -> tuple[Path, bool]:
        """The cache folder, and whether it was chosen (option or ``$RNNMEM_CACHE_DIR``) rather than the default."""
        if self.config.cache_dir:
            return self._root(mkdocs_config) / self.config.cache_dir, True
        if os.environ.get("RNNMEM_CACHE_DIR"):
            return Path(os.environ["RNNMEM_CACHE_DIR"]), True
        return Path(".cache"), False

    def _serving_default(self, value: bool | None) -> bool:
        return self.serving if value is None else value

    # -- events --------------------------------------------------------------------------------
    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.serving = command == "serve"

    def on_config(self, mkdocs_config):
        self._refresh_builders()  # serving: new and edited builder modules imported again
        root, chosen = self.cache_root(mkdocs_config)
        self.book = self._new_book(mkdocs_config, root)
        if self.config.key_notebook_cache:
            notebook_pages.key_cache(self._jupyter(mkdocs_config), root if chosen else None)
        apipages.set_nav(mkdocs_config)  # the API section lists the generated pages
        if self.config.bundle_stylesheets:  # one request instead of six
            self.stylesheets = stylesheet.take_stylesheets(mkdocs_config["extra_css"])
        if self.config.typeset_math:
            self._start_typesetter(self._root(mkdocs_config) / self.config.node_modules)
        return mkdocs_config

    def _refresh_builders(self) -> None:
        try:
            reloaded = self.builders.refresh()
        except registry.BuilderImportError as exc:
            if not self.serving:
                raise PluginError(str(exc)) from None
            log.error(str(exc))
            reloaded = []
        if self.serving and reloaded and self.book is not None:
            log.info("rnnmem: builder modules imported again: " + ", ".join(reloaded))

    def _new_book(self, mkdocs_config, root: Path) -> Book:
        """This build's book, with the options; the edition into ``extra`` (the footer, metadata, citation read it)."""
        # `mkdocs serve` rewrites site_url to its own address; the notebooks embed the book's.
        site_url = mkdocs_config["site_url"] or ""
        if mkdocs_config.get("config_file_path"):
            site_url = config.settings(mkdocs_config["config_file_path"])["site_url"] or site_url
        book = Book(
            Path(mkdocs_config["docs_dir"]),
            repo_url=mkdocs_config["repo_url"] or "",
            site_url=site_url,
            cache_dir=root / "rnnmem-site",
            fresh_process=self._serving_default(self.config.fresh_process),
            keep_going=self._serving_default(self.config.keep_going),
            chapters=config.chapter_order(mkdocs_config["nav"]),
            builders=self.builders,
        )
        book.renderer.progress = self.config.progress
        ed = book.edition
        mkdocs_config["extra"]["edition"] = {"version": ed.version, "date": ed.date, "label": ed.label}
        book.renderer.defer_missing = self.serving and self.serve.defers(
            self._serving_default(self.config.render_after_start)
        )
        return book

    def _start_typesetter(self, node_modules: Path) -> None:
        """The MathJax process: kept from one build to the next unless its options changed."""
        t = self.typesetter
        if t is None or t.node_modules != node_modules or t.timeout != self.config.math_timeout:
            if t is not None:
                t.close()
            self.typesetter = mathjax.Typesetter(node_modules, timeout=self.config.math_timeout)

    @staticmethod
    def _jupyter(mkdocs_config):
        """mkdocs-jupyter's options (None: the site does not use it)."""
        jupyter = mkdocs_config["plugins"].get("mkdocs-jupyter")
        return jupyter.config if jupyter is not None else None

    def on_pre_build(self, *, config) -> None:
        if self.typesetter is not None:
            self.typesetter.reset()  # the log counts this build's formulas

    def on_files(self, files: Files, *, config) -> Files:
        book = self._render_pages(files)
        if self.serving:  # --dirty: rebuild the pages whose items changed, though their Markdown did not
            self.serve.mark_changed_pages(book, ((f.src_uri, f.abs_dest_path) for f in files.documentation_pages()))
        for path, content in sorted(book.generated_files().items()):  # figures and notebooks
            files.append(File.generated(config, path, content=content))
        try:
            apipages.add_files(files, config)  # api/*.md, generated from the package's modules
        except ValueError as exc:
            raise PluginError(str(exc)) from None
        if self.serving:
            self._file_backed_pages(files, config)
        left = book.stale_notebooks()  # notebooks are built with the site: a file in docs/downloads/ is left over
        if left:
            log.warning("notebook files in docs/ that the build makes itself: " + "; ".join(left))
        references = files.get_file_from_path(REFERENCES)
        self.reader.start(
            references.content_string if references else None, references.url if references else "references/"
        )
        r = book.renderer
        log.info(f"rnnmem: {len(r.rendered)} figures/tables rendered, {len(r.cached)} from the cache")
        return files

    def _render_pages(self, files: Files) -> Book:
        """Every page read and its items rendered (errors logged while serving); the unused cache pruned."""
        book = self.book
        assert book is not None
        try:
            for file in files.documentation_pages():
                book.add_page(file.src_uri, file.content_string)
            book.render()
        except DirectiveError as exc:
            raise PluginError(str(exc)) from None
        for error in book.errors:  # serving only: shown on the page as well
            if not isinstance(error, Deferred):
                log.error(f"rnnmem: {error}")
        if book.renderer.deferred:
            log.info(
                f"rnnmem: {len(book.renderer.deferred)} figures/tables are not in the cache: "
                "rendered once the server runs; their pages say so until then and reload when they are ready"
            )
        if not book.errors:
            book.renderer.prune()
        return book

    def _file_backed_pages(self, files: Files, config) -> None:
        """Serving with --dirty: back each generated page (the API pages) by a file (rnnmem.site.serve)."""
        folder = self.cache_root(config)[0] / GENERATED_DIR
        sources = {page.path: page.source for page in apipages.api_pages()}
        for file in list(files.documentation_pages()):
            if file.generated_by is None or file.abs_src_path is not None:
                continue
            path = back_generated_page(folder, file.src_uri, file.content_string, sources.get(file.src_uri))
            backed = File.generated(config, file.src_uri, abs_src_path=str(path), inclusion=file.inclusion)
            backed.edit_uri = file.edit_uri
            files.remove(file)
            files.append(backed)

    def on_serve(self, server, *, config, builder):
        """The server runs: render the items the first build left for later, then rebuild (rnnmem.site.serve)."""
        assert self.book is not None
        progress = show_progress(self.config.progress)
        self.serve.start(self.book, self.cache_root(config)[0], server.watch, self.builders.packages, progress=progress)
        return server

    def on_nav(self, nav, *, config, files):
        """Number the chapters' titles in the nav (and so in the browser title and the footer): "4. Title"."""
        assert self.book is not None
        numbering = self.book.numbering()
        for page in nav.pages:
            number = numbering.chapter_number(page.file.src_uri)
            if number is not None and page.title:
                page.title = f"{number}. {page.title}"
        return nav

    def on_page_markdown(self, markdown: str, *, page, config, files) -> str:
        assert self.book is not None
        waiting = self.serve.waiting_page(self.book, page.file.src_uri, markdown)
        if waiting is not None:  # serving, just started: the page says so, and is built in full once its items are
            return waiting  # rendered
        # A sentence `make chapter` wrote for the author to replace (rnnmem.site.check, rule "placeholders").
        left = check.placeholder_problems(f"docs/{page.file.src_uri}", markdown)
        if left and not self.serving:
            raise PluginError("\n".join(str(p) for p in left))
        for problem in left:
            log.warning(str(problem))
        try:
            return self.book.page_markdown(page.file.src_uri, markdown)
        except DirectiveError as exc:
            raise PluginError(str(exc)) from None

    def on_env(self, env: jinja2.Environment, *, config, files) -> jinja2.Environment:
        env.bytecode_cache = _TemplateCache(self.templates)
        return env

    def on_page_content(self, html: str, *, page, config, files) -> str:
        html = unwrap_nested_blocks(html)
        anchors: set[str] = set()
        html = equation_html(html, anchors)
        if page.present_anchor_ids is not None:  # so links to equations pass MkDocs' anchor validation
            page.present_anchor_ids |= anchors
        try:  # citations linked, search exclusions, meta description, copy texts (rnnmem.site.reader)
            html = self.reader.page_content(
                html,
                src_uri=page.file.src_uri,
                url=page.url,
                meta=page.meta,
                source=page.file.content_string if not page.file.generated_by else "",
            )
        except CitationError as exc:
            if not self.serving:
                raise PluginError(str(exc)) from None
            log.error(str(exc))
        if self.typesetter is None:
            return html
        try:  # math typeset at build time (rnnmem.site.mathjax): no MathJax in the reader's browser
            html = mathjax.typeset_page(html, self.typesetter, where=f"docs/{page.file.src_uri}")
        except mathjax.MathError as exc:
            raise PluginError(str(exc)) from None
        self.math_seen = self.math_seen or self.typesetter.formulas > 0
        return html

    def on_page_context(self, context: TemplateContext, *, page, config, nav) -> TemplateContext:
        if page.file.src_uri == REFERENCES:  # every page has been read: each entry links back to its citations
            pages = [(p.file.src_uri, p.title, p.url) for p in nav.pages]
            page.content = self.reader.references_page(page.content, pages, page.url)
        return context

    def _scripts_after_first_paint(self, output: str, config, where: str) -> str:
        if config["theme"].name != "material":  # the loader knows Material's script (the tests' small sites: mkdocs')
            return output
        try:
            output = speed.resolve_links_in_head(output, where=where)
            return speed.start_scripts_after_first_paint(output, where=where)
        except ValueError as exc:
            raise PluginError(str(exc)) from None

    def on_post_template(self, output_content: str, *, template_name: str, config) -> str:
        if template_name == "404.html":
            return self._scripts_after_first_paint(output_content, config, "the 404 page")
        return output_content

    def on_post_page(self, output: str, *, page, config) -> str:
        output = typography.bind_punctuation(output)  # no line starts with the period after a formula
        output = speed.exercise_list_in_units(output)  # the longest list laid out an item at a time
        output = self._scripts_after_first_paint(output, config, f"docs/{page.file.src_uri}")  # drawn first
        src_uri = page.file.src_uri
        if not notebook_pages.is_notebook_page(src_uri):
            return output
        assert self.book is not None
        try:  # no outside loaders, reproducible cell ids, plots described, the download links
            return notebook_pages.finish_page(
                output, page.file.abs_src_path, src_uri, self.book.notebook_page_links(src_uri)
            )
        except notebook_pages.NotebookAltError as exc:
            raise PluginError(str(exc)) from None

    @event_priority(100)  # before mkdocs-jupyter's own on_post_build, which evicts the caches it did not read
    def _on_post_build_first(self, *, config) -> None:
        """The math stylesheet and the stylesheet bundle; serving: note mkdocs-jupyter's cache files."""
        # A dirty rebuild reads no cache for the notebook pages it skips: kept, and put back below.
        self.notebook_caches.note(self._jupyter(config) if self.serving else None)
        site_dir = Path(config["site_dir"])
        # Math typeset at build time: its stylesheet into the site. A site without math needs none;
        # while serving with --dirty, pages not rebuilt still need it, even when this rebuild typeset nothing.
        t = self.typesetter
        if t is not None and (t.formulas or (self.serving and self.math_seen)):
            try:
                mathjax.write_assets(site_dir, t)
            except mathjax.MathError as exc:
                raise PluginError(f"the math stylesheet: {exc}") from None
            if t.formulas:
                log.info(f"rnnmem: {t.formulas} formulas typeset by MathJax in {t.seconds:.1f} s")
        if self.config.bundle_stylesheets:
            # A site without math has no math stylesheet.
            sources = [s for s in self.stylesheets if s != mathjax.STYLESHEET or (site_dir / s).is_file()]
            try:
                stylesheet.bundle(site_dir, sources)
            except ValueError as exc:
                raise PluginError(str(exc)) from None

    @event_priority(-100)  # after mkdocs-jupyter's eviction
    def _on_post_build_last(self, *, config) -> None:
        """Serving: put back the executed-notebook caches mkdocs-jupyter evicted because this rebuild skipped them."""
        self.notebook_caches.put_back()

    on_post_build = CombinedEvent(_on_post_build_first, _on_post_build_last)

    def on_shutdown(self) -> None:
        self.serve.stop()
        if self.typesetter is not None:
            self.typesetter.close()

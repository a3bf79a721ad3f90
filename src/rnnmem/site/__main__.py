"""Command line: build the book's figures and tables, and its notebooks, without MkDocs.

    python -m rnnmem.site build [--config mkdocs.yml] [--out DIR] [--cache DIR] [--timings] [--[no-]progress]
    python -m rnnmem.site list
    python -m rnnmem.site notebooks [--config mkdocs.yml] [--out DIR]
    python -m rnnmem.site check CHAPTER [--config mkdocs.yml]
    python -m rnnmem.site numbers [PAGE ...] [--config mkdocs.yml] [--allow FILE] [--count]
    python -m rnnmem.site port-free HOST PORT
    python -m rnnmem.site pdf [--config mkdocs.yml] [--site site] [--out FILE] [--chromium PATH]

Exit status 0 on success, 1 when a directive fails (the message names page and
line, and for a builder that raises, the builder's file and line), 2 with usage
on bad arguments. ``numbers`` lists every number a page states that nothing on
the page produces (:mod:`rnnmem.site.numbers`), exit 1 if there is one.
``--timings`` lists each directive's render time and whether
it came from the cache, slowest first. While ``build`` renders items missing
from the cache, a progress bar on standard error names each item and estimates
the time left, when standard error is a terminal (``--progress`` forces it,
``--no-progress`` turns it off). ``pdf`` prints the built site's chapters and
back matter as one PDF (:mod:`rnnmem.site.pdf`), by default
``site/why-rnns-forget.pdf``, the file Home links to.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
from pathlib import Path

from . import kinds, registry
from .book import Book, load_mkdocs_settings
from .directives import Directive, DirectiveError, find_directives
from .render import Item, Renderer


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m rnnmem.site", description="Render the book's live figures, tables and notebooks without MkDocs."
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    b = sub.add_parser("build", help="render every figure and table of every page into a folder")
    b.add_argument("--config", type=Path, default=Path("mkdocs.yml"), help="the MkDocs config (default mkdocs.yml)")
    b.add_argument(
        "--out",
        type=Path,
        default=Path("build/rnnmem-site"),
        help="where to write the figures (SVG) and tables (Markdown); default build/rnnmem-site",
    )
    b.add_argument("--cache", type=Path, default=None, help="cache folder (default .cache/rnnmem-site)")
    b.add_argument(
        "--timings",
        action="store_true",
        help="list each directive's render time and cache status (hit/miss), slowest first",
    )
    b.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar on standard error while items render (default: when it is a terminal)",
    )

    sub.add_parser("list", help="list the registered figure and table builders")

    n = sub.add_parser(
        "notebooks",
        help="write the notebooks the site offers (each chapter's, each notebook page's) into a folder",
        description="The build adds these notebooks to the site itself (downloads/NAME.ipynb); this writes "
        "the same files without building the site, to open or run one. Nothing is written into docs/.",
    )
    n.add_argument("--config", type=Path, default=Path("mkdocs.yml"), help="the MkDocs config (default mkdocs.yml)")
    n.add_argument(
        "--out", type=Path, default=Path("build/notebooks"), help="where to write them (default build/notebooks)"
    )

    c = sub.add_parser("check", help="check one chapter against every page rule (rnnmem.site.check.RULES)")
    c.add_argument("chapter", metavar="CHAPTER", help="the chapter's file name in docs/chapters/, without .md")
    c.add_argument("--config", type=Path, default=Path("mkdocs.yml"))

    m = sub.add_parser("numbers", help="list the numbers pages state that nothing on the page produces")
    m.add_argument(
        "pages", nargs="*", type=Path, metavar="PAGE", help="Markdown pages (default: every page but references.md)"
    )
    m.add_argument("--config", type=Path, default=Path("mkdocs.yml"))
    m.add_argument(
        "--allow",
        type=Path,
        default=None,
        help="the reviewed allow-list (default src/rnnmem/site/policy/numbers.toml)",
    )
    m.add_argument(
        "--count", action="store_true", help="also print, per page, its placeholders and the numbers it states"
    )

    f = sub.add_parser("port-free", help="exit 2 with a one-line hint when HOST:PORT is taken (make serve)")
    f.add_argument("host")
    f.add_argument("port", type=int)

    d = sub.add_parser("pdf", help="print the built site's chapters and back matter as one PDF (after make build)")
    d.add_argument("--config", type=Path, default=Path("mkdocs.yml"), help="the MkDocs configuration (its nav)")
    d.add_argument("--site", type=Path, default=Path("site"), help="the built site (default: site)")
    d.add_argument("--out", type=Path, default=None, help="the PDF to write (default: SITE/why-rnns-forget.pdf)")
    d.add_argument("--chromium", default=None, help="the browser (default: $RNNMEM_CHROMIUM, else /usr/bin/chromium)")
    return p


def _pdf(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import os

    from . import config, pdf
    from .edition import edition

    if not args.config.is_file():
        parser.error(f"argument --config: {args.config} not found (run from the repository root)")
    if not (args.site / "index.html").is_file():
        parser.error(f"argument --site: {args.site} holds no built site (index.html); run `make build` first")
    chromium = args.chromium or os.environ.get("RNNMEM_CHROMIUM") or pdf.DEFAULT_CHROMIUM
    if not Path(chromium).is_file():
        parser.error(f"argument --chromium: {chromium} is not a file; install Chromium or name the browser")
    settings = config.read(args.config)
    ed = edition()
    out = args.out if args.out is not None else args.site / pdf.PDF_NAME
    result = pdf.write_pdf(
        args.site,
        out,
        pages=pdf.pdf_pages(settings.get("nav")),
        title=settings["site_name"],
        edition=ed.label,
        public_url=settings.get("site_url") or "",
        chromium=chromium,
        date=ed.date,
    )
    print(
        f"wrote {result.path}: {result.pages} pages, {result.size / 1e6:.1f} MB, {result.sections} sections of the site"
    )
    return 0


#: The internal command a long-running ``mkdocs serve`` renders with in a fresh interpreter
#: (:mod:`rnnmem.site.render`). Parsed apart, so the help lists only the commands a reader types.
RENDER_JSON = "render-json"


def _render_json_parser() -> argparse.ArgumentParser:
    r = argparse.ArgumentParser(
        prog=f"python -m rnnmem.site {RENDER_JSON}",
        description="Internal: render the directives given as JSON on stdin; print the errors as JSON.",
    )
    r.add_argument("--cache", type=Path, required=True)
    r.add_argument("--package", action="append", default=None, help="a package of builder modules (repeatable)")
    r.add_argument(
        "--each", action="store_true", help='before and after each directive, a line {"start"|"done": "page:line"}'
    )
    return r


def _render_json(args) -> int:
    """Render with the code now on disk; print the errors as JSON ([{page, line, error}]), exit 1 if any.

    ``--each``: a JSON line ``{"start": "page:line"}`` before each directive and ``{"done": ...}`` after
    it, for a progress bar in the process that asked (:func:`rnnmem.site.render.render_later`).
    """
    builders = registry.Registry(args.package) if args.package else registry.default
    renderer = Renderer(args.cache, builders=builders, progress=False)
    errors = []
    for spec in json.load(sys.stdin):
        where = f"{spec['page']}:{spec['line']}"
        if args.each:
            print(json.dumps({"start": where}), flush=True)
        try:
            for d in find_directives(spec["text"], spec["page"]):
                d = Directive(d.kind, d.name, d.args, spec["page"], spec["line"], d.start, d.end, d.text)
                renderer.render(d)
        except DirectiveError as exc:
            errors.append({"page": spec["page"], "line": spec["line"], "error": str(exc)})
        if args.each:
            print(json.dumps({"done": where}), flush=True)
    print(json.dumps(errors))
    return 1 if errors else 0


def _book(config: Path, cache: Path | None = None) -> Book:
    if not config.is_file():
        raise SystemExit(f"error: config file {config} not found (run from the repository root or pass --config)")
    settings = load_mkdocs_settings(config)
    book = Book(settings["docs_dir"], repo_url=settings["repo_url"], site_url=settings["site_url"], cache_dir=cache)
    book.add_docs_dir()
    return book


def _bindable(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does: TIME_WAIT is no obstacle
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _port_free(host: str, port: int) -> int:
    if _bindable(host, port):
        return 0
    spare = next((p for p in range(port + 1, port + 50) if _bindable(host, p)), port + 1)
    print(f"port {port} is in use: try make serve PORT={spare}", file=sys.stderr)
    return 2


#: Pages whose numbers are citations, not claims (the numbers policy, src/rnnmem/site/policy/numbers.toml).
from .numbers import NOT_CHECKED  # noqa: E402


def _numbers(args, parser: argparse.ArgumentParser) -> int:
    from .numbers import check_page, load_allowlist, value_count

    if not args.config.is_file():
        parser.error(f"config file {args.config} not found (run from the repository root or pass --config)")
    settings = load_mkdocs_settings(args.config)
    docs = Path(settings["docs_dir"])
    pages = args.pages or sorted(p for p in docs.rglob("*.md") if p.relative_to(docs).as_posix() not in NOT_CHECKED)
    for page in pages:
        if not page.is_file() or page.suffix != ".md":
            parser.error(f"argument PAGE: {page} is not a Markdown file")
    try:
        allow = load_allowlist(args.allow) if args.allow else load_allowlist()
    except ValueError as exc:
        parser.error(f"argument --allow: {exc}")
    renderer = (
        Renderer()
    )  # only the kinds that state numbers (tables) are rendered; a figure states them through placeholders
    found = 0
    for page in pages:
        rel = page.resolve().relative_to(docs.resolve()).as_posix()
        markdown = page.read_text(encoding="utf-8")
        try:
            tables = [
                renderer.render(d).content.decode()
                for d in find_directives(markdown, f"docs/{rel}")
                if kinds.get(d.kind).states_numbers
            ]
        except DirectiveError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        findings = check_page(markdown, f"docs/{rel}", tables=tables, allow=allow)
        for f in findings:
            print(f)
        found += len(findings)
        if args.count:
            live, stated = value_count(markdown)
            print(f"docs/{rel}: {live} placeholders, {stated} numbers stated, {len(findings)} not produced")
    if found:
        print(
            f"{found} number(s) stated but not produced on their page: compute each with a snippet or a "
            "placeholder, or allow it with a reason in the allow-list",
            file=sys.stderr,
        )
    return 1 if found else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == [RENDER_JSON]:
        try:
            return _render_json(_render_json_parser().parse_args(argv[1:]))
        except registry.BuilderImportError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "check":
        from .check import run_check

        return run_check(args, parser)
    try:
        if args.command == "list":
            for b in registry.all_builders():
                params = ", ".join(n for n in b.parameters)
                print(f"{b.kind:6} {b.name:28} ({params})  [{b.module}]")
            return 0
        if args.command == "numbers":
            return _numbers(args, parser)
        if args.command == "port-free":
            return _port_free(args.host, args.port)
        if args.command == "pdf":
            return _pdf(args, parser)
        if args.command == "notebooks":
            if not args.config.is_file():
                parser.error(f"argument --config: {args.config} not found (run from the repository root)")
            resolved = args.out.resolve()
            docs = Path(load_mkdocs_settings(args.config)["docs_dir"]).resolve()
            if resolved == docs or docs in resolved.parents:
                parser.error(f"argument --out: {args.out} is inside {docs}; notebooks are built, never kept in docs/")
            book = _book(args.config)
            book.render()
            for name, text in book.notebooks.items():
                path = args.out / Path(name).name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                print(f"wrote {path}")
            return 0
        # build
        book = _book(args.config, args.cache)
        book.renderer.progress = args.progress
        book.render()
        for src_uri, page in book.pages.items():  # captions and prose: every placeholder must resolve
            book.page_markdown(src_uri, page.markdown)
        out: Path = args.out
        out.mkdir(parents=True, exist_ok=True)
        count = 0
        for page in book.pages.values():
            for item in page.items:
                assert isinstance(item, Item), "without keep_going, render raises the first error it meets"
                (out / item.filename).write_bytes(item.content)
                if item.wide is not None:  # a figure's desktop rendition, beside it
                    (out / item.wide_filename).write_bytes(item.wide)
                count += 1
        r = book.renderer
        r.prune()
        if args.timings:
            print(r.timing_report())
        print(
            f"{count} items from {len(book.pages)} pages into {out}: "
            f"{len(r.rendered)} rendered, {len(r.cached)} from the cache"
        )
        return 0
    except DirectiveError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except registry.BuilderImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

"""The step summary of a CI run: how to view the site it built, and which of its pages the change touches.

    python .github/scripts/site_preview.py --artifact NAME --artifact-url URL --run-id ID --repo OWNER/REPO
                                           [--base REV] [--config mkdocs.yml]

Prints Markdown (the workflow appends it to ``$GITHUB_STEP_SUMMARY``): the
link to the uploaded site, a one-line command that downloads and serves it,
and the pages that may read differently, from the files changed since
``--base`` (default ``HEAD^1``: on a pull request's merge commit, the base
branch). A changed page is listed as itself; a changed builder module as every
page whose figures or tables it draws; any other change to the package or the
site's configuration as every page that shows computed output. Exit status 2
with usage on bad arguments, 1 when git cannot list the changes.
"""

from __future__ import annotations

import argparse
import posixpath
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PORT = 8000


@dataclass
class Changes:
    """Site pages (their URL path) -> why they are listed; and what changed that no page names."""

    pages: dict[str, list[str]] = field(default_factory=dict)
    everything: list[str] = field(default_factory=list)

    def add(self, url: str, why: str) -> None:
        self.pages.setdefault(url, [])
        if why not in self.pages[url]:
            self.pages[url].append(why)


def page_url(src_uri: str) -> str:
    """A page's address in the built site, from its path under docs/ (MkDocs' directory URLs).

    >>> page_url("chapters/horizon.md"), page_url("index.md"), page_url("notebooks/horizon_explorer.py")
    ('chapters/horizon/', '', 'notebooks/horizon_explorer/')
    """
    stem = posixpath.splitext(src_uri)[0]
    if stem == "index":
        return ""
    return (stem[: -len("/index")] if stem.endswith("/index") else stem) + "/"


def changed_pages(changed: list[str], pages: dict[str, str], builder_modules: dict[str, str]) -> Changes:
    """What a change touches.

    ``changed``: the changed files (repository paths); ``pages``: every page
    under docs/ (its path there -> its Markdown); ``builder_modules``: builder
    name -> the module file that defines it (``src/rnnmem/site/builders/x.py``).

    >>> pages = {"chapters/a.md": "# A\\n<!-- figure: curve -->\\n", "index.md": "# Home\\n"}
    >>> c = changed_pages(["src/rnnmem/site/builders/a.py"], pages, {"curve": "src/rnnmem/site/builders/a.py"})
    >>> c.pages
    {'chapters/a/': ['its figures or tables: src/rnnmem/site/builders/a.py']}
    """
    from rnnmem.site.directives import DirectiveError, find_directives

    users: dict[str, set[str]] = {}  # module file -> pages drawing with it
    computed: set[str] = set()
    for src_uri, markdown in pages.items():
        try:
            directives = find_directives(markdown, f"docs/{src_uri}")
        except DirectiveError:
            directives = []
        for d in directives:
            computed.add(src_uri)
            module = builder_modules.get(d.name)
            if module:
                users.setdefault(module, set()).add(src_uri)
    out = Changes()
    for path in sorted(changed):
        if path.startswith("docs/") and path.endswith((".md", ".py")) and path != "docs/conftest.py":
            src_uri = path[len("docs/") :]
            out.add(page_url(src_uri), f"its source: {path}")
        elif path in users:
            for src_uri in sorted(users[path]):
                out.add(page_url(src_uri), f"its figures or tables: {path}")
        elif path.startswith("src/rnnmem/") and path.endswith(".py"):
            out.everything.append(path)
        elif path == "mkdocs.yml" or path.startswith(("docs/", "src/rnnmem/site/theme/")):
            out.everything.append(path)
    if out.everything:
        for src_uri in sorted(computed):
            out.add(page_url(src_uri), "it shows computed output, and the package or the site changed")
    return out


def summary(changes: Changes, *, artifact: str, artifact_url: str, run_id: str, repo: str, base: str) -> str:
    serve = (
        f"gh run download {run_id} -R {repo} -n {artifact} -D {artifact} && python3 -m http.server -d {artifact} {PORT}"
    )
    lines = [
        "## The site this run built",
        "",
        f"- Download it: [{artifact}]({artifact_url}) (a zip of `site/`; GitHub keeps it 14 days).",
        f"- Or serve it here, then open http://127.0.0.1:{PORT}/ (needs the GitHub CLI):",
        "",
        "  ```sh",
        f"  {serve}",
        "  ```",
        "",
        f"### Pages this change touches (files changed since `{base}`)",
        "",
        "A chapter's notebook, `downloads/<name>.ipynb`, changes with its chapter.",
        "",
    ]
    if not changes.pages:
        lines.append("None: no page, builder, package module or site setting changed.")
    for url, why in sorted(changes.pages.items()):
        lines.append(f"- [`{url or '(home)'}`](http://127.0.0.1:{PORT}/{url}): {'; '.join(why)}")
    if changes.everything:
        lines += ["", "Changed beyond one page: " + ", ".join(f"`{p}`" for p in changes.everything) + "."]
    return "\n".join(lines) + "\n"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="site_preview.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--artifact", required=True, help="the uploaded site's artifact name")
    p.add_argument("--artifact-url", required=True, help="its address (actions/upload-artifact's artifact-url)")
    p.add_argument("--run-id", required=True, help="the workflow run's id")
    p.add_argument("--repo", required=True, help="OWNER/REPO")
    p.add_argument("--base", default="HEAD^1", help="the revision to compare with (default HEAD^1)")
    p.add_argument("--config", type=Path, default=ROOT / "mkdocs.yml", help="the MkDocs config")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", args.repo):
        parser.error(f"argument --repo: must be OWNER/REPO, got {args.repo!r}")
    if not re.fullmatch(r"\d+", args.run_id):
        parser.error(f"argument --run-id: must be a run's number, got {args.run_id!r}")
    if not args.artifact_url.startswith("https://"):
        parser.error(f"argument --artifact-url: must be an https:// address, got {args.artifact_url!r}")
    if not args.config.is_file():
        parser.error(f"argument --config: {args.config} not found")
    diff = subprocess.run(
        ["git", "diff", "--name-only", args.base, "HEAD"], cwd=args.config.parent, capture_output=True, text=True
    )
    if diff.returncode != 0:
        print(f"site_preview.py: git cannot compare with {args.base!r}: {diff.stderr.strip()}", file=sys.stderr)
        return 1
    from rnnmem.site import registry
    from rnnmem.site.book import load_mkdocs_settings

    docs = Path(load_mkdocs_settings(args.config)["docs_dir"])
    pages = {
        p.relative_to(docs).as_posix(): p.read_text(encoding="utf-8") for p in sorted(docs.rglob("*.md")) if p.is_file()
    }
    root = args.config.parent.resolve()
    modules = {}
    for b in registry.all_builders():
        file = Path(sys.modules[b.module].__file__).resolve()
        modules[b.name] = file.relative_to(root).as_posix() if file.is_relative_to(root) else str(file)
    changes = changed_pages(diff.stdout.split(), pages, modules)
    sys.stdout.write(
        summary(
            changes,
            artifact=args.artifact,
            artifact_url=args.artifact_url,
            run_id=args.run_id,
            repo=args.repo,
            base=args.base,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

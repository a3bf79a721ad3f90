"""The `rnnmem` MkDocs plugin: registered and named, typed options, state on the instance, one build's counts."""

from __future__ import annotations

import logging
import subprocess
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest
from mkdocs.config import load_config
from mkdocs.exceptions import Abort, PluginError
from mkdocs.plugins import get_plugins

from rnnmem.site import config, mathjax
from rnnmem.site import plugin as plugin_module
from rnnmem.site.plugin import RnnmemPlugin

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / "node_modules"


def test_the_plugin_is_an_entry_point_named_in_mkdocs_yml_and_there_is_no_hook():
    entry = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["mkdocs.plugins"]
    assert entry == {"rnnmem": "rnnmem.site.plugin:RnnmemPlugin"}
    assert get_plugins()["rnnmem"].load() is RnnmemPlugin, "installed: run `make setup` after changing pyproject.toml"
    settings = config.read(ROOT / "mkdocs.yml")
    assert "hooks" not in settings
    assert settings["plugins"][-1] == "rnnmem", "last, so its events run after the other plugins'"


def project(tmp_path: Path, options: str = "") -> Path:
    (tmp_path / "docs").mkdir(parents=True)
    (tmp_path / "docs" / "index.md").write_text("# Home\n")
    (tmp_path / "mkdocs.yml").write_text(f"site_name: t\nplugins:\n  - rnnmem{':' + options if options else ''}\n")
    return tmp_path / "mkdocs.yml"


def test_the_options_have_defaults_and_are_checked(tmp_path):
    loaded = load_config(str(project(tmp_path)))
    options = loaded.plugins["rnnmem"].config
    assert options.cache_dir is None and options.fresh_process is None and options.keep_going is None
    assert options.typeset_math and options.bundle_stylesheets and options.key_notebook_cache
    assert options.node_modules == "node_modules" and options.math_timeout == 120
    assert options.progress is None, "by default a bar only when standard error is a terminal"
    assert options.render_after_start is None, "by default while serving"
    chosen = load_config(str(project(tmp_path / "b", "\n      math_timeout: 2.5\n      keep_going: true")))
    assert chosen.plugins["rnnmem"].config.math_timeout == 2.5 and chosen.plugins["rnnmem"].config.keep_going
    forced = load_config(str(project(tmp_path / "c", "\n      progress: true")))
    assert forced.plugins["rnnmem"].config.progress is True
    for bad in ("math_timeout: -1", "keep_going: 3", "cache_dir: [a]", "progress: sometimes", "render_after_start: 2"):
        with pytest.raises(Abort):
            load_config(str(project(tmp_path / bad.split(":")[0], f"\n      {bad}")))


def test_the_progress_option_reaches_the_renderer(tmp_path):
    for value in ("true", "false"):
        loaded = load_config(str(project(tmp_path / value, f"\n      progress: {value}\n      typeset_math: false")))
        plugin = loaded.plugins["rnnmem"]
        assert isinstance(plugin, RnnmemPlugin)
        plugin.on_config(loaded)
        assert plugin.book is not None and plugin.book.renderer.progress is (value == "true")


def test_only_a_servers_first_build_leaves_missing_items_for_later(tmp_path):
    def defers(plugin: RnnmemPlugin, loaded) -> bool:
        plugin.on_config(loaded)
        assert plugin.book is not None
        return plugin.book.renderer.defer_missing

    loaded = load_config(str(project(tmp_path, "\n      typeset_math: false")))
    plugin = loaded.plugins["rnnmem"]
    assert isinstance(plugin, RnnmemPlugin)
    assert not defers(plugin, loaded), "mkdocs build renders everything"
    plugin.serving = True
    assert defers(plugin, loaded)
    plugin.serve.started = True  # on_serve: the server runs
    assert not defers(plugin, loaded), "a rebuild renders what it needs, as before"
    off = load_config(str(project(tmp_path / "off", "\n      typeset_math: false\n      render_after_start: false")))
    other = off.plugins["rnnmem"]
    assert isinstance(other, RnnmemPlugin)
    other.serving = True
    assert not defers(other, off)


def test_the_options_errors_name_the_option(tmp_path, caplog):
    with caplog.at_level(logging.ERROR), pytest.raises(Abort):
        load_config(str(project(tmp_path, "\n      math_timeout: 0")))
    assert "math_timeout" in caplog.text and "expected a positive number of seconds, got 0" in caplog.text


def test_all_state_lives_on_the_instance():
    one, two = RnnmemPlugin(), RnnmemPlugin()
    assert one.reader is not two.reader and one.templates is not two.templates and one.serve is not two.serve
    mutable = [
        name
        for name, value in vars(plugin_module).items()
        if isinstance(value, (dict, list, set)) and not name.startswith("__")
    ]
    assert mutable == [], f"module globals that could hold state: {mutable}"


def fake_page(src_uri: str = "chapters/x.md") -> SimpleNamespace:
    return SimpleNamespace(
        file=SimpleNamespace(src_uri=src_uri, content_string="", generated_by=None),
        url=src_uri.removesuffix(".md") + "/",
        meta={},
        present_anchor_ids=None,
    )


def post_build(p: RnnmemPlugin, site: dict) -> None:
    """Both halves of the plugin's on_post_build, in the order MkDocs runs them (by their priority)."""
    for method in p.on_post_build.methods:
        method(config=site)


def math(n: int) -> str:
    return "".join(f'<p><span class="arithmatex">\\(x_{i}\\)</span></p>' for i in range(n))


def started(serving: bool, typesetter: mathjax.Typesetter | None) -> RnnmemPlugin:
    p = RnnmemPlugin()
    p.load_config({})
    p.serving = serving
    p.typesetter = typesetter
    return p


@pytest.fixture(scope="module")
def typesetter():
    if not (NODE_MODULES / "mathjax-full").is_dir():
        pytest.fail("mathjax-full is not installed: run `make setup` (npm ci)")
    t = mathjax.Typesetter(NODE_MODULES)
    yield t
    t.close()


@pytest.mark.process
def test_the_mathjax_line_counts_this_build_only(tmp_path, caplog, typesetter):
    """Serving: the second build typesets one formula and says so (it used to add the first build's)."""
    p = started(True, typesetter)
    site = {"plugins": {}, "site_dir": str(tmp_path)}
    lines = []
    for formulas in (3, 1):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="mkdocs.plugins.rnnmem"):
            p.on_pre_build(config=site)
            p.on_page_content(math(formulas), page=fake_page(), config=site, files=None)
            post_build(p, site)
        lines += [r.getMessage() for r in caplog.records if "typeset by MathJax" in r.getMessage()]
    assert [line.split(" formulas")[0] for line in lines] == ["rnnmem: 3", "rnnmem: 1"], lines
    # A dirty rebuild that typesets nothing still writes the stylesheet the earlier pages use, and says nothing.
    (tmp_path / mathjax.STYLESHEET).unlink()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="mkdocs.plugins.rnnmem"):
        p.on_pre_build(config=site)
        post_build(p, site)
    assert (tmp_path / mathjax.STYLESHEET).is_file() and "typeset by MathJax" not in caplog.text
    # A build (not serving) without math writes no math stylesheet.
    (tmp_path / mathjax.STYLESHEET).unlink()
    quiet = started(False, typesetter)
    quiet.on_pre_build(config=site)
    quiet.on_page_content("<p>no math</p>", page=fake_page(), config=site, files=None)
    post_build(quiet, site)
    assert not (tmp_path / mathjax.STYLESHEET).exists()


def hung_typesetter(tmp_path: Path, timeout: float) -> mathjax.Typesetter:
    """A typesetter whose Node process reads its requests and never answers."""
    modules = tmp_path / "node_modules"
    (modules / "mathjax-full" / "js").mkdir(parents=True)
    (modules / "mathjax-full" / "js" / "mathjax.js").write_text("")
    server = tmp_path / "hang.js"
    server.write_text("process.stdin.resume();\n")
    return mathjax.Typesetter(modules, timeout=timeout, server=server)


@pytest.mark.process
def test_a_hung_mathjax_fails_the_build_naming_the_page(tmp_path):
    p = started(False, hung_typesetter(tmp_path, 0.5))
    with pytest.raises(PluginError, match=r"^docs/chapters/slow\.md: the MathJax process \(hang\.js\) did not answer "):
        p.on_page_content(math(1), page=fake_page("chapters/slow.md"), config={}, files=None)


def test_serving_keeps_the_notebook_caches_a_dirty_rebuild_did_not_read(tmp_path):
    """mkdocs-jupyter evicts the cache files its build did not read; while serving they are put back."""
    cache = tmp_path / "nb"
    cache.mkdir()
    jupyter = SimpleNamespace(config={"cache": True, "cache_dir": str(cache)})
    site = {"plugins": {"mkdocs-jupyter": jupyter}, "site_dir": str(tmp_path)}
    for serving in (True, False):
        (cache / "skipped.json").write_text('{"content": "executed"}')
        p = started(serving, None)
        p._on_post_build_first(config=site)
        (cache / "skipped.json").unlink()  # what mkdocs-jupyter's on_post_build does in between
        p._on_post_build_last(config=site)
        assert (cache / "skipped.json").is_file() == serving
        assert not serving or (cache / "skipped.json").read_text() == '{"content": "executed"}'


def test_the_books_config_loads_with_the_plugin_around_mkdocs_jupyters_eviction():
    loaded = load_config(str(ROOT / "mkdocs.yml"))
    owners = [type(getattr(m, "__self__", None)).__name__ for m in loaded.plugins.events["post_build"]]
    names = [getattr(m, "__name__", "") for m in loaded.plugins.events["post_build"]]
    first, last = names.index("_on_post_build_first"), names.index("_on_post_build_last")
    jupyter = owners.index("Plugin")  # mkdocs_jupyter.plugin.Plugin
    assert first < jupyter < last, list(zip(owners, names))


@pytest.mark.process
def test_the_plugin_is_importable_without_side_effects():
    code = "import sys; import rnnmem.site.plugin; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", "the plugin imports matplotlib only when a figure is rendered"


def test_mkdocs_is_imported_only_by_the_plugin_and_the_api_pages():
    """ARCHITECTURE.md's rule: the rest of the machinery (serving and the notebook pages included) works without it."""
    import ast

    site = ROOT / "src" / "rnnmem" / "site"
    importers = set()
    for path in sorted(site.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            if any(n == "mkdocs" or n.startswith("mkdocs.") for n in names):
                importers.add(path.relative_to(site).as_posix())
    assert importers == {"plugin.py", "apipages.py"}

"""The API reference is generated from the package; the home page's chapter list agrees with the nav."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import pytest

import rnnmem
from rnnmem.site import apipages
from rnnmem.site.check import home_chapters, nav_chapters

ROOT = Path(__file__).resolve().parents[2]


def test_every_public_module_has_a_page_and_a_row_and_a_nav_entry():
    public = sorted(m.name for m in pkgutil.iter_modules(rnnmem.__path__) if not m.name.startswith("_"))
    pages = apipages.api_pages()
    assert [p.module for p in pages[1:]] == [f"rnnmem.{name}" for name in public]
    index = pages[0].markdown
    for name in public:
        assert f"| [`rnnmem.{name}`]({name}.md) | " in index
    assert apipages.nav_entries(pages) == ["api/index.md"] + [{f"rnnmem.{n}": f"api/{n}.md"} for n in public]


def test_the_site_page_documents_every_public_submodule_but_the_builders():
    site = next(p for p in apipages.api_pages() if p.module == "rnnmem.site")
    submodules = [m.name for m in pkgutil.iter_modules(rnnmem.site.__path__) if not m.name.startswith("_")]
    for name in submodules:
        documented = f"::: rnnmem.site.{name}\n" in site.markdown
        assert documented == (name not in apipages.SITE_LEFT_OUT), name
    assert "Not documented here: `rnnmem.site.builders`" in site.markdown


def test_no_hand_kept_api_stubs_remain():
    assert not list((ROOT / "docs" / "api").glob("*.md")), "the API pages are generated: delete docs/api/*.md"
    config = (ROOT / "mkdocs.yml").read_text()
    assert "  - API reference: api/index.md\n" in config and "api/memory.md" not in config


def fake_package(tmp_path: Path, *modules: str) -> Path:
    package = tmp_path / "rnnmem"
    (package / "site" / "builders").mkdir(parents=True)
    (package / "__init__.py").write_text('"""The package."""\n')
    (package / "site" / "__init__.py").write_text('"""The site."""\n')
    (package / "site" / "builders" / "__init__.py").write_text('"""Builders."""\n')
    (package / "site" / "book.py").write_text('"""Pages."""\n')
    for name in modules:
        (package / f"{name}.py").write_text(f'"""What ``{name}`` holds.\n\nMore text.\n"""\n')
    return package


def test_a_new_or_renamed_module_appears_without_editing_a_list(tmp_path):
    package = fake_package(tmp_path, "memory", "worked", "_private")
    before = [p.module for p in apipages.api_pages(package)]
    assert before == ["rnnmem", "rnnmem.memory", "rnnmem.site", "rnnmem.worked"]
    (package / "worked.py").rename(package / "examples.py")
    (package / "probe.py").write_text('"""Probes on frozen vectors."""\n')
    (package / "checks").mkdir()
    (package / "checks" / "__init__.py").write_text('"""Argument checks."""\n')
    pages = apipages.api_pages(package)
    assert [p.module for p in pages] == [
        "rnnmem",
        "rnnmem.checks",
        "rnnmem.examples",
        "rnnmem.memory",
        "rnnmem.probe",
        "rnnmem.site",
    ]
    assert "| [`rnnmem.probe`](probe.md) | Probes on frozen vectors. |" in pages[0].markdown
    assert "| [`rnnmem.examples`](examples.md) | What `worked` holds. |" in pages[0].markdown


class Config(dict):
    pass


def test_set_nav_fills_the_api_section_and_leaves_the_rest():
    nav = [{"Home": "index.md"}, {"API reference": "api/index.md"}, {"References": "references.md"}]
    config = Config(nav=nav)
    apipages.set_nav(config)
    assert config["nav"][0] == {"Home": "index.md"} and config["nav"][2] == {"References": "references.md"}
    assert config["nav"][1] == {"API reference": apipages.nav_entries()}
    untouched = Config(nav=[{"Home": "index.md"}])
    apipages.set_nav(untouched)
    assert untouched["nav"] == [{"Home": "index.md"}]


def test_a_hand_written_page_at_a_generated_path_is_refused(tmp_path):
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import File, Files

    (tmp_path / "docs" / "api").mkdir(parents=True)
    (tmp_path / "docs" / "api" / "memory.md").write_text("# stub\n")
    config = MkDocsConfig(config_file_path=str(tmp_path / "mkdocs.yml"))
    config.load_dict({"site_name": "t", "docs_dir": str(tmp_path / "docs"), "site_dir": str(tmp_path / "site")})
    config.validate()
    config.plugins._current_plugin = None  # set by MkDocs while a hook runs; File.generated reads it
    files = Files([File("api/memory.md", config.docs_dir, config.site_dir, config.use_directory_urls)])
    with pytest.raises(ValueError, match="docs/api/memory.md exists, but the API pages are generated"):
        apipages.add_files(files, config)
    files = Files([])
    apipages.add_files(files, config)
    assert files.get_file_from_path("api/index.md") is not None and files.get_file_from_path("api/memory.md")


def test_the_home_pages_chapter_list_agrees_with_the_nav():
    home = home_chapters((ROOT / "docs" / "index.md").read_text())
    nav = nav_chapters(ROOT / "mkdocs.yml")
    assert nav and home == nav, "docs/index.md's chapter list and the nav's Chapters section differ"

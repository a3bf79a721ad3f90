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
    entries = apipages.nav_entries(pages)
    assert entries[0] == "api/index.md"
    listed = [(group, m) for section in entries[1:] for group, items in section.items() for item in items for m in item]
    assert sorted(m for _, m in listed) == [f"rnnmem.{n}" for n in public]
    assert all(
        f"api/{m.split('.', 1)[1]}.md" == item[m]
        for section in entries[1:]
        for items in section.values()
        for item in items
        for m in item
    )


def test_the_api_is_grouped_and_every_module_of_the_package_has_its_group():
    """Models, the mathematics of memory, training and the lab, tools: a new module must be placed in one
    (apipages.GROUPS); until it is, it is listed under "Other modules" and this test says which."""
    public = sorted(m.name for m in pkgutil.iter_modules(rnnmem.__path__) if not m.name.startswith("_"))
    problems = apipages.group_problems()
    assert not problems, "\n".join(problems)
    assert all(apipages.group_of(n) != apipages.OTHER_GROUP for n in public)
    named = [n for names in apipages.GROUPS.values() for n in names]
    assert len(named) == len(set(named)), "a module is named by two groups"
    assert sorted(set(named) - set(public)) == [], "GROUPS names a module that does not exist"
    entries = apipages.nav_entries()
    assert [next(iter(section)) for section in entries[1:]] == list(apipages.GROUPS)
    index = apipages.api_pages()[0].markdown
    assert [line[3:] for line in index.splitlines() if line.startswith("## ")] == list(apipages.GROUPS)


def test_a_module_no_group_names_is_still_listed_and_named_with_the_groups_it_could_join(tmp_path):
    package = fake_package(tmp_path, "memory", "brand_new")
    pages = apipages.api_pages(package)
    entries = apipages.nav_entries(pages)
    assert {"Other modules": [{"rnnmem.brand_new": "api/brand_new.md"}]} in entries
    assert "## Other modules" in pages[0].markdown
    assert apipages.group_problems(pages) == [
        "the module rnnmem.brand_new is in no group of the API reference: add 'brand_new' to one of the groups "
        "'Models', 'Mathematics of memory', 'Training and the lab', 'Tools' in rnnmem.site.apipages.GROUPS "
        "(src/rnnmem/site/apipages.py), or it is listed under 'Other modules'"
    ]


def test_the_build_warns_naming_a_module_in_no_group(tmp_path, monkeypatch, caplog):
    """add_files (the plugin's on_files) logs a warning per unplaced module: the strict build fails on it."""
    package = fake_package(tmp_path, "memory", "brand_new")
    real = apipages.api_pages
    monkeypatch.setattr(apipages, "api_pages", lambda *a, **k: real(package))
    docs = tmp_path / "docs"
    docs.mkdir()
    config = {"config_file_path": str(tmp_path / "mkdocs.yml"), "docs_dir": str(docs), "nav": None}

    class Files(list):
        def get_file_from_path(self, path):
            return None

    monkeypatch.setattr("mkdocs.structure.files.File.generated", lambda config, path, content: type("F", (), {})())
    with caplog.at_level("WARNING", logger="mkdocs.plugins.rnnmem"):
        apipages.add_files(Files(), config)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == apipages.group_problems(real(package)) and "rnnmem.brand_new" in warnings[0]


def test_module_pages_link_the_chapters_whose_code_uses_them():
    from rnnmem.site.config import read

    chapters = apipages.book_chapters(ROOT / "docs", read(ROOT / "mkdocs.yml")["nav"])
    assert [c.number for c in chapters] == list(range(1, len(chapters) + 1))
    pages = {p.module: p for p in apipages.api_pages(chapters=chapters)}
    horizon = next(c for c in chapters if c.path == "chapters/horizon.md")
    memory = pages["rnnmem.memory"].markdown
    assert f"[{horizon.number}. {horizon.title}](../chapters/horizon.md)" in memory
    # LSTM is imported from the package's top level in the chapters: its module page still links them.
    uses = apipages.chapter_uses(chapters)
    assert any(c.path == "chapters/gates.md" for c in uses["lstm"])
    # Every link names a chapter whose code mentions the module or a name the package exports from it.
    for name, users in uses.items():
        for c in users:
            assert (
                f"rnnmem.{name}" in c.markdown
                or name in c.markdown
                or any(n in c.markdown for n, m in apipages._exported(apipages.PACKAGE_DIR).items() if m == name)
            ), (name, c.path)
    text = "# t\n\n```python\n>>> import rnnmem.scan\n>>> from rnnmem.init import chrono_biases\n```\n"
    found = apipages.chapter_uses([apipages.Chapter("chapters/t.md", 1, "T", text)])
    assert sorted(found) == ["init", "scan"]
    prose_only = "# t\n\nThe module rnnmem.memory is not code here.\n"
    assert apipages.chapter_uses([apipages.Chapter("chapters/t.md", 1, "T", prose_only)]) == {}


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

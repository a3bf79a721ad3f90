"""The builder registry: one builder per name, new and edited builder modules picked up while serving."""

from __future__ import annotations

import importlib
import os
import sys
import textwrap

import pytest
from test_site_render import rendered  # same directory: pytest puts it on sys.path

from rnnmem.site import registry
from rnnmem.site.directives import find_directives
from rnnmem.site.render import Renderer

BUILDER = """
from rnnmem.site.registry import table
from rnnmem.site.tables import Table


@table("{name}")
def {func}(n=1):
    return Table(["n"], [[{value}]])
"""


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package of builder modules of its own, forgotten afterwards."""
    root = tmp_path / "src"
    (root / "tb").mkdir(parents=True)
    (root / "tb" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    yield root / "tb"
    for name in [m for m in sys.modules if m == "tb" or m.startswith("tb.")]:
        del sys.modules[name]


def write(path, name, func, value, mtime=None):
    path.write_text(textwrap.dedent(BUILDER.format(name=name, func=func, value=value)))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9 * (mtime or 0)))  # a new mtime: no stale .pyc
    importlib.invalidate_caches()


def test_a_second_builder_of_the_same_name_fails_naming_both_modules(package):
    write(package / "one.py", "tb_curve", "tb_curve", 1)
    write(package / "two.py", "tb_curve", "tb_curve", 2)  # equal __qualname__, another module
    builders = registry.Registry(["tb"])
    with pytest.raises(registry.BuilderImportError) as info:
        builders.refresh()
    message = str(info.value)
    assert "two table builders are named 'tb_curve'" in message
    assert "tb.one.tb_curve" in message and "tb.two.tb_curve" in message
    assert f"{package / 'one.py'}:6" in message, "the first builder's file and line"
    # The first one stays registered, unchanged.
    assert builders.get("table", "tb_curve").module == "tb.one"
    # The book's registry never saw either.
    assert "tb_curve" not in {b.name for b in registry.all_builders()}


def test_new_and_edited_builder_modules_are_picked_up_without_a_restart(package, tmp_path):
    builders = registry.Registry(["tb"])
    write(package / "one.py", "tb_first", "tb_first", 1)
    assert builders.refresh() == ["tb.one"]
    assert builders.refresh() == [], "nothing changed, nothing imported again"
    # A builder added while serving: known at the next refresh.
    write(package / "two.py", "tb_second", "tb_second", 2)
    with pytest.raises(KeyError, match="unknown table 'tb_second'"):
        builders.get("table", "tb_second")
    assert builders.refresh() == ["tb.two"]
    (d,) = find_directives("<!-- table: tb_second -->", "p.md")
    assert b"| 2 |" in Renderer(tmp_path / "c", builders=builders).render(d).content
    # An edited builder module is imported again: not a duplicate of itself, and its new code runs.
    write(package / "two.py", "tb_second", "tb_second", 3, mtime=5)
    assert builders.refresh() == ["tb.two"]
    assert b"| 3 |" in Renderer(tmp_path / "c", builders=builders).render(d).content
    # A renamed builder: the old name is gone.
    write(package / "two.py", "tb_renamed", "tb_renamed", 3, mtime=10)
    builders.refresh()
    with pytest.raises(KeyError):
        builders.get("table", "tb_second")
    assert builders.get("table", "tb_renamed").module == "tb.two"
    # A deleted module is forgotten.
    (package / "two.py").unlink()
    importlib.invalidate_caches()
    assert builders.refresh() == []
    with pytest.raises(KeyError):
        builders.get("table", "tb_renamed")


def test_a_builder_module_that_fails_to_import_is_named_with_file_and_line(package):
    (package / "bad.py").write_text("x = 1\nfrom rnnmem.site.registry import table\n\nraise KeyError('truncated')\n")
    importlib.invalidate_caches()
    builders = registry.Registry(["tb"])
    with pytest.raises(registry.BuilderImportError) as info:
        builders.refresh()
    message = str(info.value)
    assert "tb.bad failed to import: KeyError: 'truncated'" in message
    with pytest.raises(KeyError, match="tb.bad failed to import"):
        builders.get("table", "whatever")


def test_editing_one_builder_module_re_renders_only_its_items(package, tmp_path):
    builders = registry.Registry([registry.BUILDER_PACKAGE, "tb"])  # the book's builders and these
    write(package / "one.py", "tb_one", "tb_one", 1)
    write(package / "two.py", "tb_two", "tb_two", 2)
    builders.refresh()
    page = "<!-- table: tb_one -->\n\n<!-- table: tb_two -->\n\n<!-- table: horizon_table factors=[0.5] -->\n"
    first = Renderer(tmp_path / "c", builders=builders)
    first.render_all(find_directives(page, "p.md"))
    assert len(first.rendered) == 3
    write(package / "two.py", "tb_two", "tb_two", 22, mtime=5)
    assert builders.refresh() == ["tb.two"]
    again = Renderer(tmp_path / "c", builders=builders)
    items = rendered(again.render_all(find_directives(page, "p.md")))
    assert [i.from_cache for i in items] == [True, False, True]
    assert b"| 22 |" in items[1].content
    removed = [p.name for p in again.prune()]
    assert len(removed) == 2 and removed[0].startswith("tb_two-") and sorted(removed)[1].endswith(".values.json"), (
        "the old item of tb_two (and its values) is no longer used"
    )


def test_a_registry_refuses_a_name_taken_by_a_function_of_equal_qualname_in_another_module():
    def make(module):
        def decay_curves():
            return None

        decay_curves.__module__ = module
        return decay_curves

    builders = registry.Registry([])
    builders.add("table", "tb_dup", make("tb.a"))
    builders.add("table", "tb_dup", make("tb.a"))  # the same module again (a reload): fine
    with pytest.raises(ValueError, match=r"two table builders are named 'tb_dup': tb\.a\..* and tb\.b\."):
        builders.add("table", "tb_dup", make("tb.b"))
    assert builders.get("table", "tb_dup").module == "tb.a"
    with pytest.raises(ValueError, match="kind must be one of figure, table, widget, got 'tabel'"):
        builders.add("tabel", "tb_dup", make("tb.a"))


def test_the_decorators_only_mark_so_importing_a_builder_module_changes_no_registry():
    @registry.figure("tb_marked")
    @registry.table()
    def tb_both():
        return None

    assert vars(tb_both)["__rnnmem_builders__"] == (("table", "tb_both"), ("figure", "tb_marked"))
    assert "tb_marked" not in {b.name for b in registry.all_builders()}
    module = type(sys)("tb_marks")
    tb_both.__module__ = module.__name__
    imported = registry.get("figure", "decay_curves").func  # imported from another module: not its own
    module.__dict__.update(tb_both=tb_both, imported=imported)
    builders = registry.Registry([])
    assert sorted((b.kind, b.name) for b in builders.add_module(module)) == [
        ("figure", "tb_marked"),
        ("table", "tb_both"),
    ]


def test_a_builder_module_imported_before_the_registry_is_taken_as_it_is(package):
    """One copy of each function: a process pool pickles a builder's helpers by their module's name."""
    write(package / "one.py", "tb_first", "tb_first", 1)
    first = importlib.import_module("tb.one")  # a test or a snippet imported it first
    builders = registry.Registry(["tb"])
    assert builders.refresh() == ["tb.one"]
    assert sys.modules["tb.one"] is first and builders.get("table", "tb_first").func is first.tb_first
    # A second registry takes the same module too, rather than importing a second copy.
    other = registry.Registry(["tb"])
    other.refresh()
    assert sys.modules["tb.one"] is first and other.get("table", "tb_first").func is first.tb_first
    # Once this registry imported it, an edit is imported anew, as while serving.
    write(package / "one.py", "tb_first", "tb_first", 2, mtime=5)
    assert builders.refresh() == ["tb.one"]
    assert sys.modules["tb.one"] is not first

"""Rendering through the cache: nothing re-rendered without a change, everything with one."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from rnnmem.site import registry, render
from rnnmem.site.directives import DirectiveError, find_directives
from rnnmem.site.render import Renderer


def one(md: str, page: str = "docs/p.md"):
    (d,) = find_directives(md, page)
    return d


FIG = '<!-- figure: decay_curves factors=[0.5, 0.9] steps=50 caption="two curves" -->'
TAB = '<!-- table: horizon_table factors=[0.5, 0.9] -->'


def test_second_render_comes_from_the_cache(tmp_path):
    first = Renderer(tmp_path)
    a = first.render(one(FIG))
    b = first.render(one(TAB))
    assert (a.from_cache, b.from_cache) == (False, False)
    second = Renderer(tmp_path)
    a2, b2 = second.render(one(FIG)), second.render(one(TAB))
    assert (a2.from_cache, b2.from_cache) == (True, True)
    assert second.rendered == [] and len(second.cached) == 2
    assert (a2.content, b2.content) == (a.content, b.content)


def test_svg_is_byte_identical_from_render_to_render(tmp_path):
    one_run = Renderer(tmp_path / "a").render(one(FIG)).content
    other_run = Renderer(tmp_path / "b").render(one(FIG)).content
    assert one_run == other_run
    assert one_run.startswith(b"<?xml") and b"<svg" in one_run
    assert b"<dc:date>" not in one_run


def test_a_change_of_arguments_renders_again(tmp_path):
    r = Renderer(tmp_path)
    r.render(one(FIG))
    again = r.render(one(FIG.replace("steps=50", "steps=60")))
    assert not again.from_cache


def test_the_caption_is_not_part_of_the_key(tmp_path):
    r = Renderer(tmp_path)
    r.render(one(FIG))
    assert r.render(one(FIG.replace("two curves", "a new caption"))).from_cache


def test_a_change_anywhere_in_the_package_renders_again(tmp_path):
    r = Renderer(tmp_path)
    first = r.render(one(FIG))
    r.digest = "0" * 64  # as if any module of rnnmem had changed
    again = r.render(one(FIG))
    assert not again.from_cache and again.key != first.key


def test_a_change_of_the_builder_source_changes_the_key(monkeypatch):
    d = one(FIG)
    before = render.cache_key(d, "digest")
    builder = registry.get("figure", "decay_curves")
    monkeypatch.setattr(type(builder), "source", property(lambda self: "def changed(): pass"))
    assert render.cache_key(d, "digest") != before


def test_package_digest_follows_the_source(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("x = 1\n")
    d1 = render.package_digest(pkg)
    (pkg / "a.py").write_text("x = 2\n")
    assert render.package_digest(pkg) != d1


@pytest.mark.parametrize(
    "comment, expected",
    [
        ('<!-- figure: no_such_figure caption="c" -->', "unknown figure 'no_such_figure'; the known figures are:"),
        ('<!-- table: no_such_table -->', "unknown table 'no_such_table'"),
        ("<!-- figure: decay_curves steps=10 -->", 'a figure needs caption="..."'),
        ('<!-- figure: decay_curves stepz=10 caption="c" -->', "unknown argument stepz for figure 'decay_curves'"),
        ('<!-- figure: decay_curves factors=[1.5] caption="c" -->',
         "raised ValueError: factors[0] must be a gate value strictly between 0 and 1, got 1.5"),
        ('<!-- table: horizon_table level=2 -->', "raised ValueError: level must be a gate value"),
    ],
)
def test_failures_name_page_line_directive_and_error(tmp_path, comment, expected):
    md = "# T\n\n" + comment + "\n"
    r = Renderer(tmp_path)
    with pytest.raises(DirectiveError) as info:
        r.render(one(md, "docs/chapters/c.md"))
    message = str(info.value)
    assert message.startswith("docs/chapters/c.md:3: " + comment), message
    assert expected in message
    assert not any(tmp_path.rglob("*-*")), "a failed render must leave nothing in the cache"


def test_fresh_process_renders_with_the_code_on_disk(tmp_path):
    r = Renderer(tmp_path)
    items = r.render_all([one(FIG), one(TAB)], fresh_process=True)
    # The subprocess rendered both; this process only read them back.
    assert [i.from_cache for i in items] == [True, True]


def test_fresh_process_failure_is_reported(tmp_path):
    with pytest.raises(DirectiveError, match="factors\\[0\\] must be a gate value"):
        Renderer(tmp_path).render_all(
            [one('<!-- figure: decay_curves factors=[2] caption="c" -->')], fresh_process=True)


def test_command_line_builds_every_item_then_renders_nothing(tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache"
    cmd = [sys.executable, "-m", "rnnmem.site", "build", "--out", str(out), "--cache", str(cache)]
    first = subprocess.run(cmd, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert ", 0 from the cache" in first.stdout
    svgs = sorted(p.name for p in out.glob("*.svg"))
    assert svgs, "no figure was written"
    second = subprocess.run(cmd, capture_output=True, text=True)
    assert second.returncode == 0 and " 0 rendered" in second.stdout, second.stdout


def test_command_line_usage_errors_exit_2():
    for args in ([], ["bogus"], ["build", "--nope"]):
        proc = subprocess.run([sys.executable, "-m", "rnnmem.site", *args], capture_output=True, text=True)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "usage:" in proc.stderr


def test_command_line_lists_builders():
    proc = subprocess.run([sys.executable, "-m", "rnnmem.site", "list"], capture_output=True, text=True, check=True)
    assert "figure decay_curves" in " ".join(proc.stdout.split())


def test_command_line_reports_a_bad_directive_with_exit_1(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text('# Hi\n\n<!-- figure: decay_curves factors=[3] caption="c" -->\n')
    (tmp_path / "mkdocs.yml").write_text("site_name: t\nrepo_url: https://github.com/o/r\n")
    proc = subprocess.run([sys.executable, "-m", "rnnmem.site", "build", "--config", str(tmp_path / "mkdocs.yml"),
                           "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c")],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "index.md:3:" in proc.stderr and "factors[0] must be a gate value" in proc.stderr


def test_table_markdown_is_a_real_table(tmp_path):
    item = Renderer(tmp_path).render(one(TAB))
    lines = item.content.decode().strip().splitlines()
    assert lines[0].startswith("| gate") and set(lines[1]) <= set("|-:")
    assert len(lines) == 4  # header, rule, two rows
    assert textwrap.dedent(lines[2]).startswith("| 0.5 |")


def test_a_warm_render_does_not_import_matplotlib(tmp_path):
    """Reading every item from the cache must stay cheap: no matplotlib import on that path."""
    Renderer(tmp_path).render(one(FIG))
    code = ("import sys\nfrom rnnmem.site.render import Renderer\nfrom rnnmem.site.directives import find_directives\n"
            f"(d,) = find_directives({FIG!r}, 'p.md')\n"
            f"item = Renderer({str(tmp_path)!r}).render(d)\n"
            "print(item.from_cache, 'matplotlib' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"]

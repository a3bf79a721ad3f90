"""Rendering through the cache: nothing re-rendered without a change, everything with one."""

from __future__ import annotations

import inspect
import io
import logging
import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from one_directive import OneDirective

from rnnmem.site import registry, sources
from rnnmem.site.directives import DirectiveError
from rnnmem.site.render import Deferred, Item, Renderer, render_later

one = OneDirective("docs/p.md")


def rendered(items: list[Item | DirectiveError]) -> list[Item]:
    """The items of a render without keep_going, which raises instead of giving an error in an item's place."""
    done = [i for i in items if isinstance(i, Item)]
    assert len(done) == len(items), items
    return done


FIG = '<!-- figure: decay_curves factors=[0.5, 0.9] steps=50 caption="two curves" -->'
TAB = "<!-- table: horizon_table factors=[0.5, 0.9] -->"


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


def test_a_change_of_the_builders_code_renders_again(tmp_path, monkeypatch):
    r = Renderer(tmp_path)
    first = r.render(one(FIG))
    again = Renderer(tmp_path)
    monkeypatch.setattr(again, "modules_digest", lambda module: "0" * 64)  # as if its code had changed
    second = again.render(one(FIG))
    assert not second.from_cache and second.key != first.key


def test_keys_follow_each_builders_own_imports_not_the_whole_package():
    horizon = sources.dependencies("rnnmem.site.builders.horizon")
    assert {"rnnmem.site.builders.horizon", "rnnmem.memory", "rnnmem.site.style", "rnnmem.site.tables"} <= set(horizon)
    assert "rnnmem.train" not in horizon and "rnnmem.site.builders.gates" not in horizon
    assert not set(horizon) & sources.MACHINERY
    words = sources.dependencies("rnnmem.site.builders.words_in_context")
    assert "rnnmem.train" in words


def make_package(root, files):
    pkg = root / "pkg"
    for name, text in files.items():
        path = pkg / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


def test_an_edit_changes_the_digest_of_the_modules_that_import_it_only(tmp_path):
    pkg = make_package(
        tmp_path,
        {
            "__init__.py": "from . import a, b, c\n",
            "a.py": "from pkg import b\nfrom .sub.d import thing\n",
            "b.py": "import numpy\nfrom pkg.c import helper\n",
            "c.py": "def helper(): pass\n",
            "e.py": "x = 1\n",
            "sub/__init__.py": "",
            "sub/d.py": "thing = 1\n",
        },
    )
    assert sources.dependencies("pkg.a", pkg) == ["pkg.a", "pkg.b", "pkg.c", "pkg.sub.d"]
    a, e = sources.sources_digest(["pkg.a"], pkg), sources.sources_digest(["pkg.e"], pkg)
    deps_a = sources.dependencies("pkg.a", pkg)
    before = sources.sources_digest(deps_a, pkg)
    (pkg / "e.py").write_text("x = 2\n")
    assert sources.sources_digest(deps_a, pkg) == before, "an unrelated module must not change the key"
    (pkg / "c.py").write_text("def helper(): return 1\n")
    assert sources.sources_digest(deps_a, pkg) != before, "a module imported through b must change it"
    assert sources.sources_digest(["pkg.a"], pkg) == a and sources.sources_digest(["pkg.e"], pkg) != e


def test_unused_cache_entries_are_pruned(tmp_path):
    r = Renderer(tmp_path)
    old = r.render(one(FIG.replace("steps=50", "steps=40")))
    r2 = Renderer(tmp_path)
    kept = r2.render(one(FIG))
    removed = r2.prune()
    # A figure's files: its SVG, its values and its desktop rendition (empty: one panel).
    assert sorted(p.name for p in removed) == [
        f"decay_curves-{old.key}",
        f"decay_curves-{old.key}.values.json",
        f"decay_curves-{old.key}.wide.svg",
    ]
    assert sorted(p.name for p in (tmp_path / "figure").iterdir()) == [
        f"decay_curves-{kept.key}",
        f"decay_curves-{kept.key}.values.json",
        f"decay_curves-{kept.key}.wide.svg",
    ]
    assert kept.wide is None and (tmp_path / "figure" / f"decay_curves-{kept.key}.wide.svg").read_bytes() == b""


def test_timing_report_lists_hits_and_misses_slowest_first(tmp_path):
    r = Renderer(tmp_path)
    r.render(one(TAB))
    r2 = Renderer(tmp_path)
    r2.render(one(TAB))
    r2.render(one(FIG))
    lines = r2.timing_report().splitlines()
    assert lines[0].split() == ["seconds", "cache", "directive"]
    rows = [line.split() for line in lines[1:-1]]
    assert [(row[1], row[-1]) for row in rows] == [("miss", "decay_curves"), ("hit", "horizon_table")]
    assert float(rows[0][0]) >= float(rows[1][0])
    assert lines[-1].split()[1:] == ["total", "2", "items,", "1", "rendered"]


@pytest.mark.parametrize(
    "comment, expected",
    [
        ('<!-- figure: no_such_figure caption="c" -->', "unknown figure 'no_such_figure'"),
        ('<!-- figure: decay_curve caption="c" -->', "unknown figure 'decay_curve'; did you mean 'decay_curves'"),
        ("<!-- table: no_such_table -->", "unknown table 'no_such_table'"),
        ("<!-- figure: decay_curves steps=10 -->", 'a figure needs caption="..."'),
        (
            '<!-- figure: decay_curves stepz=10 caption="c" -->',
            "unknown argument stepz for figure 'decay_curves'; did you mean 'steps'?; it takes: ",
        ),
        (
            '<!-- figure: decay_curves factors=[1.5] caption="c" -->',
            "figure 'decay_curves': factors[0] must be a gate value strictly between 0 and 1, got 1.5",
        ),
        ("<!-- table: horizon_table level=2 -->", "table 'horizon_table': level must be a gate value"),
        ("<!-- table: bptt_table target=[1, 2] -->", "raised ValueError: target must be one number or a sequence"),
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


def test_a_builder_that_raises_is_reported_with_its_file_line_and_the_package_frames(tmp_path):
    md = "# T\n\n<!-- table: bptt_table target=[1, 2] -->\n"
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(md, "docs/chapters/c.md"))
    message = str(info.value)
    builder = registry.get("table", "bptt_table").func
    lines, first = inspect.getsourcelines(builder)
    assert message.startswith("docs/chapters/c.md:3: ")
    shown = [int(m) for m in re.findall(r"src/rnnmem/site/builders/error_backward.py:(\d+) in bptt_table", message)]
    assert shown and first <= shown[0] < first + len(lines), "the builder's own file and line"
    assert "src/rnnmem/bptt.py:" in message, "the innermost package frame, where it failed"
    assert "render.py" not in message and "registry.py" not in message, "machinery frames are trimmed"
    # The exception chain is kept for a debugger or a traceback (no `from None`).
    assert isinstance(info.value.__cause__, ValueError)


class Stale(registry.Registry):
    """The book's builders, in a process whose copy of some modules is older than the source on disk."""

    def __init__(self, stale: set[str]):
        super().__init__()
        self.stale = stale

    def stale_modules(self) -> set[str]:
        return self.stale


@pytest.mark.process
def test_fresh_process_renders_items_whose_code_changed_since_import(tmp_path):
    r = Renderer(tmp_path, builders=Stale({"rnnmem.memory"}))
    items = rendered(r.render_all([one(FIG), one(TAB)], fresh_process=True))
    # The subprocess rendered both (they import rnnmem.memory); this process only read them back.
    assert [i.from_cache for i in items] == [True, True]
    # Nothing stale: rendered here.
    fresh = Renderer(tmp_path / "b", builders=Stale({"rnnmem.train"}))
    assert not rendered(fresh.render_all([one(TAB)], fresh_process=True))[0].from_cache


@pytest.mark.process
def test_fresh_process_failure_is_reported(tmp_path):
    stale = Stale({"rnnmem.memory"})
    bad = one('<!-- figure: decay_curves factors=[2] caption="c" -->')
    with pytest.raises(DirectiveError, match="factors\\[0\\] must be a gate value"):
        Renderer(tmp_path, builders=stale).render_all([bad], fresh_process=True)
    # Serving: the error takes the item's place and the other items render.
    items = Renderer(tmp_path, builders=stale).render_all(
        [bad, one(TAB, "docs/q.md")], fresh_process=True, keep_going=True
    )
    assert isinstance(items[0], DirectiveError) and "p.md:1" in str(items[0])
    assert isinstance(items[1], Item) and items[1].from_cache


TINYBOOK = Path(__file__).resolve().parents[1] / "tinybook"


@pytest.mark.process
def test_command_line_builds_every_item_then_renders_nothing(tmp_path):
    """On the tiny fixture book (its six items), into a cache of its own: cold, then warm."""
    out, cache = tmp_path / "out", tmp_path / "cache"
    config = ["--config", str(TINYBOOK / "mkdocs.yml")]
    cmd = [sys.executable, "-m", "rnnmem.site", "build", *config, "--out", str(out), "--cache", str(cache)]
    first = subprocess.run(cmd, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert "6 rendered, 0 from the cache" in first.stdout, first.stdout
    svgs = sorted(p.name for p in out.glob("*.svg"))
    assert [name.split("-")[0] for name in svgs] == ["decay_curves"] * 2 + ["lstm_chain_diagram"] * 2, svgs
    assert svgs[3] == svgs[2].removesuffix(".svg") + ".wide.svg", "the diagram's desktop rendition beside it"
    second = subprocess.run(cmd, capture_output=True, text=True)
    assert second.returncode == 0 and " 0 rendered" in second.stdout, second.stdout


@pytest.mark.process
def test_command_line_usage_errors_exit_2():
    for args in ([], ["bogus"], ["build", "--nope"]):
        proc = subprocess.run([sys.executable, "-m", "rnnmem.site", *args], capture_output=True, text=True)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "usage:" in proc.stderr


@pytest.mark.process
def test_command_line_help_lists_only_the_commands_a_reader_types():
    proc = subprocess.run([sys.executable, "-m", "rnnmem.site", "--help"], capture_output=True, text=True, check=True)
    assert "build" in proc.stdout and "check" in proc.stdout
    assert "SUPPRESS" not in proc.stdout and "render-json" not in proc.stdout
    # The internal command still parses its own arguments, with a usage error of its own.
    bad = subprocess.run([sys.executable, "-m", "rnnmem.site", "render-json"], capture_output=True, text=True)
    assert bad.returncode == 2 and "usage: python -m rnnmem.site render-json" in bad.stderr
    assert "--cache" in bad.stderr


@pytest.mark.process
def test_command_line_check_reports_a_builder_error_once(tmp_path):
    (tmp_path / "docs" / "chapters").mkdir(parents=True)
    (tmp_path / "docs" / "chapters" / "c.md").write_text(
        '# C\n\n<!-- figure: decay_curves factors=[3] caption="It decays." alt="One line, falling." -->\n'
    )
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nrepo_url: https://github.com/o/r\nnav: [{Chapters: [chapters/c.md]}]\n"
    )
    env = dict(os.environ, RNNMEM_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run(
        [sys.executable, "-m", "rnnmem.site", "check", "c", "--config", str(tmp_path / "mkdocs.yml")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("factors[0] must be a gate value") == 1, proc.stderr
    assert proc.stderr.count("docs/chapters/c.md:3:") == 1, proc.stderr


@pytest.mark.process
def test_command_line_lists_builders():
    proc = subprocess.run([sys.executable, "-m", "rnnmem.site", "list"], capture_output=True, text=True, check=True)
    assert "figure decay_curves" in " ".join(proc.stdout.split())


@pytest.mark.process
def test_command_line_reports_a_bad_directive_with_exit_1(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Hi\n\n<!-- table: bptt_table target=[1, 2] -->\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\nrepo_url: https://github.com/o/r\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rnnmem.site",
            "build",
            "--config",
            str(tmp_path / "mkdocs.yml"),
            "--out",
            str(tmp_path / "out"),
            "--cache",
            str(tmp_path / "c"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "index.md:3:" in proc.stderr and "target must be one number or a sequence" in proc.stderr
    assert re.search(r"src/rnnmem/site/builders/error_backward\.py:\d+ in bptt_table", proc.stderr), proc.stderr


@pytest.mark.process
def test_command_line_timings_list_each_directive_slowest_first(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text(f"# Hi\n\n{TAB}\n\n{FIG}\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\nrepo_url: https://github.com/o/r\n")
    cmd = [
        sys.executable,
        "-m",
        "rnnmem.site",
        "build",
        "--config",
        str(tmp_path / "mkdocs.yml"),
        "--out",
        str(tmp_path / "out"),
        "--cache",
        str(tmp_path / "c"),
        "--timings",
    ]
    first = subprocess.run(cmd, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    rows = [line.split() for line in first.stdout.splitlines()[1:3]]
    assert [(r[1], r[2], r[4]) for r in rows] == [
        ("miss", "docs/index.md:5", "decay_curves"),
        ("miss", "docs/index.md:3", "horizon_table"),
    ]
    second = subprocess.run(cmd, capture_output=True, text=True)
    assert [line.split()[1] for line in second.stdout.splitlines()[1:3]] == ["hit", "hit"]


def test_table_markdown_is_a_real_table(tmp_path):
    item = Renderer(tmp_path).render(one(TAB))
    lines = item.content.decode().strip().splitlines()
    assert lines[0].startswith("| gate") and set(lines[1]) <= set("|-:")
    assert len(lines) == 4  # header, rule, two rows
    assert textwrap.dedent(lines[2]).startswith("| 0.5 |")


@pytest.mark.process
def test_a_warm_render_does_not_import_matplotlib(tmp_path):
    """Reading every item from the cache must stay cheap: no matplotlib import on that path."""
    Renderer(tmp_path).render(one(FIG))
    code = (
        "import sys\nfrom rnnmem.site.render import Renderer\nfrom rnnmem.site.directives import find_directives\n"
        f"(d,) = find_directives({FIG!r}, 'p.md')\n"
        f"item = Renderer({str(tmp_path)!r}).render(d)\n"
        "print(item.from_cache, 'matplotlib' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"]


# -- progress: a bar on a terminal, nothing on a pipe -------------------------------------------------------------
def states(shown: str) -> list[str]:
    """Each state the bar was drawn in (a terminal line is redrawn after a carriage return)."""
    return [s.strip() for s in re.split(r"[\r\n]+", shown) if s.strip()]


def render_on(fd: int, renderer: Renderer, directives, monkeypatch) -> None:
    with open(fd, "w", encoding="utf-8", closefd=False) as stream, monkeypatch.context() as m:
        m.setattr(sys, "stderr", stream)
        renderer.render_all(directives)


def test_a_terminal_shows_a_bar_naming_each_item_and_counting_down(tmp_path, monkeypatch, terminal):
    directives = [one(TAB, "docs/a.md"), one(FIG, "docs/b.md")]
    shown = states(terminal(lambda fd: render_on(fd, Renderer(tmp_path), directives, monkeypatch)))
    naming = [s for s in shown if " left: docs/" in s]
    assert any("0/2" in s and "2 left: docs/a.md:1 table horizon_table" in s for s in naming), shown
    assert any("1/2" in s and "1 left: docs/b.md:1 figure decay_curves" in s for s in naming), shown
    assert shown[-1].startswith("rnnmem 2/2 |") and shown[-1].endswith("to go, rendered"), shown
    assert re.search(r"\d+\.\d+s/item", shown[-1]), "the time per item"
    # Everything in the cache now: nothing to render, no bar.
    assert terminal(lambda fd: render_on(fd, Renderer(tmp_path), directives, monkeypatch)) == ""


def test_a_pipe_gets_no_bar_unless_forced(tmp_path, monkeypatch):
    for progress, expected in ((None, False), (True, True), (False, False)):
        stream = io.StringIO()  # not a terminal
        with monkeypatch.context() as m:
            m.setattr(sys, "stderr", stream)
            Renderer(tmp_path / str(progress), progress=progress).render_all([one(TAB)])
        assert ("1 left: docs/p.md:1 table horizon_table" in stream.getvalue()) is expected, (
            progress,
            stream.getvalue(),
        )


def test_a_log_line_while_the_bar_shows_is_written_above_it(tmp_path, monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    console = logging.StreamHandler(stream)  # as MkDocs' handler: on standard error, with a formatter
    console.setFormatter(logging.Formatter("LOG %(levelname)s %(message)s"))
    console.setLevel(logging.WARNING)
    mkdocs_log = logging.getLogger("mkdocs")
    monkeypatch.setattr(mkdocs_log, "handlers", [console])
    from rnnmem.site import render

    real = render.build_content

    def logging_build(directive, **kwargs):
        mkdocs_log.warning("a warning while rendering")
        mkdocs_log.info("below the handler's level")
        return real(directive, **kwargs)

    monkeypatch.setattr(render, "build_content", logging_build)
    Renderer(tmp_path, progress=True).render_all([one(TAB)])
    text = stream.getvalue()
    # tqdm.write clears the bar's line, writes the record on a line of its own, then draws the bar again.
    assert [line.split("\r")[-1] for line in text.split("\n") if "LOG" in line] == [
        "LOG WARNING a warning while rendering"
    ], text
    assert "below the handler's level" not in text
    assert mkdocs_log.handlers == [console], "the handlers are put back"


@pytest.mark.process
def test_command_line_build_shows_progress_on_a_terminal_only(tmp_path, terminal):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text(f"# Hi\n\n{TAB}\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\nrepo_url: https://github.com/o/r\n")
    base = [sys.executable, "-m", "rnnmem.site", "build", "--config", str(tmp_path / "mkdocs.yml")]

    def build(name: str, *more: str, stderr: int | None = None) -> subprocess.CompletedProcess:
        cmd = [*base, "--out", str(tmp_path / name), "--cache", str(tmp_path / name / "cache"), *more]
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=stderr, text=True, timeout=300)

    bar = "1 left: docs/index.md:3 table horizon_table"
    shown = terminal(lambda fd: build("tty", stderr=fd))
    assert bar in shown and "rnnmem 1/1 |" in shown, shown
    assert terminal(lambda fd: build("off", "--no-progress", stderr=fd)) == ""
    piped = build("pipe", stderr=subprocess.PIPE)
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    forced = build("forced", "--progress", stderr=subprocess.PIPE)
    assert bar in forced.stderr and "1 rendered" in forced.stdout


@pytest.mark.process
def test_serving_defers_the_missing_items_then_renders_them_in_a_new_interpreter_with_the_bar(tmp_path, monkeypatch):
    Renderer(tmp_path).render(one(TAB))
    starting = Renderer(tmp_path)
    starting.defer_missing = True  # mkdocs serve's first build
    items = starting.render_all([one(FIG), one(TAB, "docs/q.md")])
    assert isinstance(items[0], Deferred) and "docs/p.md:1: figure decay_curves is rendered after" in str(items[0])
    assert isinstance(items[1], Item) and items[1].from_cache, "what the cache has is read, not deferred"
    assert starting.deferred == [one(FIG)]
    stream, done = io.StringIO(), threading.Event()
    with monkeypatch.context() as m:
        m.setattr(sys, "stderr", stream)
        render_later(tmp_path, starting.deferred, progress=True, when_done=done.set).thread.join(timeout=300)
    assert done.is_set()
    assert "1 left: docs/p.md:1 figure decay_curves" in stream.getvalue() and "rnnmem 1/1 |" in stream.getvalue()
    assert rendered(Renderer(tmp_path).render_all([one(FIG)]))[0].from_cache


@pytest.mark.process
def test_a_render_left_for_later_ends_with_the_server(tmp_path):
    done = threading.Event()
    later = render_later(tmp_path, [one(FIG)], progress=False, when_done=done.set)
    later.stop()  # at once: the new interpreter has not even imported numpy
    assert later.proc.returncode is not None and not later.thread.is_alive() and done.is_set()
    assert not (tmp_path / "figure").exists(), "ended before it rendered anything"

"""What a server's builds do that a one-off build does not (rnnmem.site.serve), without starting a server."""

from __future__ import annotations

import os

from rnnmem.site.book import Book
from rnnmem.site.render import Deferred
from rnnmem.site.serve import Serve, back_generated_page


def test_only_the_first_build_of_a_server_defers():
    serve = Serve()
    assert serve.defers(True) and not serve.defers(False)
    serve.started = True
    assert not serve.defers(True)


def test_a_page_whose_items_wait_says_so_under_its_title(tmp_path):
    book = Book(tmp_path, repo_url="", chapters=[])
    page = book.add_page("chapters/a.md", "# A\n\nText.\n")
    assert Serve().waiting_page(book, "chapters/a.md", page.markdown) is None
    page.items = [Deferred("later"), Deferred("later")]
    waiting = Serve().waiting_page(book, "chapters/a.md", page.markdown)
    assert waiting is not None and waiting.startswith("# A\n\n!!! info") and "2 of them" in waiting


def test_the_output_of_a_page_whose_items_changed_is_removed(tmp_path):
    book = Book(tmp_path, repo_url="", chapters=[])
    book.add_page("a.md", "# A\n")
    output = tmp_path / "a.html"
    serve = Serve()
    for expected in (True, True):  # the first build notes the keys; an unchanged page keeps its output
        output.write_text("html")
        serve.mark_changed_pages(book, [("a.md", str(output))])
        assert output.exists() is expected
    serve.last_keys["a.md"] = ("another key",)
    serve.mark_changed_pages(book, [("a.md", str(output))])
    assert not output.exists()


def test_a_generated_page_is_backed_by_a_file_rewritten_only_when_it_changes(tmp_path):
    folder = tmp_path / "generated"
    path = back_generated_page(folder, "api/x.md", "one")
    assert path == folder / "api/x.md" and path.read_text() == "one"
    os.utime(path, (1, 1))
    back_generated_page(folder, "api/x.md", "one")
    assert path.stat().st_mtime == 1, "the same text: the file is left as it is"
    module = tmp_path / "x.py"
    module.write_text("")
    back_generated_page(folder, "api/x.md", "one", module)
    assert path.stat().st_mtime > 1, "its module is newer: the page is rebuilt"
    back_generated_page(folder, "api/x.md", "two")
    assert path.read_text() == "two"

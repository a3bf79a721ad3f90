"""Math typeset at build time (rnnmem.site.mathjax): what is found, what it becomes, and bad TeX."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rnnmem.site import mathjax

ROOT = Path(__file__).resolve().parents[2]


def test_find_math_reads_arithmatex_inline_and_display():
    page = (
        '<p>gate <span class="arithmatex">\\(f &lt; 1\\)</span></p>'
        '<div class="arithmatex">\\[h_t = \\tanh(a_t)\\]</div>'
    )
    found = mathjax.find_math(page)
    assert [(tex, display) for _, _, tex, display in found] == [("f < 1", False), ("h_t = \\tanh(a_t)", True)]
    start, end, _, _ = found[0]
    assert page[start:end] == "\\(f &lt; 1\\)"


def test_find_math_reads_notebook_markdown_but_not_its_code():
    page = (
        '<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown jp-MarkdownOutput">'
        '<p>keeps $f^n$ and $$1 + e^b$$ costs \\$5</p><pre><code>x = "$a$"</code></pre>'
        "<div><p>nested $n$</p></div></div><p>outside $z$</p>"
    )
    found = [(tex, display) for _, _, tex, display in mathjax.find_math(page)]
    assert found == [("f^n", False), ("1 + e^b", True), ("n", False)]


@pytest.fixture(scope="module")
def typesetter():
    node_modules = ROOT / "node_modules"
    if not (node_modules / "mathjax-full").is_dir():
        pytest.fail("mathjax-full is not installed: run `make setup` (npm ci)")
    t = mathjax.Typesetter(node_modules)
    yield t
    t.close()


@pytest.mark.process
def test_typeset_page_replaces_tex_with_svg_and_mathml(typesetter):
    page = '<p>A gate <span class="arithmatex">\\(f = \\sigma(b)\\)</span>.</p>'
    out = mathjax.typeset_page(page, typesetter, where="docs/x.md")
    # The page starts with its glyph cache, hidden, holding each glyph's outline once...
    cache = re.match(rf'<svg style="display: none;" id="{mathjax.GLYPH_CACHE_ID}"><defs>(.*?)</defs></svg>', out)
    assert cache, out[:200]
    glyphs = re.findall(r'<path id="([^"]+)" d="[^"]+"', cache.group(1))
    assert "MJX-TEX-I-1D453" in glyphs and len(glyphs) == len(set(glyphs))  # the italic f, once
    rest = out[cache.end() :]
    assert rest.startswith('<p>A gate <span class="arithmatex"><mjx-container class="MathJax" jax="SVG"')
    assert "\\(" not in rest and "<mjx-assistive-mml" in rest and "<mi>σ</mi>" in rest
    assert rest.endswith("</mjx-container></span>.</p>")
    # ... and every glyph the formula draws is one of them: no font is needed.
    used = set(re.findall(r'xlink:href="#([^"]+)"', rest))
    assert used and used <= set(glyphs), used - set(glyphs)
    css = typesetter.stylesheet()
    assert 'mjx-container[jax="SVG"]' in css and "@font-face" not in css and "url(" not in css


@pytest.mark.process
def test_each_page_has_its_own_glyphs(typesetter):
    first = mathjax.typeset_page('<span class="arithmatex">\\(x\\)</span>', typesetter)
    second = mathjax.typeset_page('<span class="arithmatex">\\(y\\)</span>', typesetter)
    assert "MJX-TEX-I-1D465" in first and "MJX-TEX-I-1D466" not in first
    assert "MJX-TEX-I-1D466" in second and "MJX-TEX-I-1D465" not in second
    assert mathjax.typeset_page("<p>no math</p>", typesetter) == "<p>no math</p>"


@pytest.mark.process
def test_bad_tex_fails_naming_the_page_and_formula(typesetter):
    page = '<span class="arithmatex">\\(\\undefinedmacro x\\)</span>'
    with pytest.raises(
        mathjax.MathError, match=r"docs/bad\.md: Undefined control sequence \\undefinedmacro in the formula"
    ):
        mathjax.typeset_page(page, typesetter, where="docs/bad.md")
    # The process survives a bad formula and goes on typesetting.
    assert "mjx-container" in mathjax.typeset_page('<span class="arithmatex">\\(x\\)</span>', typesetter)


def test_missing_node_package_is_a_clear_error(tmp_path):
    with pytest.raises(mathjax.MathError, match="mathjax-full not found.*make setup"):
        mathjax.Typesetter(tmp_path).typeset([("x", False)])


@pytest.mark.process
def test_a_process_that_does_not_answer_is_stopped_and_named(tmp_path):
    modules = tmp_path / "node_modules"
    (modules / "mathjax-full" / "js").mkdir(parents=True)
    (modules / "mathjax-full" / "js" / "mathjax.js").write_text("")
    server = tmp_path / "hang.js"
    server.write_text("process.stdin.resume();\n")  # reads every request, answers none
    t = mathjax.Typesetter(modules, timeout=0.3, server=server)
    page = '<span class="arithmatex">\\(x\\)</span>'
    with pytest.raises(mathjax.MathError, match=r"^docs/slow\.md: .*did not answer within 0\.3 s") as info:
        mathjax.typeset_page(page, t, where="docs/slow.md")
    assert "math_timeout" in str(info.value), "the message says which option sets the limit"
    assert t._process is None, "the hung process was stopped"
    # The next page starts a new process (which hangs as well, and is stopped as well).
    with pytest.raises(mathjax.MathError, match="did not answer"):
        mathjax.typeset_page(page, t, where="docs/next.md")
    t.close()


@pytest.mark.parametrize("timeout", [0, -1, True, "5"])
def test_the_timeout_must_be_a_positive_number(tmp_path, timeout):
    with pytest.raises(ValueError, match=f"timeout must be a positive number of seconds, got {timeout!r}"):
        mathjax.Typesetter(tmp_path, timeout=timeout)

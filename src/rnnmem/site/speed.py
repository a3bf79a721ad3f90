"""The theme's scripts start after a page's first paint.

Material ends every page with its script (``assets/javascripts/bundle.*.min.js``)
and then the site's own (``extra_javascript``), as plain ``<script src>`` tags.
The browser runs them before it draws the page: the theme's script mounts the
search, the palette, the copy buttons, and reads positions on the page as it
does, which makes the browser style and lay out the whole chapter before a
reader sees its first line. On a phone that is seconds.

:func:`start_scripts_after_first_paint` replaces those tags by one inline
script that adds the same scripts, in the same order (``async = false`` keeps
it), once the browser has drawn the first frame. The page looks the same; it is
drawn first and made interactive a moment later. Until then, links, the
navigation drawer and the collapsible answers work, as they are HTML and CSS.

The first paint is cheap because the article's blocks off the screen are not
laid out yet (``content-visibility`` in the book's stylesheet); ``a11y.js``
gives each of them its drawn height, one by one, while the browser is idle.
Sizing a block lays it out whole, in one task. The largest block of every
chapter is its list of exercises, answers and code included (1,000 to 2,600
elements); laid out at once it was the longest task after the first paint
(55 ms on forget-bias, unthrottled). :func:`exercise_list_in_units` marks that
list with the class :data:`UNITS`: the list itself is always laid out, and each
of its items is a block the browser may skip and ``a11y.js`` sizes, one item
per task.

:func:`resolve_links_in_head` keeps the theme from loading the page's stylesheets a
second time. For instant navigation the theme makes every relative ``href`` and
``src`` of the page absolute when it starts, by assigning each its own resolved
value. For a stylesheet's ``<link>`` that is a new ``href``: the browser parses the
sheet again, as if it had just arrived, restyles every element and lays out every
line anew. A script at the end of ``<head>`` does the same for the ``<link>``
elements before the sheets have arrived, when it costs nothing; the theme then
finds their addresses absolute and leaves them alone.
"""

from __future__ import annotations

import json
import re

__all__ = [
    "RESOLVE_LINKS",
    "THEME_SCRIPT",
    "UNITS",
    "exercise_list_in_units",
    "resolve_links_in_head",
    "scripts_started_after_paint",
    "start_scripts_after_first_paint",
]

#: The theme's own script, by the name Material gives it.
THEME_SCRIPT = re.compile(r"assets/javascripts/bundle\.[0-9a-f]+\.min\.js$")
#: The scripts Material writes at the end of <body>: its bundle, then extra_javascript.
_TAIL = re.compile(r'(?:\s*<script src="(?P<src>[^"<>]+)"></script>)+\s*(?=</body>)')
_SRC = re.compile(r'<script src="([^"<>]+)"></script>')
_STARTED = re.compile(r"<script>\(function \(\) \{\s*var scripts = (\[[^\]]*\]),")

#: Makes the head's relative ``<link href>`` absolute, as the theme's instant navigation would
#: (its test for an absolute address is the same regular expression).
RESOLVE_LINKS = (
    '<script>document.querySelectorAll("link[href]").forEach(function (link) {'
    ' var href = link.getAttribute("href");'
    " if (href && !/^(?:[a-z]+:)?\\/\\//i.test(href)) link.href = link.href; });</script>"
)

#: The loader. The theme starts the page's components when the document has loaded (its
#: ``document$`` emits on DOMContentLoaded); a script added after that event would wait for it
#: in vain, so once the theme's script has run, the loader emits the document on ``document$``
#: itself, unless the theme has done so already (a ReplaySubject replays what it emitted).
_LOADER = """<script>(function () {{
  var scripts = {srcs}, loaded = document.readyState !== "loading";
  document.addEventListener("DOMContentLoaded", function () {{ loaded = true; }});
  function announce() {{
    var emitted = false;
    if (!window.document$) return;
    document$.subscribe(function () {{ emitted = true; }}).unsubscribe();
    if (loaded && !emitted) document$.next(document);
  }}
  function start() {{
    scripts.forEach(function (src, n) {{
      var script = document.createElement("script");
      script.src = src;
      script.async = false;
      if (n === 0) script.onload = announce;
      document.body.appendChild(script);
    }});
  }}
  requestAnimationFrame(function () {{ setTimeout(start); }});
}})();</script>
"""


def start_scripts_after_first_paint(html: str, *, where: str = "page") -> str:
    """The page ``html`` with the scripts at the end of its body started after the first paint.

    The ``<script src>`` tags that end the body (the theme's script first, then
    the site's) become one inline script that adds them, in order, after the
    first frame is drawn. A page whose body does not end with the theme's script
    raises ``ValueError`` naming ``where``: the theme changed how it loads, and
    the build must not go on as if nothing happened.

    >>> page = ('<body><p>text</p>\\n<script src="assets/javascripts/bundle.0a1b.min.js"></script>'
    ...         '<script src="javascripts/a11y.js"></script>\\n</body>')
    >>> print(start_scripts_after_first_paint(page))  # doctest: +ELLIPSIS
    <body><p>text</p>
    <script>(function () {
      var scripts = ["assets/javascripts/bundle.0a1b.min.js","javascripts/a11y.js"], loaded = ...
    ...
      requestAnimationFrame(function () { setTimeout(start); });
    })();</script>
    </body>
    >>> start_scripts_after_first_paint("<body><p>no scripts</p></body>", where="docs/x.md")
    Traceback (most recent call last):
    ...
    ValueError: docs/x.md: the page does not end with the theme's script (assets/javascripts/bundle.*.min.js); found []
    """
    tail = _TAIL.search(html)
    srcs = _SRC.findall(tail.group(0)) if tail else []
    if tail is None or not srcs or not THEME_SCRIPT.search(srcs[0]):
        raise ValueError(
            f"{where}: the page does not end with the theme's script (assets/javascripts/bundle.*.min.js); found {srcs}"
        )
    loader = _LOADER.format(srcs=json.dumps(srcs, separators=(",", ":")))
    return html[: tail.start()] + "\n" + loader + html[tail.end() :]


def scripts_started_after_paint(html: str) -> list[str]:
    """The scripts that the loader of a finished page starts, in order ([] if it has none).

    >>> page = start_scripts_after_first_paint(
    ...     '<body><script src="assets/javascripts/bundle.0a1b.min.js"></script><script src="x.js"></script></body>')
    >>> scripts_started_after_paint(page)
    ['assets/javascripts/bundle.0a1b.min.js', 'x.js']
    """
    found = _STARTED.search(html)
    return json.loads(found.group(1)) if found else []


#: The class of a list whose items, not the list, are the blocks the browser may skip (book.css, a11y.js).
UNITS = "rnnmem-units"

_EXERCISES = re.compile(r'<h2 id="exercises"[ >]')
_LIST_TAGS = re.compile(r"<(/?)(ol|ul|li)(?=[\s>])")


def exercise_list_in_units(html: str) -> str:
    """The page ``html`` with its list of exercises marked :data:`UNITS`.

    The list is the first ``<ol>`` after the heading whose id is ``exercises``
    and before the next ``<h2``; a page without that heading, or without a
    list under it, is returned as it is.

    Each of its items (not those of a list inside it) gets its number as ``data-n``.

    >>> page = ('<h2 id="exercises">Exercises</h2><p>Try these.</p><ol>\\n<li>One<ul><li>a</li></ul></li>\\n'
    ...         '<li>Two</li>\\n</ol><h2 id="x">X</h2><ol><li>Not this</li></ol>')
    >>> print(exercise_list_in_units(page))
    <h2 id="exercises">Exercises</h2><p>Try these.</p><ol class="rnnmem-units">
    <li data-n="1">One<ul><li>a</li></ul></li>
    <li data-n="2">Two</li>
    </ol><h2 id="x">X</h2><ol><li>Not this</li></ol>
    >>> exercise_list_in_units('<h2 id="exercises">E</h2><p>None yet.</p><h2 id="r">R</h2><ol>')
    '<h2 id="exercises">E</h2><p>None yet.</p><h2 id="r">R</h2><ol>'
    """
    heading = _EXERCISES.search(html)
    if heading is None:
        return html
    start = heading.end()
    end = html.find("<h2", start)
    at = html.find("<ol>", start, end if end >= 0 else len(html))
    if at < 0:
        return html
    # Each item of the list (not of a list inside it) carries its number: a block the browser may
    # skip clips what it draws outside its box, the list's own marker among them, so the
    # stylesheet draws the number inside the item from data-n.
    out, depth, n, pos = [html[:at], f'<ol class="{UNITS}">'], 0, 0, at + len("<ol>")
    for tag in _LIST_TAGS.finditer(html, pos):
        closing, name = tag.group(1), tag.group(2)
        if name == "li" and not closing and depth == 0:
            n += 1
            out.append(html[pos : tag.end()] + f' data-n="{n}"')
            pos = tag.end()
        elif name in ("ol", "ul"):
            if closing and depth == 0:
                break
            depth += -1 if closing else 1
    out.append(html[pos:])
    return "".join(out)


def resolve_links_in_head(html: str, *, where: str = "page") -> str:
    """The page ``html`` with :data:`RESOLVE_LINKS` as the last element of its ``<head>``.

    A page without ``</head>`` raises ``ValueError`` naming ``where``.

    >>> print(resolve_links_in_head('<head><link rel="stylesheet" href="a.css"></head><body></body>'))
    ... # doctest: +ELLIPSIS
    <head><link rel="stylesheet" href="a.css"><script>document.querySelectorAll("link[href]")...</script></head><body></body>
    >>> resolve_links_in_head("<body></body>", where="404.html")
    Traceback (most recent call last):
    ...
    ValueError: 404.html: the page has no </head> to end with the script that resolves its links
    """
    end = html.find("</head>")
    if end < 0:
        raise ValueError(f"{where}: the page has no </head> to end with the script that resolves its links")
    return html[:end] + RESOLVE_LINKS + html[end:]

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
draws them one by one while the browser is idle.
"""

from __future__ import annotations

import json
import re

__all__ = ["THEME_SCRIPT", "scripts_started_after_paint", "start_scripts_after_first_paint"]

#: The theme's own script, by the name Material gives it.
THEME_SCRIPT = re.compile(r"assets/javascripts/bundle\.[0-9a-f]+\.min\.js$")
#: The scripts Material writes at the end of <body>: its bundle, then extra_javascript.
_TAIL = re.compile(r'(?:\s*<script src="(?P<src>[^"<>]+)"></script>)+\s*(?=</body>)')
_SRC = re.compile(r'<script src="([^"<>]+)"></script>')
_STARTED = re.compile(r'<script>\(function \(\) \{\s*var scripts = (\[[^\]]*\]),')

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
    if not srcs or not THEME_SCRIPT.search(srcs[0]):
        raise ValueError(f"{where}: the page does not end with the theme's script "
                         f"(assets/javascripts/bundle.*.min.js); found {srcs}")
    loader = _LOADER.format(srcs=json.dumps(srcs, separators=(",", ":")))
    return html[:tail.start()] + "\n" + loader + html[tail.end():]


def scripts_started_after_paint(html: str) -> list[str]:
    """The scripts that the loader of a finished page starts, in order ([] if it has none).

    >>> page = start_scripts_after_first_paint(
    ...     '<body><script src="assets/javascripts/bundle.0a1b.min.js"></script><script src="x.js"></script></body>')
    >>> scripts_started_after_paint(page)
    ['assets/javascripts/bundle.0a1b.min.js', 'x.js']
    """
    found = _STARTED.search(html)
    return json.loads(found.group(1)) if found else []

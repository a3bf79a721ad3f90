"""One look for every figure, and SVG output that is the same byte for byte.

Figures are drawn on a transparent background with mid-tone colours, so they
read on the light page; on the dark page the site's stylesheet inverts them
(``filter: invert(...) hue-rotate(180deg)``), which keeps hues and turns the
dark ink light. Text is drawn as paths, so no font is requested by the page.

Every figure has the same width, :data:`WIDTH` inches, and the site shows every
figure at the same width: one scale for all, so a label of :data:`TEXT_PT`
points reads the same size in every figure (at least 11 CSS pixels on a
390-pixel phone, where the figure fills the text column; about the size of the
running text on a desktop). On a desktop, a figure whose panels stand side by
side and a diagram show a second rendition, :data:`WIDE` inches wide, at that
same scale (:func:`to_svgs`): the content column's full width, with text of the
same size. A builder chooses a figure's height and its panels
(stacked rather than side by side when there are more than two); text it asks
to be smaller than :data:`TEXT_PT` is drawn at :data:`TEXT_PT`. The saved SVG
records the size of its smallest text (``data-text-pt`` on its root element),
which the built-site checks turn into pixels on the page.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # matplotlib is imported only when a figure is really drawn
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

#: Colour cycle: distinguishable in colour-blind safe pairs, mid-tone for both palettes.
PALETTE = ["#1f6fb2", "#d9731a", "#2a9d55", "#c23b6b", "#7b5cc4", "#8c6d2c"]
INK = "#333333"
GRID = "#b0b0b0"

#: Width of every figure, in inches (4.8 in = 345.6 pt; the site shows it at one width).
WIDTH = 4.8
#: The size of the smallest text in a figure, in points: tick labels, legends, annotations.
TEXT_PT = 11.0
#: Width, in inches, of a figure's desktop rendition (:func:`to_svgs`): the content column of a
#: desktop page at the scale every figure is shown at (:data:`WIDTH` inches to 24rem, this to 34rem).
WIDE = 6.8
#: The tallest a desktop rendition may be, in inches (28rem on the page): about a laptop screen's
#: height, so a figure shown wider is still seen whole.
WIDE_MAX_HEIGHT = 5.6
#: The label (``Figure.get_label``) of a figure that holds a diagram (rnnmem.site.diagrams).
DIAGRAM = "rnnmem-diagram"
#: The label of a figure whose text is its content (samples of generated text): its SVG writes characters as
#: ``<text>`` in the book's fonts, with the generic family after each, instead of one outline per glyph.
TEXT_FIGURE = "rnnmem-text"
#: The generic family written after a font a :data:`TEXT_FIGURE` names alone (matplotlib already follows the
#: book's sans-serif font with its fallbacks and ``sans-serif``).
GENERIC_FAMILIES = {"DejaVu Sans Mono": "monospace"}

RC: dict[RcKeyType, Any] = {
    "svg.hashsalt": "rnnmem",
    "svg.fonttype": "path",
    "svg.image_inline": True,
    "figure.figsize": (WIDTH, 3.2),
    "figure.dpi": 100,
    "figure.facecolor": "none",
    "axes.facecolor": "none",
    "savefig.facecolor": "none",
    "savefig.transparent": True,
    "font.family": "DejaVu Sans",
    "font.size": TEXT_PT,
    "axes.edgecolor": INK,
    "axes.labelcolor": INK,
    "axes.titlesize": TEXT_PT,
    "axes.labelsize": TEXT_PT,
    "xtick.labelsize": TEXT_PT,
    "ytick.labelsize": TEXT_PT,
    "legend.fontsize": TEXT_PT,
    "legend.title_fontsize": TEXT_PT,
    "figure.titlesize": TEXT_PT,
    "axes.grid": True,
    "grid.color": GRID,
    "grid.linewidth": 0.5,
    "grid.alpha": 0.6,
    "xtick.color": INK,
    "ytick.color": INK,
    "text.color": INK,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "path.simplify": True,
}


@contextmanager
def style() -> Iterator[None]:
    """Apply the book's rcParams for the duration of one figure.

    It leaves matplotlib's backend alone, so that a notebook that draws under it
    (the site's, or one in Colab) still shows its plot inline; the site's figures are
    drawn off screen by :func:`offscreen` instead.
    """
    import matplotlib
    from matplotlib.rcsetup import cycler

    with matplotlib.rc_context({**RC, "axes.prop_cycle": cycler(color=PALETTE)}):
        yield


def offscreen() -> None:
    """Draw with matplotlib's Agg backend: the site's figures are files, never windows.

    Called by the figure builders before they draw (:func:`new_figure`), never at
    import or by :func:`style`: switching the backend there would take the inline
    plots from a notebook that uses the book's style.
    """
    import matplotlib

    if matplotlib.get_backend().lower() != "agg":
        matplotlib.use("Agg")


def new_figure(ncols: int = 1, nrows: int = 1, *, height: float | None = None, **kwargs):
    """``plt.subplots`` under the book's style: returns ``(fig, axes)``.

    The figure is :data:`WIDTH` inches wide; ``height`` (inches) sets its height.
    ``figsize`` is accepted when its width is :data:`WIDTH`, so that every figure
    is shown at the same scale.

    >>> fig, ax = new_figure(height=2.5)
    >>> [float(x) for x in fig.get_size_inches()]
    [4.8, 2.5]
    >>> new_figure(figsize=(6.4, 3.6))
    Traceback (most recent call last):
    ValueError: figsize=(6.4, 3.6): every figure is WIDTH=4.8 inches wide; give its height as height=3.6
    """
    import matplotlib.pyplot as plt

    figsize = kwargs.pop("figsize", None)
    if figsize is not None:
        if height is not None:
            raise ValueError(f"figsize={figsize!r} and height={height!r}: give the height only")
        if abs(float(figsize[0]) - WIDTH) > 1e-9:
            raise ValueError(
                f"figsize={tuple(figsize)!r}: every figure is WIDTH={WIDTH} inches wide; "
                f"give its height as height={figsize[1]}"
            )
        height = float(figsize[1])
    if height is not None and not (0 < height <= 3 * WIDTH):
        raise ValueError(f"height={height!r}: must be a figure height in inches, above 0 and at most {3 * WIDTH}")
    offscreen()
    with style():
        size = (WIDTH, height if height is not None else RC["figure.figsize"][1])
        fig, axes = plt.subplots(nrows, ncols, layout="constrained", figsize=size, **kwargs)
    return fig, axes


def raise_small_text(fig: Figure, floor: float = TEXT_PT) -> None:
    """Draw every text of ``fig`` smaller than ``floor`` points at ``floor`` points (tick labels included).

    Legends lose their frame too, as in the book's style, also those a builder
    made outside it (``fig.legend`` after :func:`new_figure` has returned).

    >>> fig, ax = new_figure()
    >>> _ = ax.set_title("small", fontsize=7)
    >>> raise_small_text(fig)
    >>> ax.title.get_fontsize()
    11.0
    """
    from matplotlib.text import Text

    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes)]:
        if legend is not None:
            legend.set_frame_on(False)
    ticks: tuple[tuple[Literal["x", "y"], Literal["major", "minor"]], ...] = (
        ("x", "major"),
        ("x", "minor"),
        ("y", "major"),
        ("y", "minor"),
    )
    for ax in fig.axes:
        for axis, which in ticks:
            labels = getattr(ax, f"get_{axis}ticklabels")(which=which)
            if any(label.get_fontsize() < floor for label in labels):
                ax.tick_params(axis=axis, which=which, labelsize=floor)
    for text in fig.findobj(Text):
        if float(text.get_fontsize()) < floor:  # in points (the stub also allows a size name)
            text.set_fontsize(floor)


#: Contrast (WCAG 2) that every text of a figure has with the white page; on the dark page the
#: inverted figure keeps it (checked in the browser by tests/built_site/test_fit.py).
TEXT_CONTRAST = 4.5


def contrast_on_white(colour) -> float:
    """WCAG 2 contrast ratio of a matplotlib colour with white (1 to 21).

    >>> round(contrast_on_white(INK), 2), round(contrast_on_white(PALETTE[1]), 2)
    (12.63, 3.27)
    """
    from matplotlib.colors import to_rgb

    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(colour)]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return 1.05 / (luminance + 0.05)


def legible_colour(colour, least: float = TEXT_CONTRAST) -> str:
    """``colour`` as a hex string, darkened (same hue and saturation, less value) until its contrast with
    white is at least ``least``; a colour that already has it is returned unchanged.

    >>> legible_colour(INK), legible_colour(PALETTE[1])
    ('#333333', '#b45f16')
    >>> round(contrast_on_white(legible_colour(PALETTE[1])), 2)
    4.58
    """
    from matplotlib.colors import to_hex, to_rgb

    r, g, b = to_rgb(colour)
    scale = 1.0
    while contrast_on_white((r * scale, g * scale, b * scale)) < least:
        scale -= 0.01
    return to_hex((r * scale, g * scale, b * scale))


def legible_text(fig: Figure, least: float = TEXT_CONTRAST) -> None:
    """Draw every text of ``fig`` whose colour is too light to read on white (a series colour used as a
    label) in a darker shade of the same colour: :func:`legible_colour`.

    >>> fig, ax = new_figure()
    >>> label = ax.text(0, 0, "f = 0.9", color=PALETTE[1])
    >>> legible_text(fig)
    >>> label.get_color()
    '#b45f16'
    """
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        if text.get_text().strip() and contrast_on_white(text.get_color()) < least:
            text.set_color(legible_colour(text.get_color(), least))


def smallest_text(fig: Figure) -> float:
    """The size in points of the smallest visible, non-empty text of a drawn figure (0 when it has none).

    >>> fig, ax = new_figure()
    >>> _ = ax.set_xlabel("steps", fontsize=14)
    >>> fig.canvas.draw()
    >>> smallest_text(fig)   # the tick labels
    11.0
    """
    from matplotlib.text import Text

    sizes = [
        t.get_fontsize()
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and t.get_figure() is not None
    ]
    return float(min(sizes)) if sizes else 0.0


#: At most this many significant digits in a figure's labels and annotations (tick labels excepted).
LABEL_DIGITS = 4

_E_NUMBER = re.compile(r"\d(?:\.\d*)?[eE][-+]?\d")
_LABEL_NUMBER = re.compile(r"(?<![\w.^{])\d+(?:\.\d+)?(?![\w}])")


def _significant(number: str) -> int:
    digits = number.replace(".", "").lstrip("0")
    return len(digits) if "." in number else len(number.rstrip("0") or "0")


def label_problems(fig: Figure) -> list[str]:
    """What a drawn figure's texts write against the book's number style: e-notation anywhere, and in
    labels and annotations (not tick labels) a number of more than :data:`LABEL_DIGITS` significant
    digits or with padding zeros (three or more decimals ending in 0).

    >>> fig, ax = new_figure()
    >>> _ = ax.annotate("0.739738", (0, 0)), ax.annotate("8.9e-16 at step 50", (0, 0)), ax.set_title("f = 0.9")
    >>> label_problems(fig)
    ["'0.739738': 6 significant digits (at most 4)", "'8.9e-16 at step 50': e-notation"]
    """
    from matplotlib.text import Text

    ticks = {
        id(label) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis) for label in [*axis.get_ticklabels(which="both")]
    }
    problems = []
    for text in fig.findobj(Text):
        words = text.get_text()
        if not words.strip() or not text.get_visible():
            continue
        if _E_NUMBER.search(words):
            problems.append(f"{words!r}: e-notation")
            continue
        if id(text) in ticks:
            continue
        plain = re.sub(r"\\[a-zA-Z]+", " ", words)
        for match in _LABEL_NUMBER.finditer(plain):
            number = match.group()
            if _significant(number) > LABEL_DIGITS and "." in number:
                problems.append(f"{words!r}: {_significant(number)} significant digits (at most {LABEL_DIGITS})")
                break
            if "." in number and len(number.split(".")[1]) >= 3 and number.endswith("0"):
                problems.append(f"{words!r}: padding zeros in {number}")
                break
    return problems


def to_svg(fig: Figure) -> bytes:
    """Save a figure as deterministic SVG (no date, fixed ids) and close it.

    Text below :data:`TEXT_PT` is raised to it first, and text too light to read on
    white darkened (:func:`legible_text`); the root ``<svg>`` element
    records the smallest text drawn as ``data-text-pt`` (points).
    """
    import matplotlib.pyplot as plt

    try:
        return _svg(fig)
    finally:
        plt.close(fig)


def side_by_side(fig: Figure) -> bool:
    """Whether a figure has panels standing side by side: two of its axes, each at least a
    sixth of the figure wide (a colour bar is narrower), whose horizontal extents do not overlap.
    Call it after the figure is drawn (constrained layout places the axes when it draws)."""
    boxes = [ax.get_position() for ax in fig.axes if ax.get_visible() and ax.get_position().width >= 1 / 6]
    return any(a.x1 <= b.x0 + 1e-9 for a in boxes for b in boxes if a is not b)


def wide_size(fig: Figure) -> tuple[float, float] | None:
    """The size, in inches, of a figure's desktop rendition, or None when it has none.

    A figure whose panels stand side by side is drawn again :data:`WIDE` inches wide at its
    height: its panels widen, its text keeps its size. A diagram (labelled :data:`DIAGRAM`)
    is drawn again scaled by ``WIDE / WIDTH`` in both directions: its shapes grow around text
    of the same size. Neither when the rendition would be taller than :data:`WIDE_MAX_HEIGHT`.
    A figure with one column of panels keeps the column's width on every screen.
    """
    width, height = (float(v) for v in fig.get_size_inches())
    if fig.get_label() == DIAGRAM:
        size = (WIDE, height * WIDE / width)
    elif side_by_side(fig):
        size = (WIDE, height)
    else:
        return None
    return size if size[1] <= WIDE_MAX_HEIGHT + 1e-9 else None


def to_svgs(fig: Figure) -> tuple[bytes, bytes | None]:
    """A figure as SVG at :data:`WIDTH` inches (every screen), and its desktop rendition
    (:func:`wide_size`) or None; closes the figure. Both follow :func:`to_svg`'s rules."""
    import matplotlib.pyplot as plt

    try:
        narrow = _svg(fig)
        size = wide_size(fig)
        if size is None:
            return narrow, None
        fig.set_size_inches(*size)
        return narrow, _svg(fig)
    finally:
        plt.close(fig)


def _svg(fig: Figure) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    as_text = fig.get_label() == TEXT_FIGURE
    with style(), plt.rc_context({"svg.fonttype": "none"} if as_text else {}):
        raise_small_text(fig)
        legible_text(fig)
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    problems = label_problems(fig)
    if problems:
        raise ValueError(
            "a figure's labels must write numbers as the book does (rnnmem.site.placeholders.significant): "
            + "; ".join(problems)
        )
    smallest = smallest_text(fig)
    data = buf.getvalue()
    if as_text:
        data = _with_generic_families(data)
    if b"<path" not in data and b"<use" not in data:
        raise ValueError("the figure drew nothing: an SVG without a single path")
    if smallest:
        data = data.replace(b"<svg ", b'<svg data-text-pt="%s" ' % f"{smallest:g}".encode(), 1)
    return compact_svg(data)


_METADATA = re.compile(rb"\s*<metadata>.*?</metadata>", re.S)
_PATH_DATA = re.compile(rb' d="([^"]*)"')
_PLACE = re.compile(rb' (x|y)="(-?\d+\.\d+)"')
_DECIMAL = re.compile(rb"-?\d+\.\d+")
_SPACE = re.compile(rb"\s+")


def _hundredth(number: re.Match[bytes]) -> bytes:
    text = b"%.2f" % float(number.group())
    text = text.rstrip(b"0").rstrip(b".")
    return b"0" if text == b"-0" else text


def compact_svg(data: bytes) -> bytes:
    """Matplotlib's SVG made smaller, drawing the same: path coordinates to 1/100 pt, no metadata block.

    Matplotlib writes every coordinate of a path (``d``) to six decimals and each
    command on its own line; a hundredth of a point is far below a pixel at any
    size the site shows a figure, so the path data is rounded to it and written on one
    line; so are the places (``x``, ``y``) where a marker or a glyph is put (``<use>``).
    Transforms (a glyph's scale) and styles are left exactly as drawn.
    The RDF ``<metadata>`` block says only that the file is an SVG image.

    >>> compact_svg(b'<svg><metadata><x/></metadata><path d="M 1.234567 2 \\nL -0.001 10.5 \\nz\\n"/></svg>')
    b'<svg><path d="M 1.23 2 L 0 10.5 z"/></svg>'
    >>> compact_svg(b'<use xlink:href="#m1" x="66.367974" y="-0.001" style="fill: #333333"/>')
    b'<use xlink:href="#m1" x="66.37" y="0" style="fill: #333333"/>'
    """
    data = _METADATA.sub(b"", data, count=1)
    data = _PLACE.sub(lambda m: b" " + m.group(1) + b'="' + _DECIMAL.sub(_hundredth, m.group(2)) + b'"', data)
    return _PATH_DATA.sub(
        lambda m: b' d="' + _SPACE.sub(b" ", _DECIMAL.sub(_hundredth, m.group(1))).strip() + b'"', data
    )


def _with_generic_families(svg: bytes) -> bytes:
    """The SVG of a :data:`TEXT_FIGURE` with each font it names followed by its generic family
    (:data:`GENERIC_FAMILIES`), so that a reader without the font sees the same kind of letters.

    >>> _with_generic_families(b"font-family: 'DejaVu Sans Mono'").decode()
    "font-family: 'DejaVu Sans Mono', monospace"
    """
    for font, generic in GENERIC_FAMILIES.items():
        svg = svg.replace(f"'{font}'".encode(), f"'{font}', {generic}".encode())
    return svg

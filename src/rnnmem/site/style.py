"""One look for every figure, and SVG output that is the same byte for byte.

Figures are drawn on a transparent background with mid-tone colours, so they
read on the light page; on the dark page the site's stylesheet inverts them
(``filter: invert(...) hue-rotate(180deg)``), which keeps hues and turns the
dark ink light. Text is drawn as paths, so no font is requested by the page.
"""

from __future__ import annotations

import io
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # matplotlib is imported only when a figure is really drawn
    from matplotlib.figure import Figure

#: Colour cycle: distinguishable in colour-blind safe pairs, mid-tone for both palettes.
PALETTE = ["#1f6fb2", "#d9731a", "#2a9d55", "#c23b6b", "#7b5cc4", "#8c6d2c"]
INK = "#333333"
GRID = "#b0b0b0"

RC = {
    "svg.hashsalt": "rnnmem",
    "svg.fonttype": "path",
    "svg.image_inline": True,
    "figure.figsize": (6.4, 3.6),
    "figure.dpi": 100,
    "figure.facecolor": "none",
    "axes.facecolor": "none",
    "savefig.facecolor": "none",
    "savefig.transparent": True,
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.edgecolor": INK,
    "axes.labelcolor": INK,
    "axes.titlesize": 11,
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
    """Apply the book's rcParams for the duration of one figure."""
    import matplotlib

    matplotlib.use("Agg")
    with matplotlib.rc_context({**RC, "axes.prop_cycle": matplotlib.cycler(color=PALETTE)}):
        yield


def new_figure(ncols: int = 1, nrows: int = 1, **kwargs):
    """``plt.subplots`` under the book's style: returns ``(fig, axes)``."""
    import matplotlib.pyplot as plt

    with style():
        fig, axes = plt.subplots(nrows, ncols, layout="constrained", **kwargs)
    return fig, axes


def to_svg(fig: Figure) -> bytes:
    """Save a figure as deterministic SVG (no date, fixed ids) and close it."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    with style():
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    data = buf.getvalue()
    if b"<path" not in data and b"<use" not in data:
        raise ValueError("the figure drew nothing: an SVG without a single path")
    return data

"""A figure's desktop rendition (rnnmem.site.style.to_svgs): panels side by side and diagrams are
drawn a second time, 6.8 inches wide, with text of the same size; other figures have none."""

from __future__ import annotations

import re

import pytest

from rnnmem.site.diagrams import new_diagram_figure
from rnnmem.site.style import DIAGRAM, TEXT_PT, WIDE, WIDE_MAX_HEIGHT, WIDTH, new_figure, to_svgs, wide_size

_SIZE = re.compile(rb'<svg[^>]*\swidth="([\d.]+)pt"[^>]*\sheight="([\d.]+)pt"')
_TEXT_PT = re.compile(rb'data-text-pt="([\d.]+)"')


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def inches(svg: bytes) -> tuple[float, float]:
    match = _SIZE.search(svg[:3000])
    assert match, svg[:300]
    return tuple(round(float(v) / 72, 3) for v in match.groups())  # type: ignore[return-value]


def text_pt(svg: bytes) -> float:
    match = _TEXT_PT.search(svg[:3000])
    assert match, svg[:300]
    return float(match.group(1))


def plot(ax, label: str = "a line") -> None:
    ax.plot([0, 1, 2], [0, 1, 4], label=label)
    ax.set_xlabel("step")
    ax.legend()


def test_two_panels_side_by_side_widen_and_keep_their_height_and_their_text():
    fig, axes = new_figure(ncols=2, height=3.0)
    for ax in axes:
        plot(ax)
    narrow, wide = to_svgs(fig)
    assert wide is not None
    assert inches(narrow) == (WIDTH, 3.0) and inches(wide) == (WIDE, 3.0)
    assert text_pt(narrow) == text_pt(wide) == TEXT_PT
    # Each panel is wider in the desktop rendition: the panels took the width, the text did not.
    assert narrow != wide


@pytest.mark.parametrize("layout", [{}, {"nrows": 2, "height": 4.0}], ids=["one panel", "stacked panels"])
def test_a_figure_with_one_column_of_panels_has_no_desktop_rendition(layout):
    fig, axes = new_figure(**layout)
    for ax in [axes] if not hasattr(axes, "__len__") else axes:
        plot(ax)
    narrow, wide = to_svgs(fig)
    assert wide is None and inches(narrow)[0] == WIDTH


def test_a_colour_bar_beside_one_panel_does_not_count_as_a_second_panel():
    fig, ax = new_figure(height=3.0)
    image = ax.imshow([[0, 1], [2, 3]])
    fig.colorbar(image, ax=ax)
    assert to_svgs(fig)[1] is None


def test_a_diagram_is_scaled_in_both_directions_around_text_of_the_same_size():
    fig, ax = new_diagram_figure(WIDTH, 2.0)
    ax.add_patch(__import__("matplotlib.patches", fromlist=["Rectangle"]).Rectangle((0.2, 0.2), 0.6, 0.6))
    ax.text(0.5, 0.5, "$c_t$", fontsize=TEXT_PT, ha="center")
    ax.set_axis_off()
    assert fig.get_label() == DIAGRAM
    narrow, wide = to_svgs(fig)
    assert wide is not None
    assert inches(wide) == (WIDE, round(2.0 * WIDE / WIDTH, 3))
    assert text_pt(narrow) == text_pt(wide)


def test_no_desktop_rendition_taller_than_a_screen():
    fig, ax = new_diagram_figure(WIDTH, WIDE_MAX_HEIGHT * WIDTH / WIDE + 0.1)
    ax.plot([0, 1], [0, 1])
    assert wide_size(fig) is None
    fig, axes = new_figure(ncols=2, height=WIDE_MAX_HEIGHT + 0.5)
    for ax in axes:
        plot(ax)
    fig.canvas.draw()
    assert wide_size(fig) is None


def test_the_desktop_rendition_keeps_the_number_rule():
    fig, axes = new_figure(ncols=2, height=3.0)
    axes[0].plot([0, 1], [0, 1])
    axes[1].plot([0, 1], [0, 1])
    axes[1].annotate("0.739738", (0.5, 0.5))
    with pytest.raises(ValueError, match="0.739738"):
        to_svgs(fig)

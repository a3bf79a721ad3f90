"""The interactive figures in a real browser: moving the slider shows what rnnmem computes for that position.

Every value a widget shows was computed at build time; the script only looks it
up. This test moves each widget's slider with the keyboard and with a direct
value, reads what the page then shows, and recomputes it with rnnmem for the
bias the slider announces (its aria-valuetext).
"""

from __future__ import annotations

import re

import pytest
from test_browser import new_context  # noqa: E402  (same directory: pytest puts it on sys.path)

from rnnmem import memory

pytestmark = pytest.mark.browser


def widget_pages(site_dir) -> list[str]:
    return sorted(
        p.relative_to(site_dir).as_posix()
        for p in site_dir.rglob("*.html")
        if 'class="rnnmem-widget"' in p.read_text(encoding="utf-8")
    )


def expected(bias: float) -> dict[str, str]:
    f = float(memory.sigmoid(bias))
    return {
        "bias": f"{bias:.2f}",
        "gate": f"{f:.3f}",
        "efold": f"{float(memory.efold_horizon(f)):,.1f} steps",
        "level": f"{float(memory.horizon(f, 0.01)):,.1f} steps",
    }


def shown(page) -> tuple[float, dict[str, str], str]:
    root = page.locator('.rnnmem-widget[data-widget="forget-bias"]')
    label = root.locator("input[type=range]").get_attribute("aria-valuetext")
    value = re.match(r"b_f = (-?[\d.]+),", label)
    assert value, label
    bias = float(value.group(1))
    outputs = {o.get_attribute("data-key"): o.inner_text() for o in root.locator("output").all()}
    return bias, outputs, root.locator("polyline").get_attribute("points")


def test_the_forget_bias_slider_shows_rnnmems_values_wherever_it_is_moved(browser, site_server, site_dir):
    pages = widget_pages(site_dir)
    assert any(p.startswith("chapters/forget-bias/") for p in pages), pages
    context = new_context(browser)
    page = context.new_page()
    page.goto(site_server + "chapters/forget-bias/", wait_until="load")
    slider = page.locator('.rnnmem-widget[data-widget="forget-bias"] input[type=range]')
    slider.scroll_into_view_if_needed()
    start_bias, start_values, start_curve = shown(page)
    assert start_values == expected(start_bias)
    seen = {start_curve}
    slider.focus()
    for key, moves in (("ArrowRight", 3), ("ArrowLeft", 5), ("End", 1), ("Home", 1)):
        for _ in range(moves):
            page.keyboard.press(key)
        bias, values, curve = shown(page)
        assert values == expected(bias), (key, bias)
        seen.add(curve)
    assert bias < start_bias  # Home: the lowest bias
    slider.fill(str(int(slider.get_attribute("max")) // 2))
    bias, values, curve = shown(page)
    assert values == expected(bias)
    seen.add(curve)
    assert len(seen) >= 4  # the curve is redrawn as the slider moves
    context.close()

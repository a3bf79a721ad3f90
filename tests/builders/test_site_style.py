"""How figures and tables write numbers: at most four significant digits in a figure's labels, no
e-notation anywhere, no padding zeros (rnnmem.site.style, rnnmem.site.placeholders, rnnmem.site.tables)."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rnnmem.site.placeholders import significant
from rnnmem.site.style import LABEL_DIGITS, label_problems, new_figure, to_svg
from rnnmem.site.tables import Table, cell_value, unpadded

_SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


@pytest.fixture(autouse=True)
def _close_figures():
    """Every figure a test opens is closed after it: pyplot keeps them otherwise."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def value_of(text: str) -> float:
    """The number ``significant`` wrote, read back."""
    if " × 10" in text:
        mantissa, power = text.split(" × 10")
        return float(mantissa) * 10.0 ** int(power.translate(_SUPERSCRIPT))
    return float(text)


@given(
    st.floats(min_value=-1e12, max_value=1e12, allow_nan=False).filter(lambda x: x == 0 or abs(x) > 1e-300),
    st.integers(1, LABEL_DIGITS),
)
def test_significant_writes_no_e_notation_no_padding_and_at_most_its_digits(x, digits):
    text = significant(x, digits)
    assert "e" not in text
    mantissa = text.split(" × 10")[0].lstrip("-")
    if "." in mantissa:
        assert not mantissa.endswith("0"), text
        assert len(mantissa.replace(".", "").lstrip("0")) <= digits, text
    if " × 10" in text or abs(x) < 10**digits:
        assert math.isclose(value_of(text), x, rel_tol=10 ** (1 - digits), abs_tol=0), text


def test_significant_refuses_no_digits_through_its_format_spec():
    from rnnmem.site.placeholders import PlaceholderError, format_value

    with pytest.raises(PlaceholderError, match="sig.0"):
        format_value(0.5, "sig.0")
    assert format_value(0.739738, "sig.4") == "0.7397"


def test_a_label_with_six_digits_or_e_notation_fails_the_figure_naming_it():
    fig, ax = new_figure()
    ax.plot([0, 1], [0, 1])
    ax.annotate("0.739738", (0.5, 0.5))
    ax.annotate("8.9e-16 at step 50", (0.2, 0.2))
    with pytest.raises(ValueError, match=r"'0\.739738': 6 significant digits.*'8\.9e-16 at step 50': e-notation"):
        to_svg(fig)


@pytest.mark.parametrize(
    ("label", "problem"),
    [
        ("f = 0.500", "padding zeros in 0.500"),
        ("$b_f = 2.000$", "padding zeros in 2.000"),
        ("1.53e-05", "e-notation"),
        ("mean 12.345 steps", "5 significant digits"),
    ],
)
def test_label_problems_names_each_kind(label, problem):
    fig, ax = new_figure()
    ax.set_title(label)
    assert [p for p in label_problems(fig) if problem in p], label_problems(fig)


def test_tick_labels_and_short_labels_pass():
    fig, ax = new_figure()
    ax.plot([0.0, 0.25, 0.5], [1e-3, 1e-2, 1.0])
    ax.set_yscale("log")
    ax.set_title("f = 0.9, 2, 1000 steps, 0.7397, 10% level")
    fig.canvas.draw()
    assert label_problems(fig) == []


def test_a_table_cell_drops_padding_zeros_but_keeps_two_decimals():
    table = Table(columns=["a", "b", "c"], rows=[["0.500000", "1000.000", "[0.30, 0.47]"], [0.25, "`0.500`", "2.0"]])
    markdown = table.to_markdown()
    assert "| 0.5 | 1000 | [0.30, 0.47] |" in markdown
    assert "| 0.25 | `0.500` | 2.0 |" in markdown


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), st.integers(3, 8))
def test_unpadded_keeps_every_value(x, decimals):
    text = f"{x:.{decimals}f}"
    assert cell_value(unpadded(text)) == float(text)
    assert not re.search(r"\.\d{2,}0$", unpadded(text))

"""The figures and tables of "Following an error backward": each renders, and a bad argument is named."""

from __future__ import annotations

from pathlib import Path

from one_directive import OneDirective

from rnnmem import bptt
from rnnmem.site.builders import error_backward

PAGE = "docs/chapters/error-backward.md"
SOURCE = Path(__file__).resolve().parents[2] / PAGE


one = OneDirective(PAGE)


def test_the_worked_example_table_holds_the_example(tmp_path):
    text = one.render(tmp_path, "<!-- table: bptt_table -->")
    for cell in (
        "| 1 | 0 | 1 | -0.1875 | -0.1875 × 0 = 0 |",
        "| 2 | 1 | 0.5 | -0.375 | -0.375 × 1 = -0.375 |",
        "| 3 | 0.5 | 0.25 | -0.75 | -0.75 × 0.5 = -0.375 |",
        "= -0.75.",
    ):
        assert cell in text


def test_the_distance_table_prints_exact_powers(tmp_path):
    text = one.render(tmp_path, "<!-- table: distance_table -->")
    assert "| 16 | 0.0000152587890625 | 656.8408355712891 |" in text
    assert "| 8 | 0.00390625 | 25.62890625 |" in text


def test_the_clipping_table_keeps_and_turns_the_direction(tmp_path):
    text = one.render(tmp_path, "<!-- table: clipping_table -->")
    assert "| global norm | 1 | 10.019 | 1 | 1 |" in text
    assert "| value | 1 | 10.019 | 1.546 | 0.929 |" in text


def test_the_truncation_table_sums_to_the_gradient(tmp_path):
    text = one.render(tmp_path, "<!-- table: truncation_table -->")
    assert text.count("| cut |") == 3 and text.count("| kept |") == 3
    assert "Full gradient -0.302734375; truncated -0.181640625; missing -0.12109375." in text


def test_the_worked_table_names_the_loss_rate_delta(tmp_path):
    text = one.render(tmp_path, "<!-- table: bptt_table -->")
    assert "\\(\\delta_t = \\partial L / \\partial h_t\\)" in text and "r_t" not in text


def test_the_distance_curves_return_their_ends():
    fig, values = error_backward.distance_curves(factors=[0.5, 1.5], distances=[0, 3, 7])
    assert values == {"end": {"0.5": 0.5**7, "1.5": 1.5**7}, "edges": 7}


def test_the_truncation_grid_returns_the_counts_of_its_plans():
    fig, values = error_backward.truncation_grid(length=9, settings=[[3, 3], [2, 5]])
    for k1, k2 in ((3, 3), (2, 5)):
        plan = bptt.truncation_plan(9, k1, k2, loss_steps="all")
        assert values["pairs"][f"{k1},{k2}"] == {
            "kept": len(plan.kept),
            "cut": len(plan.cut),
            "boundaries": list(plan.boundaries),
        }
    assert values["length"] == 9

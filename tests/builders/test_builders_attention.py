"""The figures and tables of "Looking back: attention" render and report what they drew (bad arguments:
test_builder_arguments.py).

Each builder renders from a directive as the page's do, at a tiny size (two seeds, short lags, a few
updates), and what it reports is held to :mod:`rnnmem.attention_lab` and :mod:`rnnmem.attention` computed
here without the builder.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from one_directive import OneDirective

from rnnmem import attention, attention_lab, stats
from rnnmem.site.directives import DirectiveError
from rnnmem.site.render import Renderer
from rnnmem.site.tables import cell_value

PAGE = "docs/chapters/attention.md"

TINY = "lags=[2, 3] seeds=2 hidden=8 steps=20"


one = OneDirective(PAGE)


def _runs() -> dict:
    design = dataclasses.replace(attention_lab.DESIGN, hidden=8, steps=20)
    return {
        (arm, lag): attention_lab.AttentionRun(arm, lag, (0, 1), design).execute()
        for lag in (2, 3)
        for arm in attention_lab.ARMS
    }


def test_attention_success_reports_the_runs_counts_and_tests(tmp_path):
    item = Renderer(tmp_path).render(one(f'<!-- figure: attention_success {TINY} caption="c" -->'))
    assert item.content.lstrip().startswith(b"<?xml") and b"<svg" in item.content
    v = item.values
    assert v["lags"] == [2, 3] and v["seeds"] == 2 and v["longest"] == 3
    for (arm, lag), result in _runs().items():
        o = result.outcome(20)
        cell = v["arms"][arm][str(lag)]
        assert cell["k"] == o.successes and (cell["lo"], cell["hi"]) == pytest.approx(o.interval())
        assert cell["median"] == pytest.approx(o.accuracy()[1])
    for a, b in (("attention", "last"), ("uniform", "last"), ("attention", "uniform")):
        for lag in (2, 3):
            test = v["pairs"][f"{a}-{b}"][str(lag)]
            p = stats.fisher_exact(v["arms"][a][str(lag)]["k"], 2, v["arms"][b][str(lag)]["k"], 2)
            assert test["p_value"] == pytest.approx(p) and test["differ"] == (p < 0.05)


def test_attention_success_table_shows_every_cell_and_every_test(tmp_path):
    item = Renderer(tmp_path).render(one(f"<!-- table: attention_success_table {TINY} -->"))
    lines = item.content.decode().splitlines()
    v = item.values
    labels = {"last": "last state", "attention": "attention", "uniform": "uniform weights (control)"}
    for arm in attention_lab.ARMS:
        (row,) = [line for line in lines if line.startswith(f"| {labels[arm]} |")]
        cells = [c.strip() for c in row.strip("|").split("|")][1:]
        assert cells == [v["arms"][arm][str(lag)]["text"] for lag in (2, 3)]
    tests = [line for line in lines if "Fisher's *p*" in line]
    assert len(tests) == 3


def test_clue_share_figure_reports_the_shares_it_draws(tmp_path):
    item = Renderer(tmp_path).render(
        one('<!-- figure: clue_share_figure lags=[2, 6] seeds=2 hidden=4 sequences=8 caption="c" -->')
    )
    v = item.values
    for lag in (2, 6):
        for key, arm, model in (
            ("attention", "attention", "lstm:chrono"),
            ("last", "last", "lstm:chrono"),
            ("reference", "last", "lstm:1"),
        ):
            expected = attention_lab.clue_share(arm, lag, range(2), 4, sequences=8, model=model)
            assert v["share"][key][str(lag)] == pytest.approx(expected)
        assert v["inverse"][str(lag)] == pytest.approx(1 / (lag + 2))
        assert v["ratio"][str(lag)] == pytest.approx(v["share"]["attention"][str(lag)] / v["share"]["last"][str(lag)])
    assert v["ratio_min"] <= v["ratio_max"] and v["over_inverse_min"] <= v["over_inverse_max"]


def test_clue_share_figure_refuses_a_reference_that_is_not_an_lstm(tmp_path):
    with pytest.raises(DirectiveError, match="reference"):
        Renderer(tmp_path).render(
            one('<!-- figure: clue_share_figure lags=[2] seeds=1 hidden=4 reference="gru" caption="c" -->')
        )


def test_attention_profile_figure_reports_where_the_trained_readouts_look(tmp_path):
    item = Renderer(tmp_path).render(one(f'<!-- figure: attention_profile_figure {TINY} sequences=16 caption="c" -->'))
    v = item.values
    runs = _runs()
    for lag in (2, 3):
        profile = attention_lab.attention_profile(lag, range(2), 8, runs[("attention", lag)].params, sequences=16)
        T = lag + 2
        assert v["clue"][str(lag)] == pytest.approx(float(np.median(profile.weights[:, 0]) * T))
        assert v["spread"][str(lag)] == pytest.approx(float(np.median(profile.effective)) / T)
        assert 0 < v["spread"][str(lag)] <= 1 + 1e-12
    assert v["clue_min"] <= v["clue_max"]


def test_attention_memory_figure_reports_what_the_trained_states_keep_and_the_tests(tmp_path):
    item = Renderer(tmp_path).render(
        one(f'<!-- figure: attention_memory_figure {TINY} groups=3 hold=1 caption="c" -->')
    )
    assert b"<svg" in item.content
    v = item.values
    assert v["lags"] == [2, 3] and v["hold_step"] == 2 and v["sequences"] == 24
    runs = _runs()
    for lag in (2, 3):
        memory = {
            arm: attention_lab.token_memory(arm, lag, range(2), 8, runs[(arm, lag)].params, groups=3)
            for arm in attention_lab.ARMS
        }
        for point, index in (("hold", 1), ("query", lag + 1)):
            for arm in attention_lab.ARMS:
                cell = v["at"][point][str(lag)][arm]
                q1, median, q3 = stats.quartiles(memory[arm][:, index])
                assert (cell["q1"], cell["median"], cell["q3"]) == pytest.approx((q1, median, q3))
                assert cell["n"] == 2 and cell["text"] == f"{median:.2f} [{q1:.2f}, {q3:.2f}]"
            for a, b in (("attention", "last"), ("uniform", "last"), ("attention", "uniform")):
                test = v["tests"][point][str(lag)][f"{a}-{b}"]
                p = stats.mann_whitney(memory[a][:, index], memory[b][:, index]).p
                assert test["p_value"] == pytest.approx(p) and test["differ"] == (p < 0.05)
        for arm in attention_lab.ARMS:
            change = memory[arm][:, lag + 1] - memory[arm][:, 1]
            held = v["held"][str(lag)][arm]
            assert held["p_value"] == pytest.approx(stats.wilcoxon_signed_rank(change).p)
            ratio = memory[arm][:, lag + 1] / memory[arm][:, 1]
            assert held["ratio"]["median"] == pytest.approx(float(np.median(ratio)))


def test_attention_memory_figure_refuses_a_hold_past_the_query(tmp_path):
    with pytest.raises(DirectiveError, match="hold"):
        Renderer(tmp_path).render(one(f'<!-- figure: attention_memory_figure {TINY} hold=3 caption="c" -->'))


def test_attention_cost_table_shows_the_counts_of_rnnmem_attention(tmp_path):
    item = Renderer(tmp_path).render(
        one('<!-- table: attention_cost_table lengths=[10, 1000] hidden=8 input_size=3 cell="gru" -->')
    )
    rows = [line for line in item.content.decode().splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == 2
    for row, T in zip(rows, (10, 1000)):
        cells = [cell_value(c.strip().replace(",", "")) for c in row.strip("|").split("|")]
        step = attention.step_work("gru", 3, 8)
        assert cells == [
            T,
            attention.state_numbers("gru", 8),
            attention.cache_numbers(T, 8),
            step,
            attention.attention_work(T, 8),
            T * step,
            attention.total_attention_work(T, 8),
        ]
    v = item.values
    crossover = v["crossover"]
    assert attention.attention_work(crossover, 8) > v["step"] >= attention.attention_work(crossover - 1, 8)
    assert v["rows"]["1000"]["ratio"] == pytest.approx(attention.total_attention_work(1000, 8) / (1000 * v["step"]))

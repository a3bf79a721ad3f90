"""The controls of "Controls and clipping, measured" rerun at the pilot's lag: what their tables read and claim."""

from __future__ import annotations

import numpy as np
import pytest

from rnnmem import experiments as ex
from rnnmem.site.builders import memory_measured as mm

SWEEP = dict(
    models=["lstm:2", "lstm:chrono"],
    short_lags=[1, 2],
    long_lags=[2],
    seeds=3,
    hidden=4,
    budgets=[20, 40],
    threshold=0.5,
    extend_to=2,
)


@pytest.fixture
def pilot(monkeypatch):
    """The pilot rule, recorded: each call's lags and counts; it picks the last lag."""
    calls: list = []

    def last(lags, successes, n):
        calls.append((list(lags), list(successes), n))
        return lags[-1]

    monkeypatch.setattr(mm, "pilot_lag", last)
    return calls


def test_the_input_pairs_run_at_the_lag_their_pilot_picks(pilot):
    _, values = mm.input_rerun_table(neighbour_lag=1, sequences=8, **SWEEP)
    grid = mm._lab(**SWEEP)
    chrono = values["pairs"]["chrono_i0"]
    assert pilot[0] == (grid.lags("lstm:chrono", 20), grid.counts("lstm:chrono", 20), 3)
    assert chrono["lag"] == 2
    # b_f = 3 with b_i = 0 is not in the grid: its pilot is the bias sweep's b_f = 3 at the neighbour lag
    assert pilot[1][0] == [1] and values["pairs"]["lstm3_im3"]["lag"] == 1
    run = ex.RecallRun(ex.ModelSpec.parse("lstm:chrono"), 2, (0, 1, 2), mm._design(4, 0.5, 20), retire=False).execute()
    assert chrono["first"]["chrono"] == run.outcome(20).successes
    assert chrono["end"]["chrono"] == run.successes_at(20, 0.5)
    assert chrono["design1"]["lag"] == ex.CONTROL_LAG
    assert set(chrono["vs"]) >= {"first", "end", "mw_p", "mw_words"}


def test_the_dropout_rerun_measures_the_trained_biases_and_the_masked_evaluation(pilot):
    _, v = mm.dropout_rerun_table(keep=0.9, bias=2, sequences=8, **SWEEP)
    assert v["lag"] == 2 and set(v["first"]) == {
        "none",
        "carry_step",
        "carry_sequence",
        "hidden_sequence",
        "equivalent",
    }
    assert v["equivalent"] == pytest.approx(ex.dropout_equivalent_bias(2, 0.9))
    assert v["trained_bias_median"]["equivalent"] > v["trained_bias_median"]["none"]  # it started 1.8 higher
    lower, upper = v["tost"]["lower"], v["tost"]["upper"]
    assert lower <= (v["first"]["carry_sequence"] - v["first"]["equivalent"]) / 3 <= upper
    assert v["tost"]["words"] == ("equivalent" if -0.25 < lower and upper < 0.25 else "not shown equivalent")
    assert 0 <= v["masked_lower"] <= 3 and v["growth"] == pytest.approx((1 / 0.9) ** 3)


def test_a_rank_test_is_worded_by_its_level_and_its_direction():
    assert "no difference" in mm._rank_words(0.2, [1.0], [0.0])
    assert "first higher" in mm._rank_words(0.01, np.array([0.9, 1.0]), np.array([0.1, 0.2]))
    assert "first lower" in mm._rank_words(0.01, np.array([0.1, 0.2]), np.array([0.9, 1.0]))


def test_a_margin_of_a_whole_share_is_refused():
    with pytest.raises(ValueError, match="margin must be a share below 1"):
        mm.dropout_rerun_table(margin=1.5)


def test_the_sgd_sweep_gives_each_model_its_own_rate_and_chrono_its_input_gate_control(monkeypatch):
    monkeypatch.setattr(mm, "calibration_lag", lambda lags, successes, n: lags[0])
    rates = [0.1, 1.0]
    _, v = mm.sgd_rerun_table(lags=[1, 2], rates=rates, first_calibration_lag=1, sequences=8, **SWEEP)
    for key in ("lstm2", "chrono", "chrono_i0"):
        totals = [sum(v["swept"][key][f"{r:g}"].values()) for r in rates]
        assert v["rate"][key] == ex.sgd_rate(rates, totals)
        assert v["counts"][key]["lag1"] == v["swept"][key][f"{v['rate'][key]:g}"]["lag1"]
    assert v["cal_lag"] == {"lstm2": 1, "chrono": 1}
    assert v["chrono_vs"]["first"] is v["chrono_vs"][f"{v['first_rate']:g}"]
    assert v["sgd_total"] == sum(sum(v["counts"][k].values()) for k in ("lstm2", "chrono"))
    assert v["cells"] == 4 and 0 < v["reach"]["chrono"] < 1
    # every cell is read by Fisher's test and by the rank test of the accuracies; a floor is counted apart
    floors = sum(v["vs"][k][f"lag{lag}"]["kind"] == "floor" for k in ("lstm2", "chrono") for lag in (1, 2))
    assert v["floor_count"] == floors and 0 <= v["accuracy_count"] <= v["cells"]

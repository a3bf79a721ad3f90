"""The controls' design rules: the pilot's lag, the reading at the end of a budget, the trained forget biases and
the evaluation under a training-time carry mask."""

from __future__ import annotations

import numpy as np
import pytest

from rnnmem import experiments as ex
from rnnmem import lab, tasks


def test_the_pilot_picks_the_lag_nearest_one_half_within_the_band():
    assert ex.pilot_lag([4, 8, 12, 16], [20, 15, 9, 2], 20) == 12
    assert ex.pilot_lag([4, 8, 12, 16], [20, 14, 6, 0], 20) == 8  # 0.7 and 0.3: a tie, the smaller lag
    assert ex.pilot_lag([4, 8], [14, 6], 20, band=(0.3, 0.7)) == 4  # the band's ends are inside it
    assert ex.pilot_lag([4, 8], [15, 6], 20, band=(0.2, 0.8)) == 8


def test_the_pilot_refuses_a_grid_with_no_lag_in_the_band_naming_the_argument():
    with pytest.raises(ValueError, match="successes must put at least one lag's rate in the band"):
        ex.pilot_lag([4, 8, 12], [20, 15, 5], 20)
    with pytest.raises(ValueError, match="band must be two rates"):
        ex.pilot_lag([4, 8], [10, 5], 20, band=(0.6, 0.7))
    with pytest.raises(ValueError, match="successes must be one count in 0..20 per lag"):
        ex.pilot_lag([4, 8], [10], 20)
    with pytest.raises(ValueError, match="lags must be increasing"):
        ex.pilot_lag([8, 4], [10, 5], 20)


def _run(retire: bool) -> ex.RecallRun:
    design = ex.Design(hidden=4, steps=60, eval_every=10, threshold=0.3)
    return ex.RecallRun(ex.ModelSpec.parse("lstm:2"), lag=1, seeds=(0, 1, 2), design=design, retire=retire, probe=0)


def test_without_retirement_every_member_trains_the_whole_budget_and_is_read_at_its_end():
    kept, retired = _run(False).execute(), _run(True).execute()
    assert kept.success_step == retired.success_step  # the first look does not depend on retirement
    assert int(kept.eval_steps[-1]) == 60 and not np.isnan(kept.losses[:, -1]).any()
    end = kept.scores_at(60)
    assert kept.successes_at(60, 0.3) == int(np.sum(end >= 0.3))
    assert np.array_equal(kept.scores_at(35), kept.scores[:, 3])  # the last evaluation within 35 updates: 30


def test_a_dropout_run_without_retirement_trains_the_whole_budget():
    design = ex.Design(hidden=4, steps=20, eval_every=10, threshold=0.2)
    run = ex.DropoutRun("carry-sequence", 0.9, 2.0, lag=1, seeds=(0, 1), design=design, retire=False)
    assert int(run.execute().eval_steps[-1]) == 20
    with pytest.raises(ValueError, match="retire must be True or False"):
        ex.DropoutRun("none", 0.9, 2.0, lag=1, seeds=(0,), retire="no")  # type: ignore[arg-type]


def test_the_trained_forget_bias_is_the_median_of_a_members_forget_rows():
    H = 3
    params = {"bias_ih_l0": np.zeros((2, 4 * H)), "bias_hh_l0": np.zeros((2, 4 * H))}
    params["bias_ih_l0"][0, H : 2 * H] = [1.0, 2.0, 9.0]
    params["bias_hh_l0"][1, H : 2 * H] = [-1.0, 0.5, 0.5]
    params["bias_ih_l0"][:, :H] = 50.0  # the input gate's rows are not read
    assert ex.forget_biases(params, H).tolist() == [2.0, 0.5]
    with pytest.raises(ValueError, match="params must be an LSTM's with hidden=4"):
        ex.forget_biases(params, 4)


def test_evaluation_with_masks_of_ones_is_the_labs_evaluation():
    _, ens = ex._ensemble("lstm:2", 3, [0, 1], 4)
    task = tasks.recall(3, ex.ALPHABET)
    held = task.sample(ex.DESIGN.eval_size, seed=np.random.default_rng((0, 2)))
    plain = lab.evaluate(ens, task, held.inputs[:, :64], held.targets[:64])
    ones = ex.masked_accuracy(ens.params, 2.0, 3, [0, 1], 4, keep=1.0, sequences=64)
    assert np.allclose(ones, plain)
    dropped = ex.masked_accuracy(ens.params, 2.0, 3, [0, 1], 4, keep=0.5, sequences=64)
    assert dropped.shape == (2,) and np.all((0 <= dropped) & (dropped <= 1))

"""The lab's figures and tables: small runs produce what they claim, bad arguments are refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from rnnmem.site.arithmetic import arithmetic
from rnnmem.site.builders import memory_measured as mm
from rnnmem.site.directives import DirectiveError, find_directives
from rnnmem.site.render import Renderer

TINY = "seeds=2 hidden=4 steps=6 threshold=0.5"


def one(text: str):
    (d,) = find_directives(text, "docs/chapters/memory-measured.md")
    return d


def render(tmp_path, text: str) -> str:
    return Renderer(tmp_path).render(one(text)).content.decode()


def test_the_horizon_table_counts_successes_out_of_the_seeds(tmp_path):
    text = render(tmp_path, f'<!-- table: measured_horizon_table models=["rnn", "lstm:2"] lags=[1, 3] {TINY} -->')
    rows = [line.split("|")[1:-1] for line in text.splitlines()[2:] if line.startswith("| ")]
    assert [r[0].strip() for r in rows] == ["tanh RNN", "LSTM, \\(b_f = 2\\)"]
    for row in rows:
        for cell in row[4:6]:
            k, s = cell.strip().split("/")
            assert s == "2" and 0 <= int(k) <= 2
    # the LSTM's predicted horizon is that of sigma(2), computed, not typed
    assert rows[1][1].strip() == "0.881" and rows[1][3].strip() == "36.3"


def test_success_rates_are_shares_of_the_seeds():
    specs, lags, seeds, design, counts, results = mm._sweep(["gru", "lstm:chrono"], [2], 2, 4, 6, 0.5)
    for spec in specs:
        (run,) = [results[mm._run_key(spec, 2, seeds, design)]]
        assert 0 <= counts[spec][0] <= 2
        assert run["scores"].shape[0] == 2 and np.all((run["scores"] >= 0) & (run["scores"] <= 1))
        assert run["losses"].shape == (2, 6)


def test_runs_are_shared_between_figures(tmp_path, monkeypatch):
    text = f'<!-- figure: success_by_lag models=["lstm:1"] lags=[2] {TINY} caption="c" -->'
    render(tmp_path, text)
    monkeypatch.setattr(mm, "_execute", lambda key: pytest.fail(f"trained {key} again"))
    render(tmp_path / "other", f'<!-- figure: lag_learning_curves lag=2 models=["lstm:1"] {TINY} caption="c" -->')


def test_two_processes_train_what_one_does(monkeypatch):
    design = mm._design(4, 5, 0.5)
    keys = [mm._run_key(s, 3, (0, 1), design) for s in ("rnn", "lstm:0")]
    monkeypatch.setattr(mm, "_RUNS", {})
    monkeypatch.setattr(mm, "WORKERS", 2)
    pooled = mm.runs(keys)
    monkeypatch.setattr(mm, "_RUNS", {})
    monkeypatch.setattr(mm, "WORKERS", 1)
    alone = mm.runs(keys)
    for a, b in zip(pooled, alone):
        assert np.array_equal(a["losses"], b["losses"], equal_nan=True)
        assert np.array_equal(a["params"]["weight_hh_l0"], b["params"]["weight_hh_l0"])


def test_measured_horizon_is_the_longest_lag_half_the_seeds_pass():
    assert mm.measured_horizon([2, 5, 10], [3, 2, 1], 3) == 5
    assert mm.measured_horizon([2, 5, 10], [1, 0, 2], 4) == 10
    assert mm.measured_horizon([2, 5], [0, 0], 3) is None


def test_starting_factor_of_the_gates_is_sigma_of_the_bias():
    assert mm.starting_factor("lstm:2", 3, (0, 1), 8) == pytest.approx(1 / (1 + np.exp(-2.0)))
    assert 0.3 < mm.starting_factor("rnn", 3, (0, 1, 2), 16) < 0.9


def test_gradient_reach_and_bias_figures_render(tmp_path):
    assert (
        b"<path"
        in Renderer(tmp_path)
        .render(one(f'<!-- figure: gradient_reach lag=3 models=["rnn", "lstm:0"] sequences=8 {TINY} caption="c" -->'))
        .content
    )
    text = render(tmp_path, f"<!-- table: bias_updates_table biases=[0, 3] lag=2 {TINY} -->")
    assert "\\(f^{3}\\)" in text and text.count("/2 |") == 2


def test_clipping_bounds_every_step_of_gradient_descent():
    free = mm.sgd_run("rnn", 6, 0.3, None, (0,), hidden=4, batch=8, steps=5)
    clipped = mm.sgd_run("rnn", 6, 0.3, 0.01, (0,), hidden=4, batch=8, steps=5)
    assert free["losses"][0, 0] == clipped["losses"][0, 0]  # same start, same batch
    assert not np.array_equal(free["losses"][0, 1:], clipped["losses"][0, 1:])
    assert clipped["baseline"] == pytest.approx(1 / 6)


def test_a_run_whose_loss_overflows_is_reported_as_diverged():
    run = mm.sgd_run("rnn", 6, 1e12, None, (0,), hidden=4, batch=8, steps=20)
    assert run["diverged_at"][0] is not None and np.isnan(run["mse"][0])


def test_the_dropout_table_has_one_row_per_scheme(tmp_path):
    text = render(tmp_path, f"<!-- table: carry_dropout_table keep=0.5 bias=1 lag=2 {TINY} -->")
    assert "0.125" in text  # kept across the lag under fresh masks: 0.5 ** 3
    assert text.count("/2 |") == 3


@pytest.mark.parametrize(
    "text, name",
    [
        ('<!-- table: measured_horizon_table models=["lstm"] -->', "models[0]"),
        ('<!-- table: measured_horizon_table models=["lstm:x"] -->', "models[0]"),
        ("<!-- table: measured_horizon_table models=[] -->", "models"),
        ("<!-- table: measured_horizon_table lags=[0, 2] -->", "lags[0]"),
        ("<!-- table: measured_horizon_table lags=[5, 2] -->", "lags"),
        ("<!-- table: measured_horizon_table seeds=0 -->", "seeds"),
        ("<!-- table: measured_horizon_table threshold=1.5 -->", "threshold"),
        ("<!-- table: measured_horizon_table steps=0 -->", "steps"),
        ("<!-- table: measured_horizon_table hidden=-2 -->", "hidden"),
        ('<!-- figure: lag_learning_curves lag=0 caption="c" -->', "lag"),
        ('<!-- figure: gradient_reach sequences=0 caption="c" -->', "sequences"),
        ('<!-- figure: bias_updates biases=["two"] caption="c" -->', "biases[0]"),
        ('<!-- figure: clip_ladder_runs rates=[0.5, -1] caption="c" -->', "rates[1]"),
        ('<!-- figure: clip_ladder_runs clip=0 caption="c" -->', "clip"),
        ('<!-- figure: clip_ladder_runs model="cnn" caption="c" -->', "model"),
        ('<!-- figure: clip_ladder_runs length=1 caption="c" -->', "length"),
        ('<!-- figure: carry_dropout_curves keep=1.5 caption="c" -->', "keep"),
        ('<!-- figure: carry_dropout_curves bias="big" caption="c" -->', "bias"),
    ],
)
def test_a_bad_argument_fails_naming_it(tmp_path, text, name):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(text))
    assert f"{name} must" in str(info.value)


def test_the_sweep_values_are_the_table_counts():
    args = dict(models=["rnn", "lstm:0", "lstm:2"], lags=[1, 3], seeds=2, hidden=4, steps=6, threshold=0.5)
    _, values = mm.measured_horizon_table(**args)
    specs, lags, seeds, design, counts, _ = mm._sweep(args["models"], args["lags"], 2, 4, 6, 0.5)
    assert values["runs"] == 6 and values["seeds"] == 2 and values["models"] == 3
    assert values["counts"]["lstm2"]["lag3"] == counts["lstm:2"][1]
    assert values["counts"]["rnn"]["lag1"] == counts["rnn"][0]
    assert values["successes"]["lag1"] == sum(counts[s][0] for s in specs)
    learned = values["learned"]["lag3"]
    assert ("LSTM with $b_f = 2$" in learned) == (counts["lstm:2"][1] > 0)
    assert values["arithmetic"] == arithmetic() and values["arithmetic"].startswith("numpy ")


def test_the_order_of_the_lstms_is_read_from_their_counts():
    assert mm._order_words([0, 1, 3, 3]) == "follow"
    assert mm._order_words([0, 2, 1, 3]) == "do not follow"
    assert mm._join([]) == "none" and mm._join(["a"]) == "a" and mm._join(["a", "b", "c"]) == "a, b and c"


def test_a_flat_panel_never_reaches_twice_chance():
    fig, values = mm.lag_learning_curves(lag=2, models=["rnn", "lstm:2"], seeds=2, hidden=4, steps=6, threshold=0.5)
    assert values["flat"] + values["moving"] == values["panels"] == 2
    for key, best in values["best"].items():
        assert 0 <= best <= 1
    flat = [k for k, b in values["best"].items() if b < mm.FLAT]
    assert len(flat) == values["flat"]


def test_the_bias_values_give_the_share_kept_and_the_successes_in_words():
    _, values = mm.bias_updates_table(biases=[0, 3], lag=2, seeds=2, hidden=4, steps=6, threshold=0.5)
    assert values["keep"]["b3"] == pytest.approx((1 / (1 + np.exp(-3.0))) ** 3)
    assert values["total"] == values["successes"]["b0"] + values["successes"]["b3"]
    assert "of 2 at $b_f$ =" in values["by_bias"] and "3" in values["by_bias"]


def test_the_dropout_and_clipping_values_count_their_runs():
    _, drop = mm.carry_dropout_table(keep=0.5, bias=1, lag=2, seeds=2, hidden=4, steps=6, threshold=0.5)
    assert drop["survive_step"] == pytest.approx(0.125) and drop["one_in"] == 8
    assert set(drop["successes"]) == {"none", "per_step", "per_sequence"}
    _, clip = mm.clip_ladder_table(model="rnn", length=6, rates=[0.1, 1e12], clip=0.01, seeds=1, hidden=4, steps=20)
    assert clip["runs"] == 2 and clip["clipped_diverged"] == 0 and clip["free_diverged"] >= 1

"""The lab's figures and tables: small runs render what they claim, runs are shared, bad arguments are refused.

The science they draw (model specs, runs, success counts, horizons, starting
factors, the plain gradient descent runs) is tested in tests/core/test_experiments.py.
"""

from __future__ import annotations

import threading
from typing import ClassVar

import numpy as np
import pytest

from rnnmem.checks import check_arguments
from rnnmem.experiments import ModelSpec, RecallRun, Sweep
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


def test_the_sweep_trains_each_model_at_each_lag_with_the_directive_design():
    sweep, counts, results = mm._sweep(["gru", "lstm:chrono"], [2], 2, 4, 6, 0.5)
    assert (sweep.design.hidden, sweep.design.steps, sweep.design.threshold) == (4, 6, 0.5)
    assert sweep.design.batch == mm.DESIGN.batch and sweep.seeds == (0, 1)
    assert set(results) == set(sweep.runs())
    for spec in sweep.models:
        run = results[sweep.run(spec, 2)]
        assert counts[spec] == [run.successes] and 0 <= run.successes <= 2
        assert run.scores.shape[0] == 2 and np.all((run.scores >= 0) & (run.scores <= 1))
        assert run.losses.shape == (2, 6)


def test_runs_are_shared_between_figures(tmp_path, monkeypatch):
    text = f'<!-- figure: success_by_lag models=["lstm:1"] lags=[2] {TINY} caption="c" -->'
    render(tmp_path, text)
    monkeypatch.setattr(mm, "_execute", lambda run: pytest.fail(f"trained {run} again"))
    render(tmp_path / "other", f'<!-- figure: lag_learning_curves lag=2 models=["lstm:1"] {TINY} caption="c" -->')


def tiny_runs() -> list:
    design = mm._design(4, 5, 0.5)
    return [RecallRun(ModelSpec.parse(s), 3, (0, 1), design) for s in ("rnn", "lstm:0")]


def test_two_processes_train_what_one_does_even_beside_other_threads(monkeypatch):
    """The pool is started from a thread while another thread runs, as under `mkdocs serve` (its server and
    file watcher): its workers are not forked from this process, and they train what one process trains."""
    keys = tiny_runs()
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # the pool itself is under test here
    monkeypatch.setattr(mm, "_RUNS", {})
    monkeypatch.setattr(mm, "WORKERS", 2)
    assert mm.workers() == 2
    served: dict[str, list] = {}
    stop = threading.Event()
    watcher = threading.Thread(target=stop.wait, name="watcher", daemon=True)
    builder = threading.Thread(target=lambda: served.setdefault("runs", mm.runs(keys)), name="build")
    watcher.start()
    try:
        builder.start()
        builder.join(timeout=300)
    finally:
        stop.set()
    assert "runs" in served, "the pooled runs raised or did not finish (see the thread's traceback above)"
    monkeypatch.setattr(mm, "_RUNS", {})
    monkeypatch.setattr(mm, "WORKERS", 1)
    alone = mm.runs(keys)
    for a, b in zip(served["runs"], alone):
        assert np.array_equal(a.losses, b.losses, equal_nan=True)
        assert np.array_equal(a.params["weight_hh_l0"], b.params["weight_hh_l0"])


class RecordingPool:
    """Stands in for ProcessPoolExecutor: records how it was asked to start its processes, runs here."""

    started: ClassVar[list[tuple[int, str]]] = []

    def __init__(self, processes, mp_context, initializer):
        RecordingPool.started.append((processes, mp_context.get_start_method()))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def map(self, func, items):
        return map(func, items)


@pytest.fixture
def recorded(monkeypatch):
    """runs() with two workers allowed, a recording pool, and runs that are named, not trained."""
    import concurrent.futures

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", RecordingPool)
    monkeypatch.setattr(RecordingPool, "started", [])
    monkeypatch.setattr(mm, "_RUNS", {})
    monkeypatch.setattr(mm, "WORKERS", 2)
    trained: list = []

    def execute(run):
        trained.append(run)
        return ("result of", run)

    monkeypatch.setattr(mm, "_execute", execute)
    return trained


def test_inside_a_pytest_xdist_worker_the_runs_train_in_this_process(monkeypatch, recorded):
    keys = tiny_runs()
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    assert mm.workers() == 1
    assert mm.runs(keys) == [("result of", k) for k in keys]
    assert RecordingPool.started == [] and sorted(map(repr, recorded)) == sorted(map(repr, keys))
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    monkeypatch.setattr(mm, "_RUNS", {})
    assert mm.workers() == 2 and mm.runs(keys) == [("result of", k) for k in keys]
    assert [n for n, _ in RecordingPool.started] == [2], "outside pytest-xdist the two runs share a pool"


def test_the_pool_never_forks_this_process(monkeypatch, recorded):
    import multiprocessing

    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    mm.runs(tiny_runs())
    ((processes, method),) = RecordingPool.started
    expected = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    assert (processes, method) == (2, expected)
    assert mm.pool_context().get_start_method() != "fork"


def test_gradient_reach_and_bias_figures_render(tmp_path):
    assert (
        b"<path"
        in Renderer(tmp_path)
        .render(one(f'<!-- figure: gradient_reach lag=3 models=["rnn", "lstm:0"] sequences=8 {TINY} caption="c" -->'))
        .content
    )
    text = render(tmp_path, f"<!-- table: bias_updates_table biases=[0, 3] lag=2 {TINY} -->")
    assert "\\(f^{3}\\)" in text and text.count("/2 |") == 2


def test_the_dropout_table_has_one_row_per_scheme(tmp_path):
    text = render(tmp_path, f"<!-- table: carry_dropout_table keep=0.5 bias=1 lag=2 {TINY} -->")
    assert "0.125" in text  # kept across the lag under fresh masks: 0.5 ** 3
    assert text.count("/2 |") == 3


@pytest.mark.parametrize(
    "builder, args, name",
    [
        (mm.measured_horizon_table, {"models": ["lstm:x"]}, "models[0]"),
        (mm.measured_horizon_table, {"models": ["gru:1"]}, "models[0]"),
        (mm.measured_horizon_table, {"models": []}, "models"),
        (mm.measured_horizon_table, {"lags": [0, 2]}, "lags[0]"),
        (mm.measured_horizon_table, {"lags": [5, 2]}, "lags"),
        (mm.measured_horizon_table, {"seeds": 0}, "seeds"),
        (mm.measured_horizon_table, {"threshold": 1.5}, "threshold"),
        (mm.measured_horizon_table, {"steps": 0}, "steps"),
        (mm.measured_horizon_table, {"hidden": -2}, "hidden"),
        (mm.lag_learning_curves, {"lag": 0}, "lag"),
        (mm.gradient_reach, {"sequences": 0}, "sequences"),
        (mm.bias_updates, {"biases": ["two"]}, "biases[0]"),
        (mm.clip_ladder_runs, {"rates": [0.5, -1]}, "rates[1]"),
        (mm.clip_ladder_runs, {"clip": 0}, "clip"),
        (mm.clip_ladder_table, {"model": "cnn"}, "model"),
        (mm.clip_ladder_runs, {"length": 1}, "length"),
        (mm.carry_dropout_curves, {"keep": 1.5}, "keep"),
        (mm.carry_dropout_table, {"bias": "big"}, "bias"),
    ],
)
def test_a_bad_argument_fails_naming_it(builder, args, name):
    with pytest.raises(ValueError) as info:
        check_arguments(builder, args)
    assert str(info.value).startswith(f"{name} must")


def test_the_signature_rules_pass_specs_as_written_and_whole_numbers_as_ints():
    args = check_arguments(mm.success_by_lag, {"models": ["lstm:2.0", "rnn"], "lags": (1, 3.0), "seeds": 2.0})
    assert args == {"models": ["lstm:2.0", "rnn"], "lags": [1, 3], "seeds": 2}
    assert isinstance(args["seeds"], int) and all(isinstance(lag, int) for lag in args["lags"])


@pytest.mark.parametrize(
    "text, name",
    [
        ('<!-- table: measured_horizon_table models=["lstm:x"] -->', "models[0]"),
        ('<!-- figure: clip_ladder_runs length=1 caption="c" -->', "length"),
    ],
)
def test_a_bad_argument_fails_the_build_naming_it(tmp_path, text, name):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(text))
    assert f"{name} must" in str(info.value)


def test_the_sweep_values_are_the_table_counts():
    args = dict(models=["rnn", "lstm:0", "lstm:2"], lags=[1, 3], seeds=2, hidden=4, steps=6, threshold=0.5)
    _, values = mm.measured_horizon_table(**args)
    sweep, counts, _ = mm._sweep(args["models"], args["lags"], 2, 4, 6, 0.5)
    lstm2 = ModelSpec("lstm", 2.0)
    assert values["runs"] == 6 and values["seeds"] == 2 and values["models"] == 3
    assert values["counts"]["lstm2"]["lag3"] == counts[lstm2][1]
    assert values["counts"]["rnn"]["lag1"] == counts[ModelSpec("rnn")][0]
    assert values["successes"]["lag1"] == sum(counts[s][0] for s in sweep.models)
    learned = values["learned"]["lag3"]
    assert ("LSTM with $b_f = 2$" in learned) == (counts[lstm2][1] > 0)
    assert values["arithmetic"] == arithmetic() and values["arithmetic"].startswith("numpy ")


def test_the_order_of_the_lstms_is_read_from_their_counts():
    assert mm._order_words([0, 1, 3, 3]) == "follow"
    assert mm._order_words([0, 2, 1, 3]) == "do not follow"
    assert mm._join([]) == "none" and mm._join(["a"]) == "a" and mm._join(["a", "b", "c"]) == "a, b and c"


def test_every_model_spec_has_a_label_and_a_name_in_prose():
    words = {
        "rnn": ("tanh RNN", "the tanh RNN"),
        "gru": ("GRU", "the GRU"),
        "lstm": ("LSTM, default draw", "the LSTM with PyTorch's draw"),
        "lstm:1.5": ("LSTM, $b_f = 1.5$", "the LSTM with $b_f = 1.5$"),
        "lstm:chrono": ("LSTM, chrono", "the chrono LSTM"),
    }
    for text, (label, prose) in words.items():
        spec = ModelSpec.parse(text)
        assert (mm._label(spec), mm._prose(spec)) == (label, prose)
    assert mm._label(ModelSpec.parse("lstm:2"), tex=True) == "LSTM, \\(b_f = 2\\)"


def test_a_flat_panel_never_reaches_twice_chance():
    fig, values = mm.lag_learning_curves(lag=2, models=["rnn", "lstm:2"], seeds=2, hidden=4, steps=6, threshold=0.5)
    assert values["flat"] + values["moving"] == values["panels"] == 2
    for best in values["best"].values():
        assert 0 <= best <= 1
    flat = [k for k, b in values["best"].items() if b < mm.FLAT]
    assert len(flat) == values["flat"]


def test_the_bias_values_give_the_share_kept_and_the_successes_in_words():
    _, values = mm.bias_updates_table(biases=[0, 3], lag=2, seeds=2, hidden=4, steps=6, threshold=0.5)
    assert values["keep"]["b3"] == pytest.approx((1 / (1 + np.exp(-3.0))) ** 3)
    assert values["total"] == values["successes"]["b0"] + values["successes"]["b3"]
    assert "of 2 at $b_f$ =" in values["by_bias"] and "3" in values["by_bias"]
    assert values["first"] == 0.0 and isinstance(values["first"], float)


def test_the_dropout_and_clipping_values_count_their_runs():
    _, drop = mm.carry_dropout_table(keep=0.5, bias=1, lag=2, seeds=2, hidden=4, steps=6, threshold=0.5)
    assert drop["survive_step"] == pytest.approx(0.125) and drop["one_in"] == 8
    assert set(drop["successes"]) == {"none", "per_step", "per_sequence"}
    _, clip = mm.clip_ladder_table(model="rnn", length=6, rates=[0.1, 1e12], clip=0.01, seeds=1, hidden=4, steps=20)
    assert clip["runs"] == 2 and clip["clipped_diverged"] == 0 and clip["free_diverged"] >= 1
    assert clip["rate"] == clip["first_free_diverged"] == 1e12


def test_a_sweep_over_the_same_models_reuses_the_same_runs():
    a = Sweep(["lstm:1", "rnn"], [2, 3], (0, 1))  # type: ignore[arg-type]  # texts and lists, converted on purpose
    b = Sweep([ModelSpec("lstm", 1.0), "rnn"], (2, 3), [0, 1])  # type: ignore[arg-type]  # a text and a list, converted on purpose
    assert a.runs() == b.runs() and {hash(r) for r in a.runs()} == {hash(r) for r in b.runs()}

"""The lab's figures and tables: small runs render what they claim, runs are shared, bad arguments are refused.

The science they draw (model specs, runs, success counts, horizons, starting
factors, the plain gradient descent runs) is tested in tests/core/test_experiments.py.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import typing

import numpy as np
import pytest
from one_directive import OneDirective

from rnnmem import memory, stats
from rnnmem.checks import check_arguments
from rnnmem.experiments import ModelSpec, RecallRun, Sweep
from rnnmem.site import comparisons, labruns
from rnnmem.site.arithmetic import arithmetic
from rnnmem.site.builders import memory_measured as mm
from rnnmem.site.directives import DirectiveError
from rnnmem.site.render import Renderer

TINY = "seeds=2 hidden=4 steps=6 threshold=0.5"


one = OneDirective("docs/chapters/memory-measured.md")


SWEEP = 'models=["rnn", "lstm:0", "lstm:1"] short_lags=[1, 2] long_lags=[1, 2] seeds=2 hidden=4 budgets=[25, 50] threshold=0.5 extend_to=3'
ARGS = dict(
    models=["rnn", "lstm:0", "lstm:1"],
    short_lags=[1, 2],
    long_lags=[1, 2],
    seeds=2,
    hidden=4,
    budgets=[25, 50],
    threshold=0.5,
    extend_to=3,
)


def sweep_result():
    return mm._lab(**ARGS)


def test_the_horizon_table_gives_the_start_and_the_lag_learned_within_each_budget(tmp_path):
    text = one.render(tmp_path, f"<!-- table: lab_horizon_table {SWEEP} -->")
    rows = [line.split("|")[1:-1] for line in text.splitlines()[2:] if line.startswith("| ")]
    assert [r[0].strip() for r in rows] == ["RNN", "$b_f$=0", "$b_f$=1"]
    # the LSTM's predicted horizon is that of sigma(1), computed, not typed
    assert (
        rows[2][1].strip() == f"{memory.sigmoid(1.0):.2f}"
        and rows[2][2].strip() == f"{memory.horizon(memory.sigmoid(1.0)):.1f}"
    )
    assert rows[0][1].strip().startswith("ρ ") and "‖W‖₂" in rows[0][1]
    _, values = mm.lab_horizon_table(**ARGS)
    res = sweep_result()
    for spec in res.sweep.models:
        for b in (25, 50):
            fit = res.fit(spec, b)
            words = values["fits"][spec.key][f"u{b}"]
            assert (words["x50"] is None) == (fit.x50 is None)
            assert rows[list(res.sweep.models).index(spec)][3 if b == 25 else 4].strip().startswith(words["text"])


def test_the_sweep_values_are_the_outcomes_of_the_runs():
    _, values = mm.success_counts_table(budget=25, **ARGS)
    res = sweep_result()
    for spec in res.sweep.models:
        for b in (25, 50):
            for lag in res.lags(spec, b):
                o = res.outcome(spec, lag, b)
                assert values["counts"][spec.key][f"u{b}"][f"lag{lag}"] == o.successes
                assert values["intervals"][spec.key][f"u{b}"][f"lag{lag}"] == "[{:.2f}, {:.2f}]".format(*o.interval())
    vs = values["vs"]["rnn-lstm0"]["u25"]["lag1"]
    a, b_ = res.outcome("rnn", 1, 25), res.outcome("lstm:0", 1, 25)
    assert (vs["a"], vs["b"]) == (a.successes, b_.successes)
    assert vs["p_value"] == stats.fisher_exact(a.successes, 2, b_.successes, 2)
    assert values["arithmetic"] == arithmetic() and values["arithmetic"].startswith("numpy ")
    assert values["later"]["rnn"]["lag2"] == res.outcome("rnn", 2, 50).successes - res.outcome("rnn", 2, 25).successes


def test_the_counts_table_has_a_row_per_lag_and_a_column_per_model(tmp_path):
    text = one.render(tmp_path, f"<!-- table: success_counts_table budget=50 {SWEEP} -->")
    rows = [line.split("|")[1:-1] for line in text.splitlines()[2:] if line.startswith("| ")]
    res = sweep_result()
    lags = sorted({lag for s in res.sweep.models for lag in res.lags(s, 50)})
    assert [int(r[0]) for r in rows] == lags
    for r, lag in zip(rows, lags):
        for cell, spec in zip(r[1:], res.sweep.models):
            want = str(res.outcome(spec, lag, 50).successes) if lag in res.lags(spec, 50) else "–"
            assert cell.strip() == want


def test_a_comparison_words_a_difference_only_below_the_level():
    from rnnmem.experiments import Outcome

    def cell(k, n=20):
        return Outcome(300, tuple([25] * k + [None] * (n - k)), np.ones(n))

    far, near = comparisons.compare(cell(18), cell(2)), comparisons.compare(cell(11), cell(9))
    assert far["differ"] and far["phrase"] == "more successes than" and far["verdict"] == "a difference"
    assert comparisons.compare(cell(2), cell(18))["phrase"] == "fewer successes than"
    assert not near["differ"] and near["phrase"] == "no detectable difference from"
    assert near["p_value"] >= comparisons.ALPHA > far["p_value"]
    assert (
        comparisons.p_text(0.0004) == "4 × 10⁻⁴"
        and comparisons.p_text(0.034) == "0.034"
        and comparisons.p_text(0.5) == "0.50"
    )


def test_the_wilson_table_gives_every_count_its_interval(tmp_path):
    text = one.render(tmp_path, "<!-- table: wilson_table seeds=5 -->")
    pairs = []
    for line in text.splitlines()[2:]:
        if line.startswith("| "):
            cells = [c.strip() for c in line.split("|")[1:-1]]
            pairs += [(cells[0], cells[1]), (cells[2], cells[3])]
    got = {int(k): v for k, v in pairs if k}
    assert sorted(got) == list(range(6))
    for k, v in got.items():
        assert v == "[{:.2f}, {:.2f}]".format(*stats.wilson(k, 5))


def test_the_heatmap_marks_the_starting_horizons(tmp_path):
    fig, values = mm.success_heatmap(**ARGS)
    # every predicted horizon here (14.7 steps for b_f = 1) lies beyond the longest lag tried, 2
    assert memory.horizon(memory.sigmoid(1.0)) > 2 and values["horizon"]["lstm1"] == "beyond"
    assert b"<path" in Renderer(tmp_path).render(one(f'<!-- figure: success_heatmap {SWEEP} caption="c" -->')).content


def test_the_survival_and_accuracy_figures_read_the_outcomes():
    _, km = mm.survival_curves(lags=[2], **ARGS)
    res = sweep_result()
    for spec in res.sweep.models:
        o = res.outcome(spec, 2, 50)
        assert km["km"][spec.key]["lag2"]["by_long"] == pytest.approx(o.successes / o.n)
    with pytest.raises(ValueError, match="^lags must be lags of long_lags"):
        mm.survival_curves(lags=[3], **ARGS)
    _, acc = mm.final_accuracy(**ARGS)
    assert acc["median"]["rnn"]["u25"]["lag1"] == pytest.approx(res.outcome("rnn", 1, 25).accuracy()[1])


def test_the_diagnostics_follow_each_member_until_it_stops():
    fig, values = mm.diagnostics_over_training(lags=[2], **ARGS)
    res = sweep_result()
    run = res.result("rnn", 2, 50)
    won = [e for e, ok in enumerate(run.outcome(50).observed) if ok]
    rnn = values["lag2"]["rnn"]
    assert rnn["successes"] == len(won) and rnn["failures"] == 2 - len(won)
    rho = run.diagnostics["spectral_radius"]
    lost = [e for e in range(2) if e not in won]
    if lost:
        assert rnn["lost"]["start"] == pytest.approx(float(np.median(rho[lost, 0])))
        assert f"{rnn['lost']['start']:.2f}" in rnn["text"] and rnn["lost"]["direction"] in rnn["text"]
    else:
        assert rnn["text"].endswith("every seed succeeded")
    if not won:
        assert rnn["text"].startswith("no seed succeeded") and rnn["won"]["direction"] is None
    for e, s in enumerate(run.success_step):
        if s is not None:
            assert np.all(np.isnan(rho[e, run.eval_steps > s])), "nothing is measured after a member retires"
    assert mm._direction(1.0, 2.0) == "rose" and mm._direction(2.0, 1.0) == "fell"
    with pytest.raises(ValueError, match="^a trend needs two finite values"):
        mm._direction(float("nan"), 1.0)
    with pytest.raises(ValueError, match="^models must include"):
        mm.diagnostics_over_training(lags=[2], **(ARGS | {"models": ["rnn"]}))
    with pytest.raises(ValueError, match=r"^lags\[0\] must be one of long_lags"):
        mm.diagnostics_over_training(lags=[3], **ARGS)


def test_a_group_clause_says_how_many_seeds_and_which_way():
    assert mm._group_clause(0, "succeeded", math.nan, math.nan, "at their success", ".2f") == "no seed succeeded"
    one = mm._group_clause(1, "succeeded", 0.5, 3.0, "at their success", ".2f")
    assert one == "in the one seed that succeeded it rose from 0.50 to 3.00 at their success"
    many = mm._group_clause(18, "did not", 0.59, 0.55, "at the end", ".2f")
    assert many == "in the 18 seeds that did not it fell from 0.59 to 0.55 at the end"


def test_the_bias_sweep_compares_each_bias_with_the_one_below(tmp_path):
    small = dict(lag=2, seeds=2, hidden=4, steps=25, threshold=0.5)
    _, bias = mm.bias_sweep_table(biases=[0, 3], **small)
    assert bias["keep"]["b3"] == pytest.approx(float(memory.sigmoid(3.0)) ** 3)
    assert set(bias["adjacent"]) == {"b0-b3"}
    outcomes = mm._bias_outcomes([0, 3], small["lag"], small["seeds"], small["hidden"], small["steps"], 0.5)
    p = stats.mann_whitney(outcomes[1].final, outcomes[0].final).p
    assert bias["accuracy_p"] == {"b0-b3": comparisons.p_text(p)}
    assert bias["accuracy_steps"] == (p < comparisons.ALPHA)


def test_the_sweep_trained_model_by_model_in_two_processes_is_the_sweep_trained_round_by_round(monkeypatch):
    """Each model's grids grow as soon as its own runs end, in a pool: the same grids, runs and outcomes."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # the pool itself is under test here
    monkeypatch.setenv("RNNMEM_LAB_WORKERS", "2")
    monkeypatch.setattr(labruns, "_RUNS", {})
    design = dataclasses.replace(mm._design(8, 0.3, 5), eval_every=10)
    sweep = Sweep(
        (ModelSpec.parse("rnn"), ModelSpec.parse("lstm:2")),
        short_lags=(1, 2),
        long_lags=(2,),
        seeds=(0, 1),
        design=design,
        budgets=(20, 60),
        extend_step=1,
        extend_to=4,
    )
    schedule = sweep.chains()
    trained = labruns.chains(schedule.first_runs(), schedule.follow)
    chained, rounds = schedule.result, sweep.execute()
    assert chained.plan == rounds.plan
    assert set(trained) == set(chained.results) == set(rounds.results)
    assert any(len(lags) > 2 for lags in rounds.plan.values()), "the case should extend a grid at least once"
    for (model, budget), lags in rounds.plan.items():
        for lag in lags:
            a, b = chained.result(model, lag, budget), rounds.result(model, lag, budget)
            assert np.array_equal(a.scores, b.scores) and a.success_step == b.success_step, (model, lag, budget)


@pytest.mark.parametrize(
    "builder, args, name",
    [
        (mm.lab_horizon_table, {"models": ["lstm:x"]}, "models[0]"),
        (mm.lab_horizon_table, {"models": ["gru:1"]}, "models[0]"),
        (mm.lab_horizon_table, {"models": []}, "models"),
        (mm.lab_horizon_table, {"short_lags": [0, 2]}, "short_lags[0]"),
        (mm.lab_horizon_table, {"long_lags": [5, 2]}, "long_lags"),
        (mm.lab_horizon_table, {"seeds": 0}, "seeds"),
        (mm.lab_horizon_table, {"threshold": 1.5}, "threshold"),
        (mm.lab_horizon_table, {"budgets": [0, 5]}, "budgets[0]"),
        (mm.lab_horizon_table, {"hidden": -2}, "hidden"),
        (mm.survival_curves, {"lags": [0]}, "lags[0]"),
        (mm.diagnostics_over_training, {"lags": [0]}, "lags[0]"),
        (mm.gradient_reach, {"sequences": 0}, "sequences"),
        (mm.bias_sweep, {"biases": ["two"]}, "biases[0]"),
    ],
)
def test_a_bad_argument_fails_naming_it(builder, args, name):
    with pytest.raises(ValueError) as info:
        check_arguments(builder, args)
    assert str(info.value).startswith(f"{name} must")


def test_the_gradient_reach_figure_renders(tmp_path):
    content = (
        Renderer(tmp_path)
        .render(
            one(
                '<!-- figure: gradient_reach lag=3 models=["rnn", "lstm:0"] sequences=8 seeds=2 hidden=4 steps=6 threshold=0.5 caption="c" -->'
            )
        )
        .content
    )
    assert b"<path" in content


def test_the_signature_rules_pass_specs_as_written_and_whole_numbers_as_ints():
    args = check_arguments(mm.success_heatmap, {"models": ["lstm:2.0", "rnn"], "short_lags": (1, 3.0), "seeds": 2.0})
    assert args == {"models": ["lstm:2.0", "rnn"], "short_lags": [1, 3], "seeds": 2}
    assert isinstance(args["seeds"], int) and all(isinstance(lag, int) for lag in args["short_lags"])


@pytest.mark.parametrize(
    "text, name",
    [
        ('<!-- table: lab_horizon_table models=["lstm:x"] -->', "models[0]"),
    ],
)
def test_a_bad_argument_fails_the_build_naming_it(tmp_path, text, name):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(text))
    assert f"{name} must" in str(info.value)


def test_every_model_spec_has_a_label_and_a_name_in_prose():
    words = {
        "rnn": ("tanh RNN", "the tanh RNN"),
        "gru": ("GRU", "the GRU"),
        "lstm": ("LSTM, default draw", "the LSTM with PyTorch's draw"),
        "lstm:1.5": ("LSTM, $b_f = 1.5$", "the LSTM with $b_f = 1.5$"),
        "lstm:chrono": ("LSTM, chrono", "the chrono LSTM"),
        "lstm:chrono:i0": ("LSTM, chrono, $b_i = 0$", "the chrono LSTM and $b_i = 0$"),
    }
    for text, (label, prose) in words.items():
        spec = ModelSpec.parse(text)
        assert (mm._label(spec), mm._prose(spec)) == (label, prose)
    assert mm._label(ModelSpec.parse("lstm:2"), tex=True) == "LSTM, \\(b_f = 2\\)"


def test_a_sweep_over_the_same_models_reuses_the_same_runs():
    a = Sweep(["lstm:1", "rnn"], [2, 3], [3], (0, 1))  # type: ignore[arg-type]  # texts and lists, converted on purpose
    b = Sweep([ModelSpec("lstm", 1.0), "rnn"], (2, 3), (3,), [0, 1])  # type: ignore[arg-type]  # a text and a list, converted on purpose
    assert a.first_runs() == b.first_runs() and {hash(r) for r in a.first_runs()} == {hash(r) for r in b.first_runs()}
    assert a.run("rnn", 2, 300) == RecallRun("rnn", 2, (0, 1), a.design)  # type: ignore[arg-type]  # converted on purpose


SWEEP_BUILDERS = [
    mm.success_heatmap,
    mm.lab_horizon_table,
    mm.success_counts_table,
    mm.final_accuracy,
    mm.survival_curves,
    mm.diagnostics_over_training,
]


@pytest.mark.parametrize("builder", SWEEP_BUILDERS, ids=lambda b: b.__name__)
def test_a_sweep_builder_ends_with_the_sweeps_arguments_and_checks_them(builder):
    fields = dataclasses.fields(mm.SweepArgs)
    params = list(inspect.signature(builder).parameters.values())[-len(fields) :]
    hints = typing.get_type_hints(mm.SweepArgs, include_extras=True)
    assert [(p.name, p.default, p.annotation) for p in params] == [(f.name, f.default, hints[f.name]) for f in fields]
    assert "args" not in inspect.signature(builder).parameters
    with pytest.raises(ValueError, match="^extend_to must be a whole number >= 1"):
        check_arguments(builder, {"extend_to": 0})


def test_a_sweep_builder_trains_the_sweep_its_arguments_ask_for(monkeypatch):
    asked = []

    def lab(*args):
        asked.append(args)
        raise RuntimeError("stop")

    monkeypatch.setattr(mm, "_lab", lab)
    with pytest.raises(RuntimeError, match="stop"):
        mm.success_counts_table(4, models=["rnn"], short_lags=[1, 2], long_lags=[2], seeds=3, budgets=[4, 8])
    assert asked == [(["rnn"], [1, 2], [2], 3, 16, [4, 8], 0.9, 64)]


# The fake result's two arms, named by key where the builder takes a ModelSpec.
_A: typing.Any = "a"
_B: typing.Any = "b"


class _Counts:
    """A sweep's result read from counts alone: what the comparisons and the ordering of the section read."""

    def __init__(self, table: dict, budget: int = 300, n: int = 20):
        from types import SimpleNamespace

        self.table, self.budget, self.n = table, budget, n
        self.specs = {key: ModelSpec.parse(model) for key, model in (("a", "lstm:1"), ("b", "lstm:0"))}
        self.sweep = SimpleNamespace(seeds=tuple(range(n)), budgets=(budget, budget * 5))

    def lags(self, spec, budget):
        return list(self.table[spec][0])

    def counts(self, spec, budget):
        return list(self.table[spec][1])

    def outcome(self, spec, lag, budget):
        from rnnmem.experiments import Outcome

        k = self.counts(spec, budget)[self.lags(spec, budget).index(lag)]
        return Outcome(budget, tuple([25] * k + [None] * (self.n - k)), np.ones(self.n))


def test_two_models_are_compared_over_every_lag_and_at_the_lag_nearest_one_half():
    lags = [4, 8, 12, 16, 20]
    res: typing.Any = _Counts({"a": (lags, [20, 19, 12, 3, 0]), "b": (lags, [20, 4, 0, 0, 0])})
    shift = mm._shift_words(res, _A, _B, 300)
    # the arm that keeps succeeding at longer lags has the later 50% lag, and the page says so
    assert shift["difference"] > 0 and shift["lo"] > 0 and shift["differ"]
    assert (
        shift["phrase"] == "a longer lag learned than"
        and shift["p_eq"] == f"*p* = {comparisons.p_text(shift['p_value'])}"
    )
    assert mm._shift_words(res, _B, _A, 300)["phrase"] == "a shorter lag learned than"
    # pooled 23/40 at lag 8 and 12/40 at lag 12: lag 8 is nearest one half
    contrast = mm._contrast_words(res, _A, _B, 300)
    assert contrast is not None and contrast["lag"] == 8 and (contrast["a"], contrast["b"]) == (19, 4)
    assert contrast["p_value"] == stats.fisher_exact(19, 20, 4, 20)


def test_two_models_with_the_same_counts_show_no_shift():
    lags = [4, 8, 12]
    res: typing.Any = _Counts({"a": (lags, [18, 10, 2]), "b": (lags, [18, 10, 2])})
    shift = mm._shift_words(res, _A, _B, 300)
    assert shift["phrase"] == "no detectable shift from" and not shift["differ"] and shift["p"] == "1.00"


def test_a_lag_learned_between_two_clear_lags_is_printed_as_their_range():
    lags, counts = [4, 8, 12], [20, 0, 0]
    fit = stats.logistic_fit(lags, counts, [20] * 3)
    words = mm._fit_words(fit, lags, counts, 20)
    assert fit.x50 is not None and words["full"] == "between 4 and 8" and words["interval"] == ""
    lags, counts = [8, 24, 40, 48], [20, 19, 13, 12]
    words = mm._fit_words(stats.logistic_fit(lags, counts, [20] * 4), lags, counts, 20)
    assert words["full"] == "beyond 48"


def test_the_starting_horizons_are_ranked_against_the_lags_learned_within_the_lstms():
    from types import SimpleNamespace

    specs = [ModelSpec.parse(m) for m in ("rnn", "lstm:0", "lstm:1", "lstm:2", "lstm:chrono")]
    counts = {"rnn": [20, 15, 7, 3], "lstm0": [20, 0, 0, 0], "lstm1": [20, 17, 2, 0], "lstm2": [20, 20, 17, 7]}
    counts["chrono"] = [20, 20, 17, 13]
    res: typing.Any = SimpleNamespace(
        sweep=SimpleNamespace(models=specs, budgets=(300, 1500), seeds=tuple(range(20))),
        lags=lambda spec, budget: [4, 8, 12, 16],
        counts=lambda spec, budget: counts[spec.key],
    )
    horizons = {s: {"horizon": h, "beyond": h is None} for s, h in zip(specs, (7.9, 6.6, 14.7, 36.3, None))}
    learned = {"rnn": 11.0, "lstm0": 6.0, "lstm1": 10.0, "lstm2": 15.0, "chrono": 17.0}
    swapped = dict(learned, lstm1=16.0)  # b_f = 1 past b_f = 2: one pair out of order
    undetected = {"phrase": "no detectable shift from", "differ": False, "p_eq": "*p* = 0.067"}
    values = {
        "fits": {k: {"u300": {"point": v}, "u1500": {"point": swapped[k]}} for k, v in learned.items()},
        "shift": {"lstm2-lstm1": {"u1500": undetected}},
    }
    out = mm._ordering(res, horizons, values)
    assert out["rank"]["u300"]["rho"] == 1.0 and out["rank"]["u300"]["p_one"] == pytest.approx(1 / 24)
    assert out["rank"]["u300"]["same_order"] and out["orders"] == 24
    assert out["rank"]["u1500"]["rho"] == pytest.approx(0.8) and not out["rank"]["u1500"]["same_order"]
    assert out["rank"]["u1500"]["p_one"] == pytest.approx(stats.spearman([1, 2, 3, 4], [1, 3, 2, 4], "greater")[1])
    assert out["predicted"]["chrono"] == "beyond every lag tried" and out["predicted"]["lstm2"] == "36.3"
    # the four LSTMs tested at once: one curve against four, on three degrees of freedom
    joint = out["rank"]["u300"]["joint"]
    want = stats.lag_shifts([([4, 8, 12, 16], counts[k], [20] * 4) for k in ("lstm0", "lstm1", "lstm2", "chrono")])
    assert (
        joint["df"] == 3
        and joint["p_value"] == want.p < 0.001
        and joint["text"].endswith(f"*p* = {comparisons.p_text(want.p)}")
    )
    # a step of the order the shift over every lag does not detect is named
    assert out["rank"]["u300"]["steps"] == "each step of that order"
    assert out["rank"]["u1500"]["steps"] == (
        "each step but that from the LSTM with $b_f = 1$ to the LSTM with $b_f = 2$ (*p* = 0.067)"
    )

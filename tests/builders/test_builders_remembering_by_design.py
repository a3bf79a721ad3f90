"""The figures of "Remembering by design" render and report what they drew (bad arguments: test_builder_arguments.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from one_directive import OneDirective

from rnnmem import by_design, lru, memory, stats
from rnnmem.experiments import Design
from rnnmem.site import labruns
from rnnmem.site.directives import DirectiveError, find_directives
from rnnmem.site.render import Renderer

PAGE = "docs/chapters/remembering-by-design.md"


one = OneDirective(PAGE)


def test_lru_ring_horizons_renders_the_ring_it_draws(tmp_path):
    item = Renderer(tmp_path).render(
        one('<!-- figure: lru_ring_horizons state_size=32 r_min=0.8 r_max=0.99 seed=3 caption="c" -->')
    )
    assert item.content.lstrip().startswith(b"<?xml") and b"<svg" in item.content
    v = item.values
    # The same draw, computed here without the builder: moduli on the ring, horizons from memory.horizon.
    r = np.abs(np.exp(-np.exp(lru.ring_init(32, 0.8, 0.99, seed=3)[0])))
    assert v["smallest"] == pytest.approx(r.min()) and v["largest"] == pytest.approx(r.max())
    assert 0.8 <= v["smallest"] <= v["largest"] <= 0.99 and v["stable"] is True
    assert v["horizon_min"] == pytest.approx(memory.horizon(0.8, 0.01))
    assert v["horizon_max"] == pytest.approx(memory.horizon(0.99, 0.01))
    assert v["shortest"] == pytest.approx(memory.horizon(r.min(), 0.01))
    assert v["longest"] == pytest.approx(memory.horizon(r.max(), 0.01))
    assert v["horizon_min"] <= v["shortest"] <= v["median"] <= v["longest"] <= v["horizon_max"]


def test_lru_ring_horizons_refuses_an_empty_ring(tmp_path):
    with pytest.raises(DirectiveError, match="r_min"):
        Renderer(tmp_path).render(one('<!-- figure: lru_ring_horizons r_min=0.99 r_max=0.9 caption="c" -->'))


# ------------------------------------------------------------------ the lab, at a tiny size
#
# Each builder renders from a directive as the page's do, with two seeds, short lags and a few updates, and
# what it reports is held to rnnmem.by_design's runs and ladder computed here without the builder.

TINY = "seeds=2 hidden=8 steps=20"


def _design(steps: int = 20) -> Design:
    return dataclasses.replace(by_design.DESIGN, hidden=8, steps=steps)


def test_ladder_table_shows_the_ladders_counts_and_stops_where_it_stops(tmp_path):
    item = Renderer(tmp_path).render(
        one(f'<!-- table: ladder_table models=["lstm:chrono", "lru"] tasks=["blank-recall"] lags=[2, 4, 8] {TINY} -->')
    )
    text = item.content.decode()
    ladder = by_design.Ladder(("lstm:chrono", "lru"), ("blank-recall",), (2, 4, 8), (0, 1), _design())
    res = ladder.execute()
    for model in ("lstm:chrono", "lru"):
        spec = by_design.Spec.parse(model)
        (row,) = [line for line in text.splitlines() if f" | {spec.label} | " in line]
        cells = [c.strip() for c in row.strip("|").split("|")][2:]
        for lag, cell in zip((2, 4, 8), cells):
            o = res.outcome(model, "blank-recall", lag)
            if o is None:
                assert cell == "–"
            else:
                assert cell.startswith(f"{o.successes} (")
        counts = item.values["tasks"]["blank-recall"][spec.key]["counts"]
        assert set(counts) == {str(lag) for lag in (2, 4, 8) if res.outcome(model, "blank-recall", lag) is not None}


def test_ladder_climbs_only_while_half_the_seeds_succeed():
    ladder = by_design.Ladder(("lru",), ("recall",), (2, 40), (0, 1), _design(steps=5))
    res = ladder.execute()
    first = res.outcome("lru", "recall", 2)
    assert first is not None
    climbed = res.outcome("lru", "recall", 40) is not None
    assert climbed == (first.successes / first.n >= by_design.CLIMB_RATE)


def test_the_ladder_trained_chain_by_chain_in_two_processes_is_the_ladder_trained_rung_by_rung(monkeypatch):
    """The builder trains each (model, task) up its ladder as soon as its last run ends, in a pool: the same runs."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # the pool itself is under test here
    monkeypatch.setenv("RNNMEM_LAB_WORKERS", "2")
    monkeypatch.setattr(labruns, "_RUNS", {})
    design = dataclasses.replace(_design(steps=100), eval_every=10)
    ladder = by_design.Ladder(("lstm:chrono", "lru"), ("blank-recall", "recall"), (2, 4, 8), (0, 1), design)
    chained = ladder.result(labruns.chains(ladder.first_runs(), ladder.next_run))
    rungs = ladder.execute()
    assert list(chained.trained) == list(rungs.trained)
    assert len(rungs.trained) > len(ladder.first_runs()), "the case should climb at least once"
    for cell, result in rungs.trained.items():
        assert np.array_equal(chained.trained[cell].scores, result.scores), cell
        assert chained.trained[cell].success_step == result.success_step, cell


def test_first_recall_table_counts_the_runs_and_tests_the_pairs(tmp_path):
    item = Renderer(tmp_path).render(
        one(f'<!-- table: first_recall_table models=["lstm:chrono", "lru", "lru:2"] lag=4 {TINY} -->')
    )
    v = item.values
    assert v["near"] == 3 and v["far"] == 5
    for model in ("lstm:chrono", "lru", "lru:2"):
        run = by_design.DesignRun(by_design.Spec.parse(model), "first-recall", 4, (0, 1), _design()).execute()
        assert v["models"][by_design.Spec.parse(model).key]["k"] == run.outcome(20).successes
    assert set(v["pairs"]) == {"lru_layers", "chrono_lru1", "chrono_lru2"}
    assert all(0.0 <= p["p_value"] <= 1.0 for p in v["pairs"].values())
    # plain recall at the same lag beside it, and the first token's failure counted only where plain recall is
    # learned (more plain successes by Fisher's test)
    told = 0
    for model in ("lstm:chrono", "lru", "lru:2"):
        spec = by_design.Spec.parse(model)
        plain = by_design.DesignRun(spec, "recall", 4, (0, 1), _design()).execute().outcome(20)
        first = v["models"][spec.key]
        assert first["plain_k"] == plain.successes
        assert first["control"]["p_value"] == pytest.approx(stats.fisher_exact(plain.successes, 2, first["k"], 2))
        assert first["informative"] == (first["control"]["differ"] and plain.successes > first["k"])
        told += first["informative"] and spec.classic is None
    assert v["informative"] == told
    assert v["input_only"] == "the one-layer LRU and the two-layer LRU"


def test_covers_phrase_names_each_model_once_on_its_side():
    from rnnmem.site.builders.remembering_by_design import covers_phrase

    text = covers_phrase(["a", "b"], ["c"])
    assert text.startswith("the failure says something only for a and b, which learned plain recall")
    assert "; c did not learn plain recall either" in text
    assert (
        covers_phrase(["a"], []) == "the failure says something only for a, which learned plain recall at the same lag"
    )
    with pytest.raises(ValueError, match="informative"):
        covers_phrase([], [])


def test_ring_figure_reports_the_horizon_each_radius_predicts(tmp_path):
    item = Renderer(tmp_path).render(one(f'<!-- figure: ring_figure radii=[0.5, 0.9] lag=3 {TINY} caption="c" -->'))
    radii = item.values["radii"]
    for r in (0.5, 0.9):
        assert radii[f"{r:g}"]["horizon"] == pytest.approx(memory.horizon(r))
        assert radii[f"{r:g}"]["lifetime"] == pytest.approx(memory.mean_lifetime(r))
        run = by_design.DesignRun(by_design.Spec("lru", 1, r), "blank-recall", 3, (0, 1), _design())
        result = run.execute()
        assert radii[f"{r:g}"]["k"] == result.outcome(20).successes
        # the largest modulus per seed, drawn (the ring's own draw) and trained (the run's parameters)
        moduli = item.values["moduli"][f"{r:g}"]
        drawn = np.exp(-np.exp(lru.ring_init(8, 0.5 if r > 0.5 else r / 2, r, seed=0)[0])).max()
        assert moduli["initial"][0] == pytest.approx(drawn)
        trained = np.exp(-np.exp(result.params["nu_log_l0"].astype(float))).max(axis=1)
        np.testing.assert_allclose(moduli["trained"], trained)
        assert moduli["rose"] == int((trained > np.array(moduli["initial"])).sum())
        assert moduli["highest"] <= r + 0.1 and moduli["horizon"] == pytest.approx(memory.horizon(moduli["highest"]))


def test_reach_figure_reports_the_share_at_the_far_end(tmp_path):
    item = Renderer(tmp_path).render(
        one(f'<!-- figure: reach_figure models=["rnn", "lru"] lag=3 sequences=8 {TINY} caption="c" -->')
    )
    for model in ("rnn", "lru"):
        share = by_design.gradient_reach(model, 3, (0, 1), 8, sequences=8)
        assert item.values["before"][by_design.Spec.parse(model).key] == pytest.approx(float(share[-1]))
    opened = item.values["opened"]
    shut = [float(by_design.gradient_reach("lstm:chrono", 3, (s,), 8, sequences=8)[-1]) for s in (0, 1)]
    open_ = [float(by_design.gradient_reach("lstm:chrono:i0", 3, (s,), 8, sequences=8)[-1]) for s in (0, 1)]
    assert opened["against_median"] == pytest.approx(np.median(shut)) and opened["median"] == pytest.approx(
        np.median(open_)
    )
    assert opened["higher"] == sum(b > a for a, b in zip(shut, open_)) and opened["n"] == 2


def test_contrast_table_tests_each_pair_by_fisher(tmp_path):
    item = Renderer(tmp_path).render(
        one(f'<!-- table: contrast_table contrasts=["lru/blank-recall/3 : mingru/first-recall/3"] {TINY} -->')
    )
    a = by_design.DesignRun(by_design.Spec.parse("lru"), "blank-recall", 3, (0, 1), _design()).execute().outcome(20)
    b = by_design.DesignRun(by_design.Spec.parse("mingru"), "first-recall", 3, (0, 1), _design()).execute().outcome(20)
    c0 = item.values["c0"]
    assert (c0["a"], c0["b"]) == (a.successes, b.successes)
    assert c0["p_value"] == pytest.approx(stats.fisher_exact(a.successes, 2, b.successes, 2))
    assert c0["differ"] == (c0["p_value"] < 0.05)


@pytest.mark.parametrize(
    "contrast, message",
    [
        ("lru/recall/10", "two cells"),
        ("lru/recall : gru/recall/10", "model/task/lag"),
        ("lru/copy/10 : gru/recall/10", "task"),
        ("lstmx/recall/10 : gru/recall/10", "model"),
    ],
)
def test_contrast_table_refuses_a_malformed_pair(tmp_path, contrast, message):
    with pytest.raises(DirectiveError, match=rf"contrasts\[0\].*{message}"):
        Renderer(tmp_path).render(one(f'<!-- table: contrast_table contrasts=["{contrast}"] {TINY} -->'))


# ------------------------------------------------------------------ the page's own sentences
#
# The measured section words some results itself ("no input-only model does", "two layers succeed"); those
# sentences are held here against the values of the page's own items, as the build rendered them.

PAGE_PATH = Path(__file__).resolve().parents[2] / PAGE


def page_items(book_items) -> dict:
    """The page's own items, by builder name: (directive, item)."""
    from rnnmem.site import registry

    out = {}
    for d in find_directives(PAGE_PATH.read_text(), PAGE):
        if registry.get(d.kind, d.name).module == "rnnmem.site.builders.remembering_by_design":
            out[d.name] = book_items[d.where]
    return out


def test_the_sentences_the_measured_section_writes_hold_on_its_values(book_items):
    items = page_items(book_items)
    c = items["contrast_table"][1].values
    # "The one-layer LRU does not learn to add ..., where two layers succeed"
    assert c["c0"]["differ"] and c["c0"]["a"] < c["c0"]["b"]
    # "at lag 10, the LRU succeeds with ..., the selective decay with ... and minGRU with ...": the LRU more
    assert c["c1"]["differ"] and c["c1"]["a"] > c["c1"]["b"]
    assert c["c2"]["differ"] and c["c2"]["a"] > c["c2"]["b"]
    # "The same LRU with real decays ... succeeds with ... (fewer than the book's LRU), and with its phases
    # started at 0 ... with ...: ... did not learn"; "minGRU and the selective decay ... did not learn"
    assert all(c[k]["differ"] and c[k]["a"] > c[k]["b"] == 0 for k in ("c8", "c9"))
    assert c["c1"]["b"] == 0 and c["c2"]["b"] == 0
    # "The one-layer LRU did not learn to add"
    assert c["c0"]["a"] == 0
    # "minGRU with its gate's bias shifted ... succeeds with ..., against ... as drawn (more than)"
    assert c["c10"]["differ"] and c["c10"]["a"] > c["c10"]["b"]
    reach = items["reach_figure"][1].values["opened"]
    # "... for the same draw with its input-gate biases set to 0, higher in ... seeds" (by the test)
    assert reach["differ"] and reach["higher"] > reach["n"] / 2 and reach["median"] > reach["against_median"]
    first = items["first_recall_table"][1].values
    # "The chrono LSTM ... learns the first token ... Of the input-only models, ..., none learned it"
    assert first["models"]["chrono"]["k"] >= first["seeds"] / 2
    # "and plain recall with ... (fewer successes than the first token, ...): ... not the harder one"
    chrono = first["models"]["chrono"]
    assert chrono["control"]["differ"] and chrono["plain_k"] < chrono["k"]
    # "Within ... updates the two-layer LRU and minGRU did not learn to; the two-layer selective decay did in ...
    # seeds"; the phrase of which models learned it is written from the counts
    assert first["models"]["lru2"]["k"] == 0 and first["models"]["mingru2"]["k"] == 0
    assert first["models"]["selective2"]["k"] > 0
    learned = [key for key, v in first["models"].items() if key != "chrono" and v["k"] > 0]
    assert (first["learned"].startswith("none")) == (not learned)
    # "minGRU's medians ... sit at the chance of ...": within three points; "The LRU's ... are above it"
    chance = first["chance"]
    assert all(abs(first["models"][key]["median"] - chance) < 0.03 for key in ("mingru1", "mingru2"))
    assert all(first["models"][key]["median"] > chance + 0.05 for key in ("lru1", "lru2"))
    ring = items["ring_figure"][1].values
    radii = ring["radii"]
    # "fewer than the ... of the task" / "the slowest decays reach past the distance"
    assert radii["0.9"]["horizon"] < ring["distance"] < radii["0.99"]["horizon"] < radii["0.999"]["horizon"]
    assert ring["pair"]["differ"] and radii["0.9"]["k"] < radii["0.999"]["k"]
    # "the largest |lambda| of a seed's layer rose in ... seeds (Wilcoxon ...)"; "by the end of the budget the
    # largest decay of most seeds still kept less than 1% of a token over the task's distance"
    moduli = ring["moduli"]["0.9"]
    assert moduli["differ"] and moduli["rose"] > moduli["n"] / 2 and moduli["highest"] > moduli["highest_initial"]
    assert moduli["past"] < moduli["n"] / 2 and moduli["horizon"] > radii["0.9"]["horizon"]
    values = items["ladder_table"][1].values
    ladder = values["tasks"]
    # "At lag 300 the one-layer LRU falls to ..., while with two layers it keeps ... and the selective decay ...":
    # the three climbed to lag 300 across blanks
    blank = ladder["blank-recall"]
    assert all("300" in blank[key]["counts"] for key in ("lru1", "lru2", "selective1"))
    # Summary: "one LRU layer cannot add, two can"
    assert ladder["adding"]["lru1"]["counts"]["10"]["k"] < ladder["adding"]["lru2"]["counts"]["10"]["k"]
    # How far each model climbs is read from the values, not written by hand: every model is named once in
    # its task's reach, with the longest lag most of its seeds hold
    for task, reach in values["reach"].items():
        for key, model in ladder[task].items():
            name = {"chrono": "the chrono LSTM", "gru": "the GRU", "mingru1": "minGRU"}.get(key)
            if name is None:
                continue
            lag = model["longest"]
            clause = "at no lag" if lag == "none" else f"up to lag {lag}"
            before = reach.split(name)[0]
            assert reach.count(name) == 1 and before.rfind(clause) == max(
                before.rfind("up to lag"), before.rfind("at no lag")
            ), (task, key, reach)


def test_the_summary_of_the_ladder_is_written_from_its_values():
    text = PAGE_PATH.read_text()
    summary = text.split("## Summary")[1].split("## Exercises")[0]
    assert "across blanks\n  {{ladder.reach[blank-recall]}}" in summary
    lab = text.split("## Measured in the lab")[1].split("## Summary")[0]
    assert all(f"{{{{ladder.reach[{t}]}}}}" in lab for t in ("blank-recall", "recall", "adding"))


def test_reach_phrase_groups_models_by_the_longest_lag_they_hold():
    from rnnmem.site.builders.remembering_by_design import reach_phrase

    assert reach_phrase([("a", 10)], 0.5) == "at least half the seeds succeed up to lag 10 for a"
    assert reach_phrase([("a", None), ("b", 100), ("c", 100), ("d", 30)], 0.5) == (
        "at least half the seeds succeed up to lag 100 for b and c, up to lag 30 for d, and at no lag for a"
    )
    assert reach_phrase([("a", 10), ("b", 300)], 0.75).startswith(
        "at least 75% of the seeds succeed up to lag 300 for b"
    )
    with pytest.raises(ValueError, match="longest"):
        reach_phrase([], 0.5)


def test_prose_name_names_the_layers_only_where_they_tell_models_apart():
    from rnnmem.site.builders.remembering_by_design import prose_name

    lru1, lru2, mingru, chrono = (by_design.Spec.parse(m) for m in ("lru", "lru:2", "mingru", "lstm:chrono"))
    assert prose_name(lru1) == "the LRU" and prose_name(lru1, [lru1, lru2]) == "the one-layer LRU"
    assert prose_name(lru2) == "the two-layer LRU" and prose_name(mingru) == "minGRU"
    assert prose_name(by_design.Spec.parse("mingru:2")) == "two-layer minGRU"
    assert prose_name(chrono, [lru1, lru2]) == "the chrono LSTM"

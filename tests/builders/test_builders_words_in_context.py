"""The figures and tables of "Words in context": each renders, agrees with the page, and names a bad argument.

The page's sentences that state an ordering or a sign in words of their own
(not filled in from a builder's computed text) are held here against the
values of the page's own items.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from rnnmem import bilm, corpus, probe
from rnnmem.site.builders import words_in_context as w
from rnnmem.site.directives import find_directives
from rnnmem.stats import fisher_exact, wilson

PAGE_NAME = "docs/chapters/words-in-context.md"
PAGE = Path(__file__).resolve().parents[2] / PAGE_NAME


def page_items(book_items) -> dict:
    """The page's own items, by builder name: (directive, item)."""
    from rnnmem.site import registry

    out = {}
    for d in find_directives(PAGE.read_text(), PAGE_NAME):
        if registry.get(d.kind, d.name).module == "rnnmem.site.builders.words_in_context":
            out[d.name] = book_items[d.where]
    return out


def test_every_directive_of_the_page_renders_and_agrees_with_its_snippets(book_items):
    """The page's own items, as the session rendered them into the shared cache (tests/conftest.py)."""
    items = page_items(book_items)
    assert sorted(items) == [
        "bilm_loss",
        "cue_distance_curves",
        "cue_distance_table",
        "layer_table",
        "mixture_table",
        "probe_steps_curves",
        "probe_steps_table",
        "probe_table",
        "slot_curves",
        "slot_table",
    ]
    for name, (d, item) in items.items():
        assert d.args.get("seeds", w.SEEDS) == w.SEEDS, name  # one measurement for the whole page
        if d.kind == "figure":
            assert item.content.startswith(b"<?xml") and b"<svg" in item.content
    tables = {name: item.content.decode() for name, (d, item) in items.items() if d.kind == "table"}
    # the static row scores chance exactly on every seed; chance is one half
    probe_rows = tables["probe_table"]
    assert "| static row \\(E_w\\) | 0.50 [" in probe_rows and "| 0.50 | 0.50 |" in probe_rows, probe_rows
    assert "| chance (the commoner sense) | 0.50 | 0.50 | 0.50 |" in probe_rows
    assert f"{w.SEEDS} seeds" in probe_rows and "300 held-out occurrences per seed" in probe_rows
    assert probe_rows.count("\n| ") == len(probe.METHODS) + 1  # methods, chance (after the heading)
    steps = tables["probe_steps_table"]
    assert steps.count("\n| ") == len(probe.CHECKPOINTS) * 2 * 2  # checkpoint, direction, side
    for step in probe.CHECKPOINTS:
        assert f"\n| {step:,} | forward, cue before |" in steps
    slot = tables["slot_table"]
    assert slot.count("\n| ") == len(probe.CHECKPOINTS) * 2 * 2
    for k in corpus.KNOWLEDGE:
        assert f"{corpus.slot_entropy(k):.2f} for a model that" in slot
    assert tables["cue_distance_table"].count("\n| before,") == len(corpus.DISTANCES)
    assert tables["cue_distance_table"].count("\n| after,") == len(corpus.DISTANCES)
    assert tables["mixture_table"].count("\n| *") == len(corpus.SENSES)
    assert "Fisher's exact test" in tables["layer_table"]


def test_the_sentences_the_page_writes_itself_hold_on_its_own_values(book_items):
    items = page_items(book_items)
    steps = items["probe_steps_table"][1].values
    slot = items["slot_table"][1].values
    for d in ("forward", "backward"):
        # "a model that has learned to guess a topic is more often confidently wrong" with no cue to read
        assert slot["other"][d] > slot["floor"]["nothing"]
        # "This is the control task at work: the untrained network's score ... is a score for recognizing words"
        assert steps["untrained_versus"][d].startswith("not detectably different")
        assert steps["untrained_sense"][d] > 0.5 and steps["untrained_control"][d] > 0.5
        # "Training removed from the state at the noun what the untrained network kept, even a cue read one
        # step before, and put little of the sense there."
        assert steps["neighbour_fall"][d].startswith("lower")
        assert steps["neighbour_untrained_words"][d] == "above one half"
        assert steps["last_sense"][d] < steps["untrained_sense"][d]
        # "... and put little of the sense there": within ten points of chance. Whether the senses beat the
        # control task there is worded from Fisher's test (last_versus) and is not asserted: with four seeds
        # it has gone either way with the processor's arithmetic (p = 0.46 and 0.03 on two machines).
        chance = 1 / len(next(iter(corpus.SENSES.values())))
        assert steps["last_sense"][d] - chance < 0.1
    # "... a score for recognizing the cue word, as the control task showed"; and the bag sees a near cue
    probe_values = items["probe_table"][1].values
    assert probe_values["mean"]["untrained"] > 0.5
    distance = items["cue_distance_table"][1].values
    assert distance["bag_near"] > distance["bag_far_high"]
    # the summary: "The static layer's weight falls to zero by construction"
    assert items["mixture_table"][1].values["s0_max"] < 0.05


def test_the_builders_use_the_recipe_declared_in_the_core():
    import inspect

    assert "measure(list(self.seeds), Recipe()," in inspect.getsource(probe.MeasureRun.execute)
    for source in (inspect.getsource(w), inspect.getsource(probe.MeasureRun)):
        for field in ("lr=", "steps=", "batch_size=", "dim="):  # no second copy of the recipe
            assert field not in source, field


def test_the_seeds_are_split_among_runs_and_put_back_in_order(monkeypatch):
    """Each seed is measured once, by one of the runs, and the page reads them in the order of the seeds."""
    asked = []

    def fake_runs(keys):
        asked.extend(keys)
        return [tuple(SimpleNamespace(seed=s) for s in k.seeds) for k in keys]

    monkeypatch.setattr(w, "runs", fake_runs)
    measured = w._runs.__wrapped__(5)
    assert [r.seed for r in measured] == [0, 1, 2, 3, 4]
    assert sorted(s for k in asked for s in k.seeds) == [0, 1, 2, 3, 4] and len(asked) == w.PARTS
    assert all(isinstance(k, probe.MeasureRun) and k.dtype == "float32" for k in asked)


def test_a_seed_measures_the_same_whichever_seeds_train_beside_it():
    """What lets the page split its seeds among processes: a seed's run is a function of that seed alone."""
    import pickle

    recipe = bilm.Recipe(dim=6, num_layers=2, steps=4, batch_size=8)
    together = probe.measure([0, 1, 2], recipe, checkpoints=[0, 4], n_train=48, n_held_out=48, dtype=np.float32)
    alone = probe.measure([1], recipe, checkpoints=[0, 4], n_train=48, n_held_out=48, dtype=np.float32)
    assert pickle.dumps(together[1]) == pickle.dumps(alone[0])


@pytest.fixture(scope="module")
def small(request):
    """Two seeds of a tiny recipe, read at two checkpoints, in place of the page's measurement."""
    runs = tuple(probe.measure([0, 1], bilm.Recipe(dim=4, num_layers=2, steps=3), checkpoints=[0, 3]))
    keep = w._runs
    w._runs = lambda seeds: runs  # type: ignore[assignment]  # the builders read this stand-in
    request.addfinalizer(lambda: setattr(w, "_runs", keep))
    return runs


def test_the_values_the_page_reads_are_those_of_the_runs(small):
    runs = small
    _, values = w.probe_table(seeds=2)
    for method in probe.METHODS:
        correct = sum(r.final.correct[method] for r in runs)
        assert values["mean"][w._key(method)] == pytest.approx(correct / sum(r.final.total for r in runs))
    best = max(probe.METHODS, key=lambda m: values["mean"][w._key(m)])
    assert values["first"] == w.PLAIN[best] and values["ranked"].startswith(w.PLAIN[best])
    assert values["static_min"] == values["static_max"] == 0.5
    _, steps = w.probe_steps_table(seeds=2)
    sense = w._pooled(r.counts[(0, "sense", "forward", "before")] for r in runs)
    control = w._pooled(r.counts[(0, "control", "forward", "before")] for r in runs)
    assert steps["untrained_sense"]["forward"] == sense[0] / sense[1]
    assert steps["untrained_selectivity"]["forward"] == pytest.approx((sense[0] - control[0]) / sense[1])
    assert w._p(fisher_exact(*sense, *control)) in steps["untrained_versus"]["forward"]
    _, slot = w.slot_table(seeds=2)
    pooled = np.concatenate([r.slot[(3, "backward", "after")] for r in runs])
    assert slot["own"]["backward"] == pytest.approx(pooled.mean())
    assert (slot["own_low"]["backward"], slot["own_high"]["backward"]) == pytest.approx(probe.loss_interval(pooled)[1:])
    assert slot["floor"]["word"] == corpus.slot_entropy("word")
    _, layers = w.layer_table(seeds=2)
    lower = w._pooled((r.final.correct["layer 1"], r.final.total) for r in runs)
    assert layers["lower"] == lower[0] / lower[1]
    _, distance = w.cue_distance_table(seeds=2)
    assert 0 <= distance["trained_off"] <= 0.5 and distance["nearest"] < distance["farthest"]
    _, mixture = w.mixture_table(seeds=2)
    assert 0 <= mixture["s0_max"] <= 1 and mixture["words"] == len(corpus.SENSES)
    fig, loss = w.bilm_loss(seed=1, seeds=2, window=2)
    assert loss["steps"] == 3 and loss["first"] == runs[1].losses[0]
    with pytest.raises(ValueError, match="seed must be one of the 2 seeds trained"):
        w.bilm_loss(seed=2, seeds=2)


def test_the_computed_words_follow_the_tests():
    assert w._versus((90, 100), (50, 100)).startswith("higher (Fisher's exact test, p = ")
    assert w._versus((50, 100), (90, 100)).startswith("lower")
    assert w._versus((52, 100), (50, 100)).startswith("not detectably different")
    assert w._chance_words(60, 100) == "above one half" and wilson(60, 100)[0] > 0.5
    assert w._chance_words(55, 100) == "no detectable difference from one half"
    assert w._chance_words(30, 100) == "below one half"
    assert w._against_floor((2.0, 1.9, 2.1), 2.48) == "below"
    assert w._against_floor((2.4, 2.3, 2.5), 2.48) == "not detectably different from"
    assert w._against_floor((2.0, 1.9, 2.1), 1.39) == "above"
    assert w._p(0.0312) == "p = 0.03" and w._p(3.2e-7) == "p = 3 × 10⁻⁷" and w._p(0.0) == "p < 10⁻⁹⁹"


def test_the_ranking_groups_only_what_fishers_test_tells_apart():
    counts = {"bag": (95, 100), "untrained": (70, 100), "static": (66, 100), "forward": (40, 100)}
    order, rule = w._ranking(counts)
    groups = [g.split(" and ") for g in order.split("; then ")]
    assert groups == [[w.PLAIN["bag"]], [w.PLAIN["untrained"], w.PLAIN["static"]], [w.PLAIN["forward"]]]
    apart = [fisher_exact(*counts["bag"], *counts["untrained"]), fisher_exact(*counts["static"], *counts["forward"])]
    level = fisher_exact(*counts["untrained"], *counts["static"])
    assert max(apart) < w.ALPHA <= level
    assert f"({w._p(min(apart))} to {w._p(max(apart)).removeprefix('p = ')})" in rule
    assert f"not detectably different from the one before it ({w._p(level)})" in rule
    # one group, or every neighbour apart: the sentence says only what applies
    alike, rule = w._ranking({"bag": (50, 100), "untrained": (51, 100)})
    assert " and " in alike and "; then" not in alike and "semicolon" not in rule and rule.startswith("Within")
    apart_only, rule = w._ranking({"bag": (99, 100), "untrained": (50, 100), "static": (1, 100)})
    assert apart_only.count("; then") == 2 and "within a group" not in rule and rule.startswith("A semicolon")

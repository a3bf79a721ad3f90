"""The figures and tables of "Words in context": each renders, agrees with the page, and names a bad argument.

The page's sentences that state an ordering or a sign in words of their own
(not filled in from a builder's computed text) are held here against the
values of the page's own items.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from rnnmem import bilm, corpus, probe
from rnnmem.site.builders import words_in_context as w
from rnnmem.site.directives import find_directives
from rnnmem.stats import bootstrap_median, sign_test, wilcoxon_signed_rank

PAGE_NAME = "docs/chapters/words-in-context.md"
PAGE = Path(__file__).resolve().parents[2] / PAGE_NAME

SMALLEST_P = sign_test(w.SEEDS, w.SEEDS)
"""The smallest p any test on the page's seeds can give: all of them on one side, 2 / 2**20 for twenty."""

_POWERS = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def printed_p_values(text: str) -> list[float]:
    """Every p-value printed in ``text``, as the page prints them: ``p = 0.031`` or ``p = 3.2 × 10⁻⁶``."""
    found = []
    for mantissa, power in re.findall(r"p = (\d+(?:\.\d+)?)(?: × 10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))?", text):
        found.append(float(f"{mantissa}e{power.translate(_POWERS)}" if power else mantissa))
    return found


def strings(values) -> list[str]:
    """Every string among a builder's values, nested ones included."""
    if isinstance(values, str):
        return [values]
    if isinstance(values, dict):
        return [t for v in values.values() for t in strings(v)]
    if isinstance(values, (list, tuple)):
        return [t for v in values for t in strings(v)]
    return []


def per_seed_differences(a, b) -> list[float]:
    """Per-seed accuracies a minus b, exactly, then as floats: what the page's paired test is given."""
    return [float(Fraction(*x) - Fraction(*y)) for x, y in zip(a, b)]


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
    assert "| chance (the commoner sense) | 0.50 [0.50, 0.50] | 0.50 | 0.50 |" in probe_rows
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
    assert w.TEST in tables["layer_table"]
    # nothing pooled over occurrences is left on the page
    page = PAGE.read_text()
    for pooled in ("Fisher", "Wilson", "pooled over"):
        assert pooled not in page, pooled
        for name, text in tables.items():
            assert pooled not in text, (name, pooled)


def test_no_printed_p_is_below_what_twenty_seeds_can_give(book_items):
    """Every p the page prints, in its tables and its sentences, is one a test on the seeds can give."""
    items = page_items(book_items)
    texts = [item.content.decode() for _, (d, item) in items.items() if d.kind == "table"]
    texts += [t for _, (d, item) in items.items() for t in strings(item.values)]
    printed = [p for t in texts for p in printed_p_values(t)]
    assert len(printed) > 20  # the page prints many; the parser reads them
    # two significant digits: 2 / 2**20 = 1.907e-6 prints as 1.9 × 10⁻⁶
    assert min(printed) >= float(f"{SMALLEST_P:.1e}"), min(printed)
    for t in texts:
        assert "p < " not in t and "p = <" not in t and "10⁻⁹⁹" not in t
    assert items["bilm_loss"][1].values["p_floor"] == SMALLEST_P == 2.0**-19


def test_the_paired_tests_of_the_page_are_the_signed_rank_test_on_its_seeds(book_items):
    """A paired test's p on the page is wilcoxon_signed_rank of the per-seed differences, computed here again
    from the per-seed counts the builder read (that those are the runs' own is tested on a small run below)."""
    items = page_items(book_items)
    layers = items["layer_table"][1]
    lower, upper = layers.values["per_seed"]["lower"], layers.values["per_seed"]["upper"]
    assert len(lower) == len(upper) == w.SEEDS
    expected = wilcoxon_signed_rank(per_seed_differences(lower, upper)).p
    assert layers.values["p"] == expected
    assert w._p(expected) in layers.content.decode() and w._p(expected) in layers.values["versus"]
    # the page says the lower layer is higher: the test agrees, and more seeds favour it than not
    assert layers.values["versus"].startswith("higher") == (expected < w.ALPHA and layers.values["difference"] > 0)
    probe_values = items["probe_table"][1].values
    both, untrained = probe_values["per_seed"]["both"], probe_values["per_seed"]["untrained"]
    expected = wilcoxon_signed_rank(per_seed_differences(both, untrained)).p
    assert probe_values["both_versus_untrained_p"] == expected
    assert w._p(expected) in probe_values["both_versus_untrained"]
    # the slot: own side against other side, seed by seed
    slot = items["slot_table"][1].values
    for d in w.OWN:
        own, other = np.array(slot["per_seed_own"][d]), np.array(slot["per_seed_other"][d])
        assert own.size == other.size == w.SEEDS
        assert slot["own_vs_other_p"][d] == wilcoxon_signed_rank(own - other).p
    # and an interval is across seeds: the bootstrap median of the per-seed accuracies
    acc = [float(Fraction(*p)) for p in lower]
    assert layers.values["lower"] == bootstrap_median(acc, resamples=w.RESAMPLES, seed=w.BOOTSTRAP_SEED)[0]


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
        assert steps["neighbour_untrained_words"][d].startswith("above one half")
        assert steps["last_sense"][d] < steps["untrained_sense"][d]
        # "... and put little of the sense there": within ten points of chance. Whether the senses beat the
        # control task there is worded from the paired test (last_versus) and is not asserted: it is near the
        # edge of what the test detects, and the processor's arithmetic can tip it.
        chance = 1 / len(next(iter(corpus.SENSES.values())))
        assert steps["last_sense"][d] - chance < 0.1
    # "... a score for recognizing the cue word, as the control task showed"; and the bag sees a near cue
    probe_values = items["probe_table"][1].values
    assert probe_values["median"]["untrained"] > 0.5
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

    def median(values):
        return bootstrap_median(values, resamples=w.RESAMPLES, seed=w.BOOTSTRAP_SEED)

    _, values = w.probe_table(seeds=2)
    for method in probe.METHODS:
        acc = [r.final.correct[method] / r.final.total for r in runs]
        assert values["median"][w._key(method)] == pytest.approx(median(acc)[0])
    best = w._by_median({m: [(r.final.correct[m], r.final.total) for r in runs] for m in probe.METHODS})[0]
    assert values["first"] == w.PLAIN[best] and values["ranked"].startswith(w.PLAIN[best])
    assert values["static_min"] == values["static_max"] == 0.5
    both = [(r.final.correct["both"], r.final.total) for r in runs]
    untrained = [(r.final.correct["untrained"], r.final.total) for r in runs]
    assert values["per_seed"]["both"] == both and values["per_seed"]["untrained"] == untrained
    assert values["both_versus_untrained_p"] == wilcoxon_signed_rank(per_seed_differences(both, untrained)).p
    _, steps = w.probe_steps_table(seeds=2)
    sense = [r.counts[(0, "sense", "forward", "before")] for r in runs]
    control = [r.counts[(0, "control", "forward", "before")] for r in runs]
    assert steps["untrained_sense"]["forward"] == median([c / n for c, n in sense])[0]
    selectivity = per_seed_differences(sense, control)
    assert steps["untrained_selectivity"]["forward"] == pytest.approx(median(selectivity)[0])
    assert w._p(wilcoxon_signed_rank(selectivity).p) in steps["untrained_versus"]["forward"]
    _, slot = w.slot_table(seeds=2)
    own = [float(np.mean(r.slot[(3, "backward", "after")])) for r in runs]
    other = [float(np.mean(r.slot[(3, "backward", "before")])) for r in runs]
    assert slot["per_seed_own"]["backward"] == own and slot["per_seed_other"]["backward"] == other
    assert (slot["own"]["backward"], slot["own_low"]["backward"], slot["own_high"]["backward"]) == median(own)
    assert slot["own_vs_other_p"]["backward"] == wilcoxon_signed_rank(np.array(own) - np.array(other)).p
    assert slot["floor"]["word"] == corpus.slot_entropy("word")
    word_floor = wilcoxon_signed_rank(np.array(own) - corpus.slot_entropy("word")).p
    assert slot["own_vs_word"]["backward"].endswith(f"that floor ({w._p(word_floor)})")
    _, layers = w.layer_table(seeds=2)
    lower = [(r.final.correct["layer 1"], r.final.total) for r in runs]
    upper = [(r.final.correct["both"], r.final.total) for r in runs]
    assert layers["per_seed"] == {"lower": lower, "upper": upper}
    assert layers["lower"] == median([c / n for c, n in lower])[0]
    assert layers["p"] == wilcoxon_signed_rank(per_seed_differences(lower, upper)).p
    _, distance = w.cue_distance_table(seeds=2)
    assert 0 <= distance["trained_off"] <= 0.5 and distance["nearest"] < distance["farthest"]
    _, mixture = w.mixture_table(seeds=2)
    assert 0 <= mixture["s0_max"] <= 1 and mixture["words"] == len(corpus.SENSES)
    fig, loss = w.bilm_loss(seed=1, seeds=2, window=2)
    assert loss["steps"] == 3 and loss["first"] == runs[1].losses[0]
    assert loss["p_floor"] == sign_test(2, 2) == 0.5  # two seeds can never give a p below one half
    with pytest.raises(ValueError, match="seed must be one of the 2 seeds trained"):
        w.bilm_loss(seed=2, seeds=2)


def test_the_computed_words_follow_the_paired_test():
    ahead = [(9, 10)] * 6 + [(8, 10)] * 6
    behind = [(5, 10)] * 12
    assert w._versus(ahead, behind).startswith("higher (p = ")
    assert w._versus(behind, ahead).startswith("lower")
    mixed = [(5 + s % 3 - 1, 10) for s in range(12)]  # 4, 5, 6 of 10 by turns: no direction
    assert w._versus(mixed, behind).startswith("not detectably different")
    # paired, not pooled: each seed is one pair, whatever its number of occurrences
    d = per_seed_differences(ahead, behind)
    assert w._p(wilcoxon_signed_rank(d).p) in w._versus(ahead, behind)
    assert w._chance_words([(8, 10)] * 12).startswith("above one half (")
    assert w._chance_words([(2, 10)] * 12).startswith("below one half (")
    assert w._chance_words(mixed).startswith("no detectable difference from one half")
    assert w._chance_words([(10, 10)] * 2).startswith("no detectable difference")  # two seeds cannot tell
    floor = corpus.slot_entropy("nothing")
    assert w._against_floor([floor - 0.1 - s / 100 for s in range(12)], "nothing").startswith("below that floor")
    assert w._against_floor([floor + 0.1 + s / 100 for s in range(12)], "nothing").startswith("above that floor")
    assert w._against_floor([floor + (-1) ** s * 0.1 for s in range(12)], "nothing").startswith("not detectably")
    assert w._p(0.0312) == "p = 0.031" and w._p(0.5) == "p = 0.50" and w._p(1.0) == "p = 1.0"
    assert w._p(0.0999) == "p = 0.10" and w._p(0.0012) == "p = 0.0012" and w._p(2.0**-19) == "p = 1.9 × 10⁻⁶"
    for bad in (0.0, -0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="p must be a probability"):
            w._p(bad)
    with pytest.raises(ValueError, match="one count per seed each"):
        w._differences([(1, 2)], [(1, 2), (1, 2)])


def test_the_ranking_groups_only_what_the_paired_test_tells_apart():
    seeds = 12
    per_seed = {
        "bag": [(95, 100)] * seeds,
        "untrained": [(70 + s % 3, 100) for s in range(seeds)],
        "static": [(70 + (s + 1) % 3, 100) for s in range(seeds)],
        "forward": [(40, 100)] * seeds,
    }
    order, rule = w._ranking(per_seed)
    groups = [g.split(" and ") for g in order.split("; then ")]
    assert groups == [[w.PLAIN["bag"]], [w.PLAIN["untrained"], w.PLAIN["static"]], [w.PLAIN["forward"]]]

    def p(a, b):
        return wilcoxon_signed_rank(per_seed_differences(per_seed[a], per_seed[b])).p

    apart = [p("bag", "untrained"), p("static", "forward")]
    level = p("untrained", "static")
    assert max(apart) < w.ALPHA <= level
    assert f"({w._p(min(apart))})" in rule or f"({w._p(min(apart))} to" in rule
    assert f"not detectably different from the one before it ({w._p(level)})" in rule
    assert f"on the {seeds} seeds' paired accuracies" in rule
    # one group, or every neighbour apart: the sentence says only what applies
    alike, rule = w._ranking({"bag": per_seed["untrained"], "untrained": per_seed["static"]})
    assert " and " in alike and "; then" not in alike and "semicolon" not in rule and rule.startswith("Within")
    apart_only, rule = w._ranking(
        {"bag": [(99, 100)] * seeds, "untrained": [(50, 100)] * seeds, "static": [(1, 100)] * seeds}
    )
    assert apart_only.count("; then") == 2 and "within a group" not in rule and rule.startswith("A semicolon")

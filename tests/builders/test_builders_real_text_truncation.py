"""The planted-dependency table of "Real text: a character-level model": it renders each design's cells, counts
and tests them as the core does, and the page's own sentences hold on its values.

Two kinds of test. With tiny cells standing in for the chapter's, the table renders from a directive and its
values are held to the core functions computed here. With the page's own items (rendered once per session into
the shared cache), the sentences the page writes in its own words are held to the values: properties that hold
on the standard library of any Python version, never numbers typed in here.
"""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest
from one_directive import OneDirective

from rnnmem import planted, stats, verdicts
from rnnmem.site.builders import real_text_truncation as rtt
from rnnmem.site.directives import find_directives
from rnnmem.site.render import Renderer

PAGE_NAME = "docs/chapters/real-text.md"
PAGE = Path(__file__).resolve().parents[2] / PAGE_NAME
TRAIN, VALID = ("textwrap", "shlex"), ("colorsys", "bisect")

one = OneDirective(PAGE_NAME)


@pytest.fixture(scope="module")
def tiny() -> dict:
    """Each design's cells, two seeds of a tiny network a few updates long, by design."""
    out = {}
    for name, (how, keys, _) in rtt.DESIGNS.items():
        design = dataclasses.replace(how, hidden=4, updates=3, eval_symbols=3000, eval_streams=4)
        out[name] = {
            (k, n): planted.Cell(k, n, seeds=(0, 1), design=design, train_modules=TRAIN, valid_modules=VALID).execute()
            for k, n in keys
        }
    return out


@pytest.fixture
def small(tiny, monkeypatch):
    monkeypatch.setattr(rtt, "_cells", lambda design: tiny[design])
    return tiny


@pytest.mark.parametrize("design", ["first", "second"])
def test_the_table_counts_tests_and_words_what_the_cells_measured(small, tmp_path, design):
    cells = small[design]
    how, _, contrasts = rtt.DESIGNS[design]
    item = Renderer(tmp_path).render(one(f'<!-- table: real_text_truncation design="{design}" -->'))
    v, text = item.values, item.content.decode()
    follow = planted.FOLLOW_UP if design == "first" else ()
    assert text.count("\n| ") == len(cells) and text.count(" † |") == len(follow)
    assert v["updates"] == how.updates and f"{how.updates} updates" in text
    for (k, n), r in cells.items():
        c = v["cells"][f"{k},{n}"]
        low, high = stats.wilson(r.successes, r.n)
        assert (c["successes"], c["low"], c["high"]) == (r.successes, low, high)
        assert c["credited"] == planted.credited_share(k, n) and c["follow_up"] == ((k, n) in follow)
        # chance is the cell's own share of the most frequent digit, never one in ten by fiat
        assert c["chance"] == r.chance and v["chance"][str(n)] == r.chance
        hits = [round(a * r.recalls) for a in r.accuracy]
        assert c["above"] == sum(stats.wilson(h, r.recalls)[0] > r.chance for h in hits)
        assert f"| {r.successes} [{low:.2f}, {high:.2f}] | " in text and f"| {r.chance:.3f} |" in text
    assert v["chance_low"] == min(r.chance for r in cells.values())
    assert v["chance_high"] == max(r.chance for r in cells.values())
    assert set(v["tests"]) == {str(n) for n in contrasts}
    for n, (short, long) in contrasts.items():
        t, a, b = v["tests"][str(n)], cells[(short, n)], cells[(long, n)]
        p = stats.fisher_exact(a.successes, a.n, b.successes, b.n)
        verdict = verdicts.compare(a.successes, a.n, b.successes, b.n)
        assert (t["a"], t["b"], t["differ"]) == (a.successes, b.successes, p < verdicts.ALPHA)
        assert t["phrase"] in t["sentence"] and f"truncation {short}, {a.successes} of {a.n}" in t["sentence"]
        assert t["phrase"] == verdict.phrase and t["p"] == verdicts.p_text(p) and t["kind"] == verdict.kind
        # A null names its power; two arms at the floor get no verdict, never "no detectable difference".
        assert ("power" in t["sentence"]) == (verdict.kind == "null")
        floor = a.successes <= 0.1 * a.n and b.successes <= 0.1 * b.n
        ceiling = a.successes >= 0.9 * a.n and b.successes >= 0.9 * b.n
        null = p >= verdicts.ALPHA and not floor and not ceiling
        assert ("no detectable difference" in t["sentence"]) == null
        above = v["above_tests"][str(n)]
        a_above, b_above = rtt._above_chance(a), rtt._above_chance(b)
        assert (
            (above["a"], above["b"])
            == (a_above, b_above)
            == (v["cells"][f"{short},{n}"]["above"], v["cells"][f"{long},{n}"]["above"])
        )
        assert above["differ"] == (stats.fisher_exact(a_above, a.n, b_above, b.n) < verdicts.ALPHA)
        assert f"{a_above} of {a.n} seeds read the clue above chance under truncation {short}" in above["sentence"]
    assert set(v["longest"]) == {str(k) for k, _ in cells}
    for key, longest in v["longest"].items():
        k = int(key)
        learned = [n for (kk, n), r in cells.items() if kk == k and r.successes >= planted.LEARNED_RATE * r.n]
        assert longest == (max(learned) if learned else None)
        assert f"truncation {k}" in v["longest_sentence"] or f" {k}" in v["longest_sentence"]


def test_the_sentence_builders_word_each_case():
    assert rtt._longest_sentence({1: None, 2: 1, 8: 1}) == (
        "under truncation 1 no distance was learned; under truncations 2 and 8 the longest distance learned was 1"
    )
    assert rtt._join([]) == "none" and rtt._join(["a"]) == "a" and rtt._join(["a", "b", "c"]) == "a, b and c"
    some = planted.CellResult(accuracy=(0.5, 0.1), recalls=1000, successes=0, n=2, final_loss=(1.0, 1.0), chance=0.11)
    assert rtt._carry_sentence(some).startswith("1 of the 2 seeds trained so at distance 1 read the clue")
    assert "0.110" in rtt._carry_sentence(some)
    # 0.13 of 1,000 recalls lies above one in ten, but not above a most frequent digit's share of 0.12
    higher = dataclasses.replace(some, accuracy=(0.13, 0.09), chance=0.12)
    assert rtt._carry_sentence(higher).startswith("none of the 2 seeds")
    assert rtt._above_chance(dataclasses.replace(higher, chance=0.1)) == 1


# ------------------------------------------------------------------ the page's own items


def page_items(book_items) -> dict:
    """The page's truncation tables, by design: (directive, item)."""
    found = [d for d in find_directives(PAGE.read_text(), PAGE_NAME) if d.name == "real_text_truncation"]
    return {d.args.get("design", "second"): book_items[d.where] for d in found}


def test_the_sentences_the_page_writes_hold_on_its_values(book_items):
    items = page_items(book_items)
    assert set(items) == {"first", "second"}
    for name, (_, item) in items.items():
        how, keys, contrasts = rtt.DESIGNS[name]
        v = item.values
        assert v["seeds"] == len(planted.SEEDS) and v["updates"] == how.updates
        assert set(v["cells"]) == {f"{k},{n}" for k, n in keys}
        assert set(v["tests"]) == {str(n) for n in contrasts}
        for c in v["cells"].values():
            assert 0 <= c["successes"] <= c["n"] == len(planted.SEEDS) and 0 <= c["above"] <= c["n"]
            assert c["low"] <= c["successes"] / c["n"] <= c["high"]
            # "chance ... above one in ten": a finite planting is never exactly uniform
            assert 0.1 < c["chance"] < 0.2
    first, second = items["first"][1].values, items["second"][1].values
    # "the budget was raised from ... to ...": the second design differs from the first in its budget alone
    assert second["updates"] > first["updates"]
    learned = {key for key, c in second["cells"].items() if c["successes"] >= planted.LEARNED_RATE * c["n"]}
    # "a budget at which the whole window learns distance 2"; "The first design could not show what truncation
    # does. Where a distance went unlearned even under truncation 32 ..."
    assert "32,2" in learned and first["longest"]["32"] == 1
    # "The learned distance moves with the truncation"
    longest = [second["longest"][str(k)] or 0 for k in planted.TRUNCATIONS]
    assert longest == sorted(longest) and longest[0] < longest[-1]
    # "Wherever the whole window learned a distance, the truncation that credits none of its pairs stopped it"
    for n, t in second["tests"].items():
        if f"32,{n}" in learned:
            assert t["kind"] == "fewer" and t["differ"]
    # "in these runs a distance whose pairs the gradient never reached was never learned"
    assert all(key not in learned for key, c in second["cells"].items() if c["credited"] == 0)
    # "truncation 4, which credits half the pairs at distance 2, did not [stop it]"
    assert second["cells"]["4,2"]["credited"] == 0.5 and "4,2" in learned
    # "Beyond distance 2 no truncation, the whole window included, trained a seed to succeed"
    assert all(c["successes"] == 0 for key, c in second["cells"].items() if int(key.split(",")[1]) > 2)
    # "Some seeds did read the clue at distance 4 above chance"
    assert any(c["above"] > 0 for key, c in second["cells"].items() if key.endswith(",4"))


def test_the_page_uses_the_designs_of_the_core():
    source = inspect.getsource(rtt)
    assert "planted.Cell(k, d, design=how)" in source
    for field in ("hidden=", "updates=", "lr=", "window="):  # no second copy of a design
        assert field not in source, field

"""The Kneser–Ney baseline of "Real text": each builder renders, and its values are the core's on the same text.

A tiny language model and a small corpus stand in for the chapter's run (as in test_builders_real_text.py);
the page's own items are held to the sentences the page words around them.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from one_directive import OneDirective

from rnnmem import charlm, ngram, stats, verdicts
from rnnmem.site import textsamples
from rnnmem.site.builders import real_text_ngram as rtn
from rnnmem.site.directives import DirectiveError, find_directives
from rnnmem.site.render import Renderer
from rnnmem.site.tables import Table

PAGE_NAME = "docs/chapters/real-text.md"
PAGE = Path(__file__).resolve().parents[2] / PAGE_NAME
TRAIN, VALID = ("textwrap", "shlex"), ("colorsys", "bisect")

one = OneDirective(PAGE_NAME)


@pytest.fixture(scope="module")
def tiny():
    recipe = charlm.Recipe(hidden=8, window=16, batch=4, updates=12, checkpoints=(0, 4, 12), eval_streams=4)
    lm = charlm.TextRun(recipe, TRAIN, VALID).execute()
    return lm, charlm.stdlib_corpus(TRAIN, VALID)


@pytest.fixture
def small(tiny, monkeypatch):
    lm, corpus = tiny
    monkeypatch.setattr(textsamples, "lm", lambda: lm)
    monkeypatch.setattr(textsamples, "corpus", lambda: corpus)
    return tiny


def test_the_order_is_chosen_on_the_training_texts_tail(small, tmp_path):
    _, corpus = small
    item = Renderer(tmp_path).render(one("<!-- table: real_text_ngram_orders -->"))
    v, text = item.values, item.content.decode()
    train = charlm.encode(corpus.train)
    split = train.size - math.ceil(ngram.HELD_OUT_SHARE * train.size)
    assert v["fitted"] == split and v["held_out"] == train.size - split
    assert v["orders"] == list(ngram.ORDERS)
    for k in ngram.ORDERS:
        nats = ngram.KneserNey.fit(train[:split], k).nats(train[split:])
        assert v["nats"][str(k)] == pytest.approx(nats, abs=1e-12)
        assert f"| {Table._cell(f'{nats:.3f}')} | {Table._cell(f'{math.exp(nats):.2f}')} |" in text
    assert v["order"] == min(ngram.ORDERS, key=lambda k: v["nats"][str(k)])
    assert f"| {v['order']} (chosen) |" in text and text.count("(chosen)") == 1
    assert v["at_edge"] == (v["order"] == max(ngram.ORDERS))
    model = ngram.KneserNey.fit(train, v["order"])
    assert v["fallback"] == [k for k, d in model.discounts.items() if d == ngram.FALLBACK_DISCOUNTS]


def test_the_fallback_sentence_words_each_case():
    assert rtn._fallback_sentence([], 5) == "every order of the chosen model, 1 to 5, has discounts from the formula"
    one_order = rtn._fallback_sentence([1], 7)
    assert "for order 1 of 7" in one_order and one_order.endswith("that order takes the fixed discounts 0.5, 1, 1.5")
    assert "for orders 1 and 2 of 7" in rtn._fallback_sentence([1, 2], 7)


def test_the_comparison_table_reads_the_same_run_and_scores_the_chosen_order(small, tmp_path):
    lm, corpus = small
    item = Renderer(tmp_path).render(one("<!-- table: real_text_ngram -->"))
    v, text = item.values, item.content.decode()
    train, valid = charlm.encode(corpus.train), charlm.encode(corpus.valid)
    choice = ngram.choose_order(train)
    assert v["order"] == choice.order
    assert v["nats"]["kn"] == pytest.approx(choice.model.nats(valid), abs=1e-12)
    assert v["rnn"] == pytest.approx(lm.perplexity(12)) and v["updates"] == 12
    for order, name in enumerate(("uniform", "unigram", "bigram")):
        assert v["nats"][name] == pytest.approx(charlm.ngram_nats(train, valid, order))
    assert v["ratio"] == pytest.approx(v["rnn"] / v["kn"]) and v["rnn_behind"] == (v["rnn"] > v["kn"])
    assert text.count("\n| ") == 5 and f"{choice.order}-gram, modified Kneser–Ney" in text
    model = lm.model(12)
    diffs = []
    for name in VALID:
        ids = charlm.encode(charlm.module_path(name).read_text(encoding="utf-8"))
        rnn, kn = float(model.nats(ids, streams=1)[0]), choice.model.nats(ids)
        assert v["per_file"][name] == pytest.approx([rnn, kn], abs=1e-12)
        diffs.append(rnn - kn)
    versus = v["versus"]
    assert versus["files"] == len(VALID) and versus["kn_lower"] == sum(d > 0 for d in diffs)
    assert versus["p"] == verdicts.p_text(stats.wilcoxon_signed_rank(diffs).p)


def test_the_versus_sentence_words_each_case():
    ahead = rtn._versus({f"f{i}": (2.0 + 0.1 * i, 1.0) for i in range(8)})
    assert ahead["kn_lower"] == 8 and ahead["verdict"] == "the Kneser–Ney model has the lower loss"
    behind = rtn._versus({f"f{i}": (1.0, 2.0 + 0.1 * i) for i in range(8)})
    assert behind["kn_lower"] == 0 and behind["verdict"] == "the network has the lower loss"
    mixed = rtn._versus({"a": (1.0, 1.5), "b": (1.6, 1.0), "c": (1.0, 1.2)})
    assert mixed["verdict"].startswith("no detectable difference")


def test_the_samples_are_drawn_alike_and_their_spelling_compared(small, tmp_path):
    lm, corpus = small
    item = Renderer(tmp_path).render(one('<!-- figure: real_text_ngram_samples seed=3 caption="c" -->'))
    assert item.content.lstrip().startswith(b"<?xml") and b"<svg" in item.content
    v = item.values
    choice = ngram.choose_order(charlm.encode(corpus.train))
    texts = {
        "rnn": charlm.sample(lm.model(12), "\n", textsamples.SAMPLE_CHARS, temperature=1.0, seed=3),
        "kn": choice.model.sample(textsamples.SAMPLE_CHARS, prompt="\n", seed=3),
    }
    for key, text in texts.items():
        assert text.startswith(v["samples"][key])
        known, words = rtn._spelling(text, corpus.train)
        assert (v["known"][key], v["words"][key]) == (known, words)
        assert v["share"][key] == pytest.approx(charlm.known_share(text, corpus.train), nan_ok=True)
    test = verdicts.compare(v["known"]["rnn"], v["words"]["rnn"], v["known"]["kn"], v["words"]["kn"])
    assert v["test"]["kind"] == test.kind and v["test"]["p"] == verdicts.p_text(test.p)


@pytest.mark.parametrize("directive, name", [("temperature=0", "temperature"), ("seed=-1", "seed")])
def test_bad_arguments_name_the_argument(small, tmp_path, directive, name):
    with pytest.raises(DirectiveError, match=name):
        Renderer(tmp_path).render(one(f'<!-- figure: real_text_ngram_samples {directive} caption="c" -->'))


# ------------------------------------------------------------------ the page's own items


def test_the_sentences_the_page_writes_around_the_kneser_ney_model_hold(book_items):
    items = {d.name: book_items[d.where][1] for d in find_directives(PAGE.read_text(), PAGE_NAME)}
    orders, versus, samples = (
        items["real_text_ngram_orders"].values,
        items["real_text_ngram"].values,
        items["real_text_ngram_samples"].values,
    )
    assert orders["order"] == versus["order"] == samples["order"]
    # "the held-out loss falls with every order tried"
    nats = [orders["nats"][str(k)] for k in ngram.ORDERS]
    assert np.all(np.diff(nats) < 0) and orders["at_edge"]
    # "the network stands behind the Kneser–Ney model"; the counts of the first table stay below it
    assert versus["rnn_behind"] and versus["ratio"] > 1
    assert versus["kn"] < versus["bigram"] < versus["unigram"] < versus["uniform"]
    assert versus["versus"]["verdict"] == "the Kneser–Ney model has the lower loss"
    # "counting seven characters back spells better than the network": the shares differ, that way
    assert samples["test"]["kind"] == "fewer"

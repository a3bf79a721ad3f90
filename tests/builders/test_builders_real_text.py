"""The figures and tables of "Real text: a character-level model": each renders, reports what it drew, and the
page's own sentences hold on its values (bad arguments: test_builder_arguments.py).

Two kinds of test. With a tiny language model and tiny cells standing in for the chapter's runs, each builder
renders from a directive and its values are held to the core functions computed here. With the page's own items
(rendered once per session into the shared cache), the sentences the page writes in its own words are held to
the values: properties that hold on the standard library of any Python version, never numbers typed in here.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from one_directive import OneDirective

from rnnmem import charlm
from rnnmem.site import textsamples
from rnnmem.site.builders import real_text as rt
from rnnmem.site.directives import DirectiveError, find_directives
from rnnmem.site.render import Renderer

PAGE_NAME = "docs/chapters/real-text.md"
PAGE = Path(__file__).resolve().parents[2] / PAGE_NAME
TRAIN, VALID = ("textwrap", "shlex"), ("colorsys", "bisect")


one = OneDirective(PAGE_NAME)


# ------------------------------------------------------------------ tiny stand-ins for the chapter's runs


@pytest.fixture(scope="module")
def tiny():
    recipe = charlm.Recipe(hidden=8, window=16, batch=4, updates=12, checkpoints=(0, 4, 12), eval_streams=4)
    lm = charlm.TextRun(recipe, TRAIN, VALID).execute()
    return lm, None, charlm.stdlib_corpus(TRAIN, VALID)


@pytest.fixture
def small(tiny, monkeypatch):
    lm, cells, corpus = tiny
    monkeypatch.setattr(textsamples, "lm", lambda: lm)
    monkeypatch.setattr(textsamples, "corpus", lambda: corpus)
    return tiny


def test_the_perplexity_table_shows_the_baselines_and_the_network(small, tmp_path):
    lm, _, corpus = small
    item = Renderer(tmp_path).render(one("<!-- table: real_text_perplexity -->"))
    v, text = item.values, item.content.decode()
    train_ids, valid_ids = charlm.encode(corpus.train), charlm.encode(corpus.valid)
    for order, name in enumerate(("uniform", "unigram", "bigram")):
        nats = charlm.ngram_nats(train_ids, valid_ids, order)
        assert v["nats"][name] == pytest.approx(nats) and v[name] == pytest.approx(math.exp(nats))
        assert f"| {nats:.3f} | {nats / math.log(2):.2f} | {math.exp(nats):.2f} |" in text
    assert v["rnn"] == pytest.approx(lm.perplexity(12)) and v["updates"] == 12
    assert v["uniform"] == pytest.approx(charlm.VOCAB_SIZE)
    assert v["chars"] == {"train": len(corpus.train), "valid": len(corpus.valid)} and v["digest"] == corpus.digest
    assert v["modules"] == {"train": 2, "valid": 2} and text.count("\n| ") == 4


def test_the_curve_reports_the_checkpoints_and_where_it_passes_each_baseline(small, tmp_path):
    lm, _, _ = small
    item = Renderer(tmp_path).render(one('<!-- figure: real_text_curve window=4 caption="c" -->'))
    assert item.content.lstrip().startswith(b"<?xml") and b"<svg" in item.content
    v = item.values
    assert v["checkpoints"] == [0, 4, 12] and v["updates"] == 12
    assert v["first"] == pytest.approx(lm.perplexity(0)) and v["last"] == pytest.approx(lm.perplexity(12))
    for name in ("unigram", "bigram"):
        below = [s for s in (0, 4, 12) if lm.perplexity(s) < v[name]]
        assert v[f"below_{name}"] == (below[0] if below else None)
    assert v["train_last"] == pytest.approx(math.exp(np.mean(lm.train_losses[-4:])))
    with pytest.raises(DirectiveError, match="window must be at most the run's 12 updates"):
        Renderer(tmp_path).render(one('<!-- figure: real_text_curve window=13 caption="c" -->'))


def test_the_samples_are_the_models_own_at_each_step(small, tmp_path):
    lm, _, corpus = small
    item = Renderer(tmp_path).render(one('<!-- figure: real_text_samples steps=[0, 12] seed=3 caption="c" -->'))
    v = item.values
    for step in (0, 12):
        text = charlm.sample(lm.model(step), "\n", textsamples.SAMPLE_CHARS, temperature=1.0, seed=3)
        key = str(step)  # the values are JSON: their keys are strings
        assert v["known"][key] == pytest.approx(charlm.known_share(text, corpus.train), nan_ok=True)
        assert v["distinct"][key] == len(set(text)) and text.startswith(v["samples"][key])
        assert v["perplexity"][key] == pytest.approx(lm.perplexity(step))
        assert 0.0 <= v["indented"][key] <= 1.0
    unigram = charlm.ngram_sample(charlm.encode(corpus.train), 1, textsamples.SAMPLE_CHARS, seed=3)
    assert v["known_unigram"] == pytest.approx(charlm.known_share(unigram, corpus.train), nan_ok=True)
    with pytest.raises(DirectiveError, match=r"steps\[1\] must be one of the run's checkpoints \[0, 4, 12\]"):
        Renderer(tmp_path).render(one('<!-- figure: real_text_samples steps=[0, 5] caption="c" -->'))


def test_the_temperature_figure_measures_each_tempered_distribution(small, tmp_path):
    lm, _, corpus = small
    item = Renderer(tmp_path).render(one('<!-- figure: real_text_temperature temperatures=[0.5, 2.0] caption="c" -->'))
    v = item.values
    model = lm.model(12)
    for tau in (0.5, 2.0):
        nats = float(model.nats(charlm.encode(corpus.valid), temperature=tau)[0])
        assert v["perplexity"][str(tau)] == pytest.approx(math.exp(nats))
        drawn = charlm.sample(model, "\n", textsamples.SAMPLE_CHARS, temperature=tau, seed=0)
        assert v["distinct"][str(tau)] == len(set(drawn))
    assert v["best"] == min((0.5, 2.0), key=lambda t: v["perplexity"][str(t)]) and v["updates"] == 12


# ------------------------------------------------------------------ the page's own items


def page_items(book_items) -> dict:
    """The page's own items, by builder name: (directive, item)."""
    return {d.name: book_items[d.where] for d in find_directives(PAGE.read_text(), PAGE_NAME)}


def test_every_directive_of_the_page_renders(book_items):
    items = page_items(book_items)
    assert sorted(items) == [
        "real_text_connectivity",
        "real_text_curve",
        "real_text_gradient_explorer",
        "real_text_lstm_curve",
        "real_text_lstm_perplexity",
        "real_text_lstm_samples",
        "real_text_ngram",
        "real_text_ngram_orders",
        "real_text_ngram_samples",
        "real_text_perplexity",
        "real_text_samples",
        "real_text_temperature",
        "real_text_truncation",
    ]
    for name, (d, item) in items.items():
        if d.kind == "figure":
            assert item.content.startswith(b"<?xml") and b"<svg" in item.content, name


def test_the_sentences_the_page_writes_hold_on_its_values(book_items):
    items = page_items(book_items)
    ppl = items["real_text_perplexity"][1].values
    # "Each model beats the one before it"
    assert ppl["rnn"] < ppl["bigram"] < ppl["unigram"] < ppl["uniform"] == pytest.approx(charlm.VOCAB_SIZE)
    assert ppl["ratio_bigram"] > 1 and ppl["updates"] == charlm.RECIPE.updates
    curve = items["real_text_curve"][1].values
    # "passes the unigram counts within its first ... updates and the bigram counts by update ..."
    assert curve["below_unigram"] is not None and curve["below_bigram"] is not None
    assert curve["below_unigram"] <= curve["below_bigram"]
    samples = items["real_text_samples"][1].values
    steps = samples["steps"]
    # "Before training the network draws from nearly the uniform distribution over all 97 symbols"
    assert samples["perplexity"][str(steps[0])] > 0.9 * charlm.VOCAB_SIZE and steps[0] == 0
    # the alt text: "The later ones use fewer [symbols] ... spaces at the start of lines"
    assert all(samples["distinct"][str(s)] < samples["distinct"]["0"] for s in steps[1:])
    assert samples["indented"][str(steps[-1])] > samples["indented"]["0"]
    # "the share ... rose from ... before training to ... after"; "counting does not spell"
    last_known = samples["known"][str(steps[-1])]
    assert last_known > samples["known"]["0"]
    assert last_known > max(samples["known_unigram"], samples["known_bigram"])
    temperature = items["real_text_temperature"][1].values
    # "A low temperature buys that safety": fewer symbols and more known words cold than hot
    assert temperature["distinct"]["0.5"] < temperature["distinct"]["1.0"] < temperature["distinct"]["1.5"]
    assert temperature["known"]["0.5"] > temperature["known"]["1.5"]


def test_the_page_uses_the_recipe_and_design_of_the_core():
    import inspect

    shared, source = inspect.getsource(textsamples), inspect.getsource(rt)
    assert "charlm.TextRun()" in shared  # the chapter's run: the core's recipe, as it stands
    assert "textsamples.lm()" in source
    for text in (shared, source):
        for field in ("hidden=", "updates=", "lr=", "window="):  # no second copy of the recipe or the design
            assert field not in text, field

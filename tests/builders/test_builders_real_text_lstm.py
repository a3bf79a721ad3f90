"""The LSTM beside the tanh RNN on real text, and connectivity by distance: each builder renders from a directive,
and its values are held to the core functions computed here, on tiny runs standing in for the chapter's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from one_directive import OneDirective

from rnnmem import charlm, stats
from rnnmem.site.builders import real_text_lstm as rl
from rnnmem.site.directives import DirectiveError
from rnnmem.site.render import Renderer

one = OneDirective("docs/chapters/real-text.md")
TRAIN, VALID = ("textwrap", "shlex"), ("colorsys", "bisect")
SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def tiny():
    runs = {}
    for model in ("rnn", "lstm"):
        for s in SEEDS:
            recipe = charlm.Recipe(
                hidden=8, window=16, batch=4, updates=12, checkpoints=(0, 4, 12), eval_streams=4, seed=s, model=model
            )
            runs[(model, s)] = charlm.TextRun(recipe, TRAIN, VALID).execute()
    return runs, charlm.stdlib_corpus(TRAIN, VALID)


@pytest.fixture
def small(tiny, monkeypatch):
    runs, corpus = tiny
    monkeypatch.setattr(rl, "SEEDS", SEEDS)
    monkeypatch.setattr(rl, "MAX_LAG", 12)
    monkeypatch.setattr(rl, "POSITIONS", 6)
    monkeypatch.setattr(rl, "WARMUP", 4)
    monkeypatch.setattr(rl, "READ_AT", (1, 4, 12))
    monkeypatch.setattr(rl, "_runs", lambda: runs)
    monkeypatch.setattr(rl, "_corpus", lambda: corpus)
    rl._connectivity.cache_clear()
    yield tiny
    rl._connectivity.cache_clear()


def test_the_curve_reports_each_networks_seeds_and_when_each_passes_the_reference(small, tmp_path):
    runs, corpus = small
    item = Renderer(tmp_path).render(one('<!-- figure: real_text_lstm_curve caption="c" -->'))
    assert b"<svg" in item.content
    v = item.values
    level = math.exp(charlm.ngram_nats(charlm.encode(corpus.train), charlm.encode(corpus.valid), 2))
    assert v["reference_perplexity"] == pytest.approx(level) and v["reference"] == "bigram"
    assert v["checkpoints"] == [0, 4, 12] and v["seeds"] == len(SEEDS)
    for model in ("rnn", "lstm"):
        final = [runs[(model, s)].perplexity(12) for s in SEEDS]
        assert v[model]["final"]["seeds"] == pytest.approx(final)
        assert v[model]["final"]["median"] == pytest.approx(float(np.median(final)))
        assert v[model]["perplexity"]["4"]["low"] == pytest.approx(min(runs[(model, s)].perplexity(4) for s in SEEDS))
        for s, passed in zip(SEEDS, v[model]["passes"]):
            below = [c for c in (0, 4, 12) if runs[(model, s)].perplexity(c) < level]
            assert passed == (below[0] if below else None)
        assert v["behind"][model] == pytest.approx(np.median(final) / level)
    test = stats.mann_whitney(v["lstm"]["final"]["seeds"], v["rnn"]["final"]["seeds"])
    assert v["test"]["p_value"] == pytest.approx(test.p) and v["test"]["differ"] == (test.p < 0.05)


def test_the_table_shows_the_median_and_range_at_every_checkpoint(small, tmp_path):
    runs, _ = small
    item = Renderer(tmp_path).render(one("<!-- table: real_text_lstm_perplexity -->"))
    text = item.content.decode()
    for step in (0, 4, 12):
        row = [f"{step:,}"]
        for model in ("rnn", "lstm"):
            ppl = [runs[(model, s)].perplexity(step) for s in SEEDS]
            row.append(f"{np.median(ppl):.2f} [{min(ppl):.2f}, {max(ppl):.2f}]")
        assert "| " + " | ".join(row) + " |" in text
    assert item.values["seeds"] == len(SEEDS)


def test_the_samples_are_each_networks_seed_0_with_the_same_draws(small, tmp_path):
    runs, corpus = small
    item = Renderer(tmp_path).render(one('<!-- figure: real_text_lstm_samples steps=[4, 12] seed=3 caption="c" -->'))
    v = item.values
    for model in ("rnn", "lstm"):
        text = charlm.sample(runs[(model, 0)].model(12), "\n", rl.SAMPLE_CHARS, temperature=1.0, seed=3)
        assert v[model]["samples"]["12"] == "\n".join(text.split("\n")[:6])
        assert v[model]["known"]["12"] == pytest.approx(charlm.known_share(text, corpus.train), nan_ok=True)
        assert v[model]["perplexity"]["4"] == pytest.approx(runs[(model, 0)].perplexity(4))
    assert v["steps"] == [4, 12]


def test_a_sample_step_off_the_checkpoints_fails_naming_it(small, tmp_path):
    with pytest.raises(DirectiveError, match=r"steps\[1\] must be one of the run's checkpoints \[0, 4, 12\]"):
        Renderer(tmp_path).render(one('<!-- figure: real_text_lstm_samples steps=[4, 5] caption="c" -->'))


def test_an_unknown_reference_fails_naming_it(small, tmp_path):
    with pytest.raises(DirectiveError, match="reference must be one of"):
        Renderer(tmp_path).render(one('<!-- figure: real_text_lstm_curve reference="trigram" caption="c" -->'))


def test_connectivity_is_each_seeds_trained_network_read_by_the_core(small, tmp_path):
    runs, corpus = small
    item = Renderer(tmp_path).render(one('<!-- figure: real_text_connectivity caption="c" -->'))
    assert b"<svg" in item.content
    v = item.values
    valid = charlm.encode(corpus.valid)
    for model in ("rnn", "lstm"):
        conn = np.array([charlm.connectivity(runs[(model, s)].model(12), valid, 12, 6, warmup=4)[0] for s in SEEDS])
        for d in (1, 4, 12):
            at = v[model]["at"][str(d)]
            assert at["mean"] == pytest.approx(conn[:, d].mean())
            assert (at["low"], at["high"]) == pytest.approx((conn[:, d].min(), conn[:, d].max()))
        assert v[model]["fall"] == pytest.approx(conn[:, 1].mean() / conn[:, 12].mean())
    assert v["ratio"]["4"] == pytest.approx(v["lstm"]["at"]["4"]["mean"] / v["rnn"]["at"]["4"]["mean"])
    assert v["tests"]["12"]["p_value"] == pytest.approx(
        stats.mann_whitney(
            [v["lstm"]["at"]["12"]["seeds"][i] for i in range(3)], [v["rnn"]["at"]["12"]["seeds"][i] for i in range(3)]
        ).p
    )

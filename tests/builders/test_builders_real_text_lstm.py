"""The LSTM beside the tanh RNN on real text, and connectivity by distance: each builder renders from a directive,
and its values are held to the core functions computed here, on tiny runs standing in for the chapter's."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest
from one_directive import OneDirective, select

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


# ---------------------------------------------------------------------------- the widget

WIDGET = "<!-- widget: real_text_gradient_explorer at=600 chars=20 -->"


def _data(soup):
    return json.loads(str(select(soup, "script.rnnmem-w-data").string))


def test_each_share_is_the_norm_of_that_inputs_gradient_over_all_norms_so_far(small):
    runs, corpus = small
    valid = charlm.encode(corpus.valid)
    net = runs[("lstm", 0)].model(12)
    start, chars = rl._snippet(valid, 600, 20), 20
    shares = rl.gradient_shares(net, valid, start, chars)
    for t in (0, 7, 19):
        L = rl.WARMUP + t + 1
        x, y = valid[start - rl.WARMUP : start + t + 1, None], valid[start - rl.WARMUP + 1 : start + t + 2, None]
        mask = np.zeros((L, 1), dtype=bool)
        mask[-1] = True
        _, g, _ = net.loss_and_grads(x, y, mask=mask, input_grads=True)
        norms = np.linalg.norm(g["x"][:, 0, 0], axis=1)
        np.testing.assert_allclose(shares[t, : t + 1], norms[rl.WARMUP :] / norms.sum(), rtol=1e-9)
        assert (shares[t, t + 1 :] == 0).all()


def test_the_widget_shows_each_networks_shares_for_every_character(small, tmp_path):
    runs, corpus = small
    soup = one.soup(tmp_path, WIDGET)
    data = _data(soup)
    valid = charlm.encode(corpus.valid)
    start = rl._snippet(valid, 600, 20)
    ((states,),) = [[x["states"]] for x in data["layers"] if x["by"] == ["network", "position"]]
    assert len(states) == 2 * 20
    slider = select(soup, 'input[type=range][data-control="position"]')
    assert slider["max"] == "19" and slider["value"] == "19"  # the arrow keys move it, one character a step
    x0, y0, w, h = rl.WIDGET_BOX
    for k, model in enumerate(("rnn", "lstm")):
        shares = rl.gradient_shares(runs[(model, 0)].model(12), valid, start, 20)
        for t in (0, 5, 19):
            state = states[k * 20 + t]
            row = shares[t, : t + 1]
            assert state["r"]["self"] == f"{row[t]:.0%}" and state["r"]["snippet"] == f"{row.sum():.0%}"
            assert state["r"]["near"] == f"{row[max(0, t - 9) :].sum():.0%}"
            for j in range(20):
                level = max(math.log10(shares[t, j]), rl.SHARE_FLOOR) if j <= t else rl.SHARE_FLOOR
                assert state["c"]["share"][j] == pytest.approx(y0 + h * (1 - (level + 4) / 4), abs=0.06)
            assert state["m"]["at"] == pytest.approx(x0 + w / 20 * (t + 0.5), abs=0.01)
    shown = charlm.decode(valid[start : start + 20])
    letters = [str(t.string) for t in soup.select("svg text[font-family=monospace]")]
    assert "".join(letters) == shown.replace("\n", "⏎").replace(" ", "␣")


def test_two_renders_of_the_widget_are_byte_identical_and_light(small, tmp_path):
    first = Renderer(tmp_path / "a").render(one(WIDGET)).content
    assert first == Renderer(tmp_path / "b").render(one(WIDGET)).content
    assert len(gzip.compress(first)) < 20 * 1024


@pytest.mark.parametrize(
    "text, named",
    [
        ("real_text_gradient_explorer chars=5", "chars must be a whole number from 8 to 60"),
        ("real_text_gradient_explorer at=100000", "at must leave room for a snippet"),
    ],
)
def test_a_bad_widget_argument_fails_naming_it(small, tmp_path, text, named):
    with pytest.raises(DirectiveError, match=named):
        Renderer(tmp_path).render(one(f"<!-- widget: {text} -->"))


# ---------------------------------------------------------------------------- the page's own items


def test_the_pages_items_hold_what_the_page_says_of_them(book_items):
    """The design the page states (the recipe, the seeds, the distances read) is what its items computed."""
    from rnnmem.site.directives import find_directives

    page = Path(__file__).resolve().parents[2] / "docs/chapters/real-text.md"
    found = find_directives(page.read_text(), "docs/chapters/real-text.md")
    items = {d.name: book_items[d.where][1] for d in found}
    curve = items["real_text_lstm_curve"].values
    assert curve["seeds"] == len(rl.SEEDS) and curve["updates"] == charlm.RECIPE.updates
    assert curve["checkpoints"] == list(charlm.RECIPE.checkpoints)
    for model in ("rnn", "lstm"):
        final = curve[model]["final"]
        assert final["low"] <= final["median"] <= final["high"] and len(final["seeds"]) == len(rl.SEEDS)
        assert len(curve[model]["passes"]) == len(rl.SEEDS)
    conn = items["real_text_connectivity"].values
    assert conn["max_lag"] >= 100 and set(conn["tests"]) == {str(d) for d in rl.READ_AT} == {"1", "10", "100"}
    for model in ("rnn", "lstm"):
        for d in rl.READ_AT:
            at = conn[model]["at"][str(d)]
            assert 0 < at["low"] <= at["mean"] <= at["high"]
        # "From one character back to a hundred, ... connectivity falls by a factor of ..."
        assert conn[model]["fall"] > 1
    samples = items["real_text_lstm_samples"].values
    assert samples["steps"] == list(rl.SAMPLE_STEPS)

"""Probes on frozen vectors: exact gradients, a converged fit, chance where nothing is to be read, bad input named."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnnmem import bilm, corpus, probe
from rnnmem.bilm import Recipe
from rnnmem.probe import fit_logistic, fit_mixture, logistic_loss_and_grads, mixture_loss_and_grads
from rnnmem.stats import wilson


def numeric_gradient(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        keep = x[idx]
        x[idx] = keep + eps
        up = f()
        x[idx] = keep - eps
        down = f()
        x[idx] = keep
        g[idx] = (up - down) / (2 * eps)
    return g


def test_logistic_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((9, 4)), rng.integers(0, 2, 9)
    w, b = rng.standard_normal(4), np.array([0.3])
    _, dw, db = logistic_loss_and_grads(w, b[0], X, y, l2=0.2)
    np.testing.assert_allclose(
        dw, numeric_gradient(lambda: logistic_loss_and_grads(w, b[0], X, y, 0.2)[0], w), rtol=1e-6, atol=1e-9
    )
    assert db == pytest.approx(numeric_gradient(lambda: logistic_loss_and_grads(w, b[0], X, y, 0.2)[0], b)[0], rel=1e-6)


def test_mixture_gradient_matches_finite_differences_for_every_parameter():
    rng = np.random.default_rng(1)
    layers, y = rng.standard_normal((3, 7, 4)), rng.integers(0, 2, 7)
    params = {
        "a": rng.standard_normal(3),
        "gamma": np.array([1.3]),
        "weight": rng.standard_normal(4),
        "bias": np.array([-0.2]),
    }
    _, grads = mixture_loss_and_grads(params, layers, y, l2=0.1)
    for name, value in params.items():
        numeric = numeric_gradient(lambda: mixture_loss_and_grads(params, layers, y, 0.1)[0], value)
        np.testing.assert_allclose(grads[name], numeric, rtol=1e-6, atol=1e-9, err_msg=name)


def test_newton_reaches_the_minimum_and_separates_separable_data():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((60, 3)) * [1.0, 5.0, 0.1] + [0.0, 10.0, 0.0]
    y = (X[:, 0] + 0.3 * rng.standard_normal(60) > 0).astype(int)
    p = fit_logistic(X, y, l2=0.01)
    Z = (X - p.mean) / p.scale
    _, dw, db = logistic_loss_and_grads(p.weight, p.bias, Z, y, l2=0.01)
    assert np.abs(dw).max() < 1e-9 and abs(db) < 1e-9  # the gradient vanishes at the fit
    assert p.iterations < 50
    assert probe.accuracy(p.predict(X), y) > 0.85
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-12)  # standardized with the training rows


def test_identical_vectors_give_one_class_so_exactly_the_share_of_that_class():
    X = np.tile([[0.1, 0.2, 0.3]], (10, 1))  # a static row: the same in every sentence
    p = fit_logistic(X, [0, 1] * 5)
    assert np.all(p.scale == np.inf) and p.bias == 0.0
    assert p.predict(X[:4]).tolist() == [0, 0, 0, 0]
    assert probe.accuracy(p.predict(X[:4]), [0, 1, 0, 1]) == 0.5


def test_the_mixture_learns_to_weigh_the_layer_that_holds_the_label():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 80)
    noise = rng.standard_normal((2, 80, 3))
    signal = noise[1].copy()
    signal[:, 0] += 3.0 * (2 * y - 1)  # layer 1 holds the label, layer 0 does not
    layers = np.stack([noise[0], signal])
    p = fit_mixture(layers, y, steps=300)
    assert p.s[1] > 0.8 and probe.accuracy(p.predict(layers), y) > 0.9
    assert p.losses[-1] < p.losses[0]
    np.testing.assert_allclose(p.s.sum(), 1.0, rtol=1e-15)


def test_compare_scores_held_out_occurrences_and_the_static_row_at_chance():
    small = Recipe(dim=4, num_layers=2, steps=3, batch_size=8)
    c = probe.compare(seed=1, recipe=small, n_train=72, n_held_out=48, distances=[2, 3], length=7)
    assert list(c.correct) == list(probe.METHODS)
    assert c.total == 24 and c.chance == 0.5 and c.accuracy("static") == 0.5
    for method in probe.METHODS:
        assert sum(n for _, n in c.cells[method].values()) == c.total
        assert 0 <= c.correct[method] <= c.total
    assert set(c.slot_loss) == {(d, s) for d in ("forward", "backward") for s in ("before", "after")}
    assert len(c.losses) == 3 and all(abs(s.sum() - 1) < 1e-12 for s in c.s.values())
    again = probe.compare(seed=1, recipe=small, n_train=72, n_held_out=48, distances=[2, 3], length=7)
    assert again.correct == c.correct and again.losses == c.losses


def test_the_control_labels_split_every_sense_evenly_and_change_with_the_seed():
    draws = []
    for seed in range(6):
        for word, senses in corpus.SENSES.items():
            labels = probe.control_labels(word, seed)
            assert set(labels) == {c for sense in senses for c in corpus.CUES[(word, sense)]}
            for sense in senses:  # half of each sense's cues get 1: the labels say nothing of the sense
                cues = corpus.CUES[(word, sense)]
                assert sum(labels[c] for c in cues) == len(cues) // 2
            assert labels == probe.control_labels(word, seed)
        draws.append(probe.control_labels("bank", seed))
    assert len({tuple(sorted(d.items())) for d in draws}) > 1


def test_slot_loss_per_sentence_averages_to_the_mean():
    data, vocab = corpus.make_corpus(24, 36, seed=1), corpus.vocabulary()
    model = bilm.BiLM(len(vocab), dim=4, seed=2)
    means = probe.slot_loss(model, vocab, data.held_out)
    each = probe.slot_loss(model, vocab, data.held_out, mean=False)
    for key, values in each.items():
        assert values.shape == (sum(s.direction == key[1] for s in data.held_out),)
        assert means[key] == pytest.approx(float(values.mean()), rel=1e-14)


def test_slot_sense_counts_the_sentences_whose_sense_the_model_prefers_at_the_slot():
    data, vocab = corpus.make_corpus(24, 48, seed=3), corpus.vocabulary()
    model = bilm.BiLM(len(vocab), dim=4, seed=0)
    for noun in corpus.NOUNS[("bank", "river")]:  # a model sure of the river's nouns, whatever it read
        model.softmax_bias[vocab.id(noun)] = 30.0
    bank = [s for s in data.held_out if s.word == "bank"]
    counts = probe.slot_sense(model, vocab, bank)
    for (direction, side), (correct, total) in counts.items():
        chosen = [s for s in bank if s.direction == side]
        assert total == len(chosen) and correct == sum(s.sense == "river" for s in chosen), (direction, side)


def test_loss_difference_is_welchs_statistic_read_against_the_normal():
    rng = np.random.default_rng(1)
    a, b = rng.normal(2.0, 1.0, 300), rng.normal(2.2, 2.0, 500)
    d, p = probe.loss_difference(a, b)
    z = (a.mean() - b.mean()) / np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert d == pytest.approx(a.mean() - b.mean()) and p == pytest.approx(math.erfc(abs(z) / math.sqrt(2)), rel=1e-9)
    assert probe.loss_difference(a, a) == (0.0, 1.0)
    assert probe.loss_difference(b, a)[1] == pytest.approx(p)


def test_loss_interval_is_the_mean_plus_minus_z_standard_errors():
    rng = np.random.default_rng(0)
    values = rng.exponential(2.0, size=400)
    mean, low, high = probe.loss_interval(values)
    half = 1.959963984540054 * values.std(ddof=1) / np.sqrt(values.size)
    assert mean == pytest.approx(values.mean()) and (low, high) == pytest.approx((mean - half, mean + half))
    assert probe.loss_interval(values, level=0.5)[2] < high


def test_measure_probes_every_checkpoint_task_direction_and_side_on_held_out_occurrences():
    small = Recipe(dim=4, num_layers=2, steps=3, batch_size=8)
    runs = probe.measure([1, 4], small, checkpoints=[3, 0], n_train=72, n_held_out=48)
    assert [r.seed for r in runs] == [1, 4] and runs[0].checkpoints == (0, 3)
    vocab = corpus.vocabulary()
    for run in runs:
        data = corpus.make_corpus(72, 48, seed=run.seed)
        near = corpus.make_corpus(72, 48, distances=[corpus.NEIGHBOUR], seed=run.seed)
        for (step, task, direction, side), (correct, total) in run.counts.items():
            source = near if task == "neighbour" else data
            expected = sum(s.ambiguous and s.direction == side for s in source.held_out)
            assert total == expected and 0 <= correct <= total, (step, task, direction, side)
        assert len(run.counts) == 2 * len(probe.TASKS) * 2 * 2
        # checkpoint 0 is the untrained model of the seed: probing it directly gives the same counts
        untrained = small.model(len(vocab), run.seed)
        direct = probe._probe_counts(untrained, vocab, data, lambda w, s: corpus.SENSES[w].index(s.sense), 0.01)
        for key, count in direct.items():
            assert run.counts[(0, "sense") + key] == count
        assert run.slot[(0, "forward", "before")] == pytest.approx(
            probe.slot_loss(untrained, vocab, data.held_out, mean=False)[("forward", "before")], rel=1e-12
        )
        assert run.final.total == sum(s.ambiguous for s in data.held_out) and len(run.losses) == 3
        assert (
            run.reading[(0, "backward", "after")]
            == probe.slot_sense(untrained, vocab, data.held_out)[("backward", "after")]
        )
    # the control task is not the sense task: its labels disagree on about half the occurrences
    data = corpus.make_corpus(72, 48, seed=1)
    control = {w: probe.control_labels(w, np.random.default_rng([1, i])) for i, w in enumerate(corpus.SENSES)}
    occ = [s for s in data.held_out if s.ambiguous]
    agree = np.mean([control[s.word][s.cue] == corpus.SENSES[s.word].index(s.sense) for s in occ])
    assert 0.2 < agree < 0.8


def test_measure_final_comparison_is_compare_of_its_last_checkpoint_bit_for_bit():
    """The layers and slot losses measure reuses give what compare computes afresh, to the last bit."""
    small = Recipe(dim=4, num_layers=2, steps=3, batch_size=8)
    (run,) = probe.measure([2], small, checkpoints=[0, 3], n_train=72, n_held_out=48)
    data = corpus.make_corpus(72, 48, seed=2)
    vocab = corpus.vocabulary()
    models, histories = small.fit_many([[vocab.encode(s) for s in data.train]], len(vocab), [2], checkpoints=[0, 3])
    fresh = probe._compare(2, data, vocab, models[0][3], models[0][0], list(histories[0].losses), 3, 0.01)
    assert run.final.correct == fresh.correct and run.final.cells == fresh.cells
    assert run.final.slot_loss == fresh.slot_loss and run.final.total == fresh.total
    for word in corpus.SENSES:
        assert np.array_equal(run.final.s[word], fresh.s[word]) and run.final.gamma[word] == fresh.gamma[word]


def test_the_layers_memo_computes_each_model_and_word_once():
    vocab = corpus.vocabulary()
    data = corpus.make_corpus(72, 48, seed=0)
    model = Recipe(dim=4, num_layers=1).model(len(vocab), seed=0)
    layers = probe._Layers(vocab)
    occ, at = layers(model, data.train, "bank")
    assert layers(model, data.train, "bank")[1] is at  # the second call returns the array kept
    direct = model.layers_at([vocab.encode(s) for s in occ], [s.position for s in occ])
    assert np.array_equal(at, direct) and occ == corpus.occurrences(data.train, "bank")
    assert layers(model, data.held_out, "bank")[1] is not at  # another list of sentences is another call


def test_a_state_that_has_just_read_the_cue_holds_it_the_positive_control():
    """Untrained, the forward state at the noun has read the cue one step before: a probe reads the sense there."""
    vocab = corpus.vocabulary()
    near = corpus.make_corpus(distances=[corpus.NEIGHBOUR], seed=0)
    model = Recipe().model(len(vocab), seed=0)
    counts = probe._probe_counts(model, vocab, near, lambda w, s: corpus.SENSES[w].index(s.sense), 0.01)
    low, _ = wilson(*counts[("forward", "before")])
    assert low > 0.5  # above chance beyond its 95% interval
    low, high = wilson(*counts[("forward", "after")])  # the forward state has not read a cue after the noun
    assert low <= 0.5 <= high


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: fit_logistic(np.zeros((0, 2)), []), r"X must have at least one row \(an empty split\?\)"),
        (lambda: fit_logistic(np.ones((3, 2)), [1, 1, 1]), "y must hold both labels 0 and 1"),
        (lambda: fit_logistic(np.ones((3, 2)), [0, 1, 2]), r"y must hold one label 0 or 1 per row \(3\)"),
        (lambda: fit_logistic(np.ones((2, 2)), [0, 1], l2=-1.0), "l2 must be a number >= 0, got -1.0"),
        (lambda: fit_logistic([[np.nan], [1.0]], [0, 1]), "X must not be NaN"),
        (
            lambda: fit_mixture(np.zeros((2, 0, 3)), []),
            r"layers must hold at least one occurrence \(an empty split\?\)",
        ),
        (lambda: fit_mixture(np.zeros((4, 3)), [0, 1, 0, 1]), r"layers must have shape \(J, N, F\)"),
        (lambda: fit_logistic(np.ones((2, 2)), [0, 1]).predict(np.ones((2, 3))), "X must have 2 features per row"),
        (lambda: probe.accuracy([], []), "predicted and y must be non-empty"),
        (lambda: probe.compare(recipe="fast"), "recipe must be an rnnmem.bilm.Recipe, got str"),  # type: ignore[arg-type]  # a bad value on purpose
        (lambda: probe.compare(window=-1), "window must be a whole number >= 0, got -1"),
        (lambda: probe.compare(distances=[12]), r"distances\[0\] must be a cue distance from 1 to length - 3 = 9"),
        (lambda: probe.control_labels("river"), "word must be one of 'bank', 'plant', 'bat', got 'river'"),
        (lambda: probe.control_labels("bank", seed=-2), "seed must be a whole number >= 0"),
        (lambda: probe.measure([]), "seeds must be a non-empty list"),
        (lambda: probe.measure([0], checkpoints=[]), "checkpoints must be a non-empty list"),
        (lambda: probe.measure([0], recipe=3), "recipe must be an rnnmem.bilm.Recipe, got int"),  # type: ignore[arg-type]  # a bad value on purpose
        (lambda: probe.measure([0], Recipe(steps=2), checkpoints=[3]), "checkpoints.* must be at most steps = 2"),
        (lambda: probe.measure([0], window=-1), "window must be a whole number >= 0, got -1"),
        (lambda: probe.loss_interval([1.0]), "values must hold at least two numbers"),
        (lambda: probe.loss_difference([1.0, 2.0], [3.0]), "b must hold at least two numbers"),
        (lambda: probe.loss_interval([1.0, 2.0], level=1.0), "level must be a number strictly between 0 and 1"),
        (lambda: probe.slot_sense(None, None, []), "sentences must be a non-empty list"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_module_lists_its_public_names():
    for name in probe.__all__:
        assert hasattr(probe, name)

"""The bidirectional LSTM language model: exact gradients, no leak of a target, ELMo's mixture."""

from __future__ import annotations

import numpy as np
import pytest

from rnnmem import bilm, corpus
from rnnmem.bilm import BiLM, Recipe, scalar_mix

BATCH = [[1, 4, 5, 6, 2], [1, 3, 2], [1, 6, 6, 4, 5, 3, 2]]  # different lengths: padding is exercised


def test_gradient_of_the_whole_model_matches_finite_differences():
    model = BiLM(7, dim=2, num_layers=2, seed=1)
    for p in model.parameters().values():  # larger weights: gates away from 1/2
        p *= 2.0
    loss, grads = model.loss_and_grads(BATCH)
    eps = 1e-6
    worst = {}
    for name, p in model.parameters().items():
        numeric = np.zeros_like(p)
        for idx in np.ndindex(*p.shape):
            keep = p[idx]
            p[idx] = keep + eps
            up = model.loss_and_grads(BATCH)[0]
            p[idx] = keep - eps
            down = model.loss_and_grads(BATCH)[0]
            p[idx] = keep
            numeric[idx] = (up - down) / (2 * eps)
        scale = max(np.max(np.abs(numeric)), np.max(np.abs(grads[name])), 1e-12)
        worst[name] = float(np.max(np.abs(numeric - grads[name])) / scale)
    assert set(worst) == set(model.parameters())
    assert max(worst.values()) < 1e-6, worst
    assert np.abs(grads["embedding"][0]).max() == 0.0  # the padding row is never trained
    assert model.loss_and_grads(BATCH)[0] == loss  # the check left the model as it was


def test_the_loss_is_the_mean_of_the_two_directions():
    model = BiLM(7, dim=3, seed=0)
    forward, backward = model.loss(BATCH)
    assert model.loss_and_grads(BATCH)[0] == pytest.approx((forward + backward) / 2, rel=1e-15)
    assert forward != backward


def test_a_forward_state_never_sees_the_next_token_nor_a_backward_state_the_previous():
    model = BiLM(9, dim=4, num_layers=2, seed=3)
    D = model.dim
    base = [1, 3, 4, 5, 6, 7, 2]  # <s> w1..w5 </s>
    for t in range(1, 5):  # change word t+1 (ids index t+1), look at word t
        changed = list(base)
        changed[t + 1] = 8
        a, b = model.layers(base), model.layers(changed)
        k = t - 1  # word t is row t-1 of layers()
        for layer in range(1, 3):
            assert np.array_equal(a[layer, k, :D], b[layer, k, :D]), (t, layer)  # forward: unchanged
            assert not np.allclose(a[layer, k, D:], b[layer, k, D:]), (t, layer)  # backward: moved
            assert not np.allclose(a[layer, k + 1, :D], b[layer, k + 1, :D])  # forward at t+1 moved
    for t in range(2, 6):  # change word t-1, look at word t
        changed = list(base)
        changed[t - 1] = 8
        a, b = model.layers(base), model.layers(changed)
        k = t - 1
        for layer in range(1, 3):
            assert np.array_equal(a[layer, k, D:], b[layer, k, D:]), (t, layer)  # backward: unchanged
            assert not np.allclose(a[layer, k, :D], b[layer, k, :D]), (t, layer)  # forward: moved


def test_both_halves_at_a_word_have_read_that_word():
    # Each direction's state at s_k has read s_k itself: a misaligned backward
    # half (the state at s_{k+1}) would not move here.
    model = BiLM(9, dim=4, seed=3)
    D = model.dim
    base = [1, 3, 4, 5, 6, 7, 2]
    for t in range(1, 6):
        changed = list(base)
        changed[t] = 8
        a, b = model.layers(base)[1, t - 1], model.layers(changed)[1, t - 1]
        assert not np.allclose(a[:D], b[:D]) and not np.allclose(a[D:], b[D:]), t


def test_the_forward_logits_before_a_token_do_not_depend_on_it():
    # The forward model's prediction of s_{k+1} is a softmax of its top state at s_k:
    # swapping s_{k+1} leaves every logit up to position k exactly as it was.
    model = BiLM(9, dim=4, seed=2)

    def logits(seq):
        top = model._run("forward", np.array(seq[:-1])[:, None])[-1][:, 0]
        return top @ model.softmax_weight.T + model.softmax_bias

    a, b = logits([1, 3, 4, 5, 2]), logits([1, 3, 4, 7, 2])  # s_3 = 5 becomes 7
    assert np.array_equal(a[:3], b[:3])  # predictions of s_1, s_2, s_3
    assert not np.allclose(a[3], b[3])  # the prediction of s_4 has read s_3


def test_a_batch_gives_what_each_sentence_gives_alone():
    model = BiLM(7, dim=3, num_layers=2, seed=4)
    together = model.layers_batch(BATCH)
    for seq, rep in zip(BATCH, together):
        alone = model.layers(seq)
        assert rep.shape == (3, len(seq) - 2, 6)
        np.testing.assert_allclose(rep, alone, rtol=0, atol=1e-14)


def test_the_static_row_is_the_same_in_every_sentence_and_is_layer_zero():
    model = BiLM(9, dim=4, seed=0)
    a, b = model.layers([1, 3, 5, 2]), model.layers([1, 7, 8, 5, 4, 2])
    row = model.static_vector(5)
    assert np.array_equal(a[0, 1], np.concatenate([row, row])) and np.array_equal(a[0, 1], b[0, 2])
    assert not np.allclose(a[1, 1], b[1, 2])
    row[:] = 0.0  # a copy: the table is untouched
    assert model.embedding[5].any()


def test_scalar_mix_is_a_softmax_weighted_sum_scaled_by_gamma():
    rng = np.random.default_rng(0)
    layers = rng.standard_normal((3, 4, 5))
    w = np.array([0.3, -1.0, 2.0])
    s = np.exp(w) / np.exp(w).sum()
    expected = 1.7 * (s[0] * layers[0] + s[1] * layers[1] + s[2] * layers[2])
    np.testing.assert_allclose(scalar_mix(layers, w, gamma=1.7), expected, rtol=1e-14)
    np.testing.assert_allclose(scalar_mix(layers, w + 5.0, gamma=1.7), expected, rtol=1e-13)
    np.testing.assert_allclose(scalar_mix(layers), layers.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(scalar_mix(layers, [0.0, 0.0, 800.0]), layers[2], rtol=1e-14)


def test_layers_at_picks_one_word_per_sentence_layers_first():
    model = BiLM(9, dim=4, num_layers=2, seed=0)
    seqs = [[1, 3, 5, 2], [1, 7, 8, 5, 4, 2]]
    got = model.layers_at(seqs, [1, 2])
    assert got.shape == (3, 2, 8)
    np.testing.assert_allclose(got[:, 0], model.layers(seqs[0])[:, 1], rtol=0, atol=1e-14)
    np.testing.assert_allclose(got[:, 1], model.layers(seqs[1])[:, 2], rtol=0, atol=1e-14)


def test_mean_cosines_averages_distinct_pairs_within_and_across():
    rng = np.random.default_rng(1)
    v = rng.standard_normal((5, 3))
    labels = ["x", "y", "x", "x", "y"]
    c = bilm.cosine_matrix(v)
    got = bilm.mean_cosines(v, labels)
    assert list(got) == ["within x", "within y", "across"]
    assert got["within x"] == pytest.approx(np.mean([c[0, 2], c[0, 3], c[2, 3]]), rel=1e-14)
    assert got["within y"] == pytest.approx(c[1, 4], rel=1e-14)
    assert got["across"] == pytest.approx(np.mean([c[i, j] for i in (0, 2, 3) for j in (1, 4)]), rel=1e-14)
    assert np.allclose(np.diag(c), 1.0) and np.allclose(c, c.T)


def test_the_same_seed_gives_the_same_model_and_the_same_training():
    data = corpus.make_corpus(48, 12, seed=0)
    vocab = corpus.vocabulary()
    seqs = [vocab.encode(s) for s in data.train]
    recipe = Recipe(dim=8, steps=5, batch_size=8)
    runs = [recipe.fit(seqs, len(vocab), seed=5) for _ in range(2)]
    assert runs[0][1].losses == runs[1][1].losses
    assert np.array_equal(runs[0][0].embedding, runs[1][0].embedding)
    assert not np.array_equal(recipe.model(len(vocab), seed=5).embedding, recipe.model(len(vocab), seed=6).embedding)
    assert np.array_equal(
        recipe.model(len(vocab), seed=5).softmax_weight, BiLM(len(vocab), dim=8, num_layers=2, seed=5).softmax_weight
    )


def test_the_recipe_is_declared_once_and_frozen():
    recipe = Recipe()
    assert (recipe.dim, recipe.num_layers) == (16, 2)
    assert recipe.steps >= 1000  # long enough to learn the cue: not the 200 steps before which it had not
    with pytest.raises(AttributeError):
        recipe.steps = 1  # type: ignore[misc]  # frozen: nobody changes it in passing (the test tries)
    assert Recipe(steps=3) != recipe and Recipe(steps=3).dim == recipe.dim


def test_training_on_the_corpus_lowers_the_loss_from_log_v_on_held_out_sentences_too():
    data = corpus.make_corpus(240, 120, seed=0)
    vocab = corpus.vocabulary()
    train_seqs = [vocab.encode(s) for s in data.train]
    held = [vocab.encode(s) for s in data.held_out]
    recipe = Recipe(num_layers=1, steps=60, lr=0.03)
    before = recipe.model(len(vocab), seed=0).loss(held)
    assert before == pytest.approx((np.log(len(vocab)),) * 2, abs=0.2)
    model, history = recipe.fit(train_seqs, len(vocab), seed=0)
    after = model.loss(held)
    assert max(after) < min(before) - 0.8
    assert np.mean(history.losses[-10:]) < np.mean(history.losses[:10]) - 0.8


def test_a_bag_of_rows_is_the_mean_of_the_rows_in_the_window_and_ignores_the_rest():
    model = BiLM(12, dim=3, seed=0)
    seq = [1, 4, 5, 6, 7, 8, 2]  # words 4..8 at word indices 0..4
    np.testing.assert_allclose(model.bag_of_rows([seq], [2], 1)[0], model.embedding[[5, 6, 7]].mean(axis=0))
    np.testing.assert_allclose(model.bag_of_rows([seq], [0], 2)[0], model.embedding[[4, 5, 6]].mean(axis=0))
    np.testing.assert_allclose(model.bag_of_rows([seq], [3], 0)[0], model.embedding[7])
    far = [1, 4, 5, 6, 7, 9, 2]  # a word outside the window changed
    assert np.array_equal(model.bag_of_rows([seq], [1], 2), model.bag_of_rows([far], [1], 2))
    assert not np.array_equal(model.bag_of_rows([seq], [1], 3), model.bag_of_rows([far], [1], 3))


def test_each_member_of_a_stack_has_the_loss_and_gradient_of_its_own_bilm():
    models = [BiLM(9, dim=3, num_layers=2, seed=s) for s in (0, 4, 7)]
    for m in models:  # larger weights: gates away from 1/2
        for p in m.parameters().values():
            p *= 2.0
    batches = [  # different lengths within and across members: padding and reversal are exercised
        [[1, 4, 5, 6, 2], [1, 3, 2]],
        [[1, 6, 6, 4, 5, 3, 2], [1, 8, 2]],
        [[1, 4, 2], [1, 5, 7, 5, 2]],
    ]
    stack = bilm._Stack(models, np.float64)
    losses, grads = stack.loss_and_grads([[np.array(s) for s in b] for b in batches])
    assert set(grads) == set(models[0].parameters())
    for e, (model, batch) in enumerate(zip(models, batches)):
        loss, own = model.loss_and_grads(batch)
        assert losses[e] == pytest.approx(loss, rel=1e-13)
        for name, g in own.items():
            np.testing.assert_allclose(grads[name][e], g, rtol=0, atol=1e-13 * max(1.0, np.abs(g).max()))
        assert np.array_equal(stack.member(e).embedding, model.embedding)


def test_a_float32_stack_agrees_with_float64_to_its_precision():
    models = [BiLM(9, dim=4, num_layers=2, seed=s) for s in (1, 2)]
    batches = [[np.array([1, 4, 5, 6, 2]), np.array([1, 3, 7, 2])]] * 2
    wide = bilm._Stack(models, np.float64).loss_and_grads(batches)
    narrow = bilm._Stack(models, np.float32).loss_and_grads(batches)
    assert narrow[1]["forward.0.W_hh"].dtype == np.float32
    np.testing.assert_allclose(narrow[0], wide[0], rtol=1e-5)
    for name, g in wide[1].items():
        np.testing.assert_allclose(narrow[1][name], g, rtol=0, atol=1e-5 * max(1.0, np.abs(g).max()))


def test_fit_many_trains_each_seed_as_fit_does_and_keeps_its_checkpoints():
    vocab = corpus.vocabulary()
    seqs = [[vocab.encode(s) for s in corpus.make_corpus(48, 12, seed=k).train] for k in (3, 8)]
    recipe = Recipe(dim=6, steps=7, batch_size=10, lr=0.05, max_norm=0.1)  # an epoch ends mid-run; clipping acts
    models, histories = recipe.fit_many(seqs, len(vocab), [3, 8], checkpoints=[0, 2, 7])
    for k, seed in enumerate((3, 8)):
        assert sorted(models[k]) == [0, 2, 7]
        start = recipe.model(len(vocab), seed)
        assert np.array_equal(models[k][0].embedding, start.embedding)
        alone, history = recipe.fit(seqs[k], len(vocab), seed)
        assert history.clipped > 0 and histories[k].clipped == history.clipped
        np.testing.assert_allclose(histories[k].losses, history.losses, rtol=1e-12)
        for name, p in alone.parameters().items():
            np.testing.assert_allclose(models[k][7].parameters()[name], p, rtol=0, atol=1e-10)
        two, _ = Recipe(dim=6, steps=2, batch_size=10, lr=0.05, max_norm=0.1).fit(seqs[k], len(vocab), seed)
        np.testing.assert_allclose(models[k][2].embedding, two.embedding, rtol=0, atol=1e-10)
    assert not np.allclose(models[0][7].embedding, models[0][2].embedding)  # the copies are not one array


def test_fit_many_in_float32_follows_float64_early_in_training():
    vocab = corpus.vocabulary()
    seqs = [[vocab.encode(s) for s in corpus.make_corpus(48, 12, seed=0).train]]
    recipe = Recipe(dim=8, steps=5, batch_size=16)
    wide, _ = recipe.fit_many(seqs, len(vocab), [0], checkpoints=[5])
    narrow, history = recipe.fit_many(seqs, len(vocab), [0], checkpoints=[5], dtype=np.float32)
    assert narrow[0][5].embedding.dtype == np.float64  # members come back as float64 models
    np.testing.assert_allclose(narrow[0][5].embedding, wide[0][5].embedding, rtol=0, atol=1e-3)
    assert history[0].steps == 5


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: BiLM(1), "vocab_size must be at least 2"),
        (lambda: BiLM(0), "vocab_size must be a whole number >= 1, got 0"),
        (lambda: BiLM(5, dim=0), "dim must be a whole number >= 1, got 0"),
        (lambda: BiLM(5, num_layers=1.5), "num_layers must be a whole number >= 1, got 1.5"),  # type: ignore[arg-type]  # a bad value on purpose
        (lambda: BiLM(5, pad_id=5), "pad_id must be a whole number from 0 to 4, got 5"),
        (lambda: BiLM(5, seed=-3), "seed must be a whole number >= 0, None or a numpy.random.Generator, got -3"),
        (lambda: BiLM(5).loss_and_grads([[1, 2]]), r"sequences\[0\] must be a list of at least 3 token ids"),
        (
            lambda: BiLM(5).loss_and_grads([[1, 3, 9]]),
            r"sequences\[0\] must be a list of at least 3 token ids .* from 0 to 4",
        ),
        (lambda: BiLM(5).loss([]), "sequences must be a non-empty list"),
        (lambda: BiLM(5).layers([1, 2]), r"sequences\[0\] must be a list of at least 3 token ids"),
        (lambda: BiLM(5).static_vector(7), "token_id must be a whole number from 0 to 4, got 7"),
        (lambda: scalar_mix(np.zeros((2, 3)), [1.0]), r"weights must have one entry per layer \(2\), got 1"),
        (lambda: scalar_mix(np.zeros((2, 3)), gamma=float("inf")), "gamma must be finite, got inf"),
        (lambda: BiLM(5).layers_at([[1, 3, 2]], [1]), r"positions\[0\] must be a word index from 0 to 0, got 1"),
        (lambda: BiLM(5).layers_at([[1, 3, 2]], [0, 0]), "positions must give one word index per sequence"),
        (lambda: bilm.cosine_matrix(np.zeros((2, 2))), "vectors must be nonzero rows"),
        (lambda: bilm.cosine_matrix(np.ones(3)), r"vectors must have shape \(N, F\)"),
        (
            lambda: bilm.mean_cosines(np.ones((3, 2)), ["a", "a", "b"]),
            "labels must hold at least two labels with at least two rows",
        ),
        (
            lambda: bilm.mean_cosines(np.ones((3, 2)), ["a", "b"]),
            r"labels must give one label per row of vectors \(3\), got 2",
        ),
        (lambda: BiLM(5).bag_of_rows([[1, 3, 2]], [0], -1), "window must be a whole number >= 0, got -1"),
        (lambda: BiLM(5).bag_of_rows([[1, 3, 2]], [1], 1), r"positions\[0\] must be a word index from 0 to 0, got 1"),
        (lambda: BiLM(5).bag_of_rows([[1, 3, 2]], [0, 0], 1), "positions must give one word index per sequence"),
        (lambda: Recipe(dim=0), "dim must be a whole number >= 1, got 0"),
        (lambda: Recipe(lr=-0.1), "lr must be a positive finite number, got -0.1"),
        (lambda: Recipe(max_norm=float("inf")), "max_norm must be a positive finite number, got inf"),
        (lambda: Recipe(batch_size=2.5), "batch_size must be a whole number >= 1, got 2.5"),  # type: ignore[arg-type]  # a bad value on purpose
        (lambda: Recipe(steps=3).fit_many([[[1, 3, 2]]], 5, []), "seeds must be a non-empty list"),
        (lambda: Recipe(steps=3).fit_many([[[1, 3, 2]]], 5, [-1]), r"seeds\[0\] must be a whole number >= 0"),
        (lambda: Recipe(steps=3).fit_many([[[1, 3, 2]]], 5, [0, 1]), r"sequences must hold one list .* \(2\)"),
        (
            lambda: Recipe(steps=3).fit_many([[[1, 3, 2]]], 5, [0], checkpoints=[4]),
            r"checkpoints\[0\] must be at most steps = 3, got 4",
        ),
        (
            lambda: Recipe(steps=3).fit_many([[[1, 3, 2]], [[1, 3, 2], [1, 4, 2]]], 5, [0, 1]),
            r"sequences must hold as many sequences for every seed .* got \[1, 2\]",
        ),
        (
            lambda: Recipe(steps=3).fit_many([[[1, 3, 2]]], 5, [0], dtype=np.int32),
            "dtype must be float32 or float64, got int32",
        ),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_module_lists_its_public_names():
    for name in bilm.__all__:
        assert hasattr(bilm, name)

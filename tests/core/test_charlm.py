"""rnnmem.charlm: symbols, softmax and perplexity, sampling, the baselines, the corpus, the model and its run."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnmem import bptt, charlm, clipping, train
from rnnmem.rnn import RNN

ALPHABET_TEXT = st.text(alphabet=charlm.ALPHABET, min_size=0, max_size=60)


# ---------------------------------------------------------------------------- symbols


@given(ALPHABET_TEXT)
def test_text_of_the_alphabet_reads_back_as_itself(text):
    ids = charlm.encode(text)
    assert ids.dtype == np.int64 and ids.shape == (len(text),)
    assert ids.size == 0 or (0 <= ids.min() and ids.max() < charlm.UNKNOWN)
    assert charlm.decode(ids) == text


@given(st.text(min_size=1, max_size=30))
def test_every_character_outside_the_alphabet_is_the_one_unknown_symbol(text):
    ids = charlm.encode(text)
    for c, i in zip(text, ids.tolist()):
        assert (i == charlm.UNKNOWN) == (c not in charlm.ALPHABET)
        assert charlm.decode([i]) == (charlm.UNKNOWN_SHOWN if c not in charlm.ALPHABET else c)


def test_the_vocabulary_is_the_newline_the_printable_ascii_and_unknown():
    assert charlm.VOCAB_SIZE == 97 == len(charlm.ALPHABET) + 1
    assert charlm.ALPHABET[0] == "\n" and charlm.ALPHABET[1:] == "".join(map(chr, range(32, 127)))


@pytest.mark.parametrize("bad", [[97], [-1], [1.5], [[1, 2]]])
def test_decode_refuses_what_is_not_one_sequence_of_symbol_ids(bad):
    with pytest.raises(ValueError, match="ids must"):
        charlm.decode(bad)


def test_encode_refuses_what_is_not_text():
    with pytest.raises(ValueError, match="text must be a string, got bytes"):
        charlm.encode(b"abc")  # type: ignore[arg-type]


def test_teacher_forcing_reads_each_symbol_and_predicts_the_next():
    ids = charlm.encode("hello")
    x, y = charlm.teacher_forcing(ids)
    assert x.tolist() == ids[:-1].tolist() and y.tolist() == ids[1:].tolist()
    with pytest.raises(ValueError, match="at least 2 ids"):
        charlm.teacher_forcing(ids[:1])


# ---------------------------------------------------------------------------- softmax, perplexity, sampling

LOGITS = st.lists(st.floats(-30, 30), min_size=1, max_size=12)


@given(LOGITS, st.floats(-50, 50), st.floats(0.05, 20))
def test_softmax_is_a_distribution_unchanged_by_a_shift(logits, shift, tau):
    p = charlm.softmax(logits, tau)
    assert p.min() >= 0 and math.isclose(float(p.sum()), 1.0, rel_tol=1e-12)
    np.testing.assert_allclose(charlm.softmax(np.array(logits) + shift, tau), p, rtol=1e-9, atol=1e-15)


def test_temperature_sharpens_below_one_and_flattens_above():
    z = [2.0, 1.0, 0.0]
    top = [float(charlm.softmax(z, tau)[0]) for tau in (0.1, 0.5, 1.0, 2.0, 100.0)]
    assert top == sorted(top, reverse=True)
    assert top[0] > 0.9999 and abs(top[-1] - 1 / 3) < 0.01


@pytest.mark.parametrize("tau", [0.0, -1.0, float("inf")])
def test_softmax_refuses_a_temperature_that_is_not_positive(tau):
    with pytest.raises(ValueError, match="temperature"):
        charlm.softmax([1.0, 2.0], tau)


def test_perplexity_of_the_uniform_guess_is_the_vocabulary():
    assert charlm.perplexity([math.log(charlm.VOCAB_SIZE)] * 5) == pytest.approx(charlm.VOCAB_SIZE)
    assert charlm.perplexity(0.0) == 1.0
    with pytest.raises(ValueError, match="at least one loss"):
        charlm.perplexity([])
    with pytest.raises(ValueError, match=">= 0"):
        charlm.perplexity([-0.5])


def test_sample_next_takes_the_first_symbol_whose_running_sum_passes_one_draw():
    z = np.array([0.3, -1.0, 2.0, 0.0])
    for seed in range(50):
        u = np.random.default_rng(seed).random()
        expected = int(np.argmax(np.cumsum(charlm.softmax(z, 0.7)) > u))
        assert charlm.sample_next(z, 0.7, seed) == expected


def test_sample_next_draws_each_symbol_about_as_often_as_its_probability():
    z = np.array([1.0, 0.0, -1.0])
    rng = np.random.default_rng(0)
    counts = np.bincount([charlm.sample_next(z, 1.0, rng) for _ in range(20_000)], minlength=3)
    np.testing.assert_allclose(counts / counts.sum(), charlm.softmax(z), atol=0.015)


# ---------------------------------------------------------------------------- baselines


def test_the_ngram_baselines_follow_their_formulas():
    train_ids, valid_ids = charlm.encode("abcabcab"), charlm.encode("acba")
    V = charlm.VOCAB_SIZE
    assert charlm.ngram_nats(train_ids, valid_ids, 0) == pytest.approx(math.log(V))
    counts = np.bincount(train_ids, minlength=V)
    uni = [-math.log((counts[v] + 1) / (train_ids.size + V)) for v in valid_ids[1:]]
    assert charlm.ngram_nats(train_ids, valid_ids, 1) == pytest.approx(np.mean(uni))
    pairs = list(zip(train_ids[:-1].tolist(), train_ids[1:].tolist()))
    bi = []
    for u, v in zip(valid_ids[:-1].tolist(), valid_ids[1:].tolist()):
        c_uv = sum(p == (u, v) for p in pairs)
        c_u = sum(p[0] == u for p in pairs)
        bi.append(-math.log((c_uv + 1) / (c_u + V)))
    assert charlm.ngram_nats(train_ids, valid_ids, 2) == pytest.approx(np.mean(bi))


def test_ngram_nats_refuses_bad_arguments():
    ids = charlm.encode("abc")
    with pytest.raises(ValueError, match="order must be one of"):
        charlm.ngram_nats(ids, ids, 3)
    with pytest.raises(ValueError, match="alpha"):
        charlm.ngram_nats(ids, ids, 1, alpha=0)
    with pytest.raises(ValueError, match="valid must be one sequence of at least 2 ids"):
        charlm.ngram_nats(ids, ids[:1], 1)


def test_a_bigram_sample_follows_the_pairs_of_its_text():
    text = charlm.encode("ab" * 200)
    out = charlm.ngram_sample(text, 2, 30, prompt="a", alpha=1e-6, seed=1)
    assert out == "ba" * 15
    assert charlm.ngram_sample(text, 1, 50, seed=3) == charlm.ngram_sample(text, 1, 50, seed=3)
    assert set(charlm.ngram_sample(text, 1, 200, alpha=1e-6, seed=0)) == {"a", "b"}


def test_words_and_the_share_the_reference_knows():
    assert charlm.words("x1 = _y(2, z_3)") == ["x1", "_y", "z_3"]
    assert charlm.known_share("alpha beta gamma", "beta alpha") == pytest.approx(2 / 3)
    assert math.isnan(charlm.known_share("a b c", "a b c"))  # no word of three letters
    assert charlm.known_share("a b c", "a b c", shortest=1) == 1.0


# ---------------------------------------------------------------------------- the corpus


def test_the_corpus_is_the_running_interpreters_source_with_a_digest():
    c = charlm.stdlib_corpus(["textwrap"], ["colorsys"])
    assert c.train == charlm.module_path("textwrap").read_text(encoding="utf-8")
    assert c.valid == charlm.module_path("colorsys").read_text(encoding="utf-8")
    assert len(c.digest) == 16 and c.digest == charlm.stdlib_corpus(["textwrap"], ["colorsys"]).digest
    # the digest tells which text trains and which validates
    assert charlm.stdlib_corpus(["colorsys"], ["textwrap"]).digest != c.digest
    assert charlm.stdlib_corpus(["textwrap", "glob"], ["colorsys"]).digest != c.digest


def test_the_chapters_modules_exist_and_do_not_overlap():
    c = charlm.stdlib_corpus()
    assert not set(charlm.TRAIN_MODULES) & set(charlm.VALID_MODULES)
    assert len(c.train) > 2 * len(c.valid) > 0
    assert "digest=" in repr(c) and c.train[:20] not in repr(c)


def test_the_corpus_refuses_unknown_or_repeated_modules():
    with pytest.raises(ValueError, match=r"train_modules\[1\] must name a standard-library module"):
        charlm.stdlib_corpus(["glob", "no_such_module_here"], ["colorsys"])
    with pytest.raises(ValueError, match="must not repeat a training module"):
        charlm.stdlib_corpus(["glob"], ["glob"])
    with pytest.raises(ValueError, match="non-empty list of module names"):
        charlm.stdlib_corpus("glob", ["colorsys"])


# ---------------------------------------------------------------------------- the model


def _batch(V: int = 11, T: int = 7, E: int = 3, B: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, V, (T, E, B)), rng.integers(0, V, (T, E, B)), rng.uniform(-0.5, 0.5, (E, B, 5))


def test_each_member_draws_what_rnnmem_RNN_draws_and_computes_what_it_computes():
    model = charlm.CharRNN(charlm.VOCAB_SIZE, 6, seeds=[3, 5])
    for e, seed in enumerate((3, 5)):
        ref = RNN(charlm.VOCAB_SIZE, 6, seed=seed)
        layer = model.member(e)
        for name in ("W_ih", "W_hh", "b_ih", "b_hh"):
            np.testing.assert_array_equal(getattr(layer, name), getattr(ref, name))
    ids = charlm.encode("for x in y:")
    out, _ = model.member(1).forward(np.eye(charlm.VOCAB_SIZE)[ids][:, None, :])
    np.testing.assert_allclose(model.forward(ids[:, None])[1:, 1, 0], out[:, 0], rtol=0, atol=1e-13)


def test_the_full_gradient_matches_finite_differences():
    model = charlm.CharRNN(11, 5, seeds=[0, 1, 2])
    x, y, h0 = _batch()
    _, grads, _ = model.loss_and_grads(x, y, h0)
    rng = np.random.default_rng(1)
    for name, p in model.params.items():
        for _ in range(4):
            idx = tuple(int(rng.integers(0, s)) for s in p.shape)
            old = p[idx]
            p[idx] = old + 1e-6
            up = model.loss_and_grads(x, y, h0)[0][idx[0]]
            p[idx] = old - 1e-6
            down = model.loss_and_grads(x, y, h0)[0][idx[0]]
            p[idx] = old
            assert (up - down) / 2e-6 == pytest.approx(grads[name][idx], abs=1e-8), name


@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_truncation_k_is_backpropagation_within_chunks_of_k_from_the_carried_state(k):
    """The truncated gradient is the sum over chunks of rnnmem.RNN's backward pass, each chunk started from the
    state the forward pass carried into it."""
    model = charlm.CharRNN(11, 5, seeds=[0, 1, 2])
    x, y, h0 = _batch()
    T, E, B = x.shape
    _, grads, _ = model.loss_and_grads(x, y, h0, truncation=k)
    for e in range(E):
        layer = model.member(e)
        W_hy, b_y = model.params["readout_weight"][e], model.params["readout_bias"][e]
        onehot = np.eye(11)[x[:, e]]
        h = h0[e]
        total: dict[str, np.ndarray] = {}
        for s in range(0, T, k):
            out, h_next = layer.forward(onehot[s : s + k], h)
            _, dz = train.softmax_cross_entropy(out.reshape(-1, 5) @ W_hy.T + b_y, y[s : s + k, e].reshape(-1))
            dz *= out.shape[0] * B / (T * B)  # the chunk's share of the window's mean
            part = layer.backward((dz @ W_hy).reshape(out.shape))
            for key in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0"):
                total[key] = total.get(key, 0) + part[key]
            h = h_next
        for key, value in total.items():
            np.testing.assert_allclose(grads[key][e], value, rtol=0, atol=1e-13)
    assert "h0" not in grads


@pytest.mark.parametrize("T,k", [(8, 4), (12, 4), (12, 12), (10, 3), (5, 1)])
def test_a_loss_reaches_exactly_the_inputs_truncation_plan_keeps(T, k):
    """The pairs (input step, loss step) with a nonzero gradient are those BPTT(k, k) keeps (rnnmem.bptt)."""
    model = charlm.CharRNN(charlm.VOCAB_SIZE, 6, seeds=[0])
    rng = np.random.default_rng(T * 10 + k)
    x = rng.integers(0, charlm.VOCAB_SIZE, (T, 1))
    y = rng.integers(0, charlm.VOCAB_SIZE, (T, 1))
    reached = set()
    for t in range(T):
        mask = np.zeros((T, 1), dtype=bool)
        mask[t] = True
        _, g, _ = model.loss_and_grads(x, y, mask=mask, truncation=k, input_grads=True)
        size = np.abs(g["x"][:, 0, 0]).sum(axis=1)
        reached |= {(s + 1, t + 1) for s in range(T) if size[s] > 0}
    assert reached == set(bptt.truncation_plan(T, k, k, loss_steps="all").kept)


def test_members_never_mix():
    x, y, h0 = _batch(E=3)
    together = charlm.CharRNN(11, 5, seeds=[4, 5, 6])
    losses, grads, h = together.loss_and_grads(x, y, h0, truncation=2)
    alone = charlm.CharRNN(11, 5, seeds=[5])
    l1, g1, h1 = alone.loss_and_grads(x[:, 1:2], y[:, 1:2], h0[1:2], truncation=2)
    assert losses[1] == pytest.approx(l1[0], rel=1e-13)
    for key in g1:
        np.testing.assert_allclose(grads[key][1], g1[key][0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h[1], h1[0], rtol=0, atol=1e-15)


def test_a_mask_averages_over_the_steps_it_keeps():
    model = charlm.CharRNN(11, 5, seeds=[0])
    x, y, _ = _batch(E=1)
    mask = np.zeros((7, 4), dtype=bool)
    mask[2:5, 1] = True
    masked, _, _ = model.loss_and_grads(x, y, mask=mask)
    probs = charlm.softmax(model.logits(model.forward(x)[1:]))[:, 0]
    picked = [-math.log(probs[t, b, y[t, 0, b]]) for t, b in zip(*np.nonzero(mask))]
    assert masked[0] == pytest.approx(np.mean(picked), rel=1e-12)
    with pytest.raises(ValueError, match="at least one step"):
        model.loss_and_grads(x, y, mask=np.zeros((7, 4), dtype=bool))


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"truncation": 0}, "truncation must be a whole number >= 1"),
        ({"mask": np.ones((7, 4))}, "mask must be booleans"),
        ({"h0": np.zeros((2, 4, 5))}, "h0 must have shape"),
    ],
)
def test_loss_and_grads_refuses_bad_arguments(kwargs, match):
    model = charlm.CharRNN(11, 5, seeds=[0, 1, 2])
    x, y, _ = _batch()
    with pytest.raises(ValueError, match=match):
        model.loss_and_grads(x, y, **kwargs)


def test_inputs_must_be_ids_of_the_vocabulary_and_targets_their_shape():
    model = charlm.CharRNN(11, 5, seeds=[0])
    with pytest.raises(ValueError, match="inputs must hold whole numbers from 0 to 10"):
        model.forward(np.full((3, 2), 11))
    with pytest.raises(ValueError, match="targets must have the shape of inputs"):
        model.loss_and_grads(np.zeros((3, 2), dtype=int), np.zeros((4, 2), dtype=int))
    with pytest.raises(ValueError, match="seeds must be a non-empty list"):
        charlm.CharRNN(11, 5, seeds=[])


@given(st.integers(2, 200), st.integers(1, 9))
@settings(max_examples=40, deadline=None)
def test_split_streams_predicts_every_symbol_but_the_first_exactly_once(N, S):
    ids = np.random.default_rng(N).integers(0, charlm.VOCAB_SIZE, N)
    if N < S + 1:
        with pytest.raises(ValueError, match="more than streams"):
            charlm.split_streams(ids, S)
        return
    x, y, mask = charlm.split_streams(ids, S)
    assert sorted(y[mask].tolist()) == sorted(ids[1:].tolist()) and mask.sum() == N - 1
    # each target is read right after its predecessor, in its own stream
    for s in range(S):
        n = int(mask[:, s].sum())
        assert mask[:n, s].all() and not mask[n:, s].any()
        assert np.array_equal(x[1:n, s], y[: n - 1, s])


def test_nats_is_the_mean_cross_entropy_read_in_streams_and_in_chunks():
    model = charlm.CharRNN(charlm.VOCAB_SIZE, 8, seeds=[0, 1])
    ids = charlm.encode("import sys\nprint(sys.version)\n" * 3)
    x, y, mask = charlm.split_streams(ids, 3)
    probs = charlm.softmax(model.logits(model.forward(x)[1:]))
    for e in range(2):
        p = np.take_along_axis(probs[:, e], y[..., None], axis=2)[..., 0]
        expected = float(-np.log(p)[mask].mean())
        assert model.nats(ids, streams=3)[e] == pytest.approx(expected, rel=1e-12)
        hot = charlm.softmax(model.logits(model.forward(x)[1:]), temperature=2.0)
        p2 = np.take_along_axis(hot[:, e], y[..., None], axis=2)[..., 0]
        assert model.nats(ids, streams=3, temperature=2.0)[e] == pytest.approx(float(-np.log(p2)[mask].mean()))


def test_clip_members_clips_each_member_by_its_own_global_norm():
    rng = np.random.default_rng(0)
    grads = {"a": rng.standard_normal((3, 4, 2)) * [[[5.0]], [[0.1]], [[2.0]]], "b": rng.standard_normal((3, 4))}
    clipped, norms = charlm.clip_members(grads, 1.0)
    for e in range(3):
        ref = clipping.clip_by_global_norm({k: v[e] for k, v in grads.items()}, 1.0)
        assert norms[e] == pytest.approx(ref.norm_before)
        for k in grads:
            np.testing.assert_allclose(clipped[k][e], ref.grads[k], rtol=1e-12)


def test_training_lowers_the_loss_carries_the_state_and_calls_back_at_checkpoints():
    model = charlm.CharRNN(charlm.VOCAB_SIZE, 16, seeds=[0, 1])
    ids = charlm.encode("def f(x):\n    return x\n" * 20)
    seen = []
    losses = charlm.train(
        model,
        ids[None],
        window=8,
        updates=40,
        lr=0.05,
        truncation=4,
        checkpoints=(0, 10, 40),
        on_checkpoint=lambda u, m: seen.append((u, float(m.params["readout_bias"][0, 0]))),
    )
    assert losses.shape == (40, 2) and (losses[-5:] < losses[:5].min()).all()
    assert [u for u, _ in seen] == [0, 10, 40] and seen[0][1] != seen[-1][1]
    again = charlm.CharRNN(charlm.VOCAB_SIZE, 16, seeds=[0, 1])
    np.testing.assert_array_equal(charlm.train(again, ids[None], window=8, updates=40, lr=0.05, truncation=4), losses)
    with pytest.raises(ValueError, match="checkpoints must be update counts"):
        charlm.train(again, ids[None], window=8, updates=4, lr=0.05, checkpoints=(5,))
    with pytest.raises(ValueError, match="more than window"):
        charlm.train(again, ids[None, :5], window=8, updates=4, lr=0.05)


def test_sample_is_the_same_for_the_same_seed_and_continues_the_prompt():
    model = charlm.CharRNN(charlm.VOCAB_SIZE, 8, seeds=[0])
    a = charlm.sample(model, "x", 30, temperature=1.3, seed=5)
    assert len(a) == 30 and a == charlm.sample(model, "x", 30, temperature=1.3, seed=5)
    assert a != charlm.sample(model, "x", 30, temperature=1.3, seed=6)
    with pytest.raises(ValueError, match="prompt must hold at least one character"):
        charlm.sample(model, "", 3)
    with pytest.raises(ValueError, match="e must be a member index from 0 to 0"):
        charlm.sample(model, "x", 3, member=1)


# ---------------------------------------------------------------------------- the run


def test_the_recipe_refuses_bad_settings():
    with pytest.raises(ValueError, match="checkpoints must lie between 0 and updates"):
        charlm.Recipe(updates=10, checkpoints=(0, 20))
    with pytest.raises(ValueError, match="increasing tuple"):
        charlm.Recipe(checkpoints=(10, 0))
    with pytest.raises(ValueError, match="hidden"):
        charlm.Recipe(hidden=0)


def test_a_run_carries_the_corpus_digest_in_its_repr_and_refuses_a_changed_corpus():
    recipe = charlm.Recipe(hidden=6, window=8, batch=2, updates=4, checkpoints=(0, 2, 4), eval_streams=4)
    run = charlm.TextRun(recipe, ("colorsys",), ("bisect",))
    assert run.digest == charlm.stdlib_corpus(["colorsys"], ["bisect"]).digest and run.digest in repr(run)
    result = run.execute()
    assert result.checkpoints == (0, 2, 4) and len(result.train_losses) == 4 and len(result.params) == 3
    assert result.perplexity(0) == pytest.approx(math.exp(result.valid_nats[0]))
    assert result.chars["valid"] == len(charlm.stdlib_corpus(["colorsys"], ["bisect"]).valid)
    # the model after 0 updates is the untrained draw
    np.testing.assert_array_equal(
        result.model(0).params["weight_hh_l0"], charlm.CharRNN(charlm.VOCAB_SIZE, 6, seeds=[0]).params["weight_hh_l0"]
    )
    with pytest.raises(ValueError, match="step must be one of the checkpoints"):
        result.model(3)
    stale = charlm.TextRun(recipe, ("colorsys",), ("bisect",))
    object.__setattr__(stale, "digest", "0" * 16)
    with pytest.raises(ValueError, match="sources changed since the run was made"):
        stale.execute()
    assert charlm.TextRun(recipe, ("colorsys",), ("bisect",)) == run and hash(run)

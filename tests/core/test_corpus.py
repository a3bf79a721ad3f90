"""The toy corpus: deterministic, balanced, each sentence using its word once in its sense."""

from __future__ import annotations

import pytest

from rnnmem import corpus
from rnnmem.corpus import BOS, EOS, PAD, SENSES, TEMPLATES, Vocabulary, make_corpus, occurrences, tokenize


def test_the_same_seed_gives_the_same_sentences_and_another_seed_others():
    assert make_corpus(120, seed=3) == make_corpus(120, seed=3)
    assert make_corpus(120, seed=3) != make_corpus(120, seed=4)


def test_senses_take_turns_so_the_corpus_is_balanced():
    sentences = make_corpus(300, seed=0)
    counts = {}
    for s in sentences:
        counts[(s.word, s.sense)] = counts.get((s.word, s.sense), 0) + 1
    assert set(counts) == set(TEMPLATES)
    assert set(counts.values()) == {50}


def test_every_sentence_uses_its_word_once_and_comes_from_its_own_templates():
    for s in make_corpus(300, seed=1):
        assert s.tokens.count(s.word) == 1
        assert s.tokens[s.position] == s.word
        shapes = [t.split() for t in TEMPLATES[(s.word, s.sense)]]
        assert any(len(shape) == len(s.tokens)
                   and all(a == b or a.startswith("{") for a, b in zip(shape, s.tokens))
                   for shape in shapes), s.text


def test_both_senses_of_each_word_are_present():
    groups = {w: occurrences(make_corpus(300, seed=0), w) for w in SENSES}
    for word, by_sense in groups.items():
        assert list(by_sense) == list(SENSES[word])
        assert all(len(v) >= 5 for v in by_sense.values()), (word, {k: len(v) for k, v in by_sense.items()})
        texts = [s.text for v in by_sense.values() for s in v]
        assert len(texts) == len(set(texts))


def test_the_vocabulary_is_small_sorted_and_starts_with_the_reserved_tokens():
    vocab = Vocabulary(make_corpus(300, seed=0))
    assert vocab.words[:3] == [PAD, BOS, EOS] and vocab.pad_id == 0
    assert vocab.words[3:] == sorted(vocab.words[3:])
    assert 40 <= len(vocab) <= 64


def test_encode_wraps_in_boundaries_and_decode_inverts_it():
    vocab = Vocabulary(make_corpus(60, seed=0))
    ids = vocab.encode("the train arrived at the station")
    assert ids[0] == vocab.id(BOS) and ids[-1] == vocab.id(EOS)
    assert vocab.decode(ids)[1:-1] == ["the", "train", "arrived", "at", "the", "station"]


def test_tokenize_drops_case_and_punctuation():
    assert tokenize("We TRAIN models, on data.") == ["we", "train", "models", "on", "data"]


@pytest.mark.parametrize("call, message", [
    (lambda: make_corpus(0), "n_sentences must be a whole number >= 1, got 0"),
    (lambda: make_corpus(10, seed=-1), "seed must be a whole number >= 0, got -1"),
    (lambda: make_corpus(10, seed=1.5), "seed must be a whole number >= 0, got 1.5"),
    (lambda: tokenize(3), "text must be a string, got int"),
    (lambda: Vocabulary([]), "texts must hold at least one word"),
    (lambda: Vocabulary([3]), r"texts\[0\] must be a string or a Sentence, got int"),
    (lambda: Vocabulary(["a b"]).encode("a c"), "text has a word not in the vocabulary: 'c'"),
    (lambda: Vocabulary(["a b"]).encode("!"), "text must hold at least one word"),
    (lambda: Vocabulary(["a b"]).decode([1, 9]), r"ids\[1\] must be a whole number from 0 to 4, got 9"),
    (lambda: Vocabulary(["a b"]).id("z"), "word must be in the vocabulary, got 'z'"),
    (lambda: occurrences(make_corpus(6), "river"), "word must be one of 'train', 'bank', 'book', got 'river'"),
])
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_module_lists_its_public_names():
    for name in corpus.__all__:
        assert hasattr(corpus, name)

"""The corpus of cues at a distance: deterministic, balanced, shared neighbours, disjoint splits."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from rnnmem import corpus
from rnnmem.corpus import (
    CUES,
    DISTANCES,
    FILLERS,
    LENGTH,
    NOUNS,
    SENSES,
    Template,
    Vocabulary,
    make_corpus,
    make_templates,
    occurrences,
    slot_entropy,
    tokenize,
    vocabulary,
)

DATA = make_corpus(seed=0)


def test_the_same_seed_gives_the_same_corpus_and_another_seed_another():
    assert make_corpus(120, 60, seed=3) == make_corpus(120, 60, seed=3)
    assert make_corpus(120, 60, seed=3).train != make_corpus(120, 60, seed=4).train


def test_no_held_out_sentence_or_template_is_seen_in_training():
    assert not set(DATA.train_templates) & set(DATA.held_out_templates)
    assert sorted(DATA.train_templates + DATA.held_out_templates) == list(range(len(DATA.templates)))
    assert not {s.text for s in DATA.train} & {s.text for s in DATA.held_out}
    assert {s.template for s in DATA.train} <= set(DATA.train_templates)
    assert {s.template for s in DATA.held_out} <= set(DATA.held_out_templates)


def test_every_split_has_every_direction_and_distance():
    for split in (DATA.train, DATA.held_out):
        cells = Counter((s.direction, s.distance) for s in occurrences(split, "bank"))
        assert set(cells) == {(d, k) for d in corpus.DIRECTIONS for k in DISTANCES}


def test_both_senses_share_the_part_of_speech_slot_and_the_immediate_neighbours():
    for s in DATA.train + DATA.held_out:
        words = s.tokens
        assert len(words) == LENGTH
        assert words[s.position] == s.noun and words[s.position - 1] == "the" and words[s.position + 1] == "was"
        cue_at = s.position - s.distance if s.direction == "before" else s.position + s.distance
        assert words[cue_at] == s.cue and s.cue in CUES[(s.word, s.sense)]
        others = [w for i, w in enumerate(words) if i not in (cue_at, s.position - 1, s.position, s.position + 1)]
        assert all(w in FILLERS for w in others), s.text  # nothing else names the topic
        assert s.noun == s.word or s.noun in NOUNS[(s.word, s.sense)]


def test_senses_and_ambiguous_slots_are_balanced_exactly():
    for split in (DATA.train, DATA.held_out):
        counts = Counter((s.word, s.sense, s.ambiguous) for s in split)
        assert len(set(counts.values())) == 1 and len(counts) == 12


def test_templates_cover_every_place_the_cue_fits():
    ts = make_templates(distances=[2, 4], length=8)
    assert [t for t in ts if t.direction == "before" and t.distance == 4] == [
        Template("before", 4, p, 8) for p in (4, 5, 6)
    ]
    for t in ts:
        assert 0 <= t.cue_position < t.length and abs(t.cue_position - t.position) == t.distance
        assert t.words.count("{filler}") == t.length - 4


def test_at_distance_one_the_cue_takes_the_place_of_the_or_was_and_nothing_else_changes():
    near = make_corpus(120, 60, distances=[corpus.NEIGHBOUR], seed=2)
    for s in near.train + near.held_out:
        words = s.tokens
        assert len(words) == LENGTH and s.distance == 1 and words[s.position] == s.noun
        if s.direction == "before":
            assert words[s.position - 1] == s.cue and words[s.position + 1] == "was"
        else:
            assert words[s.position - 1] == "the" and words[s.position + 1] == s.cue
        others = [w for i, w in enumerate(words) if abs(i - s.position) > 1]
        assert all(w in FILLERS for w in others), s.text
    assert {s.direction for s in near.held_out} == set(corpus.DIRECTIONS)
    assert not {s.text for s in near.held_out} & {s.text for s in near.train}


def test_each_sense_has_an_even_number_of_cues_and_no_word_names_two_topics():
    assert all(len(cues) % 2 == 0 for cues in CUES.values())
    topic_words = [w for g in CUES.values() for w in g] + [w for g in NOUNS.values() for w in g]
    assert len(topic_words) == len(set(topic_words)) and not set(topic_words) & set(FILLERS)


def test_the_vocabulary_holds_every_word_of_the_lists_and_nothing_else():
    vocab = vocabulary()
    words = set(FILLERS) | {"the", "was"} | set(SENSES)
    words |= {w for g in CUES.values() for w in g} | {w for g in NOUNS.values() for w in g}
    assert set(vocab.words[3:]) == words and vocab.words[:3] == [corpus.PAD, corpus.BOS, corpus.EOS]
    assert all(vocab.decode(vocab.encode(s))[1:-1] == s.tokens for s in DATA.held_out[:50])


def test_slot_entropy_falls_with_what_is_known_and_matches_a_direct_count():
    nothing, word, sense = (slot_entropy(k) for k in corpus.KNOWLEDGE)
    assert sense < word < nothing
    # knowing nothing: each ambiguous word 1/6, each of the 12 topic nouns 1/24
    assert nothing == pytest.approx(-(3 * (1 / 6) * np.log(1 / 6) + 12 * (1 / 24) * np.log(1 / 24)), rel=1e-14)
    assert word == pytest.approx(-(0.5 * np.log(0.5) + 4 * (1 / 8) * np.log(1 / 8)), rel=1e-14)
    assert sense == pytest.approx(-(0.5 * np.log(0.5) + 2 * 0.25 * np.log(0.25)), rel=1e-14)


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: make_corpus(10, 10, distances=[11]),
            r"distances\[0\] must be a cue distance from 1 to length - 3 = 9",
        ),
        (lambda: make_corpus(10, 10, distances=[0]), r"distances\[0\] must be a whole number >= 1, got 0"),
        (lambda: make_corpus(10, 10, distances=[]), "distances must be a non-empty list"),
        (lambda: make_corpus(10, 10, distances=[3, 3]), "distances must not repeat a distance"),
        (lambda: make_corpus(0, 10), "n_train must be a whole number >= 1, got 0"),
        (lambda: make_corpus(10, 0), "n_held_out must be a whole number >= 1, got 0"),
        (
            lambda: make_corpus(10, 10, seed=-1),
            "seed must be a whole number >= 0, None or a numpy.random.Generator, got -1",
        ),
        (lambda: make_corpus(10, 10, length=4), "length must be at least 5"),
        (lambda: occurrences(DATA.train, "river"), "word must be one of 'bank', 'plant', 'bat', got 'river'"),
        (
            lambda: occurrences([], "bank"),
            r"sentences must hold at least one occurrence of 'bank' \(an empty split\?\)",
        ),
        (lambda: vocabulary().encode("the bank was purple"), "text has a word not in the vocabulary: 'purple'"),
        (lambda: vocabulary().id("purple"), "word must be in the vocabulary, got 'purple'"),
        (lambda: Template("before", 2, 2, 6).fill("fish", "bank", ["so"]), "fillers must hold 2 words"),
        (lambda: tokenize(3), "text must be a string, got int"),  # type: ignore[arg-type]  # a bad value on purpose
        (lambda: Vocabulary([]), "texts must hold at least one word"),
        (lambda: slot_entropy("yes"), "knowing must be one of 'nothing', 'word', 'sense', got 'yes'"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_module_lists_its_public_names():
    for name in corpus.__all__:
        assert hasattr(corpus, name)

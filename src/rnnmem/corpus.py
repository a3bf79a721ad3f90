r"""A toy corpus that tests context a few words away: one ambiguous noun, its sense given k words off.

Three nouns carry two senses each, and in both senses they are nouns used in
the same frame, ``the <noun> was``, so neither the part of speech nor the
immediate neighbours tell the senses apart:

=====  ==========================  =============================  ======================
word   sense                       cues (one per sentence)        nouns of the same topic
=====  ==========================  =============================  ======================
bank   river, money                river fish reeds boat /        shore stream /
                                   money loan cash coins          vault teller
plant  garden, factory             garden seeds soil roses /      flower hedge /
                                   factory steel workers engines  mill furnace
bat    cave, cricket               cave wings insects roost /     owl moth / ball umpire
                                   cricket match wicket pitch
=====  ==========================  =============================  ======================

Each sense has four cues, so that half of each sense's cues can be given
one label and half the other: a labelling of the cues that is independent of
the sense (the control task of :func:`rnnmem.probe.control_labels`).

Every sentence has exactly ``length`` words. One slot holds a noun, preceded
by ``the`` and followed by ``was``; one other word, the **cue**, names the
topic, ``k`` words before the noun (direction ``"before"``) or ``k`` words
after it (``"after"``); at distance 1 the cue takes the place of ``the``
(before) or ``was`` (after), the one shape in which the cue is the noun's
neighbour. Every other word is a neutral filler from
:data:`FILLERS`, the same lists for every topic. The noun slot holds the
ambiguous word in half the sentences and one of its sense's topic nouns in the
other half, so a language model has a reason to read the cue: it predicts
which nouns may fill the slot, and never which sense *bank* has.

A :class:`Template` is the shape of a sentence: where the noun stands, and
where its cue. :func:`make_templates` lists every shape for each direction and
distance; :func:`make_corpus` gives about half of each cell's shapes to
training and the rest to the held-out set, and fills them with words (the
fillers drawn anew for each sentence), so no held-out sentence can occur
among the training sentences. The
same seed gives the same corpus on any machine. :class:`Vocabulary` maps
words to ids (``<pad>`` 0, ``<s>`` 1, ``</s>`` 2); :func:`vocabulary` is the
vocabulary of every word the corpus can use.

Bad input raises :class:`ValueError` naming the argument, the value and what
is allowed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .checks import check_choice, check_list, check_positive_int, check_seed

__all__ = [
    "SENSES",
    "CUES",
    "NOUNS",
    "FILLERS",
    "DIRECTIONS",
    "DISTANCES",
    "NEIGHBOUR",
    "LENGTH",
    "Template",
    "Sentence",
    "Corpus",
    "make_templates",
    "make_corpus",
    "occurrences",
    "KNOWLEDGE",
    "slot_entropy",
    "tokenize",
    "Vocabulary",
    "vocabulary",
    "PAD",
    "BOS",
    "EOS",
]

PAD, BOS, EOS = "<pad>", "<s>", "</s>"
"""The reserved tokens: padding, start of sentence, end of sentence."""

SENSES: dict[str, tuple[str, str]] = {
    "bank": ("river", "money"),
    "plant": ("garden", "factory"),
    "bat": ("cave", "cricket"),
}
"""For each ambiguous word, its two senses."""

CUES: dict[tuple[str, str], tuple[str, ...]] = {
    ("bank", "river"): ("river", "fish", "reeds", "boat"),
    ("bank", "money"): ("money", "loan", "cash", "coins"),
    ("plant", "garden"): ("garden", "seeds", "soil", "roses"),
    ("plant", "factory"): ("factory", "steel", "workers", "engines"),
    ("bat", "cave"): ("cave", "wings", "insects", "roost"),
    ("bat", "cricket"): ("cricket", "match", "wicket", "pitch"),
}
"""For each ``(word, sense)``, the words that name its topic: one of them is a sentence's cue."""

NOUNS: dict[tuple[str, str], tuple[str, ...]] = {
    ("bank", "river"): ("shore", "stream"),
    ("bank", "money"): ("vault", "teller"),
    ("plant", "garden"): ("flower", "hedge"),
    ("plant", "factory"): ("mill", "furnace"),
    ("bat", "cave"): ("owl", "moth"),
    ("bat", "cricket"): ("ball", "umpire"),
}
"""For each ``(word, sense)``, unambiguous nouns of the same topic, which fill the slot in half the sentences."""

FILLERS: tuple[str, ...] = (
    "so",
    "then",
    "it",
    "we",
    "they",
    "saw",
    "said",
    "that",
    "there",
    "again",
    "today",
    "still",
    "all",
    "and",
    "now",
    "very",
)
"""Neutral words: every slot that is not the cue, ``the``, the noun or ``was``."""

DIRECTIONS = ("before", "after")
"""Where the cue stands relative to the noun."""

DISTANCES = (2, 3, 4, 6, 8)
"""The chapter's cue distances, in words: a few words away, never the noun's neighbour."""

NEIGHBOUR = 1
"""The distance of the positive control: the cue next to the noun, in the place of ``the`` or ``was``."""

LENGTH = 12
"""The chapter's sentence length, in words."""

_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class Template:
    """The shape of a sentence: ``length`` words, the noun at ``position``, the cue ``distance`` words away.

    The cue stands before the noun (``direction == "before"``) or after it
    (``"after"``); ``the`` precedes the noun and ``was`` follows it, except at
    distance 1, where the cue takes the place of one of them; every other word
    is a filler, drawn anew for each sentence. :attr:`words` shows
    the shape, :meth:`fill` writes a sentence.

    >>> t = Template("before", 3, 4, 7)
    >>> t.words
    ('{filler}', '{cue}', '{filler}', 'the', '{noun}', 'was', '{filler}')
    >>> t.cue_position, t.fill("river", "bank", ["so", "it", "there"])
    (1, 'so river it the bank was there')
    >>> Template("after", 1, 1, 4).words
    ('the', '{noun}', '{cue}', '{filler}')
    """

    direction: str
    distance: int
    position: int
    length: int

    @property
    def cue_position(self) -> int:
        """The index of the cue among the words."""
        return self.position - self.distance if self.direction == "before" else self.position + self.distance

    @property
    def words(self) -> tuple:
        """The shape: ``"{cue}"``, ``"{noun}"`` and ``"{filler}"`` slots around ``the`` and ``was`` (the cue last)."""
        out = ["{filler}"] * self.length
        out[self.position - 1 : self.position + 2] = ["the", "{noun}", "was"]
        out[self.cue_position] = "{cue}"
        return tuple(out)

    def fill(self, cue: str, noun: str, fillers: Sequence[str]) -> str:
        """The sentence with ``cue``, ``noun``, and ``fillers`` in the filler slots from left to right."""
        shape = self.words
        need = shape.count("{filler}")
        if len(fillers) != need:
            raise ValueError(f"fillers must hold {need} words for this template, got {len(fillers)}")
        it = iter(fillers)
        return " ".join(
            cue if w == "{cue}" else noun if w == "{noun}" else next(it) if w == "{filler}" else w for w in shape
        )


@dataclass(frozen=True)
class Sentence:
    """One sentence: its text, the ambiguous ``word`` of its topic, the ``sense``, and how it was made.

    ``noun`` is what fills the slot (``word`` itself, or a topic noun);
    ``template`` is the index of its shape in :attr:`Corpus.templates`, and
    ``position`` the index of the noun among the words.
    """

    text: str
    word: str
    sense: str
    noun: str
    cue: str
    direction: str
    distance: int
    template: int
    position: int

    @property
    def tokens(self) -> list[str]:
        """The sentence's words."""
        return self.text.split()

    @property
    def ambiguous(self) -> bool:
        """True when the slot holds the ambiguous word, whose sense only the cue gives."""
        return self.noun == self.word


@dataclass(frozen=True)
class Corpus:
    """Training and held-out sentences drawn from disjoint sets of templates.

    ``templates`` lists every shape; ``train_templates`` and
    ``held_out_templates`` are the indices of each split's shapes.
    """

    train: tuple
    held_out: tuple
    templates: tuple
    train_templates: tuple
    held_out_templates: tuple


def make_templates(distances: Sequence[int] = DISTANCES, length: int = LENGTH) -> list[Template]:
    """Every template of ``length`` words with the cue at one of ``distances``, in a fixed order.

    For each direction, each distance ``k`` in the order given, each place of
    the noun where ``the``, ``was`` and the cue fit. Each direction and
    distance needs at least two places, one for each split, so ``k`` may be
    at most ``length - 3``: a larger distance does not fit the sentence. At
    ``k = 1`` the cue replaces ``the`` or ``was`` (:class:`Template`).

    >>> [(t.direction, t.distance, t.position) for t in make_templates(distances=[3], length=6)]
    [('before', 3, 3), ('before', 3, 4), ('after', 3, 1), ('after', 3, 2)]
    >>> make_templates(distances=[9], length=8)
    Traceback (most recent call last):
    ...
    ValueError: distances[0] must be a cue distance from 1 to length - 3 = 5 (two places for the noun in a sentence of 8 words), got 9
    """
    length = check_positive_int("length", length)
    if length < 5:
        raise ValueError(f"length must be at least 5 (fillers, a cue, the, the noun and was), got {length}")

    def one(name: str, k: Any) -> int:
        k = check_positive_int(name, k)
        if not 1 <= k <= length - 3:
            raise ValueError(
                f"{name} must be a cue distance from 1 to length - 3 = {length - 3} "
                f"(two places for the noun in a sentence of {length} words), got {k}"
            )
        return k

    distances = check_list("distances", distances, one, "cue distances")
    if len(set(distances)) != len(distances):
        raise ValueError(f"distances must not repeat a distance, got {list(distances)!r}")
    out = []
    for direction in DIRECTIONS:
        for k in distances:
            low, high = (k, length - 2) if direction == "before" else (1, length - 1 - k)
            out += [Template(direction, k, p, length) for p in range(low, high + 1)]
    return out


def make_corpus(
    n_train: int = 1200,
    n_held_out: int = 600,
    *,
    distances: Sequence[int] = DISTANCES,
    length: int = LENGTH,
    seed: int = 0,
) -> Corpus:
    """Sentences from disjoint training and held-out templates, the same for the same ``seed``.

    :func:`make_templates` lists the shapes; in every cell (direction,
    distance) a shuffle drawn with ``seed`` gives half the noun's places,
    rounded up, to training and the rest to the held-out set, so a held-out
    sentence puts the noun where no training sentence of its cell does, and
    cannot be a training sentence. Each split's sentences take the six
    ``(word, sense)`` pairs in turn, and alternate between the ambiguous word
    and a topic noun in the slot, so both are balanced exactly when the count
    is a multiple of 12; the template, the cue, the topic noun and every
    filler are drawn with ``seed``.

    >>> c = make_corpus(12, 12, distances=[2, 4], length=8, seed=0)
    >>> len(c.train), len(c.held_out), len(c.templates)
    (12, 12, 16)
    >>> s = c.train[0]
    >>> s.word, s.sense, s.noun == s.word, s.tokens[s.position - 1:s.position + 2]
    ('bank', 'river', True, ['the', 'bank', 'was'])
    >>> set(c.train_templates) & set(c.held_out_templates)
    set()
    >>> make_corpus(12, 0)
    Traceback (most recent call last):
    ...
    ValueError: n_held_out must be a whole number >= 1, got 0
    """
    n_train = check_positive_int("n_train", n_train)
    n_held_out = check_positive_int("n_held_out", n_held_out)
    rng = check_seed("seed", seed)
    templates = make_templates(distances, length)
    cells: dict[tuple, list[int]] = {}
    for i, t in enumerate(templates):
        cells.setdefault((t.direction, t.distance), []).append(i)
    train_ids, held_ids = [], []
    for ids in cells.values():
        order = [ids[int(j)] for j in rng.permutation(len(ids))]
        half = (len(ids) + 1) // 2
        train_ids += sorted(order[:half])
        held_ids += sorted(order[half:])
    keys = list(CUES)

    def draw(n: int, ids: list[int]) -> tuple:
        out = []
        for i in range(n):
            word, sense = keys[i % len(keys)]
            ambiguous = (i // len(keys)) % 2 == 0
            t = ids[int(rng.integers(len(ids)))]
            tpl = templates[t]
            cue = CUES[(word, sense)][int(rng.integers(len(CUES[(word, sense)])))]
            noun = word if ambiguous else NOUNS[(word, sense)][int(rng.integers(len(NOUNS[(word, sense)])))]
            fillers = [FILLERS[int(j)] for j in rng.integers(len(FILLERS), size=tpl.words.count("{filler}"))]
            out.append(
                Sentence(
                    tpl.fill(cue, noun, fillers), word, sense, noun, cue, tpl.direction, tpl.distance, t, tpl.position
                )
            )
        return tuple(out)

    return Corpus(
        draw(n_train, sorted(train_ids)),
        draw(n_held_out, sorted(held_ids)),
        tuple(templates),
        tuple(sorted(train_ids)),
        tuple(sorted(held_ids)),
    )


def occurrences(sentences: Sequence[Sentence], word: str) -> list[Sentence]:
    """The sentences of ``sentences`` whose slot holds the ambiguous ``word``, in order.

    >>> c = make_corpus(24, 12, seed=0)
    >>> [s.sense for s in occurrences(c.train, "bank")]
    ['river', 'money', 'river', 'money']
    >>> occurrences(c.train, "river")
    Traceback (most recent call last):
    ...
    ValueError: word must be one of 'bank', 'plant', 'bat', got 'river'
    """
    check_choice("word", word, tuple(SENSES))
    if isinstance(sentences, (str, bytes)) or not isinstance(sentences, Sequence):
        raise ValueError(f"sentences must be a list of Sentence, got {type(sentences).__name__}")
    out = [s for s in sentences if s.word == word and s.ambiguous]
    if not out:
        raise ValueError(
            f"sentences must hold at least one occurrence of {word!r} (an empty split?), "
            f"got {len(sentences)} sentence(s) without one"
        )
    return out


KNOWLEDGE = ("nothing", "word", "sense")
"""What a language model may know of the topic when it predicts the noun (:func:`slot_entropy`)."""


def slot_entropy(knowing: str) -> float:
    """The entropy (nats) of the noun slot for a model that knows ``knowing`` of the sentence's topic.

    ``"sense"``: the cue's sense (the slot holds the ambiguous word with
    probability 1/2 and each of the sense's topic nouns with an equal share of
    the other half); ``"word"``: only which ambiguous word the cue belongs to
    (the word with 1/2, the topic nouns of both its senses sharing the rest);
    ``"nothing"``: the six ``(word, sense)`` pairs mixed equally. These are
    the floors a language model's loss on the noun reaches at best: a cue
    read as naming the word's family of nouns brings it from the last to the
    middle one, and only a cue read for its sense to the first.

    >>> [round(slot_entropy(k), 3) for k in KNOWLEDGE]
    [2.485, 1.386, 1.04]
    """
    check_choice("knowing", knowing, KNOWLEDGE)
    keys = list(CUES)
    chosen = {"sense": keys[:1], "word": [k for k in keys if k[0] == keys[0][0]], "nothing": keys}[knowing]
    p: dict[str, float] = {}
    for key in chosen:
        share = 1.0 / len(chosen)
        p[key[0]] = p.get(key[0], 0.0) + share / 2
        for noun in NOUNS[key]:
            p[noun] = p.get(noun, 0.0) + share / 2 / len(NOUNS[key])
    q = np.array(list(p.values()))
    return float(-(q * np.log(q)).sum())


def tokenize(text: str) -> list[str]:
    """The words of ``text``: lower case, letters only, punctuation dropped.

    >>> tokenize("The bank was steep, again!")
    ['the', 'bank', 'was', 'steep', 'again']
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    return _WORD.findall(text.lower())


class Vocabulary:
    """A map between words and integer ids.

    Ids 0, 1 and 2 are ``<pad>``, ``<s>`` and ``</s>``; the words follow in
    alphabetical order, so the same words always get the same ids.

    >>> vocab = Vocabulary(["the bank", "the bank was"])
    >>> len(vocab), vocab.words[3:]
    (6, ['bank', 'the', 'was'])
    >>> vocab.encode("the bank was")
    [1, 4, 3, 5, 2]
    >>> vocab.decode([1, 4, 3, 5, 2])
    ['<s>', 'the', 'bank', 'was', '</s>']
    >>> vocab.encode("the bat was")
    Traceback (most recent call last):
    ...
    ValueError: text has a word not in the vocabulary: 'bat'
    """

    def __init__(self, texts: Iterable[Any]) -> None:
        words: set[str] = set()
        count = 0
        for k, text in enumerate(texts):
            text = text.text if isinstance(text, Sentence) else text
            if not isinstance(text, str):
                raise ValueError(f"texts[{k}] must be a string or a Sentence, got {type(text).__name__}")
            words.update(tokenize(text))
            count += 1
        if not words:
            raise ValueError(f"texts must hold at least one word, got {count} text(s) without any")
        self.words: list[str] = [PAD, BOS, EOS] + sorted(words)
        self.ids: dict[str, int] = {w: i for i, w in enumerate(self.words)}

    def __len__(self) -> int:
        return len(self.words)

    def __repr__(self) -> str:
        return f"Vocabulary({len(self)} tokens)"

    @property
    def pad_id(self) -> int:
        """The id of ``<pad>``: 0."""
        return self.ids[PAD]

    def id(self, word: str) -> int:
        """The id of one word; ValueError if it is not in the vocabulary."""
        if word not in self.ids:
            raise ValueError(f"word must be in the vocabulary, got {word!r}")
        return self.ids[word]

    def encode(self, text: Any) -> list[int]:
        """The ids of ``<s>``, the words of ``text`` (a string or :class:`Sentence`), ``</s>``."""
        text = text.text if isinstance(text, Sentence) else text
        tokens = tokenize(text)
        unknown = [w for w in tokens if w not in self.ids]
        if unknown:
            raise ValueError(f"text has a word not in the vocabulary: {unknown[0]!r}")
        if not tokens:
            raise ValueError(f"text must hold at least one word, got {text!r}")
        return [self.ids[BOS]] + [self.ids[w] for w in tokens] + [self.ids[EOS]]

    def decode(self, ids: Sequence[int]) -> list[str]:
        """The tokens of a sequence of ids."""
        out = []
        for k, i in enumerate(ids):
            if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) or not 0 <= int(i) < len(self):
                raise ValueError(f"ids[{k}] must be a whole number from 0 to {len(self) - 1}, got {i!r}")
            out.append(self.words[int(i)])
        return out


def vocabulary() -> Vocabulary:
    """Every word the corpus can use: fillers, ``the``, ``was``, the ambiguous words, cues and topic nouns.

    Built from the word lists, not from sentences, so held-out sentences need
    nothing the training sentences did not define.

    >>> vocab = vocabulary()
    >>> len(vocab), vocab.encode("the bank was")[1:-1] == [vocab.id("the"), vocab.id("bank"), vocab.id("was")]
    (60, True)
    """
    words = list(FILLERS) + ["the", "was"] + list(SENSES)
    words += [w for group in CUES.values() for w in group] + [w for group in NOUNS.values() for w in group]
    return Vocabulary([" ".join(words)])

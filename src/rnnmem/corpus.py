r"""A toy corpus in which the same word is used in clearly different senses.

Three words carry two senses each: *train* (a vehicle, or to teach),
*bank* (of a river, or for money) and *book* (to reserve, or a thing to
read). Every sentence is drawn from a small template of its word and sense,
whose slots are filled from short lists of words, so that a sentence's
sense is known by construction:

=====  ==========  =========================================
word   sense       an example
=====  ==========  =========================================
train  vehicle     ``the night train stopped at the station``
train  teach       ``we train models on text``
bank   river       ``we sat on the bank of the lake``
bank   money       ``they put money in the bank``
book   reserve     ``i book a table for two``
book   read        ``she read a book about the river``
=====  ==========  =========================================

:func:`make_corpus` draws sentences from a seed, deterministically: the same
seed gives the same list, on any machine. :func:`tokenize` splits a sentence
into lower-case words; :class:`Vocabulary` maps words to integer ids, with
three reserved ids for padding and for the two sentence boundaries
(``<pad>`` 0, ``<s>`` 1, ``</s>`` 2). :meth:`Vocabulary.encode` wraps a
sentence in its boundaries, the form a language model reads.

Bad input raises :class:`ValueError` naming the argument, the value and what
is allowed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from .checks import check_choice, check_positive_int

__all__ = ["Sentence", "TEMPLATES", "SENSES", "make_corpus", "tokenize", "Vocabulary",
           "PAD", "BOS", "EOS", "occurrences"]

PAD, BOS, EOS = "<pad>", "<s>", "</s>"
"""The reserved tokens: padding, start of sentence, end of sentence."""

_SLOTS = {
    "who": ("we", "they", "i"),
    "when": ("morning", "night"),
    "moved": ("arrived", "stopped"),
    "place": ("city", "coast"),
    "state": ("late", "full"),
    "data": ("data", "text"),
    "pupil": ("dog", "team"),
    "every": ("day", "morning"),
    "water": ("river", "lake"),
    "shore": ("muddy", "steep"),
    "them": ("us", "her"),
    "count": ("two", "four"),
    "topic": ("sea", "city", "river"),
    "age": ("old", "new"),
}

TEMPLATES: dict[tuple[str, str], tuple[str, ...]] = {
    ("train", "vehicle"): (
        "the {when} train {moved} at the station",
        "we took the {when} train to the {place}",
        "the train to the {place} was {state}",
    ),
    ("train", "teach"): (
        "{who} train models on {data}",
        "{who} train the {pupil} every {every}",
        "{who} will train the new {pupil}",
    ),
    ("bank", "river"): (
        "{who} sat on the bank of the {water}",
        "the {water} bank was {shore}",
        "the bank of the {water} was {shore}",
    ),
    ("bank", "money"): (
        "{who} put money in the bank",
        "the bank gave {them} a loan",
        "{who} took money from the bank",
    ),
    ("book", "reserve"): (
        "{who} book a table for {count}",
        "{who} will book a room at the hotel",
        "please book a table for the {when}",
    ),
    ("book", "read"): (
        "{who} read a book about the {topic}",
        "the book on the table was {age}",
        "she read a book about {data}",
    ),
}
"""For each ``(word, sense)``, the templates its sentences are drawn from."""

SENSES: dict[str, tuple[str, str]] = {}
for _word, _sense in TEMPLATES:
    SENSES.setdefault(_word, ())
    SENSES[_word] += (_sense,)
"""For each ambiguous word, its two senses, in the order of :data:`TEMPLATES`."""

_FIELD = re.compile(r"\{(\w+)\}")
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class Sentence:
    """One sentence of the corpus: its text, its ambiguous word and that word's sense."""

    text: str
    word: str
    sense: str

    @property
    def tokens(self) -> list[str]:
        """The sentence's words, :func:`tokenize` d."""
        return tokenize(self.text)

    @property
    def position(self) -> int:
        """The index of the ambiguous word among :attr:`tokens` (it occurs exactly once)."""
        return self.tokens.index(self.word)


def make_corpus(n_sentences: int = 300, seed: int = 0) -> list[Sentence]:
    """``n_sentences`` sentences drawn from :data:`TEMPLATES`, the same for the same ``seed``.

    The six ``(word, sense)`` pairs take turns, so each has ``n_sentences / 6``
    sentences (to within one); the template and its slot fillers are drawn
    with ``numpy.random.default_rng(seed)``. Sentences may repeat.

    >>> corpus = make_corpus(6, seed=0)
    >>> [(s.word, s.sense) for s in corpus[:2]]
    [('train', 'vehicle'), ('train', 'teach')]
    >>> corpus == make_corpus(6, seed=0)
    True
    >>> make_corpus(0)
    Traceback (most recent call last):
    ...
    ValueError: n_sentences must be a whole number >= 1, got 0
    """
    n_sentences = check_positive_int("n_sentences", n_sentences)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")
    rng = np.random.default_rng(int(seed))
    keys = list(TEMPLATES)
    out = []
    for k in range(n_sentences):
        word, sense = keys[k % len(keys)]
        templates = TEMPLATES[(word, sense)]
        template = templates[int(rng.integers(len(templates)))]
        filled = _FIELD.sub(lambda m: _SLOTS[m.group(1)][int(rng.integers(len(_SLOTS[m.group(1)])))],
                            template)
        out.append(Sentence(filled, word, sense))
    return out


def tokenize(text: str) -> list[str]:
    """The words of ``text``: lower case, letters only, punctuation dropped.

    >>> tokenize("The train arrived, at last!")
    ['the', 'train', 'arrived', 'at', 'last']
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    return _WORD.findall(text.lower())


class Vocabulary:
    """A map between words and integer ids.

    Ids 0, 1 and 2 are ``<pad>``, ``<s>`` and ``</s>``; the words follow in
    alphabetical order, so the same words always get the same ids.

    >>> vocab = Vocabulary(["the train", "we train models"])
    >>> len(vocab), vocab.words[3:]
    (7, ['models', 'the', 'train', 'we'])
    >>> vocab.encode("we train models")
    [1, 6, 5, 3, 2]
    >>> vocab.decode([1, 6, 5, 3, 2])
    ['<s>', 'we', 'train', 'models', '</s>']
    >>> vocab.encode("we train dogs")
    Traceback (most recent call last):
    ...
    ValueError: text has a word not in the vocabulary: 'dogs'
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
            if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) \
                    or not 0 <= int(i) < len(self):
                raise ValueError(f"ids[{k}] must be a whole number from 0 to {len(self) - 1}, got {i!r}")
            out.append(self.words[int(i)])
        return out


def occurrences(corpus: Sequence[Sentence], word: str) -> dict[str, list[Sentence]]:
    """The distinct sentences of ``corpus`` that use ``word``, grouped by sense, in first-seen order.

    >>> groups = occurrences(make_corpus(60, seed=0), "bank")
    >>> sorted(groups), all(s.word == "bank" for g in groups.values() for s in g)
    (['money', 'river'], True)
    """
    check_choice("word", word, tuple(SENSES))
    groups: dict[str, list[Sentence]] = {sense: [] for sense in SENSES[word]}
    seen = set()
    for s in corpus:
        if s.word == word and s.text not in seen:
            seen.add(s.text)
            groups[s.sense].append(s)
    return groups

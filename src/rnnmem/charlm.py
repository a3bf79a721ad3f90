r"""A character-level language model: the tanh RNN reading text one character at a time.

**Symbols.** Text is read as ids over a fixed alphabet, the same on every
machine: :data:`ALPHABET` is the newline and the 95 printable ASCII
characters (space to ``~``), ids 0 to 95, and every other character (a tab,
a letter with an accent) is read as the one symbol :data:`UNKNOWN`, id 96, so
:data:`VOCAB_SIZE` is 97. :func:`encode` and :func:`decode` map between text
and ids.

**The model** (:class:`CharRNN`) is the tanh RNN of :mod:`rnnmem.rnn` with a
one-hot input, followed by a **softmax readout** over the vocabulary. For
member :math:`e` of a stack of independent models, reading the id
:math:`x_t` at step :math:`t`,

.. math::

    h_t = \tanh(W_{ih}[:, x_t] + b_{ih} + W_{hh} h_{t-1} + b_{hh}), \qquad
    z_t = W_{hy} h_t + b_y, \qquad
    p(x_{t+1} = v \mid x_1, \dots, x_t) = \operatorname{softmax}(z_t)_v ,

where :math:`W_{ih}[:, x]` is column :math:`x` of :math:`W_{ih}` (the
product of :math:`W_{ih}` with the one-hot vector of :math:`x`). The loss is
the **cross-entropy** of the text's next character, in nats, averaged over
the steps: :math:`-\frac1T\sum_t \log p(x_{t+1} \mid x_{\le t})`. In training
the input at every step is the text's own character, never the model's
guess: **teacher forcing**. Its exponential is the **perplexity**
(:func:`perplexity`): a model that spreads its bet evenly over :math:`P`
symbols has perplexity :math:`P`.

**The gated model** (:class:`CharLSTM`) is the LSTM of :mod:`rnnmem.lstm`
with the same one-hot input, softmax readout and loss; its backward pass
is that module's exact one. A :class:`Recipe` names its network
(:data:`MODELS`).

**Connectivity** (:func:`connectivity`, Madsen 2019): the norm of the
gradient of the loss at a position with respect to the one-hot input
:math:`k` steps back, averaged over positions of a text.

**Truncation.** :meth:`CharRNN.loss_and_grads` runs the forward pass over a
whole window and, with ``truncation=k``, cuts the backward pass at the steps
:math:`0, k, 2k, \dots` of the window: the state's value crosses those
boundaries, the loss rate does not. That is BPTT(:math:`k`, :math:`k`) of
:mod:`rnnmem.bptt` (:func:`rnnmem.bptt.truncation_plan`), its chunks'
gradients added into one update per window.

**The corpus** is the Python standard library's own source, read from the
interpreter that runs this module (:func:`stdlib_corpus`): the modules
:data:`TRAIN_MODULES` for training and :data:`VALID_MODULES`, other files,
for validation. Another Python version has other files, so a corpus carries
the digest of its text (:attr:`Corpus.digest`).

**Baselines** (:func:`ngram_nats`): the uniform guess, and unigram and bigram
counts of the training text with add-one (Laplace) smoothing.

**Sampling** (:func:`softmax`, :func:`sample_next`, :func:`sample`): a
character is drawn from :math:`\operatorname{softmax}(z / \tau)` with
temperature :math:`\tau`; below one it sharpens the distribution, above one
it flattens it.

**The chapter's run** (:class:`Recipe`, :class:`TextRun`, :class:`RunResult`):
one model trained on the corpus with Adam (:class:`rnnmem.train.Adam`), read
at checkpoints. A :class:`TextRun` is a frozen value whose ``repr`` holds every
setting and the corpus's digest, and :meth:`TextRun.execute` is a pure function
of it.

Bad input raises :class:`ValueError` naming the argument, its value and what
is allowed.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import _recurrent
from .checks import check_choice, check_dtype, check_finite, check_positive, check_positive_int, check_seed
from .init import pytorch_uniform
from .rnn import RNN
from .train import Adam

__all__ = [
    "ALPHABET",
    "UNKNOWN",
    "UNKNOWN_SHOWN",
    "VOCAB_SIZE",
    "TRAIN_MODULES",
    "VALID_MODULES",
    "encode",
    "decode",
    "teacher_forcing",
    "softmax",
    "perplexity",
    "sample_next",
    "ngram_nats",
    "ngram_sample",
    "words",
    "known_share",
    "module_path",
    "Corpus",
    "stdlib_corpus",
    "CharRNN",
    "CharLSTM",
    "MODELS",
    "split_streams",
    "clip_members",
    "train",
    "sample",
    "Recipe",
    "RECIPE",
    "TextRun",
    "RunResult",
    "connectivity",
]

ALPHABET = "\n" + "".join(chr(c) for c in range(32, 127))
"""The symbols read as themselves: the newline, then the printable ASCII characters from space to ``~``."""

UNKNOWN = len(ALPHABET)
"""The id of every character outside :data:`ALPHABET`: 96."""

UNKNOWN_SHOWN = "¤"
"""How :func:`decode` writes :data:`UNKNOWN`."""

VOCAB_SIZE = len(ALPHABET) + 1
"""The number of symbols the model reads and predicts: 97."""

TRAIN_MODULES = (
    "argparse",
    "calendar",
    "configparser",
    "contextlib",
    "dataclasses",
    "difflib",
    "fractions",
    "functools",
    "heapq",
    "pprint",
    "random",
    "shlex",
    "statistics",
    "textwrap",
    "tokenize",
    "traceback",
)
"""The standard-library modules whose source is the training text, in this order."""

VALID_MODULES = (
    "bisect",
    "cmd",
    "colorsys",
    "copy",
    "fnmatch",
    "getopt",
    "glob",
    "graphlib",
    "netrc",
    "numbers",
    "queue",
    "reprlib",
    "sched",
)
"""Other modules, never trained on: the validation text."""

_LOOKUP = np.full(128, UNKNOWN, dtype=np.int64)
for _i, _c in enumerate(ALPHABET):
    _LOOKUP[ord(_c)] = _i
_SHOWN = np.array(list(ALPHABET) + [UNKNOWN_SHOWN])


# --------------------------------------------------------------------------- symbols


def encode(text: str) -> np.ndarray:
    """The ids of the characters of ``text``: an int64 array, :data:`UNKNOWN` for a character outside the alphabet.

    >>> encode("def f():\\n").tolist()
    [69, 70, 71, 1, 71, 9, 10, 27, 0]
    >>> encode("\\tπ").tolist()
    [96, 96]
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    out = np.full(codes.shape, UNKNOWN, dtype=np.int64)
    ascii_ = codes < 128
    out[ascii_] = _LOOKUP[codes[ascii_]]
    return out


def _ids(name: str, ids: Any, vocab_size: int = VOCAB_SIZE) -> np.ndarray:
    arr = np.asarray(ids)
    if arr.size and (arr.dtype.kind not in "iu" or arr.min() < 0 or arr.max() >= vocab_size):
        raise ValueError(f"{name} must hold whole numbers from 0 to {vocab_size - 1} (symbol ids), got {ids!r}")
    return arr.astype(np.int64)


def decode(ids: Any) -> str:
    """The text of a sequence of ids (:data:`UNKNOWN` written as :data:`UNKNOWN_SHOWN`).

    >>> decode(encode("x = 1\\t# é"))
    'x = 1¤# ¤'
    >>> decode([97])
    Traceback (most recent call last):
    ...
    ValueError: ids must hold whole numbers from 0 to 96 (symbol ids), got [97]
    """
    arr = _ids("ids", ids)
    if arr.ndim != 1:
        raise ValueError(f"ids must be one sequence of ids, got shape {arr.shape}")
    return "".join(_SHOWN[arr].tolist())


def teacher_forcing(ids: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(inputs, targets)`` of a sequence: every symbol but the last is read, every symbol but the first predicted.

    The input at each step is the text's own symbol, whatever the model would
    have guessed; the target is the symbol that follows it.

    >>> x, y = teacher_forcing(encode("def"))
    >>> decode(x), decode(y)
    ('de', 'ef')
    """
    arr = _ids("ids", ids)
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"ids must be one sequence of at least 2 ids, got shape {arr.shape}")
    return arr[:-1].copy(), arr[1:].copy()


# --------------------------------------------------------------------------- softmax, perplexity, sampling


def softmax(logits: Any, temperature: float = 1.0) -> np.ndarray:
    r"""The probabilities :math:`\operatorname{softmax}(z/\tau)` over the last axis of ``logits``, in float64.

    Computed as :math:`e^{(z - \max z)/\tau} / \sum e^{(z - \max z)/\tau}`:
    subtracting the largest logit changes no probability and keeps every
    exponential at most one. ``temperature`` :math:`\tau > 0`.

    >>> softmax([2.0, 1.0, 0.0]).round(3).tolist()
    [0.665, 0.245, 0.09]
    >>> softmax([2.0, 1.0, 0.0], temperature=0.5).round(3).tolist()
    [0.867, 0.117, 0.016]
    >>> softmax([1000.0, 0.0]).tolist()
    [1.0, 0.0]
    """
    z = np.asarray(check_finite("logits", logits), dtype=np.float64)
    if z.ndim < 1 or z.shape[-1] < 1:
        raise ValueError(f"logits must have at least one entry on its last axis, got shape {z.shape}")
    tau = float(check_positive("temperature", temperature))
    e = np.exp((z - z.max(axis=-1, keepdims=True)) / tau)
    return e / e.sum(axis=-1, keepdims=True)


def perplexity(losses: Any) -> float:
    r"""The perplexity :math:`\exp(\frac1N\sum_i \ell_i)` of per-symbol losses :math:`\ell_i` in nats.

    One number is read as a mean already. A model that spreads its bet evenly
    over :math:`P` symbols loses :math:`\ln P` on each, so its perplexity is
    :math:`P`: the number of equally likely symbols its uncertainty is worth.

    >>> perplexity([math.log(4.0)] * 3)
    4.0
    >>> round(perplexity([0.5, 1.5]), 4), round(math.e, 4)
    (2.7183, 2.7183)
    """
    arr = np.asarray(check_finite("losses", losses), dtype=np.float64)
    if arr.size == 0:
        raise ValueError("losses must hold at least one loss, got none")
    if arr.min() < 0:
        raise ValueError(f"losses must be cross-entropies in nats (>= 0), got a minimum of {float(arr.min())!r}")
    return float(math.exp(float(arr.mean())))


def sample_next(logits: Any, temperature: float, rng: Any) -> int:
    r"""Draw one symbol from :math:`\operatorname{softmax}(z/\tau)`: the first index whose cumulative probability exceeds :math:`u`.

    One uniform number :math:`u` is drawn, ``rng.random()``; the symbol is
    the smallest :math:`v` with :math:`p_0 + \dots + p_v > u`. ``rng`` is a
    seed or a :class:`numpy.random.Generator` (:func:`rnnmem.checks.check_seed`);
    pass a generator to draw several symbols from one stream.

    >>> rng = np.random.default_rng(0)
    >>> [sample_next([2.0, 1.0, 0.0], 1.0, rng) for _ in range(8)]
    [0, 0, 0, 0, 1, 2, 0, 1]
    >>> [sample_next([2.0, 1.0, 0.0], 5.0, rng) for _ in range(8)]
    [1, 2, 2, 0, 2, 0, 1, 0]
    """
    z = np.asarray(check_finite("logits", logits), dtype=np.float64)
    if z.ndim != 1:
        raise ValueError(f"logits must be one vector of scores, got shape {z.shape}")
    p = softmax(z, temperature)
    u = check_seed("rng", rng).random()
    return min(int(np.searchsorted(np.cumsum(p), u, side="right")), z.size - 1)


# --------------------------------------------------------------------------- n-gram baselines


def ngram_nats(train: Any, valid: Any, order: int, vocab_size: int = VOCAB_SIZE, alpha: float = 1.0) -> float:
    r"""Mean nats per symbol of ``valid[1:]`` under an add-``alpha`` n-gram model of ``order`` 0, 1 or 2 fitted on ``train``.

    * order 0, the uniform guess: :math:`p(v) = 1/V`;
    * order 1, unigram: :math:`p(v) = (c(v) + \alpha) / (N + \alpha V)`,
      with :math:`c(v)` the count of :math:`v` in ``train`` and :math:`N` its length;
    * order 2, bigram: :math:`p(v \mid u) = (c(u, v) + \alpha) / (c(u\,\cdot) + \alpha V)`,
      with :math:`c(u, v)` the count of the pair :math:`u v` in ``train`` and
      :math:`c(u\,\cdot)` the count of pairs that start with :math:`u`.

    ``alpha = 1`` is add-one (Laplace) smoothing: no symbol gets probability
    zero. Every order predicts the same symbols, ``valid[1:]``, each from
    the one before it where it needs one, so their losses compare.

    >>> text = encode("abab")
    >>> round(ngram_nats(text, text, 0), 4) == round(math.log(VOCAB_SIZE), 4)
    True
    >>> [round(ngram_nats(text, text, order), 2) for order in (0, 1, 2)]
    [4.57, 3.52, 3.63]
    """
    V = check_positive_int("vocab_size", vocab_size)
    order = check_choice("order", order, (0, 1, 2))
    a = float(check_positive("alpha", alpha))
    tr, va = _ids("train", train, V), _ids("valid", valid, V)
    if tr.ndim != 1 or tr.size < 2:
        raise ValueError(f"train must be one sequence of at least 2 ids, got shape {tr.shape}")
    if va.ndim != 1 or va.size < 2:
        raise ValueError(f"valid must be one sequence of at least 2 ids, got shape {va.shape}")
    targets = va[1:]
    if order == 0:
        return math.log(V)
    if order == 1:
        counts = np.bincount(tr, minlength=V).astype(np.float64)
        logp = np.log(counts + a) - math.log(tr.size + a * V)
        return float(-logp[targets].mean())
    pairs = np.bincount(tr[:-1] * V + tr[1:], minlength=V * V).astype(np.float64).reshape(V, V)
    logp = np.log(pairs + a) - np.log(pairs.sum(axis=1, keepdims=True) + a * V)
    return float(-logp[va[:-1], targets].mean())


def ngram_sample(train: Any, order: int, length: int, *, prompt: str = "\n", seed: Any = 0, alpha: float = 1.0) -> str:
    """``length`` characters drawn from the add-``alpha`` n-gram model of ``order`` 0, 1 or 2 fitted on ``train``.

    The same models as :func:`ngram_nats`; each symbol is drawn as
    :func:`sample_next` draws, from the logarithms of the model's
    probabilities (temperature 1), the bigram's given the symbol before
    (the prompt's last, at first). A control for the samples of a trained
    network: what counting alone writes.

    >>> text = encode("abababab" * 100)
    >>> ngram_sample(text, 2, 12, prompt="a", alpha=0.001)
    'babababababa'
    >>> len(ngram_sample(text, 0, 12))
    12
    """
    V = VOCAB_SIZE
    order = check_choice("order", order, (0, 1, 2))
    n = check_positive_int("length", length)
    a = float(check_positive("alpha", alpha))
    tr = _ids("train", train)
    if tr.ndim != 1 or tr.size < 2:
        raise ValueError(f"train must be one sequence of at least 2 ids, got shape {tr.shape}")
    start = encode(prompt)
    if start.size == 0:
        raise ValueError("prompt must hold at least one character, got ''")
    rng = check_seed("seed", seed)
    if order == 0:
        table = np.zeros((1, V))
    elif order == 1:
        table = np.log(np.bincount(tr, minlength=V) + a)[None, :]
    else:
        pairs = np.bincount(tr[:-1] * V + tr[1:], minlength=V * V).reshape(V, V)
        table = np.log(pairs + a)
    last, out = int(start[-1]), []
    for _ in range(n):
        last = sample_next(table[last if order == 2 else 0], 1.0, rng)
        out.append(last)
    return decode(np.array(out, dtype=np.int64))


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def words(text: str) -> list[str]:
    """The words of ``text``: runs of letters, digits and underscores that start with a letter or an underscore.

    A name in Python source is such a word; so is a word of a comment.

    >>> words("def sample(self, n=2):  # draw n")
    ['def', 'sample', 'self', 'n', 'draw', 'n']
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    return _WORD.findall(text)


def known_share(sample: str, reference: str, shortest: int = 3) -> float:
    """The share of the words of ``sample`` of at least ``shortest`` characters that occur as words in ``reference``.

    How much of what a model writes is spelled as the reference text spells
    its words and names. ``nan`` when the sample has no word that long.

    >>> known_share("def sampel(self): retrun", "def sample(self): return")
    0.5
    """
    k = check_positive_int("shortest", shortest)
    found = [w for w in words(sample) if len(w) >= k]
    if not found:
        return float("nan")
    vocabulary = set(words(reference))
    return sum(w in vocabulary for w in found) / len(found)


# --------------------------------------------------------------------------- the corpus


def module_path(name: str) -> Path:
    """The source file of the standard-library module ``name`` in the running interpreter.

    ``<stdlib>/<name>.py``, or ``<stdlib>/<name>/__init__.py`` for a package,
    with ``<stdlib>`` from ``sysconfig.get_path("stdlib")``.

    >>> module_path("textwrap").name
    'textwrap.py'
    >>> module_path("no_such_module")
    Traceback (most recent call last):
    ...
    ValueError: name must name a module of the standard library with a source file, got 'no_such_module'
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be the name of a standard-library module, got {name!r}")
    root = Path(sysconfig.get_path("stdlib"))
    for path in (root / f"{name}.py", root / name / "__init__.py"):
        if path.is_file():
            return path
    raise ValueError(f"name must name a module of the standard library with a source file, got {name!r}")


@functools.cache
def _read(name: str) -> str:
    text = module_path(name).read_text(encoding="utf-8")
    return text if text.endswith("\n") else text + "\n"


@dataclass(frozen=True)
class Corpus:
    """Training and validation text, and what it was read from.

    ``train`` and ``valid`` are the modules' sources joined in order;
    ``digest`` is the first 16 hexadecimal digits of the SHA-256 of the
    modules' names and texts, so two interpreters with different sources give
    different digests; ``version`` is the interpreter's ``sys.version``.
    """

    train_modules: tuple[str, ...]
    valid_modules: tuple[str, ...]
    train: str = field(repr=False)
    valid: str = field(repr=False)
    digest: str
    version: str


def _digest(train_modules: Sequence[str], valid_modules: Sequence[str]) -> str:
    h = hashlib.sha256()
    for part, modules in (("train", train_modules), ("valid", valid_modules)):
        for name in modules:
            h.update(f"{part}:{name}".encode() + b"\0" + _read(name).encode("utf-8") + b"\0")
    return h.hexdigest()[:16]


def _modules(name: str, modules: Any) -> tuple[str, ...]:
    if isinstance(modules, str) or not isinstance(modules, (list, tuple)) or not modules:
        raise ValueError(f"{name} must be a non-empty list of module names, got {modules!r}")
    return tuple(modules)


def stdlib_corpus(train_modules: Sequence[str] = TRAIN_MODULES, valid_modules: Sequence[str] = VALID_MODULES) -> Corpus:
    """The standard library's source read from the running interpreter: training and validation text.

    No file is downloaded and none is copied: the text is the interpreter's
    own, and its digest says which it was. A module may not be in both lists.

    >>> c = stdlib_corpus(["textwrap"], ["colorsys"])
    >>> "def wrap(" in c.train, "def rgb_to_hsv(" in c.valid, len(c.digest)
    (True, True, 16)
    >>> stdlib_corpus(["glob"], ["glob"])
    Traceback (most recent call last):
    ...
    ValueError: valid_modules must not repeat a training module, got ['glob']
    """
    import sys

    train_m, valid_m = _modules("train_modules", train_modules), _modules("valid_modules", valid_modules)
    both = sorted(set(train_m) & set(valid_m))
    if both:
        raise ValueError(f"valid_modules must not repeat a training module, got {both!r}")
    for k, name in enumerate(train_m + valid_m):
        which = f"train_modules[{k}]" if k < len(train_m) else f"valid_modules[{k - len(train_m)}]"
        try:
            module_path(name)
        except ValueError:
            raise ValueError(f"{which} must name a standard-library module with a source file, got {name!r}") from None
    return Corpus(
        train_modules=train_m,
        valid_modules=valid_m,
        train="".join(_read(m) for m in train_m),
        valid="".join(_read(m) for m in valid_m),
        digest=_digest(train_m, valid_m),
        version=sys.version,
    )


# --------------------------------------------------------------------------- the model

PARAMETER_NAMES = _recurrent.PARAMETER_NAMES + ("readout_weight", "readout_bias")


class CharRNN:
    r"""``E`` character-level tanh RNN language models, independent, their parameters stacked on axis 0.

    ``CharRNN(vocab_size, hidden_size, seeds, *, dtype=np.float64)``: one
    member per seed. ``params`` maps each name to its live stacked array:
    ``weight_ih_l0`` ``(E, H, V)``, ``weight_hh_l0`` ``(E, H, H)``,
    ``bias_ih_l0`` and ``bias_hh_l0`` ``(E, H)`` (the recurrent layer in
    torch layout, as :class:`rnnmem.RNN` holds it), ``readout_weight``
    :math:`W_{hy}` ``(E, V, H)`` and ``readout_bias`` :math:`b_y` ``(E, V)``.
    Member :math:`e` draws from ``numpy.random.default_rng(seeds[e])`` what
    ``RNN(V, H, seed=seeds[e])`` draws, then the readout from the same range
    :math:`U(-1/\sqrt H, 1/\sqrt H)`, as PyTorch's ``nn.Linear(H, V)`` does.

    Inputs and targets are ids, time first: ``(T, B)`` shared by every member
    or ``(T, E, B)``, one batch per member. A member computes exactly what its
    own :class:`rnnmem.RNN` computes from the one-hot vectors
    (:meth:`member`), and its gradients are those of its own loss: members
    never mix.

    >>> model = CharRNN(VOCAB_SIZE, 8, seeds=[0, 1])
    >>> model.size, model.params["weight_ih_l0"].shape, model.params["readout_weight"].shape
    (2, (2, 8, 97), (2, 97, 8))
    >>> x, y = teacher_forcing(encode("def f(x):"))
    >>> losses, grads, h = model.loss_and_grads(x[:, None], y[:, None])
    >>> [round(v, 2) for v in losses.tolist()], h.shape
    ([4.65, 4.55], (2, 1, 8))
    """

    def __init__(self, vocab_size: int, hidden_size: int, seeds: Any, *, dtype: Any = np.float64) -> None:
        self.vocab_size = check_positive_int("vocab_size", vocab_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
            seeds = [seeds]
        if not isinstance(seeds, (list, tuple, range, np.ndarray)) or len(seeds) == 0:
            raise ValueError(f"seeds must be a non-empty list of whole numbers >= 0, got {seeds!r}")
        for k, s in enumerate(seeds):
            check_seed(f"seeds[{k}]", s if s is not None else -1)
        self.seeds = tuple(int(s) for s in seeds)
        self.dtype = check_dtype("dtype", dtype)
        V, H, E = self.vocab_size, self.hidden_size, len(self.seeds)
        shapes = {
            "weight_ih_l0": (H, V),
            "weight_hh_l0": (H, H),
            "bias_ih_l0": (H,),
            "bias_hh_l0": (H,),
            "readout_weight": (V, H),
            "readout_bias": (V,),
        }
        self.params: dict[str, np.ndarray] = {n: np.empty((E,) + s, dtype=self.dtype) for n, s in shapes.items()}
        for e, seed in enumerate(self.seeds):
            rng = np.random.default_rng(seed)
            for name, shape in shapes.items():  # the order RNN(V, H) draws in, then the readout
                self.params[name][e] = pytorch_uniform(shape, H, rng)

    @classmethod
    def from_params(cls, params: dict[str, Any], seeds: Any = None) -> CharRNN:
        """A model holding copies of ``params`` (stacked as :attr:`params` is), e.g. a checkpoint's.

        >>> a = CharRNN(5, 3, seeds=[4])
        >>> b = CharRNN.from_params(a.params)
        >>> bool(np.array_equal(a.params["weight_hh_l0"], b.params["weight_hh_l0"]))
        True
        """
        if not isinstance(params, dict) or set(params) != set(PARAMETER_NAMES):
            got = sorted(params) if isinstance(params, dict) else type(params).__name__
            raise ValueError(f"params must be a dict with the keys {list(PARAMETER_NAMES)}, got {got}")
        W_hy = np.asarray(params["readout_weight"])
        if W_hy.ndim != 3:
            raise ValueError(f"params['readout_weight'] must have shape (E, V, H), got shape {W_hy.shape}")
        E, V, H = W_hy.shape
        new = object.__new__(cls)
        new.vocab_size, new.hidden_size = V, H
        new.seeds = tuple(range(E)) if seeds is None else tuple(seeds)
        new.dtype = np.dtype(W_hy.dtype)
        expected = {
            "weight_ih_l0": (E, H, V),
            "weight_hh_l0": (E, H, H),
            "bias_ih_l0": (E, H),
            "bias_hh_l0": (E, H),
            "readout_weight": (E, V, H),
            "readout_bias": (E, V),
        }
        new.params = {}
        for name, shape in expected.items():
            arr = np.array(params[name], dtype=new.dtype)
            if arr.shape != shape:
                raise ValueError(f"params[{name!r}] must have shape {shape}, got shape {arr.shape}")
            new.params[name] = arr
        return new

    @property
    def size(self) -> int:
        """The number of members, :math:`E`."""
        return len(self.seeds)

    def __repr__(self) -> str:
        return (
            f"CharRNN(vocab_size={self.vocab_size}, hidden_size={self.hidden_size}, "
            f"members={self.size}, dtype={self.dtype.name})"
        )

    def copy_params(self) -> dict[str, np.ndarray]:
        """Copies of every parameter array (a checkpoint)."""
        return {k: v.copy() for k, v in self.params.items()}

    def member(self, e: int = 0) -> RNN:
        """Member ``e``'s recurrent layer as an :class:`rnnmem.RNN` reading one-hot vectors (a copy).

        >>> model = CharRNN(VOCAB_SIZE, 4, seeds=[3])
        >>> bool(np.array_equal(model.member(0).W_hh, RNN(VOCAB_SIZE, 4, seed=3).W_hh))
        True
        """
        e = self._member(e)
        rnn = RNN(self.vocab_size, self.hidden_size, dtype=self.dtype, seed=0)
        rnn.W_ih = self.params["weight_ih_l0"][e].copy()
        rnn.W_hh = self.params["weight_hh_l0"][e].copy()
        rnn.b_ih = self.params["bias_ih_l0"][e].copy()
        rnn.b_hh = self.params["bias_hh_l0"][e].copy()
        return rnn

    def _member(self, e: Any) -> int:
        if isinstance(e, bool) or not isinstance(e, (int, np.integer)) or not 0 <= int(e) < self.size:
            raise ValueError(f"e must be a member index from 0 to {self.size - 1}, got {e!r}")
        return int(e)

    # ------------------------------------------------------------------ inputs

    def _batch(self, name: str, ids: Any) -> np.ndarray:
        """Ids as ``(T, E, B)`` (a broadcast view when shared by the members)."""
        arr = _ids(name, ids, self.vocab_size)
        if arr.ndim == 2:
            arr = np.broadcast_to(arr[:, None, :], (arr.shape[0], self.size, arr.shape[1]))
        if arr.ndim != 3 or arr.shape[1] != self.size or arr.shape[0] < 1 or arr.shape[2] < 1:
            raise ValueError(
                f"{name} must have shape (T, B) or (T, E={self.size}, B) with T, B >= 1, got shape {np.shape(ids)}"
            )
        return arr

    def _state(self, h0: Any, B: int) -> np.ndarray:
        shape = (self.size, B, self.hidden_size)
        if h0 is None:
            return np.zeros(shape, dtype=self.dtype)
        h = np.asarray(check_finite("h0", h0), dtype=self.dtype)
        if h.shape != shape:
            raise ValueError(f"h0 must have shape (E, B, H) = {shape}, got shape {h.shape}")
        return h

    # ------------------------------------------------------------------ forward

    def forward(self, inputs: Any, h0: Any = None) -> np.ndarray:
        """The states ``(T + 1, E, B, H)`` over ``inputs`` (ids ``(T, B)`` or ``(T, E, B)``), ``h0`` first.

        >>> model = CharRNN(VOCAB_SIZE, 4, seeds=[0])
        >>> x = encode("ab")[:, None]
        >>> states = model.forward(x)
        >>> out, _ = model.member(0).forward(np.eye(VOCAB_SIZE)[x])
        >>> states.shape, bool(np.allclose(states[1:, 0], out, rtol=0, atol=1e-15))
        ((3, 1, 1, 4), True)
        """
        x = self._batch("inputs", inputs)
        return np.moveaxis(self._forward(x.transpose(1, 0, 2), h0), 0, 1)

    def _forward(self, x: np.ndarray, h0: Any) -> np.ndarray:
        """The states member first, ``(E, T + 1, B, H)``, of ids ``x`` ``(E, T, B)``."""
        E, T, B = x.shape
        p = self.params
        states = np.empty((E, T + 1, B, self.hidden_size), dtype=self.dtype)
        states[:, 0] = self._state(h0, B)
        pre = p["weight_ih_l0"].transpose(0, 2, 1)[np.arange(E)[:, None, None], x]  # (E, T, B, H)
        pre += (p["bias_ih_l0"] + p["bias_hh_l0"])[:, None, None, :]
        W_hhT = np.ascontiguousarray(p["weight_hh_l0"].transpose(0, 2, 1))
        a = np.empty((E, B, self.hidden_size), dtype=self.dtype)
        for t in range(T):
            np.matmul(states[:, t], W_hhT, out=a)
            a += pre[:, t]
            np.tanh(a, out=states[:, t + 1])
        return states

    def logits(self, states: Any) -> np.ndarray:
        r"""The scores :math:`z = W_{hy} h + b_y` of states ``(..., E, B, H)``: ``(..., E, B, V)``.

        >>> model = CharRNN(VOCAB_SIZE, 4, seeds=[0, 1])
        >>> model.logits(np.zeros((2, 3, 4))).shape
        (2, 3, 97)
        """
        h = np.asarray(states, dtype=self.dtype)
        if h.ndim < 3 or h.shape[-3:-2] != (self.size,) or h.shape[-1] != self.hidden_size:
            raise ValueError(f"states must have shape (..., E={self.size}, B, H={self.hidden_size}), got {h.shape}")
        lead = h.shape[:-3]
        hm = np.moveaxis(h, -3, 0).reshape(self.size, -1, self.hidden_size)
        z = np.matmul(hm, self.params["readout_weight"].transpose(0, 2, 1))
        z += self.params["readout_bias"][:, None, :]
        z = z.reshape((self.size,) + lead + (h.shape[-2], self.vocab_size))
        return np.moveaxis(z, 0, -3)

    # ------------------------------------------------------------------ loss and gradients

    def loss_and_grads(
        self,
        inputs: Any,
        targets: Any,
        h0: Any = None,
        *,
        truncation: int | None = None,
        mask: Any = None,
        input_grads: bool = False,
    ) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        r"""Each member's mean cross-entropy of ``targets``, its gradients, and the last state.

        ``inputs`` and ``targets`` are ids ``(T, B)`` or ``(T, E, B)``: the
        symbol read at each step and the symbol that follows it (teacher
        forcing, :func:`teacher_forcing`). ``mask`` ``(T, B)`` or ``(T, E, B)``
        booleans counts only some steps (default: every step). Returns
        ``(losses (E,), grads, h_T (E, B, H))``: ``grads`` keyed like
        :attr:`params`, each member's the gradient of its own loss; with
        ``input_grads=True`` also ``"x"``, ``(T, E, B, V)``, the gradient with
        respect to each one-hot input vector, :math:`W_{ih}^\top \partial L/\partial a_t`.

        ``truncation=k`` cuts the backward pass before the steps
        :math:`0, k, 2k, \dots` of the window: the loss rate of step :math:`t`
        is not passed back to step :math:`t - 1` where :math:`t` is a multiple
        of :math:`k`, so the loss at step :math:`t` reaches only the inputs
        of its own chunk, at most :math:`k - 1` steps back, while the forward
        states are those of the whole window. ``None`` is full BPTT over the
        window, which also gives ``"h0"``, the gradient with respect to ``h0``.

        >>> model = CharRNN(VOCAB_SIZE, 4, seeds=[0])
        >>> x, y = teacher_forcing(encode("hello, world"))
        >>> last = np.zeros((len(x), 1), dtype=bool)
        >>> last[-1] = True
        >>> _, g, _ = model.loss_and_grads(x[:, None], y[:, None], mask=last, truncation=4, input_grads=True)
        >>> reach = np.abs(g["x"][:, 0, 0]).sum(axis=1) > 0   # which inputs the last loss reaches
        >>> reach.astype(int).tolist()
        [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1]
        """
        x = self._batch("inputs", inputs)
        y = self._batch("targets", targets)
        if y.shape != x.shape:
            raise ValueError(f"targets must have the shape of inputs, {x.shape}, got {y.shape}")
        T, E, B = x.shape
        V, H = self.vocab_size, self.hidden_size
        if mask is None:
            m = np.ones((E, T, B), dtype=np.float64)
        else:
            mb = np.asarray(mask)
            if mb.dtype != np.bool_ or mb.shape not in ((T, B), (T, E, B)):
                raise ValueError(f"mask must be booleans of shape (T, B) or (T, E, B) = {x.shape}, got {mb.shape}")
            m = np.broadcast_to(mb[:, None, :] if mb.ndim == 2 else mb, (T, E, B)).transpose(1, 0, 2)
            m = m.astype(np.float64)
        counts = m.sum(axis=(1, 2))
        if np.any(counts == 0):
            raise ValueError("mask must keep at least one step of every member, got a member with none")
        if truncation is not None:
            truncation = check_positive_int("truncation", truncation)
        xm, ym = x.transpose(1, 0, 2), y.transpose(1, 0, 2)  # member first, (E, T, B)
        states = self._forward(xm, h0)  # (E, T + 1, B, H)
        p = self.params
        N = T * B
        hs = states[:, 1:].reshape(E, N, H)
        z = np.matmul(hs, np.ascontiguousarray(p["readout_weight"].transpose(0, 2, 1)))
        z += p["readout_bias"][:, None, :]
        z -= z.max(axis=2, keepdims=True)
        np.exp(z, out=z)
        total = z.sum(axis=2)  # softmax(z) = exp(z) / total, the largest logit taken out
        flat_z = z.reshape(E * N, V)
        rows = np.arange(E * N)
        cols = ym.reshape(E * N)
        weight = m.reshape(E, N) / counts[:, None]
        picked = flat_z[rows, cols].reshape(E, N) / total
        with np.errstate(divide="ignore"):
            nll = -np.log(picked)
        losses = np.where(weight > 0, nll * weight, 0.0).sum(axis=1)
        z *= (weight / total)[..., None]  # weight * softmax(z)
        flat_z[rows, cols] -= weight.reshape(E * N)  # dL/dz = weight * (softmax(z) - onehot(y)), (E, N, V)
        grads: dict[str, np.ndarray] = {
            "readout_weight": np.matmul(z.transpose(0, 2, 1), hs),
            "readout_bias": z.sum(axis=1),
        }
        dh = np.matmul(z, p["readout_weight"]).reshape(E, T, B, H)
        d_pre = 1.0 - states[:, 1:] * states[:, 1:]  # tanh' of every step, times the loss rate below
        carry = np.zeros((E, B, H), dtype=self.dtype)
        W_hh = p["weight_hh_l0"]
        for t in range(T - 1, -1, -1):
            dh[:, t] += carry
            d_pre[:, t] *= dh[:, t]
            if truncation is not None and t % truncation == 0:
                carry = np.zeros_like(carry)
            else:
                carry = np.matmul(d_pre[:, t], W_hh)
        flat = d_pre.reshape(E, N, H)
        grads["weight_hh_l0"] = np.matmul(flat.transpose(0, 2, 1), states[:, :-1].reshape(E, N, H))
        where = ((np.arange(E)[:, None] * V + xm.reshape(E, N))[..., None] * H + np.arange(H)).reshape(-1)
        d_ih = np.bincount(where, weights=flat.reshape(-1), minlength=E * V * H)
        grads["weight_ih_l0"] = d_ih.reshape(E, V, H).transpose(0, 2, 1).astype(self.dtype)
        grads["bias_ih_l0"] = flat.sum(axis=1)
        grads["bias_hh_l0"] = grads["bias_ih_l0"].copy()
        if truncation is None:
            grads["h0"] = carry
        if input_grads:
            grads["x"] = np.matmul(d_pre, p["weight_ih_l0"][:, None]).transpose(1, 0, 2, 3)
        return losses, grads, states[:, -1].copy()

    def nats(self, ids: Any, streams: int = 32, temperature: float = 1.0) -> np.ndarray:
        r"""Each member's mean cross-entropy, in nats per symbol, of ``ids[1:]``, each read after all before it in its stream.

        The text is cut into ``streams`` pieces (:func:`split_streams`) read
        side by side, each from the zero state, so every symbol but the first
        is predicted exactly once. With ``temperature`` :math:`\tau`, the
        probabilities are those of :math:`\operatorname{softmax}(z/\tau)`, the
        distribution a sample at that temperature is drawn from. Returns ``(E,)``.

        >>> model = CharRNN(VOCAB_SIZE, 4, seeds=[0])
        >>> round(float(model.nats(encode("abc abc abc"), streams=2)[0]), 2)
        4.66
        """
        x, y, mask = split_streams(ids, streams, self.vocab_size)
        tau = float(check_positive("temperature", temperature))
        total = np.zeros(self.size)
        for start, states in self.chunks(x):
            z = self.logits(states[1:])  # (t, E, B, V)
            if tau != 1.0:
                z /= tau
            stop = start + z.shape[0]
            top = z.max(axis=3, keepdims=True)
            z -= top
            target = np.broadcast_to(y[start:stop, None, :, None], z.shape[:3] + (1,))
            picked = np.take_along_axis(z, target, axis=3)[..., 0]
            np.exp(z, out=z)
            nll = np.log(z.sum(axis=3)) - picked  # log sum exp(z) - z_y, the largest logit taken out
            total += (nll * mask[start:stop, None, :]).sum(axis=(0, 2))
        return total / mask.sum()

    def chunks(self, inputs: Any, h0: Any = None, size: int = 256):
        """The forward pass over ``inputs`` (ids ``(T, B)`` or ``(T, E, B)``) in pieces of ``size`` steps.

        Yields ``(start, states)`` with ``states`` ``(t + 1, E, B, H)`` the
        states before and after steps ``start`` to ``start + t - 1``: the
        same numbers as :meth:`forward`, without holding every step at once.

        >>> model = CharRNN(VOCAB_SIZE, 4, seeds=[0])
        >>> x = encode("abcdefg")[:, None]
        >>> parts = [s[1:] for _, s in model.chunks(x, size=3)]
        >>> bool(np.array_equal(np.concatenate(parts), model.forward(x)[1:]))
        True
        """
        x = self._batch("inputs", inputs).transpose(1, 0, 2)
        size = check_positive_int("size", size)
        h = h0
        for start in range(0, x.shape[1], size):
            states = self._forward(x[:, start : start + size], h)
            h = states[:, -1]
            yield start, np.moveaxis(states, 0, 1)


def _readout_loss(
    out: np.ndarray, W_hy: np.ndarray, b_y: np.ndarray, y: np.ndarray, weight: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    r"""One member's weighted cross-entropy of targets ``y`` from states ``out`` ``(N, H)``, and its rates.

    :math:`z = W_{hy} h + b_y`, :math:`\ell = -\sum_n w_n \log \operatorname{softmax}(z_n)_{y_n}`;
    returns ``(loss, dL/dz (N, V), dL/dh (N, H))`` with
    :math:`\partial L/\partial z_n = w_n(\operatorname{softmax}(z_n) - \operatorname{onehot}(y_n))`,
    the readout :class:`CharRNN` uses.
    """
    z = out @ W_hy.T + b_y
    z -= z.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    total = z.sum(axis=1)
    rows = np.arange(z.shape[0])
    with np.errstate(divide="ignore"):
        nll = -np.log(z[rows, y] / total)
    loss = float(np.where(weight > 0, nll * weight, 0.0).sum())
    z *= (weight / total)[:, None]
    z[rows, y] -= weight
    return loss, z, z @ W_hy


class CharLSTM:
    r"""``E`` character-level LSTM language models, independent, their parameters stacked on axis 0.

    The gated counterpart of :class:`CharRNN`, with the same conventions: the
    one-hot input (column :math:`x_t` of :math:`W_{ih}`), the softmax readout
    :math:`z_t = W_{hy} h_t + b_y` and the cross-entropy loss, inputs and
    targets as ids ``(T, B)`` or ``(T, E, B)``. The recurrent layer is the
    LSTM of :mod:`rnnmem.lstm` (its equations, torch layout, gates
    ``i|f|g|o``); each member runs through an :class:`rnnmem.lstm.LSTM` whose
    weights are views of :attr:`params`, so its forward and exact backward
    pass are that class's. ``params``: ``weight_ih_l0`` ``(E, 4H, V)``,
    ``weight_hh_l0`` ``(E, 4H, H)``, ``bias_ih_l0`` and ``bias_hh_l0``
    ``(E, 4H)``, ``readout_weight`` ``(E, V, H)``, ``readout_bias``
    ``(E, V)``. Member :math:`e` draws from
    ``numpy.random.default_rng(seeds[e])`` what ``LSTM(V, H, seed=rng)``
    draws, then the readout from :math:`U(-1/\sqrt H, 1/\sqrt H)`, as
    :class:`CharRNN` does. The state is the pair ``(h, c)``, each ``(E, B, H)``.

    >>> model = CharLSTM(VOCAB_SIZE, 8, seeds=[0, 1])
    >>> model.params["weight_ih_l0"].shape, model.params["readout_weight"].shape
    ((2, 32, 97), (2, 97, 8))
    >>> x, y = teacher_forcing(encode("def f(x):"))
    >>> losses, grads, (h, c) = model.loss_and_grads(x[:, None], y[:, None])
    >>> [round(v, 2) for v in losses.tolist()], h.shape, c.shape
    ([4.8, 4.69], (2, 1, 8), (2, 1, 8))
    """

    kind = "lstm"

    def __init__(self, vocab_size: int, hidden_size: int, seeds: Any, *, dtype: Any = np.float64) -> None:
        from .lstm import LSTM

        self.vocab_size = check_positive_int("vocab_size", vocab_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
            seeds = [seeds]
        if not isinstance(seeds, (list, tuple, range, np.ndarray)) or len(seeds) == 0:
            raise ValueError(f"seeds must be a non-empty list of whole numbers >= 0, got {seeds!r}")
        for k, s in enumerate(seeds):
            check_seed(f"seeds[{k}]", s if s is not None else -1)
        self.seeds = tuple(int(s) for s in seeds)
        self.dtype = check_dtype("dtype", dtype)
        V, H, E = self.vocab_size, self.hidden_size, len(self.seeds)
        self.params = {n: np.empty((E,) + s, dtype=self.dtype) for n, s in self._shapes(V, H).items()}
        for e, seed in enumerate(self.seeds):
            rng = np.random.default_rng(seed)
            cell = LSTM(V, H, seed=rng)
            for name, attr in zip(_recurrent.PARAMETER_NAMES, _recurrent.WEIGHT_NAMES):
                self.params[name][e] = getattr(cell, attr)
            self.params["readout_weight"][e] = pytorch_uniform((V, H), H, rng)
            self.params["readout_bias"][e] = pytorch_uniform((V,), H, rng)
        self._cells: list = []

    @staticmethod
    def _shapes(V: int, H: int) -> dict[str, tuple[int, ...]]:
        return {
            "weight_ih_l0": (4 * H, V),
            "weight_hh_l0": (4 * H, H),
            "bias_ih_l0": (4 * H,),
            "bias_hh_l0": (4 * H,),
            "readout_weight": (V, H),
            "readout_bias": (V,),
        }

    @classmethod
    def from_params(cls, params: dict[str, Any], seeds: Any = None) -> CharLSTM:
        """A model holding copies of ``params`` (stacked as :attr:`params` is), e.g. a checkpoint's.

        >>> a = CharLSTM(5, 3, seeds=[4])
        >>> b = CharLSTM.from_params(a.params)
        >>> bool(np.array_equal(a.params["weight_hh_l0"], b.params["weight_hh_l0"]))
        True
        """
        if not isinstance(params, dict) or set(params) != set(PARAMETER_NAMES):
            got = sorted(params) if isinstance(params, dict) else type(params).__name__
            raise ValueError(f"params must be a dict with the keys {list(PARAMETER_NAMES)}, got {got}")
        W_hy = np.asarray(params["readout_weight"])
        if W_hy.ndim != 3:
            raise ValueError(f"params['readout_weight'] must have shape (E, V, H), got shape {W_hy.shape}")
        E, V, H = W_hy.shape
        new = object.__new__(cls)
        new.vocab_size, new.hidden_size = V, H
        new.seeds = tuple(range(E)) if seeds is None else tuple(seeds)
        new.dtype = np.dtype(W_hy.dtype)
        new.params, new._cells = {}, []
        for name, shape in cls._shapes(V, H).items():
            arr = np.array(params[name], dtype=new.dtype)
            if arr.shape != (E,) + shape:
                raise ValueError(f"params[{name!r}] must have shape {(E,) + shape}, got shape {arr.shape}")
            new.params[name] = arr
        return new

    @property
    def size(self) -> int:
        """The number of members, :math:`E`."""
        return len(self.seeds)

    def __repr__(self) -> str:
        return (
            f"CharLSTM(vocab_size={self.vocab_size}, hidden_size={self.hidden_size}, "
            f"members={self.size}, dtype={self.dtype.name})"
        )

    def copy_params(self) -> dict[str, np.ndarray]:
        """Copies of every parameter array (a checkpoint)."""
        return {k: v.copy() for k, v in self.params.items()}

    def _member(self, e: Any) -> int:
        if isinstance(e, bool) or not isinstance(e, (int, np.integer)) or not 0 <= int(e) < self.size:
            raise ValueError(f"e must be a member index from 0 to {self.size - 1}, got {e!r}")
        return int(e)

    def member(self, e: int = 0):
        """Member ``e``'s recurrent layer as an :class:`rnnmem.lstm.LSTM` reading one-hot vectors (a copy).

        >>> from rnnmem.lstm import LSTM
        >>> model = CharLSTM(VOCAB_SIZE, 4, seeds=[3])
        >>> ref = LSTM(VOCAB_SIZE, 4, seed=np.random.default_rng(3))
        >>> bool(np.array_equal(model.member(0).W_hh, ref.W_hh))
        True
        """
        from .lstm import LSTM

        e = self._member(e)
        layer = LSTM(self.vocab_size, self.hidden_size, dtype=self.dtype, seed=0)
        for name, attr in zip(_recurrent.PARAMETER_NAMES, _recurrent.WEIGHT_NAMES):
            setattr(layer, attr, self.params[name][e].copy())
        return layer

    def _cell(self, e: int):
        """Member ``e``'s LSTM, its weights views of :attr:`params` (set again on each call: Adam may replace nothing,
        but a checkpoint loaded into :attr:`params` would)."""
        from .lstm import LSTM

        while len(self._cells) < self.size:
            self._cells.append(LSTM(self.vocab_size, self.hidden_size, dtype=self.dtype, seed=0))
        cell = self._cells[e]
        for name, attr in zip(_recurrent.PARAMETER_NAMES, _recurrent.WEIGHT_NAMES):
            setattr(cell, attr, self.params[name][e])
        return cell

    def _batch(self, name: str, ids: Any) -> np.ndarray:
        """Ids as ``(T, E, B)``, as :class:`CharRNN` reads them."""
        arr = _ids(name, ids, self.vocab_size)
        if arr.ndim == 2:
            arr = np.broadcast_to(arr[:, None, :], (arr.shape[0], self.size, arr.shape[1]))
        if arr.ndim != 3 or arr.shape[1] != self.size or arr.shape[0] < 1 or arr.shape[2] < 1:
            raise ValueError(
                f"{name} must have shape (T, B) or (T, E={self.size}, B) with T, B >= 1, got shape {np.shape(ids)}"
            )
        return arr

    def _state(self, state0: Any, B: int) -> tuple[np.ndarray, np.ndarray]:
        shape = (self.size, B, self.hidden_size)
        if state0 is None:
            return np.zeros(shape, dtype=self.dtype), np.zeros(shape, dtype=self.dtype)
        if not isinstance(state0, tuple) or len(state0) != 2:
            raise ValueError(f"state0 must be None or a pair (h0, c0), each of shape (E, B, H) = {shape}")
        h, c = (np.asarray(check_finite("state0", s), dtype=self.dtype) for s in state0)
        if h.shape != shape or c.shape != shape:
            raise ValueError(f"state0 must be a pair (h0, c0), each of shape (E, B, H) = {shape}, got {h.shape}")
        return h, c

    def _onehot(self, ids: np.ndarray) -> np.ndarray:
        out = np.zeros(ids.shape + (self.vocab_size,), dtype=self.dtype)
        np.put_along_axis(out, ids[..., None], 1.0, axis=-1)
        return out

    def forward(self, inputs: Any, state0: Any = None) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """The hidden states ``(T, E, B, H)`` after each step over ``inputs``, and the last state ``(h, c)``.

        >>> model = CharLSTM(VOCAB_SIZE, 4, seeds=[0])
        >>> x = encode("ab")[:, None]
        >>> hs, (h, c) = model.forward(x)
        >>> out, _ = model.member(0).forward(np.eye(VOCAB_SIZE)[x])
        >>> hs.shape, bool(np.allclose(hs[:, 0], out, rtol=0, atol=1e-15))
        ((2, 1, 1, 4), True)
        """
        x = self._batch("inputs", inputs)
        T, E, B = x.shape
        h0, c0 = self._state(state0, B)
        hs = np.empty((T, E, B, self.hidden_size), dtype=self.dtype)
        h, c = np.empty_like(h0), np.empty_like(c0)
        for e in range(E):
            hs[:, e], (h[e], c[e]) = self._cell(e).forward(self._onehot(x[:, e]), (h0[e], c0[e]))
        return hs, (h, c)

    def loss_and_grads(
        self,
        inputs: Any,
        targets: Any,
        state0: Any = None,
        *,
        truncation: int | None = None,
        mask: Any = None,
        input_grads: bool = False,
    ) -> tuple[np.ndarray, dict[str, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        r"""Each member's mean cross-entropy of ``targets``, its gradients, and the last state ``(h, c)``.

        As :meth:`CharRNN.loss_and_grads`: ``mask`` counts only some steps,
        ``input_grads=True`` adds ``"x"`` ``(T, E, B, V)``, the gradient with
        respect to each one-hot input vector; ``grads`` also holds ``"h0"``
        and ``"c0"``. The backward pass is full BPTT over the window, the
        exact one of :class:`rnnmem.lstm.LSTM`: ``truncation`` must be
        ``None``.

        >>> model = CharLSTM(VOCAB_SIZE, 4, seeds=[0])
        >>> x, y = teacher_forcing(encode("hello"))
        >>> _, g, _ = model.loss_and_grads(x[:, None], y[:, None], input_grads=True)
        >>> g["x"].shape, g["weight_hh_l0"].shape
        ((4, 1, 1, 97), (1, 16, 4))
        """
        if truncation is not None:
            raise ValueError(f"truncation must be None for a CharLSTM (full BPTT over the window), got {truncation!r}")
        x = self._batch("inputs", inputs)
        y = self._batch("targets", targets)
        if y.shape != x.shape:
            raise ValueError(f"targets must have the shape of inputs, {x.shape}, got {y.shape}")
        T, E, B = x.shape
        H = self.hidden_size
        if mask is None:
            m = np.ones((T, E, B), dtype=np.float64)
        else:
            mb = np.asarray(mask)
            if mb.dtype != np.bool_ or mb.shape not in ((T, B), (T, E, B)):
                raise ValueError(f"mask must be booleans of shape (T, B) or (T, E, B) = {x.shape}, got {mb.shape}")
            m = np.broadcast_to(mb[:, None, :] if mb.ndim == 2 else mb, (T, E, B)).astype(np.float64)
        counts = m.sum(axis=(0, 2))
        if np.any(counts == 0):
            raise ValueError("mask must keep at least one step of every member, got a member with none")
        h0, c0 = self._state(state0, B)
        losses = np.empty(E)
        grads: dict[str, np.ndarray] = {k: np.empty_like(v) for k, v in self.params.items()}
        grads["h0"], grads["c0"] = np.empty_like(h0), np.empty_like(c0)
        if input_grads:
            grads["x"] = np.empty((T, E, B, self.vocab_size), dtype=self.dtype)
        h, c = np.empty_like(h0), np.empty_like(c0)
        p = self.params
        for e in range(E):
            cell = self._cell(e)
            out, (h[e], c[e]) = cell.forward(self._onehot(x[:, e]), (h0[e], c0[e]))
            flat = out.reshape(T * B, H)
            weight = m[:, e].reshape(T * B) / counts[e]
            loss, dz, dh = _readout_loss(
                flat, p["readout_weight"][e], p["readout_bias"][e], y[:, e].reshape(-1), weight
            )
            losses[e] = loss
            grads["readout_weight"][e] = dz.T @ flat
            grads["readout_bias"][e] = dz.sum(axis=0)
            g = cell.backward(dh.reshape(T, B, H))
            for name in _recurrent.PARAMETER_NAMES:
                grads[name][e] = g[name]
            grads["h0"][e], grads["c0"][e] = g["h0"], g["c0"]
            if input_grads:
                grads["x"][:, e] = g["x"]
        return losses, grads, (h, c)

    def nats(self, ids: Any, streams: int = 32, temperature: float = 1.0, size: int = 256) -> np.ndarray:
        r"""Each member's mean cross-entropy, in nats per symbol, of ``ids[1:]``, read as :meth:`CharRNN.nats` reads it.

        ``streams`` pieces (:func:`split_streams`) side by side from the zero
        state, run in pieces of ``size`` steps, the state carried; with
        ``temperature`` :math:`\tau`, the probabilities of
        :math:`\operatorname{softmax}(z/\tau)`. Returns ``(E,)``.

        >>> model = CharLSTM(VOCAB_SIZE, 4, seeds=[0])
        >>> round(float(model.nats(encode("abc abc abc"), streams=2)[0]), 2)
        4.73
        """
        x, y, mask = split_streams(ids, streams, self.vocab_size)
        size = check_positive_int("size", size)
        tau = float(check_positive("temperature", temperature))
        total = np.zeros(self.size)
        state = None
        for start in range(0, x.shape[0], size):
            stop = min(start + size, x.shape[0])
            hs, state = self.forward(x[start:stop], state)
            for e in range(self.size):
                flat = hs[:, e].reshape(-1, self.hidden_size)
                weight = mask[start:stop].reshape(-1).astype(np.float64)
                W_hy, b_y = self.params["readout_weight"][e] / tau, self.params["readout_bias"][e] / tau
                total[e] += _readout_loss(flat, W_hy, b_y, y[start:stop].reshape(-1), weight)[0]
        return total / mask.sum()


MODELS: dict[str, Any] = {"rnn": CharRNN, "lstm": CharLSTM}
"""The networks a :class:`Recipe` may name: ``"rnn"``, the tanh RNN; ``"lstm"``, the LSTM."""


def split_streams(ids: Any, streams: int, vocab_size: int = VOCAB_SIZE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(inputs, targets, mask)``, each ``(T, streams)``: ``ids[1:]`` cut into contiguous pieces read side by side.

    Piece :math:`s` predicts the symbols ``ids[a_s : a_{s+1}]`` with
    :math:`a_s = 1 + \\lfloor s (N - 1) / S \\rfloor`, reading ``ids[a_s - 1 : a_{s+1} - 1]``;
    a shorter piece is padded at the end, where ``mask`` is False. So every
    symbol but the first is a target exactly once.

    >>> x, y, m = split_streams(encode("abcdefg"), 2)
    >>> decode(x[:, 0]), decode(y[:, 0]), decode(x[:, 1]), decode(y[:, 1])
    ('abc', 'bcd', 'def', 'efg')
    """
    arr = _ids("ids", ids, check_positive_int("vocab_size", vocab_size))
    S = check_positive_int("streams", streams)
    if arr.ndim != 1 or arr.size < S + 1:
        raise ValueError(f"ids must be one sequence of more than streams = {S} ids, got shape {arr.shape}")
    N = arr.size
    starts = [1 + (s * (N - 1)) // S for s in range(S + 1)]
    T = max(b - a for a, b in zip(starts, starts[1:]))
    x = np.zeros((T, S), dtype=np.int64)
    y = np.zeros((T, S), dtype=np.int64)
    mask = np.zeros((T, S), dtype=bool)
    for s, (a, b) in enumerate(zip(starts, starts[1:])):
        x[: b - a, s] = arr[a - 1 : b - 1]
        y[: b - a, s] = arr[a:b]
        mask[: b - a, s] = True
    return x, y, mask


def clip_members(grads: dict[str, np.ndarray], max_norm: float) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Clip each member's gradient to global norm ``max_norm`` (:func:`rnnmem.clipping.clip_by_global_norm`, per member).

    The arrays carry the member on axis 0; member :math:`e`'s norm is taken
    over all its entries of all arrays. Returns ``(clipped grads, norms (E,)
    before clipping)``.

    >>> g = {"w": np.array([[3.0, 4.0], [0.3, 0.4]])}
    >>> clipped, norms = clip_members(g, 1.0)
    >>> clipped["w"].round(6).tolist(), norms.tolist()
    ([[0.6, 0.8], [0.3, 0.4]], [5.0, 0.5])
    """
    limit = float(check_positive("max_norm", max_norm))
    if not isinstance(grads, dict) or not grads:
        raise ValueError(f"grads must be a non-empty dict of arrays with the member on axis 0, got {grads!r}")
    squares = sum(np.square(g).reshape(g.shape[0], -1).sum(axis=1) for g in grads.values())
    norms = np.sqrt(np.asarray(squares, dtype=np.float64))
    scale = np.where(norms > limit, limit / np.where(norms > 0, norms, 1.0), 1.0)
    return {k: g * scale.reshape((-1,) + (1,) * (g.ndim - 1)).astype(g.dtype) for k, g in grads.items()}, norms


def _pieces(name: str, pieces: Any, size: int) -> np.ndarray:
    arr = np.asarray(pieces)
    if arr.ndim == 2:
        arr = np.broadcast_to(arr[None], (size,) + arr.shape)
    if arr.ndim != 3 or arr.shape[0] != size or arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must be ids of shape (B, M) or (E={size}, B, M), got shape {np.shape(pieces)}")
    return arr


def train(
    model: CharRNN | CharLSTM,
    pieces: Any,
    *,
    window: int,
    updates: int,
    lr: float,
    max_norm: float = 1.0,
    truncation: int | None = None,
    checkpoints: Sequence[int] = (),
    on_checkpoint: Callable[[int, Any], None] | None = None,
) -> np.ndarray:
    r"""Train ``model`` in place with Adam on windows of text; return each update's losses, ``(updates, E)``.

    ``pieces`` holds ``B`` long streams of ids side by side, ``(B, M)``
    shared by the members or ``(E, B, M)``. Update :math:`u` reads the window
    starting at :math:`p = (u \bmod n)\,W` of every stream, :math:`n = \lfloor (M - 1)/W \rfloor`
    windows of :math:`W` = ``window`` steps: inputs ``pieces[..., p:p+W]``,
    targets one symbol later (teacher forcing). The state is carried from one
    window to the next (its value, not its gradient) and starts from zero at
    :math:`p = 0`. Each member's gradient (truncated at ``truncation``, see
    :meth:`CharRNN.loss_and_grads`) is clipped to global norm ``max_norm``
    (:func:`clip_members`), then one :class:`rnnmem.train.Adam` step with
    ``lr`` updates every member. ``on_checkpoint(u, model)`` is called after
    ``u`` updates for each ``u`` in ``checkpoints`` (0: before training).
    A :class:`CharLSTM` trains the same way, its state the pair ``(h, c)``.

    >>> model = CharRNN(VOCAB_SIZE, 16, seeds=[0])
    >>> ids = encode("abcabcabc" * 40)
    >>> losses = train(model, ids[None], window=8, updates=60, lr=0.05)
    >>> round(float(losses[0, 0]), 1), bool(losses[-1, 0] < 0.1)
    (4.7, True)
    """
    if not isinstance(model, (CharRNN, CharLSTM)):
        raise ValueError(f"model must be a CharRNN or a CharLSTM, got {type(model).__name__}")
    W = check_positive_int("window", window)
    U = check_positive_int("updates", updates) if updates != 0 else 0
    arr = _pieces("pieces", pieces, model.size)
    n_windows = (arr.shape[2] - 1) // W
    if n_windows < 1:
        raise ValueError(f"pieces must hold more than window = {W} ids per stream, got {arr.shape[2]}")
    marks = sorted({int(c) for c in checkpoints})
    if marks and (marks[0] < 0 or marks[-1] > U):
        raise ValueError(f"checkpoints must be update counts from 0 to updates = {U}, got {list(checkpoints)!r}")
    opt = Adam(model.params, lr=lr)
    losses = np.empty((U, model.size))
    h: Any = None
    for u in range(U + 1):
        if u in marks and on_checkpoint is not None:
            on_checkpoint(u, model)
        if u == U:
            break
        p = (u % n_windows) * W
        if p == 0:
            h = None
        x = arr[:, :, p : p + W].transpose(2, 0, 1)
        y = arr[:, :, p + 1 : p + W + 1].transpose(2, 0, 1)
        loss, grads, h = model.loss_and_grads(x, y, h, truncation=truncation)
        grads.pop("h0", None)
        grads.pop("c0", None)
        clipped, _ = clip_members(grads, max_norm)
        opt.step(clipped)
        losses[u] = loss
    return losses


def sample(
    model: CharRNN | CharLSTM, prompt: str, length: int, *, temperature: float = 1.0, seed: Any = 0, member: int = 0
) -> str:
    r"""``length`` characters drawn from member ``member``, one at a time, after it has read ``prompt``.

    Each drawn character is read back as the next input: the model now
    continues its own text, where training always gave it the true one. Each
    draw is :func:`sample_next` with ``temperature``, from one generator
    seeded with ``seed``. Returns the drawn text (without the prompt).

    >>> model = CharRNN(VOCAB_SIZE, 16, seeds=[0])
    >>> _ = train(model, encode("abcabcabc" * 40)[None], window=8, updates=60, lr=0.05)
    >>> sample(model, "ab", 7, temperature=0.5)
    'cabcabc'

    A :class:`CharLSTM` member reads and draws the same way, one
    :func:`rnnmem.lstm.step` a character.
    """
    if isinstance(model, CharLSTM):
        return _sample_lstm(model, prompt, length, temperature=temperature, seed=seed, member=member)
    if not isinstance(model, CharRNN):
        raise ValueError(f"model must be a CharRNN or a CharLSTM, got {type(model).__name__}")
    e = model._member(member)
    n = check_positive_int("length", length)
    tau = float(check_positive("temperature", temperature))
    rng = check_seed("seed", seed)
    start = encode(prompt)
    if start.size == 0:
        raise ValueError("prompt must hold at least one character, got ''")
    p = {k: v[e] for k, v in model.params.items()}
    bias = p["bias_ih_l0"] + p["bias_hh_l0"]
    h = np.zeros(model.hidden_size, dtype=model.dtype)
    for i in start:
        h = np.tanh(p["weight_ih_l0"][:, i] + bias + p["weight_hh_l0"] @ h)
    out = []
    for _ in range(n):
        i = sample_next(p["readout_weight"] @ h + p["readout_bias"], tau, rng)
        out.append(i)
        h = np.tanh(p["weight_ih_l0"][:, i] + bias + p["weight_hh_l0"] @ h)
    return decode(np.array(out, dtype=np.int64))


def _sample_lstm(model: CharLSTM, prompt: str, length: int, *, temperature: float, seed: Any, member: int) -> str:
    """:func:`sample` for a :class:`CharLSTM`: each character one step of :func:`rnnmem.lstm.step`."""
    from .lstm import step

    e = model._member(member)
    n = check_positive_int("length", length)
    tau = float(check_positive("temperature", temperature))
    rng = check_seed("seed", seed)
    start = encode(prompt)
    if start.size == 0:
        raise ValueError("prompt must hold at least one character, got ''")
    weights = [model.params[k][e] for k in _recurrent.PARAMETER_NAMES]
    eye = np.eye(model.vocab_size, dtype=model.dtype)
    h = np.zeros(model.hidden_size, dtype=model.dtype)
    c = np.zeros_like(h)
    for i in start:
        s = step(eye[i], h, c, *weights)
        h, c = s.h, s.c
    out = []
    W_hy, b_y = model.params["readout_weight"][e], model.params["readout_bias"][e]
    for _ in range(n):
        i = sample_next(W_hy @ h + b_y, tau, rng)
        out.append(i)
        s = step(eye[i], h, c, *weights)
        h, c = s.h, s.c
    return decode(np.array(out, dtype=np.int64))


def connectivity(model: CharRNN | CharLSTM, ids: Any, max_lag: int, positions: int, *, warmup: int = 100) -> np.ndarray:
    r"""Connectivity by distance: :math:`\lVert \partial \ell_t / \partial x_{t-k}
    Vert_2` averaged over positions :math:`t` of ``ids``.

        :math:`\ell_t = -\log p(x_{t+1} \mid x_{\le t})` is the loss at position
        :math:`t`, :math:`x_{t-k}` the one-hot input vector :math:`k` steps
        back (:math:`k = 0`: the character read at :math:`t`), and the norm is
        that of the gradient vector over the vocabulary (Madsen 2019's
        connectivity, of the loss). The positions are ``positions`` evenly spaced
        :math:`t` of ``ids``; each is read in a window of ``warmup +
        max_lag + 1`` characters that ends at :math:`t`, from the zero state, so
        every distance up to ``max_lag`` has ``warmup`` characters of context
        before it. Returns ``(E, max_lag + 1)``: member :math:`e`'s mean at
        :math:`k = 0, \dots,` ``max_lag``.

        >>> model = CharRNN(VOCAB_SIZE, 8, seeds=[0, 1])
        >>> conn = connectivity(model, encode("abcdefghij" * 10), 5, 4, warmup=3)
        >>> conn.shape, bool((conn > 0).all())
        ((2, 6), True)
    """
    if not isinstance(model, (CharRNN, CharLSTM)):
        raise ValueError(f"model must be a CharRNN or a CharLSTM, got {type(model).__name__}")
    K = check_positive_int("max_lag", max_lag)
    P = check_positive_int("positions", positions)
    if isinstance(warmup, bool) or not isinstance(warmup, (int, np.integer)) or warmup < 0:
        raise ValueError(f"warmup must be a whole number >= 0, got {warmup!r}")
    arr = _ids("ids", ids, model.vocab_size)
    L = int(warmup) + K + 1
    if arr.ndim != 1 or arr.size < L + P:
        raise ValueError(f"ids must be one sequence of at least warmup + max_lag + 1 + positions = {L + P} ids")
    ends = np.linspace(L - 1, arr.size - 2, P).round().astype(np.int64)  # t, each with a next character
    total = np.zeros((model.size, K + 1))
    batch = 64
    for a in range(0, P, batch):
        t = ends[a : a + batch]
        B = t.size
        x = arr[t[None, :] + np.arange(-L + 1, 1)[:, None]]  # (L, B), row L - 1 is x_t
        y = arr[t[None, :] + np.arange(-L + 2, 2)[:, None]]
        mask = np.zeros((L, B), dtype=bool)
        mask[-1] = True
        _, grads, _ = model.loss_and_grads(x, y, mask=mask, input_grads=True)
        g = grads["x"][L - 1 - np.arange(K + 1)] * B  # (K + 1, E, B, V): the mean over B undone
        total += np.sqrt(np.square(g).sum(axis=3)).sum(axis=2).T
    return total / P


# --------------------------------------------------------------------------- the chapter's run


@dataclass(frozen=True)
class Recipe:
    """How the chapter trains its language model: sizes, optimizer, budget and checkpoints.

    ``hidden`` units; ``window`` steps per update (the truncation: the
    gradient is cut between windows, the state carried); ``batch`` streams
    read side by side; Adam at ``lr`` with each member's gradient clipped to
    global norm ``max_norm``; ``updates`` updates; the model is read at
    ``checkpoints`` (update counts, 0 the untrained model) and evaluated on
    the validation text in ``eval_streams`` streams; ``seed`` draws the
    weights; ``dtype`` is the arithmetic; ``model`` is the network, one of
    :data:`MODELS`: ``"rnn"`` (:class:`CharRNN`) or ``"lstm"``
    (:class:`CharLSTM`), both read and trained the same way.
    """

    hidden: int = 128
    window: int = 64
    batch: int = 32
    lr: float = 0.005
    max_norm: float = 1.0
    updates: int = 1000
    checkpoints: tuple[int, ...] = (0, 50, 100, 200, 300, 500, 1000)
    seed: int = 0
    eval_streams: int = 32
    dtype: str = "float64"
    model: str = "rnn"

    def __post_init__(self) -> None:
        for name in ("hidden", "window", "batch", "updates", "eval_streams"):
            check_positive_int(name, getattr(self, name))
        check_positive("lr", self.lr)
        check_positive("max_norm", self.max_norm)
        check_seed("seed", self.seed)
        check_choice("dtype", self.dtype, ("float32", "float64"))
        check_choice("model", self.model, tuple(MODELS))
        marks = self.checkpoints
        if not isinstance(marks, tuple) or not marks or list(marks) != sorted(set(marks)):
            raise ValueError(f"checkpoints must be a non-empty increasing tuple of update counts, got {marks!r}")
        if marks[0] < 0 or marks[-1] > self.updates:
            raise ValueError(f"checkpoints must lie between 0 and updates = {self.updates}, got {marks!r}")


RECIPE = Recipe()
"""The chapter's recipe."""


@dataclass(frozen=True)
class RunResult:
    """What a :class:`TextRun` measured.

    ``checkpoints`` are update counts; ``valid_nats[k]`` is the validation
    text's mean cross-entropy (nats per symbol) after ``checkpoints[k]``
    updates, and ``params[k]`` the parameters then; ``train_losses[u]`` is
    the loss of update ``u`` on its window (before the update). ``chars``
    counts the symbols of the training and validation text, ``unknown`` those
    read as :data:`UNKNOWN`.
    """

    digest: str
    checkpoints: tuple[int, ...]
    valid_nats: tuple[float, ...]
    train_losses: tuple[float, ...]
    params: tuple[dict, ...] = field(repr=False)
    chars: dict = field(default_factory=dict)
    unknown: dict = field(default_factory=dict)
    kind: str = "rnn"

    def model(self, step: int) -> CharRNN | CharLSTM:
        """The model after ``step`` updates (one of :attr:`checkpoints`), of the run's ``kind`` (:data:`MODELS`)."""
        if step not in self.checkpoints:
            raise ValueError(f"step must be one of the checkpoints {list(self.checkpoints)}, got {step!r}")
        return MODELS[self.kind].from_params(self.params[self.checkpoints.index(step)])

    def perplexity(self, step: int) -> float:
        """The validation perplexity after ``step`` updates (one of :attr:`checkpoints`)."""
        if step not in self.checkpoints:
            raise ValueError(f"step must be one of the checkpoints {list(self.checkpoints)}, got {step!r}")
        return math.exp(self.valid_nats[self.checkpoints.index(step)])


@dataclass(frozen=True)
class TextRun:
    """The chapter's language model trained on the standard library: a pure value, to key a cache.

    Its fields are the :class:`Recipe` and the modules; ``digest``, the
    corpus's (:attr:`Corpus.digest`), is computed when the run is made, so a
    run made under another interpreter, whose sources differ, is another
    value with another ``repr``. :meth:`execute` reads the corpus again,
    refuses it if its digest changed, and trains.

    >>> run = TextRun(Recipe(hidden=8, window=16, batch=2, updates=3, checkpoints=(0, 3)), ("textwrap",), ("colorsys",))
    >>> result = run.execute()
    >>> result.checkpoints, len(result.train_losses), result.digest == run.digest
    ((0, 3), 3, True)
    """

    recipe: Recipe = RECIPE
    train_modules: tuple[str, ...] = TRAIN_MODULES
    valid_modules: tuple[str, ...] = VALID_MODULES
    digest: str = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.recipe, Recipe):
            raise ValueError(f"recipe must be a Recipe, got {self.recipe!r}")
        object.__setattr__(self, "train_modules", _modules("train_modules", self.train_modules))
        object.__setattr__(self, "valid_modules", _modules("valid_modules", self.valid_modules))
        object.__setattr__(self, "digest", stdlib_corpus(self.train_modules, self.valid_modules).digest)

    @property
    def cost(self) -> float:
        """A relative cost: symbols read in training."""
        r = self.recipe
        return float(r.updates * r.window * r.batch * r.hidden * (3 if r.model == "lstm" else 1))

    def execute(self) -> RunResult:
        """Train the run; a pure function of the run."""
        corpus = stdlib_corpus(self.train_modules, self.valid_modules)
        if corpus.digest != self.digest:
            raise ValueError(
                f"the standard library's sources changed since the run was made: digest {corpus.digest}, "
                f"the run's {self.digest}"
            )
        r = self.recipe
        train_ids, valid_ids = encode(corpus.train), encode(corpus.valid)
        M = (train_ids.size - 1) // r.batch
        pieces = np.stack([train_ids[b * M : (b + 1) * M + 1] for b in range(r.batch)])
        model = MODELS[r.model](VOCAB_SIZE, r.hidden, seeds=[r.seed], dtype=np.dtype(r.dtype))
        nats: list[float] = []
        params: list[dict] = []

        def checkpoint(u: int, m: Any) -> None:
            nats.append(float(m.nats(valid_ids, r.eval_streams)[0]))
            params.append(m.copy_params())

        losses = train(
            model,
            pieces,
            window=r.window,
            updates=r.updates,
            lr=r.lr,
            max_norm=r.max_norm,
            checkpoints=r.checkpoints,
            on_checkpoint=checkpoint,
        )
        return RunResult(
            digest=self.digest,
            checkpoints=r.checkpoints,
            valid_nats=tuple(nats),
            train_losses=tuple(float(v) for v in losses[:, 0]),
            params=tuple(params),
            chars={"train": int(train_ids.size), "valid": int(valid_ids.size)},
            unknown={"train": int((train_ids == UNKNOWN).sum()), "valid": int((valid_ids == UNKNOWN).sum())},
            kind=r.model,
        )

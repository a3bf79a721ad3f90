"""The Kneser–Ney baseline of "Real text: a character-level model": the counting model the network is judged by.

The model is :class:`rnnmem.ngram.KneserNey`, its order chosen by
:func:`rnnmem.ngram.choose_order` on the last :data:`rnnmem.ngram.HELD_OUT_SHARE`
of the training text among :data:`rnnmem.ngram.ORDERS` (a design fixed in the
core before any order was scored), then fitted on the whole training text
and scored on the validation text. The network's numbers come from the
chapter's own run (:func:`rnnmem.site.textsamples.lm`, the run every table
of the page reads), so the tables of the page can never disagree.

Every comparison the page words is computed here: the network against the
Kneser–Ney model file by file on the validation files (the Wilcoxon
signed-rank test on the paired per-file losses, :func:`rnnmem.stats.wilcoxon_signed_rank`),
and the spelling of their samples (Fisher's exact test on the counts of known
words, :func:`rnnmem.verdicts.compare`).
"""

from __future__ import annotations

import math

from rnnmem import charlm, ngram, stats, verdicts
from rnnmem.checks import NonNegativeInt, Positive

from .. import textsamples
from ..registry import figure, table
from ..tables import Table

__all__ = ["real_text_ngram_orders", "real_text_ngram", "real_text_ngram_samples"]


@table()
def real_text_ngram_orders():
    """The held-out tail of the training text under each order of :data:`rnnmem.ngram.ORDERS`: the choice of order.

    Each order is fitted on the training text without its last
    :data:`rnnmem.ngram.HELD_OUT_SHARE` and scored on that tail. Values:
    ``orders``; ``nats`` and ``perplexity`` by order; ``order``, the chosen
    one, ``best``, its held-out perplexity, and ``at_edge`` (whether it is
    the largest order tried); ``fallback``, the orders of the chosen model
    whose discounts are :data:`rnnmem.ngram.FALLBACK_DISCOUNTS`, and
    ``fallback_sentence``, the same in words; ``share``;
    ``fitted`` and ``held_out``, the symbols on each side of the cut.
    """
    choice = textsamples.kneser_ney()
    orders = sorted(choice.held_out_nats)
    nats = choice.held_out_nats
    rows = [
        [f"{k}" + (" (chosen)" if k == choice.order else ""), f"{nats[k]:.3f}", f"{math.exp(nats[k]):.2f}"]
        for k in orders
    ]
    total = int(charlm.encode(textsamples.corpus().train).size)
    held_out = total - choice.split
    tab = Table(
        ["order \\(n\\)", "held-out nats per character", "held-out perplexity"],
        rows,
        align=["left", "right", "right"],
        notes=(
            f"Fitted on the first {choice.split:,} characters of the training text, scored on its last "
            f"{held_out:,} ({ngram.HELD_OUT_SHARE:.0%}); the validation text plays no part."
        ),
    )
    fallback = [k for k, d in choice.model.discounts.items() if d == ngram.FALLBACK_DISCOUNTS]
    return tab, {
        "orders": orders,
        "fallback": fallback,
        "fallback_sentence": _fallback_sentence(fallback, choice.order),
        "nats": nats,
        "perplexity": {k: math.exp(v) for k, v in nats.items()},
        "order": choice.order,
        "best": math.exp(nats[choice.order]),
        "at_edge": choice.order == max(orders),
        "share": ngram.HELD_OUT_SHARE,
        "fitted": choice.split,
        "held_out": held_out,
    }


def _fallback_sentence(fallback: list[int], order: int) -> str:
    """Which orders of the chosen model take :data:`rnnmem.ngram.FALLBACK_DISCOUNTS`, in words."""
    fixed = ", ".join(f"{d:g}" for d in ngram.FALLBACK_DISCOUNTS)
    if not fallback:
        return f"every order of the chosen model, 1 to {order}, has discounts from the formula"
    names = textsamples.join([str(k) for k in fallback])
    which = f"order {names}" if len(fallback) == 1 else f"orders {names}"
    return (
        f"in the chosen model the formula fails for {which} of {order}, whose count-of-counts include a zero, "
        f"and {'that order takes' if len(fallback) == 1 else 'those orders take'} the fixed discounts {fixed}"
    )


def _per_file(
    model: charlm.CharRNN | charlm.CharLSTM, kn: ngram.KneserNey, modules: tuple[str, ...]
) -> dict[str, tuple[float, float]]:
    """Each validation file's mean nats per character, ``(network, Kneser–Ney)``: both predict ``file[1:]`` from its start."""
    out = {}
    for name in modules:
        ids = charlm.encode(charlm.module_path(name).read_text(encoding="utf-8"))
        out[name] = (float(model.nats(ids, streams=1)[0]), kn.nats(ids))
    return out


def _versus(per_file: dict[str, tuple[float, float]]) -> dict:
    """The network against the Kneser–Ney model file by file: who is lower where, and the signed-rank test."""
    diffs = [rnn - kn for rnn, kn in per_file.values()]
    test = stats.wilcoxon_signed_rank(diffs)
    kn_lower = sum(d > 0 for d in diffs)
    n = len(diffs)
    p = verdicts.p_text(test.p)
    if test.p < verdicts.ALPHA:
        lower = "the Kneser–Ney model" if test.r_plus > n * (n + 1) / 4 else "the network"
        verdict = f"{lower} has the lower loss"
    else:
        verdict = "no detectable difference between the two"
    sentence = (
        f"the Kneser–Ney model's loss is the lower on {kn_lower} of the {n} validation files, the network's on "
        f"{n - kn_lower}: {verdict} (*p* = {p}, Wilcoxon's signed-rank test on the paired per-file losses)"
    )
    return {"kn_lower": kn_lower, "files": n, "p": p, "verdict": verdict, "sentence": sentence}


@table()
def real_text_ngram():
    """The validation text's perplexity under the uniform guess, the add-one counts, the Kneser–Ney model and the network.

    The first three rows and the network's are those of the page's first
    table (the same counts, the same run, :mod:`rnnmem.site.textsamples`); the Kneser–Ney model is the order chosen on held-out training text.
    Values: ``uniform``, ``unigram``, ``bigram``, ``kn``, ``rnn``
    (perplexities) and ``nats``; ``order``; ``updates``; ``ratio``, the
    network's perplexity over the Kneser–Ney model's; ``rnn_behind``,
    whether the network's is the higher; ``versus``, the file-by-file
    comparison (``kn_lower``, ``files``, ``p``, ``verdict``, ``sentence``);
    ``per_file`` by module, ``(network, Kneser–Ney)`` nats.
    """
    choice, corpus, result = textsamples.kneser_ney(), textsamples.corpus(), textsamples.lm()
    nats = textsamples.baselines(corpus)
    nats["kn"] = choice.model.nats(charlm.encode(corpus.valid))
    nats["rnn"] = result.valid_nats[-1]
    updates = result.checkpoints[-1]
    ppl = {k: math.exp(v) for k, v in nats.items()}
    names = {
        "uniform": "uniform guess, \\(1/V\\)",
        "unigram": "unigram counts, add-one",
        "bigram": "bigram counts, add-one",
        "kn": f"{choice.order}-gram, modified Kneser–Ney",
        "rnn": f"tanh RNN, {updates:,} updates",
    }
    rows = [[names[k], f"{nats[k]:.3f}", f"{nats[k] / math.log(2):.2f}", f"{ppl[k]:.2f}"] for k in names]
    per_file = _per_file(result.model(result.checkpoints[-1]), choice.model, corpus.valid_modules)
    tab = Table(
        ["model", "nats per character", "bits per character", "perplexity"],
        rows,
        align=["left", "right", "right", "right"],
        notes=(
            f"The validation text of the first table, {result.chars['valid']:,} characters; every model "
            "counted or trained on the same training text."
        ),
    )
    return tab, {
        **ppl,
        "nats": nats,
        "order": choice.order,
        "updates": updates,
        "ratio": ppl["rnn"] / ppl["kn"],
        "rnn_behind": ppl["rnn"] > ppl["kn"],
        "versus": _versus(per_file),
        "per_file": per_file,
    }


def _spelling(text: str, reference: str) -> tuple[int, int]:
    """``(known, words)``: the words of three letters or more in ``text``, and how many of them ``reference`` uses."""
    vocabulary = set(charlm.words(reference))
    found = [w for w in charlm.words(text) if len(w) >= 3]
    return sum(w in vocabulary for w in found), len(found)


@figure()
def real_text_ngram_samples(temperature: Positive = 1.0, prompt: str = "\n", seed: NonNegativeInt = 0):
    """A sample of the trained network beside one of the Kneser–Ney model, drawn alike, with how many words each spells.

    Both draw :data:`rnnmem.site.builders.real_text.SAMPLE_CHARS` characters
    after ``prompt`` at ``temperature`` with ``seed``, each character by
    :func:`rnnmem.charlm.sample_next`; the boxes show their first lines.
    Values: ``known`` and ``words`` by model (``rnn``, ``kn``), the words of
    three letters or more and how many the training text uses, ``share`` by
    model; ``test``, Fisher's exact test of the two shares
    (``kind``, ``p``, ``differ``, ``verdict``) and ``sentence``, the
    comparison in words; ``order``; ``updates``;
    ``samples``, the shown text; ``temperature``; ``chars``.
    """
    choice, corpus, result = textsamples.kneser_ney(), textsamples.corpus(), textsamples.lm()
    final = result.checkpoints[-1]
    texts = {
        "rnn": charlm.sample(result.model(final), prompt, textsamples.SAMPLE_CHARS, temperature=temperature, seed=seed),
        "kn": choice.model.sample(textsamples.SAMPLE_CHARS, prompt=prompt, seed=seed, temperature=temperature),
    }
    counts = {k: _spelling(t, corpus.train) for k, t in texts.items()}
    v = verdicts.compare(counts["rnn"][0], counts["rnn"][1], counts["kn"][0], counts["kn"][1])
    titles = [
        f"tanh RNN after {final:,} updates · validation perplexity {result.perplexity(final):.1f}",
        f"{choice.order}-gram, modified Kneser–Ney · validation perplexity "
        f"{math.exp(choice.model.nats(charlm.encode(corpus.valid))):.1f}",
    ]
    fig = textsamples.samples_figure(titles, [texts["rnn"], texts["kn"]])
    share = {k: c[0] / c[1] if c[1] else float("nan") for k, c in counts.items()}
    said = {
        "more": "the network spells a larger share of its words as the training text does than the Kneser–Ney model",
        "fewer": "the Kneser–Ney model spells a larger share of its words as the training text does than the network",
        "null": f"the two shares show {v.verdict}",
        "floor": "the shares are too near zero to compare",
        "ceiling": "the shares are too near one to compare",
    }[v.kind]
    sentence = (
        f"of their words of three letters or more, the network's sample spells {counts['rnn'][0]} of "
        f"{counts['rnn'][1]} ({share['rnn']:.0%}) as the training text does and the Kneser–Ney model's "
        f"{counts['kn'][0]} of {counts['kn'][1]} ({share['kn']:.0%}): {said} (*p* = {verdicts.p_text(v.p)}, "
        "Fisher's exact test)"
    )
    return fig, {
        "known": {k: c[0] for k, c in counts.items()},
        "words": {k: c[1] for k, c in counts.items()},
        "share": share,
        "test": {"kind": v.kind, "p": verdicts.p_text(v.p), "differ": v.differ, "verdict": v.verdict},
        "sentence": sentence,
        "order": choice.order,
        "updates": final,
        "samples": {k: "\n".join(t.split("\n")[: textsamples.LINES]) for k, t in texts.items()},
        "temperature": temperature,
        "chars": textsamples.SAMPLE_CHARS,
    }

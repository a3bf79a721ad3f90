"""rnnmem.planted: the planted pairs, the share of them truncation credits, the cells and how they are read."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnmem import charlm, planted

TEXT = charlm.encode("def parse(self, text):\n    return [w for w in text.split() if w]\n" * 4)


@given(st.integers(1, 12), st.integers(0, 6), st.integers(0, 2**16))
@settings(max_examples=60, deadline=None)
def test_every_pair_holds_its_digit_at_the_distance_and_the_text_is_kept(distance, gap, seed):
    p = planted.plant(TEXT, distance, seed, gap=gap)
    ids = p.ids
    assert len(p.recalls) == len(p.digits) > 0
    for r, digit in zip(p.recalls, p.digits):
        assert ids[r] == planted.RECALL and ids[r + 1] == digit and int(digit) in planted.DIGITS
        assert ids[r - distance] == digit and ids[r - distance - 1] == planted.CLUE
        between = ids[r - distance + 1 : r]
        assert len(between) == distance - 1 and not np.isin(between, [planted.CLUE, planted.RECALL]).any()
    # without the pairs, the stream is the start of the text, in order
    text_only = ids[~np.isin(ids, [planted.CLUE, planted.RECALL])]
    keep = np.ones(ids.size, dtype=bool)
    keep[np.isin(ids, [planted.CLUE, planted.RECALL])] = False
    keep[p.recalls + 1] = False
    keep[p.recalls - distance] = False
    assert np.array_equal(ids[keep], TEXT[: keep.sum()])
    assert text_only.size == keep.sum() + 2 * len(p.recalls)
    # between a recall and the next clue, at most `gap` characters of text
    clues = np.flatnonzero(ids == planted.CLUE)
    assert clues[0] <= gap and np.all(clues[1:] - (p.recalls[:-1] + 2) <= gap)


def test_plant_refuses_bad_arguments():
    with pytest.raises(ValueError, match="distance must be a whole number >= 1"):
        planted.plant(TEXT, 0, 0)
    with pytest.raises(ValueError, match="to plant one pair"):
        planted.plant(TEXT[:3], 10, 0)
    with pytest.raises(ValueError, match="text must be one non-empty sequence of ids"):
        planted.plant(np.array([]), 2, 0)


@pytest.mark.parametrize("k", [1, 2, 4, 8, 32])
@pytest.mark.parametrize("n", [1, 2, 3, 8, 16])
def test_the_credited_share_counts_the_recall_steps_whose_chunk_holds_the_clue(k, n):
    in_chunk = [(t - n) // k == t // k for t in range(n, n + 64 * k)]
    assert planted.credited_share(k, n) == pytest.approx(np.mean(in_chunk))


def test_a_recall_loss_reaches_the_digit_only_within_its_chunk():
    """The gradient of one recall step's loss with respect to the digit's one-hot input, under truncation k."""
    held = planted.plant(TEXT, 3, seed=1)
    model = charlm.CharRNN(planted.PLANTED_VOCAB, 6, seeds=[0])
    T = 40
    x, y = held.ids[:T], held.ids[1 : T + 1]
    for k in (2, 4, 8):
        for r in held.recalls[held.recalls < T]:
            mask = np.zeros((T, 1), dtype=bool)
            mask[r] = True
            _, g, _ = model.loss_and_grads(x[:, None], y[:, None], mask=mask, truncation=k, input_grads=True)
            reaches = bool(np.abs(g["x"][r - 3, 0, 0]).sum() > 0)
            assert reaches == ((r - 3) // k == r // k), (k, r)


def test_the_design_is_the_one_the_chapter_states():
    assert planted.GRID == tuple((k, n) for k in planted.TRUNCATIONS for n in planted.DISTANCES)
    assert planted.FIRST_GRID == tuple((k, n) for k in planted.FIRST_TRUNCATIONS for n in planted.FIRST_DISTANCES)
    assert not set(planted.FOLLOW_UP) & set(planted.FIRST_GRID)
    assert planted.SEEDS == tuple(range(20)) and planted.DESIGN.threshold == planted.FIRST_DESIGN.threshold == 0.9
    # the design differs from the first in its budget alone
    assert planted.DESIGN.updates == 1500 and planted.FIRST_DESIGN.updates == 300
    assert dataclasses.replace(planted.FIRST_DESIGN, updates=planted.DESIGN.updates) == planted.DESIGN
    assert planted.Cell(2, 1).design == planted.DESIGN
    for design, grid in (
        (planted.DESIGN, planted.GRID),
        (planted.FIRST_DESIGN, planted.FIRST_GRID + planted.FOLLOW_UP),
    ):
        for k, _ in grid:
            assert design.window % k == 0
    # the first grid: every truncation but the whole window has a distance at k/2 and one at 2k; the window, at k/2
    for k in planted.FIRST_TRUNCATIONS[:-1]:
        assert {k // 2, 2 * k} <= set(planted.FIRST_DISTANCES)
    assert planted.FIRST_TRUNCATIONS[-1] == planted.DESIGN.window and 16 in planted.FIRST_DISTANCES
    # the grid holds distance 2; each distance is compared under the longest truncation that credits none of
    # its pairs and the whole window, which credits some
    assert 2 in planted.DISTANCES and planted.TRUNCATIONS[-1] == planted.DESIGN.window
    assert set(planted.CONTRASTS) == set(planted.DISTANCES)
    for n, (short, long) in planted.CONTRASTS.items():
        assert planted.credited_share(short, n) == 0 < planted.credited_share(long, n)
        assert all(planted.credited_share(k, n) > 0 for k in planted.TRUNCATIONS if k > short)


def test_chance_is_the_share_of_the_most_frequent_digit():
    digits = np.array(planted.DIGITS)
    assert planted.most_frequent_share(digits) == pytest.approx(0.1)
    assert planted.most_frequent_share(np.concatenate([digits, digits[:1]])) == pytest.approx(2 / 11)
    with pytest.raises(ValueError, match="digits must be one non-empty sequence of ids"):
        planted.most_frequent_share(np.array([], dtype=np.int64))


def test_the_held_out_recall_steps_read_RECALL_and_have_their_clue_in_their_stream():
    held = planted.plant(charlm.encode(charlm.stdlib_corpus(["colorsys"], ["bisect"]).valid), 5, planted.EVAL_SEED)
    x, piece, step, target = planted._recall_steps(held, 7)
    assert len(step) > 0 and (x[step, piece] == planted.RECALL).all()
    assert (x[step - 5, piece] == target).all() and (x[step - 6, piece] == planted.CLUE).all()
    # every recall whose clue is in its stream is counted: the others straddle a stream's start
    assert len(held.recalls) - len(step) <= 7


def test_a_cell_carries_the_corpus_digest_and_measures_each_member():
    design = dataclasses.replace(planted.DESIGN, hidden=6, updates=6, eval_symbols=2000, eval_streams=4)
    cell = planted.Cell(4, 2, seeds=(0, 1, 2), design=design, train_modules=("colorsys",), valid_modules=("bisect",))
    assert cell.digest == charlm.stdlib_corpus(["colorsys"], ["bisect"]).digest and cell.digest in repr(cell)
    result = cell.execute()
    assert result.n == 3 and len(result.accuracy) == 3 and len(result.final_loss) == 3
    assert result.recalls > 0 and all(0 <= a <= 1 for a in result.accuracy)
    assert result.successes == sum(a >= design.threshold for a in result.accuracy)
    held = planted.plant(
        charlm.encode(charlm.stdlib_corpus(["colorsys"], ["bisect"]).valid)[:2000], 2, planted.EVAL_SEED
    )
    _, _, _, target = planted._recall_steps(held, design.eval_streams)
    assert result.chance == planted.most_frequent_share(target) and result.recalls == target.size
    assert cell.execute() == result  # a pure function of the cell
    with pytest.raises(ValueError, match="truncation must divide the design's window"):
        planted.Cell(3, 2, design=design)
    with pytest.raises(ValueError, match="seeds must be a non-empty tuple"):
        planted.Cell(4, 2, seeds=())


def test_a_member_that_reads_the_clue_succeeds():
    """An oracle: a network set by hand to copy the digit it read one step back scores full recall accuracy."""
    held = planted.plant(charlm.encode(charlm.stdlib_corpus(["colorsys"], ["bisect"]).valid), 1, planted.EVAL_SEED)
    V, digits = planted.PLANTED_VOCAB, list(planted.DIGITS)
    H = 2 * len(digits)
    model = charlm.CharRNN(V, H, seeds=[0])
    p = {k: np.zeros_like(v) for k, v in model.params.items()}
    for j, d in enumerate(digits):
        p["weight_ih_l0"][0, j, d] = 3.0  # unit j: "I just read digit j"
        p["weight_hh_l0"][0, len(digits) + j, j] = 3.0  # unit 10 + j: "I read digit j one step ago"
        p["readout_weight"][0, d, len(digits) + j] = 10.0
    model = charlm.CharRNN.from_params(p)
    accuracy, recalls, chance = planted._recall_accuracy(model, held, planted.DESIGN)
    assert recalls > 0 and accuracy[0] == 1.0 and 0.1 <= chance < 1.0

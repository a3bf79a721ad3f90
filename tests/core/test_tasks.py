"""The lab's tasks: what a sequence holds, determinism from a seed, and bad arguments."""

import numpy as np
import pytest

from rnnmem.tasks import TASKS, adding, make_task, recall


def tokens_of(inputs):
    """One-hot rows back to token indices, after checking they are one-hot."""
    assert set(np.unique(inputs)) <= {0.0, 1.0}
    assert (inputs.sum(axis=2) == 1).all()
    return inputs.argmax(axis=2)


def test_recall_sequence_is_token_distractors_query():
    task = recall(lag=7, alphabet=5)
    batch = task.sample(300, seed=3)
    assert batch.inputs.shape == (9, 300, 7) and batch.targets.shape == (300,)
    tokens = tokens_of(batch.inputs)
    assert (tokens[0] == batch.targets).all()
    assert (tokens[1:8] < 5).all()  # distractors from the alphabet
    assert (tokens[-1] == 6).all()  # the query marker
    assert set(np.unique(batch.targets)) == set(range(5))
    assert task.chance == pytest.approx(1 / 5) and task.output_size == 5 and task.kind == "classification"
    # distractors are drawn independently of the first token: they repeat it about 1/K of the time
    assert np.mean(tokens[1:8] == tokens[0]) == pytest.approx(1 / 5, abs=0.03)


def test_blank_recall_has_only_blanks_between():
    batch = recall(lag=4, alphabet=3, distractors="blank").sample(50, seed=0)
    tokens = tokens_of(batch.inputs)
    assert (tokens[1:5] == 3).all() and (tokens[-1] == 4).all() and (tokens[0] == batch.targets).all()
    assert make_task("blank-recall", lag=4, alphabet=3).name == "blank-recall"


def test_adding_marks_one_step_in_each_half_and_sums_them():
    length = 11
    batch = adding(length).sample(500, seed=1)
    values, markers = batch.inputs[:, :, 0], batch.inputs[:, :, 1]
    assert ((values >= 0) & (values < 1)).all()
    assert (markers.sum(axis=0) == 2).all()
    assert (markers[: length // 2].sum(axis=0) == 1).all()
    np.testing.assert_allclose(batch.targets, (values * markers).sum(axis=0))


def test_adding_baseline_is_the_error_of_the_best_constant():
    task = adding(20)
    y = task.sample(200_000, seed=2).targets
    assert task.baseline_mse == pytest.approx(1 / 6)
    assert np.mean((y - 1.0) ** 2) == pytest.approx(task.baseline_mse, rel=0.01)
    assert y.mean() == pytest.approx(1.0, abs=0.01)


@pytest.mark.parametrize("name", TASKS)
def test_same_seed_same_batch_other_seed_other_batch(name):
    task = make_task(name, lag=6)
    a, b, c = task.sample(20, seed=4), task.sample(20, seed=4), task.sample(20, seed=5)
    assert np.array_equal(a.inputs, b.inputs) and np.array_equal(a.targets, b.targets)
    assert not np.array_equal(a.inputs, c.inputs)
    generator = np.random.default_rng(4)
    first, second = task.sample(20, seed=generator), task.sample(20, seed=generator)
    assert np.array_equal(first.inputs, a.inputs) and not np.array_equal(second.inputs, a.inputs)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: recall(lag=0), "lag must be a whole number >= 1, got 0"),
        (lambda: recall(lag=2.5), "lag must be a whole number >= 1, got 2.5"),  # type: ignore[arg-type]  # a bad value on purpose
        (lambda: recall(lag=3, alphabet=1), "alphabet must be a whole number >= 2 (tokens to tell apart), got 1"),
        (lambda: recall(lag=3, distractors="noise"), "distractors must be one of 'random', 'blank', got 'noise'"),
        (lambda: adding(1), "length must be a whole number >= 2 (one marked step in each half), got 1"),
        (lambda: make_task("copy", 3), "task must be one of 'recall', 'blank-recall', 'adding', got 'copy'"),
        (lambda: recall(lag=3).sample(0), "n must be a whole number >= 1, got 0"),
        (
            lambda: recall(lag=3).sample(4, seed=-1),
            "seed must be a whole number >= 0, None or a numpy.random.Generator, got -1",
        ),
    ],
)
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == message

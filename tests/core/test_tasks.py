"""The lab's tasks: what a sequence holds, determinism from a seed, and bad arguments."""

import numpy as np
import pytest

from rnnmem.tasks import TASKS, adding, first_recall, make_task, recall


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


def first_recall_by_loop(tokens, alphabet):
    """Prefix length and first token of each sequence (columns of ``tokens``), found one step at a time."""
    prefixes, firsts = [], []
    for column in tokens.T:
        t = 0
        while column[t] == alphabet:
            t += 1
        prefixes.append(t)
        firsts.append(column[t])
    return np.array(prefixes), np.array(firsts)


@pytest.mark.parametrize("lag, alphabet", [(9, 5), (8, 3), (1, 2)])
def test_first_recall_is_blanks_then_the_token_then_distractors_then_the_query(lag, alphabet):
    task = first_recall(lag=lag, alphabet=alphabet)
    n = 4000
    batch = task.sample(n, seed=7)
    T = lag + 2
    assert batch.inputs.shape == (T, n, alphabet + 2) and batch.targets.shape == (n,)
    assert batch.targets.dtype == np.int64
    assert (task.name, task.kind, task.length, task.lag, task.output_size) == (
        "first-recall",
        "classification",
        T,
        lag,
        alphabet,
    )
    assert task.one_hot and task.chance == pytest.approx(1 / alphabet) and np.isnan(task.baseline_mse)
    tokens = tokens_of(batch.inputs)
    assert (tokens[-1] == alphabet + 1).all()  # the query, and only at the last step
    assert (tokens[:-1] != alphabet + 1).all()
    prefixes, firsts = first_recall_by_loop(tokens, alphabet)
    assert (firsts == batch.targets).all()  # the target is the first token that is not blank
    assert (firsts < alphabet).all()
    for k, p in enumerate(prefixes):
        assert (tokens[p + 1 : T - 1, k] < alphabet).all()  # after a_0 only tokens of the alphabet, no blank
    # the prefix covers 0..lag//2 and nothing else, about uniformly
    counts = np.bincount(prefixes, minlength=lag // 2 + 1)
    assert len(counts) == lag // 2 + 1 and (counts > 0).all()
    assert counts / n == pytest.approx(np.full(lag // 2 + 1, 1 / (lag // 2 + 1)), abs=0.03)
    # a_0 is uniform and later tokens repeat its value about 1/K of the time
    assert np.bincount(firsts, minlength=alphabet) / n == pytest.approx(np.full(alphabet, 1 / alphabet), abs=0.03)
    if lag > 1:
        after = np.concatenate([tokens[p + 1 : T - 1, k] == firsts[k] for k, p in enumerate(prefixes)])
        assert after.mean() == pytest.approx(1 / alphabet, abs=0.02)


def test_first_recall_distances_run_from_half_the_lag_up_to_the_lag():
    lag = 11
    tokens = tokens_of(first_recall(lag=lag, alphabet=4).sample(3000, seed=0).inputs)
    prefixes, _ = first_recall_by_loop(tokens, 4)
    between = (lag + 1) - prefixes - 1  # distractors between a_0 (at step p) and the query (at step lag + 1)
    assert between.min() == -(-lag // 2) == 6 and between.max() == lag


@pytest.mark.parametrize("name", ["recall", "blank-recall", "first-recall"])
def test_each_stream_gets_what_sample_gives_for_its_seed(name):
    task = make_task(name, lag=7, alphabet=4)
    generator = np.random.default_rng(9)
    seeds = [3, 0, generator]
    each = task.sample_each(5, seeds)
    ids = task.sample_ids_each(5, [3, 0, np.random.default_rng(9)])
    assert each.inputs.shape == (9, 3, 5, 6) and each.targets.shape == (3, 5)
    assert ids.inputs.shape == (9, 3, 5) and ids.inputs.dtype == np.int64
    again = np.random.default_rng(9)
    for s, seed in enumerate([3, 0, again]):
        one = task.sample(5, seed=seed)
        assert np.array_equal(each.inputs[:, s], one.inputs) and np.array_equal(each.targets[s], one.targets)
        assert np.array_equal(np.eye(6)[ids.inputs[:, s]], one.inputs) and np.array_equal(ids.targets[s], one.targets)
    # a generator's stream goes on: the next batch from it is the next one sample would draw
    assert np.array_equal(task.sample_each(5, [generator]).inputs[:, 0], task.sample(5, seed=again).inputs)


def test_recall_draws_are_unchanged_by_first_recall():
    """Recall's sequences are still a_0 then lag distractors drawn in that order, checked against the generator."""
    lag, alphabet, n = 6, 5, 10
    rng = np.random.default_rng(12)
    first = rng.integers(0, alphabet, size=n)
    distractors = rng.integers(0, alphabet, size=(lag, n))
    tokens = tokens_of(recall(lag, alphabet).sample(n, seed=12).inputs)
    assert np.array_equal(tokens[0], first) and np.array_equal(tokens[1:-1], distractors)


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
        (
            lambda: make_task("copy", 3),
            "task must be one of 'recall', 'blank-recall', 'first-recall', 'adding', got 'copy'",
        ),
        (lambda: first_recall(lag=0), "lag must be a whole number >= 1, got 0"),
        (lambda: first_recall(lag=True), "lag must be a whole number >= 1, got True"),
        (lambda: first_recall(lag=3, alphabet=1), "alphabet must be a whole number >= 2 (tokens to tell apart), got 1"),
        (
            lambda: make_task("first-recall", 3, alphabet=0),
            "alphabet must be a whole number >= 2 (tokens to tell apart), got 0",
        ),
        (lambda: first_recall(lag=3).sample(0), "n must be a whole number >= 1, got 0"),
        (
            lambda: first_recall(lag=3).sample_each(2, []),
            "seeds must be a non-empty list of seeds, one per stream, got []",
        ),
        (
            lambda: first_recall(lag=3).sample_ids_each(2, [0, -1]),
            "seeds[1] must be a whole number >= 0, None or a numpy.random.Generator, got -1",
        ),
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

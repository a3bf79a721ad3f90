"""The lab's runs kept on disk: read back while a renderer renders, keyed by the run and the code that trains it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from rnnmem.site import labruns, runcache


@dataclass(frozen=True)
class Counted:
    """A run that counts how often it was trained (in this process)."""

    n: int
    cost: float = 1.0

    def execute(self) -> dict:
        TRAINED.append(self.n)
        return {"n": self.n, "square": self.n * self.n}


TRAINED: list[int] = []


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(labruns, "_RUNS", {})
    monkeypatch.setenv("RNNMEM_LAB_WORKERS", "1")
    TRAINED.clear()


def test_a_run_is_trained_once_and_read_back_in_a_later_process(tmp_path: Path, monkeypatch):
    with runcache.directory(tmp_path):
        assert labruns.runs([Counted(2), Counted(3)]) == [{"n": 2, "square": 4}, {"n": 3, "square": 9}]
    assert TRAINED == [2, 3] and len(list(tmp_path.glob("Counted-*.pickle"))) == 2
    monkeypatch.setattr(labruns, "_RUNS", {})  # a new process: nothing in memory
    with runcache.directory(tmp_path):
        assert labruns.runs([Counted(3), Counted(4)]) == [{"n": 3, "square": 9}, {"n": 4, "square": 16}]
    assert TRAINED == [2, 3, 4]  # 3 was read from disk


def test_outside_a_renderer_nothing_is_read_or_written(tmp_path: Path, monkeypatch):
    with runcache.directory(tmp_path):
        labruns.runs([Counted(5)])
    monkeypatch.setattr(labruns, "_RUNS", {})
    labruns.runs([Counted(5)])  # no directory in use: trained again
    assert TRAINED == [5, 5]
    assert runcache.load(Counted(5)) is None


def test_the_key_names_the_run_and_changes_with_it():
    assert runcache.key(Counted(1)) == runcache.key(Counted(1))
    assert runcache.key(Counted(1)) != runcache.key(Counted(2))
    assert len(runcache.key(Counted(1))) == 64


def _up_to(last: int):
    """A chain rule: after Counted(n) comes Counted(n + 1), up to ``last``."""
    return lambda run, result: Counted(run.n + 1, run.cost) if run.n < last else None


def test_chains_follow_each_chain_and_read_kept_runs_without_training_them(tmp_path: Path, monkeypatch):
    with runcache.directory(tmp_path):
        assert labruns.chains([Counted(2)], _up_to(3)) == {
            Counted(2): {"n": 2, "square": 4},
            Counted(3): {"n": 3, "square": 9},
        }
    assert TRAINED == [2, 3]
    monkeypatch.setattr(labruns, "_RUNS", {})  # a new process: 2 and 3 are on disk, 4 and 10 are not
    with runcache.directory(tmp_path):
        results = labruns.chains([Counted(2), Counted(10, cost=5.0)], _up_to(4))
    assert sorted(run.n for run in results) == [2, 3, 4, 10]
    assert TRAINED == [2, 3, 10, 4]  # the costlier waiting run first; 2 and 3 read, and followed to 4


def test_a_run_that_recurs_across_chains_is_refused():
    with pytest.raises(ValueError, match="recurs"):
        labruns.chains([Counted(1), Counted(2)], lambda run, result: Counted(2) if run.n == 1 else None)

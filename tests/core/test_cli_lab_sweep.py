"""``python -m rnnmem lab sweep``: a grid of models x lags trained by the engine, its table, its JSON, the same
on a Dask cluster; bad input exits 2 with the usage and names the argument."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rnnmem import engine
from rnnmem.cli import main
from rnnmem.grid import SEEDS_PER_RUN, Grid

SMALL = ["--models", "lstm:1,gru,lru:1:r0.9", "--lags", "2,4", "--seeds", "3", "--steps", "40", "--hidden", "8"]


def sweep(capsys, *args: str) -> tuple[int, str, str]:
    try:
        status = main(["lab", "sweep", *args])
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def test_the_table_counts_each_cell_of_the_grid_and_the_json_keeps_every_seed(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("RNNMEM_LAB_WORKERS", "1")
    monkeypatch.delenv(engine.SCHEDULER_VARIABLE, raising=False)
    path = tmp_path / "grid.json"
    status, out, err = sweep(capsys, *SMALL, "--json", str(path))
    assert status == 0 and err == "", err
    grid = Grid(("lstm:1", "gru", "lru:1:r0.9"), (2, 4), 3, 40, hidden=8)
    expected = grid.result(engine.train(grid.runs(), executor=engine.Local(1)))
    lines = out.splitlines()
    assert lines[0].startswith("recall, alphabet 8; 3 seeds a cell, 40 updates") and "this process" in lines[0]
    assert lines[1].split() == ["model", "lag", "2", "lag", "4"]
    for line, model in zip(lines[2:5], grid.models):
        words = line.split()
        assert words[0] == model
        counts = [w for w in words if "/" in w]
        assert counts == [f"{expected.cell(model, lag).successes}/3" for lag in grid.lags]
    assert lines[-1] == f"wrote {path}"
    assert path.read_text() == expected.to_json()
    record = json.loads(path.read_text())
    assert [(c["model"], c["lag"]) for c in record["cells"]] == [(m, lag) for m in grid.models for lag in grid.lags]
    assert all(c["n"] == 3 and len(c["success_step"]) == 3 for c in record["cells"])
    assert "time" not in path.read_text() and "host" not in path.read_text()


def test_a_cell_of_many_seeds_is_trained_in_runs_whose_seeds_do_not_depend_on_the_workers():
    grid = Grid(("gru",), (3,), SEEDS_PER_RUN + 2, 5)
    assert [r.seeds for r in grid.runs()] == [tuple(range(SEEDS_PER_RUN)), (SEEDS_PER_RUN, SEEDS_PER_RUN + 1)]


@pytest.mark.parametrize(
    "args, named",
    [
        (["--models", "lstm:x", "--lags", "2", "--seeds", "2", "--steps", "5"], "models[0] must be a model"),
        (["--models", ",", "--lags", "2", "--seeds", "2", "--steps", "5"], "argument --models: must be model specs"),
        (["--models", "gru", "--lags", "", "--seeds", "2", "--steps", "5"], "argument --lags: must be whole numbers"),
        (["--models", "gru", "--lags", "2,0", "--seeds", "2", "--steps", "5"], "argument --lags: must be a whole"),
        (["--models", "gru", "--lags", "2", "--seeds", "0", "--steps", "5"], "argument --seeds: must be a whole"),
        (["--models", "gru", "--lags", "2", "--seeds", "2"], "the following arguments are required: --steps"),
        (["--models", "gru", "--lags", "2", "--seeds", "2", "--steps", "5", "--task", "copy"], "argument --task"),
        (
            ["--models", "gru", "--lags", "2", "--seeds", "2", "--steps", "5", "--scheduler", "x", "--workers", "2"],
            "--workers sets this machine's processes",
        ),
    ],
)
def test_bad_input_exits_2_with_usage_naming_the_argument(capsys, args, named):
    status, out, err = sweep(capsys, *args)
    assert status == 2 and out == ""
    assert err.startswith("usage: python -m rnnmem lab sweep"), err
    assert named in err, err


def test_an_unreachable_scheduler_exits_2_naming_the_address(capsys, monkeypatch, distributed):
    monkeypatch.setattr(engine, "CONNECT_TIMEOUT", 1.0)
    status, out, err = sweep(capsys, *SMALL, "--scheduler", "tcp://127.0.0.1:9")
    assert status == 2 and out == ""
    assert err.startswith("usage: python -m rnnmem lab sweep")
    assert "scheduler 'tcp://127.0.0.1:9': no Dask scheduler answered within 1 s" in err


@pytest.mark.process
def test_the_same_sweep_on_a_dask_cluster_writes_the_same_json_byte_for_byte(tmp_path, distributed):
    local = subprocess.run(
        [sys.executable, "-m", "rnnmem", "lab", "sweep", *SMALL, "--json", str(tmp_path / "local.json")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**_env(), "RNNMEM_LAB_WORKERS": "2"},
    )
    assert local.returncode == 0, local.stderr
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
    ) as cluster:
        remote = subprocess.run(
            [sys.executable, "-m", "rnnmem", "lab", "sweep", *SMALL, "--json", str(tmp_path / "dask.json")]
            + ["--scheduler", cluster.scheduler_address],
            capture_output=True,
            text=True,
            timeout=300,
            env=_env(),
        )
    assert remote.returncode == 0, remote.stderr
    assert f"trained on the Dask scheduler at {cluster.scheduler_address}" in remote.stdout
    assert (tmp_path / "dask.json").read_bytes() == (tmp_path / "local.json").read_bytes()
    assert remote.stdout.splitlines()[1:] == [
        line.replace("local.json", "dask.json") for line in local.stdout.splitlines()[1:]
    ]


@pytest.mark.process
def test_progress_counts_the_seeds_trained():
    run = subprocess.run(
        [sys.executable, "-m", "rnnmem", "lab", "sweep", *SMALL, "--progress"],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
    )
    assert run.returncode == 0, run.stderr
    assert "lab sweep: 3 models x 2 lags, seeds" in run.stderr and "18/18" in run.stderr, run.stderr
    quiet = subprocess.run(
        [sys.executable, "-m", "rnnmem", "lab", "sweep", *SMALL],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
    )
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout == run.stdout


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k not in (engine.SCHEDULER_VARIABLE, "PYTEST_XDIST_WORKER")}

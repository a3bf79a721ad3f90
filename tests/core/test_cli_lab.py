"""``python -m rnnmem lab``: one line per seed, ``success: K/S`` last, exit 2 with usage on bad input."""

import re
import subprocess
import sys
from collections.abc import Callable

import pytest

from rnnmem.cli import build_parser, main
from rnnmem.lab import ALL_MODELS

OPTIONS = [
    "--model",
    "--layers",
    "--state-size",
    "--r-min",
    "--r-max",
    "--forget-bias",
    "--init",
    "--t-max",
    "--lag",
    "--alphabet",
    "--seeds",
    "--steps",
    "--hidden",
    "--batch",
    "--lr",
    "--clip",
    "--threshold",
    "--eval-every",
    "--eval-size",
    "--progress",
]


def lab(*args):
    return subprocess.run([sys.executable, "-m", "rnnmem", "lab", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.process
def test_trains_the_seeds_and_ends_with_the_count():
    run = lab(
        "recall",
        "--model",
        "lstm",
        "--forget-bias",
        "1",
        "--lag",
        "2",
        "--alphabet",
        "4",
        "--seeds",
        "3",
        "--steps",
        "100",
        "--hidden",
        "16",
        "--lr",
        "0.02",
        "--eval-every",
        "25",
        "--eval-size",
        "128",
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 1 + 3 + 1
    assert "lag 2" in lines[0] and "forget bias 1" in lines[0] and "accuracy >= 0.9" in lines[0]
    seeds = lines[1:4]
    for k, line in enumerate(seeds):
        assert re.fullmatch(
            rf"seed {k}: held-out accuracy [01]\.\d\d, "
            r"(success after \d+ updates|never|diverged at update \d+)",
            line,
        ), line
    successes = sum("success after" in line for line in seeds)
    assert successes >= 1
    assert lines[-1] == f"success: {successes}/3"


@pytest.mark.process
def test_adding_reports_errors_and_divergence():
    run = lab(
        "adding",
        "--model",
        "rnn",
        "--lag",
        "5",
        "--seeds",
        "2",
        "--steps",
        "10",
        "--hidden",
        "4",
        "--batch",
        "8",
        "--lr",
        "1e200",
        "--clip",
        "none",
        "--eval-every",
        "5",
        "--eval-size",
        "16",
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "adding problem, 5 steps" in lines[0] and "no clipping" in lines[0]
    assert all(re.search(r"diverged at update \d+$", line) for line in lines[1:3]), lines
    assert lines[-1] == "success: 0/2"


@pytest.mark.process
def test_help_documents_every_option():
    run = lab("--help")
    assert run.returncode == 0
    for option in OPTIONS:
        assert option in run.stdout, option
    for task in ("recall", "blank-recall", "first-recall", "adding"):
        assert task in run.stdout
    for model in ALL_MODELS:
        assert model in run.stdout


def test_model_takes_the_labs_models():
    _, parsers = build_parser()
    model = next(action for action in parsers["lab"]._actions if action.dest == "model")
    assert tuple(model.choices or ()) == tuple(ALL_MODELS)


TINY = ["--alphabet", "3", "--seeds", "2", "--steps", "20", "--hidden", "8", "--batch", "16", "--eval-every", "10"]


@pytest.mark.process
def test_a_stacked_lru_trains_and_says_what_it_is():
    run = lab("recall", "--model", "lru", "--layers", "2", "--lag", "3", *TINY, "--eval-size", "32")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 1 + 2 + 1, lines
    # the LRU's state defaults to its width, its ring to lab.train's defaults
    assert "; lru, 2 layers, state 8, ring 0.9 <= |lambda| <= 0.999, 8 units a layer;" in lines[0], lines[0]
    for k, line in enumerate(lines[1:3]):
        assert re.fullmatch(
            rf"seed {k} \(lru, 2 layers, state 8, ring 0\.9 <= \|lambda\| <= 0\.999\): held-out accuracy [01]\.\d\d, "
            r"(success after \d+ updates|never|diverged at update \d+)",
            line,
        ), line
    successes = sum("success after" in line for line in lines[1:3])
    assert lines[-1] == f"success: {successes}/2"


@pytest.mark.process
@pytest.mark.parametrize(
    "model, extra, says",
    [
        (
            "lru",
            ["--r-min", "0.5", "--r-max", "0.8", "--state-size", "6"],
            "lru, 1 layer, state 6, ring 0.5 <= |lambda| <= 0.8",
        ),
        ("mingru", ["--layers", "3"], "mingru, 3 layers"),
        ("selective", ["--layers", "2", "--state-size", "4"], "selective, 2 layers, state 4"),
    ],
)
def test_each_input_gated_model_runs_with_its_options(model, extra, says):
    run = lab("first-recall", "--model", model, *extra, "--lag", "4", *TINY, "--eval-size", "32")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert says in lines[0] and all(f"({says})" in line for line in lines[1:3]), lines
    assert re.fullmatch(r"success: [012]/2", lines[-1]), lines


@pytest.mark.process
def test_first_recall_runs_end_to_end_for_an_lstm():
    run = lab("first-recall", "--model", "lstm", "--forget-bias", "1", "--lag", "6", *TINY, "--eval-size", "32")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 1 + 2 + 1, lines
    assert lines[0].startswith("first-recall, lag 3 to 6, alphabet 3 (chance 0.333); lstm, 8 units, forget bias 1;")
    for k, line in enumerate(lines[1:3]):
        assert re.fullmatch(rf"seed {k}: held-out accuracy [01]\.\d\d, (success after \d+ updates|never)", line), line
    assert re.fullmatch(r"success: [012]/2", lines[-1]), lines


@pytest.mark.parametrize(
    "args, named",
    [
        (["recall", "--model", "lstm", "--lag", "0"], "argument --lag: must be a whole number >= 1, got '0'"),
        (
            ["recall", "--model", "lstm", "--lag", "5", "--alphabet", "1"],
            "argument --alphabet: must be a whole number >= 2, got '1'",
        ),
        (
            ["recall", "--model", "lstm", "--lag", "5", "--threshold", "1.5"],
            "argument --threshold: must be a number in (0, 1], got '1.5'",
        ),
        (
            ["recall", "--model", "lstm", "--lag", "5", "--threshold", "0"],
            "argument --threshold: must be a number in (0, 1], got '0'",
        ),
        (["recall", "--model", "lstm", "--lag", "5", "--steps", "0"], "argument --steps: must be a whole number >= 1"),
        (["recall", "--model", "transformer", "--lag", "5"], "argument --model: invalid choice: 'transformer'"),
        (["recall", "--model", "lstm", "--init", "xavier", "--lag", "5"], "argument --init: invalid choice: 'xavier'"),
        (["copy", "--model", "lstm", "--lag", "5"], "argument TASK: invalid choice: 'copy'"),
        (
            ["recall", "--model", "lstm", "--lag", "5", "--forget-bias", "1", "--init", "chrono"],
            "argument --init: not allowed with argument --forget-bias",
        ),
        (
            ["recall", "--model", "gru", "--lag", "5", "--forget-bias", "1"],
            "--forget-bias sets the LSTM's forget gate; --model must be lstm, got gru",
        ),
        (
            ["recall", "--model", "rnn", "--lag", "5", "--init", "chrono"],
            "--init chrono sets the LSTM's gate biases; --model must be lstm, got rnn",
        ),
        (
            ["recall", "--model", "lstm", "--lag", "5", "--init", "chrono", "--t-max", "2"],
            "--t-max must be greater than 2",
        ),
        (["adding", "--model", "lstm", "--lag", "1"], "--lag is the sequence length of the adding problem"),
        (
            ["recall", "--model", "lstm", "--lag", "5", "--clip", "-1"],
            "argument --clip: must be a number > 0, or 'none'",
        ),
        (
            ["recall", "--model", "lstm", "--lag", "5", "--lr", "nan"],
            "argument --lr: must be a real number > 0, got 'nan'",
        ),
        (["recall", "--model", "lstm"], "the following arguments are required: --lag"),
        # the options of the models whose gates read only the input
        (
            ["recall", "--model", "lstm", "--lag", "5", "--layers", "2"],
            "--layers stacks the models whose gates read only the input; "
            "--model must be one of lru, mingru, selective, mamba, got lstm",
        ),
        (["recall", "--model", "rnn", "--lag", "5", "--layers", "1"], "--layers stacks the models"),
        (
            ["recall", "--model", "lru", "--lag", "5", "--layers", "0"],
            "argument --layers: must be a whole number >= 1, got '0'",
        ),
        (
            ["recall", "--model", "mingru", "--lag", "5", "--layers", "1.5"],
            "argument --layers: must be a whole number >= 1",
        ),
        (
            ["recall", "--model", "gru", "--lag", "5", "--state-size", "8"],
            "--state-size sets the recurrent state of lru, selective and mamba; --model must be one of them, got gru",
        ),
        (["recall", "--model", "mingru", "--lag", "5", "--state-size", "8"], "--state-size sets the recurrent state"),
        (
            ["recall", "--model", "lru", "--lag", "5", "--state-size", "0"],
            "argument --state-size: must be a whole number >= 1, got '0'",
        ),
        (
            ["recall", "--model", "selective", "--lag", "5", "--r-min", "0.5"],
            "--r-min sets the ring of the LRU's eigenvalues; --model must be lru, got selective",
        ),
        (
            ["recall", "--model", "lstm", "--lag", "5", "--r-max", "0.5"],
            "--r-max sets the ring of the LRU's eigenvalues; --model must be lru, got lstm",
        ),
        (
            ["recall", "--model", "lru", "--lag", "5", "--r-min", "0"],
            "argument --r-min: must be a number in (0, 1), got '0'",
        ),
        (
            ["recall", "--model", "lru", "--lag", "5", "--r-max", "1"],
            "argument --r-max: must be a number in (0, 1), got '1'",
        ),
        (
            ["recall", "--model", "lru", "--lag", "5", "--r-min", "nan"],
            "argument --r-min: must be a number in (0, 1), got 'nan'",
        ),
        (
            ["recall", "--model", "lru", "--lag", "5", "--r-max", "high"],
            "argument --r-max: must be a number in (0, 1), got 'high'",
        ),
        (
            ["recall", "--model", "lru", "--lag", "5", "--r-min", "0.99", "--r-max", "0.9"],
            "--r-min must be less than --r-max (the ring r_min <= |lambda| <= r_max), got --r-min 0.99 and --r-max 0.9",
        ),
        (
            ["recall", "--model", "lru", "--lag", "5", "--r-min", "0.9995"],
            "--r-min must be less than --r-max (the ring r_min <= |lambda| <= r_max), got --r-min 0.9995 and --r-max 0.999",
        ),
        (
            ["recall", "--model", "lru", "--lag", "5", "--r-min", "0.5", "--r-max", "0.5"],
            "--r-min must be less than --r-max",
        ),
        (
            ["recall", "--model", "lru", "--lag", "5", "--forget-bias", "1"],
            "--forget-bias sets the LSTM's forget gate; --model must be lstm, got lru",
        ),
        (
            ["recall", "--model", "mingru", "--lag", "5", "--init", "chrono"],
            "--init chrono sets the LSTM's gate biases; --model must be lstm, got mingru",
        ),
        (
            ["recall", "--model", "selective", "--lag", "5", "--forget-bias", "0"],
            "--forget-bias sets the LSTM's forget gate; --model must be lstm, got selective",
        ),
        (["recall", "--model", "lru", "--lag", "5", "--t-max", "5"], "--t-max is used only with --init chrono"),
        (["first-recall", "--model", "lru", "--lag", "0"], "argument --lag: must be a whole number >= 1, got '0'"),
        (
            ["first-recall", "--model", "lstm", "--lag", "5", "--alphabet", "1"],
            "argument --alphabet: must be a whole number >= 2",
        ),
    ],
)
def test_bad_input_exits_2_with_usage_naming_the_argument(args, named, capsys):
    status: int | str | None
    try:
        status = main(["lab", *args])
    except SystemExit as exc:
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("usage: python -m rnnmem lab"), err
    assert named in err, err


@pytest.mark.process
def test_bad_input_from_a_subprocess():
    run = lab("recall", "--model", "lstm", "--lag", "-3")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("usage: python -m rnnmem lab")
    assert "argument --lag: must be a whole number >= 1, got '-3'" in run.stderr


# -- progress: a bar of the updates on a terminal, a quiet run on a pipe ---------------------------------------------
RUN = [
    "recall",
    "--model",
    "rnn",
    "--lag",
    "3",
    "--seeds",
    "2",
    "--steps",
    "300",
    "--hidden",
    "8",
    "--eval-every",
    "50",
]
#: The command line, in a process where tqdm cannot be imported (the core installed without the site extra).
NO_TQDM = "import sys; sys.modules['tqdm'] = None; from rnnmem.cli import main; sys.exit(main(sys.argv[1:]))"


def on_terminal(terminal: Callable[[Callable[[int], object]], str], cmd: list[str]) -> tuple[int, str, str]:
    """Run ``cmd`` with standard error on a pseudo-terminal: exit status, standard output, what the terminal showed."""
    done: list[subprocess.CompletedProcess[str]] = []

    def run(fd: int) -> None:
        done.append(
            subprocess.run(cmd, stdout=subprocess.PIPE, stderr=fd, stdin=subprocess.DEVNULL, text=True, timeout=120)
        )

    shown = terminal(run)
    return done[0].returncode, done[0].stdout, shown


def bar_states(shown: str) -> list[tuple[int, int, int]]:
    """(updates done, budget, updates left) of each state the bar was drawn in."""
    found = re.findall(r"updates (\d+)/(\d+) \|.*?\| .*?s/update, \S+ to go, (\d+) left", shown)
    return [(int(done), int(total), int(left)) for done, total, left in found]


@pytest.mark.process
def test_a_terminal_shows_the_updates_counting_down_and_a_pipe_stays_quiet(terminal):
    status, out, shown = on_terminal(terminal, [sys.executable, "-m", "rnnmem", "lab", *RUN])
    assert status == 0, shown
    assert "lab: 2 rnn seeds, updates" in shown
    states = bar_states(shown)
    assert states[0] == (0, 300, 300) and states[-1] == (300, 300, 0), shown
    assert all(done + left == total for done, total, left in states)
    assert [left for *_, left in states] == sorted((left for *_, left in states), reverse=True)
    piped = lab(*RUN)
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    assert piped.stdout == out and out.splitlines()[-1].startswith("success: "), "the bar changes nothing else"


@pytest.mark.process
def test_progress_can_be_forced_on_a_pipe_and_turned_off_on_a_terminal(terminal):
    forced = lab(*RUN, "--progress")
    assert forced.returncode == 0 and bar_states(forced.stderr)[-1] == (300, 300, 0), forced.stderr
    status, _, shown = on_terminal(terminal, [sys.executable, "-m", "rnnmem", "lab", *RUN, "--no-progress"])
    assert status == 0 and shown == ""


@pytest.mark.process
def test_without_tqdm_the_run_is_quiet_and_progress_asked_for_is_a_usage_error(terminal):
    status, out, shown = on_terminal(terminal, [sys.executable, "-c", NO_TQDM, "lab", *RUN])
    assert status == 0 and shown == "" and out.splitlines()[-1].startswith("success: ")
    asked = subprocess.run(
        [sys.executable, "-c", NO_TQDM, "lab", *RUN, "--progress"], capture_output=True, text=True, timeout=120
    )
    assert asked.returncode == 2 and asked.stdout == ""
    assert asked.stderr.startswith("usage: python -m rnnmem lab"), asked.stderr
    assert "--progress draws its bar with the optional package tqdm, which is not installed" in asked.stderr

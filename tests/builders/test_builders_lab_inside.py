"""Memory inside one sequence: the widget's every checkpoint and the figure show what rnnmem.inside measured.

The measures themselves (gradient landing, memory of the first token, the runs
and the rule for the seed shown) are tested in tests/core/test_inside.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bs4 import BeautifulSoup
from one_directive import OneDirective, select

from rnnmem.checks import check_arguments
from rnnmem.inside import InsideResult, InsideRun
from rnnmem.site.builders import lab_inside as li
from rnnmem.site.builders import memory_measured as mm
from rnnmem.site.directives import DirectiveError
from rnnmem.site.render import Renderer
from rnnmem.site.style import PALETTE

ROOT = Path(__file__).resolve().parents[2]
TINY = 'models=["rnn", "lstm:chrono"] lag=3 seeds=2 hidden=4 steps=50 threshold=0.5 sequences=2'
TINY_ARGS: dict[str, Any] = dict(
    models=["rnn", "lstm:chrono"], lag=3, seeds=2, hidden=4, steps=50, threshold=0.5, sequences=2
)


one = OneDirective("docs/chapters/memory-measured.md")


def widget(tmp_path) -> BeautifulSoup:
    return one.soup(tmp_path, f"<!-- widget: inside_explorer {TINY} -->")


def widget_data(soup: BeautifulSoup) -> Any:
    text = select(soup, "script.rnnmem-inside-data").string
    assert text is not None
    return json.loads(text)


def results() -> list[InsideResult]:
    return li.watched(**TINY_ARGS)


def value_of(y: float, low: float, high: float) -> float:
    """The value a y coordinate of a logarithmic plot stands for (the inverse of lab_inside._ys)."""
    x0, y0, w, h = li.BOX
    return 10 ** (low + (1 - (y - y0) / h) * (high - low))


# ---------------------------------------------------------------------------- the widget


def test_every_checkpoint_shows_the_numbers_rnnmem_measured(tmp_path):
    soup = widget(tmp_path)
    data = widget_data(soup)
    runs = results()
    C = len(runs[0].eval_steps)
    assert C == 3 and len(data["labels"]) == len(data["cells"]) == len(data["memory"]) == len(data["now"]) == C
    assert data["labels"] == [f"update {u} of 50" for u in (0, 25, 50)]
    for i in range(C):
        for k, r in enumerate(runs):
            measured = [f"{r.scores[i]:.2f}", li.sci(r.memory[i, -1]), li.sci(r.landing[i, 0])]
            assert [c.replace("\u202f", " ") for c in data["cells"][i][k]] == measured
    # the slider: one position per checkpoint, named, its value spoken, off until the script turns it on
    slider = select(soup, "input[type=range]")
    assert slider["max"] == str(C - 1) and slider["value"] == "0" and slider.has_attr("disabled")
    assert select(soup, f'label[for="{slider["id"]}"]').get_text(strip=True) == "Training checkpoint"
    assert slider["aria-valuetext"] == data["labels"][0]
    # the page shows update 0 without the script: the table's cells and the lines
    on_page = {str(o["data-cell"]): o.get_text() for o in soup.select("output[data-cell]")}
    assert on_page == {f"{k}-{j}": data["cells"][0][k][j] for k in range(2) for j in range(3)}
    xs = data["xs"]
    for line in soup.select("polyline[data-memory]"):
        k = int(str(line["data-memory"]))
        assert line["points"] == " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, data["memory"][0][k]))
    assert select(soup, "noscript").get_text().startswith("The slider needs JavaScript")


def test_the_lines_are_the_measures_on_one_logarithmic_axis(tmp_path):
    data = widget_data(widget(tmp_path))
    runs = results()
    values = np.concatenate([np.concatenate([r.memory.ravel(), r.landing.ravel()]) for r in runs])
    low = math.floor(math.log10(values.min()))
    high = max(1, math.ceil(math.log10(values.max())))
    T = runs[0].memory.shape[1]
    assert len(data["xs"]) == T and data["xs"][0] == li.BOX[0] and data["xs"][-1] == li.BOX[0] + li.BOX[2]
    for i in range(len(runs[0].eval_steps)):
        for k, r in enumerate(runs):
            for kind, measured in (("memory", r.memory[i]), ("landing", r.landing[i])):
                drawn = [value_of(y, low, high) for y in data[kind][i][k]]
                # one decimal of a coordinate is 0.05 units of the plot's height
                np.testing.assert_allclose(np.log10(drawn), np.log10(measured), atol=0.06 * (high - low) / li.BOX[3])
        # the marker and the dots sit at the checkpoint and its accuracies
        assert data["now"][i] == pytest.approx(li.BOX[0] + li.BOX[2] * runs[0].eval_steps[i] / 50, abs=0.05)
        for k, r in enumerate(runs):
            assert data["dots"][i][k] == pytest.approx(li.BOX[1] + (1 - r.scores[i]) * li.BOX[3], abs=0.05)


def test_the_table_names_each_model_its_seed_and_its_outcome(tmp_path):
    soup = widget(tmp_path)
    rows = soup.select("table.rnnmem-inside-numbers tbody tr")
    assert len(rows) == 2
    for row, r, name in zip(rows, results(), ("tanh RNN", "LSTM, chrono")):
        head = row.select_one("th")
        assert head is not None and head.get("scope") == "row"
        text = head.get_text(" ", strip=True)
        assert text.startswith(name) and f"seed {r.seed}," in text
        assert ("learned at update" in text) == r.succeeded
    # every plot is an image with a description, and the live region is the table
    for svg in soup.select("svg.rnnmem-inside-plot"):
        assert svg["role"] == "img" and len(svg["aria-label"]) > 40
    assert select(soup, "table.rnnmem-inside-numbers")["aria-live"] == "polite"


def test_each_model_keeps_its_chapter_colour_and_its_dark_palette_twin(tmp_path):
    root = select(widget(tmp_path), "div.rnnmem-inside")
    style: dict[str, str] = {}
    for part in str(root["style"]).strip(";").split(";"):
        key, value = part.split(":")
        style[key] = value
    assert style["--rnnmem-inside-c0"] == PALETTE[0]  # the RNN, first of the lab's models
    assert style["--rnnmem-inside-c1"] == PALETTE[5]  # chrono, the sixth
    for k in range(2):
        assert style[f"--rnnmem-inside-d{k}"] == li.dark_colour(style[f"--rnnmem-inside-c{k}"])


def contrast(a: str, b: str) -> float:
    def luminance(colour: str) -> float:
        rgb = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("spec", ["rnn", "gru", "lstm:0", "lstm:1", "lstm:2", "lstm:chrono"])
def test_every_line_colour_stands_out_on_both_palettes(spec):
    """WCAG asks 3:1 of the parts of a graphic: on white, and (its dark twin) on the slate page, #1e2029."""
    light = li._colour(li.ModelSpec.parse(spec))
    assert contrast(light, "#ffffff") >= 3.0
    assert contrast(li.dark_colour(light), "#1e2029") >= 3.0


def test_the_dark_twin_is_the_stylesheets_filter():
    """invert(0.88) then hue-rotate(180deg): a grey v becomes the grey 0.88 - 0.76 v; a hue keeps its family."""
    for v in (0, 64, 128, 200, 255):
        grey = round((0.88 - 0.76 * v / 255) * 255)
        assert li.dark_colour(f"#{v:02x}{v:02x}{v:02x}") == f"#{grey:02x}{grey:02x}{grey:02x}"
    r, g, b = (int(li.dark_colour("#1f6fb2")[i : i + 2], 16) for i in (1, 3, 5))
    assert b > r  # a blue stays bluish
    r, g, b = (int(li.dark_colour(PALETTE[1])[i : i + 2], 16) for i in (1, 3, 5))
    assert r > b  # an orange stays warm


def test_two_renders_are_byte_identical(tmp_path, monkeypatch):
    text = f"<!-- widget: inside_explorer {TINY} -->"
    monkeypatch.setattr(mm, "_RUNS", {})
    first = Renderer(tmp_path / "a").render(one(text)).content
    monkeypatch.setattr(mm, "_RUNS", {})  # trained again, not read back
    assert Renderer(tmp_path / "b").render(one(text)).content == first


def test_the_widget_and_the_figure_share_their_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(mm, "_RUNS", {})
    Renderer(tmp_path).render(one(f"<!-- widget: inside_explorer {TINY} -->"))
    trained = [k for k in mm._RUNS if isinstance(k, InsideRun)]
    assert sorted(str(run.model) for run in trained) == ["lstm:chrono", "rnn"]
    assert all(run.seeds == (0, 1) and run.dtype == "float32" and run.design.steps == 50 for run in trained)
    monkeypatch.setattr(mm, "_execute", lambda run: pytest.fail(f"trained {run} again"))
    Renderer(tmp_path).render(one(f'<!-- figure: inside_checkpoints {TINY} caption="c" alt="a" -->'))


def test_the_page_loads_the_script_and_the_stylesheet():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "  - javascripts/inside.js\n" in config and "  - stylesheets/inside.css\n" in config
    script = (ROOT / "docs/javascripts/inside.js").read_text(encoding="utf-8")
    # the script reads the names the builder writes
    for name in ("rnnmem-inside-data", "data-cell", "data-now", "data-dot", "rnnmem-inside-at", "rnnmem-inside"):
        assert name.replace("data-", "") in script


# ---------------------------------------------------------------------------- the figure and its words


def test_the_figure_draws_one_row_per_model_and_one_line_per_checkpoint(tmp_path):
    fig, values = li.inside_checkpoints(**TINY_ARGS)
    axes = fig.get_axes()
    shown = li.checkpoints(results()[0].eval_steps)
    assert len(axes) == 2 * 2
    for ax in axes:
        assert len(ax.get_lines()) == len(shown)
    assert values["checkpoints"] == li._join([str(int(results()[0].eval_steps[k])) for k in shown])
    for spec, r in zip(("rnn", "chrono"), results()):
        assert values[spec]["seed"] == r.seed
        assert values[spec]["memory_start"] == r.memory[0, -1] and values[spec]["landing_end"] == r.landing[-1, 0]
        assert values["shown"][spec].startswith(f"seed {r.seed}")
    item = Renderer(tmp_path).render(one(f'<!-- figure: inside_checkpoints {TINY} caption="c" alt="a" -->'))
    assert item.filename.endswith(".svg") and item.values == json.loads(json.dumps(values))


def test_the_checkpoints_are_the_start_the_thirds_and_the_end():
    assert li.checkpoints(np.arange(0, 1501, 25)) == [0, 20, 40, 60]
    assert li.checkpoints(np.array([0, 25, 50])) == [0, 1, 2]
    assert li.checkpoints(np.array([0, 25])) == [0, 1]


def fake(memory_end: list[float], landing_end: list[float], scores: list[float], success: int | None) -> InsideResult:
    """A result with a given memory at the query and gradient on the token at checkpoints 0, 25, 50, 75."""
    memory = np.ones((4, 5))
    landing = np.ones((4, 5))
    memory[:, -1] = memory_end
    landing[:, 0] = landing_end
    return InsideResult(
        model="rnn",
        seeds=(0, 1, 2),
        seed=1 if success is not None else 0,
        succeeded=success is not None,
        success_step=success,
        eval_steps=np.array([0, 25, 50, 75]),
        scores=np.array(scores),
        memory=memory,
        landing=landing,
    )


def test_a_story_orders_the_memory_against_success_as_the_numbers_do():
    spec = li.ModelSpec.parse("rnn")
    early = li._story(spec, fake([1e-6, 2.0, 3.0, 3.0], [1e-6, 2.0, 4.0, 4.0], [0.1, 0.3, 0.95, 1.0], 50), 0.9)
    assert early == (
        "For the tanh RNN, the memory at the query rose from 1.0 × 10⁻⁶ at update 0 to 3.0 at update 75, and the "
        "share of the gradient on the token rose from 1.0 × 10⁻⁶ to 4.0. Both first reached 1 at update 25, 25 "
        "updates before the held-out accuracy passed 0.9 (at update 50), with the accuracy then at 0.30."
    )
    late = li._story(spec, fake([1e-6, 1e-3, 0.5, 2.0], [1e-6, 1.5, 2.0, 2.0], [0.1, 0.3, 0.95, 1.0], 50), 0.9)
    assert late.endswith(
        "The memory first reached 1 at update 75, the gradient at update 25; the memory reached it 25 updates "
        "after the held-out accuracy passed 0.9 (at update 50), with the accuracy then at 1.00."
    )
    same = li._story(spec, fake([1e-6, 1e-3, 2.0, 2.0], [1e-6, 1e-3, 2.0, 2.0], [0.1, 0.3, 0.95, 1.0], 50), 0.9)
    assert "Both first reached 1 at update 50, at the checkpoint at which the held-out accuracy passed 0.9," in same
    unread = li._story(spec, fake([1e-6, 1e-3, 0.5, 0.5], [1e-6, 1e-3, 0.5, 0.5], [0.1, 0.3, 0.95, 1.0], 50), 0.9)
    assert unread.endswith(
        "Neither reached 1 at any checkpoint, and the held-out accuracy passed 0.9 at update 50 all the same."
    )
    never = li._story(spec, fake([1e-5, 1e-6, 1e-7, 1e-8], [1e-5, 1e-6, 1e-7, 1e-7], [0.1] * 4, None), 0.9)
    assert "the memory at the query fell from" in never and "gradient on the token fell from" in never
    assert never.endswith("Neither reached 1 at any checkpoint, and the held-out accuracy never passed 0.9.")


def test_the_drift_of_a_model_that_did_not_learn_is_read_from_its_numbers():
    spec = li.ModelSpec.parse("lstm:0")
    down = fake([1e-4, 1e-6, 1e-7, 1e-8], [1e-5, 1e-6, 1e-7, 1e-9], [0.1] * 4, None)
    assert li._drift([(spec, down)]) == (
        "For the LSTM with $b_f = 0$, the memory at the query fell by about 4 orders of magnitude over the budget, "
        "and the gradient on the token fell by about 4: training took it further from the token."
    )
    up = fake([1e-4, 1e-3, 1e-3, 1e-2], [1e-5, 1e-6, 1e-4, 1e-3], [0.1] * 4, None)
    assert li._drift([(spec, up)]).endswith("training took it closer to the token, without reaching it.")
    mixed = fake([1e-4, 1e-3, 1e-3, 1e-2], [1e-5, 1e-6, 1e-7, 1e-8], [0.1] * 4, None)
    assert li._drift([(spec, mixed)]).endswith("neither closer to the token nor further from it.")
    assert li._drift([]) == "Every model shown learned in this run."


def test_the_shown_seed_is_said_with_its_reason():
    learned = fake([1.0] * 4, [1.0] * 4, [1.0] * 4, 25)
    assert li._shown_words(li.ModelSpec.parse("rnn"), learned, 75) == "seed 1, the lowest that learned, at update 25"
    never = fake([1.0] * 4, [1.0] * 4, [0.1] * 4, None)
    assert li._shown_words(li.ModelSpec.parse("rnn"), never, 75) == (
        "seed 0: no seed from 0 to 2 learned within 75 updates"
    )


def test_ratios_read_as_text():
    assert [li.sci(v) for v in (2.6e-7, 0.0099, 0.01, 0.5, 1.0, 9.96, 10.0, 999.0, 1000.0)] == [
        "2.6 × 10⁻⁷",
        "9.9 × 10⁻³",
        "0.01",
        "0.50",
        "1.0",
        "10.0",
        "10",
        "999",
        "1.0 × 10³",
    ]


# ---------------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    "args, name",
    [
        ({"models": ["cnn"]}, "models[0]"),
        ({"lag": 0}, "lag"),
        ({"seeds": 0}, "seeds"),
        ({"steps": -1}, "steps"),
        ({"threshold": 1.5}, "threshold"),
        ({"sequences": 0}, "sequences"),
    ],
)
@pytest.mark.parametrize("builder", [li.inside_explorer, li.inside_checkpoints])
def test_a_bad_argument_fails_naming_it(builder, args, name):
    with pytest.raises(ValueError) as info:
        check_arguments(builder, args)
    assert str(info.value).startswith(f"{name} must")


@pytest.mark.parametrize(
    "models, message",
    [
        ('["rnn", "rnn"]', "models must be distinct"),
        ('["rnn", "gru", "lstm:0", "lstm:1", "lstm:chrono"]', "models must name 1 to 4 models"),
        ("[]", "models must be a non-empty list"),
    ],
)
def test_a_bad_set_of_models_fails_the_build_naming_it(tmp_path, models, message):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(f"<!-- widget: inside_explorer models={models} lag=3 steps=25 -->"))
    assert message in str(info.value)

"""Every builder's arguments are checked from its signature: a bad value fails the build naming the argument.

For every registered builder and every parameter whose annotation states a
rule (:mod:`rnnmem.checks`), a value that rule rejects is derived from the
annotation itself (a negative number for ``PositiveInt``, 1.5 for
``OpenUnit``, ``[]`` for a list, a wrong option for a ``Literal`` ...) and fed
through :func:`rnnmem.site.render.build_content`, which must fail naming the
page, the line and the parameter before the builder runs. The relations
between arguments, which no annotation states, are listed below them.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Union

import pytest

from rnnmem import checks
from rnnmem.site import registry
from rnnmem.site.directives import Directive, DirectiveError
from rnnmem.site.render import build_content

#: A value each rule of rnnmem.checks rejects.
REJECTED = {
    checks.check_open_unit: 1.5,
    checks.check_positive: -2.0,
    checks.check_finite: float("inf"),
    checks.check_real: "x",
    checks.check_positive_int: -3,
    checks.check_nonnegative_int: -1,
    checks.check_bool: "yes",
}
PLAIN = {int: 2.5, float: float("nan"), str: 3, bool: "yes"}
#: Tried, in order, for a rule a chapter defines itself (a keep probability, a regime, a model name ...).
CANDIDATES: tuple[Any, ...] = ("not-an-option", -1, 1.5, None, [], {})

#: Builder modules whose parameters are not annotated yet, each with the reason.
NOT_YET: dict[str, str] = {}  # module -> why its builders do not state their rules yet (none today)


def page_of(builder) -> str:
    return "docs/chapters/" + builder.module.rsplit(".", 1)[-1].replace("_", "-") + ".md"


def directive(builder, args: dict[str, Any]) -> Directive:
    page_args = {"caption": "c"} if builder.kind == "figure" else {}
    return Directive(builder.kind, builder.name, {**args, **page_args}, page_of(builder), 7, 0, 0, "<!-- x -->")


def rejected(rule, name: str):
    """The first candidate ``rule`` refuses (a rule that refuses none fails the test)."""
    for value in CANDIDATES:
        try:
            rule(name, value)
        except ValueError:
            return value
    raise AssertionError(f"the rule of {name} accepts every one of {CANDIDATES}")


def bad_values(name: str, hint) -> list[tuple[Any, str]]:
    """(value, the name its error must carry) pairs that the rule of ``hint`` rejects; [] when it states none."""
    origin = typing.get_origin(hint)
    if origin is Annotated:
        rule = next((m for m in hint.__metadata__ if isinstance(m, checks.Check)), None)
        if rule is None:
            return bad_values(name, typing.get_args(hint)[0])
        return [(REJECTED[rule.func] if rule.func in REJECTED else rejected(rule.func, name), name)]
    if hint in PLAIN:
        return [(PLAIN[hint], name)]
    if origin is Literal:
        return [("not-an-option", name)]
    if origin in (Union, types.UnionType):
        (inner,) = [m for m in typing.get_args(hint) if m is not type(None)]
        return bad_values(name, inner)
    if origin in (list, tuple, Sequence):
        item = typing.get_args(hint)[0]
        return [([], name)] + [([value], f"{name}[0]") for value, _ in bad_values(f"{name}[0]", item)]
    return []


def hints(builder) -> dict[str, Any]:
    return typing.get_type_hints(inspect.unwrap(builder.func), include_extras=True)


CASES = [
    pytest.param(b, name, value, named, id=f"{b.name}:{named}={value!r}")
    for b in registry.all_builders()
    for name, hint in hints(b).items()
    if name in b.parameters
    for value, named in bad_values(name, hint)
]


def test_every_builder_parameter_states_its_rule():
    """A parameter with no rule would reach the builder unchecked (a bare object() passes nothing that checks)."""
    loose, stale = [], []
    for b in registry.all_builders():
        unchecked = []
        for name in b.parameters:
            try:
                checks.check_arguments(b.func, {name: object()})
                unchecked.append(name)
            except ValueError:
                pass
        if b.module in NOT_YET:
            stale += [] if unchecked else [b.module]
        elif unchecked:
            loose.append(f"{b.name} ({b.module}): {', '.join(unchecked)}")
    assert not loose, "parameters without a rule in their annotation: " + "; ".join(loose)
    assert not stale, f"{sorted(set(stale))} state every rule now: remove them from NOT_YET"


def test_the_cases_cover_every_rule_kind():
    kinds = {type(value).__name__ for _, _, value, _ in (c.values for c in CASES)}
    assert {"int", "float", "str", "list"} <= kinds and len(CASES) > 100


@pytest.mark.parametrize("builder, name, value, named", CASES)
def test_a_value_its_rule_rejects_fails_the_build_naming_it(builder, name, value, named):
    with pytest.raises(DirectiveError) as info:
        build_content(directive(builder, {name: value}))
    message = str(info.value)
    assert message.startswith(f"{page_of(builder)}:7: "), message
    # A list of lists names the innermost element it refused: pairs[0][0] for pairs[0] = ["bad"].
    assert re.search(rf"{builder.kind} {re.escape(repr(builder.name))}: {re.escape(named)}(\[\d+\])* must ", message), (
        message
    )
    assert "raised" not in message, "the argument was refused by the builder's body, not by its signature"


#: Relations between arguments (and rules beyond an annotation), checked in the builders' bodies.
RELATIONS: list[tuple[str, dict[str, Any], str]] = [
    ("gradient_highway", {"steps": 40, "mark": 50}, "mark must be a step within the plot (at most steps=40), got 50"),
    ("dropout_spread", {"runs": 10, "min_runs": 100}, "min_runs must be at most runs (10), got 100"),
    ("jacobian_norm_table", {"distance": 50, "steps": 40}, "distance must be at most steps (40), got 50"),
    ("init_norm_table", {"distance": 50, "steps": 40}, "distance must be at most steps (40), got 50"),
    ("edge_of_chaos", {"steps": 50, "burn_in": 50}, "burn_in must be below steps (50), got 50"),
    ("cell_bound_check", {"hidden": 4, "show": 5}, "show must be at most hidden = 4 coordinates, got 5"),
    ("horizon_vs_gate", {"low": 0.9, "high": 0.5}, "low must be below high, got low=0.9, high=0.5"),
    ("distance_curves", {"distances": [0]}, "distances must reach at least one edge, got [0]"),
    ("model_tally_table", {"tied": True, "d_h": 1000}, "d_h must equal d_emb (1500) for a tied readout"),
    ("error_vs_data", {"decades": 1.5}, "decades must reach every marked point: an improvement of 0.3 needs 1.94"),
    ("bptt_table", {"target": [1, 2]}, "target must be one number or a sequence of 3 entries"),
    ("leaky_pulse", {"taus": [2, 2.5]}, "taus[1] must be a whole number of steps greater than 1, got 2.5"),
    ("initial_horizon_cdf", {"t_max": 2}, "t_max must be greater than 2 (chrono draws u from [1, t_max - 1])"),
    (
        "default_start_table",
        {"models": ["gru:2"]},
        "models[0] must be a model: 'rnn', 'gru', 'lstm', 'lstm:B' with B a forget bias",
    ),
    ("carry_vs_other_paths", {"strong": {"gain": 2}}, "strong has unknown key(s) 'gain'"),
    ("carry_vs_other_paths", {"strong": {"scale": -1}}, "strong['scale'] must be a positive finite number, got -1"),
    ("clipping_table", {"grads": {"b": [1, "x"]}}, "grads['b'] must be a real number"),
    ("truncation_grid", {"settings": [[4, 0]]}, "settings[0][1] (k2) must be a whole number >= 1, got 0"),
    ("gru_conventions_diagram", {"left": ["z_keeps", "inside"]}, "left[1] must be one of 'after', 'before'"),
    ("probe_table", {"seeds": 1}, "seeds must be at least 2 (a spread needs two runs), got 1"),
    ("forget_bias_explorer", {"low": 3, "high": 1}, "high must be above low, got low=3.0, high=1.0"),
    ("forget_bias_explorer", {"step": 0.3}, "step must divide high - low into at most 200 parts"),
    ("forget_bias_explorer", {"start": 1.1}, "start must be one of the slider's positions"),
    ("forget_bias_explorer", {"max_steps": 5}, "max_steps must be a whole number of at least 10, got 5"),
    ("forget_bias_explorer", {"points": 1}, "points must be a whole number from 2 to 1000, got 1"),
]


@pytest.mark.parametrize("name, args, expected", RELATIONS, ids=[f"{n}:{','.join(a)}" for n, a, _ in RELATIONS])
def test_a_relation_between_arguments_fails_naming_them(name, args, expected):
    (builder,) = [b for b in registry.all_builders() if b.name == name]
    with pytest.raises(DirectiveError) as info:
        build_content(directive(builder, args))
    assert str(info.value).startswith(f"{page_of(builder)}:7: ") and expected in str(info.value), str(info.value)

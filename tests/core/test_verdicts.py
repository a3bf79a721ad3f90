"""rnnmem.verdicts: each of the four rules, the power a null carries, the p-value's printed form."""

import pytest

from rnnmem import stats, verdicts


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [(17, 2, "more"), (2, 17, "fewer"), (20, 0, "more"), (0, 20, "fewer")],
)
def test_a_difference_is_stated_below_alpha_whichever_the_rates(a, b, kind):
    v = verdicts.compare(a, 20, b, 20)
    assert v.p < verdicts.ALPHA and v.kind == kind and v.differ and v.can_tell
    assert v.verdict == "a difference" and v.phrase == f"{kind} successes than"


@pytest.mark.parametrize(("a", "b"), [(0, 0), (1, 0), (2, 2), (0, 2), (1, 2)])
def test_two_arms_at_the_floor_get_no_verdict_never_a_null(a, b):
    v = verdicts.compare(a, 20, b, 20)
    assert v.p >= verdicts.ALPHA and v.kind == "floor" and not v.can_tell and not v.differ
    assert "floor" in v.verdict and "no detectable difference" not in v.verdict + v.phrase


@pytest.mark.parametrize(("a", "b"), [(20, 20), (19, 18), (18, 20)])
def test_two_arms_at_the_ceiling_get_no_verdict(a, b):
    v = verdicts.compare(a, 20, b, 20)
    assert v.kind == "ceiling" and not v.can_tell and "ceiling" in v.verdict


def test_one_arm_off_the_floor_is_a_null_with_its_power():
    # 3 of 20 is above the floor (15%), so 3 against 2 is a comparison the counts can make, and a weak one.
    v = verdicts.compare(3, 20, 2, 20)
    assert v.kind == "null" and v.can_tell
    assert v.power == pytest.approx(stats.fisher_power(0.1 + verdicts.EFFECT, 0.1, 20, 20, verdicts.ALPHA))
    assert f"{v.power:.2f}" in v.verdict and f"{verdicts.EFFECT:g}" in v.verdict
    assert v.detectable == stats.detectable_difference(0.1, 20, 20, verdicts.ALPHA, verdicts.POWER)


def test_the_power_is_taken_toward_the_side_with_room():
    # From a reference of 90% a difference of 0.4 has room only downward; from 10%, only upward.
    high, low = verdicts.compare(10, 20, 18, 20), verdicts.compare(10, 20, 2, 20)
    assert high.power == pytest.approx(stats.fisher_power(0.5, 0.9, 20, 20, verdicts.ALPHA))
    assert low.power == pytest.approx(stats.fisher_power(0.5, 0.1, 20, 20, verdicts.ALPHA))
    null = verdicts.compare(14, 20, 16, 20)
    assert null.kind == "null"
    assert null.power == pytest.approx(stats.fisher_power(0.4, 0.8, 20, 20, verdicts.ALPHA))


def test_more_seeds_give_more_power_against_the_same_effect():
    small, large = verdicts.compare(10, 20, 11, 20), verdicts.compare(50, 100, 55, 100)
    assert small.kind == large.kind == "null" and large.power > small.power


@pytest.mark.parametrize(
    ("args", "kwargs", "named"),
    [
        ((1, 0, 1, 20), {}, "n_a"),
        ((-1, 20, 1, 20), {}, "a"),
        ((21, 20, 1, 20), {}, "a and b"),
        ((1, 20, 1, 20), {"effect": 0.0}, "effect"),
        ((1, 20, 1, 20), {"alpha": 1.5}, "alpha"),
    ],
)
def test_bad_input_is_refused_by_name(args, kwargs, named):
    with pytest.raises(ValueError, match=named):
        verdicts.compare(*args, **kwargs)


@pytest.mark.parametrize(
    ("p", "text"),
    [
        (1.0, "1.00"),
        (0.5, "0.50"),
        (0.05, "0.05"),
        (0.0123, "0.012"),
        (0.001, "0.001"),
        (3.2e-6, "3.2 × 10⁻⁶"),
        (1.45e-11, "1.5 × 10⁻¹¹"),
        (2e-7, "2 × 10⁻⁷"),
        (0.0, "0"),
    ],
)
def test_a_p_value_reads_after_p_equals(p, text):
    assert verdicts.p_text(p) == text and "<" not in text


def test_a_p_value_outside_zero_one_is_refused():
    with pytest.raises(ValueError, match="p must be a probability"):
        verdicts.p_text(1.2)

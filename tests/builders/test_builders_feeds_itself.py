"""The figures and tables of "A network that feeds itself": each renders, and a bad argument is named."""

from __future__ import annotations

import pytest

from rnnmem.site.directives import DirectiveError, find_directives
from rnnmem.site.render import Renderer



def one(comment: str):
    (d,) = find_directives("# T\n\n" + comment + "\n", "docs/chapters/feeds-itself.md")
    return d


def test_the_table_agrees_with_the_numbers_in_the_caption(tmp_path):
    d = one('<!-- table: jacobian_norm_table radii=[0.8, 1.0, 1.2] input_scales=[0.1, 1.0] -->')
    text = Renderer(tmp_path).render(d).content.decode()
    for value in ("2.52e-05", "0.137", "38", "2.83e-06", "0.00885", "0.895", "0.727", "| 16 |"):
        assert value in text


@pytest.mark.parametrize(
    "comment, expected",
    [
        ('<!-- figure: jacobian_norms radii=[0.8, -1.0] caption="c" -->', "radii[1] must be a positive"),
        ('<!-- figure: jacobian_norms radii=[] caption="c" -->', "radii must be a non-empty list"),
        ('<!-- figure: jacobian_norms input_scales=[0] caption="c" -->', "input_scales[0] must be a positive"),
        ('<!-- figure: jacobian_norms steps=0 caption="c" -->', "steps must be a whole number >= 1"),
        ('<!-- figure: jacobian_norms hidden=2.5 caption="c" -->', "hidden must be a whole number >= 1"),
        ('<!-- figure: jacobian_norms seed=-1 caption="c" -->', "seed must be a whole number >= 0"),
        ('<!-- table: jacobian_norm_table distance=50 steps=40 -->', "distance must be at most steps (40)"),
        ('<!-- table: jacobian_norm_table level=1.5 -->', "level must be a gate value strictly between 0 and 1"),
        ('<!-- table: jacobian_norm_table radii=0.8 -->', "radii must be a non-empty list"),
        ('<!-- figure: nonnormal_growth_curve radius=0 caption="c" -->', "radius must be a positive"),
        ('<!-- figure: nonnormal_growth_curve size=0 caption="c" -->', "size must be a whole number >= 1"),
        ('<!-- figure: nonnormal_growth_curve coupling="x" caption="c" -->', "coupling must be a real number"),
        ('<!-- figure: nonnormal_growth_curve steps=0 caption="c" -->', "steps must be a whole number >= 1"),
    ],
)
def test_a_bad_argument_is_named(tmp_path, comment, expected):
    with pytest.raises(DirectiveError) as info:
        Renderer(tmp_path).render(one(comment))
    assert expected in str(info.value)

"""The figure of the home page: what is left of a signal after n steps, tanh RNN against LSTM."""

from __future__ import annotations

import numpy as np

from rnnmem import jacobians
from rnnmem.checks import Finite, NonNegativeInt, OpenUnit, Positive, PositiveInt, check_positive_int, check_seed

from ..registry import figure
from ..style import INK, PALETTE, new_figure


def signal_left(steps: int, hidden: int, radius: float, forget_bias: float, seed: int) -> dict[str, np.ndarray]:
    r"""How much of a state change survives ``n`` steps, for a random tanh RNN and a random LSTM.

    Both networks are drawn as PyTorch draws them, fed the same standard-normal
    inputs from a zero state. The RNN's ``W_hh`` is rescaled to spectral radius
    ``radius``; the LSTM's forget gates get ``forget_bias`` added to their bias.
    Returned for ``n = 0..steps``: ``rnn`` is :math:`\|\partial h_T/\partial h_{T-n}\|_2`,
    ``lstm`` is :math:`\|\partial (c_T, h_T)/\partial (c_{T-n}, h_{T-n})\|_2`
    and ``carry`` the same norm of the carry line alone, a product of
    :math:`\operatorname{diag}(f)`: the largest unit's product of forget gates.
    """
    T = check_positive_int("steps", steps)
    H = check_positive_int("hidden", hidden)
    rng = check_seed("seed", seed)
    D = 4
    xs = rng.standard_normal((T, D))
    W = jacobians.random_rnn(D, H, radius, rng)
    _, Js = jacobians.rnn_trajectory(xs, np.zeros(H), **W)
    rnn = jacobians.distance_norms(Js)
    L = jacobians.random_lstm(D, H, seed=rng, forget_bias=forget_bias)
    steps_ = jacobians.lstm_trajectory(xs, np.zeros(H), np.zeros(H), **L)
    lstm = jacobians.distance_norms(steps_)
    f = np.stack([np.diag(J.dc_dc) for J in steps_])  # (T, H) forget gates
    carry = np.concatenate([[1.0], np.cumprod(f[::-1], axis=0).max(axis=1)])
    return {"rnn": rnn, "lstm": lstm, "carry": carry}


def _crossing(curve: np.ndarray, level: float) -> int | None:
    below = np.nonzero(curve < level)[0]
    return int(below[0]) if below.size else None


#: The hero's text (points): its figure opens the home page, so it reads on a phone at a glance.
HERO_PT = 13.0


@figure()
def hero(
    steps: PositiveInt = 100,
    hidden: PositiveInt = 32,
    radius: Positive = 0.9,
    forget_bias: Finite = 3.0,
    level: OpenUnit = 0.01,
    seed: NonNegativeInt = 0,
):
    """The signal left after n steps: tanh RNN, LSTM (full Jacobian), LSTM carry line; log axis.

    Each curve is named beside it rather than in a legend, and the axis is marked every fourth power
    of ten, in text of :data:`HERO_PT` points: fewer, larger labels, legible on a phone.
    """
    from matplotlib.ticker import NullLocator

    curves = signal_left(steps, hidden, radius, forget_bias, seed)
    n = np.arange(len(curves["rnn"]))
    fig, ax = new_figure(height=4.0)
    ax.semilogy(n, curves["rnn"], color=PALETTE[0])
    ax.semilogy(n, curves["lstm"], color=PALETTE[1])
    ax.semilogy(n, curves["carry"], color=PALETTE[1], linestyle="--", linewidth=1.5)
    ax.axhline(level, color=INK, linestyle=":", linewidth=1.0)
    text = {"fontsize": HERO_PT, "textcoords": "offset points"}
    # Under the dotted level at the left, where the tanh RNN's curve is still above it.
    ax.annotate(f"{level:.0%} left", (0, level), xytext=(3, -3), ha="left", va="top", color=INK, **text)
    mid = steps // 2  # the tanh RNN's name ends at mid-way, below its falling curve
    ax.annotate(
        f"tanh RNN, $\\rho = {radius:g}$",
        (mid, curves["rnn"][mid]),
        xytext=(-4, -8),
        ha="right",
        va="top",
        color=PALETTE[0],
        **text,
    )
    ax.annotate(
        f"LSTM, all paths, $b_f = {forget_bias:g}$",
        (0, curves["lstm"][: steps // 2].max()),
        xytext=(4, 4),
        ha="left",
        va="bottom",
        color=PALETTE[1],
        **text,
    )
    late = (11 * steps) // 20  # the carry line's name starts past mid-way, above its falling curve
    ax.annotate(
        "carry line alone",
        (late, curves["carry"][late]),
        xytext=(0, 4),
        ha="left",
        va="bottom",
        color=PALETTE[1],
        **text,
    )
    ax.set_xlim(0, steps)
    top = max(float(c.max()) for c in curves.values())
    ax.set_ylim(bottom=max(1e-12, float(curves["rnn"][-1]) / 3), top=30 * top)
    low, high = np.log10(ax.get_ylim())
    # Every second power of ten, so that one is labelled above 1 when a curve rises past it.
    powers = np.arange(2 * np.ceil(low / 2), high, 2)
    ax.set_yticks(10.0**powers, ["1" if p == 0 else f"$10^{{{p:.0f}}}$" for p in powers])
    ax.yaxis.set_minor_locator(NullLocator())
    ax.tick_params(labelsize=HERO_PT)
    ax.set_xlabel("steps back, $n$", fontsize=HERO_PT)
    ax.set_ylabel("signal left", fontsize=HERO_PT)
    return fig, hero_values(curves, steps, level)


def hero_values(curves: dict[str, np.ndarray], steps: int, level: float) -> dict:
    """What the home page's caption, alt text and prose say about the hero figure, from its curves.

    ``*_left``: each curve at the last step; ``*_crossing``: the first step
    where it is below ``level`` (None when it never is); ``lstm_min``: the
    lowest the LSTM's whole Jacobian gets.
    """
    return {
        "steps": steps,
        "level": level,
        "rnn_left": float(curves["rnn"][-1]),
        "lstm_left": float(curves["lstm"][-1]),
        "lstm_min": float(curves["lstm"].min()),
        "carry_left": float(curves["carry"][-1]),
        "rnn_crossing": _crossing(curves["rnn"], level),
        "lstm_crossing": _crossing(curves["lstm"], level),
        "carry_crossing": _crossing(curves["carry"], level),
    }

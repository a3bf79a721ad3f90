"""Figures and tables of the chapter "A network that feeds itself"."""

from __future__ import annotations

import numpy as np

from rnnmem import jacobians
from rnnmem.checks import check_list, check_nonnegative_int, check_open_unit, check_positive, check_positive_int

from ..registry import figure, table
from ..style import INK, PALETTE, new_figure
from ..tables import Table


def _positives(name: str, values) -> list[float]:
    return [float(v) for v in check_list(name, values, check_positive, "positive numbers")]


def _run(radius: float, hidden: int, steps: int, input_scale: float, seed: int):
    """The network of :func:`rnnmem.jacobians.rnn_norms_by_distance`, with its states and weights."""
    rng = np.random.default_rng(seed)
    W = jacobians.random_rnn(4, hidden, radius, rng)
    xs = input_scale * rng.standard_normal((steps, 4))
    states, Js = jacobians.rnn_trajectory(xs, np.zeros(hidden), **W)
    norms = jacobians.distance_norms(Js)
    same = jacobians.rnn_norms_by_distance(radius, hidden=hidden, steps=steps, input_size=4,
                                           input_scale=input_scale, seed=seed)
    if not np.array_equal(norms, same):
        raise RuntimeError("the table's network is no longer the one rnn_norms_by_distance draws")
    return W, states, norms


@figure()
def jacobian_norms(radii=(0.8, 1.0, 1.2), input_scales=(0.1, 1.0), steps=40, hidden=32, seed=0):
    """||dh_T/dh_{T-k}|| against k on a random tanh RNN, one line per spectral radius, one panel per input scale."""
    radii = _positives("radii", radii)
    scales = _positives("input_scales", input_scales)
    steps = check_positive_int("steps", steps)
    hidden = check_positive_int("hidden", hidden)
    seed = check_nonnegative_int("seed", seed)
    fig, axes = new_figure(ncols=len(scales), sharey=True, height=4.0)
    axes = np.atleast_1d(axes)
    k = np.arange(steps + 1)
    for ax, scale in zip(axes, scales):
        for colour, rho in zip(PALETTE, radii):
            norms = jacobians.rnn_norms_by_distance(rho, hidden=hidden, steps=steps, input_size=4,
                                                    input_scale=scale, seed=seed)
            ax.semilogy(k, norms, color=colour, label=f"$\\rho = {rho:g}$")
            ax.semilogy(k, rho ** k, color=colour, linestyle=":", linewidth=1.0)
        ax.axhline(1.0, color=INK, linewidth=0.6)
        ax.set_xlim(0, steps)
        ax.set_title(f"inputs of size {scale:g}")
        ax.set_xlabel("distance back, $k$ steps")
    axes[0].set_ylabel(r"$\|\partial h_T / \partial h_{T-k}\|_2$")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3,
               title="solid: measured, dotted: $\\rho^k$")
    return fig


@table()
def jacobian_norm_table(radii=(0.8, 1.0, 1.2), input_scales=(0.1, 1.0), steps=40, hidden=32, seed=0,
                        distance=12, level=0.01):
    """Per radius and input scale: ||W_hh||, mean tanh', the product's norm at two distances, the mean factor."""
    radii = _positives("radii", radii)
    scales = _positives("input_scales", input_scales)
    steps = check_positive_int("steps", steps)
    hidden = check_positive_int("hidden", hidden)
    seed = check_nonnegative_int("seed", seed)
    distance = check_positive_int("distance", distance)
    if distance > steps:
        raise ValueError(f"distance must be at most steps ({steps}), got {distance}")
    level = check_open_unit("level", level)
    rows = []
    for scale in scales:
        for rho in radii:
            W, states, norms = _run(rho, hidden, steps, scale, seed)
            factor = float(norms[steps] ** (1.0 / steps))
            below = np.flatnonzero(norms < level)
            reach = str(int(below[0])) if below.size else f"beyond {steps}"
            rows.append([f"{scale:g}", f"{rho:g}", f"{np.linalg.norm(W['W_hh'], 2):.3f}",
                         f"{float(np.mean(1 - states[1:] ** 2)):.3f}", f"{norms[distance]:.3g}",
                         f"{norms[steps]:.3g}", f"{factor:.3f}", reach])
    return Table(
        columns=["input size", "\\(\\rho(W_{hh})\\)", "\\(\\lVert W_{hh} \\rVert_2\\)", "mean \\(\\tanh'\\)",
                 f"norm at \\(k = {distance}\\)", f"norm at \\(k = {steps}\\)",
                 "mean factor per step", f"first \\(k\\) below {level:g}"],
        rows=rows,
    )


@figure()
def nonnormal_growth_curve(radius=0.5, size=4, coupling=1.0, steps=20):
    """||W^k v|| for the shifted-diagonal W of spectral radius `radius`, against rho^k and ||W||^k."""
    radius = float(check_positive("radius", radius))
    size = check_positive_int("size", size)
    steps = check_positive_int("steps", steps)
    W, v, curve = jacobians.nonnormal_growth(radius=radius, size=size, coupling=coupling, steps=steps)
    sigma = float(np.linalg.norm(W, 2))
    k = np.arange(steps + 1)
    fig, ax = new_figure()
    ax.semilogy(k, curve, marker="o", markersize=3.5, label=r"$\|W^k v\|$, measured")
    ax.semilogy(k, radius ** k, linestyle="--", label=f"$\\rho^k$, eigenvalue alone ($\\rho = {radius:g}$)")
    upper = sigma ** k
    shown = upper <= 3 * curve.max()
    ax.semilogy(k[shown], upper[shown], linestyle=":",
                label=f"$\\|W\\|_2^k$, the bound ($\\|W\\|_2 = {sigma:.3f}$)")
    peak = int(curve.argmax())
    ax.annotate(f"peak {curve[peak]:.2f} at $k = {peak}$", (peak, curve[peak]), textcoords="offset points",
                xytext=(30, 6), ha="left", va="bottom", color=INK,
                arrowprops={"arrowstyle": "-", "color": INK, "linewidth": 0.6})
    ax.axhline(1.0, color=INK, linewidth=0.6)
    ax.set_xlim(0, steps)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("steps, $k$")
    ax.set_ylabel("length of the vector")
    ax.legend(loc="lower left")
    return fig

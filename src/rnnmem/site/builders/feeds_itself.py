"""Figures and tables of the chapter "A network that feeds itself"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rnnmem import jacobians
from rnnmem.checks import Finite, NonNegativeInt, OpenUnit, Positive, PositiveInt

from ..registry import figure, table
from ..style import INK, PALETTE, new_figure
from ..tables import Table


def _key(x: float) -> str:
    """A value's key in the values a builder returns: never all digits, so a placeholder reads it as a string."""
    text = f"{x:g}"
    return text if any(c in text for c in ".e") else text + ".0"


@figure()
def jacobian_norms(
    radii: Sequence[Positive] = (0.8, 1.0, 1.2),
    input_scales: Sequence[Positive] = (0.1, 1.0),
    steps: PositiveInt = 40,
    hidden: PositiveInt = 32,
    seed: NonNegativeInt = 0,
):
    """||dh_T/dh_{T-k}|| against k on a random tanh RNN, one line per spectral radius, one panel per input scale."""
    radii, scales = [float(r) for r in radii], [float(a) for a in input_scales]
    fig, axes = new_figure(ncols=len(scales), sharey=True, height=4.0)
    axes = np.atleast_1d(axes)
    k = np.arange(steps + 1)
    near: dict[str, dict[str, float]] = {}
    far: dict[str, dict[str, float]] = {}
    for ax, scale in zip(axes, scales):
        near[_key(scale)], far[_key(scale)] = {}, {}
        for colour, rho in zip(PALETTE, radii):
            norms = jacobians.rnn_norms_by_distance(
                rho, hidden=hidden, steps=steps, input_size=4, input_scale=scale, seed=seed
            )
            near[_key(scale)][_key(rho)] = float(norms[min(12, steps)])
            far[_key(scale)][_key(rho)] = float(norms[steps])
            ax.semilogy(k, norms, color=colour, label=f"$\\rho = {rho:g}$")
            ax.semilogy(k, rho**k, color=colour, linestyle=":", linewidth=1.0)
        ax.axhline(1.0, color=INK, linewidth=0.6)
        ax.set_xlim(0, steps)
        ax.set_title(f"inputs of size {scale:g}")
        ax.set_xlabel("distance back, $k$ steps")
    axes[0].set_ylabel(r"$\|\partial h_T / \partial h_{T-k}\|_2$")
    fig.legend(
        *axes[0].get_legend_handles_labels(),
        loc="outside lower center",
        ncols=3,
        title="solid: measured, dotted: $\\rho^k$",
    )
    values = {
        "near": near,
        "far": far,
        "power": {_key(rho): float(rho**steps) for rho in radii},
        "steps": steps,
        "hidden": hidden,
        "near_k": min(12, steps),
    }
    return fig, values


@table()
def jacobian_norm_table(
    radii: Sequence[Positive] = (0.8, 1.0, 1.2),
    input_scales: Sequence[Positive] = (0.1, 1.0),
    steps: PositiveInt = 40,
    hidden: PositiveInt = 32,
    seed: NonNegativeInt = 0,
    distance: PositiveInt = 12,
    level: OpenUnit = 0.01,
):
    """Per radius and input scale: ||W_hh||, mean tanh', the product's norm at two distances, the mean factor.

    Each row is one :func:`rnnmem.jacobians.random_rnn_run` (the network :func:`rnnmem.jacobians.rnn_norms_by_distance`
    measures), with its :attr:`~rnnmem.jacobians.RNNRun.mean_factor` and :attr:`~rnnmem.jacobians.RNNRun.mean_slope`.
    """
    radii, scales = [float(r) for r in radii], [float(a) for a in input_scales]
    if distance > steps:
        raise ValueError(f"distance must be at most steps ({steps}), got {distance}")
    rows, runs = [], []
    for scale in scales:
        for rho in radii:
            run = jacobians.random_rnn_run(rho, hidden=hidden, steps=steps, input_size=4, input_scale=scale, seed=seed)
            W, norms, factor, slope = run.weights, run.norms, run.mean_factor, run.mean_slope
            below = np.flatnonzero(norms < level)
            reach = str(int(below[0])) if below.size else f"beyond {steps}"
            rows.append(
                [
                    f"{scale:g}",
                    f"{rho:g}",
                    f"{np.linalg.norm(W['W_hh'], 2):.3f}",
                    f"{slope:.3f}",
                    f"{norms[distance]:.3g}",
                    f"{norms[steps]:.3g}",
                    f"{factor:.3f}",
                    f"{rho * slope:.3f}",
                    reach,
                ]
            )
            runs.append((factor, rho * slope))
    gap = max(abs(f - p) / f for f, p in runs)
    return Table(
        columns=[
            "input size",
            "\\(\\rho(W_{hh})\\)",
            "\\(\\lVert W_{hh} \\rVert_2\\)",
            "mean \\(\\tanh'\\)",
            f"norm at \\(k = {distance}\\)",
            f"norm at \\(k = {steps}\\)",
            "mean factor per step",
            "\\(\\rho \\times\\) mean \\(\\tanh'\\)",
            f"first \\(k\\) below {level:g}",
        ],
        rows=rows,
    ), {"largest_gap": gap, "runs": len(runs)}


@figure()
def nonnormal_growth_curve(
    radius: Positive = 0.5, size: PositiveInt = 4, coupling: Finite = 1.0, steps: PositiveInt = 20
):
    """||W^k v|| for the shifted-diagonal W of spectral radius `radius`, against rho^k and ||W||^k."""
    radius = float(radius)
    W, v, curve = jacobians.nonnormal_growth(radius=radius, size=size, coupling=coupling, steps=steps)
    sigma = float(np.linalg.norm(W, 2))
    k = np.arange(steps + 1)
    fig, ax = new_figure()
    ax.semilogy(k, curve, marker="o", markersize=3.5, label=r"$\|W^k v\|$, measured")
    ax.semilogy(k, radius**k, linestyle="--", label=f"$\\rho^k$, eigenvalue alone ($\\rho = {radius:g}$)")
    upper = sigma**k
    shown = upper <= 3 * curve.max()
    ax.semilogy(k[shown], upper[shown], linestyle=":", label=f"$\\|W\\|_2^k$, the bound ($\\|W\\|_2 = {sigma:.3f}$)")
    peak = int(curve.argmax())
    ax.annotate(
        f"peak {curve[peak]:.2f} at $k = {peak}$",
        (peak, curve[peak]),
        textcoords="offset points",
        xytext=(30, 6),
        ha="left",
        va="bottom",
        color=INK,
        arrowprops={"arrowstyle": "-", "color": INK, "linewidth": 0.6},
    )
    ax.axhline(1.0, color=INK, linewidth=0.6)
    ax.set_xlim(0, steps)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("steps, $k$")
    ax.set_ylabel("length of the vector")
    ax.legend(loc="lower left")
    below = np.flatnonzero(curve[1:] < 1.0)
    values = {
        "peak": float(curve[peak]),
        "peak_step": peak,
        "norm": sigma,
        "radius": radius,
        "size": size,
        "back_below": int(below[0]) + 1 if below.size else None,
        "end": float(curve[-1]),
        "eigen_end": float(radius**steps),
        "steps": steps,
    }
    return fig, values


@figure()
def edge_of_chaos(
    radii: Sequence[Positive] = (0.8, 1.0, 1.2, 2.0),
    grid: Sequence[Positive] = (0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0),
    hidden: PositiveInt = 64,
    steps: PositiveInt = 200,
    burn_in: NonNegativeInt = 100,
    seeds: PositiveInt = 3,
    start: Positive = 1e-3,
):
    """A free-running tanh RNN: its state size over time per radius (left), its long-run growth rate against rho (right)."""
    radii, grid, start = [float(r) for r in radii], sorted(float(r) for r in grid), float(start)
    if burn_in >= steps:
        raise ValueError(f"burn_in must be below steps ({steps}), got {burn_in}")
    fig, (left, right) = new_figure(ncols=2, height=3.6)
    k = np.arange(steps + 1)
    sizes = {}
    for colour, rho in zip(PALETTE, radii):
        states, _ = jacobians.free_run(rho, hidden=hidden, steps=steps, start=start, seed=0)
        size = np.sqrt(np.mean(states**2, axis=1))
        sizes[_key(rho)] = float(size[-1])
        left.semilogy(k, np.maximum(size, 1e-300), color=colour, label=f"$\\rho = {rho:g}$")
    left.set_ylim(start * 1e-3, 2.0)
    left.set_xlim(0, steps)
    left.set_xlabel("step $t$")
    left.set_ylabel(r"state size, $\sqrt{\mathrm{mean}\ h_{t,j}^2}$")
    left.legend(loc="lower left", fontsize=8)
    rates = np.array(
        [
            [
                jacobians.growth_rate(
                    jacobians.free_run(rho, hidden=hidden, steps=steps, start=start, seed=s)[1], burn_in=burn_in
                )
                for s in range(seeds)
            ]
            for rho in grid
        ]
    )
    median = np.median(rates, axis=1)
    right.fill_between(
        grid,
        rates.min(axis=1),
        rates.max(axis=1),
        color=PALETTE[0],
        alpha=0.25,
        linewidth=0,
        label=f"range over {seeds} seeds",
    )
    right.plot(grid, median, color=PALETTE[0], marker="o", markersize=3.5, label="median")
    right.plot(grid, grid, color=INK, linestyle=":", linewidth=1.0, label=r"$\rho$")
    right.axhline(1.0, color=INK, linewidth=0.6)
    right.set_ylim(0, max(1.6, float(rates.max()) * 1.1))
    right.set_xlabel(r"spectral radius $\rho(W_{hh})$")
    right.set_ylabel("long-run growth rate per step")
    right.legend(loc="upper left", fontsize=8)
    above = [rho for rho, m in zip(grid, median) if m > 1.0]
    values = {
        "sizes": sizes,
        "rates": {_key(rho): float(m) for rho, m in zip(grid, median)},
        "first_above_one": above[0] if above else None,
        "hidden": hidden,
        "seeds": seeds,
    }
    return fig, values


_INIT_ROWS = (
    ("PyTorch's draw", "pytorch", "tanh", False, None),
    ("PyTorch's draw, rescaled to \\(\\rho = 1\\)", "pytorch", "tanh", False, 1.0),
    ("orthogonal", "orthogonal", "tanh", False, None),
    ("identity", "identity", "tanh", False, None),
    ("identity, ReLU, zero biases (IRNN)", "identity", "relu", True, None),
)


def _init_norms(init_name, nonlinearity, zero_biases, radius, hidden, steps, input_scale, seed):
    if radius is None:
        return jacobians.init_norms_by_distance(
            init_name,
            hidden=hidden,
            steps=steps,
            input_scale=input_scale,
            seed=seed,
            nonlinearity=nonlinearity,
            zero_biases=zero_biases,
        )
    return jacobians.rnn_norms_by_distance(radius, hidden=hidden, steps=steps, input_scale=input_scale, seed=seed)


@table()
def init_norm_table(
    hidden: PositiveInt = 32,
    steps: PositiveInt = 40,
    input_scale: Positive = 1.0,
    distance: PositiveInt = 12,
    seeds: PositiveInt = 5,
):
    """Per starting W_hh: ||dh_T/dh_{T-k}|| at k = distance and k = steps, median [min, max] over seeds."""
    scale = float(input_scale)
    if distance > steps:
        raise ValueError(f"distance must be at most steps ({steps}), got {distance}")
    rows = []
    values: dict[str, Any] = {}
    for label, init_name, nonlinearity, zero_biases, radius in _INIT_ROWS:
        runs = np.array(
            [_init_norms(init_name, nonlinearity, zero_biases, radius, hidden, steps, scale, s) for s in range(seeds)]
        )
        cells = []
        for k in (distance, steps):
            col = runs[:, k]
            cells.append(f"{np.median(col):.2g} [{col.min():.2g}, {col.max():.2g}]")
        rows.append([label, nonlinearity, *cells])
        key = init_name if radius is None else "pytorch_radius_one"
        key = "irnn" if nonlinearity == "relu" else key
        values[key] = {
            "near": float(np.median(runs[:, distance])),
            "far": float(np.median(runs[:, steps])),
            "far_min": float(runs[:, steps].min()),
            "far_max": float(runs[:, steps].max()),
        }
    values["seeds"] = seeds
    return Table(
        columns=["starting \\(W_{hh}\\)", "units", f"norm at \\(k = {distance}\\)", f"norm at \\(k = {steps}\\)"],
        rows=rows,
        align=["left", "left", "right", "right"],
        notes=f"Median [smallest, largest] over seeds 0 to {seeds - 1}; {hidden} units, inputs of size {scale:g}.",
    ), values

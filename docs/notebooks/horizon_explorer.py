# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Exploring horizons
#
# A notebook companion to [How far back memory reaches](../../chapters/horizon/).
# It tabulates how far a memory reaches for a sweep of forget-gate biases, and
# plots the level horizon against the bias.
#
# A gate $f = \sigma(b)$ keeps $f^n$ of a signal after $n$ steps; its 1% horizon
# is $\ln 0.01 / \ln f$ and its e-fold horizon $-1/\ln f$.

# %%
# %matplotlib inline
import numpy as np
import matplotlib.pyplot as plt

from rnnmem import memory
from rnnmem.site.style import style  # the book's figure style (needs matplotlib, like this notebook)

biases = np.arange(0, 7)
gates = memory.sigmoid(biases.astype(float))
for b, f in zip(biases, gates):
    print(f"b = {b}:  f = {f:.6f}   1% horizon {memory.horizon(f):8.1f}   "
          f"e-fold {memory.efold_horizon(f):7.2f}")

# %% [markdown]
# Each unit of bias multiplies $e^b$, and so, for large $b$, the horizon, by
# about $e$: the horizon grows exponentially in the bias, since
# $1/(1-f) = 1 + e^b$.

# %% alt="The 1% horizon, the e-fold horizon and 1 + e^b against the forget bias b from -2 to 8, on a logarithmic axis: all three rise about e-fold per unit of bias once b is above 2, the 1% horizon a constant factor above the e-fold one, which runs just under 1 + e^b."
b = np.linspace(-2, 8, 200)
f = memory.sigmoid(b)
with style():
    fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
    ax.semilogy(b, memory.horizon(f), label="1% horizon")
    ax.semilogy(b, memory.efold_horizon(f), label="e-fold horizon")
    ax.semilogy(b, 1 + np.exp(b), "--", label="$1 + e^b$")
    ax.set_xlabel("forget bias $b$")
    ax.set_ylabel("steps")
    ax.legend()
    plt.show()

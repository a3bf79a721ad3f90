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
# ## A sweep of biases
#
# A gate $f = \sigma(b)$ keeps $f^n$ of a signal after $n$ steps; its 1% horizon
# is $\ln 0.01 / \ln f$ and its e-fold horizon $-1/\ln f$.

# %%
# %matplotlib inline
import numpy as np
import matplotlib.pyplot as plt

from rnnmem import memory
from rnnmem.site.style import style  # the book's figure style

biases = np.arange(0, 7)
gates = memory.sigmoid(biases.astype(float))
print(" b  gate f    1% horizon  e-fold")
for b, f in zip(biases, gates):
    level, efold = memory.horizon(f), memory.efold_horizon(f)
    print(f"{b:2d}  {f:.6f}  {level:10.1f}  {efold:6.2f}")

# %% [markdown]
# ## The horizon against the bias
#
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

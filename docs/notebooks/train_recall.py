# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Train your own recall model
#
# A notebook companion to
# [Where training starts: the forget bias](../../chapters/forget-bias/)
# and [Memory, measured by training](../../chapters/memory-measured/).
# The first chapter shows how the forget-gate bias sets how far back an
# untrained LSTM remembers; the second trains models on recall and counts
# how many seeds learn it. Here you train a few LSTMs yourself, on a task
# and with a bias you choose, and watch them learn, or not.

# %% [markdown]
# ## The knobs
#
# Two numbers decide the experiment: how long the model must hold a token,
# and the forget-gate bias it starts from. The other two set its size: how
# many models to train per setting, and for how many updates. Change them
# here and run every cell again.

# %%
LAG = 20  # blank steps between the token and the query
FORGET_BIAS = 2.0  # the forget-gate bias b_f at the start
SEEDS = 6  # models trained per setting, one per seed
STEPS = 600  # updates (batches of 32 sequences) per model

# %% [markdown]
# ## The task
#
# Each sequence starts with one token from an alphabet of $K = 8$, written
# here as the letters A to H. Then come `LAG` blank steps (`_`) and a query
# marker (`?`). At the query the model must name the first token. Nothing
# between the token and the query carries any information, so the only
# difficulty is time: the token has to survive `LAG` steps in the model's
# memory. A model that guesses is right $1/K$ of the time, its chance
# level.

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np

from rnnmem import lab, tasks
from rnnmem.site.style import style  # the book's figure style

task = tasks.recall(lag=LAG, alphabet=8, distractors="blank")
# ids 0..K-1: the letters; K: the blank; K + 1: the query
symbols = "ABCDEFGH"[: task.alphabet] + "_?"


def decode(ids: np.ndarray) -> str:
    """Token ids as text, the middle cut if long."""
    text = "".join(symbols[i] for i in ids)
    if len(text) > 48:
        text = f"{text[:20]}...{text[-20:]}"
    return text


batch = task.sample(4, seed=0)  # inputs: (steps, seqs, K + 2)
ids = batch.inputs.argmax(axis=2)
print(f"steps per sequence: {task.length}")
print(f"chance level 1/K: {task.chance:.3f}")
for n in range(ids.shape[1]):
    answer = symbols[batch.targets[n]]
    print(f"{decode(ids[:, n])}  ->  {answer}")

# %% [markdown]
# The model does not see letters: each step is a one-hot vector of
# $K + 2$ numbers, one for each token, the blank and the query. The first
# three steps of the first sequence:

# %%
for t in range(3):
    print(f"step {t}: {batch.inputs[t, 0].astype(int)}")

# %% [markdown]
# ## Training
#
# The lab trains one LSTM of 16 units per seed, all at once, with Adam and
# gradient clipping. Every 25 updates each model is scored on the same
# held-out set of 256 sequences, which no model trains on. A model
# *succeeds* once its held-out accuracy reaches 0.9. Two settings run side
# by side: your `FORGET_BIAS`, and a bias of 0, where the forget gate
# starts at one half (set `FORGET_BIAS = 0` and only that one runs).

# %%
seeds = list(range(SEEDS))
threshold = 0.9  # held-out accuracy that counts as success
biases = list(dict.fromkeys([FORGET_BIAS, 0.0]))  # one if equal
results = {}
for bias in biases:
    lstms = lab.Model(
        "lstm", seeds=seeds, hidden=16, forget_bias=bias
    )
    schedule = lab.Schedule(
        steps=STEPS,
        batch=32,
        eval_every=25,
        eval_size=256,
        threshold=threshold,
    )
    results[bias] = lab.train(task, lstms, schedule)

# %% [markdown]
# ## What the runs learned
#
# Each faint line is one model, each bold line the median of its setting.
# Look at when the lines leave the chance level, whether they climb
# together or one by one, and how many reach the threshold before the
# updates run out.

# %% alt="Held-out accuracy, from 0 to 1, against the number of updates, for LSTMs trained on blank recall: one faint line per seed and a bold median line for each of two forget biases, the one chosen at the top of the notebook and 0, with a dashed line at the chance level and a dotted line at the success threshold 0.9."
with style():
    fig, ax = plt.subplots(dpi=80, layout="constrained")
    for k, (bias, result) in enumerate(results.items()):
        colour = f"C{k}"
        updates = result.eval_steps
        for scores in result.scores:
            ax.plot(updates, scores, c=colour, alpha=0.3, lw=1)
        median = np.median(result.scores, axis=0)
        label = f"$b_f = {bias:g}$ (median)"
        ax.plot(updates, median, c=colour, lw=2.5, label=label)
    ax.axhline(task.chance, c="0.4", ls="--", label="chance")
    ax.axhline(threshold, c="0.4", ls=":", label="threshold")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("updates")
    ax.set_ylabel("held-out accuracy")
    fig.legend(loc="outside upper center", ncols=2)
    plt.show()

# %% [markdown]
# The counts behind the picture: for each setting, how many seeds reached
# the threshold, and the median held-out accuracy at the last evaluation.

# %%
for bias, result in results.items():
    final = float(np.median(result.final_scores))
    k = f"{result.successes}/{SEEDS} reached {threshold:g}"
    print(f"b_f = {bias:g}: {k}, median final {final:.2f}")

# %% [markdown]
# ## Try this
#
# * Move `LAG` up and down and find, for each setting, the longest lag at
#   which its seeds still reach the threshold.
# * Try `FORGET_BIAS` at 1, 3 and 5. The [horizon](../../chapters/horizon/)
#   of a gate $\sigma(b)$ grows about $e$-fold per unit of bias: compare it
#   with `LAG`.
# * Give the models more `STEPS` and see whether a setting that looked
#   stuck was only slow.
# * Change `SEEDS`: with few seeds a count moves by one seed at a time, so
#   read a difference of one or two as noise.

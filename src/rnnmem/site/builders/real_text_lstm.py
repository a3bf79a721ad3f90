"""Figures and tables of "Real text": the LSTM language model beside the tanh RNN, and where the gradient lands.

**The design, fixed before any result was read.**

* Both networks, the tanh RNN (:class:`rnnmem.charlm.CharRNN`) and the LSTM
  (:class:`rnnmem.charlm.CharLSTM`), are trained with the chapter's recipe
  (:data:`rnnmem.charlm.RECIPE`: the same corpus, split, sizes, optimizer,
  budget and checkpoints), each on the seeds :data:`SEEDS`; seed 0 of the RNN
  is the chapter's own run. Every run is a :class:`rnnmem.charlm.TextRun`,
  trained once and kept by :func:`rnnmem.site.labruns.runs`.
* Their validation perplexities after the last update are compared across
  the seeds by the Mann-Whitney test (:func:`rnnmem.stats.mann_whitney`); a
  difference is worded only where :math:`p <` :data:`rnnmem.verdicts.ALPHA`.
  Intervals are the range (lowest to highest) over the seeds.
* How long each needs to pass a reference model: for each seed, the first
  checkpoint whose validation perplexity is below the reference's
  (:data:`REFERENCES`); a seed that never does is counted as not passing
  within the budget.
* Samples: seed 0 of each network at the checkpoints :data:`SAMPLE_STEPS`,
  temperature 1, after a newline, drawn with seed 0, as the chapter's
  samples of the RNN are.
* Connectivity (Madsen 2019): :func:`rnnmem.charlm.connectivity` of the
  trained network of every seed (after the last update), at the distances
  0 to :data:`MAX_LAG`, averaged over :data:`POSITIONS` evenly spaced
  positions of the validation text, each read after :data:`WARMUP`
  characters of context. The figure shows the mean over the seeds and their
  range; at the distances :data:`READ_AT` the two networks are compared by
  the Mann-Whitney test across the seeds.
"""

from __future__ import annotations

SEEDS = (0, 1, 2, 3, 4)
"""The seeds each network is trained on (0 is the chapter's run of the RNN)."""

SAMPLE_STEPS = (0, 100, 300, 1000)
"""The checkpoints at which both networks' samples are shown."""

MAX_LAG = 100
"""The longest distance :math:`k` at which connectivity is measured."""

POSITIONS = 256
"""How many positions of the validation text connectivity is averaged over."""

WARMUP = 100
"""Characters read before the farthest input measured, so that every distance has this much context."""

READ_AT = (1, 10, 100)
"""The distances at which the prose reads connectivity and the two networks are compared."""

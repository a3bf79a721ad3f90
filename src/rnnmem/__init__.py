"""rnnmem: the numerics behind *Why recurrent networks forget*.

Every number, table and figure of the book is computed by this package. Its
core needs numpy only; :mod:`rnnmem.site` (figures and the site builder) is the
only part that imports matplotlib or MkDocs, and it is never imported here.

Modules, each one idea:

* :mod:`rnnmem.cells`: every cell by name and protocol, their classes, labels, gate names and gate counts.
* :mod:`rnnmem.memory`: the decay :math:`f^n`, horizons and the bias that sets a gate.
* :mod:`rnnmem.rnn`, :mod:`rnnmem.lstm`, :mod:`rnnmem.gru`: the three cells, a step
  at a time and over whole sequences with exact backpropagation through time.
* :mod:`rnnmem.gradcheck`: finite-difference checks of every gradient, by block.
* :mod:`rnnmem.bptt`: the scalar worked example, distance multipliers, truncation.
* :mod:`rnnmem.clipping`: clipping by global norm and element-wise.
* :mod:`rnnmem.jacobians`: one-step Jacobians of the three cells and their products.
* :mod:`rnnmem.cell_paths`: the LSTM's cell gradient, the carry line against the other paths.
* :mod:`rnnmem.growth_cell`: a one-unit LSTM whose gradient grows although :math:`f < 1`.
* :mod:`rnnmem.cell_bound`: how large the LSTM's cell can get, from the forget gate alone.
* :mod:`rnnmem.init`: PyTorch's uniform draw, forget-gate initializations and the horizons they start from.
* :mod:`rnnmem.leaky`: leaky units and time constants, and the biases that start a gated cell as one.
* :mod:`rnnmem.carry`: a gated cell's carry factors (forget or keep gates), measured on data.
* :mod:`rnnmem.params`: parameter counts under each framework's convention.
* :mod:`rnnmem.dropout`: what dropout does to a carried state.
* :mod:`rnnmem.scaling`: error as a power law in data.
* :mod:`rnnmem.gate_arithmetic`: cells fed supplied gate values, and weights solved to
  produce them (the gates chapter's worked examples).
* :mod:`rnnmem.data`: a saved ``torch.nn.LSTM`` to load without torch.
* :mod:`rnnmem.checks`: the argument checks every module (and every site builder) uses.
* :mod:`rnnmem.corpus`, :mod:`rnnmem.train`, :mod:`rnnmem.bilm`: a toy corpus, a
  small trainer, and a bidirectional LSTM language model in the style of ELMo.
* :mod:`rnnmem.probe`: classifiers on frozen vectors, and the words-in-context comparison.
* :mod:`rnnmem.tasks`, :mod:`rnnmem.ensemble`, :mod:`rnnmem.lab`: tasks with a dependency
  at a known distance, many models stacked on one axis, and training them to measure
  when they succeed.
* :mod:`rnnmem.experiments`: the lab's experiments: model specs, the design, runs as
  values, and what is read from their results (success counts, measured horizons).
* :mod:`rnnmem.stats`: the statistics the lab reports: intervals for counts and times,
  Fisher's exact test, and the lag at which success falls to one half.
* :mod:`rnnmem.scan`: the linear recurrence :math:`h_t = a_t h_{t-1} + b_t` by a parallel scan, and its
  backward pass.
* :mod:`rnnmem.lru`, :mod:`rnnmem.mingru`, :mod:`rnnmem.selective`, :mod:`rnnmem.mamba`,
  :mod:`rnnmem.linear_ensemble`: recurrences built not to forget (the LRU, minGRU, Mamba's selective scan S6
  alone and Mamba's whole block), linear in their state, and many of them stacked for the lab.
* :mod:`rnnmem.by_design`: the lab of "Remembering by design": the lag ladder, recall of the first token,
  the LRU's ring and the gradient that reaches back.
* :mod:`rnnmem.clip_lab`: the clipping experiment: plain gradient descent with and
  without clipping on a ladder of learning rates, gradient norms by parameter group.
* :mod:`rnnmem.charlm`, :mod:`rnnmem.planted`: a character-level language model trained on the Python
  standard library's own source, and a dependency of known length planted in that text to measure what
  truncated backpropagation through time can learn.
* :mod:`rnnmem.ngram`: an interpolated modified Kneser–Ney character model, the counting baseline on that text.
* :mod:`rnnmem.attention`, :mod:`rnnmem.attention_lab`: an attention readout over a recurrence's states,
  its backward pass and what it keeps and computes; its lab beside the last-state readout and a
  uniform-weight control.
"""

from . import (
    attention,
    attention_lab,
    bilm,
    bptt,
    by_design,
    carry,
    cell_bound,
    cell_paths,
    cells,
    charlm,
    checks,
    clip_lab,
    clipping,
    corpus,
    data,
    dropout,
    engine,
    ensemble,
    experiments,
    gate_arithmetic,
    gradcheck,
    grid,
    growth_cell,
    gru,
    init,
    jacobians,
    lab,
    leaky,
    linear_ensemble,
    lru,
    lstm,
    mamba,
    memory,
    mingru,
    ngram,
    params,
    planted,
    probe,
    rnn,
    scaling,
    scan,
    selective,
    stats,
    tasks,
    train,
)
from .bilm import BiLM
from .gru import GRU
from .lstm import LSTM
from .rnn import RNN

__version__ = "0.2.0"

__all__ = [
    "RNN",
    "LSTM",
    "GRU",
    "BiLM",
    "memory",
    "rnn",
    "lstm",
    "gru",
    "cells",
    "gradcheck",
    "bptt",
    "clipping",
    "jacobians",
    "cell_paths",
    "growth_cell",
    "cell_bound",
    "init",
    "params",
    "dropout",
    "scaling",
    "corpus",
    "train",
    "bilm",
    "probe",
    "gate_arithmetic",
    "data",
    "checks",
    "tasks",
    "ensemble",
    "lab",
    "engine",
    "grid",
    "experiments",
    "leaky",
    "carry",
    "stats",
    "clip_lab",
    "lru",
    "mingru",
    "selective",
    "mamba",
    "linear_ensemble",
    "scan",
    "by_design",
    "attention",
    "attention_lab",
    "charlm",
    "ngram",
    "planted",
    "__version__",
]

"""rnnmem: the numerics behind *Why recurrent networks forget*.

Every number, table and figure of the book is computed by this package. Its
core needs numpy only; :mod:`rnnmem.site` (figures and the site builder) is the
only part that imports matplotlib or MkDocs, and it is never imported here.

Modules, each one idea:

* :mod:`rnnmem.memory`: the decay :math:`f^n`, horizons and the bias that sets a gate.
* :mod:`rnnmem.rnn`, :mod:`rnnmem.lstm`, :mod:`rnnmem.gru`: the three cells, a step
  at a time and over whole sequences with exact backpropagation through time.
* :mod:`rnnmem.gradcheck`: finite-difference checks of every gradient, by block.
* :mod:`rnnmem.bptt`: the scalar worked example, distance multipliers, truncation.
* :mod:`rnnmem.clipping`: clipping by global norm and element-wise.
* :mod:`rnnmem.jacobians`: one-step Jacobians, their products, the LSTM's paths.
* :mod:`rnnmem.init`: forget-gate initializations and the horizons they start from.
* :mod:`rnnmem.params`: parameter counts under each framework's convention.
* :mod:`rnnmem.dropout`: what dropout does to a carried state.
* :mod:`rnnmem.scaling`: error as a power law in data.
* :mod:`rnnmem.worked`, :mod:`rnnmem.data`: the gates chapter's worked examples, and
  a saved ``torch.nn.LSTM`` to load without torch.
* :mod:`rnnmem.corpus`, :mod:`rnnmem.train`, :mod:`rnnmem.bilm`: a toy corpus, a
  small trainer, and a bidirectional LSTM language model in the style of ELMo.
* :mod:`rnnmem.tasks`, :mod:`rnnmem.ensemble`, :mod:`rnnmem.lab`: tasks with a dependency
  at a known distance, many models stacked on one axis, and training them to measure
  when they succeed.
"""

from . import bilm, bptt, clipping, corpus, data, dropout, gradcheck, gru, init, jacobians, lstm, memory, params, rnn, scaling, train, worked
from . import ensemble, lab, tasks
from .bilm import BiLM
from .gru import GRU
from .lstm import LSTM
from .rnn import RNN

__version__ = "0.1.0"

__all__ = [
    "RNN", "LSTM", "GRU", "BiLM",
    "memory", "rnn", "lstm", "gru", "gradcheck", "bptt", "clipping", "jacobians",
    "init", "params", "dropout", "scaling", "corpus", "train", "bilm", "worked", "data",
    "tasks", "ensemble", "lab",
    "__version__",
]

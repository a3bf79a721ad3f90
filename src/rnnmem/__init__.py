"""rnnmem: the numerics behind *Why recurrent networks forget*.

Every number, table and figure of the book is computed by this package. Its
core needs numpy only; :mod:`rnnmem.site` (figures and the site builder) is the
only part that imports matplotlib or MkDocs, and it is never imported here.

Modules, each one idea:

* :mod:`rnnmem.memory`: decay :math:`f^n`, horizons and the forget-gate bias.
"""

from . import memory
from . import rnn, lstm, gru, gradcheck
from .rnn import RNN
from .lstm import LSTM
from .gru import GRU
from . import bptt, clipping, jacobians, init, params, dropout, scaling

__version__ = "0.1.0"

__all__ = ["memory", "__version__"]
__all__ += ["rnn", "lstm", "gru", "gradcheck", "RNN", "LSTM", "GRU"]
__all__ += ["bptt", "clipping", "jacobians", "init", "params", "dropout", "scaling"]

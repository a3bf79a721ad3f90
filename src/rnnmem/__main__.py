"""``python -m rnnmem COMMAND``: see :mod:`rnnmem.cli`."""

import sys

from rnnmem.cli import main

if __name__ == "__main__":
    sys.exit(main())

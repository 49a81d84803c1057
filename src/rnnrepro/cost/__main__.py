"""``python -m rnnrepro.cost``: see :mod:`rnnrepro.cost.cli`."""
import sys

from .cli import main

sys.exit(main())

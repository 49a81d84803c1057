"""``python -m rnnrepro.report``: render a report notebook to HTML (see rnnrepro.report.render)."""
import sys

from .render import main

sys.exit(main())

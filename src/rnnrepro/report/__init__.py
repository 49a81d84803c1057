"""The reports: one notebook per study, rendered by papermill and nbconvert.

- :mod:`.study`: ``setup()`` and :class:`StudyReport`, what every notebook does (sections with
  ours beside published, verdicts, provenance, choices), read from the study's YAML;
- :mod:`.verdicts`: the claim checks (compare, best, threshold, trend, within, python);
- :mod:`.frames`: long-form tables, summaries over seeds, the join with published numbers;
- :mod:`.formatting`: how each metric is shown;
- :mod:`.plots`: bars, training curves, heat maps;
- :mod:`.render`: papermill + nbconvert (``python -m rnnrepro.report --help``);
- :mod:`.papers`: the few figures and checks that only one paper needs.
"""
from .render import render_report
from .study import StudyReport, setup

__all__ = ["StudyReport", "render_report", "setup"]

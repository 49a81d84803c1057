"""The reports: one notebook per study, rendered by papermill and nbconvert. They only show:
the claims are judged once by :mod:`rnnrepro.claims` (the workflow's ``judge`` rule), whose
verdicts a report reads back.

- :mod:`.study`: ``setup()`` and :class:`StudyReport`, what every notebook does (sections with
  ours beside published, verdicts, provenance, choices) on the study's data
  (:class:`rnnrepro.study_data.StudyData`);
- :mod:`.frames`: ours beside the published numbers, a metric as a grid (the tables themselves:
  :mod:`rnnrepro.tables`; how each metric is shown: :mod:`rnnrepro.metrics.formats`);
- :mod:`.plots`: bars, training curves, heat maps;
- :mod:`.index_page`: the index page over every study;
- :mod:`.render`: papermill + nbconvert (``python -m rnnrepro.report --help``);
- :mod:`.papers`: the few figures that only one paper needs.
"""
from .render import render_report

__all__ = ["StudyReport", "render_report", "setup"]


def __getattr__(name: str):
    """``StudyReport`` and ``setup`` on first use: they import pandas, seaborn and the claims'
    statistics (2 s), which the report job's process, rendering with papermill, never needs."""
    if name in ("StudyReport", "setup"):
        from . import study

        return getattr(study, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

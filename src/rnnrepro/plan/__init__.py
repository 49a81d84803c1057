"""Planning: what the configuration asks for, worked out once, before anything trains.

Everything the workflow, ``python -m rnnrepro.cost`` and ``python -m rnnrepro.preflight`` know
about a scale comes from one plan, loaded through :func:`rnnrepro.plan.kept.load_plan` (worked
out once for each state of the settings, study files and code, and kept):

- :mod:`~rnnrepro.plan.studies`: the study model (artifacts, grids, claims), the run identity
  (``run_folder`` and ``parse_run_folder``) and the expansion of a scale into its runs;
- :mod:`~rnnrepro.plan.config_check` and :mod:`~rnnrepro.plan.study_metrics`: the checks that
  stop a bad key, name or metric at parse time, naming file, scale and key;
- :mod:`~rnnrepro.plan.code_identity`: the code each run, analysis and rule executes;
- :mod:`~rnnrepro.plan.packs`, :mod:`~rnnrepro.plan.bundles` and :mod:`~rnnrepro.plan.jobs`:
  which runs train together (packs: batched; bundles: one after another) and the record a job writes;
- :mod:`~rnnrepro.plan.layout`: where everything a scale makes lives (``results/<scale>/``);
- :mod:`~rnnrepro.plan.study_inputs` and :mod:`~rnnrepro.plan.analysis_from`: the files a
  study's summary reads, and the artifacts whose rows are another's.

This file imports nothing on purpose: a run's code identity includes the packages above the
modules it imports, and planning code is not code a run executes.
"""

"""Studies: many models, sizes, checkpoints and languages as one resumable unit above the run.

- ``schema``: the study file (YAML): models, suites, run options, chosen comparisons; its one-line errors.
- ``plan``: every (model, suite) run of a study as a ``RunConfig`` with its place in the study, and the
  study's ``study.json`` re-planned (its format is ``lingdiag.rundir.study``'s, beside the run directory's).
- ``execute``: checks the whole plan (models included) and runs what is not done here (one model load for
  all its suites) or through ``submit``'s executors; a stale run is moved aside and run again.
- ``status``: the grid of runs, each from its directory's state (``lingdiag.rundir.state``), with items
  left and an ETA.
- ``across``: analyses over models from the runs' summaries (cells as items × models tables, items across
  models, agreement, learning curves, paired tests of chosen pairs and adjacent sizes and checkpoints).
- ``loaded``: the study as its report reads it (``Study``: the done runs' summaries and what every section
  reads of them, each computed once).
- ``sections``: the study report's sections, one module each, registered in ``STUDY_SECTIONS`` in order.
- ``report``: the study report (its findings, then its sections) as HTML through the run report's page,
  Markdown and LaTeX tables, or findings on the terminal.
"""

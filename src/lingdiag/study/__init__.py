"""Studies: many models, sizes, checkpoints and languages as one resumable unit above the run.

- ``schema``: the study file (YAML): models, suites, run options, chosen comparisons; its one-line errors.
- ``plan``: every (model, suite) run of a study as a ``RunConfig`` with its place in the study.
- ``execute``: runs the plan here (one model load for all its suites) or through ``submit``'s executors.
- ``status``: the grid of runs (done, running, failed, items left, ETA).
- ``across``: analyses over models from the runs' summaries (cells as items × models tables, items across
  models, agreement, learning curves, paired tests of chosen pairs and adjacent sizes and checkpoints).
- ``report``: the study report, its sections a list (``SECTIONS``), as HTML through the run report's page,
  Markdown and LaTeX tables, or findings on the terminal.
"""

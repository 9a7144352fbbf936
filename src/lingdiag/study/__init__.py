"""Studies: many models, sizes, checkpoints and languages as one resumable unit above the run.

- ``schema``: the study file (YAML) and its one-line errors.
- ``plan``: every (model, suite) run of a study as a ``RunConfig`` with its place in the study.
- ``state``: ``study.json``, the plan and each run's state, written atomically.
- ``execute``: runs the plan here (one model load for all its suites) or through ``submit``'s executors.
- ``status``: the grid of runs (done, running, failed, items left, ETA).
- ``across``: analyses over models (items across models, agreement, learning curves, adjacent tests).
- ``report``: the study report (HTML through the run report's page, Markdown and LaTeX tables).
"""

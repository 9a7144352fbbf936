"""Runs read back for reports and analyses: a run directory (``lingdiag.rundir``) joined with the
suite that scores its records.

Modules: ``run`` (``LoadedRun``, ``load_run``, ``load_runs`` with names distinct over the runs read
together, ``suite_of``).
"""

from lingdiag.reading.run import LoadedRun, distinct, load_run, load_runs, suite_key, suite_of

__all__ = ["LoadedRun", "distinct", "load_run", "load_runs", "suite_key", "suite_of"]

"""Runs read back for reports and analyses: a run directory (``lingdiag.rundir``) joined with the
suite that scores its records.

Modules: ``run`` (``LoadedRun``, ``load_run``, ``suite_of``).
"""

from lingdiag.reading.run import LoadedRun, load_run, suite_of

__all__ = ["LoadedRun", "load_run", "suite_of"]

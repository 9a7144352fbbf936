"""Runs read back for reports and analyses: a run directory (``lingdiag.rundir``) joined with the
suite that scores its records.

Modules: ``run`` (``LoadedRun``, ``load_run``, ``load_runs`` with names distinct over the runs read
together, ``suite_of``), ``summary`` (``RunSummary``, ``summarize``: a run streamed once into its rows
and its records as columns of codes, for studies and the viewer over millions of records, from the run's
``summary.npz`` while it is current), ``door`` (``accepted``: the one rule deciding whether a run's numbers
are read, ``FINAL`` or ``PARTIAL``), ``item_table`` (``ItemTable``: a run's items each once with their text,
gold, family and human ratings, kept in its summary).
"""

from lingdiag.reading.run import LoadedRun, distinct, load_run, load_runs, records_of, suite_key, suite_of
from lingdiag.reading.summary import Columns, RunSummary, Vocabularies, summarize

__all__ = ["Columns", "LoadedRun", "RunSummary", "Vocabularies", "distinct", "load_run", "load_runs", "records_of",
           "summarize", "suite_key", "suite_of"]

"""The one vocabulary of run states: every word a run's state is said in, by the run directory
(``lingdiag.rundir.state``), a study's grid (``lingdiag.study.status``), ``study.json``'s attempts, the
door of ``lingdiag.reading``, the reports and the viewer. A test walks the source for a state spelled
as a string anywhere else (``tests/test_state_words.py``).
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """Every word a run's state is said in, here and nowhere else: a run directory's own (``RunState.status``,
    which ``report``, ``merge``, the door of ``lingdiag.reading`` and the viewer's catalogue show) and a study's
    grid (``lingdiag.study.status``), which says the same of a run among the study's with its attempts. A
    ``str``, so that it prints, compares and is written to JSON as its word.
    """

    ABSENT = "absent"
    """No ``meta.json``: never started, or deleted."""
    UNREADABLE = "unreadable"
    """Not as a run writes it."""
    RUNNING = "running"
    """A live process holds the run's lock."""
    STOPPED = "stopped"
    """Started and not finished, with no process writing it."""
    STALE = "stale"
    """Finished, but something it was computed from changed since (or its records were edited)."""
    FAILED = "failed"
    """Finished with failed items; in a study, also a run whose last attempt failed (``study run`` retries it)."""
    UNCHECKED = "unchecked"
    """Finished, but a file it read is gone, so nobody can say it is current."""
    FINISHED = "finished"
    """Finished, current, every item answered."""
    DONE = "done"
    """A study's run that is :attr:`FINISHED` (``study status``), or whose last attempt ended so (``study.json``)."""
    PARTIAL = "partial"
    """A study's run that is :attr:`STOPPED` with no failed attempt."""
    GAVE_UP = "gave up"
    """A study's run that failed more than the study's ``retries`` times: ``study run`` works on it no more."""
    PLANNED = "planned"
    """A study's run with nothing there yet (:attr:`ABSENT`; a deleted run directory too)."""

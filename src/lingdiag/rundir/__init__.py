"""The run directory, the format every later stage reads, typed and versioned.

- ``directory``: ``RunStore`` (one run directory, its lock, ``items.jsonl``), ``write_imported``.
- ``meta``: ``RunMeta``, the only reader and writer of ``meta.json``, and ``ModelIdentity``.
- ``parts``: the typed parts of ``meta.json`` and the suite facts a run records (``Excluded``...).
- ``loaded``: ``RunDir`` and ``read_run``, a run read back without the suite registry.
- ``inputs``: what a run was computed from and what of it changed (``Inputs``, ``drift``).
- ``state``: ``RunState`` and ``run_state``, the one answer to finished, current, how far and running.
- ``status``: ``Status``, the one vocabulary a run's states are said in (a run's, a study grid's).
- ``summary``: ``summary.npz``, a finished run's records as columns and its metrics, keyed by the digest
  of ``items.jsonl`` (``StoredSummary``, ``records_digest``).
- ``study``: ``study.json`` (``StudyState``, ``RunEntry``) and a run's place in its study (``place_of``).

It imports no suite, report or model code (a contract in ``pyproject.toml``); metrics recomputed
through a run's suite are ``lingdiag.reading``'s.
"""

from lingdiag.rundir.directory import RunStore, lock_held, write_imported
from lingdiag.rundir.inputs import RESUMABLE_CHANGES, Change, Inputs, answer_changes, config_changes, drift
from lingdiag.rundir.loaded import RunDir, read_run
from lingdiag.rundir.meta import META, SCHEMA_VERSION, ModelIdentity, RunMeta
from lingdiag.rundir.parts import SUITE_COPY, Excluded, SuiteSource
from lingdiag.rundir.state import Phase, RunState, run_state
from lingdiag.rundir.status import Status

__all__ = ["META", "RESUMABLE_CHANGES", "SCHEMA_VERSION", "SUITE_COPY", "Change", "Excluded", "Inputs",
           "ModelIdentity", "Phase", "RunDir", "RunMeta", "RunState", "RunStore", "Status", "SuiteSource",
           "answer_changes", "config_changes", "drift", "lock_held", "read_run", "run_state", "write_imported"]

"""The run directory, the format every later stage reads, typed and versioned.

- ``directory``: ``RunStore`` (one run directory, its lock, ``items.jsonl``), ``write_imported``.
- ``meta``: ``RunMeta``, the only reader and writer of ``meta.json``, and ``ModelIdentity``.
- ``parts``: the typed parts of ``meta.json`` and the suite facts a run records (``Excluded``...).
- ``loaded``: ``RunDir`` and ``read_run``, a run read back without the suite registry.

It imports no suite, report or model code (a contract in ``pyproject.toml``); metrics recomputed
through a run's suite are ``lingdiag.reading``'s.
"""

from lingdiag.rundir.directory import RunStore, config_changes, write_imported
from lingdiag.rundir.loaded import Progress, RunDir, read_run
from lingdiag.rundir.meta import META, SCHEMA_VERSION, ModelIdentity, RunMeta
from lingdiag.rundir.parts import SUITE_COPY, Excluded, SuiteSource

__all__ = ["META", "SCHEMA_VERSION", "SUITE_COPY", "Excluded", "ModelIdentity", "Progress", "RunDir", "RunMeta",
           "RunStore", "SuiteSource", "config_changes", "read_run", "write_imported"]

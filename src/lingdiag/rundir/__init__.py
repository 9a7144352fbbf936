"""The run directory, the format every later stage reads.

- ``directory``: ``RunStore`` (one run directory, its lock, ``items.jsonl``), ``write_imported``.
- ``meta``: ``RunMeta``, the only reader and writer of ``meta.json``, and ``ModelIdentity``.
- ``loaded``: ``LoadedRun`` and ``load_run``, a run read back for reports and analyses.
"""

from lingdiag.rundir.directory import RunStore, config_changes, write_imported
from lingdiag.rundir.loaded import LoadedRun, load_run
from lingdiag.rundir.meta import META, SCHEMA_VERSION, ModelIdentity, RunMeta

__all__ = ["META", "SCHEMA_VERSION", "LoadedRun", "ModelIdentity", "RunMeta", "RunStore", "config_changes",
           "load_run", "write_imported"]

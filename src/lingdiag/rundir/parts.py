"""The typed parts of ``meta.json``, each with one reader (pydantic validation, unknown keys
refused) and one writer (:func:`part_json`), and the few suite facts a run directory records.

A part is written exactly as it was given: a key absent from the input stays absent in the
output (``exclude_unset``) and an integer stays an integer (``Number``), so a file read and
written back is byte-identical, whichever version of lingdiag wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from lingdiag.registry import Registry

Number = int | float
"""A JSON number kept as written (pydantic's ``float`` would turn ``1`` into ``1.0``)."""

SUITE_COPY = "suite.yaml"
"""The copy of its suite file a run directory keeps."""


@dataclass(frozen=True, slots=True)
class Excluded:
    """An item of the data that cannot be scored as published (e.g. a minimal pair whose good and
    bad sentences are identical): never scored, counted and listed in the table and the report.
    """

    item_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class SuiteSource:
    """The suite file a suite was read from: ``meta.json`` records its path and SHA-256 (a run
    is not resumed from another version of it), and the run keeps a copy (``SUITE_COPY``) that
    reports read the records with.
    """

    path: str
    sha256: str
    text: str


class Part(BaseModel):
    """One typed part of ``meta.json``: unknown keys refused, immutable once read."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    def to_json(self) -> dict[str, Any]:
        """The part as ``meta.json`` holds it: the keys it was given, nothing added."""
        return self.model_dump(mode="json", exclude_unset=True)


class PackageDiff(Part):
    """A package whose installed version is not the lock's."""

    installed: str | None
    locked: str | None


class LockPart(Part):
    """``lock``: the installed environment against lingdiag's tested lock."""

    matches: bool
    differs: dict[str, PackageDiff]
    unlocked: list[str]


class SuiteFilePart(Part):
    """``suite_file``: the suite file a run was read from."""

    path: str
    """Where it was (``lingdiag.rundir.inputs.recorded_path``)."""
    sha256: str
    """The SHA-256 of its bytes: what the copy beside the records (``SUITE_COPY``) is checked against."""
    content: str | None = None
    """The content identity of the parsed suite (``lingdiag.io.content``): what says whether the run is
    current; absent in runs written before it was recorded (their bytes are compared)."""


class ShardPart(Part):
    """One shard of a merged run: its ``shard`` (``k/n``), directory and server where it had one."""

    shard: str
    dir: str
    base_url: str | None = None


class RuleOfImport(Part):
    """How an imported rating file's ties and unreadable ratings were read (ExpliCa)."""

    ties: str
    missing: str


class HarnessSource(Part):
    """``imported.harness``: the harness log a run was imported from (``lingdiag.interop``)."""

    name: Literal["lm-eval", "inspect", "every-eval-ever"]
    version: str
    """The harness's version as its log records it."""
    task: str
    task_hash: str | None = None
    """The harness's hash of the task's configuration (lm-eval's ``task_hashes``), where it logs one."""
    log: str
    """The file of aggregate results (lm-eval's ``results_*.json``; inspect's log itself)."""
    log_sha256: str
    model: str
    model_args: Any = None
    """The model's arguments as the harness logged them (lm-eval: the ``model_args`` string)."""
    generate_config: Any = None
    """Decoding as the harness logged it (lm-eval: the task's ``generation_kwargs``; inspect: the
    eval's ``model_generate_config``)."""
    output_type: str
    """lm-eval's ``output_type`` (``multiple_choice``, ``generate_until``...) or ``generate`` (inspect)."""
    filter: str | None = None
    """lm-eval's filter whose answers these are (``none``, or a ``filter_list`` entry's name)."""
    choices_from: str
    """Where the choices came from (the log's requests, the task's ``doc_to_choice``, the samples, ``--choices``)."""
    reported: dict[str, Number | None]
    """The harness's own aggregate metrics for this task (``acc``, ``exact_match``, a scorer's ``accuracy``)."""


class ImportedPart(Part):
    """``imported``: the file answers were imported from and how (``lingdiag score … --out``)."""

    file: str
    sha256: str
    score_col: str | None = None
    id_col: str | None = None
    task: str | None = None
    connective_col: str | None = None
    choices_col: str | None = None
    lower_is_better: bool | None = None
    rule: RuleOfImport | None = None
    rules: str | None = None
    harness: HarnessSource | None = None
    """Another harness's log (``lingdiag import lm-eval|inspect``): the program, the task, the model."""


class FinishedPart(Part):
    """``finished``: written by ``finish`` as the run's end, so that whether a run finished, and
    whether its records are still the ones it finished with, is read off its files (cheaply: the
    size; in full: the SHA-256) without re-planning it (``lingdiag.rundir.state``).
    """

    records: int = Field(ge=0)
    """Records in ``items.jsonl`` (one per condition and item)."""
    failed: int = Field(ge=0)
    """Of them, items the backend failed on (``error``)."""
    bytes: int = Field(ge=0)
    """The size of ``items.jsonl``."""
    sha256: str
    """The SHA-256 of ``items.jsonl``."""


class ExcludedPart(Part):
    """One excluded item as ``meta.json`` holds it."""

    item_id: str
    reason: str


PARTS: Registry[TypeAdapter[Any]] = Registry("meta.json part")
"""Parts an axis adds to ``meta.json`` (``register_part``), by their key: the built-in axes' (``thinking``,
``after_thinking``, ``scoring_policies``, ``precision``, ``temperature``) as a plug-in's; the run's own parts are
``MetaFile``'s fields. An axis module registers its part on import; ``Registry.find`` imports a built-in axis's
module alone (its home, ``lingdiag.registry``) and a plug-in's through its entry point, so a run directory
holding an axis's part reads anywhere, importing that axis and no other."""


def register_part(name: str, schema: Any) -> None:
    """Let ``meta.json`` hold the part ``name``, validated by ``schema`` (a pydantic type, often a
    mapping of condition → a :class:`Part`: ``dict[str, TemperaturePart]``).
    """
    PARTS.register(name)(TypeAdapter(schema))


def part_json(value: Any) -> Any:
    """A part (or a mapping or list of parts) as ``meta.json`` holds it: the one writer."""
    if isinstance(value, Part):
        return value.to_json()
    if isinstance(value, Mapping):
        return {k: part_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [part_json(v) for v in value]
    return value

"""``meta.json``: ``RunMeta``, its only reader and writer, and the backend's ``ModelIdentity``.

Every part is typed (``lingdiag.rundir.parts``) and validated on read, so a hand-edited or
foreign file is one line naming the file and the field (``meta.json, field 'thinking.c1.setting':
Field required``). Schema 1 (lingdiag from 3789a70 on) is the only schema so far; a file without
``schema_version`` is an imported run, which records little more than its config and model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, JsonValue, ValidationError
from pydantic_core import InitErrorDetails

from lingdiag.config import RunConfig
from lingdiag.errors import RunError, field_problem, one_line
from lingdiag.io.limits import read_regular
from lingdiag.rundir.parts import (
    PARTS,
    Excluded,
    ExcludedPart,
    FinishedPart,
    ImportedPart,
    LockPart,
    Number,
    Part,
    ShardPart,
    SuiteFilePart,
    part_json,
)

SCHEMA_VERSION = 1
META = "meta.json"


class IdentityPart(Part):
    """``model``: the backend's identity. Its entries are the backend's own (device, adapter,
    server settings...), so unknown keys are kept; the ones every reader needs are typed.
    """

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)

    backend: str = ""
    model: str | None = None
    weights_sha256: str = ""
    n_params: str | Number | None = None
    """As the backend recorded it (the hf backend writes a string)."""


@dataclass(frozen=True, slots=True)
class ModelIdentity:
    """``meta.json``'s ``model``: the backend's identity (the cache key's model part), as recorded.

    Its entries are the backend's own (device, adapter, server settings...), so it stays an open
    mapping of JSON values; the keys every reader needs are typed here (and validated on read and
    write by :class:`IdentityPart`).
    """

    fields: Mapping[str, JsonValue]

    @property
    def backend(self) -> str:
        """The backend's name (``hf``, ``openai``, ``mock``, ``imported``...)."""
        return str(self.fields.get("backend", ""))

    @property
    def name(self) -> str | None:
        """The model's display name as the backend gave it; None where it gave none."""
        value = self.fields.get("model")
        return None if value is None else str(value)

    @property
    def weights_sha256(self) -> str:
        """The weights' SHA-256 (empty where the backend cannot see them)."""
        return str(self.fields.get("weights_sha256", ""))

    @property
    def n_params(self) -> float | None:
        """The parameter count the backend recorded, if it is a usable one (see :attr:`n_params_problem`)."""
        return None if self.n_params_problem else _count(self.fields.get("n_params"))

    @property
    def n_params_problem(self) -> str:
        """Why a recorded parameter count is ignored (not a number, not positive, not finite); empty if it is not."""
        value = self.fields.get("n_params")
        if value in (None, ""):
            return ""
        count = _count(value)
        if count is None or not math.isfinite(count) or count <= 0:
            return f"model.n_params {value!r} is not a positive finite number; ignored"
        return ""


def _count(value: Any) -> float | None:
    try:
        return float(value) if value not in (None, "") and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


class MetaFile(Part):
    """The run's own parts of ``meta.json``, as validated on read and on write; the axes' parts (``thinking``,
    ``precision``...) are registered by their axes (``rundir.parts.PARTS``) and validated by their schemas.
    """

    schema_version: int | None = None
    config: dict[str, JsonValue]
    model: IdentityPart
    dataset: dict[str, str] | None = None
    versions: dict[str, str] | None = None
    lock: LockPart | None = None
    seed: int | None = None
    timings: dict[str, Number] | None = None
    skipped: dict[str, str] | None = None
    suite_file: SuiteFilePart | None = None
    excluded: list[ExcludedPart] | None = None
    usage: dict[str, int] | None = None
    shards: list[ShardPart] | None = None
    imported: ImportedPart | None = None
    planned: int | None = None
    finished: FinishedPart | None = None
    origin: str | None = None
    attempts: list[dict[str, JsonValue]] | None = None


_UNION_TAGS = ("int", "float", "str")
"""What pydantic appends to the key path of a value that fits no member of a union (``Number``)."""
Given = Mapping[str, Any]
"""A part as its writer hands it over (``Thinking.recorded()``...): validated into the typed part."""
_ATTRIBUTE = {"dataset": "checksums", "model": "identity"}
"""``meta.json`` keys whose ``RunMeta`` attribute is named otherwise."""


def _axis_part(name: str, value: Any) -> Any:
    """An axis's part validated by its registered schema, an error located under its key."""
    try:
        return PARTS.get(name).validate_python(part_json(value))
    except ValidationError as e:
        located: list[InitErrorDetails] = []
        for err in e.errors():
            detail = InitErrorDetails(type=err["type"], loc=(name, *err["loc"]), input=err["input"])
            if "ctx" in err:
                detail["ctx"] = err["ctx"]
            located.append(detail)
        raise ValidationError.from_exception_data("meta.json", located) from None


@dataclass(frozen=True, slots=True, init=False)
class RunMeta:
    """A run's ``meta.json``: the only writer (:meth:`to_json`, through :meth:`RunStore.write_meta`)
    and the only reader (:meth:`read`) of it, so that every key is named once, here.

    Optional parts are None where the file does not hold them (an imported run holds only
    ``config``, ``model`` and ``imported``), so a file read and written back is unchanged. Parts
    may be given as their writers' mappings; they are validated into their typed form here.
    """

    config: Mapping[str, JsonValue]
    """The recorded run configuration (``RunConfig.recorded()``), kept as recorded: resume compares it
    field by field and a file written back stays byte-identical; :attr:`run_config` is its typed form."""
    identity: ModelIdentity
    """``model``: what the backend recorded about the model."""
    schema_version: int | None
    checksums: Mapping[str, str] | None
    """``dataset``: each data file's SHA-256."""
    versions: Mapping[str, str] | None
    """Package versions (python, lingdiag, torch...)."""
    lock: LockPart | None
    """The installed environment beside the lock (``lingdiag.models.environment``)."""
    seed: int | None
    timings: Mapping[str, Number] | None
    """Condition → seconds spent, summed over resumed sessions (and over shards)."""
    skipped: Mapping[str, str] | None
    """Condition → why it was not run."""
    suite_file: SuiteFilePart | None
    """The suite file a run was read from: ``path`` and ``sha256``."""
    excluded: tuple[Excluded, ...] | None
    """Items of the data left out as not interpretable (identical or empty minimal pairs); None
    where the data has none."""
    usage: Mapping[str, int] | None
    """Tokens and requests a metered backend counted; None where it counted none."""
    shards: list[ShardPart] | None
    """A merged run's shards (``shard``, ``dir`` and the server's ``base_url`` where each had one)."""
    imported: ImportedPart | None
    """Answers computed elsewhere: what was imported and how (``lingdiag score … --out``)."""
    planned: int | None
    """The items the run will have recorded when it finishes (all conditions); None in runs written
    before it was recorded. A run with fewer is in progress (or was stopped)."""
    finished: FinishedPart | None
    """Written by ``finish`` (with ``planned`` dropped): the records it ended with; None while the
    run is unfinished and in runs written before it was recorded (``lingdiag.rundir.state``)."""
    origin: str | None
    """The run directory's absolute path when the run (its last session) started: a run directory that has
    moved since finds the files it read at the same place relative to it (``lingdiag.rundir.inputs``); None
    in runs written before it was recorded, whose relative file names are relative to the current directory."""
    attempts: list[dict[str, JsonValue]] | None
    """Each session's transport settings (``lingdiag.config.transport_of``), in order: they may change
    between attempts (a retry with a longer timeout); None in runs written before they were recorded."""
    parts: Mapping[str, Any] = field(default_factory=dict)
    """The parts the axes record (``rundir.parts.register_part``: ``thinking``, ``after_thinking``,
    ``scoring_policies``, ``precision``, ``temperature``, a plug-in's), by key, each validated by its axis's
    schema (reading one imports its axis's module alone); written under their keys beside the run's parts."""
    source: Path | None = field(default=None, compare=False)
    """The file this was read from (named in errors); not part of ``meta.json``."""

    def __init__(self, config: Mapping[str, Any], identity: ModelIdentity | Given, schema_version: int | None = None,
                 checksums: Mapping[str, str] | None = None, versions: Mapping[str, str] | None = None,
                 lock: LockPart | Given | None = None, seed: int | None = None,
                 timings: Mapping[str, Number] | None = None, skipped: Mapping[str, str] | None = None,
                 suite_file: SuiteFilePart | Given | None = None, excluded: Sequence[Excluded | Given] | None = None,
                 usage: Mapping[str, int] | None = None, shards: Sequence[ShardPart | Given] | None = None,
                 imported: ImportedPart | Given | None = None, planned: int | None = None,
                 finished: FinishedPart | Given | None = None, origin: str | None = None,
                 attempts: Sequence[Mapping[str, Any]] | None = None, source: Path | None = None,
                 **plugins: Any) -> None:
        """Validate every part (``pydantic.ValidationError`` if one is not of its schema); ``plugins``
        are the parts axes registered (``UnknownNameError`` for a key nobody registered).
        """
        given = {"schema_version": schema_version, "config": config,
                 "model": identity.fields if isinstance(identity, ModelIdentity) else identity,
                 "dataset": checksums, "versions": versions, "lock": lock, "seed": seed, "timings": timings,
                 "skipped": skipped, "suite_file": suite_file,
                 "excluded": None if excluded is None else [
                     {"item_id": e.item_id, "reason": e.reason} if isinstance(e, Excluded) else e for e in excluded],
                 "usage": usage, "shards": shards, "imported": imported, "planned": planned,
                 "finished": finished, "origin": origin,
                 "attempts": None if attempts is None else [dict(a) for a in attempts]}
        parsed = MetaFile.model_validate({k: part_json(v) for k, v in given.items() if v is not None})
        for key in MetaFile.model_fields:
            object.__setattr__(self, _ATTRIBUTE.get(key, key), getattr(parsed, key))
        object.__setattr__(self, "identity", ModelIdentity(parsed.model.to_json()))
        object.__setattr__(self, "excluded", None if parsed.excluded is None else tuple(
            Excluded(e.item_id, e.reason) for e in parsed.excluded))
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "parts", {name: _axis_part(name, value) for name, value in sorted(plugins.items())
                                           if value is not None})

    def replaced(self, **parts: Any) -> RunMeta:
        """A copy with ``parts`` replaced, each given typed or as its writer's mapping (validated); an
        axis's part by its key, None removing it.
        """
        kept = {f: getattr(self, f) for f in self.__dataclass_fields__ if f != "parts"}
        return RunMeta(**{**kept, **self.parts, **parts})

    @property
    def suite(self) -> str:
        """``config.suite``: a registered suite's name, or the path of the suite file the run read."""
        return str(self.config["suite"])

    @property
    def model(self) -> str:
        """The model's display name: what the backend called it, else the configured spec."""
        return self.identity.name if self.identity.name is not None else str(self.config.get("model", ""))

    @property
    def dataset(self) -> str:
        """The dataset spec of the run (``builtin``, ``official`` or a path)."""
        return str(self.config.get("dataset", ""))

    @property
    def n_params(self) -> float | None:
        """The parameter count the backend recorded, if any."""
        return self.identity.n_params

    @property
    def run_config(self) -> RunConfig:
        """The recorded configuration, validated.

        Raises:
            RunError: it is not a configuration this version reads (naming ``meta.json`` and the field).
        """
        try:
            return RunConfig.model_validate(dict(self.config))
        except ValidationError as e:
            raise RunError(one_line(e, self.source or META, root="config")) from None

    def to_json(self) -> dict[str, Any]:
        """The ``meta.json`` object: every part this run has, under its key."""
        parts = {key: getattr(self, _ATTRIBUTE.get(key, key)) for key in MetaFile.model_fields}
        parts["model"] = self.identity.fields
        parts["excluded"] = None if self.excluded is None else [{"item_id": e.item_id, "reason": e.reason}
                                                               for e in self.excluded]
        plugins = {k: PARTS.get(k).dump_python(v, mode="json", exclude_unset=True) for k, v in self.parts.items()}
        return {k: part_json(v) for k, v in parts.items() if v is not None} | plugins

    @classmethod
    def from_json(cls, meta: Any, path: Path) -> RunMeta:
        """The typed view of a parsed ``meta.json`` at ``path``.

        Raises:
            RunError: one line naming ``path`` and the field that is unknown, missing or of the wrong type.
        """
        if not isinstance(meta, dict) or not isinstance(meta.get("config"), dict):
            raise RunError(f"{path}: not a run's meta.json (no config object)")
        if not isinstance(meta["config"].get("suite"), str):
            raise RunError(f"{path}, field 'config.suite': missing or not a string")
        if "model" not in meta:
            raise RunError(f"{path}: missing key 'model'")
        version = meta.get("schema_version")
        if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
            raise RunError(f"{path}, field 'schema_version': {version} is newer than this lingdiag reads "
                           f"({SCHEMA_VERSION}); read the run with the lingdiag that wrote it, or upgrade")
        unknown = sorted(k for k in set(meta) - set(MetaFile.model_fields) if PARTS.find(k) is None)
        if unknown:
            known = [*MetaFile.model_fields, *PARTS.names()]
            raise RunError(f"{path}: unknown key {unknown[0]!r} (known: {', '.join(known)})")
        try:
            return cls(**{_ATTRIBUTE.get(str(k), str(k)): v for k, v in meta.items()}, source=Path(path))
        except ValidationError as e:
            error = e.errors()[0]
            if len(error["loc"]) > 1 and error["loc"][-1] in _UNION_TAGS:  # a number is an int or a float: say neither
                error["loc"] = error["loc"][:-1]
            where, problem = field_problem(error)
            raise RunError(f"{path}, field '{where}': {problem}") from None

    @classmethod
    def read(cls, path: Path) -> RunMeta:
        """Read ``meta.json`` at ``path``; damaged, empty, of another shape or not a regular file of
        bounded size is a one-line ``RunError``.
        """
        try:
            meta = json.loads(read_regular(Path(path)).decode("utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            where = f"line {e.lineno}: {e.msg}" if isinstance(e, json.JSONDecodeError) else str(e)
            raise RunError(f"{path}, {where}: not a run's meta.json (damaged or empty)") from None
        return cls.from_json(meta, path)


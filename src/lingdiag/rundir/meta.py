"""``meta.json``: ``RunMeta``, its only reader and writer, and the backend's ``ModelIdentity``."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lingdiag.config import RunConfig
from lingdiag.errors import RunError, one_line
from lingdiag.io.paths import sha256_file
from lingdiag.suite import SUITE_COPY, SUITES, Excluded, Suite

SCHEMA_VERSION = 1
META = "meta.json"


@dataclass(frozen=True, slots=True)
class ModelIdentity:
    """``meta.json``'s ``model``: the backend's identity (the cache key's model part), as recorded.

    The entries are the backend's own (``backend``, ``model``, ``weights_sha256``, device and
    adapter settings...), so they are kept whole; the ones every reader needs are typed here.
    """

    fields: Mapping[str, Any]

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
        """The parameter count the backend recorded, if any."""
        value = self.fields.get("n_params")
        try:
            return float(value) if value not in (None, "") else None
        except (TypeError, ValueError):
            return None


_JSON_TYPES: dict[str, tuple[type, str]] = {
    "schema_version": (int, "an integer"), "config": (dict, "an object"), "model": (dict, "an object"),
    "dataset": (dict, "an object"), "versions": (dict, "an object"), "lock": (dict, "an object"),
    "seed": (int, "an integer"), "timings": (dict, "an object"), "skipped": (dict, "an object"),
    "scoring_policies": (dict, "an object"), "suite_file": (dict, "an object"), "thinking": (dict, "an object"),
    "after_thinking": (dict, "an object"),
    "precision": (dict, "an object"), "excluded": (list, "a list"), "usage": (dict, "an object"),
    "shards": (list, "a list"), "imported": (dict, "an object"),
}
"""Every key ``meta.json`` may hold, with its JSON type."""
_REQUIRED = ("config", "model")
"""What every run directory's ``meta.json`` holds (an imported run's holds little more)."""


@dataclass(frozen=True, slots=True)
class RunMeta:
    """A run's ``meta.json``: the only writer (:meth:`to_json`, through :meth:`RunStore.write_meta`)
    and the only reader (:meth:`read`) of it, so that every key is named once, here.

    Optional parts are None where the file does not hold them (an imported run holds only
    ``config``, ``model`` and ``imported``), so a file read and written back is unchanged.
    """

    config: Mapping[str, Any]
    """The recorded run configuration (``RunConfig.recorded()``), compared field by field on resume;
    :attr:`run_config` is its typed form."""
    identity: ModelIdentity
    """``model``: what the backend recorded about the model."""
    schema_version: int | None = None
    checksums: Mapping[str, str] | None = None
    """``dataset``: each data file's SHA-256."""
    versions: Mapping[str, str] | None = None
    """Package versions (python, lingdiag, torch...)."""
    lock: Mapping[str, Any] | None = None
    """The installed environment beside the lock (``lingdiag.models.environment``)."""
    seed: int | None = None
    timings: Mapping[str, float] | None = None
    """Condition → seconds spent, summed over resumed sessions (and over shards)."""
    skipped: Mapping[str, str] | None = None
    """Condition → why it was not run."""
    scoring_policies: Mapping[str, Sequence[Mapping[str, Any]]] | None = None
    """Condition → the scoring policies its requests carry, where not only the default."""
    suite_file: Mapping[str, str] | None = None
    """The suite file a run was read from: ``path`` and ``sha256``."""
    thinking: Mapping[str, Any] | None = None
    """Condition → the thinking setting it ran under (``--thinking``), where the axis was given."""
    after_thinking: Mapping[str, Any] | None = None
    """Condition → the generation run whose thinking it replays (``--after-thinking``: ``run``,
    ``condition``, ``setting``) and the items not scored, by reason; None without replays."""
    precision: Mapping[str, Any] | None = None
    """A reduced-precision run's dtype, the per-token noise bound its fragile decisions are marked
    against and whether they were re-scored (``rescore_fragile``); None in float32."""
    excluded: tuple[Excluded, ...] | None = None
    """Items of the data left out as not interpretable (identical or empty minimal pairs); None
    where the data has none."""
    usage: Mapping[str, int] | None = None
    """Tokens and requests a metered backend counted; None where it counted none."""
    shards: Sequence[Mapping[str, Any]] | None = None
    """A merged run's shards (``shard``, ``dir`` and the server's ``base_url`` where each had one)."""
    imported: Mapping[str, Any] | None = None
    """Answers computed elsewhere: what was imported and how (``lingdiag score … --out``)."""
    source: Path | None = field(default=None, compare=False)
    """The file this was read from (named in errors); not part of ``meta.json``."""

    @property
    def suite(self) -> str:
        """``config.suite``."""
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

    def suite_of(self, run_dir: Path) -> Suite:
        """The suite the run's records belong to: the copy of its suite file where the run kept
        one (the file may have moved or changed since), else the registered name in its config.
        """
        copy = Path(run_dir) / SUITE_COPY
        if self.suite_file and copy.is_file():
            expected = self.suite_file.get("sha256")
            actual = sha256_file(copy)
            # The copy is the file's text, so a file that began with a byte-order mark lost it.
            with_bom = hashlib.sha256(b"\xef\xbb\xbf" + copy.read_bytes()).hexdigest()
            if expected not in (actual, with_bom):  # an edited copy would change the metrics read from the records
                raise RunError(f"{copy}: SHA-256 {actual} is not the {expected} meta.json records for the suite file "
                               "the run used; restore the copy (or the file it came from) before reading this run")
            return SUITES.get(str(copy))
        return SUITES.get(self.suite)

    def to_json(self) -> dict[str, Any]:
        """The ``meta.json`` object: every part this run has, under its key."""
        parts: dict[str, Any] = {
            "schema_version": self.schema_version, "config": self.config, "model": self.identity.fields,
            "dataset": self.checksums, "versions": self.versions, "lock": self.lock, "seed": self.seed,
            "timings": self.timings, "skipped": self.skipped, "scoring_policies": self.scoring_policies,
            "suite_file": self.suite_file, "thinking": self.thinking, "after_thinking": self.after_thinking,
            "precision": self.precision,
            "excluded": None if self.excluded is None else [{"item_id": e.item_id, "reason": e.reason}
                                                            for e in self.excluded],
            "usage": self.usage, "shards": self.shards, "imported": self.imported,
        }
        return {k: v for k, v in parts.items() if v is not None}

    @classmethod
    def from_json(cls, meta: Any, path: Path) -> RunMeta:
        """The typed view of a parsed ``meta.json`` at ``path``.

        Raises:
            RunError: one line naming ``path`` and the key that is unknown, missing or of the wrong type.
        """
        if not isinstance(meta, dict) or not isinstance(meta.get("config"), dict):
            raise RunError(f"{path}: not a run's meta.json (no config object)")
        if not isinstance(meta["config"].get("suite"), str):
            raise RunError(f"{path}, field 'config.suite': missing or not a string")
        for key in meta:
            if key not in _JSON_TYPES:
                raise RunError(f"{path}: unknown key {key!r} (known: {', '.join(_JSON_TYPES)})")
        for key in _REQUIRED:
            if key not in meta:
                raise RunError(f"{path}: missing key {key!r}")
        for key, value in meta.items():
            kind, what = _JSON_TYPES[key]
            if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
                raise RunError(f"{path}, field {key!r}: {type(value).__name__}, not {what}")
        return cls(config=meta["config"], identity=ModelIdentity(meta["model"]),
                   schema_version=meta.get("schema_version"), checksums=meta.get("dataset"),
                   versions=meta.get("versions"), lock=meta.get("lock"), seed=meta.get("seed"),
                   timings=meta.get("timings"), skipped=meta.get("skipped"),
                   scoring_policies=meta.get("scoring_policies"), suite_file=meta.get("suite_file"),
                   thinking=meta.get("thinking"), after_thinking=meta.get("after_thinking"),
                   precision=meta.get("precision"), usage=meta.get("usage"),
                   excluded=None if meta.get("excluded") is None else tuple(
                       Excluded(str(e.get("item_id", "")), str(e.get("reason", "")))
                       for e in meta["excluded"] if isinstance(e, Mapping)),
                   shards=meta.get("shards"), imported=meta.get("imported"),
                   source=Path(path))

    @classmethod
    def read(cls, path: Path) -> RunMeta:
        """Read ``meta.json`` at ``path``; damaged, empty or of another shape is a one-line ``RunError``."""
        try:
            meta = json.loads(Path(path).read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            where = f"line {e.lineno}: {e.msg}" if isinstance(e, json.JSONDecodeError) else str(e)
            raise RunError(f"{path}, {where}: not a run's meta.json (damaged or empty)") from None
        except OSError as e:
            raise RunError(f"cannot read {path}: {e.strerror or e}") from None
        return cls.from_json(meta, path)

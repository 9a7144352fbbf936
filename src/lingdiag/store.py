"""The run directory: ``meta.json``, ``items.jsonl``, ``metrics.json``, ``table.md``, and
loading run directories back as ``ResultRow``s (metrics recomputed from the records).

``items.jsonl`` is appended chunk by chunk and fsynced, so a run killed at any point
loses at most the chunk in flight. On resume, a torn last line and records that carry a
backend error are dropped (those items run again), and the file is rewritten without
duplicates. When a run finishes, the records are rewritten in canonical order so that
the same configuration gives a byte-identical file however often it was interrupted.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lingdiag.errors import RunError
from lingdiag.records import ItemRecord, ResultRow
from lingdiag.suite import SUITES

SCHEMA_VERSION = 1


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def config_changes(old: Mapping[str, Any], new: Mapping[str, Any], ignore: Sequence[str] = ()) -> list[str]:
    """The config fields (as in ``meta.json``) that differ between two runs, sorted; ``ignore`` excepted."""
    return sorted(k for k in set(old) | set(new) if k not in ignore and old.get(k) != new.get(k))


class RunStore:
    """Reads and writes one run directory."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.items_path = self.root / "items.jsonl"

    def load_records(self) -> list[ItemRecord]:
        """All complete records; a torn last line (a killed write) is ignored."""
        if not self.items_path.exists():
            return []
        records = []
        # Split on "\n" only: model text may hold U+2028 or U+0085, which JSON leaves
        # unescaped and str.splitlines() would treat as line ends.
        lines = self.items_path.read_text(encoding="utf-8").split("\n")
        if lines[-1] == "":
            lines.pop()
        for n, line in enumerate(lines, 1):
            try:
                records.append(ItemRecord.from_json(line))
            except (json.JSONDecodeError, TypeError) as e:
                if n == len(lines):
                    break
                raise RunError(f"{self.items_path}, line {n}: not an item record ({e})") from e
        return records

    def prepare_resume(self, config: dict[str, Any], ignore: Sequence[str] = (),
                       dataset: Mapping[str, str] | None = None) -> tuple[set[tuple[str, str]], dict[str, float]]:
        """Check the directory matches ``config``; return the (condition, item) keys done
        and the seconds the earlier sessions spent per condition.

        Errored records are dropped so those items run again; the file is rewritten with
        one record per key. Fields named in ``ignore`` may differ from the earlier run's; the
        dataset files' checksums (``dataset``) may not.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        meta_path = self.root / "meta.json"
        timings: dict[str, float] = {}
        if meta_path.exists():
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            timings = meta.get("timings", {})
            changed = config_changes(meta.get("config", {}), config, ignore)
            if changed:
                raise RunError(f"{self.root} holds a run with a different configuration "
                               f"(differs in: {', '.join(changed)}); use another --out directory")
            before = meta.get("dataset") or {}
            # An empty checksum (runs from before user files were hashed) cannot be compared.
            changed = sorted(k for k in set(before) | set(dataset or {})
                             if dataset is not None and before.get(k) != dataset.get(k) and before.get(k) != "")
            if changed:
                raise RunError(f"{self.root} was run on other data: {', '.join(changed)} changed since "
                               "(SHA-256); use another --out directory")
        kept: dict[tuple[str, str], ItemRecord] = {}
        for r in self.load_records():
            if r.error is None:
                kept[(r.condition, r.item_id)] = r
        _atomic_write(self.items_path, "".join(r.to_json() + "\n" for r in kept.values()))
        return set(kept), timings

    def append(self, records: Iterable[ItemRecord]) -> None:
        """Append records durably."""
        text = "".join(r.to_json() + "\n" for r in records)
        with open(self.items_path, "a", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())

    def finalize(self, order: Sequence[tuple[str, str]]) -> list[ItemRecord]:
        """Rewrite ``items.jsonl`` in canonical ``order``, keeping the last record per key."""
        latest = {(r.condition, r.item_id): r for r in self.load_records()}
        records = [latest[k] for k in order if k in latest]
        _atomic_write(self.items_path, "".join(r.to_json() + "\n" for r in records))
        return records

    def write_json(self, name: str, data: Any) -> None:
        """Write ``name`` (e.g. ``meta.json``) atomically."""
        _atomic_write(self.root / name, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")

    def read_json(self, name: str) -> Any:
        """Read ``name`` from the run directory."""
        path = self.root / name
        if not path.exists():
            raise RunError(f"{path} does not exist; is {self.root} a lingdiag run directory?")
        return json.loads(path.read_text(encoding="utf-8"))

    def write_text(self, name: str, text: str) -> None:
        """Write a text file (``table.md``) atomically."""
        _atomic_write(self.root / name, text)


def write_imported(root: Path, *, suite: str, model: str, dataset: str, records: Sequence[ItemRecord],
                   provenance: Mapping[str, Any]) -> None:
    """A run directory for answers computed elsewhere (``lingdiag score … --out``), readable by
    ``lingdiag report`` and the cross-run analyses like any run's.

    Args:
        root: The directory to create; an existing run there is refused.
        suite: The suite the records belong to.
        model: The name the report shows (e.g. the source file's model).
        dataset: The dataset the answers were matched to.
        records: The imported records.
        provenance: What was imported and how (file, SHA-256, columns, rules), kept in ``meta.json``.
    """
    store = RunStore(root)
    if (store.root / "meta.json").exists():
        raise RunError(f"{root} already holds a run; use another --out directory")
    store.root.mkdir(parents=True, exist_ok=True)
    _atomic_write(store.items_path, "".join(r.to_json() + "\n" for r in records))
    store.write_json("meta.json", {"config": {"suite": suite, "model": model, "dataset": dataset},
                                   "model": {"model": model, "backend": "imported"}, "imported": dict(provenance)})


@dataclass(frozen=True)
class LoadedRun:
    """A run directory read back for reports and analyses (never a model call)."""

    path: Path
    suite: str
    model: str
    meta: Mapping[str, Any]
    rows: list[ResultRow]
    """One row per condition, metrics recomputed from ``items.jsonl`` with the suite's function."""


def n_params(meta: Mapping[str, Any]) -> float | None:
    """The parameter count a backend recorded in ``meta.json`` (``model.n_params``), if any."""
    value = meta.get("model", {}).get("n_params")
    try:
        return float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def load_run(run_dir: Path) -> LoadedRun:
    """Read ``run_dir`` and recompute every condition's metrics from its records."""
    store = RunStore(run_dir)
    meta = store.read_json("meta.json")
    suite = SUITES.get(meta["config"]["suite"])
    model = str(meta["model"].get("model", meta["config"]["model"]))
    by_condition: dict[str, list[ItemRecord]] = defaultdict(list)
    for r in store.load_records():
        by_condition[r.condition].append(r)
    rows = [ResultRow(model, c, dict(rs[0].axes), suite.condition_metrics(rs), str(run_dir),
                      str(meta["config"].get("dataset", "")), n_params(meta))
            for c, rs in by_condition.items()]
    return LoadedRun(Path(run_dir), suite.name, model, meta, rows)

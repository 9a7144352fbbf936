"""Shard run directories → one run directory, as if the run had never been split.

A shard (``lingdiag run … --shard K/N``) is a normal, resumable run directory whose config
records the shard. ``merge`` checks that the shards are the N parts of one run, then
re-plans the whole run and writes its records in the unsharded run's order with the same
``finish`` a run ends with: ``items.jsonl``, ``metrics.json`` and ``table.md`` are
byte-identical to the unsharded run's. ``meta.json`` differs from it only in ``timings``
and ``usage`` (summed over the shards), the ``shards`` it lists, and the model's
``base_url`` where each shard had its own server. Shards whose own ``meta.json`` parts differ
(thinking, precision, scoring policies, the replayed run, data, versions, lock) are refused.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lingdiag.conditions.expander import Expander, Ran
from lingdiag.config import RunConfig, Shard, answer_config
from lingdiag.engine.finish import finish
from lingdiag.engine.run import Plan, plan
from lingdiag.errors import RunError
from lingdiag.io.atomic import make_dir, write_atomic
from lingdiag.records import ItemRecord
from lingdiag.rundir import SCHEMA_VERSION, Inputs, RunMeta, RunStore, config_changes, drift, run_state
from lingdiag.rundir.inputs import rebased

PER_SHARD = ("shard", "shard_base_urls")
"""Config fields that differ between the shards of one run."""
PER_SERVER = ("base_url",)
MERGE_WRITES = ("items.jsonl", "metrics.json", "table.md")
"""The files a merge writes beside ``meta.json``."""
"""Model identity fields that may differ when each shard has its own server."""


@dataclass(frozen=True)
class ShardRun:
    """One shard's run directory, read back."""

    path: Path
    config: RunConfig
    shard: Shard
    meta: RunMeta


@dataclass(frozen=True)
class MergeResult:
    """What ``merge`` wrote."""

    out: Path
    metrics: dict[str, Any]
    table: str


def read_shard(path: Path) -> ShardRun:
    """The shard run in ``path``; a run without ``--shard`` is refused."""
    meta = RunStore(path).read_meta()
    config = meta.run_config
    if config.shard is None:
        raise RunError(f"{path} is not a shard (it was run without --shard K/N)")
    return ShardRun(Path(path), config, config.shard, meta)


def _same(shards: Sequence[ShardRun], what: str, value: Any) -> None:
    """Refuse shards that differ in ``value(shard)``, naming the first two that do."""
    first = shards[0]
    for s in shards[1:]:
        a, b = value(first), value(s)
        if a != b:
            detail = (", ".join(sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k)))
                      if isinstance(a, dict) and isinstance(b, dict) else f"{a!r} vs {b!r}")
            raise RunError(f"{first.path} and {s.path} are not shards of one run: {what} differ ({detail})")


def check_shards(shards: Sequence[ShardRun]) -> None:
    """The shards are the N parts of one run: same config but for the shard, same model
    identity, data and code versions, each shard number once and none missing.
    """
    if not shards:
        raise RunError("no shard directories given")
    first = shards[0].config.recorded()
    for s in shards[1:]:
        changed = config_changes(answer_config(first), answer_config(s.config.recorded()), PER_SHARD)
        if changed:
            raise RunError(f"{shards[0].path} and {s.path} are not shards of one run: "
                           f"their configurations differ in {', '.join(changed)}")
    _same(shards, "shard counts (N)", lambda s: s.shard.count)
    _same(shards, "model identities",
          lambda s: {k: v for k, v in s.meta.identity.fields.items() if k not in PER_SERVER})
    _same(shards, "dataset checksums", lambda s: sorted((s.meta.checksums or {}).values()))
    _same(shards, "package versions", lambda s: s.meta.versions or {})
    _same(shards, "lock status", lambda s: s.meta.lock or {})
    _same(shards, "suite files", lambda s: s.meta.suite_file or {})
    _same(shards, "excluded items", lambda s: list(s.meta.excluded or ()))
    by_index: dict[int, list[Path]] = defaultdict(list)
    for s in shards:
        by_index[s.shard.index].append(s.path)
    n = shards[0].shard.count
    twice = {k: ps for k, ps in sorted(by_index.items()) if len(ps) > 1}
    if twice:
        raise RunError("shards given more than once: " + "; ".join(
            f"{k}/{n} in {', '.join(map(str, ps))}" for k, ps in twice.items()))
    missing = [k for k in range(1, n + 1) if k not in by_index]
    if missing:
        have = ", ".join(map(str, sorted(by_index)))
        raise RunError(f"missing shards {', '.join(map(str, missing))} of {n} (have {have})")


def merge(paths: Sequence[Path], out: Path) -> MergeResult:
    """Merge the shard run directories ``paths`` into the run directory ``out``.

    Args:
        paths: Every shard of one run, in any order.
        out: Where the merged run goes (created; a previous merge there is replaced, any other run refused).

    Returns:
        The merged run's location, metrics and table.

    Raises:
        RunError: the directories are not the complete shards of one run, a shard has not
            finished, or the data changed since the shards ran.
    """
    shards = [read_shard(p) for p in paths]
    check_shards(shards)
    whole = shards[0].config.unsharded()
    planned = plan(whole)
    check_parts(shards, planned.expanders)
    if any(c.kind == "data" for c in drift(shards[0].meta, Inputs(sources=planned.sources()))[0]):
        raise RunError(f"the data of {whole.dataset!r} (or a run it replays) changed since the shards ran (SHA-256); "
                       "run them again")
    skipped: dict[str, str] = {}
    records: list[ItemRecord] = []
    golds = {(c, it.id): it.gold for c, items in planned.items.items() for it in items}
    shards = sorted(shards, key=lambda s: s.shard.index)
    for s in shards:
        skipped.update(s.meta.skipped or {})
        part = plan(s.config)
        state = run_state(s.path, part.inputs(s.config))
        if not state.finished:
            raise RunError(f"{s.path}: shard {s.shard} has not finished ({state.line or state.status}); run it again")
        loaded = RunStore(s.path).load_records()
        check_records(RunStore(s.path).items_path, loaded, golds)
        got = {(r.condition, r.item_id): r for r in loaded}
        lacking = [k for k in part.order() if k[0] not in skipped and k not in got]
        if lacking:
            raise RunError(f"{s.path}: shard {s.shard} has not finished ({len(lacking)} records missing); "
                           "run it again")
        records += got.values()
    _check_out(out, [s.path for s in shards])
    store = RunStore(out)
    make_dir(store.root)
    write_atomic(store.items_path, "".join(r.to_json() + "\n" for r in records))
    metrics, table = finish(store, planned.suite, planned.ending(shards[0].meta.model, whole.dataset),
                            rebased(_merged_meta(whole, shards, skipped, planned), shards[0].path, store.root))
    return MergeResult(out, metrics, table)


def check_parts(shards: Sequence[ShardRun], expanders: Sequence[Expander]) -> None:
    """Each expander's own ``meta.json`` part is alike in every shard (but what a shard names of its
    own items), so that no shard ran under another thinking setting, precision or replayed run.
    """
    for e in expanders:  # compared as meta.json holds them (the expanders record their parts as JSON)
        _same(shards, f"their meta.json parts {e.part!r}", lambda s, e=e: e.shared(s.meta.to_json().get(e.part)) or {})


def check_records(items_path: Path, records: Sequence[ItemRecord],
                  golds: Mapping[tuple[str, str], str | None]) -> None:
    """A shard's records agree with the dataset and with themselves: each record's ``gold`` is
    the dataset's, and its ``correct`` is what its label and gold give (as a run scores it).

    Raises:
        RunError: naming the file, line and field of the first record that does not (a
            hand-edited record would otherwise change the merged metrics silently).
    """
    for n, r in enumerate(records, 1):  # load_records keeps one record per line, in order
        key = (r.condition, r.item_id)
        if key in golds and r.gold != golds[key]:
            raise RunError(f"{items_path}, line {n}, field 'gold': {r.gold!r}, but the dataset's gold of item "
                           f"{r.item_id!r} is {golds[key]!r}; the record was edited or the data changed")
        expected = None if r.gold is None or r.error is not None else r.label == r.gold
        if r.correct != expected:
            raise RunError(f"{items_path}, line {n}, field 'correct': {r.correct!r} contradicts its label "
                           f"{r.label!r} and gold {r.gold!r} (expected {expected!r}); the record was edited")


def _check_out(out: Path, shard_paths: Sequence[Path]) -> None:
    if Path(out).resolve() in {p.resolve() for p in shard_paths}:
        raise RunError(f"--out {out} is one of the shards; merge into another directory")
    meta_path = RunStore(out).meta_path
    if meta_path.exists() and RunStore(out).read_meta().shards is None:
        raise RunError(f"{out} already holds a run that is not a merge; use another --out directory")
    # Without a meta.json, files of the names merge writes are someone else's: never replace them.
    theirs = [name for name in MERGE_WRITES if not meta_path.exists() and (Path(out) / name).exists()]
    if theirs:
        raise RunError(f"--out {out} holds {', '.join(theirs)} but is not a run directory; "
                       "merge into another directory")


def _merged_meta(whole: RunConfig, shards: Sequence[ShardRun], skipped: Mapping[str, str], planned: Plan) -> RunMeta:
    first = shards[0].meta
    timings: dict[str, float] = defaultdict(float)
    usage: dict[str, int] = defaultdict(int)
    for s in shards:
        for c, t in (s.meta.timings or {}).items():
            timings[c] += t
        for k, v in (s.meta.usage or {}).items():
            usage[k] += v
    # The run's own parts (identity, data, versions...) are every shard's: the first's carry over whole,
    # so a part added to RunMeta later cannot be dropped here; each expander records its own part
    # from the whole plan, as the unsharded run did.
    requests = {c.name: [r for it in planned.items[c.name] for r in c.strategy.render(it)] for c in planned.conditions}
    ran = Ran(planned.conditions, requests, set(skipped), planned.not_scored, shard=first)
    return first.replaced(
        config=whole.recorded(), seed=whole.seed, schema_version=SCHEMA_VERSION,
        # Seconds summed over the shards (compute spent, not the wall time of the whole).
        timings={c: round(t, 3) for c, t in timings.items()}, skipped=dict(skipped),
        shards=[{"shard": str(s.shard), "dir": str(s.path.resolve()),
                 **{k: s.meta.identity.fields[k] for k in PER_SERVER if k in s.meta.identity.fields}} for s in shards],
        usage=dict(usage) if any(s.meta.usage is not None for s in shards) else None,
        **{e.part: e.recorded(ran) for e in planned.expanders},
    )

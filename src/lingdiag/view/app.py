"""The viewer's routes over the runs found under the given directories (starlette and uvicorn, the
``view`` extra). Read-only: every request names a run or group by the id the catalog gave it (never a
path), and the files opened are the run's own (:mod:`.files`). Pages are plain HTML with no script.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lingdiag.errors import LingdiagError
from lingdiag.items.section import run_params
from lingdiag.reading import load_run
from lingdiag.records import ItemRecord
from lingdiag.report.page import Page
from lingdiag.report.sections import fragments
from lingdiag.report.tables import tables
from lingdiag.rundir import RunStore, run_state
from lingdiag.view import catalog, difficulty, index, pages
from lingdiag.view.catalog import Catalog, Run
from lingdiag.view.difficulty import ItemOrder
from lingdiag.view.filters import Filter

COMPARED_PAIRS = 200
"""Pairs drawn in full on a compare page (the counts cover all)."""


class NotFound(LingdiagError):
    """No run, group or record by that name."""


class BadRequest(LingdiagError):
    """A query value the page cannot take (answered 400)."""


_WHOLE = re.compile(r"[0-9]{1,18}")
"""A line, start or seed: ASCII digits only (``"²".isdigit()`` is true and ``int("²")`` fails), and few
enough that ``int`` never meets its 4,300-digit limit."""


def number(q: dict[str, str], key: str, default: int) -> int:
    """The whole number ``key`` of a query (``default`` where it is absent or empty).

    Raises:
        BadRequest: anything but up to 18 ASCII digits, one line naming the key.
    """
    raw = q.get(key, "")
    if raw == "":
        return default
    if not _WHOLE.fullmatch(raw):
        shown = raw if len(raw) <= 40 else raw[:40] + "…"
        raise BadRequest(f"{key}={shown!r}: expected a whole number of at most 18 digits")
    return int(raw)


class Viewer:
    """What the routes share: the given directories, the offsets index and the rendered reports."""

    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots = [Path(r) for r in roots]
        self.index = index.Index()
        self._reports: dict[Path, tuple[Any, str]] = {}
        self._lock = threading.Lock()

    def catalog(self) -> Catalog:
        """The runs and groups as they are now."""
        return catalog.catalog(self.roots)

    def run(self, run_id: str) -> Run:
        """The run of that id."""
        found = self.catalog().runs.get(run_id)
        if found is None:
            raise NotFound(f"no run {run_id!r} under the given directories")
        return found

    def row(self, run: Run) -> pages.RunRow:
        """The runs list's line for ``run``."""
        meta = catalog.meta(run.path)
        done = len(self.index.of(run.path))
        state = run_state(run.path)  # the run directory's own answer: planned items, finished, current
        conditions = list(dict.fromkeys([*(meta.timings or {}), *(meta.skipped or {})]))
        return pages.RunRow(run.id, run.group, meta.suite, meta.model, conditions, done, state.planned,
                            state.status, state.line)

    def report(self, run: Run) -> str:
        """The run's page: its report's sections, rendered again only when its files changed."""
        items, meta = run.path / "items.jsonl", run.path / "meta.json"
        key = tuple((p.stat().st_mtime_ns, p.stat().st_size) for p in (items, meta) if p.exists())
        with self._lock:
            cached = self._reports.get(run.path)
        if cached and cached[0] == key:
            return cached[1]
        row = self.row(run)
        try:
            loaded = [load_run(run.path)]
            parts, note = fragments(Page(loaded, tables(loaded), static=False)), ""
        except LingdiagError as e:
            parts, note = [], f"no report yet: {e}"
        html = pages.run_page(run.id, parts, row.conditions, note)
        with self._lock:
            self._reports[run.path] = (key, html)
        return html


def _items(v: Viewer, q: dict[str, str]) -> str:
    run = v.run(q.get("id", ""))
    offsets = v.index.of(run.path)
    f = Filter.of(q)
    start = number(q, "start", 0)
    found: list[tuple[int, ItemRecord]]
    params, order = run_params(run.path), ItemOrder.of(q)  # the item model saved for the run, if any
    if params and order.active():
        scanned = f.scan(offsets) if f.active() else index.read(offsets, 0, len(offsets))
        found, nxt = difficulty.page(order.arrange(scanned, params), start, pages.PAGE_SIZE)
    elif f.active():
        found = []
        for k, r in f.scan(offsets, start):
            if len(found) == pages.PAGE_SIZE:
                break
            found.append((k, r))
        nxt = found[-1][0] + 1 if len(found) == pages.PAGE_SIZE else None
    else:
        found = index.read(offsets, start, pages.PAGE_SIZE)
        nxt = start + pages.PAGE_SIZE if start + pages.PAGE_SIZE < len(offsets) else None
    return pages.items_page(run.id, f, v.row(run).conditions, found, len(offsets), nxt, params, order)


def _same_item(v: Viewer, item_id: str, runs: Sequence[Run], condition: str = "") -> list[tuple[str, ItemRecord]]:
    """The records of item ``item_id`` in ``runs`` (those of ``condition`` first), streamed from disk."""
    out = []
    # A line holding the item holds its id as JSON wrote it; others are skipped unparsed.
    needle = json.dumps({"item_id": item_id}, ensure_ascii=False)[1:-1].encode()
    for other in runs:
        offsets = v.index.of(other.path)
        for k, raw in index.lines(offsets):
            if needle in raw:
                rec = index.record(offsets, k, raw)
                if rec.item_id == item_id:
                    out.append((f"{other.id} ({catalog.meta(other.path).model}): {rec.condition}", rec))
    return sorted(out, key=lambda x: x[1].condition != condition)


def _item(v: Viewer, q: dict[str, str]) -> str:
    run = v.run(q.get("id", ""))
    line = number(q, "line", -1)
    found = index.read(v.index.of(run.path), line, 1) if line >= 0 else []
    if not found:
        raise NotFound(f"run {run.id} has no record on line {q.get('line', '')!r} (lines count from 0 here)")
    cat = v.catalog()
    peers = [x for x in cat.runs.values() if run.group is not None and x.group == run.group] or list(cat.runs.values())
    record = found[0][1]
    others = [x for x in peers if x.path != run.path]
    return pages.item_page(run.id, line, record, _same_item(v, record.item_id, others, record.condition))


def _paired(a: Sequence[ItemRecord], b: Sequence[ItemRecord], key: Callable[[ItemRecord], str],
            ) -> list[tuple[str, ItemRecord, ItemRecord]]:
    by_b = {key(r): r for r in b if r.error is None}
    pairs = [(key(r), r, by_b[key(r)]) for r in a if r.error is None and key(r) in by_b]

    def rank(p: tuple[str, ItemRecord, ItemRecord]) -> int:
        x, y = p[1], p[2]
        return 0 if x.correct and y.correct is False else 1 if y.correct and x.correct is False else 2
    return sorted(pairs, key=rank)


def _compare(v: Viewer, q: dict[str, str]) -> str:
    from lingdiag.analysis.compare import compare_conditions, compare_runs

    a = v.run(q.get("a", ""))
    seed = number(q, "seed", 0)
    if q.get("ca") and q.get("cb"):
        ca, cb = q["ca"], q["cb"]
        rows = compare_conditions(a.path, ca, cb, seed=seed)
        records = RunStore(a.path).load_records()
        pairs = _paired([r for r in records if r.condition == ca], [r for r in records if r.condition == cb],
                        lambda r: r.item_id)
        title = f"run {a.id}: {ca} (A) vs {cb} (B)"
    else:
        b = v.run(q.get("b", ""))
        rows = compare_runs(a.path, b.path, seed=seed)
        pairs = _paired(RunStore(a.path).load_records(), RunStore(b.path).load_records(),
                        lambda r: f"{r.condition} / {r.item_id}")
        title = f"{a.id} (A) vs {b.id} (B)"
    return pages.compare_page(title, rows, pairs, COMPARED_PAIRS)


def _group(v: Viewer, q: dict[str, str]) -> str:
    cat = v.catalog()
    group = cat.groups.get(q.get("id", ""))
    if group is None:
        raise NotFound(f"no group {q.get('id', '')!r}")
    runs = [cat.runs[i] for i in group.runs]
    item = q.get("item", "").strip()
    found = _same_item(v, item, runs) if item else []
    return pages.group_page(group.id, str(group.path), [v.row(r) for r in runs], item, found)


def _runs(v: Viewer, q: dict[str, str]) -> str:
    cat = v.catalog()
    rows = []
    for run in cat.runs.values():
        try:
            rows.append(v.row(run))
        except LingdiagError as e:
            rows.append(pages.RunRow(run.id, run.group, "?", "?", [], 0, None, f"unreadable: {e}"))
    return pages.runs_page(rows, {g.id: (str(g.path), g.study, len(g.runs)) for g in cat.groups.values()})


PAGES: dict[str, Callable[[Viewer, dict[str, str]], str]] = {
    "/": _runs, "/run": lambda v, q: v.report(v.run(q.get("id", ""))), "/items": _items, "/item": _item,
    "/compare": _compare, "/group": _group,
}
"""Path → the page it draws from the query string."""

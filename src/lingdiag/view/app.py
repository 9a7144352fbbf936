"""The viewer's routes over the runs found under the given directories (starlette and uvicorn, the
``view`` extra). Read-only: every request names a run or group by the id the catalog gave it (never a
path), and the files opened are the run's own (:mod:`.files`). Pages are plain HTML with no script.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from lingdiag.errors import LingdiagError, RunError
from lingdiag.items.section import run_params
from lingdiag.reading import load_run
from lingdiag.records import ItemRecord
from lingdiag.report.page import Page
from lingdiag.report.sections import fragments
from lingdiag.report.tables import tables
from lingdiag.rundir import META, Phase, Status, run_state
from lingdiag.rundir.directory import held_locks
from lingdiag.study.status import GridRow
from lingdiag.view import catalog, difficulty, index, pages, studypages
from lingdiag.view.catalog import Catalog, Group, Run
from lingdiag.view.compared import Pairs, compared
from lingdiag.view.difficulty import ItemOrder
from lingdiag.view.files import inside
from lingdiag.view.filters import Filter
from lingdiag.view.study import ItemRow, StudyGroup, Summaries, item_curves, item_rows, study_of, version


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
        self.summaries = Summaries(self.index)
        self._reports: dict[Path, tuple[Any, str]] = {}
        self._lock = threading.Lock()
        self.drawing = threading.Lock()
        """Held while a study's report is drawn: a request for it waits for the drawing under way (the
        background's, from the start) instead of drawing it a second time."""

    def catalog(self) -> Catalog:
        """The runs and groups as they are now."""
        return catalog.catalog(self.roots)

    def run(self, run_id: str) -> Run:
        """The run of that id."""
        found = self.catalog().runs.get(run_id)
        if found is None:
            raise NotFound(f"no run {run_id!r} under the given directories")
        return found

    def group(self, group_id: str) -> Group:
        """The group of that id."""
        found = self.catalog().groups.get(group_id)
        if found is None:
            raise NotFound(f"no group {group_id!r}")
        return found

    def study(self, group_id: str) -> StudyGroup:
        """The study of that group id.

        Raises:
            NotFound: no such group, or one that is not a study.
        """
        cat = self.catalog()
        group = cat.groups.get(group_id)
        if group is None or not group.study:
            raise NotFound(f"no study {group_id!r}")
        return study_of(group, cat)

    def row(self, run: Run, held: frozenset[str] | None = None) -> pages.RunRow:
        """The runs list's line for ``run`` (``held``: the locks held now, read once for a page of runs)."""
        inside(run.path, META)
        state = run_state(run.path, held=held)  # the run directory's own answer: planned items, finished, current
        if state.meta is None:
            raise RunError(state.problem or f"{run.path}: not a run directory")
        meta = state.meta
        # A finished run says how many records it ended with; only one still written is counted line by line.
        done = state.recorded + state.failed if state.phase is Phase.FINISHED else len(self.index.of(run.path))
        conditions = list(dict.fromkeys([*(meta.timings or {}), *(meta.skipped or {})]))
        return pages.RunRow(run.id, run.group, meta.suite, meta.model, conditions, done, state.planned,
                            state.status, state.line)

    def report(self, run: Run) -> str:
        """The run's page: its report's sections, rendered again only when its files or its state changed (the
        state, asked each time, sees what the run read change even where its own files did not).
        """
        items, meta = run.path / "items.jsonl", run.path / "meta.json"
        row = self.row(run)
        key = (*((p.stat().st_mtime_ns, p.stat().st_size) for p in (items, meta) if p.exists()), row.state, row.why)
        with self._lock:
            cached = self._reports.get(run.path)
        if cached and cached[0] == key:
            return cached[1]
        try:
            self.summaries.readable(run.path)  # the bound of every read, before the report parses the records
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
    record = found[0][1]
    group = cat.groups.get(run.group or "")
    study = _study_or_none(group, cat)
    if group is not None and study is not None:
        rows = [r for r in _across(v, study, record.item_id) if not (r.run_id == run.id and r.line == line)]
        return pages.item_page(run.id, line, record, [], studypages.item_table(rows) + "<p>" + pages.a(
            "/study-item", "This item across the study, with its learning curve", id=group.id, item=record.item_id)
            + "</p>")
    peers = [x for x in cat.runs.values() if run.group is not None and x.group == run.group] or list(cat.runs.values())
    others = [x for x in peers if x.path != run.path]
    return pages.item_page(run.id, line, record, _same_item(v, record.item_id, others, record.condition))


def _study_or_none(group: Group | None, cat: Catalog) -> StudyGroup | None:
    """``group`` read as a study, or None (no group, not a study, or a ``study.json`` that is not a study's)."""
    if group is None or not group.study:
        return None
    try:
        return study_of(group, cat)
    except LingdiagError:
        return None


def _across(v: Viewer, study: StudyGroup, item_id: str) -> list[ItemRow]:
    cat = v.catalog()
    return item_rows(study, item_id, v.summaries, v.index.of, lambda run_id: cat.runs[run_id].path)


def _compare(v: Viewer, q: dict[str, str]) -> str:
    a = v.run(q.get("a", ""))
    seed = number(q, "seed", 0)
    start = number(q, "start", 0)
    sa = v.summaries.of(a.path)
    if q.get("ca") and q.get("cb"):
        pairs: Pairs = compared(sa, sa, seed=seed, conditions=(q["ca"], q["cb"]))
        title = f"run {a.id}: {sa.run.name}: {q['ca']} (A) vs {q['cb']} (B)"
        query = {"a": a.id, "ca": q["ca"], "cb": q["cb"]}
        b = a
    else:
        b = v.run(q.get("b", ""))
        pairs = compared(sa, v.summaries.of(b.path), seed=seed)
        sb = pairs.b
        title = f"{a.id}: {sa.run.name} (A) vs {b.id}: {sb.run.name} (B)"
        query = {"a": a.id, "b": b.id}
    return pages.compare_page(title, pairs, start, a.id, b.id, {**query, "seed": str(seed)})


def _group(v: Viewer, q: dict[str, str]) -> str:
    cat = v.catalog()
    group = cat.groups.get(q.get("id", ""))
    if group is None:
        raise NotFound(f"no group {q.get('id', '')!r}")
    note = ""
    if group.study and q.get("plain") != "1":
        try:
            study = study_of(group, cat)
            return studypages.study_page(study, study.grid())
        except LingdiagError as e:
            note = f"not read as a study: {e}"
    runs = [cat.runs[i] for i in group.runs]
    item = q.get("item", "").strip()
    found = _same_item(v, item, runs) if item else []
    held = held_locks()
    return pages.group_page(group.id, group.id.removeprefix("g:"), [v.row(r, held) for r in runs], item, found,
                            note)


def _study_report(v: Viewer, q: dict[str, str]) -> str:
    """The study report's sections, drawn again only when a run or ``study.json`` changed."""
    from lingdiag.study.loaded import load
    from lingdiag.study.report import sections_of

    study = v.study(q.get("id", ""))
    with v.drawing:
        key = (version(study.out), *(version(e.directory(study.out)) for e in study.state.runs))
        with v._lock:
            cached = v._reports.get(study.out)
        if cached and cached[0] == key:
            return cached[1]
        loaded = load(study.out, read=lambda path, _: v.summaries.of(study.served(path)), vocab=v.summaries.vocab)
        html = studypages.study_report_page(study, [s.fragment() for s in sections_of(loaded)])
        with v._lock:
            v._reports[study.out] = (key, html)
        return html


def _study_item(v: Viewer, q: dict[str, str]) -> str:
    study = v.study(q.get("id", ""))
    item = q.get("item", "").strip()
    rows = _across(v, study, item) if item else []
    states = {r.key: r.status for r in study.grid()}
    return studypages.study_item_page(study, item, rows, item_curves(rows, study.entries, states))


def _runs(v: Viewer, q: dict[str, str]) -> str:
    cat = v.catalog()
    # A study's runs as the study names, orders and counts them (its grid, as `study status` and its report):
    # by their study names, in the study's order (steps numerically), items answered of planned, its states.
    studied: dict[str, GridRow] = {}
    for group in cat.groups.values():
        study = _study_or_none(group, cat)
        if study is not None:
            studied |= {study.ids[r.key]: r for r in study.grid() if r.key in study.ids}
    order = {run_id: k for k, run_id in enumerate(studied)}
    first = {g: min((order.get(i, len(order)) for i in ids), default=len(order))
             for g, ids in ((g.id, g.runs) for g in cat.groups.values())}
    runs = sorted(cat.runs.values(), key=lambda r: (first.get(r.group or "", len(order)), order.get(r.id, 0)))
    rows = []
    held = held_locks()  # read once for every run of the page
    for run in runs:
        try:
            row = v.row(run, held)
        except LingdiagError as e:
            row = pages.RunRow(run.id, run.group, "?", "?", [], 0, None, Status.UNREADABLE, str(e))
        if (grid_row := studied.get(run.id)) is not None:
            row = replace(row, suite=grid_row.suite, model=grid_row.model, done=grid_row.items_done,
                          planned=grid_row.items_total, state=grid_row.status, why=grid_row.reason)
        rows.append(row)
    return pages.runs_page(rows, {g.id: (_shown(g, cat), g.study, len(g.runs)) for g in cat.groups.values()})


def _shown(group: Group, cat: Catalog) -> str:
    """A group as the runs list names it: its place under the given directories (``0/study``), and a
    study's name.
    """
    study = _study_or_none(group, cat)
    place = group.id.removeprefix("g:")
    return f"{place}: study {study.state.name}" if study is not None else place


PAGES: dict[str, Callable[[Viewer, dict[str, str]], str]] = {
    "/": _runs, "/run": lambda v, q: v.report(v.run(q.get("id", ""))), "/items": _items, "/item": _item,
    "/compare": _compare, "/group": _group, "/study": _study_report, "/study-item": _study_item,
}
"""Path → the page it draws from the query string."""

"""``summary.npz``: written when a run finishes, read instead of the records while it summarises them as they
are now, and never trusted otherwise: records edited after the run (even to the same size, their
modification time restored), a torn summary, another run's summary copied in, a read-only directory, and
runs written before summaries existed (summarised once, on their first read, to the same numbers)."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from helpers import RecordOpens, fixture_runs

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.mock import MockBackend
from lingdiag.reading import Vocabularies, load_run, summarize
from lingdiag.reading.item_table import tables_of
from lingdiag.reading.summary import item_table
from lingdiag.rundir import RunStore, run_state
from lingdiag.rundir.summary import SUMMARY, read_items


def _answer(req: object) -> str:
    return ("True", "False", "maybe?")[len(str(getattr(req, "messages", ""))) % 3]


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Path]:
    out = tmp_path / "run"
    evaluate(RunConfig(suite="imperfective", model="mock", axes={"strategy": ["zero-shot", "dap"]}, limit=12),
             MockBackend(_answer), out)
    yield out
    for p in out.iterdir():  # a read-only test's directory made writable again for tmp_path's clean-up
        p.chmod(p.stat().st_mode | stat.S_IWUSR)
    out.chmod(out.stat().st_mode | stat.S_IWUSR)


def _rows(summary: object) -> str:
    from dataclasses import asdict
    rows = summary.run.rows  # type: ignore[attr-defined]
    return json.dumps([asdict(r) for r in rows], sort_keys=True, default=str)


def test_finish_writes_the_summary_and_a_current_one_is_read_without_opening_the_records(run: Path) -> None:
    assert (run / SUMMARY).is_file()
    with RecordOpens() as opened:
        summary = summarize(run, Vocabularies())
        state = run_state(run)
    assert opened == [] and state.complete
    whole = load_run(run)
    assert _rows(summary) == json.dumps([__import__("dataclasses").asdict(r) for r in whole.rows], sort_keys=True,
                                        default=str)
    assert len(summary.columns) == 24 and np.isnan(summary.columns.margin).all()  # generated answers: no margin


def test_records_edited_to_the_same_size_with_their_time_restored_are_not_read_from_the_summary(run: Path) -> None:
    items = run / "items.jsonl"
    before = summarize(run, Vocabularies())
    info = items.stat()
    text = items.read_text()
    edited = text.replace('"correct": false', '"correct": true ', 1)
    assert edited != text and len(edited) == len(text)
    items.write_text(edited)
    os.utime(items, ns=(info.st_atime_ns, info.st_mtime_ns))  # as cp -p or tar x leave it
    assert items.stat().st_size == info.st_size and items.stat().st_mtime_ns == info.st_mtime_ns
    state = run_state(run)
    assert state.status == "stale" and [c.kind for c in state.changes] == ["records"]
    after = summarize(run, Vocabularies())
    assert after.run.state is not None and after.run.state.status == "stale"
    right = [int((s.columns.outcome == 1).sum()) for s in (before, after)]
    assert right[1] == right[0] + 1  # the records as they are now, never the summary of the old ones


def test_a_torn_summary_is_read_from_the_records_and_written_again(run: Path) -> None:
    good = summarize(run, Vocabularies())
    path = run / SUMMARY
    path.write_bytes(path.read_bytes()[:100])
    with RecordOpens() as opened:
        again = summarize(run, Vocabularies())
    assert len(opened) == 1 and _rows(again) == _rows(good)
    with RecordOpens() as opened:
        summarize(run, Vocabularies())
    assert opened == []  # written again whole


def test_another_runs_summary_copied_in_is_not_read(run: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    evaluate(RunConfig(suite="imperfective", model="mock", axes={"strategy": ["zero-shot", "dap"]}, limit=12),
             MockBackend(lambda r: "True"), other)
    own = _rows(summarize(run, Vocabularies()))
    shutil.copy(other / SUMMARY, run / SUMMARY)
    assert _rows(summarize(run, Vocabularies())) == own


def test_a_moved_run_keeps_its_summary_after_hashing_its_records_once(run: Path, tmp_path: Path) -> None:
    before = _rows(summarize(run, Vocabularies()))
    moved = Path(shutil.copytree(run, tmp_path / "elsewhere" / "run"))  # new files: the stamp is not theirs
    with RecordOpens() as opened:
        assert run_state(moved).complete
        summary = summarize(moved, Vocabularies())
    assert len(opened) == 1  # hashed once, not parsed: the digest is the summary's
    assert _rows(summary) == before.replace(str(run), str(moved))
    with RecordOpens() as opened:
        summarize(moved, Vocabularies())
    assert opened == []


def test_a_run_that_cannot_take_its_summary_is_summarised_once_in_memory(run: Path) -> None:
    (run / SUMMARY).unlink()
    (run / SUMMARY).mkdir()  # the name is taken by a directory: the summary cannot be written, as on read-only storage
    with RecordOpens() as opened:
        first = summarize(run, Vocabularies())
        second = summarize(run, Vocabularies())
    assert len(opened) == 1 and _rows(first) == _rows(second)


@pytest.mark.parametrize("fixture", ["rundir-3789a70", "rundir-6472672", "rundir-87d9da2"])
def test_runs_written_before_summaries_are_summarised_on_first_read_to_the_same_numbers(fixture: str,
                                                                                       tmp_path: Path) -> None:
    root = Path(shutil.copytree(fixture_runs(fixture), tmp_path / fixture))
    for left in root.rglob(SUMMARY):  # what another test's read of the shared copy wrote: as written back then
        left.unlink()
    runs = sorted(p.parent for p in root.rglob("meta.json") if run_state(p.parent).finished)
    assert runs
    for path in runs:
        assert not (path / SUMMARY).exists()
        whole = load_run(path)
        first = summarize(path, Vocabularies())
        assert (path / SUMMARY).is_file()
        with RecordOpens() as opened:
            second = summarize(path, Vocabularies())
        assert opened == [] and _rows(first) == _rows(second)
        assert _rows(first) == json.dumps([__import__("dataclasses").asdict(r) for r in whole.rows],
                                          sort_keys=True, default=str)


# -- the per-item table: the items' text, gold and human ratings from the summary, never a stale one ---------

def _table(t: object) -> tuple[object, ...]:
    return tuple(getattr(t, c) for c in ("ids", "text", "gold", "family", "human", "other_gold"))


def _from_records(run: Path) -> tuple[object, ...]:
    return _table(tables_of([load_run(run)])[0])


def test_the_item_table_is_read_from_a_current_summary_without_opening_the_records(run: Path) -> None:
    loaded = summarize(run, Vocabularies()).run
    with RecordOpens() as opened:
        table = item_table(loaded)
    assert opened == [] and _table(table) == _from_records(run)
    assert len(table.ids) == 12 and all(table.text) and all(table.gold) and table.family[0].startswith("group=")


def test_an_item_edited_after_finish_is_shown_as_it_is_now(run: Path) -> None:
    loaded = summarize(run, Vocabularies()).run
    items = run / "items.jsonl"
    info, text = items.stat(), items.read_text()
    first = json.loads(text.splitlines()[0])
    field, value = next((k, v) for k, v in first["fields"].items() if isinstance(v, str) and len(v) > 3)
    edited = text.replace(json.dumps(value), json.dumps("X" + value[1:]))
    assert edited != text and len(edited) == len(text)
    items.write_text(edited)
    os.utime(items, ns=(info.st_atime_ns, info.st_mtime_ns))
    table = item_table(loaded)
    assert f"{field}: X{value[1:]}" in table.text[0] and _table(table) == _from_records(run)


def test_a_torn_or_foreign_summary_gives_the_records_item_table(run: Path, tmp_path: Path) -> None:
    loaded = summarize(run, Vocabularies()).run
    own = _from_records(run)
    other = tmp_path / "other"
    evaluate(RunConfig(suite="imperfective", model="mock", axes={"strategy": ["zero-shot"]}, limit=5),
             MockBackend(lambda r: "True"), other)
    shutil.copy(other / SUMMARY, run / SUMMARY)  # five items: a table of another run
    assert _table(item_table(loaded)) == own
    path = run / SUMMARY
    path.write_bytes(path.read_bytes()[:-200])  # torn inside the archive's directory
    assert _table(item_table(loaded)) == own


def test_a_summary_of_the_former_format_is_written_again_with_its_item_table(run: Path) -> None:
    store = RunStore(run)
    with np.load(run / SUMMARY, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files if k != "items"}
    header = json.loads(arrays["header"].tobytes())
    arrays["header"] = np.frombuffer(json.dumps({**header, "format": 1}).encode(), np.uint8)
    with open(run / SUMMARY, "wb") as f:
        np.savez(f, **arrays)
    assert read_items(store) is None
    with RecordOpens() as opened:
        loaded = summarize(run, Vocabularies()).run
    assert len(opened) == 1 and read_items(store) is not None  # read once, written anew
    with RecordOpens() as opened:
        table = item_table(loaded)
    assert opened == [] and _table(table) == _from_records(run)


def test_a_read_only_runs_item_table_is_its_records(run: Path) -> None:
    (run / SUMMARY).unlink()
    (run / SUMMARY).mkdir()  # the summary cannot be written, as on read-only storage
    loaded = summarize(run, Vocabularies()).run
    assert _table(item_table(loaded)) == _from_records(run)


def test_human_ratings_reach_the_item_table_as_the_records_carry_them(tmp_path: Path) -> None:
    from helpers import IMPERFECTIVE_TAGS, item_record

    from lingdiag.items.human import from_tables
    from lingdiag.rundir import write_imported

    given = {"ok": {"True": 6, "False": 2.5}, "nan": {"True": float("nan"), "False": 2}, "plain": None}
    records = [item_record(i, "True", "True", tags=IMPERFECTIVE_TAGS, fields={"human": h} if h else None)
               for i, h in given.items()]
    write_imported(tmp_path / "r", suite="imperfective", model="m", dataset="builtin", records=records,
                   provenance={"file": "x", "sha256": ""})
    loaded = summarize(tmp_path / "r", Vocabularies()).run
    with RecordOpens() as opened:
        table = item_table(loaded)
    assert opened == [] and table.human[2] is None
    ratings, notes = from_tables([table])
    assert (ratings, notes) == from_tables(tables_of([load_run(tmp_path / "r")]))
    assert ratings == {("imperfective", "ok"): {"True": 6.0, "False": 2.5}} and len(notes) == 1

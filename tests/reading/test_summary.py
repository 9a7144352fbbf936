"""A run streamed into its summary: the same rows as ``load_run``, its records as columns of codes
shared across runs, one condition's records held at a time, and a run whose conditions interleave
(resumed, never finished) read whole instead; the stream's refusals name the file and the line."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import fixture_runs

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.errors import RunError
from lingdiag.models.mock import MockBackend
from lingdiag.reading import Vocabularies, load_run, summarize
from lingdiag.reading.summary import NONE, NOT_GRADED, RIGHT, WRONG
from lingdiag.records import UNPARSED
from lingdiag.rundir import RunStore

FIXTURES = fixture_runs("rundir-3789a70")


def _same(a: object, b: object) -> bool:
    """Equal, NaN equal to NaN (a metric undefined on both sides)."""
    from dataclasses import asdict

    def plain(rows: object) -> str:
        return json.dumps([asdict(r) for r in rows], sort_keys=True, default=str)  # type: ignore[attr-defined]
    return plain(a) == plain(b)


def _answer(name: str) -> MockBackend:
    def answer(req: object) -> str:
        n = len(str(getattr(req, "messages", "")))
        return ("True", "False", "maybe?")[n % 3] if name == "a" else ("False", "True")[n % 2]
    return MockBackend(answer, name=f"mock-{name}")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("summary")
    out = {}
    for name in ("a", "b"):
        out[name] = root / name
        evaluate(RunConfig(suite="imperfective", model=f"mock-{name}", axes={"strategy": ["zero-shot", "dap"]},
                           limit=12), _answer(name), out[name])
    return out


def test_a_summary_has_load_runs_rows_and_its_records_as_columns(runs: dict[str, Path]) -> None:
    vocab = Vocabularies()
    for path in runs.values():
        whole, summary = load_run(path), summarize(path, vocab)
        assert _same(summary.run.rows, whole.rows) and summary.item_ids == whole.item_ids
        assert summary.run.records == [] and summary.run.model == whole.model and summary.run.state == whole.state
        records = RunStore(path).load_records()
        c = summary.columns
        assert len(c) == len(records)
        for k, r in enumerate(records):
            assert vocab.conditions.names[c.condition[k]] == r.condition
            assert vocab.items.names[c.item[k]] == r.item_id and vocab.labels.names[c.label[k]] == r.label
            graded = r.correct is not None and r.error is None
            assert c.outcome[k] == ((RIGHT if r.correct else WRONG) if graded else NOT_GRADED)
            assert c.language[k] == NONE
        assert summary.unparsed.sum() == sum(r.label == UNPARSED for r in records)
        assert summary.axes == {c: dict(next(r for r in records if r.condition == c).axes)
                                for c in ("zero-shot", "dap")}
    # one vocabulary: the same item has the same code in both runs
    a, b = (summarize(p, vocab) for p in runs.values())
    assert set(a.columns.item) == set(b.columns.item) and len(vocab.items) == len(a.item_ids)


def test_not_interpretable_conditions_are_named(tmp_path: Path) -> None:
    evaluate(RunConfig(suite="imperfective", model="x", limit=6, axes={"strategy": ["zero-shot"]}),
             MockBackend(lambda r: "what?"), tmp_path / "r")
    assert summarize(tmp_path / "r", Vocabularies()).not_interpretable == {"zero-shot": "100% unparsed or failed"}


def test_interleaved_conditions_are_read_whole_with_the_same_result(runs: dict[str, Path], tmp_path: Path) -> None:
    run = Path(shutil.copytree(runs["a"], tmp_path / "run"))
    lines = (run / "items.jsonl").read_text().splitlines(keepends=True)
    half = len(lines) // 2
    shuffled = [x for pair in zip(lines[:half], lines[half:], strict=True) for x in pair]  # zero-shot, dap, ...
    (run / "items.jsonl").write_text("".join(shuffled))
    meta = json.loads((run / "meta.json").read_text())
    del meta["finished"]  # as a run resumed and not finished leaves it
    (run / "meta.json").write_text(json.dumps(meta))
    summary = summarize(run, Vocabularies())
    assert _same(sorted(summary.run.rows, key=lambda r: r.condition), sorted(load_run(run).rows,
                                                                           key=lambda r: r.condition))
    assert [summary.vocab.conditions.names[k] for k in summary.columns.condition[:4]] == [
        "zero-shot", "dap", "zero-shot", "dap"]


def test_every_fixture_run_summarises_as_it_loads() -> None:
    for run in sorted(p for p in FIXTURES.iterdir() if (p / "meta.json").is_file()):
        assert _same(summarize(run, Vocabularies()).run.rows, load_run(run).rows), run.name


def test_the_stream_keeps_load_records_rules(runs: dict[str, Path], tmp_path: Path) -> None:
    run = Path(shutil.copytree(runs["a"], tmp_path / "run"))
    store = RunStore(run)
    whole = (run / "items.jsonl").read_bytes()
    (run / "items.jsonl").write_bytes(whole + b'{"condition": "zero-')  # a torn last line is ignored
    assert list(store.records()) == store.load_records() and len(store.load_records()) == 24
    lines = whole.split(b"\n")
    (run / "items.jsonl").write_bytes(b"\n".join([*lines[:3], b"{not json", *lines[3:]]))
    with pytest.raises(RunError, match=r"items.jsonl, line 4: not an item record"):
        list(store.records())
    (run / "items.jsonl").write_bytes(b"\n".join([*lines[:2], lines[2][:10] + b"\xff" + lines[2][10:], *lines[3:]]))
    at = len(lines[0]) + len(lines[1]) + 2 + 10
    with pytest.raises(RunError, match=rf"items.jsonl, line 3: not UTF-8 text \(invalid start byte at byte {at}\)"):
        list(store.records())
    (run / "items.jsonl").unlink()
    os.mkfifo(run / "items.jsonl")
    with pytest.raises(RunError, match="not a regular file"):
        list(store.records())


def test_the_stream_refuses_a_file_past_its_bound(runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINGDIAG_RUN_FILE_MAX_BYTES", "1000")
    with pytest.raises(RunError, match="larger than expected; the limit is 1000 bytes"):
        list(RunStore(runs["a"]).records())


def test_columns_select_a_condition(runs: dict[str, Path]) -> None:
    vocab = Vocabularies()
    summary = summarize(runs["b"], vocab)
    lines = summary.columns.of(vocab.conditions.get("dap"))
    assert len(lines) == 12 and np.all(np.diff(lines) == 1)  # canonical order: one block per condition


def test_runs_read_by_worker_processes_are_the_runs_read_here(runs: dict[str, Path], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A large study's runs are read by several processes: the same summaries, in order, one vocabulary;
    an unreadable run is its one-line error, in its place."""
    from lingdiag.errors import LingdiagError
    from lingdiag.reading import summary as module

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "meta.json").write_text("{not json")
    order = [runs["a"], broken, runs["b"]]
    here = module.summarize_all(order, Vocabularies())
    monkeypatch.setattr(module, "PARALLEL_BYTES", 0)
    monkeypatch.setenv("LINGDIAG_READ_WORKERS", "2")
    there = module.summarize_all(order, Vocabularies())
    assert isinstance(here[1], LingdiagError) and isinstance(there[1], LingdiagError)
    assert str(here[1]) == str(there[1]) and "meta.json" in str(there[1])
    for x, y in ((here[0], there[0]), (here[2], there[2])):
        assert isinstance(x, module.RunSummary) and isinstance(y, module.RunSummary)
        assert _same(x.run.rows, y.run.rows) and x.item_ids == y.item_ids
        assert [x.vocab.items.names[k] for k in x.columns.item] == [y.vocab.items.names[k] for k in y.columns.item]
        assert np.array_equal(x.columns.outcome, y.columns.outcome)
    assert there[0].vocab is there[2].vocab  # type: ignore[union-attr]

"""Reading a run directory as a hostile or impatient user might hand it over: a FIFO, a link to
/dev/zero, an oversized file, an absurd parameter count, a run still being written. Each is one
line naming the file (or a line above the table), never a hang, a MemoryError or a final-looking table."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import fixture_runs, lingdiag

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.errors import RunError
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_run
from lingdiag.records import GenerationRequest
from lingdiag.report.scaling import config_family, points
from lingdiag.report.tables import tables
from lingdiag.rundir import ModelIdentity, RunStore, read_run

PLAIN = fixture_runs("rundir-3789a70") / "plain"
SUITE_FILE = PLAIN.parent / "suite-file"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return Path(shutil.copytree(PLAIN, tmp_path / "run"))


def _returns_within(seconds: float, call: Callable[[], object]) -> BaseException | None:
    """What ``call`` raised, failing the test if it blocks (a FIFO opened for reading waits for a writer)."""
    raised: list[BaseException] = []

    def target() -> None:
        try:
            call()
        except BaseException as e:  # noqa: BLE001 - handed back to the test to check
            raised.append(e)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked reading the file"
    return raised[0] if raised else None


@pytest.mark.parametrize("name", ["items.jsonl", "meta.json"])
def test_a_fifo_in_place_of_a_run_file_is_one_line_not_a_hang(run: Path, name: str) -> None:
    (run / name).unlink()
    os.mkfifo(run / name)
    error = _returns_within(5, lambda: read_run(run))
    assert isinstance(error, RunError) and str(run / name) in str(error) and "not a regular file" in str(error)
    assert "\n" not in str(error)


@pytest.mark.parametrize("name", ["items.jsonl", "meta.json"])
def test_a_link_to_dev_zero_is_refused_before_reading(run: Path, name: str) -> None:
    (run / name).unlink()
    (run / name).symlink_to("/dev/zero")
    with pytest.raises(RunError, match=rf"{name}: not a regular file"):
        read_run(run)


def test_an_oversized_file_names_the_bound_and_how_to_raise_it(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINGDIAG_RUN_FILE_MAX_BYTES", "2000")
    assert (run / "meta.json").stat().st_size < 2000 < (run / "items.jsonl").stat().st_size
    with pytest.raises(RunError, match=r"items.jsonl: larger than expected; the limit is 2000 bytes per run-directory "
                                       r"file; raise it with LINGDIAG_RUN_FILE_MAX_BYTES=N"):
        read_run(run)


def test_a_fifo_as_the_suite_file_copy_is_refused(tmp_path: Path) -> None:
    run = Path(shutil.copytree(SUITE_FILE, tmp_path / "run"))
    (run / "suite.yaml").unlink()
    os.mkfifo(run / "suite.yaml")
    error = _returns_within(5, lambda: load_run(run))
    assert isinstance(error, RunError) and "suite.yaml: not a regular file" in str(error)


def _with_identity(run: Path, **fields: object) -> None:
    meta = json.loads((run / "meta.json").read_text())
    meta["model"].update(fields)
    (run / "meta.json").write_text(json.dumps(meta))


def test_a_model_config_json_that_is_a_fifo_is_refused(run: Path, tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    os.mkfifo(model / "config.json")
    _with_identity(run, path=str(model))
    error = _returns_within(5, lambda: config_family(load_run(run)))
    assert isinstance(error, RunError) and "config.json: not a regular file" in str(error)
    (model / "config.json").unlink()
    (model / "config.json").write_text(json.dumps({"model_type": "llama"}))
    assert config_family(load_run(run)) == "Llama"  # the family's display name (report.scaling.family_name)


@pytest.mark.parametrize("n_params", [-5, "1e400", 1e400, "many", 0])
def test_an_absurd_parameter_count_is_ignored_with_a_note(run: Path, n_params: object) -> None:
    _with_identity(run, n_params=n_params)
    loaded = load_run(run)
    assert loaded.meta.n_params is None and all(row.n_params is None for row in loaded.rows)
    assert "is not a positive finite number; ignored" in loaded.meta.identity.n_params_problem
    assert points("imperfective", [loaded], {}) == []  # left out of the scaling figure, never plotted
    # Said where it is read, with or without a scaling figure (issue 57: silent without one).
    said = f"**model.n_params {n_params!r} is not a positive finite number; ignored** ({loaded.name})"
    assert said in tables([loaded])
    out = lingdiag(run.parent, "report", str(run))
    assert out.returncode == 0 and "is not a positive finite number; ignored" in out.stdout
    assert ModelIdentity({"n_params": "135000000"}).n_params == 135e6


HOLD = """import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(60)
"""


@pytest.fixture
def held(run: Path) -> Iterator[Path]:
    """``run`` with its lock held by a live second process, as a run still writing holds it."""
    with subprocess.Popen([sys.executable, "-c", HOLD, str(run / ".lock")], stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
            yield run
        finally:
            proc.kill()


def test_a_run_whose_lock_a_live_process_holds_is_reported_in_progress(held: Path) -> None:
    meta = json.loads((held / "meta.json").read_text())
    (held / "meta.json").write_text(json.dumps({**meta, "planned": 9}))
    assert RunStore(held).running()
    text = tables([load_run(held)])
    assert text.startswith("**run in progress: 3 of 9 items** (mock × imperfective): metrics as recorded, "
                           "not final and current")
    out = lingdiag(held.parent, "report", str(held))
    assert out.returncode == 0 and "run in progress: 3 of 9 items" in out.stdout.splitlines()[0]


def test_a_finished_run_is_not_in_progress_and_a_stopped_one_says_so(run: Path) -> None:
    assert not RunStore(run).running() and read_run(run).state.line is None
    (run / ".lock").write_text("123\n")  # a lock file left behind by a finished process holds nothing
    assert not RunStore(run).running()
    meta = json.loads((run / "meta.json").read_text())
    (run / "meta.json").write_text(json.dumps({**meta, "planned": 9}))
    assert read_run(run).state.line == "run not finished (stopped): 3 of 9 items"


def test_a_run_records_its_planned_items_until_it_finishes(tmp_path: Path) -> None:
    calls: list[str | None] = []

    def answer(r: GenerationRequest) -> str:
        calls.append(r.prompt)
        if len(calls) > 2:
            raise KeyboardInterrupt  # the run killed after its first chunk
        return "True"

    config = RunConfig.model_validate({"suite": "imperfective", "model": "mock", "limit": 5, "chunk_items": 2,
                                       "axes": {"strategy": ["zero-shot"]}, "options": {"max_new_tokens": 4}})
    with pytest.raises(KeyboardInterrupt):
        evaluate(config, MockBackend(answer), tmp_path / "run")
    assert read_run(tmp_path / "run").state.line == "run not finished (stopped): 2 of 5 items"
    evaluate(config, MockBackend(lambda r: "True"), tmp_path / "run")
    assert "planned" not in json.loads((tmp_path / "run" / "meta.json").read_text())
    assert read_run(tmp_path / "run").state.line is None


def test_an_output_of_a_shape_lingdiag_never_writes_names_the_line_and_field(run: Path) -> None:
    lines = (run / "items.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["outputs"] = [{"text": "True", "mood": "odd"}]
    lines[1] = json.dumps(record)
    (run / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(RunError, match=r"items.jsonl, line 2: not an item record \(field 'outputs.0': unknown key "
                                       r"'mood'\)$"):
        read_run(run)


def test_a_write_killed_mid_character_leaves_a_last_line_that_is_ignored(run: Path) -> None:
    items = run / "items.jsonl"
    whole = items.read_bytes()
    items.write_bytes(whole + '{"condition": "zero-shot", "fields": {"premise": "Ω'.encode()[:-1])  # half of Ω
    assert [r.item_id for r in read_run(run).records] == [r.item_id for r in RunStore(run).records()]
    assert len(read_run(run).records) == 3
    lines = whole.split(b"\n")
    items.write_bytes(lines[0] + b"\n" + lines[1].replace(b"{", b"{\xff", 1) + b"\n" + lines[2] + b"\n")
    with pytest.raises(RunError, match=rf"items.jsonl, line 2: not UTF-8 text \(invalid start byte at byte "
                                       rf"{len(lines[0]) + 2}\)$"):
        read_run(run)


def test_records_read_while_a_run_appends_end_at_the_line_being_written(run: Path) -> None:
    """A probe of the streamed reader: a line caught half written, completed while the read went on,
    was read as two bad lines (a RunError); a line without its newline now ends the read."""
    items = run / "items.jsonl"
    lines = items.read_bytes().split(b"\n")[:-1]
    items.write_bytes(lines[0] + b"\n" + lines[1])  # the writer has not written the newline yet
    reading = RunStore(run).records()
    assert [next(reading).item_id, next(reading).item_id] == [json.loads(x)["item_id"] for x in lines[:2]]
    with items.open("ab") as f:  # it writes the rest, and the next record, while the read goes on
        f.write(b"\n" + lines[2] + b"\n")
    assert list(reading) == []
    assert len(RunStore(run).load_records()) == 3  # read again, every line is whole

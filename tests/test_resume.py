"""A real ``lingdiag run`` killed with SIGKILL at several points and restarted.

Checks the promise of the run store and the response cache: every item is recorded
exactly once, no request answered before a kill is sent to the model again, and the
final ``items.jsonl`` is byte-identical to an uninterrupted run's.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.mock import MockBackend
from lingdiag.records import GenerationRequest
from lingdiag.rundir import RunStore

ITEMS_PER_CONDITION = 12
CONDITIONS = ("zero-shot", "dap")
TOTAL = ITEMS_PER_CONDITION * len(CONDITIONS)  # one generation request per item
CONFIG = {
    "suite": "imperfective", "model": "smollm2-135m", "dataset": "builtin",
    "axes": {"strategy": list(CONDITIONS)}, "limit": ITEMS_PER_CONDITION,
    "options": {"max_new_tokens": 4}, "chunk_items": 3,
}


def _cache_dir(root: Path) -> Path:
    """A fresh response cache sharing the converted models (converting takes ~20 s)."""
    root.mkdir(parents=True)
    (root / "models").symlink_to((Path(os.environ["LINGDIAG_CACHE"]) / "models").resolve())
    return root


def _start(cfg: Path, out: Path, cache: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "LINGDIAG_CACHE": str(cache)}
    return subprocess.Popen([sys.executable, "-m", "lingdiag", "run", "imperfective", "--config", str(cfg),
                             "--out", str(out), "--json"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def _lines(out: Path) -> list[str]:
    path = out / "items.jsonl"
    return path.read_text(encoding="utf-8").split("\n") if path.exists() else []


def _complete(out: Path) -> list[dict[str, object]]:
    """The records a restart would keep: every line that parses (a torn last one does not)."""
    records = []
    for line in _lines(out):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return records


def _cached(cache: Path) -> int:
    db = cache / "responses.sqlite"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as con:
        try:
            return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
        except sqlite3.OperationalError:  # killed before the table was created
            return 0


def _kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    try:
        while not ready():
            assert proc.poll() is None, "the run ended before the kill point"
            assert time.monotonic() < deadline, "kill point not reached"
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()


def _finish(proc: subprocess.Popen[bytes]) -> None:
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err.decode()


@pytest.mark.slow
def test_kill_9_at_several_points_then_resume(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(json.dumps(CONFIG))  # JSON is YAML

    reference, ref_cache = tmp_path / "reference", _cache_dir(tmp_path / "cache-ref")
    _finish(_start(cfg, reference, ref_cache))
    ref_meta = json.loads((reference / "meta.json").read_text())
    assert ref_meta["usage"]["cache_misses"] == TOTAL and _cached(ref_cache) == TOTAL  # all requests distinct

    out, cache = tmp_path / "killed", _cache_dir(tmp_path / "cache")
    # Each kill point is built just before its start, from the state left by the last kill.
    def kill_points() -> list[Callable[[], Callable[[], bool]]]:
        def loading() -> Callable[[], bool]:  # the model is loading; nothing answered yet
            return lambda: (out / "meta.json").exists()

        def first_chunk() -> Callable[[], bool]:
            return lambda: len(_complete(out)) >= 3

        def first_new_answer() -> Callable[[], bool]:  # as soon as an answer is cached, maybe before its record
            base = _cached(cache)
            return lambda: _cached(cache) > base

        def second_condition() -> Callable[[], bool]:
            return lambda: len(_complete(out)) >= TOTAL // 2 + 2

        return [loading, first_chunk, first_new_answer, second_condition]

    seen = []
    for k, point in enumerate(kill_points()):
        ready = point()
        _kill_when(_start(cfg, out, cache), ready)
        records = _complete(out)
        keys = [(r["condition"], r["item_id"]) for r in records]
        assert len(keys) == len(set(keys)), "duplicate item records after a kill"
        seen.append(len(records))
        if k == 1:
            # Also the worst case of a kill: half a record line on disk.
            with open(out / "items.jsonl", "a", encoding="utf-8") as f:
                f.write(_lines(reference)[len(records)][:50])

    answered = _cached(cache)
    final = _start(cfg, out, cache)
    _finish(final)
    assert seen[-1] > 0 and answered >= seen[-1]

    usage = json.loads((out / "meta.json").read_text())["usage"]
    # Only the requests not answered before the last kill reach the model; the rest are hits.
    assert usage["cache_misses"] == TOTAL - answered
    assert usage["cache_hits"] == answered - seen[-1]
    assert _cached(cache) == TOTAL

    loaded = RunStore(out).load_records()
    assert sorted((r.condition, r.item_id) for r in loaded) == \
        sorted((r.condition, r.item_id) for r in RunStore(reference).load_records())
    assert len(loaded) == TOTAL
    assert (out / "items.jsonl").read_bytes() == (reference / "items.jsonl").read_bytes()


def test_line_separators_in_model_text_survive_resume(tmp_path: Path) -> None:
    # JSON leaves U+2028 and U+0085 unescaped; they must not split a record line.
    def odd(_: GenerationRequest) -> str:
        return "True\u2028and\x85more"

    cfg = RunConfig.model_validate({**CONFIG, "model": "mock", "limit": 4})
    evaluate(cfg, MockBackend(odd), tmp_path / "r")
    full = (tmp_path / "r" / "items.jsonl").read_bytes()
    backend = MockBackend(odd)
    evaluate(cfg, backend, tmp_path / "r")
    assert backend.calls == 0
    assert (tmp_path / "r" / "items.jsonl").read_bytes() == full
    assert len(RunStore(tmp_path / "r").load_records()) == 8


def test_resume_refuses_an_edited_user_dataset(tmp_path: Path) -> None:
    from lingdiag.config import RunConfig
    from lingdiag.engine.run import evaluate
    from lingdiag.errors import RunError
    from lingdiag.models.mock import MockBackend

    data = tmp_path / "mine.json"
    rows = [{"id": f"A_{k}", "group": "A_Interrupted_Accomplishment", "verb_class": "Creation", "verb": "build",
             "premise": f"The carpenter was building shed {k}, but a storm came.", "hypothesis": f"He built shed {k}.",
             "label": "False"} for k in range(4)]
    data.write_text(json.dumps(rows))
    config = RunConfig(suite="imperfective", model="mock", dataset=str(data), axes={"strategy": ["zero-shot"]})
    mock = MockBackend(generate_fn=lambda r: "False")
    evaluate(config, mock, tmp_path / "run")
    evaluate(config, mock, tmp_path / "run")  # unchanged data: resumes
    rows[0]["premise"] = "The carpenter was building shed 0, and finished it."
    data.write_text(json.dumps(rows))
    with pytest.raises(RunError, match="was run on other data: .*mine.json changed since"):
        evaluate(config, mock, tmp_path / "run")


def test_resume_refuses_records_made_under_other_settings(tmp_path: Path) -> None:
    from lingdiag.config import RunConfig
    from lingdiag.engine.run import evaluate
    from lingdiag.errors import RunError
    from lingdiag.models.mock import MockBackend

    mock = MockBackend(generate_fn=lambda r: "False")
    axes = {"strategy": ["zero-shot"]}
    evaluate(RunConfig(suite="imperfective", model="mock", axes=axes, limit=8), mock, tmp_path / "run")
    # Simulate records from before a default changed: the stored axes lack today's prompt source.
    path = tmp_path / "run" / "items.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        row["axes"].pop("prompt_source")
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(RunError, match="'zero-shot' was run with other settings \\(prompt_source: None then, "
                                       "'authors' now\\)"):
        evaluate(RunConfig(suite="imperfective", model="mock", axes=axes, limit=8), mock, tmp_path / "run")


def test_run_meta_is_read_once_typed_and_names_a_missing_suite(tmp_path: Path) -> None:
    from lingdiag.errors import RunError
    from lingdiag.rundir import RunStore

    run = tmp_path / "r"
    run.mkdir()
    meta = {"config": {"suite": "imperfective", "model": "spec", "dataset": "builtin"},
            "model": {"model": "shown", "backend": "mock", "n_params": "1.35e8"}, "dataset": {"f.json": "abc"},
            "versions": {"lingdiag": "0.1.0"}, "seed": 3, "skipped": {"cot": "no"}, "timings": {"dap": 1.5}}
    (run / "meta.json").write_text(json.dumps(meta))
    m = RunStore(run).read_meta()
    assert (m.suite, m.model, m.dataset, m.n_params, m.seed) == ("imperfective", "shown", "builtin", 1.35e8, 3)
    assert (m.checksums, m.skipped, m.timings, m.usage) == ({"f.json": "abc"}, {"cot": "no"}, {"dap": 1.5}, None)
    (run / "meta.json").write_text(json.dumps({"config": {"model": "spec"}}))
    with pytest.raises(RunError, match=r"meta.json, field 'config.suite': missing or not a string"):
        RunStore(run).read_meta()

"""A run's inputs are recorded as what was read (``lingdiag.io.content``) where they lie, so a run read
from another current directory reports the same state; transport settings (``lingdiag.config.TRANSPORT``,
marked in every backend's option schema) may change between attempts and are recorded per attempt;
"same model?" has one answer (``RunConfig.model_key``)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from lingdiag.config import TRANSPORT, TRANSPORT_OPTIONS, RunConfig
from lingdiag.engine.run import evaluate, plan
from lingdiag.errors import RunError
from lingdiag.io.content import content_id
from lingdiag.models.hf.options import HFOptions
from lingdiag.models.mock import MockBackend
from lingdiag.models.openai.backend import OpenAIBackend, OpenAIOptions
from lingdiag.models.providers import PROVIDERS
from lingdiag.records import Generation, GenerationRequest, LoglikelihoodRequest
from lingdiag.rundir import run_state

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"


@pytest.fixture
def inside(tmp_path: Path) -> Iterator[Path]:
    """The current directory, in ``tmp_path`` for the test."""
    before = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(before)


def _likelier_good(r: LoglikelihoodRequest) -> float:
    return -float(len(r.continuation))


def test_content_ids_follow_what_is_read_not_the_bytes(tmp_path: Path) -> None:
    csv = tmp_path / "d.csv"
    csv.write_text("id,text\n1,a\n2,b\n")
    first = content_id(csv)
    csv.write_text("id,text\r\n1,a\r\n\r\n2,b\r\n\r\n")  # other line ends, blank lines
    assert content_id(csv) == first
    csv.write_text("id,text\n1,a\n2,c\n")
    assert content_id(csv) != first
    suite = tmp_path / "s.yaml"
    suite.write_text("name: x\nitems: {data: d.csv}\n")
    parsed = content_id(suite)
    suite.write_text("# a comment\nname: x   # here too\nitems:\n  data: d.csv\n")
    assert content_id(suite) == parsed
    suite.write_text("name: y\nitems: {data: d.csv}\n")
    assert content_id(suite) != parsed
    suite.write_text("a: &x [1]\nb: *x\n")  # an alias is never expanded: its bytes are the identity
    assert content_id(suite) is not None
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "a.jsonl").write_text('{"id": 1, "t": "x"}\n')
    whole = content_id(folder)
    (folder / "a.jsonl").write_text('\n{"id": 1, "t": "x"}\n\n')
    (folder / ".hidden").write_text("editor state")
    assert content_id(folder) == whole
    (folder / "b.jsonl").write_text('{"id": 2, "t": "y"}\n')
    assert content_id(folder) != whole
    assert content_id(tmp_path / "gone.csv") is None
    # Replaced by another version of the same size, its modification time restored (cp -p, tar x): read again.
    edited = content_id(csv)
    stamp = csv.stat()
    csv.write_text("id,text\n1,a\n2,d\n")
    os.utime(csv, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert csv.stat().st_size == stamp.st_size and content_id(csv) != edited


def test_a_run_started_with_relative_paths_reads_the_same_from_another_directory(tmp_path: Path,
                                                                                 inside: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    for name in ("agreement-pairs.yaml", "agreement-pairs.jsonl"):
        shutil.copy(EXAMPLES / name, project / name)
    os.chdir(project)
    config = RunConfig(suite="agreement-pairs.yaml", model="mock", dataset="agreement-pairs.jsonl")
    evaluate(config, MockBackend(loglik_fn=_likelier_good), Path("runs/r"))
    meta = json.loads((project / "runs" / "r" / "meta.json").read_text())
    assert meta["suite_file"]["path"] == str(project / "agreement-pairs.yaml")  # resolved when the run started
    here = run_state(Path("runs/r"))
    assert here.status == "finished" and here.line is None and not here.unchecked
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.chdir(elsewhere)
    away = run_state(project / "runs" / "r")
    assert (away.status, away.line, away.unchecked) == ("finished", None, ())
    # And a change of what was read is seen from there too.
    data = project / "agreement-pairs.jsonl"
    data.write_text(data.read_text().replace("these apples", "those apples", 1))
    assert run_state(project / "runs" / "r").status == "stale"


class _Flaky(MockBackend):
    """A server whose answers time out (an error per request) while ``failing``."""

    def __init__(self) -> None:
        super().__init__(generate_fn=lambda r: "True")
        self.failing = True

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        if self.failing:
            return [Generation(text="", error="timed out after 0.5 s") for _ in requests]
        return super().generate(requests)


def _config(**options: Any) -> RunConfig:
    return RunConfig(suite="imperfective", model="openai:m@http://127.0.0.1:9/v1", limit=3,
                     axes={"strategy": ["zero-shot"]}, model_options=options)


def test_a_retry_with_a_longer_timeout_finishes_the_failed_items(tmp_path: Path) -> None:
    backend, out = _Flaky(), tmp_path / "run"
    evaluate(_config(timeout=0.5, concurrency=2), backend, out)
    assert run_state(out).failed == 3
    backend.failing = False
    evaluate(_config(timeout=30, concurrency=16), backend, out)
    state = run_state(out)
    assert (state.status, state.failed, state.recorded) == ("finished", 0, 3)
    meta = json.loads((out / "meta.json").read_text())
    assert [a["model_options"] for a in meta["attempts"]] == [{"timeout": 0.5, "concurrency": 2},
                                                              {"timeout": 30, "concurrency": 16}]
    assert meta["config"]["model_options"] == {"timeout": 30, "concurrency": 16}
    assert run_state(out, plan(_config(timeout=5)).inputs(_config(timeout=5))).current
    with pytest.raises(RunError, match=r"differs in: model_options"):  # an option that changes answers
        evaluate(_config(timeout=30, seed=7), backend, out)


def _marked(model: type[BaseModel]) -> set[str]:
    return {n for n, f in model.model_fields.items()
            if isinstance(f.json_schema_extra, dict) and f.json_schema_extra.get("transport")}


def test_every_backend_s_schema_marks_its_transport_options_and_only_those() -> None:
    schemas = {PROVIDERS.get(name)().options for name in PROVIDERS.names()}
    assert schemas == {HFOptions, OpenAIOptions}
    marked = set().union(*(_marked(s) for s in schemas))
    assert marked == TRANSPORT_OPTIONS
    for schema in schemas:
        assert set(schema.model_fields) & TRANSPORT_OPTIONS == _marked(schema), schema.__name__
    assert set(TRANSPORT) <= set(RunConfig.model_fields)


_SET = {"api_key_env": "MY_KEY", "concurrency": 3, "timeout": 1.0, "connect_timeout": 1.0, "deadline": 5.0,
        "max_response_bytes": 4096, "max_retries": 0, "backoff": 0.0, "max_backoff": 1.0, "seed": 7,
        "logprobs": False, "structured_output": "gbnf", "completions": False, "verify_prompt_logprobs": False,
        "prompt_logprob_tolerance": 0.5, "bos_text": "<s>", "tokenizer": "some/tokenizer",
        "max_tokens_field": "max_tokens", "extra_body": {"top_k": 1}}


def test_the_response_cache_identity_is_every_option_that_may_change_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "k")
    assert set(_SET) == set(OpenAIOptions.model_fields)  # a new option is classified here, by its mark
    monkeypatch.setattr(OpenAIBackend, "_renderer", None, raising=False)
    base = OpenAIBackend("m", "http://127.0.0.1:9/v1", OpenAIOptions()).identity
    for name, value in _SET.items():
        if name == "tokenizer":
            continue  # reads a tokenizer when set; named as the others (test below)
        identity = OpenAIBackend("m", "http://127.0.0.1:9/v1", OpenAIOptions.model_validate({name: value})).identity
        assert (identity != base) == (name not in TRANSPORT_OPTIONS), name


def test_one_model_key_answers_same_model() -> None:
    one = RunConfig(suite="imperfective", model="openai:m@http://h/v1", model_options={"timeout": 5})
    assert one.model_key() == one.model_copy(update={"suite": "explica", "limit": 3, "dataset": "x.csv"}).model_key()
    for other in ({"model_options": {"timeout": 6}}, {"batch_tokens": 100}, {"model": "openai:n@http://h/v1"}):
        assert one.model_key() != one.model_copy(update=other).model_key()
    sharded = RunConfig.model_validate({**one.model_dump(), "shard": "2/2",
                                        "shard_base_urls": ["http://a/v1", "http://b/v1"]})
    assert "http://b/v1" in sharded.model_key()


def test_a_running_viewer_sees_the_data_replaced_at_the_same_size_and_time(tmp_path: Path) -> None:
    from lingdiag.view.app import Viewer

    data = tmp_path / "pairs.jsonl"
    shutil.copy(EXAMPLES / "agreement-pairs.jsonl", data)
    evaluate(RunConfig(suite="minimal-pairs", model="mock", dataset=str(data)), MockBackend(loglik_fn=_likelier_good),
             tmp_path / "runs" / "r")
    viewer = Viewer([tmp_path / "runs"])
    run = viewer.run("0/r")
    assert viewer.row(run).state == "finished" and "stale" not in viewer.report(run)
    stamp = data.stat()
    data.write_text(data.read_text().replace("these apples", "those apples", 1))  # same size
    os.utime(data, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # tar x, cp -p
    assert viewer.row(run).state == "stale" and "stale, not current" in viewer.report(run)
    data.unlink()
    assert viewer.row(run).state == "unchecked" and "unchecked, not known to be current" in viewer.report(run)


def test_sources_no_file_answers_to_and_older_runs_unhashed_files_compare_as_before(tmp_path: Path,
                                                                                   inside: Path) -> None:
    from lingdiag.io.content import content_id
    from lingdiag.rundir import Inputs, RunMeta, drift

    (tmp_path / "d.csv").write_text("id\n1\n")
    config, identity = {"suite": "s", "model": "m"}, {"backend": "mock"}
    hub = RunMeta(config, identity, checksums={"hf:org/x": ""}, origin=str(tmp_path / "run"),
                  source=tmp_path / "run" / "meta.json")
    assert drift(hub, Inputs(sources={"hf:org/x": ""})) == ((), ())
    assert drift(hub, Inputs(sources={"hf:org/y": ""}))[0][0].what == "hf:org/y"
    older = RunMeta(config, identity, checksums={"d.csv": "", "builtin": "a lexicon"})  # no origin: cwd-relative
    assert drift(older, Inputs(sources={"d.csv": str(content_id(Path("d.csv"))), "builtin": "a lexicon"})) == ((), ())
    assert drift(older, Inputs(sources={"d.csv": "x", "builtin": "another lexicon"}))[0][0].what == "builtin"

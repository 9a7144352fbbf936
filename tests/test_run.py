import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate, run
from lingdiag.errors import ConfigError, RunError, UnknownNameError
from lingdiag.models.base import dispatch
from lingdiag.models.mock import MockBackend
from lingdiag.models.providers import load_backend
from lingdiag.records import (
    Generation,
    GenerationRequest,
    Item,
    LogLikelihood,
    LoglikelihoodRequest,
    Prediction,
    Request,
    Response,
)
from lingdiag.rundir import RunStore
from lingdiag.suite import Condition, Dataset, Suite, register_suite, spread


def answer_by_group(req: GenerationRequest) -> str:
    """A scripted model: always True, except it says something unparseable for 'storm'."""
    text = req.messages[-1].content
    return "I am not sure what you mean." if "storm" in text else "True"


def config(**kw: object) -> RunConfig:
    return RunConfig.model_validate({"suite": "imperfective", "model": "mock", "dataset": "builtin",
                                     "axes": {"strategy": ["zero-shot", "dap"]}, "limit": 20, **kw})


def test_run_writes_run_directory(tmp_path: Path) -> None:
    backend = MockBackend(answer_by_group)
    result = evaluate(config(), backend, tmp_path / "r")
    files = {p.name for p in (tmp_path / "r").iterdir()}
    assert {"meta.json", "items.jsonl", "metrics.json", "table.md"} <= files
    lines = (tmp_path / "r" / "items.jsonl").read_text().splitlines()
    assert len(lines) == 40 and backend.calls == 40
    first = json.loads(lines[0])
    assert first["condition"] == "zero-shot" and first["prompts"][0][0]["role"] == "system"
    assert set(first) >= {"item_id", "fields", "prompts", "outputs", "label", "gold", "correct"}
    m = result.metrics["zero-shot"]
    assert m["acc_B"] == 1.0 and m["acc_A"] == 0.0 and m["tbr_C"] == 1.0 and m["n"] == 20
    unparsed = [json.loads(x) for x in lines if json.loads(x)["label"] == "unparsed"]
    assert m["n_unparsed"] == len(unparsed) // 2 and all(r["correct"] is False for r in unparsed)
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert meta["config"]["limit"] == 20 and set(meta["timings"]) == {"zero-shot", "dap"}
    assert "| zero-shot | mock |" in (tmp_path / "r" / "table.md").read_text()


def test_same_config_gives_byte_identical_records(tmp_path: Path) -> None:
    evaluate(config(), MockBackend(answer_by_group), tmp_path / "a")
    evaluate(config(), MockBackend(answer_by_group), tmp_path / "b")
    assert (tmp_path / "a" / "items.jsonl").read_bytes() == (tmp_path / "b" / "items.jsonl").read_bytes()


def test_resume_skips_done_items_and_repairs_torn_line(tmp_path: Path) -> None:
    out = tmp_path / "r"
    evaluate(config(), MockBackend(answer_by_group), out)
    full = (out / "items.jsonl").read_bytes()
    lines = full.decode().splitlines(keepends=True)
    (out / "items.jsonl").write_text("".join(lines[:25]) + lines[25][:40])  # killed mid-write
    backend = MockBackend(answer_by_group)
    evaluate(config(), backend, out)
    assert backend.calls == 15
    assert (out / "items.jsonl").read_bytes() == full


def test_timings_survive_a_crash_and_add_up_over_resumes(tmp_path: Path) -> None:
    out = tmp_path / "r"

    class CrashOnDap(MockBackend):
        def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
            if any("Important Linguistic Rule" in m.content for r in requests for m in r.messages):
                raise KeyboardInterrupt  # the DAP system prompt: the run dies mid-way
            return super().generate(requests)

    with pytest.raises(KeyboardInterrupt):
        evaluate(config(), CrashOnDap(answer_by_group), out)
    first = json.loads((out / "meta.json").read_text())["timings"]
    assert set(first) == {"zero-shot"}
    evaluate(config(), MockBackend(answer_by_group), out)
    timings = json.loads((out / "meta.json").read_text())["timings"]
    assert set(timings) == {"zero-shot", "dap"} and timings["zero-shot"] >= first["zero-shot"]


def test_errored_items_are_retried_on_resume(tmp_path: Path) -> None:
    out = tmp_path / "r"

    class Flaky(MockBackend):
        def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
            gens = super().generate(requests)
            return [g if k % 3 else type(g)(text="", error="HTTP 500") for k, g in enumerate(gens)]

    result = evaluate(config(), Flaky(answer_by_group), out)
    assert result.metrics["zero-shot"]["n_errors"] == 7
    backend = MockBackend(answer_by_group)
    result = evaluate(config(), backend, out)
    assert backend.calls == 14 and result.metrics["zero-shot"]["n_errors"] == 0
    assert len((out / "items.jsonl").read_text().splitlines()) == 40


def test_resume_with_other_config_is_refused(tmp_path: Path) -> None:
    evaluate(config(), MockBackend(answer_by_group), tmp_path / "r")
    with pytest.raises(RunError, match="differs in: limit"):
        evaluate(config(limit=10), MockBackend(answer_by_group), tmp_path / "r")


def test_unknown_names_list_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown strategy 'cto'.*valid: zero-shot, dap, cot, counterfactual"):
        evaluate(config(axes={"strategy": ["cto"]}), MockBackend(answer_by_group), tmp_path / "r")
    with pytest.raises(UnknownNameError, match="valid models: .*smollm2-135m"):
        load_backend("smollm3")
    with pytest.raises(UnknownNameError, match="unknown suite 'imperfect'; valid suites: .*imperfective"):
        run(config(suite="imperfect"), tmp_path / "r", backend=MockBackend(answer_by_group))
    with pytest.raises(ConfigError, match="has no axis 'shots'"):
        evaluate(config(axes={"shots": ["0"]}), MockBackend(answer_by_group), tmp_path / "r")


def test_spread_covers_every_group() -> None:
    items = [Item(str(k), {}, None, {}) for k in range(400)]
    picked = spread(items, 8)
    assert [i.id for i in picked] == ["0", "50", "100", "150", "200", "250", "300", "350"]


class ScoreChoices:
    """A log-likelihood strategy: pick the continuation with the highest log-prob."""

    def render(self, item: Item) -> list[LoglikelihoodRequest]:
        return [LoglikelihoodRequest("Q:", " " + c) for c in ("yes", "no")]

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        scores = [r.logprob for r in responses if isinstance(r, LogLikelihood)]
        return Prediction("yes" if scores[0] >= scores[1] else "no", {"scores": scores})


register_suite(Suite(
    name="toy-loglik", description="test suite", axes=(),
    load=lambda spec: Dataset(spec, [Item(f"i{k}", {}, "yes", {}) for k in range(3)]),
    conditions=lambda ds, axes, opts, seed: [Condition("choice", {}, ScoreChoices(), ds.items)],
    metrics=lambda rs: {"acc": sum(bool(r.correct) for r in rs) / len(rs)},
    table=lambda rows: "\n".join(f"{r.model} {r.condition} {r.metrics['acc']}" for r in rows),
))


def test_condition_needing_missing_capability_is_skipped_with_reason(tmp_path: Path) -> None:
    cfg = RunConfig(suite="toy-loglik", model="mock")
    result = evaluate(cfg, MockBackend(answer_by_group), tmp_path / "r")
    assert result.skipped == {"choice": "backend mock cannot serve loglikelihood requests"}
    assert json.loads((tmp_path / "r" / "meta.json").read_text())["skipped"] == result.skipped
    backend = MockBackend(loglik_fn=lambda r: -1.0 if r.continuation == " yes" else -2.0)
    result = evaluate(cfg, backend, tmp_path / "r2")
    assert result.metrics["choice"]["acc"] == 1.0 and not result.skipped


def test_dispatch_keeps_order_across_kinds() -> None:
    backend = MockBackend(lambda r: r.prompt or "", lambda r: float(len(r.continuation)))
    reqs: list[Request] = [GenerationRequest(prompt="a"), LoglikelihoodRequest("", "xyz"),
                           GenerationRequest(prompt="b")]
    out = dispatch(backend, reqs)
    assert [getattr(o, "text", None) or getattr(o, "logprob", None) for o in out] == ["a", 3.0, "b"]


def test_response_cache_serves_repeats(tmp_path: Path) -> None:
    from lingdiag.models.cache import CachedBackend, ResponseCache

    inner = MockBackend(answer_by_group)
    cached = CachedBackend(inner, ResponseCache(tmp_path / "c.sqlite"))
    evaluate(config(), cached, tmp_path / "a")
    assert inner.calls == 40
    evaluate(config(), CachedBackend(inner, ResponseCache(tmp_path / "c.sqlite")), tmp_path / "b")
    assert inner.calls == 40  # everything from the cache
    assert (tmp_path / "a" / "items.jsonl").read_bytes() == (tmp_path / "b" / "items.jsonl").read_bytes()
    stats = ResponseCache(tmp_path / "c.sqlite").stats()
    assert stats["entries"] == [{"model": "mock", "kind": "Generation", "count": 40}]


def test_store_rejects_corrupt_middle_line(tmp_path: Path) -> None:
    (tmp_path / "items.jsonl").write_text("not json\n{}\n")
    with pytest.raises(RunError, match="line 1"):
        RunStore(tmp_path).load_records()


class RaisingReader:
    """A generation strategy whose reader raises on some answers, as a parser's bug would."""

    def render(self, item: Item) -> list[GenerationRequest]:
        return [GenerationRequest(prompt=item.id)]

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        (answer,) = responses
        assert isinstance(answer, Generation)
        if answer.text.startswith("boom"):
            raise KeyError("b") if answer.text.endswith(" b") else ValueError(answer.text)  # KeyError: issue 54
        return Prediction(answer.text, {})


register_suite(Suite(
    name="toy-raising", description="test suite", axes=(),
    load=lambda spec: Dataset(spec, [Item(f"i{k}", {}, "yes", {}) for k in range(4)]),
    conditions=lambda ds, axes, opts, seed: [Condition("c", {}, RaisingReader(), ds.items)],
    metrics=lambda rs: {"acc": sum(bool(r.correct) for r in rs) / len(rs)},
    table=lambda rows: "\n".join(f"{r.model} {r.condition} {r.metrics['acc']}" for r in rows),
))


def test_a_reader_that_raises_fails_its_item_not_the_run(tmp_path: Path) -> None:
    backend = MockBackend(lambda r: {"i1": "boom: answer b", "i3": "boom\nover two lines"}.get(str(r.prompt), "yes"))
    result = evaluate(RunConfig(suite="toy-raising", model="mock"), backend, tmp_path / "r")
    records = RunStore(tmp_path / "r").load_records()
    assert [r.item_id for r in records] == ["i0", "i1", "i2", "i3"]  # every item recorded, in order
    failed = [r for r in records if r.error is not None]
    assert [r.item_id for r in failed] == ["i1", "i3"] and all(r.correct is None for r in failed)
    assert failed[0].error == "the answer reader failed: KeyError: 'b'"
    assert failed[1].error == "the answer reader failed: ValueError: boom over two lines"  # one line
    assert result.metrics["c"]["n_errors"] == 2 and result.metrics["c"]["n"] == 4
    assert "**Failed items**" in result.table
    # A resumed run sends the failed items again (the reader still fails them, and says so again).
    again = evaluate(RunConfig(suite="toy-raising", model="mock"), MockBackend(lambda r: "yes"), tmp_path / "r")
    assert again.metrics["c"]["n_errors"] == 0 and again.metrics["c"]["acc"] == 1.0


def test_unparsed_answers_are_counted_by_reason_in_the_table(tmp_path: Path) -> None:
    answers = {"i0": "True", "i1": "True, not really.", "i2": "Maybe False.", "i3": "I cannot say."}
    backend = MockBackend(lambda r: answers.get(str(r.messages[-1].content), "True, not really."))
    result = evaluate(config(limit=4, axes={"strategy": ["zero-shot"]}), backend, tmp_path / "r")
    records = RunStore(tmp_path / "r").load_records()
    assert {r.detail["unparsed"] for r in records} == {"negated"}  # no user turn matches: every answer negated
    assert "**Unparsed answers by reason**" in result.table and "zero-shot: negated 4 (4 of 4)" in result.table


class RaisingChoices(ScoreChoices):
    """A log-likelihood strategy whose reader raises, read under a reduced precision."""

    def parse(self, item: Item, responses: Sequence[Response]) -> Prediction:
        if item.id == "i1":
            raise IndexError("no such score")
        return super().parse(item, responses)


def test_a_reader_that_raises_under_reduced_precision_fails_its_item() -> None:
    from lingdiag.engine.run import Recording
    from lingdiag.models.base import Precision

    condition = Condition("choice", {}, RaisingChoices(), [])
    items = [Item(f"i{k}", {}, "yes", {}) for k in range(3)]
    rendered = {it.id: condition.strategy.render(it) for it in items}
    responses = [[LogLikelihood(logprob=-1.0, n_tokens=1, is_greedy=True),
                  LogLikelihood(logprob=-2.0, n_tokens=1, is_greedy=True)] for _ in items]
    records = Recording(precision=Precision("bfloat16", 0.1)).records(condition, items, rendered, responses)
    assert [r.error for r in records] == [None, "the answer reader failed: IndexError: no such score", None]
    assert records[0].decision is not None and records[1].decision is None

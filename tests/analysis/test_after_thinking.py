"""Competence after thinking read from the records (the section), and runs with twins on the mock
backend end to end: items not scored named, shards merged byte-identical, tables apart.

The twins' making (replays, refusals) is in tests/conditions/test_after_thinking.py; the
model-backed run in tests/models/hf/test_thinking.py.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from lingdiag.analysis.after_thinking import section
from lingdiag.cluster import merge
from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.mock import MockBackend
from lingdiag.records import (
    ChatMessage,
    GenerationRequest,
    ItemRecord,
    LoglikelihoodRequest,
    TextOutput,
    record_text,
)
from lingdiag.rundir import RunStore

MESSAGES = (ChatMessage("user", "Premise: Ann was baking. Hypothesis: Ann baked. True, False or Unknown?"),)


def _scored(condition: str, item_id: str, label: str, generated: str | None = None) -> ItemRecord:
    axes = {"strategy": "zero-shot", "scoring": "loglik"} | ({"after_thinking": "zero-shot/thinking-on"}
                                                             if generated else {})
    return ItemRecord(condition=condition, axes=axes, item_id=item_id, tags={}, fields={}, prompts=[], outputs=[],
                      label=label, detail={}, gold="True", correct=label == "True",
                      replays={"run": "gen", "condition": "zero-shot/thinking-on", "item_id": item_id,
                               "label": generated} if generated else None)


def test_the_section_says_whether_thinking_moved_the_preference_or_only_the_answer() -> None:
    after = dict(zip("abcde", ("True", "False", "True", "Unknown", "True"), strict=True))
    generated = dict(zip("abcde", ("True", "False", "False", "Unknown", "unparsed"), strict=True))
    plain = dict(zip("abcde", ("False", "False", "True", "True", "True"), strict=True))
    records = [_scored("zero-shot/loglik", k, v) for k, v in plain.items()] + \
        [_scored("zero-shot/loglik/after-thinking", k, v, generated[k]) for k, v in after.items()]
    text = section(records)
    row = next(line for line in text.splitlines() if line.startswith("| zero-shot/loglik/after-thinking |"))
    # after vs generated 3 of 4 (the unparsed answer agrees with nothing: left out), after vs plain 3 of 5,
    # plain vs generated 1 of 4
    assert [c.strip() for c in row.strip("|").split("|")][2:] == ["4", "0.75", "5", "0.60", "4", "0.25"]
    assert "zero-shot/loglik/after-thinking vs zero-shot/loglik" in text and "McNemar" in text
    assert section(records[:5]) == ""  # no after-thinking condition, no section


def _thought(r: GenerationRequest) -> str:
    """An inline reasoning model's answers: completed thinking, thinking cut off, or none."""
    kind = hashlib.sha256(r.messages[-1].content.encode()).digest()[0] % 3
    return ("<think>\nOne could say True.\n</think>\nFalse", "<think>\nOne could say", "False")[kind]


def _prefers(r: LoglikelihoodRequest) -> float:
    """A model that prefers "True" after thinking and "False" without."""
    return -1.0 if r.continuation == ("True" if r.assistant_prefix else "False") else -2.0


def test_items_without_completed_thinking_are_named_and_shards_merge_byte_identical(tmp_path: Path) -> None:
    gen = tmp_path / "gen"
    evaluate(RunConfig(suite="imperfective", model="mock", limit=12, axes={"strategy": ["zero-shot"],
                                                                           "thinking": ["on"]}),
             MockBackend(_thought), gen)
    kinds = {r.item_id: "unfinished" if r.label == "unfinished" else
             "completed" if isinstance(r.outputs[0], TextOutput) and r.outputs[0].reasoning else "none"
             for r in RunStore(gen).load_records()}
    config = {"suite": "imperfective", "model": "mock", "limit": 12, "after_thinking": f"{gen}:zero-shot/thinking-on",
              "axes": {"strategy": ["zero-shot"], "scoring": ["loglik"]}}
    whole = tmp_path / "whole"
    evaluate(RunConfig.model_validate(config), MockBackend(loglik_fn=_prefers), whole)
    records = RunStore(whole).load_records()
    after = [r for r in records if r.condition == "zero-shot/loglik/after-thinking"]
    assert sorted(r.item_id for r in after) == sorted(k for k, v in kinds.items() if v == "completed")
    assert {r.label for r in after} == {"True"} and {r.label for r in records if r not in after} == {"False"}
    # Each record holds the requests in full: the replayed thinking the labels were scored after.
    assert all(p["assistant_prefix"] == "<think>\nOne could say True.\n</think>\n\n" for r in after for p in r.prompts)
    assert "[assistant, replayed]\n<think>\nOne could say True.\n</think>\n\n[continuation]\nTrue" in \
        record_text(after[0].prompts)
    assert not any("assistant_prefix" in p for r in records if r not in after for p in r.prompts)
    meta = json.loads((whole / "meta.json").read_text())["after_thinking"]["zero-shot/loglik/after-thinking"]
    assert meta["not_scored"] == {"unfinished": sorted(k for k, v in kinds.items() if v == "unfinished"),
                                  "no thinking": sorted(k for k, v in kinds.items() if v == "none")}
    assert all(meta["not_scored"].values())  # each reason occurs among the 12 items
    shards = []
    for k in (1, 2):
        shards.append(tmp_path / f"{k}-of-2")
        evaluate(RunConfig.model_validate({**config, "shard": f"{k}/2"}), MockBackend(loglik_fn=_prefers), shards[-1])
    merged = merge(shards, tmp_path / "merged")
    for name in ("items.jsonl", "metrics.json", "table.md"):
        assert (merged.out / name).read_bytes() == (whole / name).read_bytes(), name
    assert "**Not scored after thinking**" in (whole / "table.md").read_text()
    assert json.loads((merged.out / "meta.json").read_text())["after_thinking"] == \
        json.loads((whole / "meta.json").read_text())["after_thinking"]


def test_cxnli_tables_keep_thinking_settings_and_after_thinking_rows_apart(tmp_path: Path) -> None:
    gen = tmp_path / "gen"
    evaluate(RunConfig(suite="cxnli", model="mock", limit=3, axes={"exp": ["1"], "setting": ["zero"],
                                                                    "thinking": ["on"]}),
             MockBackend(lambda r: "<think>\nIt follows.\n</think>\nentailment"), gen)
    result = evaluate(RunConfig(suite="cxnli", model="mock", limit=3, after_thinking=str(gen),
                                axes={"exp": ["1"], "setting": ["zero"], "scoring": ["loglik"]}),
                      MockBackend(loglik_fn=_prefers), tmp_path / "after")
    # The main table is the first section with rows (a note may open the table: one label for every item).
    main = next(part for part in result.table.split("\n## ") if "| mock |" in part)
    rows = [line for line in main.splitlines() if line.startswith("| mock |")]
    assert [r.split("|")[3].strip() for r in rows] == [
        "variation-2 (loglik)", "variation-2 (loglik) after exp1/zero/variation-2/thinking-on"]
    settings = evaluate(RunConfig(suite="cxnli", model="mock", limit=3, axes={
        "exp": ["1"], "setting": ["zero"], "thinking": ["off", "on"]}), MockBackend(lambda r: "entailment"),
        tmp_path / "settings").table
    gen_rows = [line for line in next(part for part in settings.split("\n## ") if "| mock |" in part).splitlines()
                if line.startswith("| mock |")]
    assert [r.split("|")[3].strip() for r in gen_rows] == ["variation-2 thinking off", "variation-2 thinking on"]


def test_a_suite_files_table_has_a_column_for_the_replay(tmp_path: Path) -> None:
    suite = str(Path(__file__).parents[2] / "examples" / "suites" / "monotonicity-nli.yaml")
    gen = tmp_path / "gen"
    settings = evaluate(RunConfig(suite=suite, model="mock", limit=4, axes={"format": ["plain"],
                                                                            "thinking": ["off", "on"]}),
                        MockBackend(lambda r: "<think>\nSome is upward.\n</think>\nyes"), gen).table
    assert "| plain | off | mock |" in settings and "| plain | on | mock |" in settings
    after = evaluate(RunConfig(suite=suite, model="mock", limit=4, after_thinking=f"{gen}:plain/thinking-on",
                               axes={"format": ["loglik"]}), MockBackend(loglik_fn=_prefers), tmp_path / "after").table
    assert "| loglik |  | mock |" in after and "| loglik | plain/thinking-on | mock |" in after

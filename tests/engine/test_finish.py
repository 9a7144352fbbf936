"""``finish`` counts each condition's metrics once: ``metrics.json``, ``table.md`` and the summary written
beside ``items.jsonl`` read the same count (the summary holds the suite's metrics; ``metrics.json`` adds the
fragile counts of a reduced-precision run)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.mock import MockBackend
from lingdiag.records import ItemRecord
from lingdiag.rundir import RunStore
from lingdiag.rundir.summary import read_summary
from lingdiag.suite import Suite


def _answer(req: object) -> str:
    return ("True", "False", "maybe?")[len(str(getattr(req, "messages", ""))) % 3]


def test_each_conditions_metrics_are_counted_once_at_finish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counted: list[str] = []
    metrics = Suite.condition_metrics

    def counting(self: Suite, records: Sequence[ItemRecord]) -> dict[str, Any]:
        counted.append(records[0].condition)
        return metrics(self, records)

    monkeypatch.setattr(Suite, "condition_metrics", counting)
    out = tmp_path / "run"
    evaluate(RunConfig(suite="imperfective", model="mock", axes={"strategy": ["zero-shot", "dap"]}, limit=6),
             MockBackend(_answer), out)
    assert sorted(counted) == ["dap", "zero-shot"]
    summary = read_summary(RunStore(out))
    assert summary is not None
    assert summary.metrics == json.loads((out / "metrics.json").read_text(encoding="utf-8"))

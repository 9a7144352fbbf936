"""bfloat16 decisions that know their noise, on the real SmolLM2 (issue 39).

With ``rescore_fragile=float32`` a bf16 run re-scores only the requests of decisions whose margin is
within bf16's measured noise, and every decision then equals a float32 run's: ExpliCa perplexity,
an ImperfectiveNLI log-likelihood condition and a BLiMP paradigm. Float32 runs carry no decision
fields at all (their records stay as they were).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.metrics.fragile import N_FRAGILE, N_RESCORED
from lingdiag.models.hf import HFBackend
from lingdiag.models.providers import load_backend

M = "smollm2-135m"


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (path / "items.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_rescoring_fragile_decisions_gives_float32s_decisions(tmp_path: Path, smollm2: Any,
                                                              shared_datasets: Path) -> None:
    paradigm = tmp_path / "data"  # not a parent of the run directories: a directory dataset is read recursively
    paradigm.mkdir()
    shutil.copy(shared_datasets / "blimp" / "anaphor_gender_agreement.jsonl", paradigm)
    configs = {
        "explica": RunConfig(suite="explica", model=M, axes={"task": ["perplexity"]}, limit=16),
        "imperfective": RunConfig(suite="imperfective", model=M, axes={"strategy": ["zero-shot"],
                                                                        "scoring": ["loglik"]}, limit=8),
        "blimp": RunConfig(suite="minimal-pairs", model=M, dataset=str(paradigm), limit=40),
    }
    low = load_backend(M, {"dtype": "bfloat16", "rescore_fragile": "float32"})
    rescored = 0
    for name, config in configs.items():
        evaluate(config, smollm2, tmp_path / name / "fp32")
        evaluate(config, low, tmp_path / name / "bf16")
        truth, ours = _records(tmp_path / name / "fp32"), _records(tmp_path / name / "bf16")
        assert [r["label"] for r in ours] == [r["label"] for r in truth], name
        assert all("decision" not in r for r in truth)
        decisions = [r["decision"] for r in ours]
        assert all(d is not None for d in decisions), name  # every one a choice between whole texts
        assert all(d["rescored"] for d in decisions if d["fragile"]), name
        assert all(d["margin"] is None or d["margin"] > 0 for d in decisions)
        metrics = json.loads((tmp_path / name / "bf16" / "metrics.json").read_text())
        assert all(N_FRAGILE not in m for m in json.loads((tmp_path / name / "fp32" / "metrics.json")
                                                          .read_text()).values())
        fragile = sum(m[N_FRAGILE] for m in metrics.values())
        assert fragile == sum(d["fragile"] for d in decisions)
        assert sum(m[N_RESCORED] for m in metrics.values()) == fragile
        table = (tmp_path / name / "bf16" / "table.md").read_text()
        # Among the table's opening notes (after "Not interpretable" where a condition is): counted per
        # condition, 0 included.
        note = next((p for p in table.split("\n\n") if p.startswith("**Fragile decisions**")), "")
        assert note and all(f"{c}: {m[N_FRAGILE]} of {m['n']}" in note for c, m in metrics.items()), name
        assert "**Fragile decisions**" not in (tmp_path / name / "fp32" / "table.md").read_text()
        rescored += fragile
    assert rescored > 0  # else the float32 path was never taken and the equality shows nothing
    assert low.usage()["rescored_requests"] > 0  # type: ignore[attr-defined]


@pytest.mark.slow
def test_on_official_explica_rescoring_under_the_calibrated_bound_gives_float32s_decisions(
        tmp_path: Path, smollm2: Any, shared_datasets: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 48 official perplexity items (issue 48): the bound is measured afresh (empty cache; that it is the same
    # twice is tests/models/hf/test_calibrate.py's); decisions marked fragile are re-scored and none outside
    # them differs from float32's.
    monkeypatch.setenv("LINGDIAG_CACHE", str(tmp_path / "cache"))
    config = RunConfig(suite="explica", model=M, dataset=str(shared_datasets / "explica" / "explica.csv"),
                       axes={"task": ["perplexity"]}, limit=48)
    low = load_backend(M, {"dtype": "bfloat16", "rescore_fragile": "float32", "calibrate": True})
    assert isinstance(low, HFBackend)
    evaluate(config, smollm2, tmp_path / "fp32")
    evaluate(config, low, tmp_path / "bf16")
    truth, ours = _records(tmp_path / "fp32"), _records(tmp_path / "bf16")
    assert len(truth) == 48
    assert [r["label"] for r in ours] == [r["label"] for r in truth]
    assert all(d["rescored"] for r in ours if (d := r["decision"])["fragile"])

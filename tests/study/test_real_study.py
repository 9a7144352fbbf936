"""The issue's study with real models: the embedded SmolLM2 and a tiny local model saved at three
checkpoints × ImperfectiveNLI zero-shot (12 items), one SLING paradigm, one BLiMP paradigm and a
suite file, in one call; each model loaded once; the report reads it. (gemma3-270m, converted on
first use, is too slow for this shared CPU: it is in examples/studies/tiny.yaml instead.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import smollm2_dir, tiny_checkpoints

from lingdiag.config import RunConfig
from lingdiag.models.door import load_model
from lingdiag.rundir.status import Status
from lingdiag.study.execute import Models, run_study
from lingdiag.study.report import write_report
from lingdiag.study.schema import StudyFile

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "datasets"


@pytest.mark.slow
def test_the_issue_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not (SHARED / "imperfective_nli" / "imperfectiveNLI.json").is_file():
        pytest.skip(f"the official datasets are not at {SHARED}")
    smollm2_dir()  # skips where the embedded model is not installed
    tiny_checkpoints(tmp_path / "ckpt")
    study = StudyFile.model_validate({
        "name": "issue-46", "base": tmp_path, "limit": 12,
        "models": [{"spec": "smollm2-135m", "family": "SmolLM2", "size": "135M"},
                   {"name": "tiny", "family": "tiny-llama", "checkpoints": [
                       {"path": f"ckpt/step{k}", "step": k} for k in (1, 2, 3)]}],
        "suites": [
            {"suite": "imperfective", "name": "nli", "dataset": str(SHARED / "imperfective_nli/imperfectiveNLI.json"),
             "axes": {"strategy": "zero-shot"}, "options": {"max_new_tokens": 16}},
            {"suite": "minimal-pairs", "name": "sling", "dataset": str(SHARED / "sling/Aspect/zai_guo.jsonl")},
            {"suite": "minimal-pairs", "name": "blimp",
             "dataset": str(SHARED / "blimp/determiner_noun_agreement_2.jsonl")},
            {"suite": str(ROOT / "examples/suites/agreement-pairs.yaml"), "name": "pairs"}]})
    monkeypatch.setenv("LINGDIAG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    loaded: list[str] = []

    def load(config: RunConfig) -> Any:
        loaded.append(config.model)
        return load_model(config)

    state = run_study(study, tmp_path / "out", models=Models(load))
    assert [e.state.status for e in state.runs] == ["done"] * 16, [e.state.reason for e in state.runs]
    assert len(loaded) == 4 and len(set(loaded)) == 4  # one load per model for its four suites
    assert [e.state.items_total for e in state.runs[:4]] == [12, 12, 12, 12]
    write_report(tmp_path / "out", tmp_path / "r.html", tmp_path / "tables")
    md = (tmp_path / "tables" / "study.md").read_text()
    for cell in ("nli, zero-shot", "sling, simple/lingdiag", "blimp, simple/lingdiag", "pairs, simple/lingdiag"):
        assert f"### tiny: {cell}" in md and f"### Agreement: {cell}" in md and f"### Items across models: {cell}" in md
    again = run_study(study, tmp_path / "out", models=Models(load))
    assert len(loaded) == 4 and all(e.state.status == Status.DONE for e in again.runs)  # nothing loaded, nothing redone

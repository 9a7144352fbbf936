"""A real end-to-end run of the embedded SmolLM2 on a few items."""

import json
from pathlib import Path

import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.hf import HFBackend

pytestmark = pytest.mark.slow


def test_smollm2_zero_shot_and_cot_end_to_end(smollm2: HFBackend, tmp_path: Path) -> None:
    cfg = RunConfig(suite="imperfective", model="smollm2-135m", axes={"strategy": ["zero-shot", "cot"]}, limit=8,
                    options={"max_new_tokens_cot": 48})
    result = evaluate(cfg, smollm2, tmp_path / "a")
    records = [json.loads(x) for x in (tmp_path / "a" / "items.jsonl").read_text().splitlines()]
    assert len(records) == 16
    zero = [r for r in records if r["condition"] == "zero-shot"]
    # SmolLM2 answers the strict-logic prompt with a bare label.
    assert all(r["label"] in ("True", "False", "Unknown") for r in zero)
    assert {r["tags"]["group"] for r in zero} == set("ABCD")
    cot = [r for r in records if r["condition"] == "cot"]
    assert all(r["detail"]["n_tokens"] <= 48 for r in cot)
    m = result.metrics["cot"]
    assert m["n"] == 8 and 0 <= m["unparsed_rate"] <= 1
    assert m["n_unparsed"] == sum(r["label"] == "unparsed" for r in cot)
    meta = json.loads((tmp_path / "a" / "meta.json").read_text())
    assert meta["model"]["model"] == "smollm2-135m" and len(meta["model"]["weights_sha256"]) == 64
    # Determinism: the same config and model give byte-identical records.
    evaluate(cfg, smollm2, tmp_path / "b")
    assert (tmp_path / "a" / "items.jsonl").read_bytes() == (tmp_path / "b" / "items.jsonl").read_bytes()


def test_batched_generation_matches_single_requests(smollm2: HFBackend) -> None:
    from lingdiag.suites.imperfective.data import builtin_items
    from lingdiag.suites.imperfective.prompts import strategy

    s = strategy("zero-shot", max_new_tokens=6)
    requests = [s.render(it)[0] for it in builtin_items()[::50]]
    batched = smollm2.generate(requests)
    single = [smollm2.generate([r])[0] for r in requests]
    assert [g.text for g in batched] == [g.text for g in single]
    for a, b in zip(batched, single, strict=True):
        assert a.logprobs is not None and b.logprobs is not None
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True)) < 1e-3

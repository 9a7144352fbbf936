"""``run --per-token``: every log-likelihood request asks for per-token log-probs and the records keep
them; without it, records and the recorded configuration are as they were."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.base import Capabilities
from lingdiag.records import Generation, GenerationRequest, LogLikelihood, LoglikelihoodRequest


class Words:
    """Scores a text word by word (-1 nat a word), per token only where asked."""

    identity = {"backend": "words", "model": "words", "weights_sha256": ""}
    capabilities = Capabilities(generate=False, loglikelihood=True)

    def __init__(self) -> None:
        self.asked: list[bool] = []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        raise AssertionError("not asked")

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LogLikelihood]:
        out = []
        for r in requests:
            self.asked.append(r.per_token)
            words = r.continuation.split(" ")
            spans, at = [], 0
            for w in words:
                spans.append((at, at + len(w)))
                at += len(w) + 1
            out.append(LogLikelihood(-float(len(words)), len(words), False,
                                     token_logprobs=tuple(-1.0 for _ in words) if r.per_token else None,
                                     token_spans=tuple(spans) if r.per_token else None))
        return out


def _outputs(run: Path) -> list[dict[str, Any]]:
    return [o for line in (run / "items.jsonl").read_text().splitlines() for o in json.loads(line)["outputs"]]


def test_per_token_records_the_token_log_probs(tmp_path: Path) -> None:
    config = RunConfig(suite="imperfective", model="words", dataset="builtin", axes={"scoring": ["loglik"],
                       "strategy": ["zero-shot"]}, limit=3)
    plain, asked = Words(), Words()
    evaluate(config, plain, tmp_path / "plain")
    evaluate(config.model_copy(update={"per_token": True}), asked, tmp_path / "asked")
    assert not any(plain.asked) and all(asked.asked) and asked.asked
    assert all("token_logprobs" not in o for o in _outputs(tmp_path / "plain"))
    assert "per_token" not in json.loads((tmp_path / "plain" / "meta.json").read_text())["config"]
    kept = _outputs(tmp_path / "asked")
    assert kept and all(o["token_logprobs"] == [-1.0] * o["n_tokens"] for o in kept)
    assert json.loads((tmp_path / "asked" / "meta.json").read_text())["config"]["per_token"] is True

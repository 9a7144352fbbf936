"""The OpenAI-compatible backend refuses log-likelihoods with a chat context: the server's chat
template is not visible, and echo scores raw text only, so it could only score another prompt."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lingdiag.errors import CapabilityError
from lingdiag.models.openai.backend import OpenAIBackend, OpenAIOptions
from lingdiag.records import ChatMessage, LoglikelihoodRequest

MESSAGES = (ChatMessage("user", "Premise: A. Hypothesis: B. Answer True, False or Unknown."),)


def test_chat_context_loglikelihood_is_refused_before_any_request(fake_api: Any) -> None:
    backend = OpenAIBackend("smollm2", fake_api.url, OpenAIOptions())
    with pytest.raises(CapabilityError) as e:
        backend.loglikelihood([LoglikelihoodRequest("", "True", messages=MESSAGES)])
    message = str(e.value)
    assert "chat template" in message and "--model-option tokenizer=" in message and "\n" not in message
    assert fake_api.paths == []  # nothing was scored in its place


def test_run_skips_the_loglik_condition_with_the_reason(fake_api: Any, tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "lingdiag", "run", "imperfective", "-m",
                           f"openai:smollm2@{fake_api.url}", "--limit", "2", "--strategy", "zero-shot",
                           "--scoring", "generate,loglik", "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    meta = json.loads((out / "meta.json").read_text())
    assert "chat template" in meta["skipped"]["zero-shot/loglik"]
    assert "Traceback" not in done.stderr
    conditions = {json.loads(x)["condition"] for x in (out / "items.jsonl").read_text().splitlines()}
    assert conditions == {"zero-shot"}

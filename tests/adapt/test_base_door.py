"""``adapt steer|lora`` load their base model through the run's door: ``--model-option`` reaches the
provider, and the spec and its options are checked before any training data is built or weight loaded."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from lingdiag.cli import app
from lingdiag.errors import LingdiagError


@pytest.mark.parametrize("command", [
    ["steer", "--layers", "1", "--out", "v.st", "--pairs", "missing.jsonl"],
    ["lora", "--out", "adapter", "--steps", "1", "--train", "missing.jsonl"]])
def test_the_base_model_and_its_options_are_checked_first(command: list[str], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    name, *rest = command
    for option, problem in (("batch_tokenz=64", "batch_tokenz"), ("device=cuda:63", "device=cuda:63")):
        result = CliRunner().invoke(app, ["adapt", name, "imperfective", "-m", "smollm2-135m", *rest,
                                          "--model-option", option])
        assert isinstance(result.exception, LingdiagError), result.output
        assert problem in str(result.exception) and "missing.jsonl" not in str(result.exception)
    served = CliRunner().invoke(app, ["adapt", name, "imperfective", "-m", "openai:m@http://127.0.0.1:9/v1", *rest])
    assert isinstance(served.exception, LingdiagError) and "needs the transformers backend" in str(served.exception)
    assert not (tmp_path / "adapter").exists() and not (tmp_path / "v.st").exists()

"""``lingdiag models``: what first use costs and how to convert ahead."""

from __future__ import annotations

from pathlib import Path

from helpers import lingdiag


def test_models_says_the_cost_of_first_use_and_the_command_to_convert_ahead(tmp_path: Path) -> None:
    proc = lingdiag(tmp_path, "models", env={"COLUMNS": "400"})
    assert proc.returncode == 0, proc.stderr
    assert "first use converts (about 40 s), or now: lingdiag models --convert smollm2-135m" in proc.stdout


def test_converting_an_unknown_model_is_one_line(tmp_path: Path) -> None:
    proc = lingdiag(tmp_path, "models", "--convert", "gpt-5")
    assert proc.returncode == 2 and proc.stderr.startswith("error: unknown embedded model 'gpt-5'; valid"), proc.stderr
    assert proc.stderr.count("\n") == 1

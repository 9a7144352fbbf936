"""Everything a study names is checked when it is planned, before any model loads: a mistyped
provider option, a malformed spec, a model directory that does not exist, an unknown embedded model —
each one line naming the study file, the run and where the file sets it."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import pytest
import yaml
from helpers import lingdiag

from lingdiag.config import RunConfig
from lingdiag.errors import ConfigError, LingdiagError, UnknownNameError
from lingdiag.study.execute import Models, run_study
from lingdiag.study.schema import load_study

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"


def _never(config: RunConfig) -> NoReturn:
    raise AssertionError(f"a model was loaded ({config.model}) before the plan was checked")


def _study(tmp_path: Path, model: dict[str, object]) -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump({
        "models": [{"spec": "smollm2-135m", "name": "good"}, model], "retries": 0,
        "suites": [{"suite": str(EXAMPLES / "agreement-pairs.yaml"), "name": "pairs"}]}))
    return path


@pytest.mark.parametrize(("model", "error", "problem"), [
    ({"spec": "smollm2-135m", "name": "typo", "options": {"batch_tokenz": 64}}, ConfigError,
     "batch_tokenz"),
    ({"spec": "hf:", "name": "empty"}, ConfigError, "expected PROVIDER:NAME"),
    ({"spec": "hf:/no/such/checkpoint", "name": "gone"}, ConfigError, "no such model directory: /no/such/checkpoint"),
    ({"spec": "smollm3-9000", "name": "unknown"}, UnknownNameError, "unknown model 'smollm3-9000'"),
    ({"spec": "openai:m@http://127.0.0.1:9/v1", "name": "srv", "options": {"max_retries": "many"}}, ConfigError,
     "max_retries"),
])
def test_a_bad_model_is_refused_in_one_line_before_anything_loads(tmp_path: Path, model: dict[str, object],
                                                                 error: type[LingdiagError], problem: str) -> None:
    path = _study(tmp_path, model)
    with pytest.raises(error) as caught:
        run_study(load_study(path), tmp_path / "out", models=Models(load=_never))
    message = str(caught.value)
    assert "\n" not in message and problem in message
    assert message.startswith(f"{path}: run {model['name']}/pairs (models[1]/suites[0]): ")
    assert not (tmp_path / "out").exists()  # nothing planned into a directory, nothing loaded


def test_the_command_line_says_it_in_one_line_with_exit_2(tmp_path: Path) -> None:
    path = _study(tmp_path, {"spec": "smollm2-135m", "name": "typo", "options": {"batch_tokenz": 64}})
    out = lingdiag(tmp_path, "study", "run", str(path), "--out", str(tmp_path / "out"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"{path}: run typo/pairs (models[1]/suites[0]): " in out.stderr and "batch_tokenz" in out.stderr

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


def test_a_device_this_machine_lacks_is_refused_before_anything_loads(tmp_path: Path) -> None:
    path = _study(tmp_path, {"spec": "smollm2-135m", "name": "gpu", "options": {"device": "cuda:63"}})
    with pytest.raises(ConfigError, match=r"run gpu/pairs \(models\[1\]/suites\[0\]\): device=cuda:63: "):
        run_study(load_study(path), tmp_path / "out", models=Models(load=_never))
    assert not (tmp_path / "out").exists()


def test_offline_a_hub_revision_not_in_the_cache_is_refused_before_anything_loads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    for spec in ("hf:org/tiny@step100", "hf:org/tiny"):
        path = _study(tmp_path, {"spec": spec, "name": "ckpt"})
        with pytest.raises(LingdiagError) as caught:
            run_study(load_study(path), tmp_path / "out", models=Models(load=_never))
        assert str(caught.value).startswith(f"{path}: run ckpt/pairs (models[1]/suites[0]): ")
        assert "\n" not in str(caught.value) and "HF_HUB_OFFLINE" in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_an_axis_a_backend_cannot_serve_is_refused_before_anything_loads(tmp_path: Path) -> None:
    """A temperature sweep (or thinking settings) on a backend that declares it cannot sample (or think)."""
    from lingdiag.models.base import Capabilities

    path = tmp_path / "study.yaml"
    for axes, problem in (({"temperature": ["0", "0.7"]}, "--temperature: backend embedded cannot sample"),
                          ({"thinking": ["off", "on"]}, "--thinking: backend embedded takes no thinking setting")):
        path.write_text(yaml.safe_dump({"models": [{"spec": "smollm2-135m", "name": "m"}], "retries": 0,
                                        "suites": [{"suite": "imperfective", "name": "nli", "limit": 2,
                                                    "axes": axes}]}))
        greedy = Models(load=_never, check=lambda config: Capabilities(sampling=False, thinking=False))
        with pytest.raises(ConfigError, match=problem):
            run_study(load_study(path), tmp_path / "out", models=greedy)
    assert not (tmp_path / "out").exists()


def test_a_judge_model_is_checked_with_the_run(tmp_path: Path) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump({"models": [{"spec": "smollm2-135m", "name": "m"}], "retries": 0,
                                    "suites": [{"suite": "imperfective", "name": "nli", "limit": 2,
                                                "run": {"reader": "judge:hf:/no/such/judge"}}]}))
    with pytest.raises(ConfigError, match="no such model directory: /no/such/judge"):
        run_study(load_study(path), tmp_path / "out", models=Models(load=_never))

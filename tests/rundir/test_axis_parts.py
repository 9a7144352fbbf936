"""The four built-in axes' ``meta.json`` parts (``thinking``, ``after_thinking``, ``scoring_policies``,
``precision``) are registered by their axes the way a plug-in's is (``rundir.parts.register_part``), and
reading a run imports the modules of the axes whose parts it holds, no other (a fresh interpreter each)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import SRC, fixture_runs

from lingdiag.errors import RunError
from lingdiag.registry import _HOMES
from lingdiag.rundir import RunMeta, RunStore
from lingdiag.rundir.meta import MetaFile

EARLIER = fixture_runs("rundir-3789a70")
LATER = fixture_runs("rundir-6472672")
AXIS_MODULES = {"lingdiag.conditions.after_thinking", "lingdiag.conditions.precision",
                "lingdiag.conditions.scoring_policy", "lingdiag.conditions.temperature",
                "lingdiag.conditions.thinking"}
HOMES = _HOMES["meta.json part"]


def _read_in_a_fresh_interpreter(meta: Path) -> tuple[list[str], list[str]]:
    """The ``lingdiag`` modules loaded after reading ``meta`` in a new Python, and the axes' parts it read."""
    code = ("import sys, json; from pathlib import Path; from lingdiag.rundir import RunMeta; "
            "meta = RunMeta.read(Path(sys.argv[1])); "
            "print(json.dumps([sorted(m for m in sys.modules if m.startswith('lingdiag')), sorted(meta.parts)]))")
    out = subprocess.run([sys.executable, "-c", code, str(meta)], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"}, timeout=120)
    modules, parts = json.loads(out.stdout)
    return modules, parts


def test_the_built_in_axes_parts_are_not_the_runs_own() -> None:
    axes = {"thinking", "after_thinking", "scoring_policies", "precision", "temperature"}
    assert not axes & set(MetaFile.model_fields)
    assert AXIS_MODULES <= set(HOMES.values())


def _only(tmp_path: Path, part: str, value: object) -> Path:
    """The plain fixture's ``meta.json`` with one axis's part added."""
    meta = json.loads((EARLIER / "plain" / "meta.json").read_text())
    (tmp_path / "meta.json").write_text(json.dumps({**meta, part: value}))
    return tmp_path / "meta.json"


ONE_PART: dict[str, Any] = {
    "precision": {"dtype": "bfloat16", "per_token_noise": 0.3, "rescore_fragile": None},
    "thinking": {"c/thinking-on": {"setting": "on", "budget": 0, "effort": "", "tags": ["<think>", "</think>"],
                                   "forced": False}},
    "after_thinking": {"c/after-thinking": {"run": "gen", "condition": "c/thinking-on", "setting": "on",
                                            "not_scored": {}}},
    "scoring_policies": {"c": [{"name": "lm-eval", "prefix": "", "prefix_scope": "none", "leading_space": True,
                                "score_first_token": False, "whitespace_correction": False}]},
}


@pytest.mark.parametrize("part", sorted(ONE_PART))
def test_reading_an_axis_part_imports_that_axis_alone(part: str, tmp_path: Path) -> None:
    modules, parts = _read_in_a_fresh_interpreter(_only(tmp_path, part, ONE_PART[part]))
    assert parts == [part]
    assert AXIS_MODULES & set(modules) == {HOMES[part]}, modules
    # Neither the orchestrator, a suite, an analysis nor a model provider is imported to read a run.
    assert not [m for m in modules if m.startswith(("lingdiag.engine", "lingdiag.suites", "lingdiag.models.providers",
                                                    "lingdiag.analysis"))], modules


def test_a_judged_run_imports_the_judge_alone(tmp_path: Path) -> None:
    gate = {"sample": 4, "agreeing": 4, "agreement": 1.0, "threshold": 0.9, "used": True}
    modules, parts = _read_in_a_fresh_interpreter(_only(tmp_path, "judge_gate", gate))
    assert parts == ["judge_gate"] and "lingdiag.engine.judge" in modules and not AXIS_MODULES & set(modules)
    assert not [m for m in modules if m.startswith(("lingdiag.suites", "lingdiag.models.providers"))], modules


@pytest.mark.parametrize("run", ["plain", "precision"])
def test_a_fixture_run_imports_the_axes_of_its_parts(run: str) -> None:
    modules, parts = _read_in_a_fresh_interpreter(EARLIER / run / "meta.json")
    assert AXIS_MODULES & set(modules) == {HOMES[p] for p in parts}
    assert parts == ([] if run == "plain" else ["precision", "scoring_policies"])


@pytest.mark.parametrize("meta", sorted(p.relative_to(LATER).as_posix() for p in LATER.rglob("meta.json")))
def test_a_6472672_meta_json_is_written_back_byte_identical(meta: str, tmp_path: Path) -> None:
    shutil.copy(LATER / meta, tmp_path / "meta.json")
    before = (tmp_path / "meta.json").read_bytes()
    RunStore(tmp_path).write_meta(RunMeta.read(tmp_path / "meta.json"))
    assert (tmp_path / "meta.json").read_bytes() == before


def test_a_built_in_axis_part_is_checked_by_its_schema_and_named_in_one_line(tmp_path: Path) -> None:
    bad = dict(ONE_PART["thinking"]["c/thinking-on"])
    del bad["setting"]
    with pytest.raises(RunError, match=r"field 'thinking\.c/thinking-on\.setting': Field required"):
        RunMeta.read(_only(tmp_path, "thinking", {"c/thinking-on": bad}))
    with pytest.raises(RunError, match=r"field 'precision\.dtype'"):
        RunMeta.read(_only(tmp_path, "precision", {**ONE_PART["precision"], "dtype": 16}))
    with pytest.raises(RunError, match=r"unknown key 'thinkin'.*precision.*thinking"):
        RunMeta.read(_only(tmp_path, "thinkin", {}))


def test_an_axis_part_given_typed_or_as_a_mapping_is_kept_and_removed_by_key() -> None:
    meta = RunMeta.read(EARLIER / "precision" / "meta.json")
    float32 = meta.replaced(precision=None)
    assert "precision" not in float32.parts and "precision" not in float32.to_json()
    again = float32.replaced(precision=meta.parts["precision"])
    assert again.to_json() == meta.to_json()
    assert float32.replaced(precision=ONE_PART["precision"]).parts["precision"].rescore_fragile is None

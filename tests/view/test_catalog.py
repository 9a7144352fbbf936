"""Runs and groups under the given directories, no symlink out of them, and each run's state."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import fixture_runs

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.mock import MockBackend
from lingdiag.view.catalog import catalog


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("catalog")
    for name in ("a", "b"):
        backend = MockBackend(lambda r: "True", name=f"mock-{name}")
        evaluate(RunConfig(suite="imperfective", model=backend.name, dataset="builtin",
                           axes={"strategy": ["zero-shot"]}, limit=4), backend, root / "study" / name)
    (root / "study" / "study.json").write_text("{}")
    return root


def test_runs_and_groups_are_found_and_symlinks_out_are_not(study: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "run").mkdir(parents=True)
    (outside / "run" / "meta.json").write_text("{}")
    (study / "link").symlink_to(outside)
    try:
        found = catalog([study])
    finally:
        (study / "link").unlink()
    assert sorted(found.runs) == ["0/study/a", "0/study/b"]
    group = found.groups["g:0/study"]
    assert group.runs == ("0/study/a", "0/study/b") and group.study
    assert catalog([study / "study" / "a"]).runs["0"].group is None  # a given run is its own entry




def test_a_stopped_run_shows_the_items_it_planned_and_its_state(tmp_path: Path) -> None:
    import shutil

    from lingdiag.view.app import Viewer

    fixture = fixture_runs("rundir-6472672") / "stopped"
    shutil.copytree(fixture, tmp_path / "runs" / "stopped")
    viewer = Viewer([tmp_path / "runs"])
    row = viewer.row(viewer.run("0/stopped"))
    assert (row.done, row.planned, row.state) == (2, 6, "stopped")  # meta.json's planned, not a re-plan
    assert row.why == "run not finished (stopped): 2 of 6 items"
def test_a_study_is_one_group_whatever_folders_its_runs_sit_in(tmp_path: Path) -> None:
    """A study's runs sit at runs/MODEL/SUITE: one group (the study), not one per model folder."""
    for model, suite in (("a", "s1"), ("a", "s2"), ("b@step500", "s1")):
        backend = MockBackend(lambda r: "True", name=model)
        evaluate(RunConfig(suite="imperfective", model=model, axes={"strategy": ["zero-shot"]}, limit=2), backend,
                 tmp_path / "st" / "runs" / model / suite)
    (tmp_path / "st" / "study.json").write_text("{}")
    (tmp_path / "loose" / "runs" / "x").mkdir(parents=True)  # runs/ without a study.json: folders as groups
    evaluate(RunConfig(suite="imperfective", model="m", axes={"strategy": ["zero-shot"]}, limit=2),
             MockBackend(lambda r: "True", name="m"), tmp_path / "loose" / "runs" / "x" / "r")
    found = catalog([tmp_path])
    assert set(found.groups) == {"g:0/st", "g:0/loose/runs/x"}
    assert found.groups["g:0/st"].runs == ("0/st/runs/a/s1", "0/st/runs/a/s2", "0/st/runs/b@step500/s1")
    assert found.groups["g:0/st"].study and not found.groups["g:0/loose/runs/x"].study
    given = catalog([tmp_path / "st"])  # the study directory given itself
    assert set(given.groups) == {"g:0"} and len(given.groups["g:0"].runs) == 3

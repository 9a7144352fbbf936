"""Runs and groups under the given directories, no symlink out of them, and each run's state."""

from __future__ import annotations

from pathlib import Path

import pytest

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

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "rundir-6472672" / "stopped"
    shutil.copytree(fixture, tmp_path / "runs" / "stopped")
    viewer = Viewer([tmp_path / "runs"])
    row = viewer.row(viewer.run("0/stopped"))
    assert (row.done, row.planned, row.state) == (2, 6, "stopped")  # meta.json's planned, not a re-plan
    assert row.why == "run not finished (stopped): 2 of 6 items"

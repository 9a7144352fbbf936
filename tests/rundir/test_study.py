"""``study.json`` read typed: a newer schema, a run listed twice and a damaged file are one line each;
a run's place in its study is found from its directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lingdiag.errors import RunError
from lingdiag.rundir.study import RunEntry, StudyModel, StudyState, place_of, read_state, write_state


def _state(*keys: str) -> StudyState:
    model = StudyModel(label="m", spec="m", family="m")
    return StudyState(name="s", retries=0, runs=[RunEntry(key=k, model=model, suite=k.split("/")[1], config={})
                                                 for k in keys])


def test_a_newer_schema_is_refused_not_read_as_ours(tmp_path: Path) -> None:
    write_state(tmp_path, _state("m/a"))
    data = json.loads((tmp_path / "study.json").read_text())
    (tmp_path / "study.json").write_text(json.dumps({**data, "schema_version": 2}))
    with pytest.raises(RunError, match=r"study\.json, field 'schema_version': 2 is newer than this lingdiag"):
        read_state(tmp_path)


def test_a_run_listed_twice_is_refused(tmp_path: Path) -> None:
    write_state(tmp_path, _state("m/a", "m/a"))
    with pytest.raises(RunError, match="run 'm/a' is listed twice"):
        read_state(tmp_path)


def test_a_study_json_that_is_not_a_regular_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "study.json").symlink_to("/dev/zero")
    with pytest.raises(RunError, match="study.json: not a regular file"):
        read_state(tmp_path)


def test_a_run_finds_its_place_and_a_stray_directory_none(tmp_path: Path) -> None:
    write_state(tmp_path, _state("m/a"))
    place = place_of(tmp_path / "runs" / "m" / "a")
    assert place is not None and place.entry.name == "m × a" and place.study == tmp_path
    assert place_of(tmp_path / "runs" / "m" / "b") is None  # not listed: not the study's run
    assert place_of(tmp_path / "elsewhere" / "m" / "a") is None


def test_a_thousand_runs_find_their_places_from_one_reading_until_study_json_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A probe of a huge study (1,000 runs): every run asked its place read study.json again."""
    import lingdiag.rundir.study as study

    keys = [f"m{k}/s" for k in range(1000)]
    write_state(tmp_path, _state(*keys))
    reads: list[Path] = []
    real = study.read_state

    def counted(out: Path, *, missing_ok: bool = False) -> StudyState | None:
        reads.append(out)
        return real(out, missing_ok=missing_ok)

    monkeypatch.setattr(study, "read_state", counted)
    found = [place_of(tmp_path / "runs" / k) for k in keys]
    assert [p.entry.key for p in found if p is not None] == keys and len(reads) == 1
    write_state(tmp_path, _state(*keys[:10]))  # the study re-planned: its runs are what it says now
    assert place_of(tmp_path / "runs" / keys[500]) is None and len(reads) == 2
    assert place_of(tmp_path / "runs" / keys[5]) is not None and len(reads) == 2

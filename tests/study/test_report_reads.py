"""The study report reads each run once: from its summary written at finish, every run's ``items.jsonl`` left
unopened for the tables and the terminal report but one run per suite (the items' text beside their numbers
in the Items section), and each opened once for the HTML page's item browser (the records' text is there
only)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import stand_in, study_backend

from lingdiag.study.execute import run_study
from lingdiag.study.report import sections, write_report
from lingdiag.study.schema import StudyFile

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"
_OPENED: list[str] = []
_COUNTING: list[bool] = []


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _COUNTING and event == "open" and str(args[0]).endswith("items.jsonl"):
        _OPENED.append(str(args[0]))


sys.addaudithook(_audit)  # counts only while _COUNTING holds


def _opens(call: object) -> list[str]:
    _OPENED.clear()
    _COUNTING.append(True)
    try:
        call()  # type: ignore[operator]
    finally:
        _COUNTING.clear()
    return list(_OPENED)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("reads")
    spec = StudyFile.model_validate({
        "name": "reads", "base": tmp, "seed": 3,
        "models": [{"spec": "a", "family": "F", "size": "135M"}, {"spec": "b", "family": "F", "size": "360M"}],
        "suites": [{"suite": "imperfective", "dataset": str(EXAMPLES / "imperfective-nli-sample.json"),
                    "axes": {"strategy": ["zero-shot", "dap"]}, "name": "nli"}]})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LINGDIAG_CACHE", str(tmp / "cache"))
        run_study(spec, tmp / "out", models=stand_in(study_backend))
    return tmp / "out"


def test_the_tables_and_the_terminal_report_open_one_run_per_suite_for_the_items_text(study: Path,
                                                                                     tmp_path: Path) -> None:
    assert len(_opens(lambda: sections(study))) == 1  # one suite: its items' text
    assert len(_opens(lambda: write_report(study, None, tmp_path / "tables"))) == 1


def test_the_html_page_opens_each_runs_records_once(study: Path, tmp_path: Path) -> None:
    opened = _opens(lambda: write_report(study, tmp_path / "study.html", tmp_path / "tables"))
    runs = sorted(str(p) for p in study.rglob("items.jsonl"))
    assert sorted(set(opened)) == runs and len(opened) == len(runs) + 1  # each once for its browser; one for text

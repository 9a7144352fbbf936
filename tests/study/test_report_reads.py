"""The study report reads each run once: from its summary written at finish, every run's ``items.jsonl`` left
unopened for the tables and the terminal report (the items' text, gold and human ratings beside their numbers
in the Items section come from the summaries' item tables), and each opened once for the HTML page's item
browser (the records' answers are there only)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from helpers import RecordOpens, fixture_runs, stand_in, study_backend

from lingdiag.study import across
from lingdiag.study.execute import run_study
from lingdiag.study.report import sections, write_report
from lingdiag.study.schema import StudyFile

if TYPE_CHECKING:
    from numpy.typing import NDArray

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"


def _opens(call: object) -> list[str]:
    with RecordOpens() as opened:
        call()  # type: ignore[operator]
    return list(opened)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("reads")
    spec = StudyFile.model_validate({
        "name": "reads", "base": tmp, "seed": 3,
        "models": [{"spec": "a", "family": "F", "size": "135M"}, {"spec": "b", "family": "F", "size": "360M"},
                   {"name": "t", "family": "T", "checkpoints": [{"spec": f"t{k}", "step": k} for k in (1, 2)]}],
        "suites": [{"suite": "imperfective", "dataset": str(EXAMPLES / "imperfective-nli-sample.json"),
                    "axes": {"strategy": ["zero-shot", "dap"]}, "name": "nli"}]})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LINGDIAG_CACHE", str(tmp / "cache"))
        run_study(spec, tmp / "out", models=stand_in(study_backend))
    return tmp / "out"


def test_the_tables_and_the_terminal_report_open_no_records(study: Path, tmp_path: Path) -> None:
    assert _opens(lambda: sections(study)) == []
    assert _opens(lambda: write_report(study, None, tmp_path / "tables")) == []
    assert "| Item | Text | Gold |" in (tmp_path / "tables" / "study.md").read_text(encoding="utf-8")


def test_the_html_page_opens_each_runs_records_once(study: Path, tmp_path: Path) -> None:
    opened = _opens(lambda: write_report(study, tmp_path / "study.html", tmp_path / "tables"))
    runs = sorted(str(p) for p in study.rglob("items.jsonl"))
    assert sorted(opened) == runs  # each once, for its item browser


@pytest.mark.parametrize("fixture", ["rundir-87d9da2", "rundir-6472672"])
def test_a_fixture_study_with_current_summaries_is_reported_without_opening_a_record(fixture: str,
                                                                                    tmp_path: Path) -> None:
    """Runs written by older versions: summarised on the first report, then read from their summaries only."""
    study = fixture_runs(fixture) / "study"
    first = sections(study)[0]
    assert _opens(lambda: sections(study)) == []
    assert _opens(lambda: write_report(study, None, tmp_path / "tables")) == []
    text = (tmp_path / "tables" / "study.md").read_text(encoding="utf-8")
    assert "| A_001 | hypothesis: The mechanic fixed the truck's engine." in text
    assert [s.text for s in sections(study)[0]] == [s.text for s in first]
    opened = _opens(lambda: write_report(study, tmp_path / "study.html"))
    assert len(opened) == len(set(opened)) == len(list(study.rglob("items.jsonl")))


def test_each_runs_accuracy_on_a_cell_is_counted_once_per_report(study: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The accuracy table and the learning curves (their tables and their figure) read one count per run
    and condition; the cells across models are built once for every section that reads them."""
    counted: list[int] = []
    built: list[int] = []
    accuracy, cells = across.accuracy, across.cells

    def counting(outcome: NDArray[np.int8]) -> across.Accuracy:
        counted.append(len(outcome))
        return accuracy(outcome)

    def building(runs: Sequence[across.StudyRun]) -> dict[across.Cell, across.CellTable]:
        built.append(len(runs))
        return cells(runs)

    monkeypatch.setattr(across, "accuracy", counting)
    monkeypatch.setattr(across, "cells", building)
    write_report(study, tmp_path / "study.html", tmp_path / "tables")
    assert len(counted) == 4 * 2  # four runs (a, b, t@step1, t@step2) × two conditions; no language
    assert built == [4]
    text = (tmp_path / "tables" / "study.md").read_text(encoding="utf-8")
    assert "### t: nli, dap" in text and "| t@step2 | 2 |" in text  # the curves drawn from those counts


def test_a_section_is_one_registered_module_drawn_in_its_order(study: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The built-in sections in their documented order; one more registered at order 35 is drawn between the
    learning curves and the chosen comparisons, its findings said first."""
    from lingdiag.study import sections as study_sections
    from lingdiag.study.sections import STUDY_SECTIONS, Drawn, StudySection, ordered

    assert [s.anchor for s in ordered()] == [
        "study-grid", "study-accuracy", "study-curves", "study-compare", "study-adjacent", "study-mixed",
        "study-items", "study-irt", "study-agreement", "study-competence", "study-failed"]
    probe = StudySection("study-probe", "Probe", 35, lambda s: Drawn(f"{len(s.runs)} runs\n", found=["Probed."]))
    monkeypatch.setitem(STUDY_SECTIONS._factories, probe.anchor, probe)  # gone again after the test
    assert study_sections.register(probe) is probe
    found, _ = sections(study)
    anchors = [s.anchor for s in found]
    assert anchors.index("study-probe") == anchors.index("study-curves") + 1 == anchors.index("study-compare") - 1
    assert found[anchors.index("study-probe")].text == "4 runs\n" and "- Probed." in found[0].text

"""The fit where people read it: the study report's Items section (flagged items first, each linked
to its viewer page; the saved fit reused) and the viewer's difficulty and discrimination columns
(sorted, filtered, flagged only)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import stand_in, study_backend

from lingdiag.items.build import fit_and_write
from lingdiag.items.section import SAVED, run_params
from lingdiag.study.execute import run_study
from lingdiag.study.report import write_report
from lingdiag.study.schema import StudyFile
from lingdiag.view.app import PAGES, Viewer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"
HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("study")
    spec = StudyFile.model_validate({
        "name": "items-test", "base": tmp,
        "models": [*({"spec": s} for s in "abcdefg"), {"spec": "h", "name": HOSTILE}],
        "suites": [{"suite": str(EXAMPLES / "agreement-pairs.yaml"), "name": "pairs"}]})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LINGDIAG_CACHE", str(tmp / "cache"))
        run_study(spec, tmp / "out", models=stand_in(study_backend))
    return tmp / "out"


def test_the_report_fits_when_nothing_is_saved_and_links_flagged_items(study, tmp_path):
    write_report(study, tmp_path / "report.html", tmp_path / "tables")
    html = (tmp_path / "report.html").read_text()
    section = html[html.index('<section id="study-irt">'):]
    section = section[:section.index("</section>")]
    # 8 models: the 1PL, saying why; the flags' counts beside what chance gives; each item's text and gold.
    assert "Fitted for this report (1PL: 8 models, below the 30" in section
    assert "expected by chance with 8 models" in section, section
    links = re.findall(r'<a href="([^"]+)">', section)
    # Eight stand-ins: no item is flagged beyond chance, and the section says so rather than listing leads.
    assert ("<th>Text</th><th>Gold</th>" in section and links) or ("No item flagged" in section and not links)
    assert all(x.startswith("http://127.0.0.1:8765/items?id=0%2Fruns%2F") for x in links)
    assert not links or ("condition=simple%2Flingdiag" in links[0] and "&amp;text=" in links[0])
    assert HOSTILE not in html and "&lt;img src=x onerror=alert(1)&gt;" in section
    assert "## Items" in (tmp_path / "tables" / "study.md").read_text()


def test_the_saved_fit_is_reused_and_drives_the_viewer(study, tmp_path):
    built = fit_and_write([study], study / SAVED)
    write_report(study, tmp_path / "report.html")
    assert "The fit saved in items/ (1PL: 8 models" in (tmp_path / "report.html").read_text()
    (cell,) = built.fit.cells
    viewer = Viewer([study])
    run_id = next(i for i in viewer.catalog().runs if i.endswith("/a/pairs"))
    params = run_params(viewer.run(run_id).path)
    assert set(params) == {(cell.condition, i) for i in cell.item_ids}
    page = PAGES["/items"](viewer, {"id": run_id})
    assert "<th>Difficulty</th><th>Discrimination</th>" in page and 'id="irt"' in page
    values = re.findall(r'data-irt="discrimination"[^>]*>([^<]+)<', PAGES["/items"](
        viewer, {"id": run_id, "sort": "-discrimination"}))
    numbers = [float(v) for v in values if v != "—"]
    assert numbers == sorted(numbers, reverse=True) and values[:len(numbers)] == [f"{n:.2f}" for n in numbers]
    low = PAGES["/items"](viewer, {"id": run_id, "min_difficulty": "0"})
    assert all(float(v) >= 0 for v in re.findall(r'data-irt="difficulty">([^<]+)<', low))
    flagged = PAGES["/items"](viewer, {"id": run_id, "flagged": "1"})
    rows = re.findall(r"<tr class=\"item[^>]*>.*?</tr>", flagged)
    assert all("irt-flagged" in r for r in rows)  # none on 8 stand-ins: no flag beyond chance
    assert len(rows) == sum(bool(f) for f in cell.item_flags(built.fit.kind, built.fit.policy))


def test_a_run_outside_any_fit_shows_no_columns(tmp_path, runs):
    dirs, _, _ = runs
    page = PAGES["/items"](Viewer([dirs[0].parent]), {"id": "0/model00"})
    assert "Difficulty" not in page
    fit_and_write(dirs, dirs[0].parent / SAVED)
    page = PAGES["/items"](Viewer([dirs[0].parent]), {"id": "0/model00", "sort": "difficulty"})
    assert "<th>Difficulty</th>" in page

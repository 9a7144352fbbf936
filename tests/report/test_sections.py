"""The report's sections come from the ordered registry: the built-in ones in page order, and a section
added the documented way shows in the static report and on the viewer's run page, escaped."""

from __future__ import annotations

from pathlib import Path

import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_runs
from lingdiag.report.html import render_html
from lingdiag.report.page import Page
from lingdiag.report.sections import SECTIONS, Fragment, Link, ordered
from lingdiag.report.tables import tables
from lingdiag.view.app import Viewer


class Probe:
    title = "Probe"
    order = 35

    def applies_to(self, page: Page) -> bool:
        return bool(page.runs)

    def render(self, page: Page) -> list[Fragment]:
        from html import escape

        names = ", ".join(escape(r.model) for r in page.runs)
        return [Fragment(f'<section id="probe"><h2>Probe</h2><p>{names}</p></section>', (Link("probe", "Probe"),))]


def test_builtin_sections_in_page_order() -> None:
    assert [s.title for s in ordered()] == ["Summary", "Tables", "Suites", "Items", "How the answers were read",
                                          "Counts, intervals and provenance"]


def test_an_added_section_shows_in_the_report_and_the_viewer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = MockBackend(lambda r: "True", name="<i>mock</i>")
    evaluate(RunConfig(suite="imperfective", model=backend.name, dataset="builtin", axes={"strategy": ["zero-shot"]},
                       limit=4), backend, tmp_path / "runs" / "r")
    ordered()  # the built-in sections are loaded before the probe joins them
    monkeypatch.setitem(SECTIONS._factories, "probe", Probe())
    runs = load_runs([tmp_path / "runs" / "r"])
    page = render_html(tables(runs), runs)
    assert page.index('<section id="probe">') < page.index('<section id="items">')
    assert page.index('id="suite-imperfective"') < page.index('<section id="probe">')
    assert '<a href="#probe">Probe</a>' in page and "&lt;i&gt;mock&lt;/i&gt;" in page and "<i>mock" not in page
    viewer = Viewer([tmp_path / "runs"])
    run_page = viewer.report(viewer.run("0/r"))
    assert '<section id="probe">' in run_page and '<section id="items">' not in run_page  # items paged from disk

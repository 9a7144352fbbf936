"""``study report``: the study's findings, then its registered sections (``lingdiag.study.sections``: the
grid, models × conditions, learning curves, the comparisons the study file chose, adjacent tests, the
mixed model, items across models, the item model, agreement, competence against performance, what
failed) as Markdown, laid out before the run report's summary by ``lingdiag.report.html`` (one page
shell, one escaping), written as Markdown and LaTeX tables, or summarised on the terminal.

The study is read once (``lingdiag.study.loaded``: the runs streamed into their summaries, so a study of
forty models × 100,000 items is reported in minutes, ``bench/study_scale_report.py``); every section
draws from it, and the report says first what the sections found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from lingdiag.errors import ConfigError
from lingdiag.figures import Figure
from lingdiag.io.atomic import make_dir, write_atomic
from lingdiag.io.limits import Limit
from lingdiag.io.paths import portable
from lingdiag.reading import load_run
from lingdiag.report.export import markdown_to_latex
from lingdiag.report.html import render_html
from lingdiag.report.markup import figure_html, markdown_to_html
from lingdiag.report.sections import Fragment, Link, wrap
from lingdiag.report.tables import tables
from lingdiag.rundir.status import Status
from lingdiag.study.loaded import Study, load
from lingdiag.study.sections import Drawn, missing_line, ordered

RUN_SECTIONS_RECORDS = Limit("LINGDIAG_STUDY_HTML_RECORDS", 200_000, "records in the run sections of a study's HTML")
"""Above this, the HTML report leaves out the run report's own sections (its item browser carries every
record in the page); ``lingdiag view`` pages them instead."""


@dataclass(frozen=True)
class Section:
    """A section of the study report, put before the run report's sections: its markdown (escaped when
    rendered) and its figures (drawn as data URIs), in the run report's page shell.
    """

    anchor: str
    title: str
    text: str
    figures: Sequence[Figure] = field(default_factory=tuple)
    html: str = ""
    """The section's own HTML (every outside text escaped) where it is more than its markdown (links)."""

    def fragment(self) -> Fragment:
        """The section as the page shell takes it."""
        shown = "".join(figure_html(f, ()) for f in self.figures)
        inner = self.html or f'{markdown_to_html(self.text)}<div class="figures">{shown}</div>'
        return Fragment(wrap(escape(self.anchor), escape(self.title), inner), (Link(self.anchor, self.title),))


def findings(study: Study, drawn: Sequence[Drawn]) -> list[str]:
    """What the report says first: how many runs are done, then each section's findings in order."""
    done = sum(r.status == Status.DONE for r in study.grid)
    found = [f"{done} of {len(study.grid)} runs done."]
    if study.missing:
        found.append(f"Planned but not measured, in no number below: {missing_line(study.missing)}; why: see 'Runs'.")
    return [*found, *(f for d in drawn for f in d.found)]


def sections_of(study: Study) -> list[Section]:
    """The study report's sections, findings first."""
    shown = ordered()
    drawn = [s.draw(study) for s in shown]
    here = [study.directory]  # what the study directory holds is named relative to it; no other path of this machine

    return [Section("study-findings", "Findings",
                    portable("\n".join(f"- {f}" for f in findings(study, drawn)) + "\n", here)),
            *(Section(s.anchor, s.title, portable(d.text, here), d.figures, portable(d.html, here))
              for s, d in zip(shown, drawn, strict=True))]


def sections(out: Path, *, seed: int = 0) -> tuple[list[Section], Study]:
    """The study report's sections, findings first, and the study they read."""
    study = load(out, seed=seed)
    return sections_of(study), study


def summary_text(study: Study, found: Sequence[Section]) -> str:
    """The report on a terminal: the findings, the runs per state and where the full report goes."""
    states: dict[str, int] = {}
    for r in study.grid:
        states[r.status] = states.get(r.status, 0) + 1
    return (f"{study.state.name}: " + ", ".join(f"{n} {s}" for s, n in states.items()) + "\n"
            + found[0].text
            + "The whole report: --html FILE (one page) and/or --tables DIR (study.md, study.tex); "
              "`lingdiag view DIR` browses it.\n")


def write_report(out: Path, html: Path | None = None, tables_dir: Path | None = None, *, seed: int = 0) -> list[Path]:
    """Write the HTML page and/or the Markdown and LaTeX tables of the study in ``out``; the files written."""
    if html is not None and Path(html).is_dir():
        raise ConfigError(f"--html {html}: a directory; give a file name such as {Path(html) / 'study.html'}")
    found, study = sections(out, seed=seed)
    written = []
    if html is not None:
        records = study.records
        leading = [s.fragment() for s in found]
        if records <= RUN_SECTIONS_RECORDS.value:
            loaded = [load_run(s.entry.directory(out)) for s in study.runs]
        else:
            loaded = []
            note = (f"The runs' own report sections are left out: the study holds {records} records (their item "
                    f"browser would carry every one in this page); `lingdiag view {out.name}` shows them. "
                    f"{RUN_SECTIONS_RECORDS.how_to_raise()}.")
            leading.append(Section("study-runs", "The runs' own sections", note + "\n").fragment())
        families = {s.run.model: s.entry.model.family for s in study.runs}
        make_dir(Path(html).parent)
        write_atomic(html, render_html(tables(loaded), loaded, families, leading,
                                       f"lingdiag study: {study.state.name}"))
        written.append(Path(html))
    if tables_dir is not None:
        make_dir(tables_dir)
        text = "\n".join(f"## {s.title}\n\n{s.text}" for s in found)
        for name, body in (("study.md", text), ("study.tex", markdown_to_latex(text))):
            write_atomic(Path(tables_dir) / name, body)
            written.append(Path(tables_dir) / name)
    return written

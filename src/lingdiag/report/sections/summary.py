"""The summary: each suite's headline metric per model, the supported differences, the conditions not
interpretable, the excluded items, and each suite's headline table beside its main figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from lingdiag.errors import LingdiagError
from lingdiag.reading import LoadedRun
from lingdiag.report.findings import Degenerate, differences, headline
from lingdiag.report.markup import anchor, figure_html, note
from lingdiag.report.page import Page
from lingdiag.report.sections import SECTIONS, Fragment, Link


def _glance(runs: Sequence[LoadedRun], flagged: Sequence[Degenerate]) -> str:
    """Each suite's headline metric per model and condition, in one small table."""
    rows = []
    suites = {run.suite_title: run.suite for run in runs}
    for suite, models in headline(runs, flagged).items():
        spec = suites[suite]
        key = spec.headline_label or spec.headline or "headline table below"
        for model, cells in models.items():
            shown = " · ".join(f"{c} {v}" for c, v in cells)
            rows.append(f'<tr><td><a href="#{anchor(suite)}">{escape(suite)}</a></td><td>{escape(key)}</td>'
                        f"<td>{escape(model)}</td><td>{escape(shown)}</td></tr>")
    return ('<table class="glance"><thead><tr><th>Suite</th><th>Headline metric</th><th>Model</th>'
            "<th>By condition</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def _findings(page: Page) -> list[str]:
    runs, flagged = page.runs, page.flagged
    parts = []
    try:
        found = differences(runs, flagged)
    except LingdiagError as e:
        parts.append(note(f"differences not tested: {e}"))
        found = []
    parts.append("<h3 id=\"differences\">Statistically supported differences</h3>")
    parts.append("<ul>" + "".join(f"<li>{escape(f.sentence)}</li>" for f in found) + "</ul>" if found else
                 "<p>None at p &lt; 0.05 (paired tests over models per condition, Holm-adjusted; "
                 "competence against performance where a run holds both).</p>")
    parts.append('<h3 id="not-interpretable">Not interpretable</h3>')
    parts.append("<ul>" + "".join(f"<li>{escape(d.suite)}: {escape(d.model)}, {escape(d.condition)}: "
                                  f"{escape(d.reason)}</li>" for d in flagged) + "</ul>" if flagged else
                 "<p>Every condition is interpretable (under 50% unparsed or failed, more than one label).</p>")
    excluded = [(run, e) for run in runs for e in run.meta.excluded or ()]
    if excluded:  # items of the data itself that no model could be scored on
        parts.append(f"<p>Items of the data excluded, never scored ({len(excluded)}):</p><ul>"
                     + "".join(f'<li dir="auto">{escape(run.suite_title)} ({escape(run.name)}): '
                               f"{escape(e.item_id)}: {escape(e.reason)}</li>" for run, e in excluded) + "</ul>")
    return parts


class Summary:
    """What the report says first."""

    title = "Summary"
    order = 10

    def applies_to(self, page: Page) -> bool:
        """Always."""
        return True

    def render(self, page: Page) -> list[Fragment]:
        """The summary section."""
        parts = ['<section id="summary"><h2>Summary</h2>', _glance(page.runs, page.flagged), *_findings(page)]
        for s in page.suites:
            figure = figure_html(s.figures[0], s.flags) if s.figures else s.note
            parts.append(f'<div class="side" data-suite="{escape(s.name)}"><div>{s.html(s.headline)}</div>'
                         f"{figure}</div>")
        nav = (Link("summary", self.title), Link("differences", "Differences", sub=True),
               Link("not-interpretable", "Not interpretable", sub=True))
        return [Fragment("\n".join(parts) + "</section>", nav)]


SECTIONS.register("summary")(Summary())

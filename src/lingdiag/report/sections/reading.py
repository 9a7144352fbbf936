"""How the answers were read: the unparsed share per reason the answer reader refused them, and a
judge model's readings against the rules' (``--reader judge:SPEC``), per run and condition.
"""

from __future__ import annotations

from collections.abc import Sequence

from lingdiag.metrics import reading
from lingdiag.reading import LoadedRun
from lingdiag.records import ItemRecord
from lingdiag.report.markup import table_html
from lingdiag.report.page import Page
from lingdiag.report.sections import SECTIONS, Fragment, Link, wrap


def _by_condition(run: LoadedRun) -> dict[str, list[ItemRecord]]:
    out: dict[str, list[ItemRecord]] = {}
    for r in run.records:
        out.setdefault(r.condition, []).append(r)
    return out


def _unparsed(runs: Sequence[LoadedRun]) -> str:
    rows = []
    for run in runs:
        for condition, records in _by_condition(run).items():
            found = reading.reasons(records)
            for reason, n in found.items():
                rows.append([run.name, run.model, condition, reason, n, f"{n / len(records):.1%}"])
    if not rows:
        return "<p>Every answer was read.</p>"
    return table_html(["Run", "Model", "Condition", "Reason (lingdiag.parse.reader)", "Unparsed", "Share of items"],
                      rows)


def _judged(runs: Sequence[LoadedRun]) -> str:
    rows = []
    for run in runs:
        for condition, records in _by_condition(run).items():
            a = reading.agreement(records)
            if a is not None:
                rate = a.rate
                rows.append([run.name, run.model, condition, a.model, a.read, a.judged, a.both, a.agree,
                             "" if rate is None else f"{rate:.1%}", a.rules_only])
    if not rows:
        return ""
    return ("<h3>Read by a judge model</h3><p>Judged labels are the judge's where the rules left an answer "
            "unparsed; where the rules read one, it stays the label and the judge's reading measures their "
            "agreement.</p>" + table_html(["Run", "Model", "Condition", "Judge", "Read", "Labels judged",
                                           "Read by both", "Same label", "Agreement", "Rules only"], rows))


class Reading:
    """The unparsed answers by reason, and a judge's readings."""

    title = "How the answers were read"
    order = 45

    def applies_to(self, page: Page) -> bool:
        """Where a run has an unparsed answer or a judge's reading."""
        return any(reading.reasons(run.records) or reading.agreement(run.records) for run in page.runs)

    def render(self, page: Page) -> list[Fragment]:
        """The two tables."""
        inner = _unparsed(page.runs) + _judged(page.runs)
        return [Fragment(wrap("reading", self.title, inner), (Link("reading", "How the answers were read"),))]


SECTIONS.register("reading")(Reading())

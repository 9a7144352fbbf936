"""One section per suite: its tables after the headline, its other figures, its analyses."""

from __future__ import annotations

from html import escape

from lingdiag.report.markup import anchor, figure_html
from lingdiag.report.page import Page
from lingdiag.report.sections import SECTIONS, Fragment, Link


class Suites:
    """Each suite's own section."""

    title = "Suites"
    order = 30

    def applies_to(self, page: Page) -> bool:
        """Always (no fragment where there is no run)."""
        return True

    def render(self, page: Page) -> list[Fragment]:
        """One fragment per suite, in the order of the runs."""
        return [Fragment(f'<section id="{anchor(s.name)}"><h2>{escape(s.name)}</h2>{s.html(s.rest)}'
                         f'<div class="figures" data-suite="{escape(s.name)}">'
                         f'{"".join(figure_html(f, s.flags) for f in s.more())}</div>{s.analyses}</section>',
                         (Link(anchor(s.name), s.name),))
                for s in page.suites]


SECTIONS.register("suites")(Suites())

"""Tables a caller built otherwise than ``report.tables.tables(runs)``, shown as given before the suites."""

from __future__ import annotations

from lingdiag.report.markup import markdown_to_html
from lingdiag.report.page import Page
from lingdiag.report.sections import SECTIONS, Fragment, Link, wrap


class Given:
    """The caller's own tables."""

    title = "Tables"
    order = 20

    def applies_to(self, page: Page) -> bool:
        """Where the page's text is not the suites' own tables."""
        return page.given

    def render(self, page: Page) -> list[Fragment]:
        """The tables as given."""
        return [Fragment(wrap("tables", self.title, markdown_to_html(page.text, page.flagged)),
                         (Link("tables", self.title),))]


SECTIONS.register("tables")(Given())

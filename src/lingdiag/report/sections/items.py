"""The item browser of a static report (:mod:`lingdiag.report.browser`); ``lingdiag view`` pages the
items from disk on its own page instead.
"""

from __future__ import annotations

from lingdiag.report import browser
from lingdiag.report.page import Page
from lingdiag.report.sections import SECTIONS, Fragment, Link


class Items:
    """Every record, filterable in the page."""

    title = "Items"
    order = 40

    def applies_to(self, page: Page) -> bool:
        """In a static report only."""
        return page.static

    def render(self, page: Page) -> list[Fragment]:
        """The browser with its data block and script (allowed by hash)."""
        html = "\n".join(['<section id="items"><h2>Items</h2>', browser.section(page.runs), "</section>"])
        return [Fragment(html, (Link("items", self.title),), (browser.script_hash(),))]


SECTIONS.register("items")(Items())

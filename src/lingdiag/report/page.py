"""What every section of a report page reads, computed once: the runs, their rows by suite, the
degenerate conditions, and each suite's tables split into the headline and the rest with its figures.

Figures and analyses come from each suite's ``Suite.figures`` and ``Suite.analyses``; this module
knows no suite.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from lingdiag import figures as figs
from lingdiag.errors import LingdiagError
from lingdiag.figures import Figure
from lingdiag.reading import LoadedRun
from lingdiag.records import ResultRow
from lingdiag.report import markdown
from lingdiag.report.budget import budget_figure
from lingdiag.report.findings import Degenerate, degenerate
from lingdiag.report.markup import block_html, markdown_to_html, note
from lingdiag.report.scaling import scaling_figure
from lingdiag.report.tables import rows_by_suite, suite_tables, suites_of
from lingdiag.suite import Suite


def _drawn(name: str, suite: Suite, rows: Sequence[Any], colours: figs.ModelColours) -> list[Figure] | str:
    """The suite's figures, or a note saying why there are none."""
    draw = suite.figures
    if draw is None:
        return ""
    if not figs.available():
        return note(f"{name}: figures need matplotlib: pip install 'lingdiag[plots]'")
    try:
        return draw(rows, colours)
    except LingdiagError as e:
        return note(f"{name}: no figures: {e}")


def _analyses(name: str, suite: Suite, rows: Sequence[Any], flags: Sequence[Degenerate]) -> str:
    analyse = suite.analyses
    if analyse is None:
        return ""
    try:
        return markdown_to_html(analyse(rows), flags)
    except LingdiagError as e:
        return note(f"{name}: analyses unavailable: {e}")


class SuiteParts:
    """One suite's parts of the page: its tables split into the headline and the rest, its figures."""

    def __init__(self, name: str, suite: Suite, text: str, rows: Sequence[Any], flagged: Sequence[Degenerate],
                 colours: figs.ModelColours, scaling: Figure | None = None) -> None:
        self.name = name
        """The suite as the report names it (with its file's version where two are shown)."""
        self.scaling = scaling
        """The headline metric against model size (:mod:`.scaling`), where the runs have two sizes."""
        self.budget = budget_figure(name, suite.headline, rows, colours) if figs.available() \
            else None
        """The headline metric against the thinking budget (:mod:`.budget`), where the rows sweep one."""
        self.flags = [d for d in flagged if d.suite == name]
        blocks = list(markdown.blocks(text))
        first = next((k for k, b in enumerate(blocks) if isinstance(b, markdown.Table)), len(blocks) - 1)
        self.headline = blocks[:first + 1]
        """Everything up to the first table: the paper's headline table with its heading and notes."""
        self.rest = blocks[first + 1:]
        drawn = _drawn(name, suite, rows, colours)
        self.note = drawn if isinstance(drawn, str) else ""
        self.figures = drawn if isinstance(drawn, list) else []
        self.analyses = _analyses(name, suite, rows, self.flags)

    def more(self) -> list[Figure]:
        """The figures of the suite's own section: all but the summary's, then the scaling and budget figures."""
        return [*self.figures[1:], *(f for f in (self.scaling, self.budget) if f)]

    def html(self, blocks: Sequence[markdown.Block]) -> str:
        """``blocks`` as HTML, this suite's degenerate rows greyed."""
        return "\n".join(block_html(b, self.flags) for b in blocks)


@dataclass(frozen=True)
class Page:
    """The input of every report section (:mod:`lingdiag.report.sections`), each part computed once."""

    runs: Sequence[LoadedRun]
    """The runs, in the order given."""
    text: str
    """The markdown tables (``report.tables.tables``), or tables a caller built otherwise."""
    families: Mapping[str, str] = field(default_factory=dict)
    """Model → family for the scaling figure (others: from the model's config)."""
    static: bool = True
    """A self-contained file (the item browser's records travel in the page); False in ``lingdiag view``,
    which pages items from disk instead."""

    @cached_property
    def by_suite(self) -> dict[str, list[ResultRow]]:
        """Suite → the rows of all its runs."""
        return rows_by_suite(self.runs)

    @cached_property
    def suite_text(self) -> dict[str, str]:
        """Suite → its markdown section."""
        return suite_tables(self.runs)

    @cached_property
    def flagged(self) -> list[Degenerate]:
        """The conditions not interpretable (greyed wherever shown)."""
        return degenerate(self.runs)

    @cached_property
    def given(self) -> bool:
        """Whether :attr:`text` is other than the suites' own tables (shown as given, before the suites)."""
        return "\n".join(self.suite_text.values()) != self.text

    @cached_property
    def colours(self) -> figs.ModelColours:
        """One colour per model (as the rows name it) across every figure of the page."""
        return figs.ModelColours.of(r.model for rows in self.by_suite.values() for r in rows)

    @cached_property
    def suites(self) -> list[SuiteParts]:
        """Each suite's parts, in the order the runs were given."""
        scaling = figs.available()
        suites = suites_of(self.runs)
        return [SuiteParts(name, suites[name], self.suite_text[name], self.by_suite[name], self.flagged, self.colours,
                           scaling_figure(name, self.runs, self.families) if scaling else None)
                for name in self.by_suite]

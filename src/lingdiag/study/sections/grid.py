"""The study report's "Runs" section: the grid of runs, each with its state, items done and reason."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lingdiag.io.markdown import markdown_table
from lingdiag.study.sections import Drawn, StudySection, register
from lingdiag.study.status import GridRow

if TYPE_CHECKING:
    from lingdiag.study.loaded import Study


def grid_text(rows: Sequence[GridRow]) -> str:
    """The grid of runs as a table."""
    body = [[r.model, r.suite, r.status, f"{r.items_done}/{r.items_total}", r.attempts, r.reason or ""]
            for r in rows]
    return markdown_table(["Model", "Suite", "Status", "Items", "Failed attempts", "Reason"], body)


def _grid(study: Study) -> Drawn:
    return Drawn(grid_text(study.grid))


register(StudySection("study-grid", "Runs", 10, _grid))

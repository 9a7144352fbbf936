"""The study report's "Not interpretable or failed" section: runs not done (with why), runs that could not
be read, conditions not interpretable and items the backend failed on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lingdiag.rundir.status import Status
from lingdiag.study.across import StudyRun
from lingdiag.study.sections import Drawn, StudySection, register
from lingdiag.study.status import GridRow

if TYPE_CHECKING:
    from lingdiag.study.loaded import Study


def failures_text(rows: Sequence[GridRow], runs: Sequence[StudyRun], unreadable: Sequence[str]) -> str:
    """Runs not done (with why), runs that could not be read, and conditions not interpretable."""
    lines = [f"- {r.model} × {r.suite}: {r.status}, {r.items_done}/{r.items_total} items"
             + (f" ({r.reason})" if r.reason else "") for r in rows if r.status != Status.DONE]
    lines += [f"- unreadable: {u}" for u in unreadable]
    lines += [f"- {s.label} × {s.entry.suite}, {c}: not interpretable ({why})"
              for s in runs for c, why in s.summary.not_interpretable.items()]
    lines += [f"- {s.label} × {s.entry.suite}: {n} item(s) failed in the backend"
              for s in runs if (n := int(s.summary.columns.error.sum()))]
    return "\n".join(lines) + "\n" if lines else "Every run finished and every condition is interpretable.\n"


def _failures(study: Study) -> Drawn:
    text = failures_text(study.grid, study.runs, study.unreadable)
    interpretable = text.startswith("Every run finished")
    return Drawn(text, found=[] if interpretable else
                 ["Some runs failed, are unfinished or not interpretable: see 'Not interpretable or failed'."])


register(StudySection("study-failed", "Not interpretable or failed", 110, _failures))

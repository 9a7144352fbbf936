"""The study report's "Competence and performance" section: each model's label log-likelihood against its
generated label, where a suite ran both (``lingdiag.analysis.competence``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from lingdiag.analysis import competence
from lingdiag.errors import LingdiagError
from lingdiag.study.sections import Drawn, StudySection, register

if TYPE_CHECKING:
    from lingdiag.study.loaded import Study


def _competence(study: Study) -> Drawn:
    """Competence against performance per model, smallest model first, where a suite has both."""
    rows = [replace(r, model=s.label) for s in study.runs for r in s.run.rows]
    try:
        joined = competence.competence_performance(rows)
    except LingdiagError as e:
        return Drawn(f"Not joined: {e}\n")
    return Drawn(competence.to_markdown(joined) if joined else
                 "No suite of the study ran both a generated and a log-likelihood (competence) condition.\n")


register(StudySection("study-competence", "Competence and performance", 100, _competence))

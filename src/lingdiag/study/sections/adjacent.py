"""The study report's "Adjacent sizes and checkpoints" section: paired tests between neighbouring sizes
of a family and checkpoints of a model (``across.adjacent``), the larger or later one A.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lingdiag.errors import LingdiagError
from lingdiag.study import across
from lingdiag.study.sections import Drawn, StudySection, register
from lingdiag.study.sections.comparisons import differs, method, paired_table

if TYPE_CHECKING:
    from lingdiag.study.loaded import Study


def _adjacent(study: Study) -> Drawn:
    """The paired tests between neighbours and the differences they support."""
    try:
        tests, skipped = across.adjacent(study.runs, study.missing, study.tables, seed=study.seed)
    except LingdiagError as e:
        return Drawn(f"Not tested: {e}\n")
    text = paired_table(tests, "Between") if tests else "No neighbouring sizes or checkpoints.\n"
    text += method(" Neighbours: sizes of one family and checkpoints of one model, in order, among the runs "
                    "measured (a planned one between two of them that was not measured is named beside the kind); "
                    "A is the larger or later one, so A − B is what size or training changed.")
    return Drawn(text + "".join(f"\n- not tested: {s}" for s in skipped),
                 found=[differs(t) for t in tests if t.p_table < 0.05])


register(StudySection("study-adjacent", "Adjacent sizes and checkpoints", 50, _adjacent))

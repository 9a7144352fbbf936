"""The study report's "Items" section: the item model fitted over the done runs' answers
(``lingdiag.items.section``), or where to fit it above :data:`ITEM_FIT_RECORDS` records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lingdiag.io.limits import Limit
from lingdiag.study.sections import Drawn, StudySection, register

if TYPE_CHECKING:
    from lingdiag.study.loaded import Study

ITEM_FIT_RECORDS = Limit("LINGDIAG_STUDY_IRT_RECORDS", 2_000_000, "records the study report's item model reads")
"""Above this, the report's Items section does not fit the item model itself (it holds every answer) and
points to ``lingdiag items fit``."""

def _irt(study: Study) -> Drawn:
    """The item model's section (``lingdiag.items.section``): it reads the done runs' records."""
    records = study.records
    if records > ITEM_FIT_RECORDS.value:
        text = (f"No item model here: the study holds {records} records; fit it with `lingdiag items fit "
                f"{study.directory.name} --out {study.directory.name}/items`. {ITEM_FIT_RECORDS.how_to_raise()}.")
        return Drawn(text + "\n")
    from lingdiag.items.matrix import from_outcomes  # scipy: not at `lingdiag`'s start
    from lingdiag.items.section import study_section
    from lingdiag.reading.summary import item_table

    # The fit reads the summaries' outcomes (one byte per answer), and the items' text, gold and human
    # ratings from the item table of one run per suite (its summary's: no record is opened while it is current).
    where = {s.label: str(s.entry.directory(study.directory)) for s in study.runs}
    cells = [from_outcomes(cell[0], cell[1], t.models, [study.items[int(k)] for k in t.items], t.outcome,
                           [where[m] for m in t.models]) for cell, t in study.tables.items()]
    first = {s.entry.suite: s for s in reversed(study.runs)}
    done = study_section(study.directory, cells, [item_table(s.summary.run) for s in first.values()])
    return Drawn(done.text, html=done.html)


register(StudySection("study-irt", "Items", 80, _irt))

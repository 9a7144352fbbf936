"""The study report's "Chosen comparisons" section: the pairs the study file names (``compare:``), each
tested as ``lingdiag compare A B`` on every cell both ran; and the paired-test table, method line and
finding the adjacent section shares.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lingdiag.analysis.compare import METHODS
from lingdiag.io.markdown import markdown_table
from lingdiag.study import across
from lingdiag.study.across import DIRECTION, PAIR_FAMILY, TABLE_FAMILY, Pair, Paired
from lingdiag.study.sections import Drawn, StudySection, register, some

if TYPE_CHECKING:
    from lingdiag.study.loaded import Study


def paired_table(tests: Sequence[Paired], first: str) -> str:
    """Paired tests as one table: A − B with its interval, the discordant items, McNemar's p and both Holm p."""
    body = [[t.name or t.kind + (f" (not measured between: {some(t.between)})" if t.between else ""), t.cell[0],
             t.cell[1], t.a, t.b, t.test.n, f"{t.test.acc_a:.3f}", f"{t.test.acc_b:.3f}",
             f"{t.test.diff:+.3f} [{t.test.ci95[0]:+.3f}, {t.test.ci95[1]:+.3f}]", t.test.only_a, t.test.only_b,
             f"{t.test.p:.3g}", f"{t.test.p_holm:.3g}", f"{t.p_table:.3g}"] for t in tests]
    return markdown_table([first, "Suite", "Condition", "A", "B", "n", "Acc A", "Acc B", "A − B [95% CI]", "A only",
                           "B only", "McNemar p", "Holm p (pair)", "Holm p (table)"], body)


def method(extra: str = "") -> str:
    """The line under a paired-test table naming its direction, interval, test and both Holm families."""
    return (f"\n{DIRECTION}; 95% CI: {METHODS['ci95']}; McNemar p: exact. Holm p (pair): {PAIR_FAMILY}; "
            f"Holm p (table): {TABLE_FAMILY}.{extra}\n")


def differs(t: Paired) -> str:
    """The finding a paired test supports (under 0.05 after Holm over the table), in one sentence."""
    return (f"{t.a} differs from {t.b} on {t.cell[0]} {t.cell[1]} (accuracy {t.test.acc_a:.2f} vs "
            f"{t.test.acc_b:.2f}, A − B {t.test.diff:+.2f}, McNemar p = {t.p_table:.3g} after Holm over the table)"
            + (f"; {some(t.between)} between them not measured, so the change may lie at any of them"
               if t.between else "") + ".")


def _chosen(study: Study) -> Drawn:
    """The comparisons the study file names (``compare:``)."""
    pairs = [Pair("chosen", a, b, c.name) for c in study.state.compare for a in c.a for b in c.b]
    if not pairs:
        return Drawn("The study file names no comparison (`compare: [[A, B], …]` by the models' study names).\n")
    tests, skipped = across.paired_tests(study.tables, pairs, seed=study.seed)
    missing = [f"{p.a} vs {p.b}" for p in pairs if not any(t.a == p.a and t.b == p.b for t in tests)]
    text = paired_table(tests, "Comparison") if tests else "No comparison could be tested.\n"
    text += method(" Each row is the same test, with the same numbers, as `lingdiag compare A B` on the two runs.")
    text += "".join(f"\n- not tested: {s}" for s in skipped)
    text += "".join(f"\n- no cell both ran: {m}" for m in missing)
    return Drawn(text, found=[differs(t) for t in tests if t.p_table < 0.05])


register(StudySection("study-compare", "Chosen comparisons", 40, _chosen))

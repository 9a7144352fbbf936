"""Table 3 (rows: strategy × model), then Table 6 and the per-class Tables 7-18."""

from __future__ import annotations

from collections.abc import Sequence

from lingdiag.io.markdown import markdown_table
from lingdiag.metrics.core import UNPARSED_RATE, N
from lingdiag.records import ResultRow
from lingdiag.suites.imperfective.data import TELIC_CLASSES
from lingdiag.suites.imperfective.metrics import (
    ACC,
    BY_CLASS,
    CLASS_METRICS,
    DELTA_AA,
    FALSE_RATE_C,
    GROUPS,
    TBR_C,
    of,
)
from lingdiag.suites.imperfective.prompts import SOURCES, STRATEGIES


def prompt_source(row: ResultRow) -> str:
    """The prompt texts ``row`` was run with; runs made before the option existed used ``paper``."""
    return str(row.axes.get("prompt_source", "paper"))


def table(rows: Sequence[ResultRow]) -> str:
    """Table 3 (rows: strategy × model), then Table 6 and the per-class Tables 7-18.

    A header line names the prompt texts (authors' ``run_inference.py`` or Appendix B); when
    the rows mix both, each row's prompt cell names its source too.
    """
    order = {s: k for k, s in enumerate(STRATEGIES)}
    rows = sorted(rows, key=lambda r: (order.get(r.condition, 99), prompt_source(r), r.model))
    sources = sorted({prompt_source(r) for r in rows})
    mixed = len(sources) > 1

    def prompt(r: ResultRow) -> str:
        return f"{r.condition} ({prompt_source(r)})" if mixed else r.condition

    main = markdown_table(
        ["Prompt", "Model", "Acc A (↑)", "Acc B (↑)", "Acc C (↑)", "Acc D (↑)", "TBR_C (↓)", "Δ_AA (↑)",
         "\"False\" rate C", "Unparsed", "N"],
        [[prompt(r), r.model, *(of(r)[ACC[g]] for g in GROUPS), of(r)[TBR_C], of(r)[DELTA_AA],
          of(r)[FALSE_RATE_C], of(r).get(UNPARSED_RATE), of(r).get(N)] for r in rows])
    per_class = markdown_table(
        ["Prompt", "Model", "Metric", *[k.replace("_", " ") for k in TELIC_CLASSES]],
        [[prompt(r), r.model, key.replace("_", " "), *[of(r)[BY_CLASS][key].get(k) for k in TELIC_CLASSES]]
         for r in rows for key in CLASS_METRICS])
    named = ", ".join(f"{s} ({SOURCES.get(s, '?')})" for s in sources)
    return ("## ImperfectiveNLI (Table 3 layout)\n\n" + f"Prompts: {named}\n\n" + main +
            "\n## Telic verb classes (Appendix E, Tables 7-18 layout)\n\n" + per_class)

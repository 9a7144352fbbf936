"""Exp 1 vs Exp 2 (Tables 1, 4, 6), per label, and per construction pair (Figure 1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lingdiag.analysis.after_thinking import AXIS as AFTER_THINKING
from lingdiag.analysis.thinking import AXIS as THINKING
from lingdiag.io.markdown import markdown_table
from lingdiag.metrics.core import UNPARSED_RATE, N
from lingdiag.records import (
    UNPARSED,
    ResultRow,
)
from lingdiag.suites.cxnli import data
from lingdiag.suites.cxnli.authors import VARIANTS as AUTHORS_VARIANTS
from lingdiag.suites.cxnli.files import SETTINGS
from lingdiag.suites.cxnli.metrics import (
    ACCURACY,
    BY_CONSTRUCTION,
    BY_LABEL,
    F1_MACRO,
    HUMAN_AGREEMENT,
    MAJORITY,
    PREDICTED,
    of,
)
from lingdiag.suites.cxnli.prompts import VARIANTS

_VARIANTS = tuple(dict.fromkeys((*VARIANTS, *AUTHORS_VARIANTS)))


def _order(axes: Mapping[str, Any]) -> tuple[int, int, str, str]:
    setting, variant = str(axes.get("setting")), str(axes.get("variant")).rpartition(":")[2]
    return (SETTINGS.index(setting) if setting in SETTINGS else 99,
            _VARIANTS.index(variant) if variant in _VARIANTS else 99, str(axes.get("variant")), str(axes.get("cot")))


def _source(axes: Mapping[str, Any]) -> str:
    # Runs from before the option used this project's prompts.
    return str(axes.get("prompt_source", "paper"))


def table(rows: Sequence[ResultRow]) -> str:
    """Exp 1 vs Exp 2 with human agreement (Tables 1, 4, 6), per-label scores, and accuracy
    per construction pair (Figure 1). The header names the prompt source; with both sources
    in one table, each variant is prefixed by its source.
    """
    sources = sorted({_source(r.axes) for r in rows})

    def variant(a: Mapping[str, Any]) -> str:
        name = str(a.get("variant")) if len(sources) == 1 else f"{_source(a)}:{a.get('variant')}"
        # A competence (log-likelihood) condition is its own row beside its prompted twin, and one
        # scored after the model's replayed thinking its own row beside that; so is each thinking setting.
        name = f"{name} ({a['scoring']})" if "scoring" in a else name
        name = f"{name} thinking {a[THINKING]}" if THINKING in a else name
        return f"{name} after {a[AFTER_THINKING]}" if AFTER_THINKING in a else name

    cells: dict[tuple[str, str, str, str], dict[str, Mapping[str, Any]]] = {}
    for r in rows:
        a = r.axes
        cells.setdefault((r.model, str(a.get("setting")), variant(a), str(a.get("cot"))), {})[
            str(a.get("exp"))] = r.metrics
    keys = sorted(cells, key=lambda k: (_order({"setting": k[1], "variant": k[2], "cot": k[3]}), k[0]))

    def get(k: tuple[str, str, str, str], exp: str, field: str) -> Any:
        return cells[k].get(exp, {}).get(field)

    def drop(k: tuple[str, str, str, str]) -> float | None:
        one, two = get(k, "1", ACCURACY), get(k, "2", ACCURACY)
        return one - two if one is not None and two is not None else None

    main = markdown_table(
        ["Model", "Setting", "Variant", "CoT", "Exp 1 acc", "Exp 2 acc", "Drop", "Human Exp 1", "Human Exp 2",
         "Majority 1", "Majority 2", "Unparsed 1", "Unparsed 2", "N 1", "N 2"],
        [[k[0], k[1], k[2], k[3], get(k, "1", ACCURACY), get(k, "2", ACCURACY), drop(k),
          HUMAN_AGREEMENT["1"], HUMAN_AGREEMENT["2"], get(k, "1", MAJORITY),
          get(k, "2", MAJORITY), get(k, "1", UNPARSED_RATE), get(k, "2", UNPARSED_RATE),
          get(k, "1", N), get(k, "2", N)] for k in keys])
    ordered = sorted(rows, key=lambda r: (str(r.axes.get("exp")), _order(r.axes), r.model))
    per_label = markdown_table(
        ["Model", "Condition", "Acc", "Acc E", "Acc N", "Acc C", "F1 E", "F1 N", "F1 C", "Macro-F1",
         "Pred E", "Pred N", "Pred C", "Unparsed", "N"],
        [[r.model, r.condition if len(sources) == 1 else f"{_source(r.axes)}:{r.condition}", of(r)[ACCURACY],
          *(of(r)[BY_LABEL][lab]["accuracy"] for lab in data.LABELS),
          *(of(r)[BY_LABEL][lab]["f1"] for lab in data.LABELS), of(r)[F1_MACRO],
          *(of(r)[PREDICTED][lab] for lab in data.LABELS), of(r)[PREDICTED][UNPARSED], of(r).get(N)]
         for r in ordered])
    schemas = [c.name for c in data.CONSTRUCTIONS.values() if c.exp == "1"]
    per_cxn = markdown_table(
        ["Model", "Setting", "Variant", "CoT", "Exp 1 construction", "Acc", "Exp 2 construction", "Acc"],
        [[k[0], k[1], k[2], k[3], s, get(k, "1", BY_CONSTRUCTION) and get(k, "1", BY_CONSTRUCTION).get(s),
          data.COUNTERPART.get(s, "–"),
          get(k, "2", BY_CONSTRUCTION) and get(k, "2", BY_CONSTRUCTION).get(data.COUNTERPART.get(s, ""))]
         for k in keys for s in schemas])
    return (f"## CxNLI: Exp 1 vs Exp 2 (prompts: {', '.join(sources)}; Table 1; Tables 4 and 6 layout; "
            "human = IAA, Table 7; majority = always the commonest gold label)\n\n" + main +
            "\n## Per label (E = entailment, N = neutral, C = contradiction)\n\n" + per_label +
            "\n## Per construction (Figure 1 layout; Exp 2 constructions share the Exp 1 form)\n\n" + per_cxn)

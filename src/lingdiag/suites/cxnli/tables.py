"""Exp 1 vs Exp 2 (Tables 1, 4, 6), per label, and per construction pair (Figure 1)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from lingdiag.conditions.after_thinking import AXIS as AFTER_THINKING
from lingdiag.conditions.thinking import AXIS as THINKING
from lingdiag.io.markdown import markdown_table
from lingdiag.records import (
    UNPARSED,
    ResultRow,
)
from lingdiag.suites.cxnli import data
from lingdiag.suites.cxnli.authors import VARIANTS as AUTHORS_VARIANTS
from lingdiag.suites.cxnli.files import SETTINGS
from lingdiag.suites.cxnli.metrics import HUMAN_AGREEMENT, CxnliMetrics, of
from lingdiag.suites.cxnli.prompts import VARIANTS

_VARIANTS = tuple(dict.fromkeys((*VARIANTS, *AUTHORS_VARIANTS)))
T = TypeVar("T")


def _order(axes: Mapping[str, Any]) -> tuple[int, int, str, str]:
    setting, variant = str(axes.get("setting")), str(axes.get("variant")).rpartition(":")[2]
    return (SETTINGS.index(setting) if setting in SETTINGS else 99,
            _VARIANTS.index(variant) if variant in _VARIANTS else 99, str(axes.get("variant")), str(axes.get("cot")))


def _source(axes: Mapping[str, Any]) -> str:
    # Runs from before the option used this project's prompts.
    return str(axes.get("prompt_source", "paper"))


def _per_label(rows: Sequence[ResultRow], both_sources: bool) -> str:
    """Accuracy, F1 and predictions per label, one row per run condition (by experiment)."""
    ordered = sorted(rows, key=lambda r: (str(r.axes.get("exp")), _order(r.axes), r.model))
    return markdown_table(
        ["Model", "Condition", "Acc", "Acc E", "Acc N", "Acc C", "F1 E", "F1 N", "F1 C", "Macro-F1",
         "Pred E", "Pred N", "Pred C", "Unparsed", "N"],
        [[r.model, f"{_source(r.axes)}:{r.condition}" if both_sources else r.condition, of(r)["accuracy"],
          *(of(r)["by_label"][lab]["accuracy"] for lab in data.LABELS),
          *(of(r)["by_label"][lab]["f1"] for lab in data.LABELS), of(r)["macro_f1"],
          *(of(r)["predicted"][lab] for lab in data.LABELS), of(r)["predicted"][UNPARSED], of(r)["n"]]
         for r in ordered])


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

    cells: dict[tuple[str, str, str, str], dict[str, CxnliMetrics]] = {}
    for r in rows:
        a = r.axes
        cells.setdefault((r.model, str(a.get("setting")), variant(a), str(a.get("cot"))), {})[
            str(a.get("exp"))] = of(r)
    keys = sorted(cells, key=lambda k: (_order({"setting": k[1], "variant": k[2], "cot": k[3]}), k[0]))

    def at(k: tuple[str, str, str, str], exp: str, read: Callable[[CxnliMetrics], T]) -> T | None:
        """``read`` of experiment ``exp``'s metrics; None (an empty cell) where it has no run."""
        m = cells[k].get(exp)
        return None if m is None else read(m)

    def drop(k: tuple[str, str, str, str]) -> float | None:
        one, two = at(k, "1", lambda m: m["accuracy"]), at(k, "2", lambda m: m["accuracy"])
        return one - two if one is not None and two is not None else None

    main = markdown_table(
        ["Model", "Setting", "Variant", "CoT", "Exp 1 acc", "Exp 2 acc", "Drop", "Human Exp 1", "Human Exp 2",
         "Majority 1", "Majority 2", "Unparsed 1", "Unparsed 2", "N 1", "N 2"],
        [[k[0], k[1], k[2], k[3], at(k, "1", lambda m: m["accuracy"]), at(k, "2", lambda m: m["accuracy"]),
          drop(k), HUMAN_AGREEMENT["1"], HUMAN_AGREEMENT["2"], at(k, "1", lambda m: m["majority_baseline"]),
          at(k, "2", lambda m: m["majority_baseline"]), at(k, "1", lambda m: m["unparsed_rate"]),
          at(k, "2", lambda m: m["unparsed_rate"]), at(k, "1", lambda m: m["n"]), at(k, "2", lambda m: m["n"])]
         for k in keys])
    per_label = _per_label(rows, len(sources) > 1)
    schemas = [c.name for c in data.CONSTRUCTIONS.values() if c.exp == "1"]

    def construction(k: tuple[str, str, str, str], exp: str, name: str) -> float | None:
        return at(k, exp, lambda m: m["by_construction"].get(name))

    per_cxn = markdown_table(
        ["Model", "Setting", "Variant", "CoT", "Exp 1 construction", "Acc", "Exp 2 construction", "Acc"],
        [[k[0], k[1], k[2], k[3], s, construction(k, "1", s), data.COUNTERPART.get(s, "–"),
          construction(k, "2", data.COUNTERPART.get(s, ""))]
         for k in keys for s in schemas])
    return (f"## CxNLI: Exp 1 vs Exp 2 (prompts: {', '.join(sources)}; Table 1; Tables 4 and 6 layout; "
            "human = IAA, Table 7; majority = always the commonest gold label)\n\n" + main +
            "\n## Per label (E = entailment, N = neutral, C = contradiction)\n\n" + per_label +
            "\n## Per construction (Figure 1 layout; Exp 2 constructions share the Exp 1 form)\n\n" + per_cxn)

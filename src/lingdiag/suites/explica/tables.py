"""Tables 6-8, 10 and 13 and the rating distributions of Fig. 5, from result rows."""

from __future__ import annotations

from collections.abc import Sequence

from lingdiag.io.markdown import fmt, markdown_table
from lingdiag.metrics.core import UNPARSED_RATE
from lingdiag.records import (
    ResultRow,
)
from lingdiag.suites.explica import data
from lingdiag.suites.explica.metrics import (
    ACCURACY,
    BY_CLASS,
    BY_FREQUENCY_BIN,
    N_RELATED,
    RATING_DISTRIBUTION,
    RATING_TIE_RATE,
    SPEARMAN,
    of,
)
from lingdiag.suites.explica.prompts import TASKS

_CLASS_HEADERS = ["Caus. Ic.", "Temp. Ic.", "Caus. a.Ic.", "Temp. a.Ic."]


def _condition_cells(row: ResultRow) -> list[str]:
    task = row.axes.get("task", row.condition)
    if "shots" in row.axes:
        sampled = " (sampled)" if row.axes.get("constrained_sampling") == "sampled" else ""
        return [task, row.axes["shots"], row.axes["decoding"] + sampled]
    return [f"{task} (APS)" if task in ("perplexity", "imported") else task, "–", "–"]


def _order(row: ResultRow) -> tuple[int, str]:
    task = row.axes.get("task", "")
    return (TASKS.index(task) if task in TASKS else len(TASKS), row.condition)


def table(rows: Sequence[ResultRow]) -> str:
    """Tables 6-8 (accuracy and APS per TYPE × ORDER), Table 13 (Spearman ρ), Table 10
    (per frequency bin, when present) and the rating distributions of Fig. 5.
    """
    rows = sorted(rows, key=lambda r: (_order(r), r.model))
    text = ("## ExpliCa accuracy on causal/temporal pairs (Tables 6-8 layout; APS for perplexity; prompts: "
            + (", ".join(sorted({r.axes.get("prompt_source", "paper") for r in rows if "shots" in r.axes})) or "–")
            + ")\n\n")
    rules = sorted({f"ties {r.axes['ties']}, unreadable ratings {r.axes['missing_ratings']}"
                    for r in rows if "ties" in r.axes})
    if rules:
        text += f"Rating rules: {'; '.join(rules)} (the authors': ties alphabetical, unreadable kept).\n\n"
    text += markdown_table(
        ["Task", "Shots", "Decoding", "Model", "All", *_CLASS_HEADERS, "Unparsed", "N"],
        [[*_condition_cells(r), r.model, of(r)[ACCURACY], *[of(r)[BY_CLASS][k] for k in data.CLASSES],
          of(r).get(UNPARSED_RATE), of(r)[N_RELATED]] for r in rows])
    corr = [r for r in rows if SPEARMAN in of(r)]
    if corr:
        text += "\n## Spearman ρ with human mean ratings (Table 13 layout; perplexity ρ is expected negative)\n\n"
        text += markdown_table(
            ["Task", "Shots", "Decoding", "Model", *_CLASS_HEADERS, "Unrel.", "All"],
            [[*_condition_cells(r), r.model,
              *[of(r)[SPEARMAN][k]["rho"] for k in (*data.CLASSES, data.UNRELATED, "all")]] for r in corr])
    binned = [r for r in rows if BY_FREQUENCY_BIN in of(r)]
    if binned:
        bins = sorted({b for r in binned for b in of(r)[BY_FREQUENCY_BIN]})
        text += "\n## Accuracy per frequency bin (Table 10 layout)\n\n"
        text += markdown_table(["Task", "Shots", "Decoding", "Model", "Overall", *bins],
                               [[*_condition_cells(r), r.model, of(r)[ACCURACY],
                                 *[of(r)[BY_FREQUENCY_BIN].get(b) for b in bins]] for r in binned])
    rated = [r for r in rows if RATING_DISTRIBUTION in of(r)]
    if rated:
        keys = ["-1", *map(str, range(1, 11))]
        text += "\n## Rating distributions, model vs human means rounded (Fig. 5)\n\n"
        text += markdown_table(
            ["Condition", "Model", "Pairs", "Source", *keys, "Ties"],
            [[r.condition, r.model, subset, src,
              *[of(r)[RATING_DISTRIBUTION][subset][src].get(k, "–") for k in keys],
              fmt(of(r)[RATING_TIE_RATE]) if src == "model" else ""]
             for r in rated for subset in ("related", "unrelated") for src in ("model", "human")])
    return text

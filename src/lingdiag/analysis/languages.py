"""One diagnostic across languages: accuracy per language with intervals, and languages compared
item by item over aligned translations.

Items of a suite file that carry an ``align`` tag (shared by the translations of one item) and a
``language`` tag are compared here, by tags alone (no suite is imported): per condition and
language, accuracy with its Wilson interval; for every two conditions of one run that differ
only in their items' language, McNemar's exact test over the aligned items both answered
(``lingdiag.analysis.compare.paired``, matched by ``align``), Holm-adjusted over the table.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from lingdiag.analysis.compare import Comparison, paired
from lingdiag.errors import ConfigError, RunError
from lingdiag.io.markdown import markdown_table
from lingdiag.metrics.core import accuracy, proportion_ci
from lingdiag.metrics.stats import holm_rows
from lingdiag.records import LANGUAGE, ItemRecord

ALIGN = "align"
"""The item tag shared by the translations of one item (each with its ``LANGUAGE`` tag)."""


@dataclass(frozen=True)
class LanguageCell:
    """One condition's items in one language."""

    run: str
    condition: str
    language: str
    accuracy: float
    ci95: tuple[float, float]
    n: int


def _language(records: Sequence[ItemRecord]) -> str:
    return ", ".join(sorted({str(r.tags.get(LANGUAGE, "")) for r in records}))


def _rest(r: ItemRecord) -> tuple[tuple[str, str], ...]:
    """A condition's axes other than the one that chose the language (its value is a language tag)."""
    return tuple(sorted((k, v) for k, v in r.axes.items() if v != r.tags.get(LANGUAGE)))


def aligned(records: Sequence[ItemRecord]) -> bool:
    """Whether ``records`` hold aligned items in more than one language."""
    return len({r.tags.get(LANGUAGE) for r in records if ALIGN in r.tags}) > 1


def per_language(run: str, records: Sequence[ItemRecord]) -> list[LanguageCell]:
    """Accuracy with its Wilson interval per condition and language (answered, gold-bearing items)."""
    groups: dict[tuple[str, str], list[ItemRecord]] = defaultdict(list)
    for r in records:
        if r.correct is not None and r.error is None:
            groups[(r.condition, str(r.tags.get(LANGUAGE, "")))].append(r)
    out = []
    for (condition, lang), rs in groups.items():
        low, high = proportion_ci(rs, lambda r: bool(r.correct))
        out.append(LanguageCell(run, condition, lang, accuracy(rs), (low, high), len(rs)))
    return out


def paired_languages(records: Sequence[ItemRecord], *, seed: int = 0) -> list[Comparison]:
    """Every two conditions that differ only in language, compared over their aligned items (Holm)."""
    by_condition: dict[str, list[ItemRecord]] = defaultdict(list)
    for r in records:
        if ALIGN in r.tags:
            by_condition[r.condition].append(r)
    for condition, rs in by_condition.items():
        _one_per_align(condition, rs)
    rows = []
    for a, b in combinations(sorted(by_condition), 2):
        ra, rb = by_condition[a], by_condition[b]
        if _rest(ra[0]) != _rest(rb[0]) or _language(ra) == _language(rb):
            continue
        try:
            rows.append(paired(f"{a} ({_language(ra)}) vs {b} ({_language(rb)})", ra, rb, seed=seed,
                               key=lambda r: str(r.tags[ALIGN])))
        except ConfigError:  # no aligned item answered on both sides (e.g. --limit picked others): no row
            continue
    return holm_rows(rows)


def _one_per_align(condition: str, records: Sequence[ItemRecord]) -> None:
    """One record per align id in a condition, else the pairing would keep whichever came last.

    Raises:
        RunError: two records share an align id (a run made before suite files refused it).
    """
    first: dict[str, str] = {}
    for r in records:
        key = str(r.tags[ALIGN])
        if key in first:
            raise RunError(f"condition {condition!r}: items {first[key]!r} and {r.item_id!r} share align id {key!r}; "
                           "the paired comparison needs one item per language and align id")
        first[key] = r.item_id


def section(runs: Sequence[tuple[str, str, Sequence[ItemRecord]]]) -> str:
    """The markdown section for ``(run, model, records)`` of runs with aligned items (empty if none)."""
    cells: list[list[object]] = []
    tests: list[list[object]] = []
    for run, model, records in runs:
        if not aligned(records):
            continue
        cells += [[c.condition, c.language, model, c.accuracy, f"[{c.ci95[0]:.3f}, {c.ci95[1]:.3f}]", c.n]
                  for c in sorted(per_language(run, records), key=lambda c: (c.condition, c.language))]
        tests += [[t.condition, model, t.n, t.acc_a, t.acc_b, t.diff, f"[{t.ci95[0]:.3f}, {t.ci95[1]:.3f}]",
                   t.only_a, t.only_b, t.p, t.p_holm] for t in paired_languages(records)]
    if not cells:
        return ""
    return ("**Across languages: accuracy per language** (Wilson 95% intervals)\n\n"
            + markdown_table(["Condition", "Language", "Model", "Accuracy", "95% CI", "N"], cells)
            + "\n**Across languages, paired over aligned items** (McNemar's exact test, matched by the "
            "`align` tag; difference A − B with a bootstrap 95% interval; Holm over the rows)\n\n"
            + markdown_table(["A vs B", "Model", "Aligned items", "Acc. A", "Acc. B", "A − B", "95% CI",
                              "Only A right", "Only B right", "p", "p (Holm)"], tests))

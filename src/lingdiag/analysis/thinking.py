"""The thinking axis read from the records: each setting against ``off``, and accuracy by thinking length.

The conditions themselves (``<condition>/thinking-<setting>``) are made by the run's thinking
expander (``lingdiag.conditions.thinking``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from lingdiag.analysis.compare import Comparison, PermutationTest, paired, permuted
from lingdiag.conditions.thinking import AXIS
from lingdiag.errors import ConfigError, MissingDependency
from lingdiag.io.markdown import markdown_table
from lingdiag.metrics.core import reasoning_tokens
from lingdiag.metrics.stats import holm_rows
from lingdiag.records import UNFINISHED, ItemRecord
from lingdiag.suite import Suite

QUANTILES = 4
"""Thinking-length bins of the length analysis (quartiles)."""


def _groups(records: Sequence[ItemRecord]) -> dict[tuple[tuple[str, str], ...], dict[str, list[ItemRecord]]]:
    """Records by their condition's other axes, then by thinking setting."""
    out: dict[tuple[tuple[str, str], ...], dict[str, list[ItemRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        if AXIS in r.axes:
            rest = tuple(sorted((k, str(v)) for k, v in r.axes.items() if k != AXIS))
            out[rest][str(r.axes[AXIS])].append(r)
    return out


def _where(rest: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{k} {v}" for k, v in rest) or "all"


def paired_rows(suite: Suite, records: Sequence[ItemRecord]) -> tuple[list[Comparison], list[PermutationTest]]:
    """Each thinking setting against ``off`` on the same items: McNemar on accuracy, the suite's
    paired rates and gaps by permutation; Holm over each table's rows.
    """
    tests: list[Comparison] = []
    permutations: list[PermutationTest] = []
    for rest, by_setting in _groups(records).items():
        base = by_setting.get("off")
        if base is None:
            continue
        answered = [r for r in base if r.error is None]
        for setting, rs in by_setting.items():
            if setting == "off":
                continue
            name = f"{_where(rest)}: {setting} vs off"
            mine = [r for r in rs if r.error is None]
            if any(r.gold is not None for r in mine):
                tests.append(paired(name, mine, answered))
            permutations += permuted(suite, name, mine, answered)
    return holm_rows(tests), holm_rows(permutations)


def _length_rows(suite: Suite, records: Sequence[ItemRecord]) -> list[list[Any]]:
    """Accuracy, unfinished rate and the suite's paired rates and gaps per thinking-length quartile."""
    counted = sorted(((t, r) for r in records if r.error is None and (t := reasoning_tokens(r)) is not None),
                     key=lambda p: p[0])
    rows: list[list[Any]] = []
    if len(counted) < QUANTILES:
        return rows
    for q in range(QUANTILES):
        part = counted[q * len(counted) // QUANTILES:(q + 1) * len(counted) // QUANTILES]
        scored = [r for _, r in part if r.correct is not None]
        rows.append([f"Q{q + 1}", f"{part[0][0]}–{part[-1][0]}", len(part),
                     sum(bool(r.correct) for r in scored) / len(scored) if scored else None,
                     sum(r.label == UNFINISHED for _, r in part) / len(part),
                     *(metric([r for _, r in part]) for metric in suite.paired_metrics.values())])
    return rows


def section(suite: Suite, records: Sequence[ItemRecord], model: str = "") -> str:
    """The report's thinking section for one run's records: the paired comparison of each setting
    with ``off``, accuracy by thinking length, and unfinished thinking and its tokens per condition.
    Empty when no condition is on the thinking axis.
    """
    groups = _groups(records)
    if not groups:
        return ""
    title = f"**Thinking** ({model})" if model else "**Thinking**"
    parts = [f"{title}: each setting against off on the same items (answered on both sides; an unparsed or "
             "unfinished answer is wrong on its side)."]
    try:
        tests, perms = paired_rows(suite, records)
    except (ConfigError, MissingDependency) as e:
        tests, perms = [], []
        parts.append(f"Paired tests not run: {e}.")
    if tests:
        parts.append(markdown_table(
            ["Condition", "n", "Accuracy (setting)", "Accuracy (off)", "Δ", "95% CI", "p (McNemar)", "p (Holm)"],
            [[t.condition, t.n, t.acc_a, t.acc_b, t.diff, f"[{t.ci95[0]:.3f}, {t.ci95[1]:.3f}]", t.p, t.p_holm]
             for t in tests]))
    if perms:
        parts.append(markdown_table(
            ["Condition", "Metric", "n", "Setting", "Off", "Δ", "p (permutation)", "p (Holm)"],
            [[t.condition, t.metric, t.n, t.a, t.b, t.diff, t.p, t.p_holm] for t in perms]))
    per_setting = []
    for rest, by_setting in groups.items():
        for setting, rs in by_setting.items():
            lengths = [t for r in rs if (t := reasoning_tokens(r)) is not None]
            per_setting.append([_where(rest), setting, len(rs), sum(r.label == UNFINISHED for r in rs),
                                sum(r.label == UNFINISHED for r in rs) / len(rs), sum(lengths),
                                sum(lengths) / len(lengths) if lengths else None])
    parts.append("Unfinished thinking (the trace never closed; never counted as unparsed) and thinking tokens "
                 "per condition (hosted models count tokens they do not show):\n\n" + markdown_table(
                     ["Condition", "Thinking", "n", "Unfinished", "Unfinished rate", "Thinking tokens",
                      "Mean per item"], per_setting))
    for rest, by_setting in groups.items():
        for setting, rs in by_setting.items():
            rows = _length_rows(suite, rs)
            if rows:
                parts.append(f"Accuracy by thinking length ({_where(rest)}, {setting}; quartiles of thinking "
                             "tokens):\n\n" + markdown_table(
                                 ["Quartile", "Thinking tokens", "n", "Accuracy", "Unfinished rate",
                                  *suite.paired_metrics], rows))
    return "\n\n".join(parts) + "\n"

"""Competence after thinking, read from the records: did thinking move the model's preference?

The twins themselves (``<condition>/after-thinking``: label log-likelihoods scored after the
model's own completed thinking) are made by the run's after-thinking expander
(``lingdiag.conditions.after_thinking``); this module reads their records.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from lingdiag.analysis.compare import Comparison, paired
from lingdiag.conditions.after_thinking import AXIS, SUFFIX
from lingdiag.errors import ConfigError, MissingDependency
from lingdiag.io.markdown import markdown_table
from lingdiag.metrics.stats import holm_rows
from lingdiag.records import UNPARSED, ItemRecord


def _agree(a: Mapping[str, str], b: Mapping[str, str]) -> tuple[int, float | None]:
    shared = sorted(set(a) & set(b))
    return len(shared), (sum(a[k] == b[k] for k in shared) / len(shared) if shared else None)


def section(records: Sequence[ItemRecord]) -> str:
    """Did thinking move the preference or only the surface answer: per after-thinking condition,
    how often its log-likelihood choice agrees with the generation's parsed answer, and with the
    plain log-likelihood choice (the same prompt without thinking), with McNemar on accuracy against
    the plain choice. Generated answers that did not parse are left out of their agreement. Empty
    without such conditions.
    """
    by_condition: dict[str, list[ItemRecord]] = defaultdict(list)
    for r in records:
        by_condition[r.condition].append(r)
    rows: list[list[Any]] = []
    tests: list[Comparison] = []
    problems: list[str] = []
    for name, rs in by_condition.items():
        if AXIS not in rs[0].axes or not name.endswith("/" + SUFFIX):
            continue
        base = [r for r in by_condition.get(name.removesuffix("/" + SUFFIX), []) if r.error is None]
        mine = [r for r in rs if r.error is None]
        after = {r.item_id: r.label for r in mine}
        # An unparsed generated answer agrees with no label: those items say nothing here.
        generated = {r.item_id: r.replays["label"] for r in mine if r.replays and r.replays["label"] != UNPARSED}
        plain = {r.item_id: r.label for r in base}
        n_gen, with_gen = _agree(after, generated)
        n_plain, with_plain = _agree(after, plain)
        n_both, plain_gen = _agree(plain, generated)
        rows.append([name, rs[0].axes[AXIS], n_gen, with_gen, n_plain, with_plain, n_both, plain_gen])
        if base and any(r.gold is not None for r in mine):
            try:
                tests.append(paired(f"{name} vs {name.removesuffix('/' + SUFFIX)}", mine, base))
            except (ConfigError, MissingDependency) as e:
                problems.append(str(e))
    if not rows:
        return ""
    parts = ["**Competence after thinking**: does the label the model prefers after its own thinking follow its "
             "generated answer (thinking moved the preference) or its preference without thinking (only the "
             "surface answer moved)?\n\n" + markdown_table(
                 ["Condition", "Replays", "n", "Agrees with generated answer", "n", "Agrees with plain loglik",
                  "n", "Plain loglik agrees with generated answer"], rows)]
    if tests:
        parts.append("Accuracy after thinking against the plain log-likelihood choice on the same items (exact "
                     "McNemar, paired bootstrap interval, Holm over the rows):\n\n" + markdown_table(
                         ["Conditions", "n", "Accuracy (after thinking)", "Accuracy (plain)", "Δ", "95% CI",
                          "p (McNemar)", "p (Holm)"],
                         [[t.condition, t.n, t.acc_a, t.acc_b, t.diff, f"[{t.ci95[0]:.3f}, {t.ci95[1]:.3f}]", t.p,
                           t.p_holm] for t in holm_rows(tests)]))
    parts += [f"Paired test not run: {p}." for p in problems]
    return "\n\n".join(p.rstrip("\n") for p in parts) + "\n"

"""Competence vs performance, joined per item: counts, tests and Table 12's ρ on records built by hand."""

import json
import subprocess
import sys
from typing import Any

from helpers import item_record

from lingdiag.records import ItemRecord
from lingdiag.rundir import write_imported
from lingdiag.suites.explica.analysis import join, to_markdown

CONNECTIVES = ("so", "because", "then", "after")


def record(condition: str, task: str, item: str, label: str, gold: str, detail: dict[str, Any]) -> ItemRecord:
    tags = {"relation": "causal_iconic", "type": "causal", "order": "iconic"}
    human = {c: 5.0 + k for k, c in enumerate(CONNECTIVES)}
    return item_record(item, label, gold, condition=condition, axes={"task": task}, tags=tags,
                       fields={"human": human}, detail=detail)


def records() -> list[ItemRecord]:
    """Eight pairs, gold 'so'. Perplexity right on 1-6; ratings right on 1-2 and 7-8, wrong on 3-6."""
    out = []
    for k in range(1, 9):
        ppl_label = "so" if k <= 6 else "then"
        ppl = {c: (1.0 if c == ppl_label else 2.0 + CONNECTIVES.index(c) + k / 10) for c in CONNECTIVES}
        out.append(record("perplexity", "perplexity", f"p{k}", ppl_label, "so", {"perplexity": ppl}))
        rated_label = "so" if k in (1, 2, 7, 8) else "after"
        # A rating that falls as perplexity rises, except on the chosen connective.
        ratings = {c: (10 if c == rated_label else 8 - CONNECTIVES.index(c)) for c in CONNECTIVES}
        out.append(record("rating/0-shot/greedy", "rating", f"p{k}", rated_label, "so", {"ratings": ratings}))
    return out


def test_join_counts_the_four_cells_and_tests_them() -> None:
    (j,) = join("m", records())
    assert (j.n, j.both, j.knows_not_says, j.says_not_knows, j.neither) == (8, 2, 4, 2, 0)
    assert (j.aps, j.accuracy) == (6 / 8, 4 / 8)
    assert j.agreement == 2 / 8  # the same connective on pairs 1 and 2 only
    # Exact McNemar on the discordant 4 vs 2: binomial two-sided p = 0.6875.
    assert abs(j.p - 0.6875) < 1e-9
    assert j.ci95[0] <= 0.25 <= j.ci95[1]
    assert join("m", records(), seed=1) == join("m", records(), seed=1)
    assert j.rho_n == 32 and j.rho_ratings is not None and j.rho_ratings < 0
    # Table 12's ρ with a bootstrap interval over the 8 pairs (each pair's 4 sentences together).
    assert j.rho_ci95 is not None and j.rho_ci95[0] <= j.rho_ratings <= j.rho_ci95[1]
    text = to_markdown([j])
    assert f"{j.rho_ratings:.2f} [{j.rho_ci95[0]:.2f}, {j.rho_ci95[1]:.2f}] (32)" in text
    assert "percentile bootstrap over items" in text


def test_competence_command(tmp_path) -> None:
    """``lingdiag competence`` serves ExpliCa (its duplicate ``explica competence`` is gone)."""
    write_imported(tmp_path / "run", suite="explica", model="m", dataset="builtin", records=records(),
                   provenance={"file": "answers.csv", "sha256": ""})
    cmd = [sys.executable, "-m", "lingdiag", "competence"]
    (row,) = json.loads(subprocess.run([*cmd, str(tmp_path / "run"), "--json"], capture_output=True, text=True,
                                       check=True).stdout)
    assert (row["knows_not_says"], row["says_not_knows"]) == (4, 2)
    prompted_only = [r for r in records() if r.condition != "perplexity"]
    write_imported(tmp_path / "prompted", suite="explica", model="m", dataset="builtin", records=prompted_only,
                   provenance={"file": "answers.csv", "sha256": ""})
    bad = subprocess.run([*cmd, str(tmp_path / "prompted")], capture_output=True, text=True)
    assert bad.returncode != 0 and "no run holds a loglik condition" in bad.stderr
    assert "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1

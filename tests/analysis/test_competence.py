"""The generic competence-vs-performance join (lingdiag.analysis.competence) on records built by hand,
its command, and its place in the report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import item_record

from lingdiag.analysis.competence import join, to_markdown
from lingdiag.records import ItemRecord
from lingdiag.rundir import write_imported

PROMPTED = {"strategy": "zero-shot", "prompt_source": "authors"}
LOGLIK = {**PROMPTED, "scoring": "loglik", "normalisation": "total"}


def record(condition: str, axes: dict[str, str], item: str, label: str, gold: str = "True",
           error: str | None = None) -> ItemRecord:
    return item_record(item, label, gold, condition=condition, axes=axes, tags={"group": "B", "verb_class": "Activity"},
                       error=error)


def records() -> list[ItemRecord]:
    """Ten items, gold True. Loglik right on 1-6; generated right on 1-2 and 7-8, unparsed on 3, False on 4-6 and
    9-10; item 11 failed under generation (left out), item 12 has no loglik record (left out)."""
    out = []
    for k in range(1, 11):
        out.append(record("zero-shot/loglik", LOGLIK, f"i{k}", "True" if k <= 6 else "Unknown"))
        said = "True" if k in (1, 2, 7, 8) else "unparsed" if k == 3 else "False"
        out.append(record("zero-shot", PROMPTED, f"i{k}", said))
    out.append(record("zero-shot/loglik", LOGLIK, "i11", "True"))
    out.append(record("zero-shot", PROMPTED, "i11", "unparsed", error="backend down"))
    out.append(record("zero-shot", PROMPTED, "i12", "True"))
    return out


def test_join_counts_add_up_and_match_a_hand_count() -> None:
    (j,) = join("m", records())
    assert (j.condition, j.competence, j.normalisation) == ("zero-shot", "zero-shot/loglik", "total")
    assert (j.n, j.both, j.knows_not_says, j.says_not_knows, j.neither) == (10, 2, 4, 2, 2)
    assert j.both + j.knows_not_says + j.says_not_knows + j.neither == j.n
    assert (j.competence_acc, j.prompted_acc) == (0.6, 0.4)
    # Same label: 1, 2 (True/True) and none of the rest (Unknown vs True/False, True vs False/unparsed).
    assert j.agreement == 2 / 10
    assert abs(j.p - 0.6875) < 1e-9  # exact McNemar, 4 vs 2 discordant
    assert j.ci95[0] <= 0.2 <= j.ci95[1]
    assert join("m", records(), seed=3) == join("m", records(), seed=3)


def test_a_loglik_condition_pairs_only_with_its_own_prompt() -> None:
    other = [record("dap", {**PROMPTED, "strategy": "dap"}, "i1", "True")]
    assert [j.condition for j in join("m", records() + other)] == ["zero-shot"]
    assert join("m", [r for r in records() if r.condition == "zero-shot"]) == []


def test_table_names_the_columns_and_normalisation() -> None:
    text = to_markdown(join("m", records()), "ImperfectiveNLI")
    assert "| m | zero-shot | total | 10 | 0.60 | 0.40 | 2 | 4 (40%) | 2 (20%) | 2 | 0.20 | +0.20 [" in text
    assert text.startswith("### ImperfectiveNLI: competence (label log-likelihood)")


def test_competence_command_prints_the_table_and_refuses_runs_without_loglik(tmp_path: Path) -> None:
    write_imported(tmp_path / "run", suite="imperfective", model="m", dataset="builtin", records=records(),
                   provenance={"file": "answers.csv", "sha256": ""})
    cmd = [sys.executable, "-m", "lingdiag", "competence"]
    refused = subprocess.run([*cmd, str(tmp_path / "run")], capture_output=True, text=True)  # an item failed
    assert refused.returncode == 2 and ": failed: " in refused.stderr and "--partial" in refused.stderr
    cmd.append("--partial")
    shown = subprocess.run([*cmd, str(tmp_path / "run")], capture_output=True, text=True, check=True).stdout
    assert "| m | zero-shot | total | 10 | 0.60 | 0.40 | 2 | 4 (40%) | 2 (20%) | 2 |" in shown
    assert "**Not final**" in shown and "items failed" in shown
    (row,) = json.loads(subprocess.run([*cmd, str(tmp_path / "run"), "--json"], capture_output=True, text=True,
                                       check=True).stdout)
    assert (row["suite"], row["knows_not_says"], row["says_not_knows"]) == ("imperfective", 4, 2)
    write_imported(tmp_path / "prompted", suite="imperfective", model="m", dataset="builtin",
                   records=[r for r in records() if r.condition == "zero-shot"],
                   provenance={"file": "answers.csv", "sha256": ""})
    bad = subprocess.run([*cmd, str(tmp_path / "prompted")], capture_output=True, text=True)
    assert bad.returncode != 0 and "no run holds a loglik condition" in bad.stderr
    assert "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_report_analyses_show_the_join(tmp_path: Path) -> None:
    write_imported(tmp_path / "run", suite="imperfective", model="m", dataset="builtin", records=records(),
                   provenance={"file": "answers.csv", "sha256": ""})
    out = tmp_path / "report.html"
    subprocess.run([sys.executable, "-m", "lingdiag", "report", str(tmp_path / "run"), "--html", str(out)],
                   capture_output=True, text=True, check=True)
    html = out.read_text()
    analyses = html[html.index('<section id="suite-imperfective">'):]
    assert "ImperfectiveNLI: competence (label log-likelihood)" in analyses and "Knows, not says" in analyses


def test_one_competence_command_serves_explica_with_its_rho_column(tmp_path: Path) -> None:
    from lingdiag import RunConfig, evaluate
    from lingdiag.models.mock import MockBackend

    mock = MockBackend(lambda r: "7", lambda r: -float(len(r.continuation)), name="m")
    axes = {"task": ["rating", "perplexity"], "shots": ["0"], "decoding": ["greedy"]}
    evaluate(RunConfig(suite="explica", model="m", axes=axes, limit=12), mock, tmp_path / "run")
    cmd = [sys.executable, "-m", "lingdiag", "competence", str(tmp_path / "run")]
    shown = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert "### explica: competence" in shown and "| ρ ppl~rating [95% CI] (n) |" in shown
    (row,) = json.loads(subprocess.run([*cmd, "--json"], capture_output=True, text=True, check=True).stdout)
    assert (row["suite"], row["competence"], row["condition"]) == ("explica", "perplexity", "rating/0-shot/greedy")
    assert "rho_ratings" in row and row["n"] > 0

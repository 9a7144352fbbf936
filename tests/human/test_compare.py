"""A run's answers against simulated raters: `lingdiag human compare`."""

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from lingdiag.cli import app
from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.human import Study
from lingdiag.models.mock import MockBackend
from lingdiag.suites.explica.files import load

runner = CliRunner()


def test_compare_counts_raters_disagreeing_and_correlates_with_human_means(tmp_path: Path):
    assert runner.invoke(app, ["human", "export", "explica", "--per-list", "40", "--attention", "0",
                               "--out", str(tmp_path / "study")]).exit_code == 0
    study = Study.read(tmp_path / "study" / "study.json")
    items = load("builtin").items  # all 72, 20 of them UNRELATED
    truth = {it.fields["sentences"][c]: r for it in load("builtin").items for c, r in it.fields["human"].items()}
    rng = np.random.default_rng(1)
    lines = ["rater,stimulus,rating"]
    by_id = {s.id: s for s in study.stimuli}
    for k, ids in enumerate(study.lists):
        for j in range(9):
            for sid in ids:
                s = by_id[sid]
                true = next(it for it in items if it.id == s.item_id).fields["human"][s.variant]
                lines.append(f"R{k}-{j},{sid},{int(np.clip(np.rint(true + rng.normal(0, 0.5)), 1, 10))}")
    answers = tmp_path / "answers.csv"
    answers.write_text("\n".join(lines) + "\n", encoding="utf-8")

    # A "model" whose log-probability of each sentence is its true mean human rating: its
    # perplexity ranks the connectives as the raters do, but it never answers "unrelated".
    mock = MockBackend(loglik_fn=lambda r: truth[r.continuation.strip()])
    evaluate(RunConfig(suite="explica", model="mock", axes={"task": ["perplexity"]}), mock, tmp_path / "run")

    r = runner.invoke(app, ["human", "compare", str(tmp_path / "run"), str(tmp_path / "study" / "study.json"),
                            str(answers), "--score-key", "perplexity", "--lower-is-better", "--json"])
    assert r.exit_code == 0, r.output
    (c,) = json.loads(r.stdout)
    unrelated = sum(it.gold is None for it in items)
    assert c["condition"] == "perplexity" and c["n_items"] == 72 and unrelated > 0
    assert c["agreement_with_gold"] == (72 - unrelated) / 72
    # Raters are consistent (σ = 0.5): on UNRELATED items all 9 disagree with the model's connective.
    assert c["items_most_raters_disagree"] == unrelated
    assert {i["item_id"] for i in c["items"] if i["disagree"] == i["raters"] == 9} == \
        {it.id for it in items if it.gold is None}
    assert c["spearman"] > 0.9 and c["n_scored"] == 288

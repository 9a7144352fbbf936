"""The ExpliCa authors' per-item outputs (8 open models on the perplexity task) imported as runs: the
fit writes both tables and flags items with reasons, its difficulties agree with an independent
implementation (girth), and anchors estimate a held-out model's accuracy better than random items."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr
from typer.testing import CliRunner

from lingdiag.cli import app, mount_suites
from lingdiag.io.fetch import fetch
from lingdiag.items import irt, validate
from lingdiag.items.build import fit_runs
from lingdiag.items.matrix import read_matrices
from lingdiag.registry import load_plugins

runner = CliRunner()
# Eight real files scored and imported, then fitted nine times: minutes on 2 cores, no model.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def perplexity_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Path]]:
    from conftest import SHARED_DATASETS

    if not SHARED_DATASETS.is_dir():
        pytest.skip(f"official datasets not available at {SHARED_DATASETS}")
    mp = pytest.MonkeyPatch()
    mp.setenv("LINGDIAG_CACHE", str(tmp_path_factory.mktemp("cache")))
    load_plugins()
    mount_suites()
    fetch("explica", str(SHARED_DATASETS))
    out = tmp_path_factory.mktemp("explica")
    runs = []
    for path in sorted((SHARED_DATASETS / "explica_results" / "perplexity").glob("*.csv")):
        run = out / path.stem
        result = runner.invoke(app, ["score", "explica", "--dataset", "official", "--scores", str(path), "--task",
                                     "perplexity", "--score-col", "perplexity", "--connective-col", "conn_in_list",
                                     "--out", str(run)])
        assert result.exit_code == 0, result.output
        runs.append(run)
    mp.undo()
    assert len(runs) == 8
    yield runs


def test_the_fit_flags_items_with_reasons(perplexity_runs):
    f = fit_runs(perplexity_runs, "2pl")
    (c,) = f.cells
    assert (c.suite, c.condition, len(c.models)) == ("explica", "perplexity", 8)
    assert len(c.item_ids) == 848  # the related ordered pairs; unrelated ones have no gold
    flags = c.item_flags(f.kind, f.policy)
    reasons = {x.split(" ")[0] for fl in flags for x in fl}
    assert {"negative", "near-zero", "every", "humans"} <= reasons
    # The gold is the humans' preferred connective: they never disagree, but some tie.
    verdicts = {h.verdict for h in c.human.values()}
    assert verdicts == {"agrees", "ties"} and len(c.human) == 848
    assert any("8 models" in n for n in f.notes)


def test_difficulties_agree_with_girth(perplexity_runs):
    girth = pytest.importorskip("girth", reason="girth (the dev extra) is the independent implementation")
    (m,) = read_matrices(perplexity_runs).cells
    x = m.responses
    right = (x == 1).sum(0)
    informative = (right > 0) & (right < 8)  # girth's MML needs both outcomes per item
    ours = irt.fit(x, "1pl").difficulty[informative]
    theirs = girth.rasch_mml(x[:, informative].T.astype(int))["Difficulty"]
    assert spearmanr(ours, theirs)[0] >= 0.95


def test_anchors_beat_random_items_leaving_each_model_out(perplexity_runs):
    # Over five anchor draws, not one: one draw's error is one sample of a random quantity.
    (m,) = read_matrices(perplexity_runs).cells
    draws = [validate.leave_one_out(m, 100, "1pl", seed=seed) for seed in range(5)]
    assert all(len(held) == 8 for held in draws)
    errors = np.array([[h.error for h in held] for held in draws])
    random_rms = math.sqrt(np.mean([h.random_se**2 for h in draws[0]]))
    # Measured over 10 draws: RMS 0.033 against 0.046, 88% within 0.05 (docs/items.md).
    assert math.sqrt(float(np.mean(errors**2))) < 0.04 < random_rms
    assert np.mean(np.abs(errors) <= 0.05) >= 0.8 and np.abs(errors).max() < 0.1
    assert np.mean(np.abs(errors)) < np.mean([h.random_mae for h in draws[0]])


def test_anchors_and_estimate_commands(perplexity_runs, tmp_path):
    fit = tmp_path / "fit"
    assert runner.invoke(app, ["items", "fit", *map(str, perplexity_runs), "--out", str(fit), "--irt",
                               "1pl"]).exit_code == 0
    anchors = tmp_path / "anchors.json"
    result = runner.invoke(app, ["items", "anchors", str(fit), "--k", "100", "--out", str(anchors)])
    assert result.exit_code == 0 and "measured error 0.0" in result.stdout
    result = runner.invoke(app, ["items", "estimate", str(perplexity_runs[-1]), "--anchors", str(anchors),
                                 "--json"])
    got = json.loads(result.stdout)
    lo, hi = got["interval"]
    assert lo < got["estimate"] < hi and got["cells"][0]["anchors_answered"] == 100
    assert lo <= 0.6203 <= hi  # gemma-2-9b-it's accuracy over all 848 items (its own answers are in the fit)

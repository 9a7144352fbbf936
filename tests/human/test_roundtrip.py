"""Export a study for 40 built-in items, answer it with simulated raters of known reliability,
import it back: exclusions, duplicates, agreement and the gold labels."""

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from lingdiag.cli import app
from lingdiag.human import Study
from lingdiag.suite import spread
from lingdiag.suites.explica.data import load_csv
from lingdiag.suites.explica.files import load

runner = CliRunner()
SIGMA = 1.0  # noise of a reliable rater, in scale points
RELIABLE, CARELESS, INATTENTIVE = 12, 1, 1  # raters per list


def simulate(study: Study, truth: dict[str, float], rng: np.random.Generator) -> tuple[list[list[Any]], set[str]]:
    """Rows (rater, stimulus, rating) of every list's raters; returns the inattentive raters too."""
    by_id = {s.id: s for s in study.stimuli}
    rows, inattentive = [], set()
    for k, ids in enumerate(study.lists, 1):
        for j in range(RELIABLE + CARELESS + INATTENTIVE):
            rater = f"P{k}-{j}"
            careless, failing = j == RELIABLE, j == RELIABLE + CARELESS
            if failing:
                inattentive.add(rater)
            for sid in ids:
                s = by_id[sid]
                if s.expected is not None:
                    v = s.expected["rating"] % 10 + 1 if failing else s.expected["rating"]
                elif careless:
                    v = int(rng.integers(1, 11))
                else:
                    v = int(np.clip(np.rint(truth[sid] + rng.normal(0, SIGMA)), 1, 10))
                rows.append([rater, sid, v])
    return rows, inattentive


def known_alpha(truth: np.ndarray) -> float:
    """Interval α implied by the simulation's parameters: 1 - D_o / D_e, with D_o the expected
    squared difference between two ratings of one stimulus and D_e between two ratings of any.

    A reliable rating of a stimulus with true value t is clip(round(t + N(0, σ²)), 1, 10): its exact
    distribution over 1..10 comes from the normal CDF at the half points. A careless rating is
    uniform on 1..10 (mean 5.5, variance 99/12). With R reliable and C careless raters per stimulus:
      D_o = mean over stimuli of [R(R-1)/2 · 2 Var(X) + RC (Var(X) + 99/12 + (E X - 5.5)²)] / (n(n-1)/2)
      D_e = 2 Var(pooled ratings), the pool weighting reliable R/n and careless C/n.
    """
    from scipy.stats import norm

    points = np.arange(1, 11)
    edges = np.concatenate(([-np.inf], points[:-1] + 0.5, [np.inf]))
    probs = np.diff(norm.cdf((edges[None, :] - truth[:, None]) / SIGMA), axis=1)  # stimuli × 10
    mean = probs @ points
    var = probs @ points**2 - mean**2
    n, uniform = RELIABLE + CARELESS, 99 / 12
    d_o = np.mean(RELIABLE * (RELIABLE - 1) * var + RELIABLE * CARELESS * (var + uniform + (mean - 5.5) ** 2)) / (
        n * (n - 1) / 2)
    first = RELIABLE / n * np.mean(mean) + CARELESS / n * 5.5
    second = RELIABLE / n * np.mean(probs @ points**2) + CARELESS / n * np.mean(points**2)
    return float(1 - d_o / (2 * (second - first**2)))


def test_round_trip_recovers_gold_and_alpha(tmp_path: Path):
    r = runner.invoke(app, ["human", "export", "explica", "--limit", "40", "--per-list", "40", "--attention", "2",
                            "--seed", "3", "--out", str(tmp_path / "study")])
    assert r.exit_code == 0, r.output
    study = Study.read(tmp_path / "study" / "study.json")
    items = {it.id: it for it in spread(load("builtin").items, 40)}
    assert len(study.lists) == 4 and sum(s.expected is None for s in study.stimuli) == 160
    truth = {s.id: items[s.item_id].fields["human"][s.variant] for s in study.stimuli if s.expected is None}

    rows, inattentive = simulate(study, truth, np.random.default_rng(7))
    # A platform export: renamed columns, an extra column, a byte-order mark, and a first
    # submission of rater P1-0 (all 10s) that a later one replaces.
    first_try = [[rater, sid, 10] for rater, sid, _ in rows if rater == "P1-0"]
    path = tmp_path / "export.csv"
    with open(path, "w", newline="", encoding="utf-8-sig") as fh:
        w = csv.writer(fh)
        w.writerow(["PROLIFIC_PID", "Stimulus ID", "Rating", "StartedDate"])
        for rater, sid, v in [*first_try, *rows]:
            w.writerow([rater, sid, v, "2026-11-23"])

    out = tmp_path / "rated.csv"
    r = runner.invoke(app, ["human", "import", str(tmp_path / "study" / "study.json"), str(path),
                            "--gold", "explica", "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert set(report["excluded_raters"]) == inattentive and len(inattentive) == 4
    assert report["duplicates"] == len(first_try) == 42
    assert len(report["raters"]) == 4 * (RELIABLE + CARELESS)

    alpha_known = known_alpha(np.array(list(truth.values())))
    (agree,) = report["agreement"]
    # Over seeds, α of such a simulation scatters by about ±0.015 around the known value (one
    # careless rater per stimulus weighs a lot); 0.04 is well outside that, and far from the
    # 0.83 that the reliable raters alone would give.
    assert abs(agree["alpha"] - alpha_known) < 0.04, (agree["alpha"], alpha_known)
    assert 0.5 < agree["icc_single"] < 1 and agree["icc_average"] > agree["icc_single"]
    assert agree["split_half"] > 0.9 and 0.5 < agree["adjacent"] < 1

    gold = {g["item_id"]: g["label"] for g in report["golds"]}
    assert sorted(set(gold.values())) == ["after", "because", "so", "then", "unrelated"]
    assert gold == {i: it.gold or "unrelated" for i, it in items.items()}
    # The written file is ExpliCa's official layout: the suite loads it and derives the same gold.
    reloaded = load_csv(out)
    assert [it.gold for it in reloaded] == [it.gold for it in items.values()]


def test_unknown_stimulus_is_one_line_naming_the_row(tmp_path: Path):
    runner.invoke(app, ["human", "export", "explica", "--limit", "2", "--out", str(tmp_path)])
    bad = tmp_path / "bad.csv"
    bad.write_text("rater,stimulus,rating\nP1,nope,3\n", encoding="utf-8")
    r = runner.invoke(app, ["human", "import", str(tmp_path / "study.json"), str(bad)])
    assert r.exit_code != 0
    assert "row 2" in str(r.exception) and "nope" in str(r.exception)


@pytest.mark.parametrize("study", ["acceptability", "quality"])
def test_quality_and_acceptability_export_list_every_stimulus_once(tmp_path: Path, study: str):
    r = runner.invoke(app, ["human", "export", "imperfective", "--study", study, "--limit", "5", "--per-list", "4",
                            "--attention", "1", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    st = Study.read(tmp_path / "study.json")
    listed = [sid for ids in st.lists for sid in ids]
    assert sorted(listed) == sorted(s.id for s in st.stimuli) and len(listed) == len(set(listed))
    assert sum(s.expected is None for s in st.stimuli) == (10 if study == "quality" else 5)


def test_export_is_deterministic_for_a_seed(tmp_path: Path):
    args = ["human", "export", "explica", "--limit", "10", "--per-list", "7", "--seed", "5"]
    for d in ("a", "b"):
        assert runner.invoke(app, [*args, "--out", str(tmp_path / d)]).exit_code == 0
    for name in ("study.json", "platform.csv", "form.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_quality_review_imports_means_corrections_and_adjacent_agreement(tmp_path: Path):
    r = runner.invoke(app, ["human", "export", "imperfective", "--study", "quality", "--limit", "3", "--per-list", "6",
                            "--attention", "1", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    study = Study.read(tmp_path / "study.json")
    (ids,) = study.lists
    by_id = {s.id: s for s in study.stimuli}
    rows = []
    for rater, base in (("A", 5), ("B", 4), ("C", 2)):  # three raters, as in ImperfectiveNLI App. C
        for sid in ids:
            exp = by_id[sid].expected
            g, f, a = (exp["grammar"], exp["fluency"], exp["adequacy"]) if exp else (base, base, 5)
            fix = "Fixed sentence." if rater == "C" and not exp else ""
            rows.append(f"{rater},{sid},{g},{f},{a},{fix}")
    path = tmp_path / "answers.csv"
    path.write_text("Participant ID,Stimulus,Grammar,Fluency,Adequacy,Correction\n" + "\n".join(rows) + "\n",
                    encoding="utf-8")
    review = tmp_path / "review.csv"
    r = runner.invoke(app, ["human", "import", str(tmp_path / "study.json"), str(path), "--out", str(review),
                            "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    agree = {a["question"]: a for a in report["agreement"]}
    # Per sentence the ratings are 5, 4, 2: of the pairs (5,4) (5,2) (4,2) only the first is adjacent.
    assert agree["grammar"]["adjacent"] == pytest.approx(1 / 3)
    assert agree["adequacy"]["adjacent"] == 1.0 and agree["adequacy"]["alpha"] is None  # no variance
    assert report["gold_rule"] is None and report["golds"] == []
    table = list(csv.DictReader(io.StringIO(review.read_text(encoding="utf-8"))))
    assert len(table) == 6 and {r["mean_grammar"] for r in table} == {"3.667"}
    assert {r["correction"] for r in table} == {"Fixed sentence."}

"""``lingdiag items fit`` end to end on runs with answers drawn from a known item model: the tables,
the flags, the saved fit, and every degenerate input refused in one line with no number."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import IMPERFECTIVE_TAGS, item_record, lingdiag, write_runs
from scipy.stats import spearmanr

from lingdiag.errors import LingdiagError
from lingdiag.items.fitted import FIT_JSON, FIT_NPZ, load
from lingdiag.rundir import write_imported


def fit(*args: str) -> tuple[int, str, str]:
    result = lingdiag(Path("/tmp"), "items", "fit", *args)
    return result.returncode, result.stdout, result.stderr


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_tables_flags_and_the_saved_fit(runs, tmp_path):
    dirs, x, b = runs
    code, out, err = fit(*map(str, dirs), "--out", str(tmp_path / "fit"))
    assert code == 0, out + err
    items = rows(tmp_path / "fit" / "items.csv")
    assert [r["item_id"] for r in items] == [f"i{j:05d}" for j in range(150)]
    assert {r["irt"] for r in items} == {"1pl"}  # 12 models: below the 2PL's 30
    for r, col in zip(items, x.T, strict=True):
        assert int(r["n_models"]) == 12 and int(r["n_right"]) == int(col.sum())
    negative = {r["item_id"] for r in items if r["flags"].startswith("negative discrimination")}
    planted = {f"i{j:05d}" for j in range(144, 150) if 0 < x[:, j].sum() < 12}
    assert planted and planted <= negative, (planted, negative)
    # Uninformative items get no number, and say why.
    for r, col in zip(items, x.T, strict=True):
        if col.sum() in (0, 12):
            assert r["difficulty"] == r["discrimination"] == "" and "every model" in r["flags"]
    shown = [(float(r["difficulty"]), b[j]) for j, r in enumerate(items) if r["difficulty"] and j < 144]
    assert spearmanr(*zip(*shown, strict=True))[0] > 0.8
    models = rows(tmp_path / "fit" / "models.csv")
    abilities = [float(m["ability"]) for m in models]
    assert spearmanr(abilities, np.arange(12))[0] > 0.8  # simulated abilities are sorted
    assert all(float(m["ability_low"]) < float(m["ability"]) < float(m["ability_high"]) for m in models)
    assert [int(m["items_answered"]) for m in models] == [150] * 12
    frame = pd.read_parquet(tmp_path / "fit" / "items.parquet")
    assert list(frame["item_id"]) == [r["item_id"] for r in items]
    f = load(tmp_path / "fit")
    c = f.cells[0]
    assert not c.slope.flags.writeable and c.models == tuple(f"model{m:02d}" for m in range(12))
    assert [Path(r).resolve() for r in c.runs] == [d.resolve() for d in dirs]
    assert c.fingerprint and "near-zero" not in json.dumps(f.priors.__repr__())


def test_same_runs_same_bytes(runs, tmp_path):
    dirs, _, _ = runs
    for name in ("a", "b"):
        assert fit(*map(str, dirs), "--out", str(tmp_path / name))[0] == 0
    for name in ("items.csv", "models.csv", FIT_JSON):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_a_hostile_item_id_is_text_in_the_csv(tmp_path):
    x = np.array([[1, 0, 1], [0, 0, 1], [1, 1, 0]], dtype=np.int8)
    ids = ["=HYPERLINK(\"http://x\")", "+1+cmd|' /C calc'!A0", "@SUM(A1)"]
    dirs = write_runs(tmp_path / "runs", x, record=lambda m, j, right: item_record(
        ids[j], "True" if right else "False", "True", tags=IMPERFECTIVE_TAGS))
    assert fit(*map(str, dirs), "--out", str(tmp_path / "fit"))[0] == 0
    text = (tmp_path / "fit" / "items.csv").read_text()
    for i in ids:
        assert "\n'" + i.replace('"', '""')[:5] in text or ",'" + i[:5] in text or "\"'" + i[:5] in text
    assert [r["item_id"] for r in rows(tmp_path / "fit" / "items.csv")] == ["'" + i for i in ids]


@pytest.mark.parametrize(("answers", "expected"), [
    ([[1, 0, 1, 1]], "one model (model00)"),
    ([[1, 1, 1], [1, 1, 1]], "every graded answer is right"),
    ([[0, 0, 0], [0, 0, 0]], "every graded answer is wrong"),
    ([[1, 0], [1, 0]], "no item answered by two models is right for some and wrong for others"),
    ([[1, -1], [-1, 0]], "no item answered by two models"),
])
def test_degenerate_matrices_are_one_line_and_no_number(tmp_path, answers, expected):
    dirs = write_runs(tmp_path / "runs", np.array(answers, dtype=np.int8))
    code, out, err = fit(*map(str, dirs), "--out", str(tmp_path / "fit"))
    assert code == 2 and expected in err and err.count("\n") == 1, err
    assert not (tmp_path / "fit").exists() and out == ""


def test_no_gold_is_no_item(tmp_path):
    dirs = write_runs(tmp_path / "runs", np.array([[1, 0], [0, 1]], dtype=np.int8),
                      record=lambda m, j, right: item_record(f"i{j}", "True", None, tags=IMPERFECTIVE_TAGS))
    code, _, err = fit(*map(str, dirs), "--out", str(tmp_path / "fit"))
    assert code == 2 and "no graded answer (no gold label" in err and err.count("\n") == 1


def test_an_item_answered_by_one_model_has_no_number(runs, tmp_path):
    dirs, x, _ = runs
    extra = tmp_path / "extra"
    write_imported(extra, suite="imperfective", model="solo", dataset="builtin",
                   records=[item_record(f"i{j:05d}", "True", "True", tags=IMPERFECTIVE_TAGS)
                            for j in [*range(150), 99999]],
                   provenance={"file": "simulated", "sha256": "0" * 64})
    assert fit(*map(str, dirs), str(extra), "--out", str(tmp_path / "fit"))[0] == 0
    row = next(r for r in rows(tmp_path / "fit" / "items.csv") if r["item_id"] == "i99999")
    assert row["n_models"] == "1" and row["difficulty"] == row["discrimination"] == ""
    assert row["flags"].startswith("one model")


def test_a_run_given_twice_is_one_model_and_a_copied_run_is_named(runs, tmp_path):
    dirs, _, _ = runs
    code, out, _ = fit(*map(str, dirs), str(dirs[0]), "--out", str(tmp_path / "fit"))
    assert code == 0 and "12 models" in out
    shutil.copytree(dirs[0], tmp_path / "copy")
    code, out, err = fit(*map(str, dirs), str(tmp_path / "copy"), "--out", str(tmp_path / "fit2"))
    assert code == 0 and "13 models" in out and "answered every item alike (the same run twice?)" in err


def test_unfinished_and_foreign_directories(runs, tmp_path):
    dirs, _, _ = runs
    meta = json.loads((dirs[0] / "meta.json").read_text())
    meta["planned"] = 999  # a run still going (or killed): not finished
    del meta["imported"]
    (dirs[0] / "meta.json").write_text(json.dumps(meta))
    code, out, err = fit(*map(str, dirs), "--out", str(tmp_path / "fit"))  # a run named on its own: the door's rule
    assert code == 2 and f"{dirs[0]}: stopped: run not finished" in err and err.count("\n") == 1
    code, out, err = fit(*map(str, dirs), "--out", str(tmp_path / "fit"), "--partial")
    assert code == 0 and "12 models" in out and f"{dirs[0]}: read though not final (--partial)" in err
    code, _, err = fit(str(tmp_path), "--out", str(tmp_path / "fit2"))
    assert code == 2 and "not a run directory" in err and err.count("\n") == 1


def test_human_ratings_file(runs, tmp_path):
    dirs, _, _ = runs
    human = tmp_path / "human.csv"
    human.write_text("id,mean_True,mean_False\ni00000,6,2\ni00001,3,5\ni00002,4,4\n")
    assert fit(*map(str, dirs), "--out", str(tmp_path / "fit"), "--human", str(human))[0] == 0
    got = {r["item_id"]: r for r in rows(tmp_path / "fit" / "items.csv")}
    assert (got["i00000"]["human_agreement"], got["i00000"]["human_margin"]) == ("agrees", "4.0")
    assert got["i00001"]["human_agreement"] == "disagrees" and "humans disagree: they prefer 'False'" in \
        got["i00001"]["flags"]
    assert got["i00002"]["human_agreement"] == "ties" and "humans tie" in got["i00002"]["flags"]
    assert got["i00003"]["human_agreement"] == ""
    human.write_text("id,mean_True,mean_False\ni00000,6,nan\n")
    code, _, err = fit(*map(str, dirs), "--out", str(tmp_path / "fit3"), "--human", str(human))
    assert code == 2 and "human.csv, row 2, field 'mean_False'" in err and err.count("\n") == 1


def test_a_damaged_fit_is_one_line(runs, tmp_path):
    dirs, _, _ = runs
    assert fit(*map(str, dirs), "--out", str(tmp_path / "fit"))[0] == 0
    good = (tmp_path / "fit" / FIT_NPZ).read_bytes()
    assert fit(*map(str, dirs[:6]), "--out", str(tmp_path / "other"))[0] == 0
    (tmp_path / "fit" / FIT_NPZ).write_bytes((tmp_path / "other" / FIT_NPZ).read_bytes())  # another fit's arrays
    with pytest.raises(LingdiagError, match="not the arrays"):
        load(tmp_path / "fit")
    (tmp_path / "fit" / FIT_NPZ).write_bytes(good)
    load(tmp_path / "fit")
    (tmp_path / "fit" / FIT_JSON).write_text('{"format": "lingdiag-items", "version": 1}')
    result = lingdiag(tmp_path, "items", "anchors", str(tmp_path / "fit"), "--k", "5", "--out",
                      str(tmp_path / "a.json"))
    assert result.returncode == 2 and "fit.json" in result.stderr and result.stderr.count("\n") == 1


def test_a_fifo_as_the_human_file_is_refused_not_waited_on(runs, tmp_path):
    dirs, _, _ = runs
    os.mkfifo(tmp_path / "ratings.csv")
    code, _, err = fit(*map(str, dirs), "--out", str(tmp_path / "fit"), "--human", str(tmp_path / "ratings.csv"))
    assert code == 2 and "not a regular file" in err and err.count("\n") == 1

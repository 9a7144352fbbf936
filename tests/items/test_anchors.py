"""Anchors: chosen from a fit, written and read back, refused when damaged; ``--items FILE`` keeps a
run (or a study's runs) to those items before ``--limit``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import plan
from lingdiag.errors import ConfigError, LingdiagError
from lingdiag.items.anchors import anchor_cells, estimate_run, load_anchors, read_item_ids, save_anchors
from lingdiag.items.build import fit_runs
from lingdiag.items.validate import random_rms
from lingdiag.reading import load_run
from lingdiag.study.plan import plan_study
from lingdiag.study.schema import StudyFile


def test_anchors_written_read_and_estimated(runs, tmp_path):
    dirs, x, _ = runs
    fit = fit_runs(dirs, "1pl")
    chosen = anchor_cells(fit, 20)
    (cell,) = chosen.cells
    # Exactly the anchors asked for, every cluster's share carried by its anchors.
    assert len(set(cell.anchors.index)) == 20 and abs(cell.anchors.weight.sum() - 1) < 1e-9
    # 20 anchors on 12 models: the IRT anchors and 20 random items are within each other's noise (0.084 and
    # 0.096 on this panel, 0.089 for random items' standard error), so either may be kept; the better one is.
    assert cell.measured_error is not None and len(cell.validation) == 10
    assert cell.measured_error == min(cell.irt_error or 1.0, random_rms(list(cell.validation)))
    save_anchors(chosen, tmp_path / "a.json")
    back = load_anchors(tmp_path / "a.json")
    assert back.cells[0].anchor_ids == cell.anchor_ids
    assert np.array_equal(back.cells[0].slope, cell.slope)
    ((_, est),) = estimate_run(back, load_run(dirs[5]))
    real = x[5].mean()
    assert est.low <= est.estimate <= est.high and est.anchors_answered == len(cell.anchors.index)
    assert abs(est.estimate - real) < 0.2


def test_damaged_or_foreign_anchor_files_are_one_line(runs, tmp_path):
    dirs, _, _ = runs
    save_anchors(anchor_cells(fit_runs(dirs, "1pl"), 5, validate=False), tmp_path / "a.json")
    data = json.loads((tmp_path / "a.json").read_text())
    data["cells"][0]["slope"] = data["cells"][0]["slope"][:-1]
    (tmp_path / "b.json").write_text(json.dumps(data))
    for path, expected in ((tmp_path / "b.json", "do not match"), (dirs[0] / "meta.json", "not an anchors file")):
        with pytest.raises(LingdiagError) as e:
            load_anchors(path)
        assert expected in str(e.value) and "\n" not in str(e.value)


def test_items_file_as_text_or_anchors(runs, tmp_path):
    text = tmp_path / "ids.txt"
    text.write_text("# anchors by hand\nA1\n\nB2\nA1\n")
    assert read_item_ids(text) == ["A1", "B2"]
    text.write_text("# nothing\n\n")
    with pytest.raises(ConfigError, match="no item id"):
        read_item_ids(text)
    dirs, _, _ = runs
    save_anchors(anchor_cells(fit_runs(dirs, "1pl"), 5, validate=False), tmp_path / "a.json")
    assert len(read_item_ids(tmp_path / "a.json", ["imperfective"])) >= 3
    assert read_item_ids(tmp_path / "a.json", ["other"])  # one suite in the file: its anchors


def test_a_run_keeps_the_items_before_its_limit():
    config = RunConfig(suite="imperfective", model="mock", dataset="builtin")
    every = plan(config)
    condition = every.conditions[0].name
    ids = [it.id for it in every.items[condition][::7]]
    kept = plan(config.model_copy(update={"items": ids, "limit": 5}))
    assert all(len(items) == 5 and {it.id for it in items} <= set(ids) for items in kept.items.values())
    assert "items" not in config.recorded() and config.model_copy(update={"items": ids}).recorded()["items"] == ids
    with pytest.raises(ConfigError, match="none of its 2 item ids"):
        plan(config.model_copy(update={"items": ["nope", "neither"]}))


def test_a_study_suite_names_its_items_file(tmp_path):
    (tmp_path / "ids.txt").write_text("ipn-1\nipn-2\n")
    spec = StudyFile.model_validate({"models": [{"spec": "a"}], "base": tmp_path,
                                     "suites": [{"suite": "imperfective", "items": "ids.txt"}]})
    (run,) = plan_study(spec)
    assert run.config.items == ["ipn-1", "ipn-2"]
    assert json.loads(json.dumps(run.to_json()))["config"]["items"] == ["ipn-1", "ipn-2"]
    Path(tmp_path / "ids.txt").unlink()
    with pytest.raises(LingdiagError):
        plan_study(spec)


def test_where_irt_anchors_lose_to_random_items_random_items_are_chosen(tmp_path):
    # Half the items have gold A, half B; each model leans to one label (a second dimension): a model
    # right on the A items is wrong on the B items. One ability cannot say which half a model is good at,
    # and on this draw the IRT anchors' measured error is above random items' (0.089 against 0.071; on draws
    # 1-3 and 5 of this design the IRT anchors win).
    from helpers import write_runs

    from lingdiag.items.validate import random_rms

    rng = np.random.default_rng(4)
    on_a, on_b = np.linspace(0.05, 0.95, 9), np.array([0.9, 0.2, 0.7, 0.05, 0.95, 0.4, 0.1, 0.6, 0.3])
    x = np.concatenate([rng.random((9, 300)) < on_a[:, None], rng.random((9, 300)) < on_b[:, None]],
                       axis=1).astype(np.int8)
    dirs = write_runs(tmp_path / "runs", x)
    (cell,) = anchor_cells(fit_runs(dirs, "1pl"), 40).cells
    assert cell.method == "random" and cell.irt_error is not None and cell.measured_error is not None
    assert cell.irt_error > cell.measured_error == random_rms(list(cell.validation))
    assert len(cell.anchors.index) == 40
    save_anchors(anchor_cells(fit_runs(dirs, "1pl"), 40), tmp_path / "a.json")
    ((back, est),) = estimate_run(load_anchors(tmp_path / "a.json"), load_run(dirs[4]))
    assert back.method == "random" and est.low <= x[4].mean() <= est.high


def test_few_distinct_parameters_still_give_k_anchors_spread_by_share():
    # A 1PL over a few models gives one (slope, intercept) per count of models right: 3 distinct points
    # here. The 30 anchors asked for are shared among them by size (60/30/10% of 200 items), each
    # anchor weighted by its group's share over its anchors there.
    from lingdiag.items.irt import Estimates
    from lingdiag.items.selection import allocate, choose

    intercept = np.repeat([-1.0, 0.5, 2.0], [120, 60, 20])
    slope = np.ones(200)
    zeros = np.zeros(200)
    est = Estimates(slope, intercept, zeros, zeros, zeros, np.zeros(3), np.zeros(3), 0.0, 1, True)
    chosen = choose(est, 30, seed=4)
    assert len(set(chosen.index)) == 30 and abs(chosen.weight.sum() - 1) < 1e-12
    groups = np.searchsorted([120, 180], chosen.index, side="right")
    assert np.bincount(groups).tolist() == [18, 9, 3]
    assert np.allclose(chosen.weight, np.array([0.6 / 18, 0.3 / 9, 0.1 / 3])[groups])
    assert choose(est, 30, seed=5).index.tolist() != chosen.index.tolist()  # ties taken in a seeded order
    # A group of 2 in 200 gets no anchor of 10: its share goes to the nearest group's anchors.
    few = Estimates(np.ones(200), np.repeat([-1.0, 0.5, 2.0], [150, 48, 2]), zeros, zeros, zeros, np.zeros(3),
                    np.zeros(3), 0.0, 1, True)
    small = choose(few, 10, seed=0)
    assert len(small.index) == 10 and abs(small.weight.sum() - 1) < 1e-12 and (small.index < 198).all()
    assert np.isclose(small.weight[small.index >= 150].sum(), 0.25)
    # By size, never more than a group holds; a group too small for one gets none.
    assert allocate(np.array([500, 1, 1]), 3).tolist() == [3, 0, 0]
    assert allocate(np.array([2, 50]), 10).tolist() == [0, 10]
    assert allocate(np.array([3, 3]), 10).tolist() == [3, 3]


def test_every_item_an_anchor_keeps_the_irt_method(runs, tmp_path):
    # K at or above the cell's items: every item is asked, both methods are exact, and rounding noise in
    # the two measured errors must not switch the file to "random items, their mean".
    dirs, _, _ = runs
    for k in (150, 10_000):
        (cell,) = anchor_cells(fit_runs(dirs, "1pl"), k).cells
        assert cell.method == "irt" and len(cell.anchors.index) == 150 and cell.measured_error is not None
        assert cell.measured_error < 1e-6

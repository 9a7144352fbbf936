"""Bad inputs to ``lingdiag items`` refused in one line: anchors files against their schema, a directory
given as the anchors file, runs over two versions of one dataset; and JSON that never holds NaN."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import IMPERFECTIVE_TAGS, item_record, lingdiag, write_runs

from lingdiag.errors import LingdiagError
from lingdiag.items.anchors import anchor_cells, load_anchors, save_anchors
from lingdiag.items.build import fit_runs
from lingdiag.items.text import DataVersions


@pytest.fixture()
def anchors(runs, tmp_path: Path) -> Path:
    dirs, _, _ = runs
    path = tmp_path / "a.json"
    save_anchors(anchor_cells(fit_runs(dirs, "1pl"), 5, validate=False), path)
    return path


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("kind", "3pl", "field 'kind': '3pl'; expected 1pl or 2pl"),
    ("weights", [float("nan")] * 5, "field 'weights': expected a list of finite numbers"),
    ("weights", [-0.2, 0.3, 0.3, 0.3, 0.3], "field 'weights': expected numbers ≥ 0 summing to 1"),
    ("measured_error", float("nan"), "field 'measured_error'"),
    ("measured_error", -1, "field 'measured_error'"),
    ("models", "abc", "field 'models': expected a list of strings"),
])
def test_an_anchors_file_is_checked_against_its_schema(anchors, tmp_path, field, value, expected):
    data = json.loads(anchors.read_text())
    data["cells"][0][field] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))  # NaN written as NaN: Python's json reads it back
    with pytest.raises(LingdiagError) as e:
        load_anchors(bad)
    assert expected in str(e.value) and "cells[0]" in str(e.value) and "\n" not in str(e.value)


def test_estimate_refuses_a_directory_in_one_line_and_its_json_holds_no_nan(runs, anchors, tmp_path):
    dirs, _, _ = runs
    result = lingdiag(tmp_path, "items", "estimate", str(dirs[0]), "--anchors", str(tmp_path))
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "a directory; expected the anchors file" in \
        result.stderr
    data = json.loads(anchors.read_text())
    data["cells"][0]["method"] = "random"  # the random items' estimate has no ability: NaN before, null now
    anchors.write_text(json.dumps(data))
    result = lingdiag(tmp_path, "items", "estimate", str(dirs[0]), "--anchors", str(anchors), "--json")
    assert result.returncode == 0, result.stderr

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in the JSON")

    got = json.loads(result.stdout, parse_constant=refuse)
    assert got["cells"][0]["ability"] is None and got["cells"][0]["interval_basis"].startswith("random items")
    assert got["cells"][0]["bias"].startswith("none known")  # every estimate states its bias


def test_runs_over_two_versions_of_a_dataset_are_refused(tmp_path):
    x = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]], dtype=np.int8)
    first = write_runs(tmp_path / "v1", x)
    # The same item ids, the gold of i00001 changed: another version of the data.
    second = write_runs(tmp_path / "v2", x, record=lambda m, j, right: item_record(
        f"i{j:05d}", "True" if right else "False", "False" if j == 1 else "True", tags=IMPERFECTIVE_TAGS))
    with pytest.raises(DataVersions) as e:
        fit_runs([*first, *second])
    assert "item 'i00001'" in str(e.value) and "two versions of the dataset" in str(e.value)
    assert "\n" not in str(e.value)
    assert fit_runs(first).cells  # each version alone fits

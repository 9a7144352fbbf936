"""Bad inputs to the ``lingdiag items`` commands end in one line on stderr and exit status 2 (no
traceback): a 2PL asked for on two models, runs over two versions of one dataset. (A directory given as
``--anchors``: ``test_refusals.py``.)"""

from __future__ import annotations

import numpy as np
from helpers import IMPERFECTIVE_TAGS, item_record, lingdiag, write_runs


def _one_line(result, *needles: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stderr.strip().count("\n") == 0 and "Traceback" not in result.stderr, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


def test_a_2pl_on_two_models_is_refused(tmp_path):
    runs = write_runs(tmp_path / "runs", np.array([[1, 0, 1, 1], [0, 1, 1, 0]], dtype=np.int8))
    asked = lingdiag(tmp_path, "items", "fit", *map(str, runs), "--irt", "2pl", "--out", str(tmp_path / "a"))
    _one_line(asked, "--irt 2pl on 2 models")
    assert not (tmp_path / "a" / "fit.json").exists()
    # Without --irt the two models get the 1PL (tests/items/test_chance.py), never a 2PL.


def test_runs_over_two_versions_of_a_dataset_are_refused_in_one_line(tmp_path):
    x = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]], dtype=np.int8)
    first = write_runs(tmp_path / "v1", x)
    second = write_runs(tmp_path / "v2", x, record=lambda m, j, right: item_record(
        f"i{j:05d}", "True" if right else "False", "False" if j == 1 else "True", tags=IMPERFECTIVE_TAGS))
    result = lingdiag(tmp_path, "items", "fit", *map(str, [*first, *second]), "--out", str(tmp_path / "out"))
    _one_line(result, "item 'i00001'", "two versions of the dataset")
    assert not (tmp_path / "out" / "fit.json").exists()

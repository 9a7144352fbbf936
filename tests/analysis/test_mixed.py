"""The mixed-effects regression recovers a known condition effect from simulated answers."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lingdiag.analysis.mixed import fit
from lingdiag.records import ItemRecord
from lingdiag.rundir import write_imported


def simulate(n_models: int, n_items: int, effects: dict[str, float], seed: int = 0) -> dict[str, list[ItemRecord]]:
    """logit P(correct) = -0.3 + effect[condition] + item (SD 1) + model (SD 0.7)."""
    rng = np.random.default_rng(seed)
    items, models = rng.normal(0, 1.0, n_items), rng.normal(0, 0.7, n_models)
    out = {}
    for m in range(n_models):
        out[f"m{m}"] = [ItemRecord(c, {}, f"i{i}", {}, {}, [], [], "x", {}, "x",
                                   bool(rng.random() < 1 / (1 + np.exp(-(-0.3 + beta + items[i] + models[m])))))
                        for c, beta in effects.items() for i in range(n_items)]
    return out


@pytest.mark.slow
def test_fit_recovers_the_condition_effects() -> None:
    result = fit(simulate(4, 80, {"base": 0.0, "better": 1.5, "same": 0.0}), "base")
    effects = {e.condition: e for e in result.effects}
    assert effects["better"].ci95[0] <= 1.5 <= effects["better"].ci95[1]
    assert effects["same"].ci95[0] <= 0.0 <= effects["same"].ci95[1]
    assert effects["better"].ci95[0] > 0  # the effect is found
    assert result.n == 4 * 3 * 80 and (result.n_items, result.n_models) == (80, 4)
    assert set(result.random_sd) == {"item", "model"} and result.random_sd["item"] > 0.5


def test_mixed_command(tmp_path: Path) -> None:
    runs = []
    for model, records in simulate(2, 20, {"a": 0.0, "b": 1.0}).items():
        write_imported(tmp_path / model, suite="imperfective", model=model, dataset="sim", records=records,
                       provenance={"file": "answers.csv", "sha256": ""})
        runs.append(str(tmp_path / model))
    cmd = [sys.executable, "-m", "lingdiag", "mixed", *runs]
    out = json.loads(subprocess.run([*cmd, "--json"], capture_output=True, text=True, check=True).stdout)
    assert out["baseline"] == "a" and [e["condition"] for e in out["effects"]] == ["b"]
    assert out["formula"] == "correct ~ condition + (1 | item) + (1 | model)"
    bad = subprocess.run([*cmd, "--baseline", "zz"], capture_output=True, text=True)
    assert bad.returncode != 0 and "--baseline 'zz' is not a condition of these runs: a, b" in bad.stderr
    assert "Traceback" not in bad.stderr

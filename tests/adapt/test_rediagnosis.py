"""``lingdiag adapt report`` on real runs of the embedded SmolLM2-135M: base against steered."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lingdiag.adapt.data import read_split, split_file, split_lemmas, write_split
from lingdiag.adapt.examples import chat_examples, contrast_pairs
from lingdiag.adapt.rediagnosis import rediagnose
from lingdiag.adapt.rediagnosis_tables import CSV_HEADER, CSV_NAME, MARKDOWN_NAME, write_outputs
from lingdiag.adapt.steer import save_vectors, steering_vectors
from lingdiag.analysis.compare import paired
from lingdiag.config import RunConfig
from lingdiag.engine.run import run
from lingdiag.errors import ConfigError, RunError
from lingdiag.rundir import RunStore
from lingdiag.suites.imperfective.data import builtin_items

pytestmark = pytest.mark.slow

IMPERFECTIVE = RunConfig(suite="imperfective", model="smollm2-135m", dataset="builtin",
                         axes={"strategy": ["zero-shot"]}, limit=12, options={"max_new_tokens": 16})
# One CxNLI condition: the second suite is here for the pairing of runs by suite, and its few-shot
# prompts (nine more conditions) cost minutes of prefill on a 2-core CPU.
CXNLI = RunConfig(suite="cxnli", model="smollm2-135m", dataset="builtin", axes={"exp": ["1"], "setting": ["zero"]},
                  limit=4, options={"max_new_tokens": 16})


@pytest.fixture(scope="module")
def runs(smollm2: object, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A vector with its split recorded beside it; base and steered runs of ImperfectiveNLI and CxNLI."""
    root = tmp_path_factory.mktemp("rediagnosis")
    vector = root / "v.safetensors"
    items = [i for i in builtin_items() if i.gold != "True"][:2]
    pairs = contrast_pairs(chat_examples("imperfective", items, "zero-shot"), "True")
    save_vectors(vector, steering_vectors(smollm2, pairs, [5, 20]), {"source": "test"})  # type: ignore[arg-type]
    split = split_file(f"steer:{vector}@1")
    assert split is not None
    write_split(split, split_lemmas(builtin_items(), "verb", 0.5, 0))
    out = {"base": root / "base", "cx-base": root / "cx-base"}
    run(IMPERFECTIVE, out["base"], backend=smollm2, cache=False)  # type: ignore[arg-type]
    run(CXNLI, out["cx-base"], backend=smollm2, cache=False)  # type: ignore[arg-type]
    for alpha in ("4", "12"):
        out[alpha] = root / f"steer-{alpha}"
        run(IMPERFECTIVE.model_copy(update={"model": f"smollm2-135m+steer:{vector}@{alpha}"}), out[alpha],
            cache=False)
    out["cx-12"] = root / "cx-steer-12"
    run(CXNLI.model_copy(update={"model": f"smollm2-135m+steer:{vector}@12"}), out["cx-12"], cache=False)
    out["vector"] = vector
    return out


def test_paired_tests_split_by_trained_and_held_out_lemmas(runs: dict[str, Path]) -> None:
    result = rediagnose(runs["base"], [runs["4"], runs["12"], runs["cx-base"], runs["cx-12"]])
    assert [p.adapted.path for p in result.pairings] == [runs["4"], runs["12"], runs["cx-12"]]
    split = read_split(runs["vector"].with_suffix(".split.json"))
    base = RunStore(runs["base"]).load_records()
    adapted = RunStore(runs["12"]).load_records()
    trained = [r for r in base if r.tags["verb"].lower() in split.trained]
    held = [r for r in base if r.tags["verb"].lower() in split.held_out]
    assert trained and held and len(trained) + len(held) == len(base) == 12

    rows = {(r.part, r.metric): r for r in result.tables[1]}
    assert {part for part, _ in rows} == {"trained", "held-out", "all"}
    assert rows["trained", "accuracy"].n == len(trained) and rows["held-out", "accuracy"].n == len(held)
    assert rows["all", "accuracy"].n == 12
    # The same numbers compare's paired test gives on the held-out items alone (adapted as side A).
    ids = {r.item_id for r in held}
    direct = paired("held", [r for r in adapted if r.item_id in ids], held)
    row = rows["held-out", "accuracy"]
    assert (row.base, row.adapted, row.diff, row.diff_ci, row.p) == (direct.acc_b, direct.acc_a, direct.diff,
                                                                       direct.ci95, direct.p)
    tbr = rows["all", "tbr_C"]
    c = [r for r in base if r.tags["group"] == "C"]
    assert tbr.base == sum(r.label == "True" for r in c) / len(c) and tbr.test == "permutation"
    assert {"acc_D", "delta_aa", "false_rate_C"} <= {m for _, m in rows}
    assert all(r.p_holm >= r.p for t in result.tables for r in t)
    assert all(r.adapter == "steering " + r.adapter[9:17] + " (layers 5,20, α=12)" for r in result.tables[1])
    # Side effects: CxNLI has no verb tag, so all items only, with its macro F1 by permutation.
    side = result.tables[2]
    assert {r.part for r in side} == {"all"} and "macro_f1" in {r.metric for r in side}
    assert result.pairings[2].split is None

    # The sweep: the base anchors α=0, then the two coefficients; the headline is TBR_C.
    ((vector, points),) = result.sweep.items()
    assert "layers 5,20" in vector and result.headline == "tbr_C"
    assert [p.alpha for p in points] == [0.0, 4.0, 12.0]
    assert points[0].headline == tbr.base and points[2].headline == tbr.adapted
    assert all(abs(sum(p.shares.values()) - 1) < 1e-9 for p in points)


def test_outputs_written(runs: dict[str, Path], tmp_path: Path) -> None:
    result = rediagnose(runs["base"], [runs["4"], runs["12"]])
    written = write_outputs(tmp_path / "out", result)
    assert {p.name for p in written} == {CSV_NAME, MARKDOWN_NAME, "steering_sweep_1.png"}
    assert (tmp_path / "out" / "steering_sweep_1.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with (tmp_path / "out" / CSV_NAME).open(newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    assert tuple(table[0]) == CSV_HEADER and len(table) == 1 + len(result.rows)
    text = (tmp_path / "out" / MARKDOWN_NAME).read_text(encoding="utf-8")
    assert "layers 5,20, α=4" in text and "layers 5,20, α=12" in text
    assert "![steering sweep](steering_sweep_1.png)" in text
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.endswith(".lingdiag-tmp")]


def test_bad_input_is_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no base run of cxnli was given"):
        rediagnose(runs["base"], [runs["12"], runs["cx-12"]])
    with pytest.raises(ConfigError, match="a base run of cxnli with no adapted run"):
        rediagnose(runs["base"], [runs["12"], runs["cx-base"]])
    with pytest.raises(ConfigError, match="the first run must be the base model's"):
        rediagnose(runs["12"], [runs["4"]])
    broken = tmp_path / "broken"
    shutil.copytree(runs["12"], broken)
    (broken / "items.jsonl").unlink()
    with pytest.raises(RunError, match="no items.jsonl"):
        rediagnose(runs["base"], [broken])


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lingdiag", "adapt", "report", *args], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "COLUMNS": "200"},
                          check=False)


def test_cli_table_and_one_line_errors(runs: dict[str, Path], tmp_path: Path) -> None:
    done = _cli(str(runs["base"]), str(runs["12"]), "--out", str(tmp_path / "o"))
    assert done.returncode == 0, done.stderr
    assert "steering" in done.stdout and "(layers 5,20, α=12)" in done.stdout and "held-out" in done.stdout
    assert (tmp_path / "o" / CSV_NAME).is_file()
    missing = _cli(str(runs["base"]), str(tmp_path / "nowhere"))
    assert missing.returncode != 0 and missing.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'nowhere'}: no items.jsonl (not a run directory, or a run that wrote no record yet)"]
    mismatched = _cli(str(runs["base"]), str(runs["cx-12"]))
    assert mismatched.returncode != 0 and len(mismatched.stderr.strip().splitlines()) == 1
    assert "is a cxnli run and no base run of cxnli was given" in mismatched.stderr

"""examples/suites/agreement-pairs.yaml and agreement-regions.yaml against the built-in
``minimal-pairs`` and ``syntaxgym`` suites on the same items: the same requests, per-item
decisions, surprisals and accuracies (smollm2-135m), under two scoring policies each.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from lingdiag import RunConfig, evaluate
from lingdiag.engine.run import RunResult, plan
from lingdiag.models.cache import CachedBackend, ResponseCache
from lingdiag.records import ItemRecord
from lingdiag.rundir import RunStore

EXAMPLES = Path(__file__).parents[2] / "examples" / "suites"
PAIRS, PAIRS_DATA = EXAMPLES / "agreement-pairs.yaml", EXAMPLES / "agreement-pairs.jsonl"
REGIONS, REGIONS_DATA = EXAMPLES / "agreement-regions.yaml", EXAMPLES / "agreement-regions.csv"
PAIR_POLICIES = ["lingdiag", "lm-eval"]
REGION_POLICIES = ["lingdiag", "minicons+ws"]
SUITE_NAME = "agreement_regions"


def syntaxgym_json(out: Path) -> Path:
    """The example's CSV written as a SyntaxGym suite JSON, as the built-in suite reads it."""
    with REGIONS_DATA.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))

    def regions(row: dict[str, str], verb: str) -> list[dict[str, object]]:
        return [{"region_number": k + 1, "content": row[c]}
                for k, c in enumerate(["subject", "attractor", verb, "rest"])]

    doc = {"meta": {"name": SUITE_NAME}, "region_meta": {"1": "subject", "2": "attractor", "3": "verb", "4": "rest"},
           "predictions": [{"type": "formula", "formula": "(3;%mismatch%) > (3;%match%)"}],
           "items": [{"item_number": int(r["id"]), "conditions": [
               {"condition_name": "match", "regions": regions(r, "verb_match")},
               {"condition_name": "mismatch", "regions": regions(r, "verb_mismatch")}]} for r in rows]}
    path = out / f"{SUITE_NAME}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def pair_configs(limit: int | None = None) -> tuple[RunConfig, RunConfig]:
    def config(suite: str, dataset: str = "builtin") -> RunConfig:
        return RunConfig(suite=suite, dataset=dataset, model="smollm2-135m", limit=limit,
                         axes={"scoring-policy": PAIR_POLICIES})
    return config("minimal-pairs", str(PAIRS_DATA)), config(str(PAIRS))


def region_configs(tmp_path: Path) -> tuple[RunConfig, RunConfig]:
    def config(suite: str, dataset: str = "builtin") -> RunConfig:
        return RunConfig(suite=suite, dataset=dataset, model="smollm2-135m",
                         axes={"scoring-policy": REGION_POLICIES})
    return config("syntaxgym", str(syntaxgym_json(tmp_path))), config(str(REGIONS))


def both(configs: tuple[RunConfig, RunConfig], smollm2: object, tmp_path: Path
         ) -> tuple[RunResult, RunResult, dict[tuple[str, str], ItemRecord], dict[tuple[str, str], ItemRecord]]:
    """The built-in suite's run, then the file's through the same response cache; their records by
    (policy, item id without the built-in suite's prefix).
    """
    cache = ResponseCache(tmp_path / "responses.sqlite")
    ours = evaluate(configs[0], CachedBackend(smollm2, cache), tmp_path / "builtin")  # type: ignore[arg-type]
    theirs = evaluate(configs[1], CachedBackend(smollm2, cache), tmp_path / "file")  # type: ignore[arg-type]
    builtin = {(r.axes["scoring-policy"], r.item_id.split("/")[1]): r
               for r in RunStore(tmp_path / "builtin").load_records()}
    file = {(r.axes["scoring-policy"], r.item_id): r for r in RunStore(tmp_path / "file").load_records()}
    return ours, theirs, builtin, file


def test_the_files_send_the_builtin_suites_requests(tmp_path: Path) -> None:
    for builtin_config, file_config in (pair_configs(), region_configs(tmp_path)):
        builtin, file = plan(builtin_config), plan(file_config)
        assert file.requests() == builtin.requests()
        assert len(file.requests()) == len(builtin.requests()) > 0


@pytest.mark.slow
def test_pairs_file_decides_every_pair_as_the_builtin_suite(smollm2: object, tmp_path: Path) -> None:
    ours, theirs, builtin, file = both(pair_configs(), smollm2, tmp_path)
    assert theirs.usage["cache_misses"] == 0 and theirs.usage["cache_hits"] == 2 * 16 * 2

    assert builtin.keys() == file.keys() and len(file) == 32
    for key, b in builtin.items():
        f = file[key]
        assert (f.label, f.correct, f.gold, f.detail) == (b.label, b.correct, b.gold, b.detail), key
    b_rows = {name.split("/")[-1]: m for name, m in ours.metrics.items()}
    f_rows = {name.split("/")[-1]: m for name, m in theirs.metrics.items()}
    assert sorted(f_rows) == sorted(PAIR_POLICIES)
    for p in PAIR_POLICIES:
        assert f_rows[p]["accuracy"] == b_rows[p]["accuracy"]
        assert f_rows[p]["by_paradigm"] == b_rows[p]["by_paradigm"]
    meta = json.loads((tmp_path / "file" / "meta.json").read_text())
    assert [p["name"] for ps in meta["scoring_policies"].values() for p in ps] == PAIR_POLICIES
    table = (tmp_path / "file" / "table.md").read_text()
    assert "scoring policy `lm-eval`: before the text: BOS (else EOS); leading space: yes" in table
    assert "**Scoring-policy sweep**" in table


@pytest.mark.slow
def test_regions_file_equals_the_builtin_syntaxgym_suite(smollm2: object, tmp_path: Path) -> None:
    ours, theirs, builtin, file = both(region_configs(tmp_path), smollm2, tmp_path)
    assert theirs.usage["cache_misses"] == 0

    assert builtin.keys() == file.keys() and len(file) == 20
    for key, b in builtin.items():
        f = file[key]
        assert (f.label, f.correct, f.detail) == (b.label, b.correct, b.detail), key
    b_rows = {name.split("/")[-1]: m for name, m in ours.metrics.items()}
    f_rows = {name.split("/")[-1]: m for name, m in theirs.metrics.items()}
    assert sorted(f_rows) == sorted(REGION_POLICIES)
    for p in REGION_POLICIES:
        assert f_rows[p]["accuracy"] == b_rows[p]["accuracy"]
        # The prediction metric, read back from the recorded surprisals, equals the built-in
        # suite's per-prediction accuracy, which came from the unrounded ones.
        assert f_rows[p]["verb"] == pytest.approx(b_rows[p]["by_prediction"][f"{SUITE_NAME}/0"])
    # The whitespace correction moved surprisals: the two policies did not score alike.
    some = next(iter(builtin))[1]
    assert file[("lingdiag", some)].detail != file[("minicons+ws", some)].detail

"""minimal-pairs: BLiMP's files read as published, fetched at the pinned commit, run end to end."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lingdiag.cli import app
from lingdiag.config import RunConfig
from lingdiag.engine.run import run
from lingdiag.errors import DatasetError
from lingdiag.io import fetch as fetch_mod
from lingdiag.models.mock import MockBackend
from lingdiag.records import LoglikelihoodRequest
from lingdiag.registry import load_plugins
from lingdiag.suites.minimal_pairs.files import COMMIT, PARADIGMS, SHA256, load


def test_reads_the_shared_paradigms_with_published_rows(shared_datasets: Path) -> None:
    ds = load(str(shared_datasets / "blimp"))
    assert len(ds.items) == 6000
    first = ds.items[0]
    assert first.id == "anaphor_gender_agreement/0" and first.gold == "good"
    assert first.tags == {"UID": "anaphor_gender_agreement", "linguistics_term": "anaphor_agreement",
                          "field": "morphology"}
    assert first.fields["published"] == {"ngram": 0.439, "lstm": 0.882, "txl": 0.912, "gpt2": 0.994, "human": 0.96}


def test_pinned_urls() -> None:
    load_plugins()
    files = fetch_mod.OFFICIAL["blimp"]
    assert len(files) == 69 and len(PARADIGMS) == 67
    assert files[0].url == f"https://raw.githubusercontent.com/alexwarstadt/blimp/{COMMIT}/data/adjunct_island.jsonl"
    assert files[-1].url.endswith("/raw_results/summary/models_summary.jsonl")


def test_fetch_from_loopback_server_and_run_on_it(server: tuple[str, list[str]]) -> None:
    load_plugins()
    base, log = server
    result = CliRunner().invoke(app, ["fetch", "blimp", "--from", base + "/",
                                      "--only", "wh_island,npi_present_1,human_validation_summary,models_summary"])
    assert result.exit_code == 0, result.output
    assert sorted(log) == ["/blimp/human_validation_summary.csv", "/blimp/models_summary.jsonl",
                           "/blimp/npi_present_1.jsonl", "/blimp/wh_island.jsonl"]
    path = fetch_mod.datasets_dir() / "blimp" / "wh_island.jsonl"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == SHA256["wh_island.jsonl"]
    ds = load("blimp")
    assert len(ds.items) == 2000 and ds.items[0].fields["published"]["human"] == 0.83
    bad = CliRunner().invoke(app, ["fetch", "blimp", "--from", base, "--only", "no_such_paradigm"])
    assert bad.exit_code != 0 and "no_such_paradigm" in str(bad.exception)


def test_bad_lines_name_file_row_and_field(tmp_path: Path) -> None:
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"sentence_good": "A.", "UID": "p", "pairID": "0"}) + "\n")
    with pytest.raises(DatasetError, match=r"p.jsonl, row 1, field 'sentence_bad': missing"):
        load(str(f))
    f.write_text('{"sentence_good": "A."\n')
    with pytest.raises(DatasetError, match=r"p.jsonl, line 1: invalid JSON"):
        load(str(f))
    with pytest.raises(DatasetError, match="no BLiMP paradigm downloaded yet"):
        load("blimp")


def _shorter_is_likelier(r: LoglikelihoodRequest) -> float:
    return -float(len(r.continuation)) - (0.5 if r.policy.leading_space else 0.0)


def test_runs_methods_and_policy_sweep(shared_datasets: Path, tmp_path: Path) -> None:
    config = RunConfig(suite="minimal-pairs", model="mock", dataset=str(shared_datasets / "blimp"), limit=60,
                       axes={"method": ["simple", "one-prefix"], "scoring-policy": ["lingdiag", "lm-eval"]})
    result = run(config, tmp_path / "run", backend=MockBackend(loglik_fn=_shorter_is_likelier), cache=False)
    assert set(result.metrics) == {"simple/lingdiag", "simple/lm-eval", "one-prefix/lingdiag", "one-prefix/lm-eval"}
    m = result.metrics["simple/lingdiag"]
    assert m["n"] == 60 and 0 <= m["accuracy"] <= 1 and len(m["outcomes"]["correct"]) == 60
    assert "scoring policy `lm-eval`: before the text: BOS (else EOS); leading space: yes" in result.table
    assert "Scoring-policy sweep" in result.table and "human (paper)" in result.table
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["scoring_policies"]["simple/lm-eval"] == [
        {"name": "lm-eval", "prefix": "auto", "prefix_scope": "always", "leading_space": True,
         "score_first_token": True, "whitespace_correction": False}]
    assert meta["scoring_policies"]["simple/lingdiag"][0]["prefix_scope"] == "empty-context"
    lines = (tmp_path / "run" / "items.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    assert rec["prompts"][0] == {"context": "", "continuation": rec["fields"]["sentence_good"]}
    lm_eval = [json.loads(x) for x in lines if json.loads(x)["condition"] == "simple/lm-eval"][0]
    assert lm_eval["prompts"][0]["policy"] == "lm-eval"
    again = run(config, tmp_path / "again", backend=MockBackend(loglik_fn=_shorter_is_likelier), cache=False)
    assert (again.out / "items.jsonl").read_bytes() == (tmp_path / "run" / "items.jsonl").read_bytes()


def test_the_human_agreement_table(tmp_path: Path, shared_datasets: Path) -> None:
    from lingdiag.suites.minimal_pairs.data import read_human

    human = read_human(shared_datasets / "blimp" / "human_validation_summary.csv")
    assert len(human) == 69 and human["adjunct_island"] == 0.94
    path = tmp_path / "h.csv"
    path.write_text('"Condition","accepted","count"\n"wh_island",5,100\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=re.escape(f"{path}, row 1, field 'total_mean': missing column")):
        read_human(path)
    path.write_text('Condition,total_mean\nwh_island,high\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=re.escape(f"{path}, row 2, field 'total_mean': not a number: 'high'")):
        read_human(path)

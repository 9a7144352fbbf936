"""``lingdiag export --format eee``: imported and lingdiag's own runs as Every Eval Ever records, valid
against Every Eval Ever's official schema files (0.3.0, verbatim in tests/fixtures/eee: see its README),
and an export brought back in keeps its accuracy."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from lingdiag.cli import app
from lingdiag.errors import DatasetError, RunError
from lingdiag.interop import eee, lmeval
from lingdiag.interop.runs import import_all
from lingdiag.reading import load_run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCHEMAS = FIXTURES / "eee"
LOGS = FIXTURES / "harness" / "lm-eval" / "logs" / "smollm2-135m"
OWN = FIXTURES / "rundir-6472672" / "plain"
runner = CliRunner()


def _validator(name: str) -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(json.loads((SCHEMAS / name).read_text()))


def test_exports_validate_and_an_exported_import_keeps_its_accuracy(tmp_path: Path) -> None:
    roots = import_all(lmeval.read(next(LOGS.glob("results_*.json")), ["True", "False", "Neither"]), tmp_path / "in")
    own = tmp_path / "own"
    shutil.copytree(OWN, own)
    done = runner.invoke(app, ["export", *map(str, roots), str(own), "--format", "eee", "--out", str(tmp_path / "eee")])
    assert done.exit_code == 0, done.output
    aggregate, instance = _validator("eval.schema.json"), _validator("instance_level_eval.schema.json")
    assert aggregate.schema["version"] == instance.schema["version"] == eee.SCHEMA_VERSION
    files = sorted((tmp_path / "eee").rglob("*.json"))
    assert len(files) == 4
    by_run = {}
    for f in files:
        record = json.loads(f.read_text())
        aggregate.validate(record)
        detail = record["detailed_evaluation_results"]
        # The datastore layout: file_path is relative to the export's root, beside the aggregate record.
        samples = tmp_path / "eee" / detail["file_path"]
        assert samples.parent == f.parent and samples.name == f.stem + eee.SAMPLES
        body = samples.read_bytes()
        assert hashlib.sha256(body).hexdigest() == detail["checksum"]
        lines = [json.loads(line) for line in body.decode().splitlines()]
        assert len(lines) == detail["total_rows"]
        for line in lines:
            instance.validate(line)
            assert line["evaluation_id"] == record["evaluation_id"] and line["model_id"] == record["model_info"]["id"]
        by_run[record["evaluation_id"].split("/")[-2]] = f
    assert json.loads(by_run["own"].read_text())["eval_library"]["name"] == "lingdiag"
    assert json.loads(by_run[roots[0].name].read_text())["eval_library"] == {
        "name": "lm_eval", "version": "0.4.13",
        "additional_details": {"task": "lingdiag_nli_gen", "reread_by": "lingdiag"}}
    for root in roots:
        before = load_run(root).rows[0].metrics["accuracy"]
        [back] = import_all(eee.read(by_run[root.name]), tmp_path / "back" / root.name)
        after = load_run(back)
        assert after.rows[0].metrics["accuracy"] == before
        assert after.meta.imported is not None and after.meta.imported.harness is not None
        assert after.meta.imported.harness.reported["accuracy"] == before
        assert {r.item_id: r.label for r in after.records} == {r.item_id: r.label for r in load_run(root).records}
    again = runner.invoke(app, ["export", *map(str, roots), str(own), "--format", "eee",
                                "--out", str(tmp_path / "eee2")])
    assert again.exit_code == 0, again.output
    assert {f.relative_to(tmp_path / "eee2"): f.read_bytes() for f in (tmp_path / "eee2").rglob("*.json*")} == {
        f.relative_to(tmp_path / "eee"): f.read_bytes() for f in (tmp_path / "eee").rglob("*.json*")}
    # The harness's own extraction is kept before lingdiag's terminal reading.
    gen = by_run["lingdiag_nli_gen"]
    line = json.loads((gen.parent / (gen.stem + eee.SAMPLES)).read_text().splitlines()[5])
    assert [a["is_terminal"] for a in line["answer_attribution"]] == [False, True]
    assert line["input"]["choices"] == ["True", "False", "Neither"]
    assert json.loads(line["metadata"]["lingdiag_record"])["item_id"] == line["sample_id"]


def test_a_run_lingdiag_made_is_not_reread_and_two_runs_of_one_name_are_not_exported(tmp_path: Path) -> None:
    from lingdiag.interop.reread import reread

    with pytest.raises(RunError, match="not a run imported from lm-eval or inspect"):
        reread(OWN)
    shutil.copytree(OWN, tmp_path / "a" / "plain")
    shutil.copytree(OWN, tmp_path / "b" / "plain")
    with pytest.raises(RunError, match="exports as the same evaluation"):
        eee.export([tmp_path / "a" / "plain", tmp_path / "b" / "plain"], tmp_path / "out")


def test_an_unfinished_run_is_not_exported(tmp_path: Path) -> None:
    stopped = tmp_path / "stopped"
    shutil.copytree(FIXTURES / "rundir-6472672" / "stopped", stopped)
    with pytest.raises(RunError, match="not finished"):
        eee.export([stopped], tmp_path / "out")


def test_a_damaged_export_is_refused_in_one_line(tmp_path: Path) -> None:
    roots = import_all(lmeval.read(next(LOGS.glob("results_*.json")), ["True", "False", "Neither"]), tmp_path / "in")
    [agg, samples] = eee.export([roots[1]], tmp_path / "eee")
    text = samples.read_text().splitlines()
    samples.write_text("\n".join([*text, text[0]]) + "\n")
    with pytest.raises(DatasetError, match=r"line 7, field 'sample_id': sample_id '0' repeats line 1"):
        eee.read(agg)
    samples.write_text("\n".join(text)[:-30] + "\n")
    with pytest.raises(DatasetError, match=r"line 6: not a JSON line \(truncated\?\)"):
        eee.read(agg)


def test_a_record_of_another_schema_version_is_refused_in_one_line(tmp_path: Path) -> None:
    roots = import_all(lmeval.read(next(LOGS.glob("results_*.json")), ["True", "False", "Neither"]), tmp_path / "in")
    [agg, _] = eee.export([roots[1]], tmp_path / "eee")
    record = json.loads(agg.read_text())
    record["schema_version"] = "0.2.0"
    agg.write_text(json.dumps(record))
    with pytest.raises(DatasetError, match=r"field 'schema_version': schema_version '0.2.0' is not one this reader "
                                           r"knows \(0.3.0\)") as e:
        eee.read(agg)
    assert "\n" not in str(e.value)

"""``lingdiag export --format eee``: imported and lingdiag's own runs as Every Eval Ever records, valid
against the schema files in tests/fixtures/eee (derived from the documented fields: see its README), and
an export brought back in keeps its accuracy."""

from __future__ import annotations

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
    files = sorted((tmp_path / "eee").glob("*.json"))
    assert len(files) == 4
    for f in files:
        record = json.loads(f.read_text())
        aggregate.validate(record)
        samples = f.parent / record["detailed_evaluation_results"]["file_path"]
        lines = [json.loads(line) for line in samples.read_text().splitlines()]
        assert len(lines) == record["detailed_evaluation_results"]["total_rows"]
        for line in lines:
            instance.validate(line)
    for root in roots:
        before = load_run(root).rows[0].metrics["accuracy"]
        [exported] = [f for f in files if f.name.endswith(f"{root.name}.json")]
        [back] = import_all(eee.read(exported), tmp_path / "back" / root.name)
        after = load_run(back)
        assert after.rows[0].metrics["accuracy"] == before
        assert after.meta.imported is not None and after.meta.imported.harness is not None
        assert after.meta.imported.harness.reported["accuracy"] == before
        assert {r.item_id: r.label for r in after.records} == {r.item_id: r.label for r in load_run(root).records}
    # The harness's own extraction is kept before lingdiag's terminal reading.
    gen = next(f for f in files if f.name.endswith("lingdiag_nli_gen.json"))
    line = json.loads((gen.parent / gen.name.replace(".json", "_samples.jsonl")).read_text().splitlines()[5])
    assert [a["is_terminal"] for a in line["answer_attribution"]] == [False, True]
    assert line["input"]["choices"] == ["True", "False", "Neither"]


def test_a_run_lingdiag_made_is_not_reread_and_two_runs_of_one_name_are_not_exported(tmp_path: Path) -> None:
    from lingdiag.interop.reread import reread

    with pytest.raises(RunError, match="not a run imported from lm-eval or inspect"):
        reread(OWN)
    shutil.copytree(OWN, tmp_path / "a" / "plain")
    shutil.copytree(OWN, tmp_path / "b" / "plain")
    with pytest.raises(RunError, match="another run given exports as"):
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

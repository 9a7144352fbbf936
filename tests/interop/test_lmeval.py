"""lm-eval's --log_samples output imported: the committed logs lm-eval 0.4.13 wrote here
(tests/fixtures/harness/lm-eval/README.md) become run directories whose accuracy is lm-eval's own."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import lingdiag
from typer.testing import CliRunner

from lingdiag.cli import app
from lingdiag.errors import DatasetError, RunError
from lingdiag.interop import lmeval
from lingdiag.interop.reread import GAVE, UNREAD, reread
from lingdiag.interop.runs import import_all, write_run
from lingdiag.reading import load_run
from lingdiag.records import UNPARSED, ScoreOutput, TextOutput
from lingdiag.rundir import RunStore, run_state

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "harness" / "lm-eval" / "logs" / "smollm2-135m"
RESULTS = next(LOGS.glob("results_*.json"))
NLI = ["True", "False", "Neither"]
runner = CliRunner()


def _samples(task: str) -> list[dict[str, Any]]:
    path = next(LOGS.glob(f"samples_{task}_*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines()]


def _imported(tmp_path: Path) -> dict[str, Path]:
    roots = import_all(lmeval.read(RESULTS, NLI), tmp_path / "out")
    return {root.name: root for root in roots}


def test_multiple_choice_accuracy_is_lm_evals_acc_and_each_answer_its_argmax(tmp_path: Path) -> None:
    runs = _imported(tmp_path)
    reported = json.loads(RESULTS.read_text())["results"]
    for task in ("lingdiag_pairs", "lingdiag_nli_mc"):
        run = load_run(runs[task])
        assert run.state is not None and run.state.phase.value == "finished"
        assert run.rows[0].metrics["accuracy"] == reported[task]["acc,none"]  # exactly, not approximately
        by_id = {r.item_id: r for r in run.records}
        samples = _samples(task)
        assert len(by_id) == len(samples)
        for s in samples:
            r = by_id[str(s["doc_id"])]
            lls = [float(v[0]) for v in s["filtered_resps"]]
            choices = [a["arg_1"][1:] for a in s["arguments"].values()]
            assert r.label == choices[lls.index(max(lls))]  # lm-eval's argmax, read off its log
            assert r.correct == bool(s["acc"])
            assert [o.logprob for o in r.outputs if isinstance(o, ScoreOutput)] == lls
            assert r.fields["doc"] == s["doc"] and r.fields["choices"] == choices
    meta = RunStore(runs["lingdiag_pairs"]).read_meta()
    assert meta.imported is not None and meta.imported.harness is not None
    h = meta.imported.harness
    assert (h.name, h.version, h.output_type) == ("lm-eval", "0.4.13", "multiple_choice")
    assert h.task_hash == json.loads(RESULTS.read_text())["task_hashes"]["lingdiag_pairs"]
    assert h.model_args == {"pretrained": "/root/.cache/lingdiag/models/smollm2-135m", "dtype": "float32"}
    assert h.reported == {"acc": 1.0}
    assert meta.model == "smollm2-135m"


def test_generate_until_reread_lists_the_disagreements_with_both_accuracies(tmp_path: Path) -> None:
    runs = _imported(tmp_path)
    [result] = reread(runs["lingdiag_nli_gen"])
    reported = json.loads(RESULTS.read_text())["results"]["lingdiag_nli_gen"]["exact_match,flexible"]
    assert result.accuracy_harness == reported
    samples = {str(s["doc_id"]): s for s in _samples("lingdiag_nli_gen")}
    # lm-eval's regex takes the first label it finds: an answer echoing the three options ("True, False or
    # Neither") is read as True by it and as no answer by lingdiag.
    echoed = [d for d in result.disagreements if d.kind == GAVE]
    assert echoed and all(d.harness in NLI and d.lingdiag.startswith(UNPARSED) for d in echoed)
    assert any("True, False or Neither" in samples[d.item_id]["resps"][0][0] for d in echoed)
    unread = [d for d in result.disagreements if d.kind == UNREAD]
    assert all(samples[d.item_id]["filtered_resps"][0] == d.harness == "[invalid]" for d in unread)
    right = sum(samples[k]["target"] == r.label for k, r in
                ((r.item_id, r) for r in RunStore(runs["lingdiag_nli_gen"]).load_records()))
    assert result.accuracy_lingdiag == right / len(samples)
    assert result.accuracy_lingdiag != result.accuracy_harness
    record = RunStore(runs["lingdiag_nli_gen"]).load_records()[0]
    assert isinstance(record.outputs[0], TextOutput)
    assert record.outputs[0].text == samples[record.item_id]["resps"][0][0]
    assert record.detail["harness"]["answer"] == samples[record.item_id]["filtered_resps"][0]
    assert record.detail["harness"]["metrics"] == {"exact_match": samples[record.item_id]["exact_match"]}
    out = runner.invoke(app, ["reread", str(runs["lingdiag_nli_gen"])])
    assert out.exit_code == 0, out.output
    assert f"accuracy lm-eval {reported:.3f}, lingdiag {result.accuracy_lingdiag:.3f}" in out.output


def test_the_cli_imports_a_directory_of_logs_with_progress_and_resumes(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(LOGS, logs / "a")
    out = runner.invoke(app, ["import", "lm-eval", str(logs), "--out", str(tmp_path / "runs"), "--choices",
                              "True,False,Neither"])
    assert out.exit_code == 0, out.output
    assert "[3/3] " in out.output and "lingdiag_pairs, 8 items, accuracy 8/8" in out.output
    again = runner.invoke(app, ["import", "lm-eval", str(logs), "--out", str(tmp_path / "runs"), "--choices",
                                "True,False,Neither"])
    assert again.exit_code == 0 and again.output.count("already imported") == 3
    for run in (tmp_path / "runs" / "smollm2-135m").iterdir():
        assert run_state(run).phase.value == "finished"


def _broken(tmp_path: Path, task: str, edit: Callable[[str], str]) -> Path:
    logs = tmp_path / "logs"
    shutil.copytree(LOGS, logs)
    path = next(logs.glob(f"samples_{task}_*.jsonl"))
    path.write_text(edit(path.read_text()))
    return next(logs.glob("results_*.json"))


@pytest.mark.parametrize(("edit", "where"), [
    (lambda t: t[: len(t) - 40], "line 8: not a JSON line (truncated?)"),
    (lambda t: t.replace('"target": "0", ', "", 1), "line 1, field 'target'"),
    (lambda t: t + t.splitlines()[0] + "\n", "line 9, field 'doc_id': doc_id 0 (filter 'none') repeats line 1"),
    (lambda t: t.replace('"arg_1": " The cat sleeps on the mat."', '"arg_1": 3', 1),
     "line 1, field 'arguments': the choices cannot be recovered"),
    (lambda t: t.replace('"doc_id": 0,', '"doc_id": "zero",', 1), "line 1, field 'doc_id'"),
])
def test_bad_samples_are_one_line_naming_file_line_and_field_and_nothing_is_written(
        tmp_path: Path, edit: Callable[[str], str], where: str) -> None:
    results = _broken(tmp_path, "lingdiag_pairs", edit)
    with pytest.raises(DatasetError) as e:
        import_all(lmeval.read(results, NLI), tmp_path / "out")
    assert where in str(e.value) and "samples_lingdiag_pairs_" in str(e.value) and "\n" not in str(e.value)
    assert not (tmp_path / "out").exists()
    out = runner.invoke(app, ["import", "lm-eval", str(results), "--out", str(tmp_path / "out2"), "--choices",
                              "True,False,Neither"])
    assert isinstance(out.exception, DatasetError) and where in str(out.exception)
    assert not any(p.name == "lingdiag_pairs" for p in (tmp_path / "out2").rglob("*"))


def test_the_command_line_says_a_truncated_log_in_one_line_and_exits_2(tmp_path: Path) -> None:
    results = _broken(tmp_path, "lingdiag_nli_mc", lambda t: t[: len(t) - 40])
    done = lingdiag(tmp_path, "import", "lm-eval", str(results), "--out", "runs", "--choices", "True,False,Neither")
    assert done.returncode == 2, done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert "samples_lingdiag_nli_mc_" in line and "line 6: not a JSON line (truncated?)" in line
    assert "Traceback" not in done.stderr
    # A results file's tasks are all read before any is written: none of them is there.
    assert not (tmp_path / "runs").exists()


def test_unknown_version_and_missing_choices_are_refused(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(LOGS, logs)
    results = next(logs.glob("results_*.json"))
    with pytest.raises(DatasetError, match="field 'doc_to_choice'.*give them with --choices"):
        lmeval.read(results)
    data = json.loads(results.read_text())
    data["lm_eval_version"] = "0.5.0"
    results.write_text(json.dumps(data))
    with pytest.raises(DatasetError, match=r"field 'lm_eval_version': lm-eval version '0.5.0' is not one"):
        lmeval.read(results, NLI)
    del data["configs"]
    results.write_text(json.dumps(data))
    with pytest.raises(DatasetError, match="field 'configs'"):
        lmeval.read(results, NLI)


def test_a_run_directory_is_never_half_written_over_an_existing_one(tmp_path: Path) -> None:
    [run, *_] = lmeval.read(RESULTS, NLI)
    target = tmp_path / "run"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    with pytest.raises(RunError, match="already exists and is not empty"):
        write_run(target, run)
    assert [p.name for p in target.iterdir()] == ["notes.txt"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]

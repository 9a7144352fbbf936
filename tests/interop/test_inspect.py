"""inspect's logs imported with inspect's own reader: the committed logs inspect_ai 0.3.285 wrote here
(tests/fixtures/harness/inspect/README.md). inspect_ai is the inspect extra, in the tested lock and
`make install`: these tests do not skip without it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from inspect_ai.log import read_eval_log, write_eval_log

from lingdiag.errors import DatasetError
from lingdiag.interop import eee, inspect_log
from lingdiag.interop.reread import UNREAD, reread
from lingdiag.interop.runs import import_all
from lingdiag.reading import load_run
from lingdiag.rundir import RunStore

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "harness" / "inspect" / "logs"
CHOICE = next(LOGS.glob("*nli-choice*.eval"))
WORDS = next(LOGS.glob("*nli-words*.eval"))
NLI = ["True", "False", "Neither"]


def test_the_harness_accuracy_is_inspects_score_and_the_answers_are_reread(tmp_path: Path) -> None:
    roots = import_all([run for log in (CHOICE, WORDS) for run in inspect_log.read(log, NLI)], tmp_path)
    for root, log_file in zip(roots, (CHOICE, WORDS), strict=True):
        log = read_eval_log(str(log_file))
        assert log.results is not None
        score = log.results.scores[0].metrics["accuracy"].value
        run = load_run(root)
        assert run.rows[0].metrics["harness_accuracy"] == score
        assert run.meta.imported is not None and run.meta.imported.harness is not None
        assert run.meta.imported.harness.reported["accuracy"] == score
        assert run.meta.imported.harness.generate_config == {"max_tokens": 24, "seed": 0}
        assert log.samples is not None
        by_id = {r.item_id: r for r in run.records}
        for s in log.samples:
            r = by_id[str(s.id)]
            assert r.outputs[0].text == s.output.completion  # type: ignore[union-attr]
            assert r.detail["harness"]["answer"] == (s.scores or {})[log.results.scores[0].name].answer
            assert r.gold == s.target
    # SmolLM2 answers "A) True" to every multiple-choice sample: inspect's choice() reads no answer, lingdiag A.
    [choice] = reread(roots[0])
    assert choice.accuracy_harness == 0.0 and choice.accuracy_lingdiag == 0.5
    assert choice.count(UNREAD) == 4 and {d.lingdiag for d in choice.disagreements} == {"A"}
    [words] = reread(roots[1])
    assert words.accuracy_harness == words.accuracy_lingdiag == 0.5 and not words.disagreements
    assert RunStore(roots[0]).read_meta().model == "smollm2-135m"


def test_a_task_without_choices_needs_them_given(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"row 1, field 'choices': the choices cannot be recovered"):
        inspect_log.read(WORDS)


def test_a_foreign_or_damaged_log_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.eval"
    bad.write_bytes(CHOICE.read_bytes()[:3000])
    with pytest.raises(DatasetError, match="bad.eval: not an inspect log inspect's reader can read") as e:
        inspect_log.read(bad, NLI)
    assert "\n" not in str(e.value)
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    with pytest.raises(DatasetError, match="other.json: not an inspect log"):
        inspect_log.read(other, NLI)


def _edited(tmp_path: Path, name: str, edit: Callable[[Any], None]) -> Path:
    """The choice log with its second sample edited, written back by inspect's own writer as a .json log."""
    log = read_eval_log(str(CHOICE))
    assert log.samples is not None
    edit(log.samples[1])
    out = tmp_path / name
    write_eval_log(log, str(out), format="json")
    return out


def test_two_models_in_one_log_and_a_sample_without_target_are_refused(tmp_path: Path) -> None:
    as_json = _edited(tmp_path, "same.json", lambda s: None)
    assert load_run(import_all(inspect_log.read(as_json, NLI), tmp_path / "runs")[0]).rows[0].metrics["n"] == 4
    two = _edited(tmp_path, "two.json", lambda s: setattr(s.output, "model", "other-model"))
    with pytest.raises(DatasetError, match=r"two.json, row 2, field 'output.model': answered by 'other-model'"):
        inspect_log.read(two, NLI)
    no_target = _edited(tmp_path, "no-target.json", lambda s: setattr(s, "target", ""))
    with pytest.raises(DatasetError, match=r"no-target.json, row 2, field 'target': the sample has no target"):
        inspect_log.read(no_target, NLI)
    twice = _edited(tmp_path, "twice.json", lambda s: setattr(s, "id", "n0"))
    with pytest.raises(DatasetError, match=r"twice.json, row 2, field 'id': sample 'n0' repeats sample 1"):
        inspect_log.read(twice, NLI)
    assert not (tmp_path / "out").exists()


def test_an_imported_inspect_run_exports_valid_eee_and_comes_back_with_its_accuracy(tmp_path: Path) -> None:
    schemas = LOGS.parents[2] / "eee"
    aggregate, instance = (jsonschema.Draft7Validator(json.loads((schemas / name).read_text()))
                           for name in ("eval.schema.json", "instance_level_eval.schema.json"))
    roots = import_all([run for log in (CHOICE, WORDS) for run in inspect_log.read(log, NLI)], tmp_path / "in")
    for root in roots:
        record, samples = eee.export([root], tmp_path / "eee" / root.name)
        aggregate.validate(json.loads(record.read_text()))
        for line in samples.read_text().splitlines():
            instance.validate(json.loads(line))
        assert json.loads(record.read_text())["eval_library"]["name"] == "inspect_ai"
        [back] = import_all(eee.read(record), tmp_path / "back" / root.name)
        assert load_run(back).rows[0].metrics["accuracy"] == load_run(root).rows[0].metrics["accuracy"]

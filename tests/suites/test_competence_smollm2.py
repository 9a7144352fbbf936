"""--scoring loglik on the real embedded SmolLM2, for both label suites: the records carry every
label's log-likelihood after the prompt generation was given, the label is their argmax, and the
competence join counts the records as a hand count does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lingdiag.analysis.competence import join
from lingdiag.config import RunConfig
from lingdiag.engine.run import evaluate
from lingdiag.records import ItemRecord, ScoreOutput

pytestmark = pytest.mark.slow

CASES = {
    "imperfective": ({"strategy": ["zero-shot"]}, {"max_new_tokens": 8}, "zero-shot",
                     {"True": "True", "False": "False", "Unknown": "Unknown"}),
    "cxnli": ({"exp": ["1"], "setting": ["zero"]}, {}, "exp1/zero/variation-2",
              {"entailment": "0", "neutral": "1", "contradiction": "2"}),
}


@pytest.mark.parametrize("suite", list(CASES))
def test_loglik_condition_and_its_join(suite: str, smollm2: Any, tmp_path: Path) -> None:
    axes, options, prompted, answers = CASES[suite]
    cfg = RunConfig(suite=suite, model="smollm2-135m", limit=4, axes={**axes, "scoring": ["generate", "loglik"]},
                    options=options)
    result = evaluate(cfg, smollm2, tmp_path / "run")
    records = [ItemRecord.from_json(x) for x in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    said = {r.item_id: r for r in records if r.condition == prompted}
    comp = {r.item_id: r for r in records if r.condition == f"{prompted}/loglik"}
    assert len(said) == len(comp) == 4
    for item_id, r in comp.items():
        lls = r.detail["loglik"]
        assert r.axes["scoring"] == "loglik" and r.axes["normalisation"] == "total"
        assert sorted(lls) == sorted(answers) and r.detail["answers"] == answers  # records sort their keys
        assert r.label == max(lls, key=lls.__getitem__) and r.correct == (r.label == r.gold)
        scores = [o.logprob for o in r.outputs if isinstance(o, ScoreOutput)]
        assert scores == [lls[label] for label in answers]  # request order
        # The same chat turns as the prompted condition, each label's answer word as the continuation.
        assert [p["continuation"] for p in r.prompts] == list(answers.values())
        assert all(p["messages"] == said[item_id].prompts[0] for p in r.prompts)
    # Accuracy etc. come from the suite's own metrics, so the condition is a table row.
    assert f"{prompted}/loglik" in result.metrics and f"{prompted}/loglik" in result.table
    (j,) = join("smollm2-135m", records)
    ids = sorted(comp)
    right = [(bool(comp[i].correct), bool(said[i].correct)) for i in ids]
    assert (j.n, j.both, j.knows_not_says, j.says_not_knows, j.neither) == (
        4, right.count((True, True)), right.count((True, False)), right.count((False, True)),
        right.count((False, False)))
    assert j.agreement == sum(comp[i].label == said[i].label for i in ids) / 4

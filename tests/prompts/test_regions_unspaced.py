"""Region surprisal in a script without spaces: regions abut, tokens meet them by character offsets."""

from __future__ import annotations

import math
from pathlib import Path

from lingdiag.config import RunConfig
from lingdiag.engine.run import run
from lingdiag.models.mock import MockBackend
from lingdiag.prompts import regions
from lingdiag.records import ItemRecord, LoglikelihoodRequest


def test_chinese_regions_take_the_tokens_their_characters_say() -> None:
    joined = regions.join(["他", "在", "吃", "饭了"], separator="")
    assert joined.text == "他在吃饭了" and joined.spans == ((0, 1), (1, 2), (2, 3), (3, 5))
    # A tokenizer that merges 在吃 into one token and splits 饭了: the merged token belongs to 在's region.
    spans = [(0, 1), (1, 3), (3, 4), (4, 5)]
    assert regions.assign(joined, spans) == [0, 1, 3, 3]
    bits = regions.surprisals(joined, spans, [-math.log(2), -2 * math.log(2), -math.log(2), -3 * math.log(2)])
    assert bits == [1.0, 2.0, 0.0, 4.0]
    assert regions.join(["他", "在"]).text == "他 在"  # SyntaxGym's default stays spaced


def test_suite_file_in_chinese_joins_regions_by_nothing(tmp_path: Path) -> None:
    (tmp_path / "items.csv").write_text("id,subj\n1,他\n", encoding="utf-8")
    (tmp_path / "zh.yaml").write_text("""
name: zh-regions
items: {data: items.csv, fields: [subj]}
defaults:
  language: zh
conditions:
  format:
    values:
      regions:
        regions:
          conditions:
            good: ["{{ subj }}", "在吃", "饭"]
            bad: ["{{ subj }}", "了吃", "饭"]
          predictions: ["(2;%good%) < (2;%bad%)"]
""", encoding="utf-8")
    seen: list[str] = []

    def score(r: LoglikelihoodRequest) -> float:
        seen.append(r.continuation)
        return -1.0

    config = RunConfig(suite=str(tmp_path / "zh.yaml"), model="mock", dataset="builtin")
    result = run(config, tmp_path / "run", backend=MockBackend(loglik_fn=score), cache=False)
    assert "他在吃饭" in seen and "他了吃饭" in seen and not any(" " in s for s in seen)
    (record,) = [ItemRecord.from_json(x) for x in (result.out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert record.prompts[0]["continuation"] == "他在吃饭"

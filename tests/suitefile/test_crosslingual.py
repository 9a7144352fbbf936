"""The cross-lingual ImperfectiveNLI example: aligned translations run per language with each
language's prompt and label words, and the report compares languages (per language, and paired
over aligned items)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from lingdiag.config import RunConfig
from lingdiag.loading import load_run
from lingdiag.models.mock import MockBackend
from lingdiag.parse.labels import LANGUAGES
from lingdiag.records import GenerationRequest, ItemRecord
from lingdiag.report.html import render_html
from lingdiag.report.tables import tables
from lingdiag.run import run
from lingdiag.suitefile.schema import AnswerLanguageCode

EXAMPLE = Path(__file__).parents[2] / "examples" / "suites" / "imperfective-crosslingual.yaml"


def _answer(r: GenerationRequest) -> str:
    """English says True to everything; Chinese answers in full-width Chinese, right on activities
    only; German is always right except on 'bauen'."""
    prompt = r.messages[-1].content
    if "前提" in prompt:
        accomplishment = "一" in prompt  # its objects are counted: 一 + classifier
        return "答案：不确定" if accomplishment else "答案：对"
    if "Prämisse" in prompt:
        return "Antwort: wahr" if "Kuchen" in prompt or "spazieren" in prompt else "Die Antwort ist unbekannt."
    return "True"


def test_lexicon_has_24_aligned_items_per_language() -> None:
    text = (EXAMPLE.parent / "imperfective-crosslingual-lexicon.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    by_lang: dict[str, set[str]] = {}
    for row in rows:
        by_lang.setdefault(row["language"], set()).add(row["align"])
    assert set(by_lang) == {"en", "zh", "de"} and all(len(a) == 24 for a in by_lang.values())
    assert by_lang["en"] == by_lang["zh"] == by_lang["de"]
    zh = {r["align"]: r for r in rows if r["language"] == "zh"}
    assert zh["acc-build"]["progressive"].startswith("在") and "了" in zh["acc-build"]["perfective"]


def test_languages_run_apart_and_compare_paired(tmp_path: Path) -> None:
    config = RunConfig(suite=str(EXAMPLE), model="mock", dataset="builtin")
    result = run(config, tmp_path / "run", backend=MockBackend(generate_fn=_answer), cache=False)
    assert {c: m["n"] for c, m in result.metrics.items()} == {"en": 24, "zh": 24, "de": 24}
    records = [ItemRecord.from_json(x) for x in (result.out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    zh = [r for r in records if r.condition == "zh"]
    assert {r.tags["language"] for r in zh} == {"zh"}
    assert any("前提：安娜在建一座房子。\n假设：安娜建了一座房子。" in r.prompts[0][-1]["content"] for r in zh)
    assert all(r.detail["language"] == "zh" and r.detail["normalisation"] == "NFKC" for r in zh)
    assert result.metrics["zh"]["accuracy"] == 1.0 and result.metrics["en"]["acc_activity"] == 1.0
    assert result.metrics["de"]["unparsed_rate"] == 0.0
    runs = [load_run(result.out)]
    text = tables(runs)
    assert "**Across languages: accuracy per language**" in text
    line = next(x for x in text.splitlines() if x.startswith("| en (en) vs zh (zh)"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[2] == "24" and cells[7:9] == ["0", "12"]  # zh alone right on the 12 accomplishments
    assert float(cells[9]) < 0.001
    page = render_html(text, runs)
    assert "Across languages" in page and "unicode-bidi:plaintext" in page


def test_schema_languages_are_the_parsers() -> None:
    assert set(AnswerLanguageCode.__args__) == set(LANGUAGES)  # type: ignore[attr-defined]
    json.dumps(sorted(LANGUAGES))


def test_items_export_for_native_speaker_review(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from lingdiag.cli import app

    result = CliRunner().invoke(app, ["human", "export", str(EXAMPLE), "--study", "quality", "--out",
                                      str(tmp_path / "study"), "--per-list", "48"])
    assert result.exit_code == 0, result.output
    study = json.loads((tmp_path / "study" / "study.json").read_text(encoding="utf-8"))
    texts = {s["text"] for s in study["stimuli"]}
    assert {"在建一座房子", "建了一座房子", "baute gerade ein Haus", "hat ein Haus gebaut"} <= texts
    assert len([s for s in study["stimuli"] if s["item_id"].startswith("zh-")]) == 48
    assert "在建一座房子" in (tmp_path / "study" / "platform.csv").read_text(encoding="utf-8")

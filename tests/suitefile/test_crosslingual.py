"""The cross-lingual ImperfectiveNLI example: aligned translations run per language with each
language's prompt and label words, and the report compares languages (per language, and paired
over aligned items)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from lingdiag.config import RunConfig
from lingdiag.engine.run import run
from lingdiag.models.mock import MockBackend
from lingdiag.reading import load_run
from lingdiag.records import GenerationRequest, ItemRecord
from lingdiag.report.html import render_html
from lingdiag.report.tables import tables

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
    assert "<strong>Across languages: accuracy per language</strong>" in page and "unicode-bidi:plaintext" in page
    body = page[page.index("<body"):]
    assert "**" not in body and "`" not in body.split("<script")[0], "Markdown marks shown as text"  # issue 45.7


RUSSIAN = """
name: ru-nli
items:
  data: items.json
  id: id
  fields: [premise]
  gold: gold
defaults:
  labels: ["True", "False"]
  parser: nli-label
conditions:
  language:
    values:
      ru:
        language: ru
        aliases: {"верно": "True", "неверно": "False"}
        %s
        user: "{{ premise }} Ответ:"
"""
RU_WORDS = "cues: [ответ]; copulas: ['—']; negations: [не, нет]; questions: [ли]; reasons: [потому]"


def _russian(tmp_path: Path, words: str) -> Path:
    (tmp_path / "items.json").write_text(json.dumps([{"id": str(k), "premise": "Анна строила дом.", "gold": "False"}
                                                     for k in range(4)]), encoding="utf-8")
    path = tmp_path / "ru.yaml"
    path.write_text(RUSSIAN % words.replace("; ", "\n        "), encoding="utf-8")
    return path


def test_any_language_is_declarable_with_its_words(tmp_path: Path) -> None:
    """``language: ru`` (no words built in) reads answers by the words the file gives, never by English's."""
    answers = iter(["Ответ — неверно.", "Верно ли это? Не знаю.", "Неверно, потому что дом не достроен.",
                    "Верно не это."])
    config = RunConfig(suite=str(_russian(tmp_path, RU_WORDS)), model="mock", dataset="builtin")
    result = run(config, tmp_path / "run", backend=MockBackend(generate_fn=lambda r: next(answers)), cache=False)
    records = [ItemRecord.from_json(x) for x in (result.out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    # a parsed answer names the rule that located it, an unparsed one the reason it was refused
    assert [(r.label, r.detail.get("rule") or r.detail["unparsed"]) for r in records] == [
        ("False", "cue"), ("unparsed", "questioned"), ("False", "leading"), ("unparsed", "negated")]
    assert all(r.detail["language"] == "ru" for r in records)


def test_a_language_without_words_is_one_line(tmp_path: Path) -> None:
    from lingdiag.errors import ConfigError
    from lingdiag.suitefile import load_suite

    for words, missing in (("", "cues and negations"), ("cues: [ответ]", "negations")):
        try:
            load_suite(_russian(tmp_path, words))
        except ConfigError as e:
            assert "ru.yaml" in str(e) and "language 'ru'" in str(e) and f"give its {missing}" in str(e)
            assert "\n" not in str(e)
        else:
            raise AssertionError("a language with no words was accepted")


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


def test_two_items_of_one_language_sharing_an_align_id_are_refused(tmp_path: Path) -> None:
    """``suite check`` and ``run`` name the file, both items and the id; nothing is silently dropped."""
    from lingdiag.errors import DatasetError
    from lingdiag.suitefile.check import check

    text = (EXAMPLE.parent / "imperfective-crosslingual-lexicon.csv").read_text(encoding="utf-8").splitlines()
    header, rows = text[0], text[1:]
    zh = [r for r in rows if ",zh," in f",{r},"]
    twin = zh[1].split(",")
    twin[header.split(",").index("align")] = zh[0].split(",")[header.split(",").index("align")]
    (tmp_path / "imperfective-crosslingual-lexicon.csv").write_text("\n".join([header, *rows, ]).replace(
        zh[1], ",".join(twin)), encoding="utf-8")
    suite = tmp_path / "x.yaml"
    suite.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    align = zh[0].split(",")[header.split(",").index("align")]
    for attempt in (lambda: check(suite), lambda: run(RunConfig(suite=str(suite), model="mock", dataset="builtin"),
                                                     tmp_path / "run", backend=MockBackend(generate_fn=_answer),
                                                     cache=False)):
        try:
            attempt()
        except DatasetError as e:
            message = str(e)
            assert "imperfective-crosslingual-lexicon.csv" in message and f"share align id {align!r}" in message
            assert "of language 'zh'" in message and "\n" not in message
        else:
            raise AssertionError("two zh items with one align id were accepted")


def test_report_refuses_records_sharing_an_align_id(tmp_path: Path) -> None:
    """A run made before the refusal (or edited) cannot be reported with one of two twins dropped."""
    import pytest

    from lingdiag.errors import RunError

    config = RunConfig(suite=str(EXAMPLE), model="mock", dataset="builtin")
    result = run(config, tmp_path / "run", backend=MockBackend(generate_fn=_answer), cache=False)
    lines = (result.out / "items.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(x) for x in lines]
    zh = [k for k, r in enumerate(records) if r["condition"] == "zh"]
    records[zh[1]]["tags"]["align"] = records[zh[0]]["tags"]["align"]
    (result.out / "items.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                                            encoding="utf-8")
    with pytest.raises(RunError, match=rf"items {records[zh[0]]['item_id']!r} and {records[zh[1]]['item_id']!r} "
                                       rf"share align id {records[zh[0]]['tags']['align']!r}"):
        tables([load_run(result.out)])

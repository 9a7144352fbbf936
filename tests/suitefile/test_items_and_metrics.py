"""Suite-file items from ``datasets`` (offline: a dataset saved by the library itself, and a local
data directory), the rating and free-text parsers, and correlations with a data column."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from lingdiag import RunConfig, evaluate
from lingdiag.models.mock import MockBackend
from lingdiag.parse.labels import language
from lingdiag.records import GenerationRequest, LoglikelihoodRequest
from lingdiag.suitefile.check import check
from lingdiag.suitefile.parsers import PARSERS, AnswerFormat

ROWS = [{"id": f"s{k}", "sentence": f"Sentence number {k}.", "human": h, "kind": "a" if k % 2 else "b"}
        for k, h in enumerate([1.5, 6.0, 3.0, 9.0, 4.5, 7.0], 1)]


def suite(tmp_path: Path, data: str, parser: str = "rating", extra: dict[str, Any] | None = None) -> Path:
    items = {"data": data, "fields": ["sentence"], "tags": {"kind": "kind", "human": "human"}}
    doc = {"name": "ratings", "items": items,
           "conditions": {"prompt": {"values": {"rate": {"user": "Rate 1-10: {{ sentence }}", "parser": parser}}}},
           "metrics": {"rho": {"correlation": {"column": "human", "score": "rating"}},
                       "r": {"correlation": {"column": "human", "method": "pearson", "score": "label"}}}}
    doc.update(extra or {})
    path = tmp_path / "ratings.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture()
def offline_hf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_items_from_a_dataset_saved_by_datasets(tmp_path: Path, offline_hf: None) -> None:
    import datasets

    datasets.Dataset.from_list(ROWS).save_to_disk(str(tmp_path / "saved"))
    report = check(suite(tmp_path, "hf:./saved"))
    assert report.n_items == 6 and report.requests == 6
    items = report.suite.load("builtin").items
    assert items[1].fields == {"sentence": "Sentence number 2."} and items[1].tags == {"kind": "b", "human": "6.0"}


def test_items_from_a_local_data_directory_through_load_dataset(tmp_path: Path, offline_hf: None) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    report = check(suite(tmp_path, "hf:./dir:test"))
    assert [it.id for it in report.suite.load("builtin").items] == [r["id"] for r in ROWS]


def test_a_missing_hub_dataset_is_one_line(tmp_path: Path, offline_hf: None) -> None:
    from lingdiag.errors import DatasetError

    with pytest.raises(DatasetError) as e:
        check(suite(tmp_path, "hf:nobody/nothing-here"))
    assert str(e.value).startswith("hf:nobody/nothing-here: cannot load with datasets: ") and "\n" not in str(e.value)


def test_ratings_correlate_with_a_data_column(tmp_path: Path) -> None:
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    path = suite(tmp_path, "items.jsonl")
    # The model's rating is the item number: ranks 1..6 against human 1.5, 6, 3, 9, 4.5, 7.
    ratings = {r["sentence"]: str(k) for k, r in enumerate(ROWS, 1)}
    ratings[ROWS[5]["sentence"]] = "no idea"  # unparsed: left out of the correlation

    def answer(req: GenerationRequest) -> str:
        return ratings[req.messages[-1].content.removeprefix("Rate 1-10: ")]

    result = evaluate(RunConfig(suite=str(path), model="mock"), MockBackend(answer), tmp_path / "run")
    m = result.metrics["rate"]
    from scipy.stats import pearsonr, spearmanr

    xs, ys = [1, 2, 3, 4, 5], [1.5, 6.0, 3.0, 9.0, 4.5]
    assert m["rho"] == pytest.approx(spearmanr(xs, ys).statistic)
    assert m["r"] == pytest.approx(pearsonr(xs, ys).statistic)
    assert len(m["rho_ci95"]) == 2 and "r_ci95" not in m and m["n_unparsed"] == 1


@pytest.mark.parametrize(("parser", "text", "fmt", "label"), [
    ("rating", "I'd say 7 out of 10.", AnswerFormat(), "7"),
    ("rating", "Sentence 1 is fine", AnswerFormat(), "unparsed"),
    ("nli-label", '{"label": "Unknown"}', AnswerFormat(("True", "False", "Unknown")), "Unknown"),
    ("nli-label", "True or False?", AnswerFormat(("True", "False", "Unknown")), "unparsed"),
    ("choice-letter", "(B) for an hour", AnswerFormat(options=(("A", "in"), ("B", "for"))), "for"),
    ("choice-letter", "C", AnswerFormat(options=(("A", "in"), ("B", "for"))), "unparsed"),
    ("free-text", "  Yes.\nBecause...", AnswerFormat(("yes", "no")), "yes"),
    ("free-text", "maybe", AnswerFormat(("yes", "no")), "unparsed"),
    ("free-text", "**Paris**", AnswerFormat(), "Paris"),
])
def test_parsers(parser: str, text: str, fmt: AnswerFormat, label: str) -> None:
    assert PARSERS[parser](text, fmt)[0] == label


@pytest.mark.parametrize(("parser", "text", "fmt", "detail"), [
    ("rating", "Sentence 1 is fine", AnswerFormat(), {"rating": -1, "unparsed": "no-rating"}),
    ("rating", "9", AnswerFormat(("1", "2")), {"rating": 9, "unparsed": "rating-not-a-label"}),
    ("nli-label", "True or False?", AnswerFormat(("True", "False")), {"unparsed": "echoed-list"}),
    ("choice-letter", "B or C", AnswerFormat(options=(("A", "in"), ("B", "for"), ("C", "at"))),
     {"letter": None, "unparsed": "echoed-list"}),
    ("choice-letter", "Antwort: b", AnswerFormat(options=(("A", "in"), ("B", "for"))), {"letter": "B", "rule": "cue"}),
    ("choice-letter", "答案是C，因为……", AnswerFormat(options=(("A", "in"), ("C", "at")), language=language("zh")),
     {"letter": "C", "rule": "cue"}),
    ("free-text", "maybe", AnswerFormat(("yes", "no")), {"unparsed": "not-a-label"}),
    ("free-text", " \n", AnswerFormat(), {"unparsed": "empty"}),
])
def test_every_parser_names_its_refusals(parser: str, text: str, fmt: AnswerFormat, detail: dict[str, object]) -> None:
    assert PARSERS[parser](text, fmt)[1] == detail


def test_loglik_choices_after_the_chat_prompt(tmp_path: Path) -> None:
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    path = suite(tmp_path, "items.jsonl", extra={
        "metrics": {"yes_a": {"rate": {"label": "yes", "where": {"kind": "a"}}}},
        "conditions": {"prompt": {"values": {"ll": {
            "system": "Judge.", "user": "Is this fine? {{ sentence }}",
            "loglik": {"choices": {"yes": "Yes", "no": "No"}, "normalisation": "per-token"}}}}}})
    suite_ = check(path).suite
    item = suite_.load("builtin").items[0]
    (cond,) = suite_.conditions(suite_.load("builtin"), {"prompt": ["ll"]}, suite_.parse_options({}), 0)
    requests = cond.strategy.render(item)
    assert [(r.context, r.continuation, [m.content for m in r.messages]) for r in requests
            if isinstance(r, LoglikelihoodRequest)] == [
        ("", "Yes", ["Judge.", "Is this fine? Sentence number 1."]),
        ("", "No", ["Judge.", "Is this fine? Sentence number 1."])]
    result = evaluate(RunConfig(suite=str(path), model="mock"),
                      MockBackend(None, lambda r: -1.0 if r.continuation == "Yes" else -2.0), tmp_path / "run")
    assert result.metrics["ll"]["yes_a"] == 1.0 and suite_.labels == ("yes", "no")

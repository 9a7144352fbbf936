"""``lingdiag suite check`` and ``run`` on broken suite files: one line each, naming the file, the
key path and what was expected; never a traceback.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from lingdiag.cli import app, main
from lingdiag.errors import ConfigError, ConfigErrors, DatasetError
from lingdiag.suitefile.check import check

DATA = "id,premise,hypothesis,group,label\n1,A man ran.,He ran.,A,yes\n2,A man sang.,He sang.,B,no\n3,X.,Y.,A,no\n"

GOOD: dict[str, Any] = {
    "name": "mini",
    "items": {"data": "items.csv", "fields": ["premise", "hypothesis"], "gold": "label", "tags": {"group": "group"}},
    "defaults": {"labels": ["yes", "no"], "parser": "nli-label"},
    "conditions": {"strategy": {"values": {
        "plain": {"user": "Premise: {{ premise }} Hypothesis: {{ hypothesis }}"},
        "polite": {"system": "Be careful.", "user": "Please: {{ premise }} / {{ hypothesis }}"}}}},
    "metrics": {"acc": {"accuracy": {}}, "acc_A": {"accuracy": {"where": {"group": "A"}}},
                "yes_B": {"rate": {"label": "yes", "where": {"group": "B"}}, "paired": True},
                "gap": {"difference": ["acc_A", "yes_B"]}},
    "table": {"rows": ["strategy"], "columns": ["acc", "gap", {"metric": "n", "header": "N"}]},
}


def write(tmp_path: Path, doc: object, data: str = DATA) -> Path:
    (tmp_path / "items.csv").write_text(data, encoding="utf-8")
    path = tmp_path / "suite.yaml"
    text = doc if isinstance(doc, str) else yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path


def changed(path: str, value: object) -> dict[str, Any]:
    """GOOD with the value at dotted ``path`` replaced (``...`` deletes it)."""
    import copy

    doc = copy.deepcopy(GOOD)
    *parents, last = path.split(".")
    node: Any = doc
    for key in parents:
        node = node[key]
    if value is ...:
        del node[last]
    else:
        node[last] = value
    return doc


def test_the_good_file_checks(tmp_path: Path) -> None:
    report = check(write(tmp_path, GOOD))
    assert (report.suite.name, report.n_items, report.conditions, report.requests) == (
        "mini", 3, ("plain", "polite"), 6)
    assert set(report.suite.paired_metrics) == {"yes_B"}


REGIONS: dict[str, Any] = {
    "name": "mini-regions",
    "items": {"data": "items.csv", "fields": ["premise", "hypothesis"], "tags": {"group": "group"}},
    "defaults": {"regions": {"conditions": {"match": ["{{ premise }}", "{{ hypothesis }}", "ok"],
                                            "mismatch": ["{{ hypothesis }}", "{{ premise }}", "ok"]},
                             "predictions": ["(2;%mismatch%) > (2;%match%)"]}},
    "conditions": {"measure": {"values": {"regions": {}}}},
    "metrics": {"acc": {"accuracy": {}}, "verb": {"prediction": "(2;%mismatch%) > (2;%match%)"}},
}


def regions_changed(key: str, value: object) -> dict[str, Any]:
    """REGIONS with ``defaults.regions.<key>`` replaced."""
    import copy

    doc = copy.deepcopy(REGIONS)
    doc["defaults"]["regions"][key] = value
    return doc


def test_the_good_regions_file_checks(tmp_path: Path) -> None:
    report = check(write(tmp_path, REGIONS))
    assert (report.n_items, report.requests) == (3, 3 * 2 * 8)  # every policy: 3 items, 2 sentences each
    assert report.conditions[:2] == ("regions/lingdiag", "regions/bos")
    assert [a.name for a in report.suite.axes] == ["measure", "scoring-policy"]


BROKEN = [
    # (kind, document, the error after "FILE: ")
    ("wrong type", changed("conditions.strategy.values.plain.user", ["a"]),
     "conditions.strategy.values.plain.user: Input should be a valid string (got ['a'])"),
    ("unknown key", changed("items.datta", "x.csv"),
     "items.datta: unknown key (did you mean 'data'?); valid keys: data, datasets, delimiter, fields, gold, id, "
     "review, tags"),
    ("typo'd top-level key", {**GOOD, "metrcs": {}},
     "metrcs: unknown key (did you mean 'metrics'?); valid keys: conditions, defaults, description, "
     "figures, items, metrics, name, scoring_policy, table"),
    ("missing field", changed("items.fields", ...), "items.fields: Field required"),
    ("template references an unknown field", changed("conditions.strategy.values.plain.user", "{{ premis }}"),
     "conditions.strategy.values.plain.user: template uses unknown field 'premis'; known: hypothesis, premise"),
    ("template reaches a Python attribute", changed("conditions.strategy.values.plain.user",
                                                    "{{ premise.__class__ }}"),
     "conditions.strategy.values.plain.user: template reaches attribute '__class__'; templates may use the "
     "item's fields only"),
    ("template walks to the MRO", changed("conditions.strategy.values.polite.system", "{{ ''.__class__.__mro__ }}"),
     "conditions.strategy.values.polite.system: template reaches attribute '__mro__'; templates may use the "
     "item's fields only"),
    ("template syntax", changed("conditions.strategy.values.plain.user", "{{ premise "),
     "conditions.strategy.values.plain.user: template syntax: unexpected end of template, expected 'end of "
     "print statement'."),
    ("unquoted YAML boolean as a label", changed("defaults.labels", [True, False]),
     "defaults.labels.0: Input should be a valid string (got True); YAML reads a bare yes, no, on, off, true or "
     "false as a boolean: quote it (\"yes\")"),
    ("unknown parser", changed("defaults.parser", "nli"),
     "defaults.parser: Input should be 'nli-label', 'rating', 'choice-letter' or 'free-text' (got 'nli')"),
    ("unknown label in a metric", changed("metrics.yes_B.rate.label", "maybe"),
     "metrics.yes_B.rate.label: unknown label 'maybe'; labels: yes, no"),
    ("metric references an unknown metric", changed("metrics.gap.difference", ["acc_A", "acc_Z"]),
     "metrics.gap.difference.1: unknown metric 'acc_Z'; metrics: acc, acc_A, yes_B, gap"),
    ("metric references an unknown tag", changed("metrics.acc_A.accuracy.where", {"grp": "A"}),
     "metrics.acc_A.accuracy.where.grp: unknown tag; tags: group"),
    ("metric with two kinds", changed("metrics.acc", {"accuracy": {}, "rate": {"label": "yes"}}),
     "metrics.acc: a metric has exactly one of accuracy, rate, prediction, difference, correlation (found "
     "accuracy, rate)"),
    ("table names an unknown metric", changed("table.columns", ["acc", "accuracy"]),
     "table.columns.1.metric: unknown metric 'accuracy'; metrics: acc, acc_A, yes_B, gap, n, n_unparsed, "
     "unparsed_rate, n_errors"),
    ("table row is not an axis", changed("table.rows", ["style"]),
     "table.rows.0: unknown axis 'style'; axes: strategy"),
    ("bad hf: spec", changed("items.data", "hf:not a repo"),
     "items.data: 'hf:not a repo' is not hf:owner/name[:split] (or hf:./local/dir[:split])"),
    ("data file of unknown format", changed("items.data", "items.xlsx"),
     "items.data: 'items.xlsx': a data file ends in .csv, .tsv, .json, .jsonl, .parquet; a directory has no "
     "suffix (or use hf:owner/name[:split])"),
    ("condition without a parser", changed("defaults", {"labels": ["yes", "no"]}),
     "conditions: strategy=plain: no parser; one of nli-label, rating, choice-letter, free-text"),
    ("two axes set one key", changed("conditions", {
        "strategy": GOOD["conditions"]["strategy"], "tone": {"values": {"x": {"user": "{{ premise }}"}}}}),
     "conditions.tone.values.x.user: also set by axis 'strategy'; set each key in one axis (or in defaults)"),
    ("bad name", changed("name", "My Suite"), "name: String should match pattern '^[a-z0-9][a-z0-9._-]*$' "
     "(got 'My Suite')"),
    ("built-in suite's name", changed("name", "imperfective"),
     "name: 'imperfective' is a built-in suite's name; choose another"),
    ("not a mapping", "- a\n- b\n", "expected a mapping with name, items, conditions, metrics; found list"),
    ("YAML syntax", "name: [mini\n", "line 2, column 1: not valid YAML: expected ',' or ']', but got "
     "'<stream end>'"),
    ("alias bomb", "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)),
     "aliases expand to more than 100,000 nodes; refused (write the values out, or use fewer nested aliases)"),
    ("empty file", "", "empty file; expected a mapping with name, items, conditions, metrics"),
    # sentences, regions, predictions and scoring policies
    ("prediction reads an unknown condition", regions_changed("predictions", ["(2;%mismatch%) > (2;%macth%)"]),
     "defaults.regions.predictions.0: formula reads unknown condition 'macth'; conditions: match, mismatch"),
    ("prediction reads an unknown region", regions_changed("predictions", ["(5;%mismatch%) > (5;%match%)"]),
     "defaults.regions.predictions.0: formula reads region 5 of 'mismatch', which has regions 1-3"),
    ("prediction does not parse", regions_changed("predictions", ["(2;%mismatch%) >> (2;%match%)"]),
     "defaults.regions.predictions.0: prediction formula '(2;%mismatch%) >> (2;%match%)', character 17: "
     "expected a region, a number or '[', found '>'"),
    ("prediction computes no truth", regions_changed("predictions", ["(2;%mismatch%) - (2;%match%)"]),
     "defaults.regions.predictions.0: prediction formula '(2;%mismatch%) - (2;%match%)', character 1: a "
     "prediction must compare surprisals (<, >, =), not just compute a number"),
    ("prediction is Python", regions_changed("predictions", ["__import__('os').system('true')"]),
     "defaults.regions.predictions.0: prediction formula \"__import__('os').system('true')\", character 1: "
     "unexpected \"__import__('\"; expected a region like (5;%cond%), a number, [ ], &, |, <, >, =, + or -"),
    ("region template reaches a Python attribute", regions_changed("conditions", {
        "match": ["{{ premise }}", "{{ premise.__globals__ }}"], "mismatch": ["{{ premise }}"]}),
     "defaults.regions.conditions.match.1: template reaches attribute '__globals__'; templates may use the "
     "item's fields only"),
    ("region condition without regions", regions_changed("conditions", {"match": [], "mismatch": ["{{ premise }}"]}),
     "defaults.regions.conditions.match: List should have at least 1 item after validation, not 0 (got [])"),
    ("prediction metric reads an unknown region", {**REGIONS, "metrics": {"m": {"prediction": "(9;%match%) < 1"}}},
     "metrics.m.prediction.formula: formula reads region 9 of 'match', which has regions 1-3"),
    ("prediction metric without regions", changed("metrics", {"m": {"prediction": "(1;%match%) < 1"}}),
     "metrics.m.prediction: a prediction reads region surprisals; no condition has regions"),
    ("one sentence is no choice", {**REGIONS, "defaults": {"sentences": {"good": "{{ premise }}"}}},
     "defaults.sentences: Dictionary should have at least 2 items after validation, not 1 (got {'good': "
     "'{{ premise }}'})"),
    ("sentence template references an unknown field", {**REGIONS, "defaults": {"sentences": {
        "good": "{{ premise }}", "bad": "{{ hypotesis }}"}}},
     "defaults.sentences.bad: template uses unknown field 'hypotesis'; known: hypothesis, premise"),
    ("a condition scored two ways", {**REGIONS, "conditions": {"how": {"values": {
        "pairs": {"sentences": {"good": "{{ premise }}", "bad": "{{ hypothesis }}"}}}}}},
     "conditions: how=pairs: a condition is scored one way; sentences and regions are both set (set them in "
     "different values of one axis)"),
    ("unknown scoring policy", {**REGIONS, "scoring_policy": ["lingdiag", "lmeval"]},
     "scoring_policy.1: unknown scoring policy 'lmeval'; valid: lingdiag, bos, lm-eval, minicons, lingdiag+ws, "
     "bos+ws, lm-eval+ws, minicons+ws"),
    ("scoring policy for a chat prompt", {**GOOD, "scoring_policy": ["bos"]},
     "scoring_policy: no condition scores text (sentences, regions, or loglik with a context); a chat prompt's "
     "tokens are its template's"),
    ("metric kind misspelt", {**REGIONS, "metrics": {"m": {"predicton": "(1;%match%) < 1"}}},
     "metrics.m.predicton: unknown key (did you mean 'prediction'?); valid keys: accuracy, correlation, "
     "difference, paired, prediction, rate"),
]


@pytest.mark.parametrize(("kind", "doc", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_file_is_one_line_naming_file_and_key_path(tmp_path: Path, kind: str, doc: object,
                                                            message: str) -> None:
    path = write(tmp_path, doc)
    with pytest.raises(ConfigError) as e:
        check(path)
    # The problem comes first; a broken key can break what depends on it, each on a line of its own.
    lines = str(e.value).split("\n")
    assert lines[0] == f"{path}: {message}"
    assert all(line.startswith(f"{path}: ") for line in lines)


def test_check_lists_every_problem_at_once_each_on_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    doc = changed("conditions.strategy.values.plain.user", "{{ premis }}")
    doc["metrics"]["yes_B"]["rate"]["where"] = {"grup": "B"}
    doc["table"]["columns"] = [{"metric": "acc_Z"}, "n"]
    path = write(tmp_path, doc)
    expected = [f"{path}: conditions.strategy.values.plain.user: template uses unknown field 'premis'; known: "
                "hypothesis, premise",
                f"{path}: metrics.yes_B.rate.where.grup: unknown tag; tags: group",
                f"{path}: table.columns.0.metric: unknown metric 'acc_Z'; metrics: acc, acc_A, yes_B, gap, n, "
                "n_unparsed, unparsed_rate, n_errors"]
    with pytest.raises(ConfigErrors) as e:
        check(path)
    assert list(e.value.problems) == expected
    # The command line prints each as a line of its own (exit 2, no traceback).
    monkeypatch.setattr(sys, "argv", ["lingdiag", "suite", "check", str(path)])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    assert [line for line in capsys.readouterr().err.splitlines() if line] == [f"error: {x}" for x in expected]


def test_every_bare_yaml_boolean_gets_the_hint(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(GOOD, sort_keys=False).replace("- 'yes'\n", "- yes\n").replace("- 'no'\n",
                                                                                                  "- no\n"))
    with pytest.raises(ConfigErrors) as e:
        check(path)
    assert [p.split(": ", 2)[1] for p in e.value.problems] == ["defaults.labels.0", "defaults.labels.1"]
    assert all("(got " in p and 'YAML reads a bare yes, no, on, off, true or false as a boolean: quote it ("yes")'
               in p for p in e.value.problems)


def test_a_bare_boolean_label_hides_none_of_the_files_other_problems(tmp_path: Path) -> None:
    # The booleans are reported, and the checks go on with them read as written (yes, no):
    # the template's unknown field is found too, and nothing follows from reading them wrongly.
    doc = changed("conditions.strategy.values.plain.user", "{{ premis }}")
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False).replace("- 'yes'\n", "- yes\n").replace("- 'no'\n",
                                                                                                 "- no\n"))
    with pytest.raises(ConfigErrors) as e:
        check(path)
    assert [p.split(": ", 2)[1] for p in e.value.problems] == ["defaults.labels.0", "defaults.labels.1",
                                                                "conditions.strategy.values.plain.user"]


def test_a_non_utf8_file(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: not UTF-8 text (invalid continuation byte at byte 9)")):
        check(path)


BAD_DATA = [
    ("missing data file", changed("items.data", "nowhere.csv"), DATA, "{dir}/nowhere.csv: no such data file"),
    ("duplicate ids", GOOD, DATA + "2,A.,B.,A,no\n", "{dir}/items.csv, row 5, field 'id': duplicate id '2'"),
    ("missing column in a row", GOOD, "id,premise,hypothesis,group,label\n1,A.,,A,yes\n",
     "{dir}/items.csv, row 2, field 'hypothesis': missing or empty"),
    ("gold not a label", GOOD, "id,premise,hypothesis,group,label\n1,A.,B.,A,maybe\n",
     "{dir}/items.csv, row 2, field 'label': gold 'maybe' is not a label (yes, no)"),
    ("metric group absent from the data", changed("metrics.acc_A.accuracy.where", {"group": "Z"}), DATA,
     "{file}: metrics.acc_A.accuracy.where.group: no item has group 'Z'; values: A, B"),
]


@pytest.mark.parametrize(("kind", "doc", "data", "message"), BAD_DATA, ids=[b[0] for b in BAD_DATA])
def test_broken_data_is_one_line_naming_file_row_and_column(tmp_path: Path, kind: str, doc: dict[str, Any], data: str,
                                                           message: str) -> None:
    path = write(tmp_path, doc, data)
    with pytest.raises((ConfigError, DatasetError)) as e:
        check(path)
    assert str(e.value) == message.format(dir=tmp_path, file=path)


def test_an_unreadable_json_row(tmp_path: Path) -> None:
    path = write(tmp_path, changed("items.data", "items.jsonl"))
    (tmp_path / "items.jsonl").write_text('{"id": "1", "premise": "a", "hypothesis": "b", "group": "A", '
                                          '"label": "yes"}\n{"id": 2,\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=re.escape(f"{tmp_path}/items.jsonl, line 2: invalid JSON: Expecting "
                                                     "property name enclosed in double quotes")):
        check(path)


def test_run_and_check_print_the_same_line_without_a_traceback(tmp_path: Path) -> None:
    from lingdiag.cli import main

    path = write(tmp_path, changed("items.datta", "x.csv"))
    expected = f"{path}: items.datta: unknown key (did you mean 'data'?); valid keys: data, datasets, delimiter, " \
               "fields, gold, id, review, tags"
    for args in (["suite", "check", str(path)], ["run", str(path), "--model", "mock"]):
        result = CliRunner().invoke(app, args)
        assert isinstance(result.exception, ConfigError) and str(result.exception) == expected
    del main


def test_check_command_prints_one_ok_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["suite", "check", str(write(tmp_path, GOOD))])
    assert result.exit_code == 0, result.output
    assert "suite 'mini', 3 items (builtin), 2 conditions (plain, polite), 6 requests, paired metrics: yes_B" \
        in result.output.replace("\n", "")

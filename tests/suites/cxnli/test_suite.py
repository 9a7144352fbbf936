"""The CxNLI suite: parser, prompt settings and variants, metrics, CLI, and a real run."""

import json
import math
from pathlib import Path

import pytest
from helpers import item_record
from typer.testing import CliRunner

from lingdiag.config import RunConfig
from lingdiag.errors import ConfigError
from lingdiag.io import fetch as fetch_mod
from lingdiag.records import UNPARSED, Generation, GenerationRequest, ItemRecord, ResultRow
from lingdiag.registry import load_plugins
from lingdiag.suite import Condition
from lingdiag.suites import cxnli as suite
from lingdiag.suites.cxnli import files, metrics, parse, prompts, tables

ALL = {"exp": ["1", "2"], "setting": list(files.SETTINGS), "variant": ["variation-2"], "cot": ["off", "on"]}
V2 = prompts.prompts()["variants"]["variation-2"].splitlines()

# (answer, cot, echo of the instruction, truncated, label). Several answers are SmolLM2-135M's.
PARSE_CASES = [
    ("0", False, False, "entailment"),
    ("2", False, False, "contradiction"),
    ("1 (neutral)", False, False, "neutral"),
    ("Neutral.", False, False, "neutral"),
    ("**2**", False, False, "contradiction"),
    ("The relation is 1.", False, False, "neutral"),
    ("Relation: 2 – contradiction", False, False, "contradiction"),
    ("Output: 1\n\nThe relation between the two hypotheses is 1.", False, False, "neutral"),
    ("The Relation Output 3: 2", False, False, "contradiction"),
    ('{"relation": 2}', False, False, "contradiction"),
    ("Answer: entailment", False, False, "entailment"),
    ("0\n\nThe hypothesis follows from the premise.", False, False, "entailment"),
    ("The relation between the two hypotheses is:\n\nRelation 1: 0\nThe hypothesis is not true.", False, True,
     "entailment"),
    ("2 or 1", False, False, UNPARSED),
    ("I cannot decide.", False, False, UNPARSED),
    ("", False, False, UNPARSED),
    ("There are 10 words and 1.5 clauses.", False, False, UNPARSED),
    ("Output: 0.0000000000000001", False, True, UNPARSED),
    # A recited code list is not an answer, complete or cut off by the token limit.
    ("The relation between the Premise and the Hypothesis is:\n0 – Entailment: The Hypothesis is definitely true "
     "given the Premise.\n1 – Neutral: The Hypothesis may or may not be", False, True, UNPARSED),
    ("The relation between the Premise and the Hypothesis is:\n0 – Entail", False, True, UNPARSED),
    ("0 – Entailment\n1 – Neutral\n2 – Contradiction", False, False, UNPARSED),
    ("0 – Entailment", False, False, "entailment"),
    # Chain of thought: the last line first; numbered steps are not answers.
    ("1. The premise says he hammered.\n2. So the metal became flat.\n0", True, False, "entailment"),
    ("1. The premise is about buying.\n2. Nothing changed.\nThe answer is 2.", True, False, "contradiction"),
    ("Step 1: compare.\nSo the relation is neutral (1).\nThat is all.", True, False, "neutral"),
    ("1. First, the premise.\n2. Then the hypothesis.", True, False, UNPARSED),
    ("Step 1: the premise.\nStep 2: the hypothesis.\n2", True, False, "contradiction"),
]


@pytest.mark.parametrize("text,cot,truncated,label", PARSE_CASES)
def test_parse_relation(text: str, cot: bool, truncated: bool, label: str) -> None:
    assert parse.parse_relation(text, cot, V2, truncated)[0] == label


def conditions_for(ds_spec: str, axes: dict[str, list[str]] = ALL, **options: object) -> dict[str, Condition]:
    # These tests check this project's prompts; test_authors_prompts.py checks the authors' (the default).
    options.setdefault("prompt_source", "paper")
    ds = files.load(ds_spec)
    parsed = suite.SUITE.parse_options(options)
    assert isinstance(parsed, suite.Options)
    return {c.name: c for c in suite.conditions(ds, axes, parsed, 0)}


def test_condition_grid_and_axes() -> None:
    conds = conditions_for("builtin")
    assert len(conds) == 2 * 5 * 2
    c = conds["exp2/three-snli/variation-2/cot"]
    assert c.axes == {"exp": "2", "setting": "three-snli", "variant": "variation-2", "cot": "on",
                      "prompt_source": "paper"}
    assert {it.tags["exp"] for it in c.items} == {"2"} and len(c.items) == 45


@pytest.mark.parametrize("setting,n_examples", [
    ("zero", 0), ("one-cxnli", 3), ("three-cxnli", 9), ("one-snli", 3), ("three-snli", 9)])
def test_each_setting_renders_its_examples(shared_datasets: Path, setting: str, n_examples: int) -> None:
    load_plugins()
    fetch_mod.fetch("cxnli", str(shared_datasets))
    conds = conditions_for("official")
    for exp in ("1", "2"):
        c = conds[f"exp{exp}/{setting}/variation-2"]
        item = c.items[0]
        (req,) = c.strategy.render(item)
        (msg,) = req.messages
        text = msg.content
        assert isinstance(req, GenerationRequest)
        assert msg.role == "user" and req.max_new_tokens == 16
        assert text.startswith(prompts.prompts()["variants"]["variation-2"])
        assert text.count("Example Premise") == n_examples
        assert text.endswith(f"\nPremise: {item.fields['premise']}\nHypothesis: {item.fields['hypothesis']}\nRelation:")
        if n_examples:
            assert f"Example Relation Output {n_examples}: " in text and f"Example Premise {n_examples + 1}" not in text
        if setting.endswith("snli"):  # SNLI, whatever the item's construction
            assert ("A man crosses a busy city street." in text) == (setting == "one-snli")
            assert ("Little boy sits in car's driver's seat" in text) == (setting == "three-snli")
        if setting.endswith("cxnli"):
            # The examples of the item's own form: an Exp 2 depictive item sees resultative examples.
            assert item.tags["schema"] == ("let-alone" if exp == "1" else "resultative")
            assert ("A ceasefire, let alone lasting peace" in text) == (exp == "1")
            assert ("Terry PUSHED the door shut." in text) == (exp == "2")


def test_example_block_format_and_codes() -> None:
    c = conditions_for("builtin")["exp1/one-cxnli/variation-2"]
    text = c.strategy.render(c.items[0])[0].messages[0].content
    assert ("\nExample Premise 1: The wind blew the door shut.\nExample Hypothesis 1: The blowing caused the door "
            "to become shut.\nExample Relation Output 1: 0\n\nExample Premise 2:") in text
    assert "Example Relation Output 2: 1\n" in text and "Example Relation Output 3: 2\n" in text


def test_cot_asks_for_the_answer_on_the_last_line_with_more_tokens() -> None:
    conds = conditions_for("builtin", max_new_tokens=8, max_new_tokens_cot=64)
    on, off = conds["exp1/zero/variation-2/cot"], conds["exp1/zero/variation-2"]
    (req,) = on.strategy.render(on.items[0])
    (req_off,) = off.strategy.render(off.items[0])
    assert isinstance(req, GenerationRequest) and isinstance(req_off, GenerationRequest)
    assert req.max_new_tokens == 64 and req_off.max_new_tokens == 8
    assert req.messages[0].content.endswith("alone on the last line.")
    assert "step by step" in req.messages[0].content and "Relation:" not in req.messages[0].content[-300:]


def test_variants_by_name_and_from_a_file(tmp_path: Path) -> None:
    names = [v for v in prompts.VARIANTS if v != prompts.USER]
    assert names == ["variation-1", "variation-2", "variation-3", "variation-4", "rephrase-1", "rephrase-2",
                     "rephrase-3"]
    conds = conditions_for("builtin", {**ALL, "variant": names, "cot": ["off"], "setting": ["zero"]})
    texts = {c.axes["variant"]: c.strategy.render(c.items[0])[0].messages[0].content for c in conds.values()}
    assert len(set(texts.values())) == 2 * len(names) // 2  # one prompt per variant (same item per exp)
    assert texts["variation-3"].startswith("You are the best at understanding language inference based on Cxn grammar.")
    assert "Also known as Recognizing Textual Entailment (RTE)" in texts["variation-1"]
    assert "Also called Recognizing Textual Entailment (RTE)" in texts["variation-4"]
    path = tmp_path / "variants.yaml"
    path.write_text("terse: 'Say 0 (entailment), 1 (neutral) or 2 (contradiction).'\n")
    conds = conditions_for("builtin", {**ALL, "variant": ["user", "variation-1"], "setting": ["zero"], "cot": ["off"]},
                           variants=str(path))
    c = conds["exp1/zero/user:terse"]
    assert c.axes["variant"] == "user:terse" and "exp1/zero/variation-1" in conds
    assert c.strategy.render(c.items[0])[0].messages[0].content.startswith("Say 0 (entailment)")


@pytest.mark.parametrize("content,variant,message", [
    (None, ["user"], "needs the variants file"),
    ("a: text\n", ["variation-2"], "add --variant user"),
    ("- just a list\n", ["user"], "expected a mapping"),
    ("'bad name': text\n", ["user"], "may use only letters"),
    ("empty: ''\n", ["user"], "non-empty instruction"),
])
def test_user_variant_errors(tmp_path: Path, content: str | None, variant: list[str], message: str) -> None:
    options = {}
    if content is not None:
        (tmp_path / "v.yaml").write_text(content)
        options["variants"] = str(tmp_path / "v.yaml")
    with pytest.raises(ConfigError, match=message):
        conditions_for("builtin", {**ALL, "variant": variant}, **options)


def test_exp_without_items_is_skipped_and_none_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "mine.tsv"
    path.write_text("CxN Type\tNumber\tP/H/R\tAnnotation Targets - Gold Standard Relation\n"
                    "resultative\t1\tpremise\tHe hammered the metal flat.\n\t1\thypothesis\tIt is flat.\n"
                    "\t1\trelation\t0 (entailment)\n")
    conds = conditions_for(str(path), {**ALL, "setting": ["one-cxnli"], "cot": ["off"]})
    assert list(conds) == ["exp1/one-cxnli/variation-2"]
    c = conds["exp1/one-cxnli/variation-2"]
    text = c.strategy.render(c.items[0])[0].messages[0].content
    assert "The wind blew the door shut." in text  # built-in in-context examples for a single file
    with pytest.raises(ConfigError, match="no items for exp 2"):
        conditions_for(str(path), {**ALL, "exp": ["2"]})


# -- metrics on a hand-computed fixture ---------------------------------------------------


def rec(exp: str, cxn: str, gold: str, label: str, setting: str = "zero") -> ItemRecord:
    axes = {"exp": exp, "setting": setting, "variant": "variation-2", "cot": "off"}
    return item_record(f"{cxn}-{gold}-{label}", label, gold, condition=f"exp{exp}/{setting}/variation-2", axes=axes,
                       tags={"exp": exp, "construction": cxn})


E, N, C = "entailment", "neutral", "contradiction"
# Exp 1: 6 items, 4 correct. Gold E: 2 (1 right), N: 2 (2 right), C: 2 (1 right; 1 unparsed).
EXP1 = [rec("1", "resultative", E, E), rec("1", "resultative", E, N), rec("1", "conative", N, N),
        rec("1", "conative", N, N), rec("1", "conative", C, C), rec("1", "let-alone", C, UNPARSED)]
# Exp 2: 4 items, 1 correct (everything predicted entailment).
EXP2 = [rec("2", "depictive", E, E), rec("2", "depictive", C, E), rec("2", "intransitive-at", C, E),
        rec("2", "intransitive-at", N, E)]


def test_metrics_on_a_hand_computed_fixture() -> None:
    m = metrics.metrics(EXP1)
    assert m["accuracy"] == pytest.approx(4 / 6)
    assert m["by_construction"] == {"conative": 1.0, "let-alone": 0.0, "resultative": 0.5}
    assert m["n_by_construction"] == {"conative": 3, "let-alone": 1, "resultative": 2}
    e, n, c = (m["by_label"][k] for k in (E, N, C))
    # E: tp 1, gold 2, predicted 1 -> P 1, R 0.5, F1 2/3.  N: tp 2, gold 2, predicted 3 -> P 2/3, R 1, F1 0.8.
    # C: tp 1, gold 2, predicted 1 -> P 1, R 0.5, F1 2/3.
    assert (e["accuracy"], e["precision"], e["f1"]) == pytest.approx((0.5, 1.0, 2 / 3))
    assert (n["accuracy"], n["precision"], n["f1"]) == pytest.approx((1.0, 2 / 3, 0.8))
    assert c["n"] == 2 and (c["accuracy"], c["f1"]) == pytest.approx((0.5, 2 / 3))
    assert m["macro_f1"] == pytest.approx((2 / 3 + 0.8 + 2 / 3) / 3)
    assert m["predicted"] == pytest.approx({E: 1 / 6, N: 3 / 6, C: 1 / 6, UNPARSED: 1 / 6})
    assert m["human_agreement"] == 0.90 and "axes" not in m  # axes live in the result row
    ci = m["accuracy_ci95"]
    assert ci is not None and ci[0] < 4 / 6 < ci[1]

    m2 = metrics.metrics(EXP2)
    assert m2["accuracy"] == 0.25 and m2["human_agreement"] == 0.83
    assert m["majority_baseline"] == pytest.approx(1 / 3) and m2["majority_baseline"] == 0.5
    # A label never predicted scores F1 0; precision of the always-predicted label is 1/4.
    assert m2["by_label"][C]["f1"] == 0.0 and m2["by_label"][E]["precision"] == 0.25
    assert m2["by_label"][E]["f1"] == pytest.approx(2 * 0.25 * 1 / 1.25)
    assert math.isnan(metrics.label_scores([rec("1", "x", E, E)])[N]["f1"])


def test_table_pairs_exp1_with_exp2_beside_human_agreement() -> None:
    rows = [ResultRow("m", "exp1/zero/variation-2", EXP1[0].axes,
                      {**metrics.metrics(EXP1), "n": 6, "unparsed_rate": 1 / 6}),
            ResultRow("m", "exp2/zero/variation-2", EXP2[0].axes,
                      {**metrics.metrics(EXP2), "n": 4, "unparsed_rate": 0.0})]
    text = tables.table(rows)
    assert ("| m | zero | variation-2 | off | 0.67 | 0.25 | 0.42 | 0.90 | 0.83 | 0.33 | 0.50 | 0.17 | 0.00 | 6 | 4 |"
            in text)
    assert "| m | exp1/zero/variation-2 | 0.67 | 0.50 | 1.00 | 0.50 | 0.67 | 0.80 | 0.67 |" in text
    assert "| m | zero | variation-2 | off | resultative | 0.50 | depictive | 0.50 |" in text
    assert "| m | zero | variation-2 | off | let-alone | 0.00 | – | – |" in text


# -- CLI ---------------------------------------------------------------------------------


def test_cli_generate(tmp_path: Path) -> None:
    from lingdiag.suites.cxnli.cli import app

    assert suite.SUITE.cli is not None and suite.SUITE.cli() is app
    slots = tmp_path / "slots.csv"
    slots.write_text("construction,premise,SBJ,V,OBJ,ADJ,neutral\n"
                     "resultative,He hammered the metal flat.,He,hammered,the metal,flat,He was tired.\n")
    out = tmp_path / "out.tsv"
    result = CliRunner().invoke(app, ["generate", "--slots", str(slots), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 3 triples from 1 premises" in result.output
    assert [it.gold for it in files.load(str(out)).items] == ["entailment", "neutral", "contradiction"]
    bad = tmp_path / "bad.csv"
    bad.write_text("construction,premise,SBJ\nresultative,He hammered the metal flat.,He\n")
    result = CliRunner().invoke(app, ["generate", "--slots", str(bad), "--out", str(out)])
    assert result.exit_code != 0 and "needs slot V" in str(result.exception)


# -- a real model --------------------------------------------------------------------------


@pytest.mark.slow
def test_smollm2_run_on_a_few_builtin_items(smollm2: object, tmp_path: Path) -> None:
    from lingdiag.engine.run import evaluate

    cfg = RunConfig(suite="cxnli", model="smollm2-135m", limit=1,
                    axes={"exp": ["1", "2"], "setting": ["zero", "one-snli"]})
    result = evaluate(cfg, smollm2, tmp_path / "run")  # type: ignore[arg-type]
    records = [json.loads(x) for x in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert len(records) == 2 * 2
    for r in records:
        assert r["label"] in (*suite.data.LABELS, UNPARSED)
        assert r["detail"]["n_examples"] == (3 if r["axes"]["setting"] == "one-snli" else 0)
        assert r["detail"]["n_tokens"] <= 16 and r["axes"]["cot"] == "off"
        assert r["axes"]["prompt_source"] == "authors"  # the default, recorded per item
    m = result.metrics["exp2/one-snli/variation-2"]
    assert m["n"] == 1 and m["human_agreement"] == 0.83 and 0 <= m["accuracy"] <= 1
    assert "| smollm2-135m | zero | variation-2 | off |" in result.table and "prompts: authors;" in result.table


def test_parse_uses_the_generation_limit() -> None:
    c = conditions_for("builtin", max_new_tokens=16)["exp1/zero/variation-2"]
    item = c.items[0]
    cut = Generation("The relation between the Premise and the Hypothesis is:\n0 – Entail", n_tokens=16)
    done = Generation("0 – Entailment", n_tokens=5)
    assert c.strategy.parse(item, [cut]).label == UNPARSED
    p = c.strategy.parse(item, [done])
    assert p.label == "entailment" and p.detail["code"] == "0" and p.detail["truncated"] is False

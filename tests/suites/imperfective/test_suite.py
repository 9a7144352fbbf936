import json
import math
from pathlib import Path

import pytest
from helpers import item_record
from helpers import result_row as row

from lingdiag.errors import DatasetError
from lingdiag.records import UNPARSED, Generation, Item, ItemRecord
from lingdiag.suites.imperfective import data, metrics, prompts, tables


def rec(group: str, label: str, verb_class: str = "Creation", gold: str | None = None) -> ItemRecord:
    gold = gold or data.GOLD_BY_GROUP[group]
    return item_record(f"{group}{label}", label, gold, condition="zero-shot",
                       tags={"group": group, "verb_class": verb_class if group in "AC" else "Activity"})


def fixture_records() -> list[ItemRecord]:
    # A: 1 of 4 correct; B: 2 of 2; C: 4 items -> 2 True, 1 Unknown, 1 False; D: 2 of 3 correct + 1 unparsed.
    return [
        rec("A", "False", "Creation"), rec("A", "True", "Creation"), rec("A", "True", "Motion_to_Goal"),
        rec("A", UNPARSED, "Motion_to_Goal"),
        rec("B", "True"), rec("B", "True"),
        rec("C", "True", "Creation"), rec("C", "True", "Change_of_State"), rec("C", "Unknown", "Creation"),
        rec("C", "False", "Motion_to_Goal"),
        rec("D", "True"), rec("D", "True"), rec("D", UNPARSED),
    ]


def test_metrics_hand_computed() -> None:
    m = metrics.metrics(fixture_records())
    assert m["acc_A"] == 0.25 and m["acc_B"] == 1.0
    assert m["acc_C"] == 0.25 and m["acc_D"] == pytest.approx(2 / 3)
    assert m["tbr_C"] == 0.5  # eq. 1: share of group C predicted True
    assert m["delta_aa"] == pytest.approx(2 / 3 - 0.5)  # eq. 2: Acc_D - TBR_C
    assert m["false_rate_C"] == 0.25
    assert m["by_class"]["acc_A"] == {"Creation": 0.5, "Motion_to_Goal": 0.0}
    assert m["by_class"]["tbr_C"] == {"Change_of_State": 1.0, "Creation": 0.5, "Motion_to_Goal": 0.0}
    assert m["by_class"]["acc_C"]["Creation"] == 0.5
    lo, hi = m["acc_B_ci95"]
    assert 0.3 < lo < 0.4 and hi == 1.0  # Wilson interval of 2/2


def test_metrics_empty_group_is_nan() -> None:
    m = metrics.metrics([rec("A", "False")])
    assert math.isnan(m["acc_C"]) and math.isnan(m["tbr_C"])


def test_table_has_table3_columns() -> None:
    m = metrics.metrics(fixture_records())
    text = tables.table([row("m1", "cot", m), row("m1", "zero-shot", m)])
    assert text.splitlines()[2] == "Prompts: paper (Appendix B)"  # rows without the axis predate the option
    header = text.splitlines()[4]
    for col in ("Acc A", "Acc D", "TBR_C", "Δ_AA", "Unparsed"):
        assert col in header
    assert text.index("| zero-shot |") < text.index("| cot |")  # paper order


def test_strategies_use_appendix_b_texts() -> None:
    item = Item("x", {"premise": "P.", "hypothesis": "H."}, "True", {})
    zs = prompts.strategy("zero-shot", source="paper").messages(item)
    assert zs[0].content.startswith("You are a strict logician.")
    assert "Please respond with ONLY one of the following options" in zs[1].content
    dap = prompts.strategy("dap", source="paper").messages(item)
    assert "Important Linguistic Rule" in dap[0].content and "Important Linguistic Rule" not in zs[0].content
    cot = prompts.strategy("cot", source="paper").messages(item)[1].content
    assert '"reasoning"' in cot and "Premise: P." in cot and '{"reasoning": "The premise describes' in cot
    cf = prompts.strategy("counterfactual", source="paper").messages(item)[1].content
    assert "list 3 possible real-world scenarios" in cf and '"possible_interruptions"' in cf
    assert prompts.strategy("cot", max_new_tokens=7, source="paper").render(item)[0].max_new_tokens == 7


def test_authors_texts_are_the_default() -> None:
    item = Item("x", {"premise": "P.", "hypothesis": "H."}, "True", {})
    zs = prompts.strategy("zero-shot").messages(item)
    assert zs[0].content.startswith("System Prompt: You are a strict logician.")
    assert zs[1].content.startswith("User Input: Premise: P. Hypothesis: H.\n")
    cot = prompts.strategy("cot").messages(item)[1].content
    assert "provide your final label (True, False, or Unknown)." in cot
    cf = prompts.strategy("counterfactual").messages(item)[1].content
    assert '"possible_interruptions": a list of three strings' in cf and '"reasoning"' not in cf


def test_prompt_source_option_reaches_conditions_and_table() -> None:
    from lingdiag.prompts.chat import ChatPrompt
    from lingdiag.suite import Dataset
    from lingdiag.suites.imperfective import Options, conditions

    ds = Dataset("builtin", data.builtin_items()[:2])
    (default,) = conditions(ds, {"strategy": ["dap"]}, Options(), seed=0)
    assert default.name == "dap" and default.axes == {"strategy": "dap", "prompt_source": "authors"}
    assert isinstance(default.strategy, ChatPrompt) and default.strategy.system.startswith("System Prompt: ")
    (paper,) = conditions(ds, {"strategy": ["dap"]}, Options(prompt_source="paper"), seed=0)
    assert paper.name == "dap" and paper.axes["prompt_source"] == "paper"
    assert isinstance(paper.strategy, ChatPrompt) and paper.strategy.system.startswith("You are a strict logician.")
    m = metrics.metrics(fixture_records())
    one = tables.table([row("m1", "dap", m, dict(default.axes))])
    assert one.splitlines()[2] == "Prompts: authors (run_inference.py)"
    both = tables.table([row("m1", "dap", m, dict(default.axes)), row("m1", "dap", m, dict(paper.axes))])
    assert both.splitlines()[2] == "Prompts: authors (run_inference.py), paper (Appendix B)"
    assert "| dap (authors) |" in both and "| dap (paper) |" in both


@pytest.mark.parametrize("source", ["authors", "paper"])
def test_parser_reads_both_json_answers(source: prompts.PromptSource) -> None:
    item = Item("x", {"premise": "P.", "hypothesis": "H."}, "False", {})
    cf = prompts.strategy("counterfactual", source=source)
    answer = '{\n  "possible_interruptions": ["a", "b", "c"],\n  "label": "False"\n}'
    assert cf.parse(item, [Generation(text=answer, n_tokens=20)]).label == "False"
    cot = prompts.strategy("cot", source=source)
    answer = '{\n  "reasoning": "The premise describes a process...",\n  "label": "Unknown"\n}'
    assert cot.parse(item, [Generation(text=answer, n_tokens=20)]).label == "Unknown"


def test_strategy_parses_json_and_counts_truncation() -> None:
    s = prompts.strategy("cot", max_new_tokens=10)
    item = Item("x", {"premise": "P.", "hypothesis": "H."}, "True", {})
    pred = s.parse(item, [Generation(text='{"reasoning": "r", "label": "Unknown"}', n_tokens=10)])
    assert pred.label == "Unknown" and pred.detail["truncated"] is True


def test_builtin_generator_is_complete_and_deterministic() -> None:
    rows = data.build(seed=0)
    assert rows == data.build(seed=0)
    assert len(rows) == 400
    groups = {g: [r for r in rows if r["group"] == g] for g in "ABCD"}
    assert all(len(v) == 100 for v in groups.values())
    classes = [r["verb_class"] for r in groups["A"]]
    assert [classes.count(c) for c in data.TELIC_CLASSES] == [44, 9, 39, 8]  # Appendix A
    a, c = groups["A"][0], groups["C"][0]
    assert a["hypothesis"] == c["hypothesis"] and a["premise"].startswith(c["premise"][:-1] + ", but ")
    assert c["premise"] == "The mechanic was fixing the truck's engine."
    assert all("  " not in r["premise"] and " ." not in r["premise"] for r in rows)


def test_user_lexicon_and_seeded_alternatives(tmp_path: Path) -> None:
    lex = tmp_path / "lex.csv"
    lex.write_text("verb,aspect,verb_class,subject,plural,complement,interruption\n"
                   "bake,telic,Creation,The baker|The chef,0,a cake,the oven broke\n"
                   "swim,atelic,Activity,The kids,1,in the lake,it got dark\n")
    tmpl = tmp_path / "t.yaml"
    tmpl.write_text('premise_progressive: "{subject} {be} {ing} {complement}."\n'
                    'premise_interrupted: "{subject} {be} {ing} {complement}, but {interruption}."\n'
                    'hypothesis: "{subject} {past} {complement}."\n')
    rows = data.build(lex, tmpl, seed=3)
    assert [r["id"] for r in rows] == ["A_001", "B_001", "C_001", "D_001"]
    assert rows[1]["premise"] == "The kids were swimming in the lake, but it got dark."
    assert rows[3]["hypothesis"] == "The kids swam in the lake."
    subjects = {data.build(lex, tmpl, seed=s)[0]["premise"].split(" was")[0] for s in range(20)}
    assert subjects == {"The baker", "The chef"}


def test_lexicon_errors_name_row_and_field(tmp_path: Path) -> None:
    lex = tmp_path / "lex.csv"
    lex.write_text("verb,aspect,verb_class,subject,plural,complement,interruption\n"
                   "bake,telic,Creation,The baker,0,a cake,x\n"
                   "swim,telic,Activity,The kids,1,,y\n")
    with pytest.raises(DatasetError, match=r"lex.csv, row 3, field 'verb_class'"):
        data.read_lexicon(lex)


GOOD = {"id": "A_1", "group": "A_Interrupted_Accomplishment", "verb_class": "Creation", "verb": "build",
        "premise": "p", "hypothesis": "h", "label": "False"}


@pytest.mark.parametrize(("change", "message"), [
    ({"label": "Maybe"}, r"row 2, field 'label': label 'Maybe' is not one of"),
    ({"label": "True"}, r"row 2, field 'label': group A requires label 'False'"),
    ({"group": "E"}, r"row 2, field 'group'"),
    ({"premise": ""}, r"row 2, field 'premise': missing or empty"),
    ({"verb_class": "Activity"}, r"row 2, field 'verb_class': group A needs a telic"),
    ({"id": "A_1"}, r"row 2, field 'id': duplicate id"),
])
def test_loader_errors(tmp_path: Path, change: dict[str, str], message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([GOOD, {**GOOD, "id": "A_2", **change}]))
    with pytest.raises(DatasetError, match=message) as e:
        data.load_json(path)
    assert "bad.json" in str(e.value)


def test_loader_reports_invalid_json_position(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[{"id": "A_1",\n  "group": }]')
    with pytest.raises(DatasetError, match=r"broken.json, line 2: invalid JSON"):
        data.load_json(path)


def test_official_file_loads(shared_datasets: Path) -> None:
    items = data.load_json(shared_datasets / "imperfective_nli" / "imperfectiveNLI.json")
    assert len(items) == 400
    assert {g: sum(i.tags["group"] == g for i in items) for g in "ABCD"} == {g: 100 for g in "ABCD"}
    telic = [i.tags["verb_class"] for i in items if i.tags["group"] == "A"]
    assert [telic.count(c) for c in data.TELIC_CLASSES] == [44, 9, 39, 8]


def test_cli_builds_a_dataset_that_runs(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from lingdiag.cli import app
    from lingdiag.config import RunConfig
    from lingdiag.engine.run import evaluate
    from lingdiag.models.mock import MockBackend

    lex = tmp_path / "lex.yaml"
    lex.write_text("- {verb: knit, aspect: telic, verb_class: Creation, subject: Grandma, plural: 0,\n"
                   "   complement: a scarf, interruption: the wool ran out, past: knitted}\n"
                   "- {verb: hum, aspect: atelic, verb_class: Activity, subject: The boys, plural: 1,\n"
                   "   complement: '', interruption: the teacher came in}\n")
    out = tmp_path / "mine.json"
    result = CliRunner().invoke(app, ["data", "build", "imperfective", "--lexicon", str(lex), "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())
    assert rows[0]["premise"] == "Grandma was knitting a scarf, but the wool ran out."
    assert rows[0]["hypothesis"] == "Grandma knitted a scarf."
    assert rows[3]["premise"] == "The boys were humming."
    cfg = RunConfig(suite="imperfective", model="mock", dataset=str(out), axes={"strategy": ["zero-shot"]})
    res = evaluate(cfg, MockBackend(lambda r: "Unknown"), tmp_path / "run")
    assert res.metrics["zero-shot"]["acc_C"] == 1.0 and res.metrics["zero-shot"]["n"] == 4


def test_delta_aa_interval_is_a_seeded_bootstrap() -> None:
    from lingdiag.metrics.stats import difference_ci

    a, b = [True] * 8 + [False] * 2, [True] * 2 + [False] * 8
    low, high = difference_ci(a, b)
    assert 0 < low < 0.6 < high <= 1  # the difference is 0.6 and clearly above zero
    assert difference_ci(a, b) == [low, high]
    a, b = [True] * 20 + [False] * 17, [True] * 9 + [False] * 23
    assert difference_ci(a, b, seed=1) == difference_ci(a, b, seed=1) != difference_ci(a, b)

"""A comparison the study file chooses (``compare: [[A, B]]``, two families): its rows in the study
report are ``lingdiag compare A B`` on the two runs, cell for cell (direction A − B, n, accuracies,
interval, discordant items, McNemar p, Holm over the pair's conditions), and a second Holm column over
the whole table; groups test every pair; adjacent sizes follow the same direction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import lingdiag, stand_in, study_backend

from lingdiag.report import markdown
from lingdiag.study.execute import run_study
from lingdiag.study.report import write_report
from lingdiag.study.schema import StudyFile

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites"


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("compare")
    spec = StudyFile.model_validate({
        "name": "compare", "base": tmp, "seed": 3,
        "models": [{"spec": "a", "family": "F", "size": "135M"}, {"spec": "b", "family": "F", "size": "360M"},
                   {"spec": "c", "family": "G", "size": "1B"}],
        "suites": [{"suite": "imperfective", "dataset": str(EXAMPLES / "imperfective-nli-sample.json"),
                    "axes": {"strategy": ["zero-shot", "dap"]}, "name": "nli"}],
        "compare": [["a", "b"], {"a": ["a", "b"], "b": ["c"], "name": "F vs G"}]})  # a set: each pair once
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LINGDIAG_CACHE", str(tmp / "cache"))
        run_study(spec, tmp / "out", models=stand_in(study_backend))
    write_report(tmp / "out", None, tmp / "tables", seed=3)
    return tmp


def _table(study: Path, heading: str) -> list[dict[str, str]]:
    text = (study / "tables" / "study.md").read_text()
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    table = next(b for b in markdown.blocks(section) if isinstance(b, markdown.Table))
    return [dict(zip(table.header, row, strict=True)) for row in table.rows]


def test_a_chosen_pair_is_lingdiag_compare_on_its_two_runs(study: Path) -> None:
    rows = [r for r in _table(study, "Chosen comparisons") if (r["A"], r["B"]) == ("a", "c")]
    done = lingdiag(study, "compare", str(study / "out/runs/a/nli"), str(study / "out/runs/c/nli"), "--json",
                    "--seed", "3")
    assert done.returncode == 0, done.stderr
    expected = {r["condition"]: r for r in json.loads(done.stdout)["rows"]}
    assert {r["Condition"] for r in rows} == set(expected) == {"zero-shot", "dap"}
    for row in rows:
        want = expected[row["Condition"]]
        assert (row["A"], row["B"], row["Suite"]) == ("a", "c", "nli")
        assert row["n"] == str(want["n"]) and (row["A only"], row["B only"]) == (str(want["only_a"]),
                                                                                 str(want["only_b"]))
        assert row["Acc A"] == f"{want['acc_a']:.3f}" and row["Acc B"] == f"{want['acc_b']:.3f}"
        assert row["A − B [95% CI]"] == f"{want['diff']:+.3f} [{want['ci95'][0]:+.3f}, {want['ci95'][1]:+.3f}]"
        assert want["diff"] == pytest.approx(want["acc_a"] - want["acc_b"])
        assert row["McNemar p"] == f"{want['p']:.3g}" and row["Holm p (pair)"] == f"{want['p_holm']:.3g}"
        assert float(row["Holm p (table)"]) >= float(row["Holm p (pair)"])


def test_a_group_tests_every_pair_and_the_families_are_named(study: Path) -> None:
    rows = _table(study, "Chosen comparisons")
    assert [(r["Comparison"], r["A"], r["B"]) for r in rows if r["Condition"] == "dap"] == [
        ("a vs b", "a", "b"), ("F vs G", "a", "c"), ("F vs G", "b", "c")]
    text = (study / "tables" / "study.md").read_text()
    assert "Holm p (pair): Holm over the conditions of that pair of runs" in text
    assert "Holm p (table): Holm over every row of this table" in text
    assert "A − B: A's accuracy minus B's" in text


def test_adjacent_sizes_put_the_larger_model_first(study: Path) -> None:
    rows = _table(study, "Adjacent sizes and checkpoints")
    assert {(r["Between"], r["A"], r["B"]) for r in rows} == {("size", "b", "a")}
    for r in rows:
        assert float(r["A − B [95% CI]"].split()[0]) == pytest.approx(float(r["Acc A"]) - float(r["Acc B"]), abs=2e-3)


def test_the_mixed_model_above_its_bound_is_fitted_on_a_named_item_sample(study: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import pandas as pd

    from lingdiag.study.loaded import load
    from lingdiag.study.sections.mixed import mixed_frame

    loaded = load(study / "out")
    whole, note = mixed_frame(loaded.runs)
    assert isinstance(whole, pd.DataFrame)
    assert note == "" and len(whole) == 3 * 2 * 8  # three models, two conditions, eight items
    monkeypatch.setenv("LINGDIAG_STUDY_MIXED_RECORDS", "20")
    sampled, note = mixed_frame(loaded.runs, seed=3)
    assert isinstance(sampled, pd.DataFrame)
    assert note.startswith("Fitted on a seeded sample of 3 of 8 items (seed 3; every model's answers on them: "
                           "18 of 48)")
    assert "LINGDIAG_STUDY_MIXED_RECORDS" in note and len(sampled) == 18
    assert sampled["item"].nunique() == 3 and set(sampled["model"]) == {"a", "b", "c"}
    again, _ = mixed_frame(loaded.runs, seed=3)
    assert isinstance(again, pd.DataFrame)
    assert again.equals(sampled)

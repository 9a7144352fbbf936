"""What the report says first: degenerate conditions, the supported differences with their
p-values, and the greying of degenerate rows in the suites' own tables."""

from __future__ import annotations

from pathlib import Path

from helpers import item_record

from lingdiag.metrics.interpretable import degenerate_reason
from lingdiag.reading import load_runs
from lingdiag.records import ItemRecord
from lingdiag.report.findings import Degenerate, degenerate, differences, headline
from lingdiag.report.html import render_html
from lingdiag.report.markup import markdown_to_html
from lingdiag.report.tables import tables
from lingdiag.rundir import write_imported

AXES = {"strategy": "zero-shot", "prompt_source": "authors"}


def record(item: int, label: str, gold: str = "True", condition: str = "zero-shot", error: str | None = None,
           axes: dict[str, str] | None = None) -> ItemRecord:
    return item_record(f"i{item}", label, gold, condition=condition, axes=axes or {**AXES, "strategy": condition},
                       tags={"group": "B", "verb_class": "Activity"}, error=error)


def test_half_unparsed_or_failed_is_degenerate_and_just_under_is_not() -> None:
    mixed = ["True", "False"] * 5
    ten = [record(k, lab) for k, lab in enumerate(mixed)]
    assert degenerate_reason(ten) is None
    four_bad = [*ten[:6], *(record(k, "unparsed") for k in range(6, 10))]
    assert degenerate_reason(four_bad) is None
    five_bad = [*ten[:5], *(record(k, "unparsed") for k in range(5, 9)), record(9, "unparsed", error="down")]
    assert degenerate_reason(five_bad) == "50% unparsed or failed"
    assert degenerate_reason([record(k, "True", gold=mixed[k]) for k in range(10)]) == \
        "one label (True) for every item"
    # A constant answer that is every item's gold is a result (a minimal pair's good sentence each time).
    assert degenerate_reason([record(k, "True") for k in range(10)]) is None
    assert degenerate_reason([record(0, "True")]) is None and degenerate_reason([]) is None


def _run(path: Path, model: str, records: list[ItemRecord]) -> Path:
    write_imported(path, suite="imperfective", model=model, dataset="builtin", records=records,
                   provenance={"file": "answers.csv", "sha256": ""})
    return path


def _runs(tmp_path: Path) -> list[Path]:
    # good: right on 30 of 32 items; poor: right on 8; both answer True and False. Under cot,
    # good never concludes (100% unparsed).
    gold = ["True" if k % 2 else "False" for k in range(32)]
    flip = {"True": "False", "False": "True"}
    good = [record(k, g if k >= 2 else flip[g], g) for k, g in enumerate(gold)]
    poor = [record(k, g if k < 8 else flip[g], g) for k, g in enumerate(gold)]
    good += [record(k, "unparsed", g, "cot") for k, g in enumerate(gold)]
    poor += [record(k, g if k < 16 else flip[g], g, "cot") for k, g in enumerate(gold)]
    return [_run(tmp_path / "good", "good", good), _run(tmp_path / "poor", "poor", poor)]


def test_differences_are_one_sentence_each_with_p_values_and_skip_degenerate_conditions(tmp_path: Path) -> None:
    runs = load_runs(_runs(tmp_path))
    flagged = degenerate(runs)
    assert [(d.model, d.condition, d.reason) for d in flagged] == [("good", "cot", "100% unparsed or failed")]
    found = differences(runs, flagged)
    assert len(found) == 1  # cot is left out: good's 0.00 there is the parser, not the model
    sentence = found[0].sentence
    assert sentence.startswith("imperfective, zero-shot: good is more accurate than poor (0.94 vs 0.25 on 32 paired")
    assert "exact McNemar p = " in sentence and f"Holm p = {found[0].p:.3g})." in sentence and found[0].p < 0.05
    # No group-C item here, so TBR_C is undefined ("–", not "nan"); cot is named, not valued.
    assert headline(runs, flagged)["imperfective"] == {"good": [("zero-shot", "–"), ("cot", "not interpretable")],
                                                       "poor": [("zero-shot", "–"), ("cot", "–")]}


def test_the_page_greys_degenerate_rows_and_lists_them_in_the_summary(tmp_path: Path) -> None:
    runs = load_runs(_runs(tmp_path))
    page = render_html(tables(runs), runs)
    summary = page[page.index('<section id="summary">'):page.index("</section>")]
    assert "<li>imperfective: good, cot: 100% unparsed or failed</li>" in summary
    assert "good is more accurate than poor" in summary
    # Table 3: good's cot row greyed with the reason; poor's cot row and good's zero-shot row not.
    assert ('<tr class="degenerate" title="not interpretable: 100% unparsed or failed"><td>cot<br>'
            '<span class="flag">not interpretable: 100% unparsed or failed</span></td><td>good</td>') in page
    assert "<tr><td>cot</td><td>poor</td>" in page and "<tr><td>zero-shot</td><td>good</td>" in page


def test_rows_are_matched_by_condition_name_or_by_the_axis_values_the_table_shows() -> None:
    cloze = Degenerate("explica", "m", "cloze/0-shot/greedy", {"task": "cloze", "shots": "0", "decoding": "greedy",
                                                               "prompt_source": "authors"}, "68% unparsed or failed")
    text = ("| Task | Shots | Decoding | Model | All |\n|---|---|---|---|---|\n| rating | 0 | greedy | m | 0.31 |\n"
            "| cloze | 0 | greedy | m | 0.17 |\n| cloze | 0 | greedy | other | 0.50 |\n\n"
            "| Condition | Model | Ties |\n|---|---|---|\n| rating/0-shot/greedy | m | 1.00 |\n"
            "| cloze/0-shot/greedy | m | 0.00 |\n")
    html = markdown_to_html(text, [cloze])
    assert html.count('class="degenerate"') == 2
    assert '<tr class="degenerate" title="not interpretable: 68% unparsed or failed"><td>cloze<br>' in html
    assert "<tr><td>rating</td><td>0</td>" in html
    assert "<tr><td>cloze</td><td>0</td><td>greedy</td><td>other</td>" in html
    assert "<tr><td>rating/0-shot/greedy</td><td>m</td>" in html

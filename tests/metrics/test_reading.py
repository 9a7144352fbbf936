"""The unparsed answers by reason and a judge's readings against the rules', from records."""

from helpers import item_record

from lingdiag.metrics.reading import agreement, reasons, table_note
from lingdiag.records import JUDGE, JUDGED, UNPARSED, ItemRecord, unparsed_reason


def rec(item: str, label: str, **detail: object) -> ItemRecord:
    return item_record(item, label, "True", detail=detail)


def test_reasons_count_unparsed_answers_only() -> None:
    records = [rec("a", UNPARSED, unparsed="hedged"), rec("b", UNPARSED, unparsed="hedged"),
               rec("c", UNPARSED, rule="no-label"),  # written before reasons had a key of their own
               rec("d", UNPARSED), rec("e", "True", rule="cue"), rec("f", "True", unparsed="hedged", judged=True)]
    assert reasons(records) == {"hedged": 2, "no-label": 1, "not named": 1}
    assert [unparsed_reason(r) for r in records][4:] == [None, None]


def test_agreement_and_the_table_note() -> None:
    model = "openai:j@http://127.0.0.1:1/v1"
    records = [
        rec("a", "True", rule="cue", **{JUDGE: {"label": "True", "model": model}}),
        rec("b", "False", rule="cue", **{JUDGE: {"label": "True", "model": model}}),
        rec("c", "True", unparsed="hedged", **{JUDGE: {"label": "True", "model": model}, JUDGED: True}),
        rec("d", UNPARSED, unparsed="doubted", **{JUDGE: {"label": UNPARSED, "model": model}}),
        rec("e", "True", rule="cue", **{JUDGE: {"label": UNPARSED, "model": model}}),
        rec("f", UNPARSED, unparsed="no-answer"),
    ]
    a = agreement(records)
    assert a is not None and (a.read, a.judged, a.both, a.agree, a.rules_only, a.judge_only) == (5, 1, 2, 1, 1, 1)
    assert a.rate == 0.5 and agreement(records[5:]) is None
    note = table_note({"c": records})
    assert "**Unparsed answers by reason**" in note and "c: doubted 1, no-answer 1 (2 of 6)" in note
    assert f"c: {model} read 5, 1 labels judged, agreeing with the rules on 1 of 2 (50%), 1 read by the rules only" \
        in note
    assert table_note({"c": [rec("x", "True", rule="cue")]}) == ""

"""An items page's filters: condition, tag, language, outcome (unparsed, unfinished, failed, fragile), text."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from helpers import item_record

from lingdiag.records import UNPARSED, output_from_json
from lingdiag.view.filters import Filter
from lingdiag.view.index import Index


def _run(tmp_path: Path) -> Path:
    records = [
        item_record("1", "True", "True", tags={"group": "A", "language": "en"}),
        item_record("2", UNPARSED, "True", tags={"group": "B", "language": "he"}, condition="cot"),
        item_record("3", "False", "True", error="timeout"),
        replace(item_record("4", "True", "False"), decision={"fragile": True, "margin": 0.01},
                prompts=["Is the \u05e9\u05dc\u05d5\u05dd here?"], outputs=[output_from_json("<b>True</b>")]),
    ]
    (tmp_path / "items.jsonl").write_text("".join(r.to_json() + "\n" for r in records), encoding="utf-8")
    return tmp_path


def _ids(tmp_path: Path, **query: str) -> list[str]:
    offsets = Index().of(tmp_path)
    return [r.item_id for _, r in Filter.of(query).scan(offsets)]


def test_each_filter(tmp_path: Path) -> None:
    run = _run(tmp_path)
    assert _ids(run) == ["1", "2", "3", "4"]
    assert _ids(run, condition="cot") == ["2"]
    assert _ids(run, tag="group=A") == ["1"]
    assert _ids(run, language="he") == ["2"]
    assert _ids(run, outcome="unparsed") == ["2"]
    assert _ids(run, outcome="failed") == ["3"]
    assert _ids(run, outcome="fragile") == ["4"]
    assert _ids(run, outcome="wrong") == ["4"]
    assert _ids(run, text="TIMEOUT") == ["3"]  # errors are searched, case-insensitively
    assert _ids(run, text="<b>true") == ["4"]  # outputs, markup and all
    assert _ids(run, text="\u05e9\u05dc\u05d5\u05dd") == ["4"]  # right-to-left text in prompts
    assert _ids(run, text="nothing like it") == []

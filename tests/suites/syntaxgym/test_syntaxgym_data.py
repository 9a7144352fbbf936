"""syntaxgym: suite JSON read as published; malformed files are one-line errors naming the key path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lingdiag.errors import DatasetError
from lingdiag.io import fetch as fetch_mod
from lingdiag.registry import load_plugins
from lingdiag.suites.syntaxgym.files import COMMIT, load


def test_reads_the_shared_suites(shared_datasets: Path) -> None:
    ds = load(str(shared_datasets / "syntaxgym"))
    assert len(ds.items) == 151
    item = next(it for it in ds.items if it.id == "number_src/1")
    assert item.tags == {"suite": "number_src"} and item.fields["item_number"] == 1
    assert item.fields["predictions"] and set(item.fields["conditions"]) == set(item.fields["region_numbers"])


def test_pinned_urls() -> None:
    load_plugins()
    files = fetch_mod.OFFICIAL["syntaxgym"]
    assert len(files) == 34
    assert files[0].url == ("https://raw.githubusercontent.com/cpllab/syntactic-generalization/"
                            f"{COMMIT}/test_suites/json/center_embed.json")


def _suite(formula: str = "(2;%a%) > (2;%b%)") -> dict[str, object]:
    regions = [{"region_number": 1, "content": "The cat"}, {"region_number": 2, "content": "sat"}]
    return {"meta": {"name": "toy"}, "predictions": [{"type": "formula", "formula": formula}],
            "items": [{"item_number": 1, "conditions": [{"condition_name": "a", "regions": regions},
                                                        {"condition_name": "b", "regions": regions}]}]}


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.pop("meta"), "field 'meta': missing"),
    (lambda d: d["items"][0].update(item_number="1"), r"field 'items\[0\].item_number': expected int, got str"),
    (lambda d: d["predictions"][0].update(formula="(2;%a%) >"), r"field 'predictions\[0\].formula'.*character 10"),
    (lambda d: d["predictions"][0].update(formula="(2;%c%) > 1"), "reads condition 'c', which item 1 lacks"),
    (lambda d: d["predictions"][0].update(formula="(9;%a%) > 1"), "reads region 9 of 'a', which item 1 lacks"),
    (lambda d: d["items"][0]["conditions"][0]["regions"][0].pop("content"),
     r"field 'items\[0\].conditions\[0\].regions\[0\].content': missing"),
    # Each of these scored 100% or silently replaced a definition before (issue 35).
    (lambda d: d.update(predictions=[]), "field 'predictions': empty: a suite needs at least one prediction"),
    (lambda d: d.update(items=[]), "field 'items': empty: a suite needs at least one item"),  # issue 44
    (lambda d: d["items"][0]["conditions"].append({"condition_name": "a", "regions": []}),
     r"field 'items\[0\].conditions\[2\].condition_name': condition 'a' appears twice in item 1"),
    (lambda d: d["items"][0]["conditions"][0].update(
        regions=[{"region_number": 2, "content": "x"}, {"region_number": 2, "content": "sat"}]),
     r"field 'items\[0\].conditions\[0\].regions\[1\].region_number': region 2 appears twice"),
])
def test_errors(tmp_path: Path, change: object, message: str) -> None:
    doc = _suite()
    change(doc)  # type: ignore[operator]
    f = tmp_path / "toy.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(DatasetError, match=message) as e:
        load(str(f))
    assert str(f) in str(e.value) and "\n" not in str(e.value)

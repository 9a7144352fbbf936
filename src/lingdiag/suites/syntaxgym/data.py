"""SyntaxGym's suite JSON as published (``meta``, ``region_meta``, ``predictions``, ``items``).

Each item has conditions, each a list of regions (``region_number``, untokenised
``content``); each prediction is a formula over region surprisals (``lingdiag.prompts.formulas``).
One lingdiag item per suite item, id ``<suite>/<item_number>``, carrying every condition's
region contents and the suite's formulas.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lingdiag.errors import DatasetError
from lingdiag.io.tabular import read_json
from lingdiag.prompts.formulas import ALL_REGIONS, FormulaError, parse
from lingdiag.prompts.surprisal import PASS
from lingdiag.records import Item


def _need(obj: Any, key: str, kind: type, path: Path, where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise DatasetError("missing", path=path, field=f"{where}.{key}" if where else key)
    if not isinstance(obj[key], kind) or isinstance(obj[key], bool):
        raise DatasetError(f"expected {kind.__name__}, got {type(obj[key]).__name__}", path=path,
                           field=f"{where}.{key}" if where else key)
    return obj[key]


def read_suite(path: Path) -> list[Item]:
    """The items of one suite file; a malformed one is a one-line ``DatasetError`` naming the key path."""
    doc = read_json(path)
    name = str(_need(_need(doc, "meta", dict, path, ""), "name", str, path, "meta"))
    formulas = []
    predictions = _need(doc, "predictions", list, path, "")
    if not predictions:  # nothing to test: every item would pass vacuously
        raise DatasetError("empty: a suite needs at least one prediction", path=path, field="predictions")
    for k, pred in enumerate(predictions):
        text = _need(pred, "formula", str, path, f"predictions[{k}]")
        try:
            formulas.append(parse(text))
        except FormulaError as e:
            raise DatasetError(str(e), path=path, field=f"predictions[{k}].formula") from None
    items = []
    raws = _need(doc, "items", list, path, "")
    if not raws:  # a suite of no items would add nothing and say nothing
        raise DatasetError("empty: a suite needs at least one item", path=path, field="items")
    for i, raw in enumerate(raws):
        where = f"items[{i}]"
        number = _need(raw, "item_number", int, path, where)
        conditions: dict[str, dict[str, str]] = {}
        for c, cond in enumerate(_need(raw, "conditions", list, path, where)):
            cw = f"{where}.conditions[{c}]"
            cname = _need(cond, "condition_name", str, path, cw)
            if cname in conditions:  # a second one would silently replace the first
                raise DatasetError(f"condition {cname!r} appears twice in item {number}", path=path,
                                   field=f"{cw}.condition_name")
            regions: dict[str, str] = {}
            for r, region in enumerate(_need(cond, "regions", list, path, cw)):
                rw = f"{cw}.regions[{r}]"
                region_number = str(_need(region, "region_number", int, path, rw))
                if region_number in regions:
                    raise DatasetError(f"region {region_number} appears twice in condition {cname!r}", path=path,
                                       field=f"{rw}.region_number")
                regions[region_number] = _need(region, "content", str, path, rw)
            conditions[cname] = regions
        for k, formula in enumerate(formulas):
            for ref in formula.regions:
                if ref.condition not in conditions:
                    raise DatasetError(f"prediction {k} reads condition {ref.condition!r}, which item "
                                       f"{number} lacks; its conditions: {', '.join(conditions)}",
                                       path=path, field=f"{where}.conditions")
                if ref.number != ALL_REGIONS and ref.number not in conditions[ref.condition]:
                    raise DatasetError(f"prediction {k} reads region {ref.number} of {ref.condition!r}, which "
                                       f"item {number} lacks", path=path, field=f"{where}.conditions")
        numbers = {c: sorted(regions, key=int) for c, regions in conditions.items()}
        items.append(Item(
            id=f"{name}/{number}",
            fields={"item_number": number,
                    "conditions": {c: [regions[n] for n in numbers[c]] for c, regions in conditions.items()},
                    "region_numbers": numbers,
                    "predictions": [f.text for f in formulas]},
            gold=PASS, tags={"suite": name}))
    return items

"""Each built-in suite's metrics TypedDict is what its ``metrics`` returns: the readers that
``mypy`` checks against it read the keys the runs really hold."""

from __future__ import annotations

from typing import Any

import pytest

from lingdiag.metrics.core import Counts
from lingdiag.records import ItemRecord
from lingdiag.suite import SUITES
from lingdiag.suites import minimal_pairs, syntaxgym
from lingdiag.suites.cxnli.metrics import CxnliMetrics
from lingdiag.suites.explica.metrics import ExplicaMetrics
from lingdiag.suites.imperfective.metrics import ImperfectiveMetrics


def _record(k: int, tags: dict[str, Any], detail: dict[str, Any] | None = None,
            fields: dict[str, Any] | None = None) -> ItemRecord:
    correct = k % 2 == 0
    return ItemRecord(condition="c", axes={}, item_id=f"i{k}", tags=tags, fields=fields or {}, prompts=[], outputs=[],
                      label="True" if correct else "False", detail=detail or {}, gold="True", correct=correct)


# Each suite's records and its metrics' TypedDict class (typing names no type for "a TypedDict class").
CASES: dict[str, tuple[list[ItemRecord], Any]] = {
    "imperfective": ([_record(k, {"group": "ABCD"[k % 4], "verb_class": "accomplishment"}) for k in range(8)],
                     ImperfectiveMetrics),
    "cxnli": ([_record(k, {"exp": "1", "construction": "comparative"}) for k in range(4)], CxnliMetrics),
    "explica": ([_record(k, {"relation": "causal_iconic", "type": "causal", "order": "iconic"},
                         {"ratings": {"so": 8, "because": k, "then": 1, "after": -1}},
                         {"human": {"so": 9.0, "because": 2.5 + k, "then": 1.5, "after": 3.0}})
                 for k in range(4)], ExplicaMetrics),
    "minimal-pairs": ([_record(k, {"UID": "anaphor", "linguistics_term": "binding"}) for k in range(4)],
                      minimal_pairs.PairMetrics),
    "syntaxgym": ([_record(k, {"suite": "npi"}, {"predictions": [True, k % 2 == 0]}) for k in range(4)],
                  syntaxgym.GymMetrics),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_suites_metrics_hold_exactly_its_typed_keys(name: str) -> None:
    records, typed = CASES[name]
    metrics = SUITES.get(name).condition_metrics(records)
    required, optional = typed.__required_keys__, typed.__optional_keys__
    assert required <= set(metrics) <= required | optional
    assert set(Counts.__required_keys__) <= required


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_headline_and_paired_metrics_are_typed_keys(name: str) -> None:
    """The keys a suite names as strings (its headline, the metrics ``compare`` permutes) are keys
    of its TypedDict, so a rename there fails here rather than as an empty report cell."""
    suite, typed = SUITES.get(name), CASES[name][1]
    keys = typed.__required_keys__ | typed.__optional_keys__
    assert set(suite.paired_metrics) <= keys
    assert not suite.headline or suite.headline in keys

"""A NaN or infinite score is never a win (issue 35, family 1).

A real OpenAI-compatible server on 127.0.0.1 answers echoed prompt log-probs; when they are
NaN, every item is failed (counted, never a win, never cached), and the same command against
the healthy server later answers every item afresh.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import run
from lingdiag.models.cache import CachedBackend, ResponseCache
from lingdiag.models.openai.backend import OpenAIBackend, OpenAIOptions
from lingdiag.models.openai.client import retry_after, token_count
from lingdiag.records import LogLikelihood, LoglikelihoodRequest

BOS = "<s>"
VALUE: list[Any] = [-1.0]


def echo(prompt: str) -> dict[str, object]:
    words = prompt.replace(BOS, "").split(" ")
    tokens = [BOS] + [(" " if k else "") + w for k, w in enumerate(words)]
    offsets, at = [], 0
    for t in tokens:
        offsets.append(at)
        at += len(t)
    return {"tokens": tokens, "text_offset": offsets, "token_logprobs": [None] + VALUE * len(words),
            "top_logprobs": [None] + [{} for _ in words]}


def backend(url: str) -> OpenAIBackend:
    return OpenAIBackend("word-model", url, OpenAIOptions(bos_text=BOS, verify_prompt_logprobs=False,
                                                           completions=True, max_retries=0))


@pytest.fixture()
def url(fake_api: Any) -> str:
    fake_api.logprobs = lambda request: echo(request["prompt"])
    return str(fake_api.url)


def _pairs(tmp_path: Path) -> Path:
    data = tmp_path / "p.jsonl"
    data.write_text("".join(json.dumps({"sentence_good": f"The cat sat {k}.", "sentence_bad": f"The cat sit {k}.",
                                        "UID": "p", "pairID": str(k)}) + "\n" for k in range(4)))
    return data


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_logprobs_are_failed_items_never_a_win_nor_cached(url: str, tmp_path: Path, bad: float) -> None:
    config = RunConfig(suite="minimal-pairs", model="word-model", dataset=str(_pairs(tmp_path)))
    cache = ResponseCache(tmp_path / "cache.sqlite")
    VALUE[0] = bad
    try:
        result = run(config, tmp_path / "run", backend=CachedBackend(backend(url), cache), cache=False)
    finally:
        VALUE[0] = -1.0
    m = result.metrics["simple/lingdiag"]
    assert m["n_errors"] == 4 and m.get("accuracy") != 1.0
    records = [json.loads(x) for x in (tmp_path / "run" / "items.jsonl").read_text().splitlines()]
    assert all(r["correct"] is None and "non-finite" in r["error"] for r in records)
    assert "Failed items" in result.table
    assert sqlite3.connect(cache.path).execute("SELECT COUNT(*) FROM responses").fetchone() == (0,)
    # The server healthy again: every item answered afresh, nothing stale from the cache.
    again = run(config, tmp_path / "run", backend=CachedBackend(backend(url), cache), cache=False)
    healthy = again.metrics["simple/lingdiag"]
    # Equal log-probs (the healthy word model gives every word -1): a tie, wrong under BLiMP's rule.
    assert healthy["n_errors"] == 0 and healthy["n"] == 4 and healthy["accuracy"] == 0.0


def test_non_finite_detail_is_a_failed_item(tmp_path: Path) -> None:
    """A score computed from finite log-probs that overflows is failed too (checked on the prediction)."""
    from lingdiag.engine.run import _score
    from lingdiag.records import Item, Prediction
    from lingdiag.suite import SUITES

    suite = SUITES.get("minimal-pairs")
    dataset = suite.load(str(_pairs(tmp_path)))
    condition = suite.conditions(dataset, {"method": ["simple"], "scoring-policy": ["lingdiag"]},
                                 suite.parse_options({}), 0)[0]

    class Overflow:
        def render(self, item: Item) -> Any:
            return condition.strategy.render(item)

        def parse(self, item: Item, responses: Any) -> Prediction:
            return Prediction("good", {"delta": -math.inf})

    broken = dataclasses.replace(condition, strategy=Overflow())
    item = condition.items[0]
    ok = LogLikelihood(-1.0, 1, True)
    record = _score(broken, item, condition.strategy.render(item), [ok, ok])
    assert record.correct is None and record.error and "non-finite score" in record.error


def test_text_logprob_is_a_failed_request(fake_api: Any) -> None:
    fake_api.logprobs = lambda request: {**echo(request["prompt"]), "token_logprobs": [None, "-1.0", "x", "y", "z"]}
    (answer,) = backend(fake_api.url).loglikelihood([LoglikelihoodRequest("", "The cat sat")])
    assert answer.error and "not a number" in answer.error


def test_odd_server_fields_are_read_not_raised() -> None:
    assert retry_after({"retry-after": "soon"}) is None
    assert token_count("five") == 0 and token_count(2.5) == 0 and token_count(3) == 3
    assert retry_after({"retry-after": "7"}) == 7.0


def test_cache_rows_with_swapped_values_are_not_served(tmp_path: Path) -> None:
    from lingdiag.records import response_to_json

    cache = ResponseCache(tmp_path / "c.sqlite")
    identity = {"backend": "x", "model": "m"}
    a, b = LoglikelihoodRequest("", "good"), LoglikelihoodRequest("", "bad")
    ka, kb = cache.key(identity, a), cache.key(identity, b)
    cache.put_many([(ka, "m", LogLikelihood(-1.0, 1, True)), (kb, "m", LogLikelihood(-9.0, 1, False))])
    assert cache.db is not None
    rows = dict(((k, (v, c)) for k, v, c in cache.db.execute("SELECT key, value, sha256 FROM responses")))
    with cache.db:
        cache.db.execute("UPDATE responses SET value = ?, sha256 = ? WHERE key = ?", (*rows[kb], ka))
        cache.db.execute("UPDATE responses SET value = ?, sha256 = ? WHERE key = ?", (*rows[ka], kb))
    assert cache.get_many([ka, kb]) == {} and cache.rejected == 2
    assert json.loads(rows[ka][0]) == response_to_json(LogLikelihood(-1.0, 1, True))

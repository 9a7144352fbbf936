"""The scoring policy: presets, validation, and cache keys (defaults unchanged, policies apart)."""

from __future__ import annotations

import pytest

from lingdiag.errors import ConfigError, UnknownNameError
from lingdiag.models.cache import ResponseCache
from lingdiag.records import LoglikelihoodRequest
from lingdiag.scoring import LINGDIAG, PRESETS, ScoringPolicy, policy, policy_names

IDENTITY = {"backend": "hf", "model": "m", "weights_sha256": "x"}


def test_default_request_key_is_as_before_policies() -> None:
    r = LoglikelihoodRequest("The cat", " sat")
    assert r.policy == LINGDIAG
    assert r.key() == {"kind": "loglikelihood", "context": "The cat", "continuation": " sat"}


def test_policies_and_per_token_tell_cache_keys_apart() -> None:
    keys = {ResponseCache.key(IDENTITY, LoglikelihoodRequest("", "A b.", policy=p)) for p in PRESETS.values()}
    keys.add(ResponseCache.key(IDENTITY, LoglikelihoodRequest("", "A b.", per_token=True)))
    keys.add(ResponseCache.key(IDENTITY, LoglikelihoodRequest("", "A b.", policy=policy("bos+ws"))))
    assert len(keys) == len(PRESETS) + 2


@pytest.mark.parametrize(("name", "prefix", "scope", "space", "first"), [
    ("lingdiag", "auto", "empty-context", False, True),
    ("bos", "auto", "always", False, True),
    ("lm-eval", "auto", "always", True, True),
    ("minicons", "none", "always", False, False),
])
def test_presets(name: str, prefix: str, scope: str, space: bool, first: bool) -> None:
    p = policy(name)
    assert (p.prefix, p.prefix_scope, p.leading_space, p.score_first_token) == (prefix, scope, space, first)
    assert not p.whitespace_correction
    assert policy(name + "+ws").whitespace_correction


def test_prefix_scope() -> None:
    assert LINGDIAG.prefixes(context_empty=True) and not LINGDIAG.prefixes(context_empty=False)
    assert policy("bos").prefixes(context_empty=False)
    assert not policy("minicons").prefixes(context_empty=True)


def test_bad_policies() -> None:
    with pytest.raises(ConfigError, match="nothing to be predicted from"):
        ScoringPolicy("x", prefix="none")
    with pytest.raises(UnknownNameError, match="valid scoring policys: bos"):
        policy("bos+ws+ws")
    assert "minicons+ws" in policy_names()

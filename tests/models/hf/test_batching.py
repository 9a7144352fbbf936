"""Batch and prefix planning of the transformers backend (pure Python, no model)."""

from __future__ import annotations

import pytest

from lingdiag.models.hf.batching import (
    Budget,
    Group,
    common_prefix,
    common_prefix_all,
    pack_groups,
    plan_groups,
    token_budget_batches,
)
from lingdiag.models.hf.decode import cut_at_stop, stop_window
from lingdiag.models.hf.load import fallback_chat
from lingdiag.records import ChatMessage


@pytest.mark.parametrize(("a", "b", "n"),
                         [([], [1], 0), ([1, 2, 3], [1, 2, 4], 2), ([5], [5], 1), ([1, 2], [1, 2, 3], 2)])
def test_common_prefix(a: list[int], b: list[int], n: int) -> None:
    assert common_prefix(a, b) == n


def test_common_prefix_all_uses_every_sequence() -> None:
    assert common_prefix_all([[1, 2, 3, 4], [1, 2, 3], [1, 2, 9, 9]]) == 2
    assert common_prefix_all([]) == 0


def _saved(groups: list[Group], root: int) -> int:
    return sum((len(g.members) - 1) * (g.end - root) for g in groups if len(g.members) > 1)


def test_plan_groups_finds_connective_variants() -> None:
    # Three "first sentences" of 6 tokens after a shared BOS (1), each with four variants; the
    # first sentences share 2 tokens with each other, which must not merge the groups.
    seqs = [[1, 7, 7, s, s + 1, s + 2, s + 3, 40 + c, 50, 51] for s in (10, 20, 30) for c in range(4)]
    groups = plan_groups(seqs, root=1, max_size=64)
    assert sorted(i for g in groups for i in g.members) == list(range(12))
    assert sorted(sorted(g.members) for g in groups) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    assert {g.end for g in groups} == {7}
    assert _saved(groups, 1) == 3 * 3 * 6


def test_plan_groups_lone_sequences_and_size_cap() -> None:
    seqs = [[1, 2, 3], [4, 5], [1, 2, 3, 6], [1, 2, 3, 7], [1, 2, 3, 8]]
    groups = plan_groups(seqs, root=0, max_size=2)
    assert sorted(i for g in groups for i in g.members) == list(range(5))
    assert all(len(g.members) <= 2 for g in groups)
    lone = next(g for g in groups if g.members == (1,))
    assert lone.end == 2  # a lone sequence's whole remainder is its segment


def test_plan_groups_prefers_long_shared_prompts_over_chaining() -> None:
    # Label scoring: two items share a 3-token system prompt (the root), each item's prompt
    # is 5 more tokens, then one label token per candidate.
    item = [[9, 9, 9, 1, 1, 1, 1, 1, lab] for lab in (70, 71, 72)] + [[9, 9, 9, 2, 2, 2, 2, 2, lab] for lab in (70, 71)]
    groups = plan_groups(item, root=3, max_size=64)
    assert sorted(sorted(g.members) for g in groups) == [[0, 1, 2], [3, 4]]
    assert all(g.end == 8 for g in groups)


def test_token_budget_batches_cover_and_respect_budget() -> None:
    lengths = [5, 50, 7, 30, 30, 2, 90, 12]
    batches = token_budget_batches(lengths, budget=100, max_batch=3)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        assert len(b) <= 3
        assert len(b) == 1 or max(lengths[i] for i in b) * len(b) <= 100


def test_pack_groups_cover_and_respect_budget() -> None:
    seqs = [[1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 7], [1, 2, 8], [1, 2, 9, 9, 9, 9, 9, 9], [1, 5]]
    groups = plan_groups(seqs, root=1, max_size=2)
    budget = Budget(tokens=16, max_batch=3, prefix_reuse=True)
    batches = pack_groups(groups, seqs, 1, budget)
    assert sorted(i for b in batches for g in b for i in g.members) == list(range(len(seqs)))
    for b in batches:
        rows = sum(len(g.members) for g in b)
        longest = max(len(seqs[i]) for g in b for i in g.members)
        assert len(b) == 1 or (rows <= budget.max_batch and rows * longest <= budget.tokens)
    # Longest tails first: similar tails share a batch.
    assert 3 in batches[0][0].members


def test_stop_strings() -> None:
    assert stop_window(()) == 0
    assert stop_window(("\n", "END")) == 4
    assert cut_at_stop("Yes.\nNo END", ("END", "\n")) == "Yes."
    assert cut_at_stop("Yes", ("\n",)) == "Yes"


def test_fallback_chat_ends_with_the_assistant_turn() -> None:
    text = fallback_chat([ChatMessage("system", "Be brief."), ChatMessage("user", "Hi?")])
    assert text == "System: Be brief.\n\nUser: Hi?\n\nAssistant:"

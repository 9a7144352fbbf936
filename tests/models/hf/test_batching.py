"""Batch and prefix planning of the transformers backend (pure Python, no model)."""

from __future__ import annotations

import itertools
import random

import pytest

from lingdiag.models.base import cut_at_stop
from lingdiag.models.hf.batching import (
    Budget,
    Group,
    common_prefix,
    common_prefix_all,
    length_chunks,
    pack_groups,
    plan_groups,
    token_budget_batches,
)
from lingdiag.models.hf.decode import stop_window
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


def _split_cost(lengths: list[int], chunks: list[list[int]], call_tokens: int) -> int:
    return sum(call_tokens + len(c) * max(lengths[i] for i in c) for c in chunks)


def test_length_chunks_without_a_price_is_one_pass_sorted_by_length() -> None:
    assert length_chunks([3, 1, 2, 1], None) == [[1, 3, 2, 0]]
    assert length_chunks([], None) == length_chunks([], 5) == []


def test_length_chunks_splits_only_where_padding_saved_pays_for_a_pass() -> None:
    lengths = [2] * 200 + [9]
    # One row of 9 pads 200 rows of 2 by 1,400 tokens: worth a second pass at 100, not at 2,000.
    assert [len(c) for c in length_chunks(lengths, 100)] == [200, 1]
    assert [len(c) for c in length_chunks(lengths, 2000)] == [201]
    mixed = [4, 2, 2, 9, 4]
    assert [sorted({mixed[i] for i in c}) for c in length_chunks(mixed, 0)] == [[2], [4], [9]]


def test_length_chunks_is_the_cheapest_split_into_length_runs() -> None:
    rng = random.Random(7)
    for _ in range(200):
        lengths = [rng.choice([1, 2, 3, 5, 8, 13]) for _ in range(rng.randint(1, 12))]
        call_tokens = rng.choice([0, 3, 10, 40])
        chunks = length_chunks(lengths, call_tokens)
        assert sorted(i for c in chunks for i in c) == list(range(len(lengths)))
        order = [i for c in chunks for i in c]
        assert [lengths[i] for i in order] == sorted(lengths)
        # Brute force over every split of the sorted rows into contiguous runs.
        best = min(_split_cost(lengths, [order[a:b] for a, b in itertools.pairwise([0, *cuts, len(order)])],
                               call_tokens)
                   for k in range(len(order))
                   for cuts in itertools.combinations(range(1, len(order)), k))
        assert _split_cost(lengths, chunks, call_tokens) == best


def test_stop_strings() -> None:
    assert stop_window(()) == 0
    assert stop_window(("\n", "END")) == 4
    assert cut_at_stop("Yes.\nNo END", ("END", "\n")) == "Yes."
    assert cut_at_stop("Yes", ("\n",)) == "Yes" and cut_at_stop("Yes", ("", "s")) == "Ye"


def test_fallback_chat_ends_with_the_assistant_turn() -> None:
    text = fallback_chat([ChatMessage("system", "Be brief."), ChatMessage("user", "Hi?")])
    assert text == "System: Be brief.\n\nUser: Hi?\n\nAssistant:"


def test_fill_packs_keeps_each_batch_within_its_tokens_in_plan_order() -> None:
    from lingdiag.models.hf.batching import Group, fill_packs

    seqs = [[1, 2, 3, 4], [1, 2, 3, 5, 6], [1, 7], [1, 8, 9, 9, 9, 9, 9, 9, 9, 9]]
    groups = [Group(end=3, members=(0, 1)), Group(end=2, members=(2,)), Group(end=10, members=(3,))]
    # Beyond the root (1 token): group 0 is 2 shared + 1 + 2 tail tokens, group 1 is 1, group 2 is 9.
    assert fill_packs(groups, seqs, 1, 6) == [[groups[0], groups[1]], [groups[2]]]  # 9 > 6: a pass of its own
    assert fill_packs(groups, seqs, 1, 100) == [groups]

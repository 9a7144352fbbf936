"""Batch and shared-prefix planning for batched forward passes (pure Python; no torch).

Batches are formed by a token budget over length-sorted requests (``token_budget_batches``;
``pack_groups`` for the groups below): short requests travel in large batches, long ones in
small.

Requests of one condition often start with the same tokens: the system prompt and
few-shot block of every item, the first sentence of ExpliCa's four connective variants,
an item's prompt before each candidate label. Their key/value cache only needs computing
once. The transformers backend runs such requests as a three-level tree:

- the **root**: the prefix common to every sequence of the call, run once at batch size 1;
- **groups**: runs of sequences sharing more than the root (found here), one row each;
- **tails**: what is left of each sequence, one row each, on top of its group's cache.

Grouping maximises the tokens saved, ``(members - 1) × shared length`` summed over groups,
by dynamic programming over the sequences in sorted order, where sequences sharing a
prefix are adjacent and the longest prefix a run shares is the minimum over its
neighbours.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    n = min(len(a), len(b))
    k = 0
    while k < n and a[k] == b[k]:
        k += 1
    return k


def common_prefix_all(seqs: Sequence[list[int]]) -> int:
    """Length of the prefix shared by every sequence (0 for no sequences)."""
    if not seqs:
        return 0
    # The lexicographic extremes bound everyone's shared prefix.
    return common_prefix(min(seqs), max(seqs))


@dataclass(frozen=True, slots=True)
class Group:
    """Sequences that share tokens ``[root, end)`` on top of the call-wide root prefix."""

    end: int
    """End of the shared segment; ``end == root`` means the group shares nothing more."""
    members: tuple[int, ...]
    """Indices into the planned sequences."""


def plan_groups(seqs: Sequence[list[int]], root: int, max_size: int) -> list[Group]:
    """Partition ``seqs`` into groups that save the most recomputed tokens.

    A lone sequence becomes a group of one whose shared segment is its whole remainder, so
    every non-empty remainder is computed exactly once at the group level.

    Args:
        seqs: Token sequences, all starting with the same ``root`` tokens.
        root: Length of the prefix common to all of ``seqs``.
        max_size: Largest number of members in one group (one batch's worth of rows).

    Returns:
        Groups covering every index once, in sorted-sequence order.
    """
    order = sorted(range(len(seqs)), key=lambda i: seqs[i])
    # shared[j]: tokens beyond the root that order[j] shares with order[j - 1].
    shared = [0] + [common_prefix(seqs[order[j - 1]], seqs[order[j]]) - root for j in range(1, len(order))]
    best = [0] * (len(order) + 1)
    start = [0] * (len(order) + 1)
    for j in range(1, len(order) + 1):
        best[j], start[j] = best[j - 1], j - 1
        run_min = None
        # The run order[k:j]: its members share min(shared[k+1:j]) tokens beyond the root.
        for k in range(j - 2, max(-1, j - 1 - max_size), -1):
            run_min = shared[k + 1] if run_min is None else min(run_min, shared[k + 1])
            if run_min == 0:
                break
            gain = best[k] + (j - k - 1) * run_min
            if gain > best[j]:
                best[j], start[j] = gain, k
    groups: list[Group] = []
    j = len(order)
    while j > 0:
        k = start[j]
        members = tuple(order[k:j])
        if len(members) == 1:
            end = len(seqs[members[0]])
        else:
            end = root + min(shared[k + 1:j])
        groups.append(Group(end=end, members=members))
        j = k
    groups.reverse()
    return groups


@dataclass(frozen=True, slots=True)
class Budget:
    """How one call batches its requests."""

    tokens: int
    """Padded tokens per batch."""
    max_batch: int
    """Upper bound on rows per forward batch."""
    prefix_reuse: bool
    """Whether shared prefixes are computed once (else every request runs in full)."""
    continuous: bool = True
    """Generation only: refill the rows of finished answers with waiting requests (else
    fixed batches that thin out as answers end)."""
    static: bool = False
    """Generation only: decode in fixed rows × slots written in place (``kv.SlotCache``) instead of
    a cache grown by ``torch.cat`` at every step."""
    call_tokens: int | None = None
    """Scoring only: the padded tokens one more forward pass is worth (``length_chunks``); None
    runs each tree level of a batch as one pass, however much padding that takes."""
    packed: int | None = None
    """Scoring only: run each tree level packed into one row of at most about this many tokens
    (``fill_packs``; no padding, no row limit); None: left-padded rows within ``tokens`` and ``max_batch``.
    The work model (``workplan.choose``) picks the tokens per pass, up to this."""
    choose_padded: bool = False
    """Scoring only, with ``packed``: the work model may choose the padded plan instead, where it does
    less work (``packing=auto``)."""


def token_budget_batches(lengths: Sequence[int], budget: int, max_batch: int = 64) -> list[list[int]]:
    """Group indices, longest first, so that ``batch size × longest length ≤ budget``.

    Args:
        lengths: Token length of each request (including tokens to be generated).
        budget: Maximum padded tokens per batch.
        max_batch: Upper bound on requests per batch.

    Returns:
        Batches of indices into ``lengths``; every index appears once.
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        if batches and len(batches[-1]) < max_batch and lengths[batches[-1][0]] * (len(batches[-1]) + 1) <= budget:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def pack_groups(groups: list[Group], seqs: Sequence[list[int]], root: int, budget: Budget) -> list[list[Group]]:
    """Batches of groups within the token budget, similar tails together (less padding).

    Args:
        groups: Groups from ``plan_groups``.
        seqs: The planned sequences.
        root: Length of the prefix common to all of ``seqs``.
        budget: Padded tokens (``tokens``) and rows (``max_batch``) per batch; a batch
            holds one row per member of its groups.

    Returns:
        Batches of groups; every group appears once.
    """
    def tail(g: Group) -> int:
        return max(len(seqs[i]) for i in g.members) - g.end

    groups = sorted(groups, key=lambda g: (-tail(g), -(g.end - root)))
    batches: list[list[Group]] = []
    rows = longest = 0
    for g in groups:
        length = max(len(seqs[i]) for i in g.members)
        if batches and rows + len(g.members) <= budget.max_batch and \
                max(longest, length) * (rows + len(g.members)) <= budget.tokens:
            batches[-1].append(g)
            rows, longest = rows + len(g.members), max(longest, length)
        else:
            batches.append([g])
            rows, longest = len(g.members), length
    return batches


def fill_packs(groups: list[Group], seqs: Sequence[list[int]], root: int, width: int) -> list[list[Group]]:
    """Batches of groups for packed passes: each batch's tokens beyond the root (its groups' shared
    segments and their members' tails) stay within ``width``, in plan order; a group larger than
    ``width`` is a batch of its own.

    Args:
        groups: Groups from ``plan_groups``.
        seqs: The planned sequences.
        root: Length of the prefix common to all of ``seqs``.
        width: Tokens per batch.

    Returns:
        Batches of groups; every group appears once.
    """
    batches: list[list[Group]] = []
    filled = 0
    for g in groups:
        size = g.end - root + sum(len(seqs[i]) - g.end for i in g.members)
        if batches and filled + size <= width:
            batches[-1].append(g)
            filled += size
        else:
            batches.append([g])
            filled = size
    return batches


def length_chunks(lengths: Sequence[int], call_tokens: int | None) -> list[list[int]]:
    """Split rows into passes of similar length where the padding saved pays for the extra pass.

    The tails of a scoring batch (the last tree level) differ in length: one row of 9 tokens
    pads 200 rows of 2 to 9. Each pass costs ``call_tokens`` plus its rows × its longest row;
    the cheapest split into runs of the length-sorted rows is found by dynamic programming
    over the distinct lengths.

    Args:
        lengths: Tokens per row.
        call_tokens: What one more pass costs, in padded tokens (None: one pass).

    Returns:
        Chunks of indices into ``lengths``, shortest rows first; every index appears once
        (none for no rows).
    """
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    if not order:
        return []
    if call_tokens is None:
        return [order]
    # ends[k]: one past the last sorted row of length distinct[k].
    distinct = sorted(set(lengths))
    index = {n: k for k, n in enumerate(distinct)}
    ends = [0] * len(distinct)
    for rank, i in enumerate(order):
        ends[index[lengths[i]]] = rank + 1
    cost = [0] + [0] * len(distinct)
    cut = [0] * (len(distinct) + 1)
    for j in range(1, len(distinct) + 1):
        # The last pass holds the rows of distinct[k:j], padded to distinct[j - 1].
        options = ((cost[k] + call_tokens + (ends[j - 1] - (ends[k - 1] if k else 0)) * distinct[j - 1], k)
                   for k in range(j))
        cost[j], cut[j] = min(options)
    chunks: list[list[int]] = []
    j = len(distinct)
    while j:
        k = cut[j]
        chunks.append(order[ends[k - 1] if k else 0:ends[j - 1]])
        j = k
    return chunks[::-1]

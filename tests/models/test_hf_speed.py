"""The speed engine of the transformers backend: prefix planning, and prefix reuse equal to the plain path."""

from __future__ import annotations

import copy
import subprocess
import sys
from collections.abc import Iterator

import pytest

from lingdiag.models.hf import HFBackend, token_budget_batches
from lingdiag.models.prefix import Group, common_prefix, common_prefix_all, plan_groups
from lingdiag.records import ChatMessage, GenerationRequest, LoglikelihoodRequest

LOGPROB_TOLERANCE = 1e-4


# -- planning (pure) ------------------------------------------------------------------

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


# -- equality with the plain path on the embedded models -------------------------------

def _plain(backend: HFBackend) -> HFBackend:
    """The same loaded model on the plain path."""
    plain = copy.copy(backend)
    plain.prefix_reuse = False
    return plain


def _loglik_requests() -> list[LoglikelihoodRequest]:
    from lingdiag.datasets.explica import builtin_items
    from lingdiag.suites.explica import PerplexityTask

    # ExpliCa perplexity: four sentences per pair, empty context, shared first sentence.
    requests = [r for it in builtin_items()[:5] for r in PerplexityTask().render(it)]
    assert all(isinstance(r, LoglikelihoodRequest) for r in requests)
    # Label scoring: a shared instruction, a prompt per item, one request per candidate label.
    system = "Decide whether the hypothesis follows from the premise. Answer True, False or Unknown.\n\n"
    for premise, hypothesis in (("Anna was painting a portrait.", "Anna painted a portrait."),
                                ("The dog was crossing the street.", "The dog crossed the street.")):
        context = f"{system}Premise: {premise}\nHypothesis: {hypothesis}\nAnswer:"
        requests += [LoglikelihoodRequest(context, f" {label}") for label in ("True", "False", "Unknown")]
    # A lone request and one whose context ends in a space.
    return [*requests, LoglikelihoodRequest("The cat sat on the ", "mat.")]  # type: ignore[list-item]


def _assert_loglik_equal(backend: HFBackend, requests: list[LoglikelihoodRequest]) -> float:
    fast = backend.loglikelihood(requests)
    plain = _plain(backend).loglikelihood(requests)
    diff = max(abs(a.logprob - b.logprob) for a, b in zip(fast, plain, strict=True))
    assert diff < LOGPROB_TOLERANCE
    assert [a.n_tokens for a in fast] == [b.n_tokens for b in plain]
    assert [a.is_greedy for a in fast] == [b.is_greedy for b in plain]
    # Same decision per group of four (ExpliCa) and per group of three labels.
    for k in range(0, 20, 4):
        assert max(range(4), key=lambda j: fast[k + j].logprob / fast[k + j].n_tokens) == \
            max(range(4), key=lambda j: plain[k + j].logprob / plain[k + j].n_tokens)
    for k in (20, 23):
        assert max(range(3), key=lambda j: fast[k + j].logprob) == max(range(3), key=lambda j: plain[k + j].logprob)
    return diff


def _generation_requests(n: int, max_new: int) -> list[GenerationRequest]:
    from lingdiag.datasets.imperfective import builtin_items
    from lingdiag.suites.imperfective import strategy

    items = builtin_items()[::max(1, len(builtin_items()) // n)][:n]
    requests = [strategy("zero-shot", max_new_tokens=max_new).render(it)[0] for it in items]
    # A few-shot variant: the examples lengthen the shared prefix.
    shots = (("Premise: Tom was building a shed.\nHypothesis: Tom built a shed.", "Unknown"),)
    few = strategy("zero-shot", max_new_tokens=max_new)
    turns = [ChatMessage("system", few.system)]
    for q, a in shots:
        turns += [ChatMessage("user", q), ChatMessage("assistant", a)]
    requests += [GenerationRequest(messages=(*turns, r.messages[-1]), max_new_tokens=max_new)
                 for r in requests[:3]]
    # Stop strings ride along in their own group.
    requests += [GenerationRequest(messages=r.messages, max_new_tokens=max_new, stop=("\n",)) for r in requests[:2]]
    return requests


def _assert_generation_equal(backend: HFBackend, requests: list[GenerationRequest]) -> float:
    fast = backend.generate(requests)
    plain = _plain(backend).generate(requests)
    assert [g.text for g in fast] == [g.text for g in plain]
    assert [g.n_tokens for g in fast] == [g.n_tokens for g in plain]
    diff = 0.0
    for a, b in zip(fast, plain, strict=True):
        assert a.logprobs is not None and b.logprobs is not None
        diff = max(diff, *(abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True)))
    assert diff < LOGPROB_TOLERANCE
    return diff


@pytest.mark.slow
def test_smollm2_loglikelihood_prefix_reuse_equals_plain(smollm2: HFBackend) -> None:
    _assert_loglik_equal(smollm2, _loglik_requests())


@pytest.mark.slow
def test_smollm2_generation_prefix_reuse_equals_plain(smollm2: HFBackend) -> None:
    requests = _generation_requests(8, max_new=12)
    assert smollm2._shared_prompt([smollm2._encode_prompt(r) for r in requests[:8]], 12) is not None
    _assert_generation_equal(smollm2, requests)


@pytest.mark.slow
def test_smollm2_batched_decoding_with_eviction_equals_transformers_generate(smollm2: HFBackend) -> None:
    # SmolLM2 answers DAP prompts in two tokens and CoT prompts at length: in one batch,
    # finished rows are dropped while others decode on.
    import torch

    from lingdiag.datasets.imperfective import builtin_items
    from lingdiag.suites.imperfective import strategy

    max_new = 40
    items = builtin_items()[::50][:4]
    requests = [strategy(name, max_new_tokens=max_new).render(it)[0] for name in ("dap", "cot") for it in items]
    before = smollm2.usage()["head_positions"]
    ours = smollm2.generate(requests)
    lengths = sorted(g.n_tokens for g in ours)
    assert lengths[0] < 5 and lengths[-1] > 20  # the batch really had early finishers
    # Rows were dropped: far fewer LM-head positions than rows × steps (+1 for the prefix pass).
    assert smollm2.usage()["head_positions"] - before < len(requests) * lengths[-1]
    eos = sorted(smollm2.eos_ids)
    for request, g in zip(requests, ours, strict=True):
        ids = torch.tensor([smollm2._encode_prompt(request)])
        with torch.inference_mode():
            ref = smollm2.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                         max_new_tokens=max_new, eos_token_id=eos,
                                         pad_token_id=smollm2.tokenizer.pad_token_id)
        new = ref[0, ids.shape[1]:].tolist()
        assert g.n_tokens == len(new)
        assert g.text == smollm2.tokenizer.decode([t for t in new if t not in eos], skip_special_tokens=True)


@pytest.mark.slow
def test_smollm2_last_tree_level_reads_parent_rows_without_changing_them(smollm2: HFBackend) -> None:
    # The last level of the log-likelihood tree gathers its parents' rows layer by layer
    # (RowView) instead of copying them: same hidden states, parent cache untouched.
    import torch

    tok = smollm2.tokenizer
    groups = [tok(t, add_special_tokens=False)["input_ids"] for t in ("The ice melted,", "It rained all day,")]
    tails = [tok(t, add_special_tokens=False)["input_ids"] for t in (" so the floor was wet.", " because",
                                                                     " then the street was wet.")]
    parents = [0, 0, 1]
    base, _ = smollm2._extend(None, [0, 0], groups)
    assert base is not None
    before = [(layer.keys.clone(), layer.values.clone()) for layer in base.cache.layers]
    copied_rows, copied = smollm2._extend(base, parents, tails)
    viewed_rows, viewed = smollm2._extend(base, parents, tails, keep=False)
    assert copied_rows is not None and viewed_rows is None
    assert torch.equal(copied, viewed)
    for layer, (keys, values) in zip(base.cache.layers, before, strict=True):
        assert torch.equal(layer.keys, keys) and torch.equal(layer.values, values)


@pytest.mark.slow
def test_transformers_backend_keeps_triton_out_and_still_constrains() -> None:
    # triton compiles GPU kernels; torch imports it eagerly when installed (~70 MB resident).
    # A fresh process that loads the backend must not import it, and constrained decoding
    # (xgrammar, which depends on triton) must still work on CPU.
    code = """
import sys
from lingdiag.models import constraints
from lingdiag.models.providers import load_backend
from lingdiag.records import ChatMessage, Constraint, GenerationRequest
b = load_backend('smollm2-135m')
c = Constraint('choice', choices=('so', 'because')) if constraints.available() else None
out = b.generate([GenerationRequest(messages=(ChatMessage('user', 'It rained. The street is wet. so or because?'),),
                                    max_new_tokens=4, constraint=c)])
assert sys.modules.get('triton') is None, 'triton was imported'
assert c is None or out[0].text in ('so', 'because'), out
"""
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.fixture(scope="module")
def gemma3() -> Iterator[HFBackend]:
    from lingdiag.models.providers import load_backend

    backend = load_backend("gemma3-270m")
    assert isinstance(backend, HFBackend)
    yield backend


@pytest.mark.slow
def test_gemma3_prefix_reuse_equals_plain(gemma3: HFBackend) -> None:
    # A base model with a BOS token, sliding-window layers and a 262k vocabulary.
    requests = _loglik_requests()
    _assert_loglik_equal(gemma3, requests)
    _assert_generation_equal(gemma3, _generation_requests(3, max_new=6)[:3])


def test_backend_is_built_without_importing_torch() -> None:
    # A run answered from the cache must not pay for torch, transformers or the weights.
    code = ("import sys; from lingdiag.models.providers import load_backend; b = load_backend('smollm2-135m'); "
            "b.identity; b.capabilities; assert 'torch' not in sys.modules and 'transformers' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)

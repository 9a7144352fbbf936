"""The speed engine of the transformers backend: prefix reuse equal to the plain path, row eviction,
and the lazy imports. Planning alone is tested in ``test_batching``."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from functools import cache

import pytest

from lingdiag.models.hf import HFBackend, HFOptions
from lingdiag.models.hf.decode import Decoder
from lingdiag.models.hf.forward import Forward
from lingdiag.models.hf.placement import resolve
from lingdiag.records import ChatMessage, GenerationRequest, LoglikelihoodRequest

LOGPROB_TOLERANCE = 1e-4


# -- equality with the plain path on the embedded models -------------------------------

@cache
def _plain_backend(path: str) -> HFBackend:
    return HFBackend(path, HFOptions(prefix_reuse=False))


def _plain(backend: HFBackend) -> HFBackend:
    """The same model on the plain path (loaded once per model)."""
    return _plain_backend(backend.identity["path"])


def _loglik_requests() -> list[LoglikelihoodRequest]:
    from lingdiag.suites.explica.data import builtin_items
    from lingdiag.suites.explica.tasks import PerplexityTask

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
    from lingdiag.suites.imperfective.data import builtin_items
    from lingdiag.suites.imperfective.prompts import strategy

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
@pytest.mark.parametrize("call_tokens", [None, 0])
def test_smollm2_tail_passes_split_by_length_equal_plain(smollm2: HFBackend, call_tokens: int | None) -> None:
    # The tree's last level in one padded pass (None) or one pass per tail length (0): the same
    # log-probs as the plain path; splitting pads strictly less on these mixed-length tails.
    split = HFBackend(smollm2.identity["path"], placement=replace(resolve(), call_tokens=call_tokens))
    _assert_loglik_equal(split, _loglik_requests())
    whole = HFBackend(smollm2.identity["path"], placement=replace(resolve(), call_tokens=None))
    whole.loglikelihood(_loglik_requests())
    if call_tokens == 0:
        assert split.usage()["padded_tokens"] < whole.usage()["padded_tokens"]
        assert split.usage()["forward_tokens"] == whole.usage()["forward_tokens"]


@pytest.mark.slow
def test_smollm2_generation_prefix_reuse_equals_plain(smollm2: HFBackend) -> None:
    requests = _generation_requests(8, max_new=12)
    decoder = Decoder(Forward(smollm2.loaded, Counter()))
    assert decoder.shared_prompt([smollm2.loaded.encode_prompt(r) for r in requests[:8]], 12) is not None
    _assert_generation_equal(smollm2, requests)


@pytest.mark.slow
def test_smollm2_grouped_query_attention_equals_repeated_heads(smollm2: HFBackend,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # The backend lets SDPA read grouped key/value heads (load.py). transformers' repeat_kv
    # copies (the variable is read per call) give the same log-likelihoods bit for bit; on
    # decoding steps transformers groups the single query itself, another kernel path.
    import os

    smollm2.model  # noqa: B018 - loading sets the default
    assert os.environ["TRANSFORMERS_SDPA_FORCE_GQA"] == "1"
    scoring, generation = _loglik_requests(), _generation_requests(8, max_new=12)
    grouped = smollm2.loglikelihood(scoring), smollm2.generate(generation)
    monkeypatch.setenv("TRANSFORMERS_SDPA_FORCE_GQA", "0")
    repeated = smollm2.loglikelihood(scoring), smollm2.generate(generation)
    assert [a.logprob for a in grouped[0]] == [b.logprob for b in repeated[0]]
    assert [a.text for a in grouped[1]] == [b.text for b in repeated[1]]
    assert max(abs(x - y) for a, b in zip(grouped[1], repeated[1], strict=True)
               for x, y in zip(a.logprobs or (), b.logprobs or (), strict=True)) < 1e-5


@pytest.mark.slow
def test_smollm2_batched_decoding_with_eviction_equals_transformers_generate(smollm2: HFBackend) -> None:
    # SmolLM2 answers DAP prompts in two tokens and CoT prompts at length: in one batch,
    # finished rows are dropped while others decode on.
    import torch

    from lingdiag.suites.imperfective.data import builtin_items
    from lingdiag.suites.imperfective.prompts import strategy

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
        ids = torch.tensor([smollm2.loaded.encode_prompt(request)])
        with torch.inference_mode():
            ref = smollm2.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                         max_new_tokens=max_new, eos_token_id=eos,
                                         pad_token_id=smollm2.tokenizer.pad_token_id)
        new = ref[0, ids.shape[1]:].tolist()
        assert g.n_tokens == len(new)
        assert g.text == smollm2.tokenizer.decode([t for t in new if t not in eos], skip_special_tokens=True)


@pytest.mark.slow
@pytest.mark.parametrize("prefix_reuse", [True, False])
def test_smollm2_continuous_batching_equals_fixed_batches(smollm2: HFBackend, prefix_reuse: bool) -> None:
    # Short (DAP) and long (CoT) answers under a budget of a few rows: finished rows leave
    # and waiting requests are prefilled and merged into the running batch.
    from lingdiag.suites.imperfective.data import builtin_items
    from lingdiag.suites.imperfective.prompts import strategy

    items = builtin_items()[::25][:4]
    pairs = [strategy(name, max_new_tokens=24).render(it)[0] for it in items for name in ("dap", "cot")]
    # DAP answers in two tokens, CoT runs to the limit. Filler in the system turn, longest
    # first, alternates the two in the longest-first queue: a batch holds both, and its DAP
    # rows finish while CoT requests wait.
    requests = [replace(r, messages=(ChatMessage("system", r.messages[0].content + " Please answer." * 30 * (11 - j)),
                                     *r.messages[1:])) for j, r in enumerate(pairs)]
    path = smollm2.identity["path"]
    pool = HFBackend(path, HFOptions(batch_tokens=4000, prefix_reuse=prefix_reuse))
    fixed = HFBackend(path, HFOptions(batch_tokens=4000, prefix_reuse=prefix_reuse, continuous_batching=False))
    ours, ref = pool.generate(requests), fixed.generate(requests)
    assert pool.usage()["refilled_rows"] > 0 and fixed.usage()["refilled_rows"] == 0
    assert [g.text for g in ours] == [g.text for g in ref]
    assert [g.n_tokens for g in ours] == [g.n_tokens for g in ref]
    diff = max(abs(x - y) for a, b in zip(ours, ref, strict=True)
               for x, y in zip(a.logprobs or (), b.logprobs or (), strict=True))
    assert diff < LOGPROB_TOLERANCE
    # Fewer padded rows decoded: the pool does not carry finished rows or wait for a batch's longest answer.
    assert pool.usage()["padded_tokens"] <= fixed.usage()["padded_tokens"]


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
    forward = Forward(smollm2.loaded, Counter())
    base, _ = forward.extend(None, [0, 0], groups)
    assert base is not None
    before = [(layer.keys.clone(), layer.values.clone()) for layer in base.cache.layers]
    copied_rows, copied = forward.extend(base, parents, tails)
    viewed_rows, viewed = forward.extend(base, parents, tails, keep=False)
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
from lingdiag.models.hf import constraints
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

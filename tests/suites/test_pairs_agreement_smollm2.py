"""minimal-pairs and syntaxgym on the real SmolLM2 agree with a plain transformers computation.

The plain side is written here, independently of lingdiag's backend: ``AutoModelForCausalLM``
on the converted model directory, one sentence at a time, no batching, float64
log-softmax; the policy's prefix (the tokenizer's BOS, else EOS; or nothing), its leading
space and its first-token rule applied by hand; regions assigned by each token's first
non-space character from the tokenizer's own offsets; the whitespace correction from the
full next-token distribution. Item decisions must agree on at least 99.5% of items (a
near-tie may fall either way between batched and unbatched float32 arithmetic).

``LINGDIAG_PAIRS_LIMIT`` sets the items per condition (default 60 BLiMP pairs and 30
SyntaxGym items, spread over every paradigm and suite; 0: all 6,000 pairs and 151 items);
``LINGDIAG_PAIRS_POLICIES`` and ``LINGDIAG_REGIONS_POLICIES`` the policies (comma-separated).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from lingdiag.config import RunConfig
from lingdiag.engine.run import run
from lingdiag.models.embedded import ensure_converted
from lingdiag.prompts.formulas import ALL_REGIONS, parse
from lingdiag.records import ItemRecord
from lingdiag.scoring import AUTO, ScoringPolicy, policy

pytestmark = pytest.mark.slow

LIMIT = int(os.environ.get("LINGDIAG_PAIRS_LIMIT", "60")) or None
AGREEMENT = 0.995
PAIR_POLICIES = os.environ.get("LINGDIAG_PAIRS_POLICIES", "lingdiag,lm-eval,minicons").split(",")
REGION_POLICIES = os.environ.get("LINGDIAG_REGIONS_POLICIES", "lingdiag,lm-eval,minicons,lingdiag+ws").split(",")


class Plain:
    """SmolLM2 in plain transformers: one unbatched forward pass per sentence."""

    def __init__(self) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model_dir, _ = ensure_converted("smollm2-135m")
        self.tok = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
        vocab = self.model.config.vocab_size
        self.word_start = torch.tensor([str(self.tok.decode([i]))[:1].isspace() if i < len(self.tok) else False
                                        for i in range(vocab)])

    def tokens(self, p: ScoringPolicy, text: str) -> tuple[list[float], list[tuple[int, int]], list[float]]:
        """Each scored token's log-prob and span in ``text``, and the word-start log-probs."""
        import torch

        start = self.tok.bos_token_id if self.tok.bos_token_id is not None else self.tok.eos_token_id
        prefix = [start] if p.prefix == AUTO else []
        shown = " " + text if p.leading_space else text
        enc = self.tok(shown, add_special_tokens=False, return_offsets_mapping=True)
        ids = prefix + list(enc["input_ids"])
        spans = [(a - (len(shown) - len(text)), b - (len(shown) - len(text))) for a, b in enc["offset_mapping"]]
        with torch.inference_mode():
            lp = torch.log_softmax(self.model(input_ids=torch.tensor([ids])).logits[0].double(), dim=-1)
        scored = range(1, len(ids))  # token t is predicted at position t - 1
        values = [float(lp[t - 1, ids[t]]) for t in scored]
        word_start = [float(torch.logsumexp(lp[t - 1][self.word_start], dim=0)) for t in [*scored, len(ids)]]
        return values, spans[len(spans) - len(values):], word_start


@pytest.fixture(scope="module")
def plain() -> Plain:
    return Plain()


def records(out: Path) -> list[ItemRecord]:
    return [ItemRecord.from_json(line) for line in (out / "items.jsonl").read_text().splitlines()]


def test_blimp_decisions_agree(plain: Plain, smollm2: Any, shared_datasets: Path, tmp_path: Path) -> None:
    names = PAIR_POLICIES
    config = RunConfig(suite="minimal-pairs", model="smollm2-135m", dataset=str(shared_datasets / "blimp"),
                       limit=LIMIT, axes={"scoring-policy": names})
    result = run(config, tmp_path / "run", backend=smollm2, cache=False)
    by_policy: dict[str, list[ItemRecord]] = {}
    for r in records(result.out):
        by_policy.setdefault(r.axes["scoring-policy"], []).append(r)
    for name in names:
        rs = by_policy[name]
        same, worst = 0, 0.0
        for r in rs:
            good = sum(plain.tokens(policy(name), r.fields["sentence_good"])[0])
            bad = sum(plain.tokens(policy(name), r.fields["sentence_bad"])[0])
            same += (r.label == "good") == (good > bad)
            worst = max(worst, abs(r.detail["logprob_good"] - good), abs(r.detail["logprob_bad"] - bad))
        print(f"BLiMP {name}: decisions agree on {same}/{len(rs)} pairs; largest |Δ log-prob| {worst:.2e}; "
              f"accuracy {result.metrics[f'simple/{name}']['accuracy']:.4f}")
        assert same / len(rs) >= AGREEMENT and worst < 1e-3
    assert len(names) < 2 or "Scoring-policy sweep" in result.table


def region_bits(text_spans: list[tuple[int, int]], text: str, spans: list[tuple[int, int]], values: list[float],
                word_start: list[float] | None) -> list[float]:
    """Region surprisals, written out again: a token belongs to the region of its first non-space character."""
    nats = [0.0] * len(text_spans)
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for k, ((a, _), v) in enumerate(zip(spans, values, strict=True)):
        c = next((i for i in range(max(a, 0), len(text)) if not text[i].isspace()), len(text) - 1)
        region = next((j for j, (x, y) in enumerate(text_spans) if x <= c < y), None)
        if region is not None:
            nats[region] -= v
            first.setdefault(region, k)
            last[region] = k
    if word_start is not None:
        for region, k in first.items():
            a = spans[k][0]
            if a < 0 or text[a].isspace():
                nats[region] += word_start[k]
            nats[region] -= word_start[last[region] + 1]
    return [v / math.log(2) for v in nats]


def test_syntaxgym_decisions_agree(plain: Plain, smollm2: Any, shared_datasets: Path, tmp_path: Path) -> None:
    names = REGION_POLICIES
    limit = None if LIMIT is None else LIMIT // 2
    config = RunConfig(suite="syntaxgym", model="smollm2-135m", dataset=str(shared_datasets / "syntaxgym"),
                       limit=limit, axes={"scoring-policy": names})
    result = run(config, tmp_path / "run", backend=smollm2, cache=False)
    same: dict[str, list[bool]] = {n: [] for n in names}
    for r in records(result.out):
        p = policy(r.axes["scoring-policy"])
        surprisal: dict[tuple[str, str], float] = {}
        for cond, contents in r.fields["conditions"].items():
            text, text_spans = "", []
            for content in contents:  # joined by single spaces, empty regions skipped
                if content:
                    text += " " if text else ""
                    text_spans.append((len(text), len(text) + len(content)))
                    text += content
                else:
                    text_spans.append((len(text), len(text)))
            values, spans, word_start = plain.tokens(p, text)
            bits = region_bits(text_spans, text, spans, values, word_start if p.whitespace_correction else None)
            for number, v in zip(r.fields["region_numbers"][cond], bits, strict=True):
                surprisal[(number, cond)] = v
            surprisal[(ALL_REGIONS, cond)] = sum(bits)
            assert r.detail["surprisal_bits"][cond] == pytest.approx(bits, abs=2e-3)
        outcomes = [parse(f)(surprisal) for f in r.fields["predictions"]]
        same[p.name].append(outcomes == r.detail["predictions"])
    for name, hits in same.items():
        print(f"SyntaxGym {name}: item outcomes agree on {sum(hits)}/{len(hits)}; "
              f"accuracy {result.metrics[name]['accuracy']:.4f}")
        assert sum(hits) / len(hits) >= AGREEMENT
    print(json.dumps({n: result.metrics[n]["by_suite"] for n in names}, indent=1))

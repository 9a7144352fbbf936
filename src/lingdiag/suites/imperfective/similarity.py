"""Representational analysis of §5.4 (Figure 4): process vs. result in contextual embeddings.

For each verb, the progressive phrase in its premise ("was building", group C or D) and
the simple-past phrase in its hypothesis ("built") are embedded in their sentences: the
chosen layer's hidden states are mean-pooled over the phrase's tokens (found through the
tokenizer's character offsets). The cosine similarity of the two is summarised per verb
class, and the per-class medians are correlated with per-class TBR_C from runs (the paper:
bert-base-uncased, r = -0.97). Any transformers encoder or decoder works.
"""

from __future__ import annotations

import difflib
import math
import re
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from lingdiag.errors import ConfigError, MissingDependency
from lingdiag.metrics.stats import Correlation
from lingdiag.records import Item, ResultRow
from lingdiag.suites.imperfective.analysis import by_model, pearson
from lingdiag.suites.imperfective.data import TELIC_CLASSES
from lingdiag.suites.imperfective.metrics import BY_CLASS, TBR_C

_WORD = re.compile(r"[\w'-]+|[^\w\s]")
_AUX = ("was", "were")


@dataclass(frozen=True, slots=True)
class Span:
    """A phrase inside a sentence: ``text[start:end]``."""

    text: str
    start: int
    end: int

    @property
    def phrase(self) -> str:
        """The phrase itself."""
        return self.text[self.start:self.end]


@dataclass(frozen=True, slots=True)
class PhrasePair:
    """The progressive and simple-past phrase of one verb."""

    item_id: str
    verb: str
    verb_class: str
    progressive: Span
    """E.g. "was building" in "The carpenter was building a gazebo."."""
    past: Span
    """E.g. "built" in "The carpenter built a gazebo."."""


@dataclass(frozen=True, slots=True)
class PairSimilarity:
    """Cosine similarity of one verb's two phrase embeddings."""

    item_id: str
    verb: str
    verb_class: str
    progressive: str
    past: str
    cosine: float


@dataclass(frozen=True, slots=True)
class ClassSummary:
    """Similarities of one verb class."""

    n: int
    median: float
    mean: float


@dataclass(frozen=True, slots=True)
class SimilarityResult:
    """The §5.4 representational analysis of one model."""

    model: str
    layer: int
    pairs: tuple[PairSimilarity, ...]
    by_class: Mapping[str, ClassSummary]
    skipped: tuple[str, ...]
    """Item ids whose two phrases could not be aligned."""
    tbr_by_class: Mapping[str, float] | None
    """Per telic class TBR_C (mean over the given runs' models), when runs were given."""
    correlation: Correlation | None
    """Per-class median similarity vs TBR_C over the telic classes."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict."""
        return asdict(self)


def _words(text: str) -> list[re.Match[str]]:
    return list(_WORD.finditer(text))


def phrase_pair(item: Item) -> PhrasePair | None:
    """Align premise and hypothesis word by word; the first replaced span is the verb phrase.

    "The carpenter was building a gazebo." / "The carpenter built a gazebo." differ only in
    "was building" → "built". The premise side must start with was/were.

    Args:
        item: An ImperfectiveNLI item (fields ``premise`` and ``hypothesis``).

    Returns:
        The pair, or None when the sentences do not align that way.
    """
    premise, hypothesis = item.fields["premise"], item.fields["hypothesis"]
    p, h = _words(premise), _words(hypothesis)
    matcher = difflib.SequenceMatcher(a=[w.group().lower() for w in p], b=[w.group().lower() for w in h],
                                      autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if op != "replace" or p[i1].group().lower() not in _AUX or i2 - i1 < 2:
            return None
        return PhrasePair(
            item.id, str(item.tags.get("verb", "")), str(item.tags.get("verb_class", "")),
            Span(premise, p[i1].start(), p[i2 - 1].end()), Span(hypothesis, h[j1].start(), h[j2 - 1].end()))
    return None


def phrase_pairs(items: Sequence[Item], groups: str = "CD") -> tuple[list[PhrasePair], list[str]]:
    """One pair per item of ``groups`` (the premise without an interruption clause).

    Returns:
        The pairs, and the ids of items that did not align.
    """
    pairs, skipped = [], []
    for it in items:
        if str(it.tags.get("group")) not in groups:
            continue
        pair = phrase_pair(it)
        if pair is None:
            skipped.append(it.id)
        else:
            pairs.append(pair)
    return pairs, skipped


@dataclass(frozen=True)
class Encoder:
    """A transformers model and its (fast) tokenizer."""

    model: Any
    """A ``PreTrainedModel``; called with ``output_hidden_states=True``."""
    tokenizer: Any
    name: str


def load_encoder(spec: str, device: str = "cpu") -> Encoder:
    """Load ``hf:<hub id or dir>`` with ``AutoModel``, or an embedded model by name.

    Args:
        spec: ``hf:bert-base-uncased``, ``hf:bert-base-uncased@REVISION``, ``hf:/path/to/dir`` or ``smollm2-135m``.
        device: ``cpu``, ``cuda``, ``cuda:N`` or ``auto``, placed as the transformers backend's
            models are (``lingdiag.models.hf.placement``), in float32 on every device: the
            similarities are the paper's float32 ones.

    Returns:
        The encoder, in eval mode, float32.
    """
    from lingdiag.model_spec import ModelSpec
    from lingdiag.models.embedded import EMBEDDED, ensure_converted
    from lingdiag.models.hf.placement import DEVICE_PATTERN, resolve

    model = ModelSpec.parse(spec)
    if model.adapter is None and model.provider == "embedded" and model.name in EMBEDDED:
        path = str(ensure_converted(model.name)[0])
    elif model.adapter is None and model.provider == "hf":
        path = model.name
    else:
        raise ConfigError(f"model {spec!r}: the similarity analysis takes hf:<hub id or directory> "
                          f"or an embedded model ({', '.join(EMBEDDED)})")
    try:
        import torch
        from transformers import AutoModel, AutoTokenizer
    except ImportError as e:
        raise MissingDependency("the similarity analysis", "hf", ["torch==2.13.0", "transformers"]) from e
    if not re.match(DEVICE_PATTERN, device):
        raise ConfigError(f"--device {device}: expected cpu, cuda, cuda:N or auto")
    placement = resolve(device=device, dtype="float32", packed_linears=False)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, revision=model.revision)
        encoder = AutoModel.from_pretrained(path, revision=model.revision, dtype=torch.float32,
                                            **placement.load_kwargs())
    except OSError as e:
        raise ConfigError(f"cannot load model {spec!r}: {e}") from e
    encoder.eval()
    return Encoder(encoder, tokenizer, spec)


def _token_ids(encoder: Encoder, span: Span) -> tuple[list[int], list[int]]:
    enc = encoder.tokenizer(span.text, return_offsets_mapping=True)
    if "offset_mapping" not in enc:
        raise ConfigError(f"{encoder.name}: the similarity analysis needs a fast tokenizer (character offsets)")
    # A token belongs to the phrase if its characters overlap it (byte-level BPE offsets
    # include the leading space); special tokens have empty offsets.
    positions = [k for k, (s, e) in enumerate(enc["offset_mapping"]) if e > s and s < span.end and e > span.start]
    if not positions:
        raise ConfigError(f"{encoder.name}: no token covers {span.phrase!r} in {span.text!r}")
    return list(enc["input_ids"]), positions


def embed_phrases(encoder: Encoder, spans: Sequence[Span], layers: Sequence[int] = (-1,),
                  batch_size: int = 16) -> dict[int, list[list[float]]]:
    """Mean of each layer's hidden states over each span's tokens, from one forward pass per batch.

    Args:
        encoder: Model and tokenizer.
        spans: Phrases in their sentences.
        layers: Indices into the hidden states (0 = embeddings, -1 = last layer).
        batch_size: Sentences per forward pass.

    Returns:
        Layer → one vector per span, in order.
    """
    import torch

    encoded = [_token_ids(encoder, s) for s in spans]
    tok = encoder.tokenizer
    pad = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
    out: dict[int, list[list[float]]] = {layer: [] for layer in layers}
    device = encoder.model.get_input_embeddings().weight.device
    with torch.inference_mode():
        for k in range(0, len(encoded), batch_size):
            batch = encoded[k:k + batch_size]
            width = max(len(ids) for ids, _ in batch)
            # Right padding keeps every position id as in the unpadded sentence.
            ids = torch.tensor([i + [pad] * (width - len(i)) for i, _ in batch], device=device)
            mask = torch.tensor([[1] * len(i) + [0] * (width - len(i)) for i, _ in batch], device=device)
            hidden = encoder.model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states
            for layer in layers:
                if not -len(hidden) <= layer < len(hidden):
                    raise ConfigError(f"layer {layer} out of range: {encoder.name} has hidden states "
                                      f"0..{len(hidden) - 1}")
                states = hidden[layer].float()
                out[layer] += [states[row, positions].mean(dim=0).tolist() for row, (_, positions) in enumerate(batch)]
    return out


def n_layers(encoder: Encoder) -> int:
    """How many hidden states the model returns (embeddings + one per layer)."""
    return int(encoder.model.config.num_hidden_layers) + 1


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity, clipped to [-1, 1] against rounding."""
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return max(-1.0, min(1.0, dot / norm)) if norm else math.nan


def layer_similarities(encoder: Encoder, pairs: Sequence[PhrasePair],
                       layers: Sequence[int]) -> dict[int, list[PairSimilarity]]:
    """Per layer, the cosine similarity of each pair's progressive and past phrase embeddings."""
    spans = list(dict.fromkeys(s for p in pairs for s in (p.progressive, p.past)))
    out = {}
    for layer, embedded in embed_phrases(encoder, spans, layers).items():
        vectors = dict(zip(spans, embedded, strict=True))
        out[layer] = [PairSimilarity(p.item_id, p.verb, p.verb_class, p.progressive.phrase, p.past.phrase,
                                     cosine(vectors[p.progressive], vectors[p.past])) for p in pairs]
    return out


def pair_similarities(encoder: Encoder, pairs: Sequence[PhrasePair], layer: int = -1) -> list[PairSimilarity]:
    """Cosine similarity of each pair's progressive and past phrase embeddings at one layer."""
    return layer_similarities(encoder, pairs, [layer])[layer]


def class_summary(sims: Sequence[PairSimilarity]) -> dict[str, ClassSummary]:
    """Median and mean similarity per verb class, sorted by class."""
    groups: dict[str, list[float]] = defaultdict(list)
    for s in sims:
        groups[s.verb_class].append(s.cosine)
    return {k: ClassSummary(len(v), statistics.median(v), statistics.fmean(v)) for k, v in sorted(groups.items())}


def tbr_by_class(rows: Sequence[ResultRow], strategy: str = "zero-shot") -> dict[str, float]:
    """Per telic class TBR_C of ``strategy``, averaged over models (as Figure 4b).

    Raises:
        ConfigError: no row has that strategy.
    """
    tables = [c[strategy][BY_CLASS][TBR_C] for c in by_model(rows).values() if strategy in c]
    if not tables:
        raise ConfigError(f"no run has condition {strategy!r}; choose one with --strategy")
    out = {}
    for k in TELIC_CLASSES:
        values = [t[k] for t in tables if isinstance(t.get(k), int | float) and not math.isnan(t[k])]
        if values:
            out[k] = statistics.fmean(values)
    return out


def similarity_analysis(
    items: Sequence[Item],
    encoder: Encoder,
    layer: int = -1,
    tbr: Mapping[str, float] | None = None,
) -> SimilarityResult:
    """The whole §5.4 analysis for one model at one layer (see :func:`layer_sweep`)."""
    return layer_sweep(items, encoder, [layer], tbr)[0]


def layer_sweep(
    items: Sequence[Item],
    encoder: Encoder,
    layers: Sequence[int],
    tbr: Mapping[str, float] | None = None,
) -> list[SimilarityResult]:
    """The §5.4 analysis for one model at each of ``layers``, from one forward pass per batch.

    Args:
        items: ImperfectiveNLI items (groups C and D are used).
        encoder: The model whose representations are probed (an encoder such as BERT, or the
            evaluated causal model itself).
        layers: Hidden-state indices (0 = embeddings, -1 = last layer).
        tbr: Per-class TBR_C (from :func:`tbr_by_class`) to correlate with.

    Returns:
        Per layer: per-verb similarities, per-class summaries and, with ``tbr``, the
        correlation of per-class median similarity with TBR_C over the telic classes.
    """
    pairs, skipped = phrase_pairs(items)
    if not pairs:
        raise ConfigError("no group C/D item has a 'was/were V-ing' premise aligned with its hypothesis")
    out = []
    for layer, sims in layer_similarities(encoder, pairs, layers).items():
        summary = class_summary(sims)
        corr = None
        if tbr is not None:
            shared = [k for k in TELIC_CLASSES if k in summary and k in tbr]
            corr = pearson([summary[k].median for k in shared], [tbr[k] for k in shared])
        out.append(SimilarityResult(encoder.name, layer, tuple(sims), summary, tuple(skipped),
                                    dict(tbr) if tbr is not None else None, corr))
    return out

"""Steering vectors by contrastive activation addition (Rimsky et al. 2024, CAA).

Per layer, the mean over contrast pairs of the difference between the residual-stream
activation (the decoder layer's output) at the last token of the prompt followed by the
correct answer and of the prompt followed by the biased answer. Saved as safetensors
(``layer.N`` tensors, float32, with the model, pair count and source in the metadata);
applied at inference by ``lingdiag.models.hf.adapters.Steering``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lingdiag.adapt.examples import ContrastPair
from lingdiag.errors import ConfigError
from lingdiag.io.atomic import write_atomic
from lingdiag.models.hf.adapters import decoder_layers

if TYPE_CHECKING:
    import torch

    from lingdiag.models.hf import HFBackend


def steering_vectors(backend: HFBackend, pairs: Sequence[ContrastPair], layers: Sequence[int],
                     progress: Callable[[int, int], None] | None = None) -> dict[int, torch.Tensor]:
    """The mean activation difference (correct − biased) per layer over ``pairs``.

    Args:
        backend: The base model on the transformers backend (where its placement puts it).
        pairs: Prompts with their correct and biased completions.
        layers: Decoder layer indices (0-based).
        progress: Called with (pairs done, total).

    Returns:
        Layer → float32 vector of the hidden size, on the CPU.
    """
    import torch

    if not pairs:
        raise ConfigError("no contrast pairs: every example's gold is the biased answer")
    lm = backend.loaded
    model, tokenizer = lm.model, lm.tokenizer
    blocks = decoder_layers(model)
    bad = [i for i in layers if not -len(blocks) <= i < len(blocks)]
    if bad:
        raise ConfigError(f"--layers {bad}: the model has {len(blocks)} layers (0..{len(blocks) - 1})")
    last: dict[int, Any] = {}

    def capture(index: int) -> Any:
        def hook(module: Any, args: Any, output: Any) -> None:
            hidden = output[0] if isinstance(output, tuple) else output
            last[index] = hidden[0, -1].float().cpu()

        return hook

    handles = [blocks[i].register_forward_hook(capture(i)) for i in layers]
    sums = {i: torch.zeros(model.config.get_text_config().hidden_size) for i in layers}
    try:
        with torch.inference_mode():
            for n, pair in enumerate(pairs, 1):
                prompt = lm.encode_prompt(pair.request)
                for sign, answer in ((1.0, pair.positive), (-1.0, pair.negative)):
                    ids = prompt + list(tokenizer(answer, add_special_tokens=False)["input_ids"])
                    model(input_ids=torch.tensor([ids], device=lm.input_device))
                    for i in layers:
                        sums[i] += sign * last[i]
                if progress is not None:
                    progress(n, len(pairs))
    finally:
        for h in handles:
            h.remove()
    return {i % len(blocks): sums[i] / len(pairs) for i in layers}


def save_vectors(path: Path | str, vectors: dict[int, torch.Tensor], metadata: dict[str, str]) -> None:
    """Write ``vectors`` as safetensors atomically; the same vectors and metadata give the same bytes."""
    from safetensors.torch import save

    tensors = {f"layer.{i}": v.contiguous() for i, v in sorted(vectors.items())}
    write_atomic(path, save(tensors, metadata=dict(sorted(metadata.items()))))

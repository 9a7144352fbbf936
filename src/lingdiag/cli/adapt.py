"""``lingdiag adapt steer|lora``: adapt a model on guarded, generated training data."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from lingdiag.adapt.data import BUILDERS
from lingdiag.adapt.examples import ContrastPair, chat_examples, contrast_pairs
from lingdiag.adapt.training import BUILDER, TrainingPlan, TrainingSet, prepare
from lingdiag.cli.app import app, err, out
from lingdiag.errors import ConfigError, DatasetError
from lingdiag.io.tabular import read_jsonl
from lingdiag.records import ChatMessage, GenerationRequest

adapt_app = typer.Typer(no_args_is_help=True,
                        help="Adapt a model (steering vectors, LoRA) on guarded generated data.")
app.add_typer(adapt_app, name="adapt")

EvalOpt = Annotated[str, typer.Option("--eval-dataset",
                                      help="The dataset of the re-diagnosis (the guards' reference).")]
HeldOpt = Annotated[float, typer.Option("--held-out",
                                        help="Share of evaluation lemmas kept out of training (1: none shared).")]
LemmaOpt = Annotated[str | None, typer.Option("--lemma-field",
                                              help="Item tag holding the lemma (default: the builder's).")]
SeedOpt = Annotated[int, typer.Option(help="Seeds the lemma split, the builder and training.")]
StrategyOpt = Annotated[str, typer.Option(help="The suite's prompt strategy the examples are rendered with.")]


def eta_progress(label: str) -> Callable[[int, int], None]:
    """``label: done/total, rate/s, ETA h:mm:ss`` on stderr."""
    start = time.monotonic()

    def progress(done: int, total: int) -> None:
        rate = done / max(time.monotonic() - start, 1e-9)
        eta = int((total - done) / rate) if rate > 0 else 0
        err.print(f"{label}: {done}/{total}, {rate:.2f}/s, ETA {eta // 3600}:{eta // 60 % 60:02d}:{eta % 60:02d}",
                  markup=False, highlight=False)

    return progress


def guarded(plan: TrainingPlan) -> TrainingSet:
    """The training set of ``plan`` after both guards, with its audit printed."""
    training = prepare(plan)
    if training.dropped_shared:
        out.print(f"dropped {training.dropped_shared} generated items repeating an evaluation sentence",
                  markup=False, highlight=False)
    out.print(training.audit.line(training.split.field), markup=False, highlight=False)
    return training


def read_pairs(path: Path) -> list[ContrastPair]:
    """A JSONL file of ``{"prompt": user text, "positive": correct answer, "negative": biased answer}``."""
    pairs = []
    for n, row in read_jsonl(path):
        for key in ("prompt", "positive", "negative"):
            if not isinstance(row, dict) or not isinstance(row.get(key), str) or not row[key]:
                raise DatasetError("missing or empty (expected a string)", path=path, row=n, field=key)
        pairs.append(ContrastPair(GenerationRequest(messages=(ChatMessage("user", row["prompt"]),)),
                                  row["positive"], row["negative"]))
    return pairs


@adapt_app.command()
def steer(
    suite: Annotated[str, typer.Argument(help="Suite whose items give the contrast pairs.")],
    model: Annotated[str, typer.Option(help="Base model (the transformers backend).")],
    layers: Annotated[list[int], typer.Option("--layers", help="Decoder layers to steer (repeat the option).")],
    out_file: Annotated[Path, typer.Option("--out", help="Where to write the vectors (safetensors).")],
    pairs: Annotated[str, typer.Option(help="'builder' (gold vs the suite's biased answer) or a JSONL file "
                                            "of prompt/positive/negative.")] = BUILDER,
    strategy: StrategyOpt = "zero-shot",
    eval_dataset: EvalOpt = "official",
    held_out: HeldOpt = 0.5,
    lemma_field: LemmaOpt = None,
    limit: Annotated[int | None, typer.Option(help="Use at most this many pairs (the first ones).")] = None,
    seed: SeedOpt = 0,
) -> None:
    """Compute steering vectors (mean activation difference, correct − biased) per layer."""
    from lingdiag.adapt.steer import save_vectors, steering_vectors
    from lingdiag.models.hf import HFBackend
    from lingdiag.models.providers import load_backend, split_adapter

    if split_adapter(model)[1]:
        raise ConfigError(f"--model {model}: steer from the base model, not an adapted one")
    if pairs == BUILDER:
        builder = BUILDERS.get(suite)()
        if builder.biased is None:
            raise ConfigError(f"suite {suite!r} names no biased answer; give --pairs FILE")
        training = guarded(TrainingPlan(suite, BUILDER, eval_dataset, held_out, lemma_field, seed))
        contrast = contrast_pairs(chat_examples(suite, training.items, strategy, seed), builder.biased)
        source = f"builder:{suite}/{strategy}/seed={seed}/held_out={held_out}"
    else:
        contrast, source = read_pairs(Path(pairs)), pairs
    contrast = contrast[:limit] if limit is not None else contrast
    backend = load_backend(model)
    if not isinstance(backend, HFBackend):
        raise ConfigError(f"--model {model}: steering needs the transformers backend")
    vectors = steering_vectors(backend, contrast, layers, eta_progress("pairs"))
    save_vectors(out_file, vectors, {"model": backend.name, "weights_sha256": backend.identity["weights_sha256"],
                                     "pairs": str(len(contrast)), "source": source})
    if pairs == BUILDER:
        from lingdiag.atomic import write_atomic

        write_atomic(out_file.with_suffix(".split.json"), json.dumps(training.split.as_json(), indent=1) + "\n")
    out.print(f"wrote {out_file} ({len(contrast)} pairs, layers {', '.join(map(str, sorted(vectors)))}); "
              f"use --model '{model}+steer:{out_file}@ALPHA'", markup=False, highlight=False)


@adapt_app.command()
def lora(
    suite: Annotated[str, typer.Argument(help="Suite whose items train the adapter.")],
    model: Annotated[str, typer.Option(help="Base model (the transformers backend).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Adapter directory (resumed from its last checkpoint).")],
    steps: Annotated[int, typer.Option(min=1, help="Optimizer steps.")],
    train_data: Annotated[str, typer.Option("--train", help="'builder' or a dataset file the suite loads.")] = BUILDER,
    strategy: StrategyOpt = "zero-shot",
    rank: Annotated[int, typer.Option(min=1, help="LoRA rank.")] = 8,
    targets: Annotated[str, typer.Option(help="Comma-separated module names LoRA wraps.")] = "q_proj,v_proj",
    learning_rate: Annotated[float, typer.Option(help="AdamW learning rate.")] = 2e-4,
    batch_size: Annotated[int, typer.Option(min=1, help="Examples per step.")] = 4,
    checkpoint_every: Annotated[int, typer.Option(min=1, help="Steps between checkpoints.")] = 1,
    eval_dataset: EvalOpt = "official",
    held_out: HeldOpt = 0.5,
    lemma_field: LemmaOpt = None,
    seed: SeedOpt = 0,
) -> None:
    """Train a LoRA adapter on guarded chat examples (gold label as the answer; loss on it only)."""
    from lingdiag.adapt.lora import LoraPlan, train
    from lingdiag.atomic import make_dir, write_atomic
    from lingdiag.models.hf import HFBackend
    from lingdiag.models.providers import load_backend, split_adapter

    if split_adapter(model)[1]:
        raise ConfigError(f"--model {model}: train on the base model, not an adapted one")
    training = guarded(TrainingPlan(suite, train_data, eval_dataset, held_out, lemma_field, seed))
    examples = chat_examples(suite, training.items, strategy, seed)
    backend = load_backend(model)
    if not isinstance(backend, HFBackend):
        raise ConfigError(f"--model {model}: LoRA needs the transformers backend")
    make_dir(out_dir)
    write_atomic(out_dir / "split.json", json.dumps(training.split.as_json(), indent=1) + "\n")
    plan = LoraPlan(steps, rank, 2 * rank, tuple(t for t in targets.split(",") if t), learning_rate, batch_size,
                    seed, checkpoint_every)
    start = time.monotonic()
    train(backend.loaded, examples, plan, out_dir, eta_progress("steps"))
    out.print(f"wrote {out_dir} ({len(examples)} examples, {steps} steps, {time.monotonic() - start:.0f} s); "
              f"use --model '{model}+lora:{out_dir}'", markup=False, highlight=False)

"""``lingdiag adapt steer|lora``: adapt a model on guarded, generated training data."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from lingdiag.adapt.data import BUILDERS, SPLIT_FILE, split_file, write_split
from lingdiag.adapt.examples import ContrastPair, chat_examples, contrast_pairs
from lingdiag.adapt.training import BUILDER, TrainingPlan, TrainingSet, prepare
from lingdiag.cli.app import app, err, out
from lingdiag.cli.options import TREAT, Limit, Model, Seed, comma_list, out_option, seed_option
from lingdiag.errors import ConfigError, DatasetError
from lingdiag.flags import ModelOption, model_options
from lingdiag.io.tabular import read_jsonl
from lingdiag.io.terminal import plain, progress_line
from lingdiag.records import ChatMessage, GenerationRequest
from lingdiag.suite import spread

if TYPE_CHECKING:
    from lingdiag.models.hf import HFBackend

adapt_app = typer.Typer(no_args_is_help=True,
                        help="Adapt a model (steering vectors, LoRA) on guarded generated data.")
app.add_typer(adapt_app, name="adapt", rich_help_panel=TREAT)

EvalOpt = Annotated[str, typer.Option("--eval-dataset",
                                      help="The dataset of the re-diagnosis (the guards' reference).")]
HeldOpt = Annotated[float, typer.Option("--held-out",
                                        help="Share of evaluation lemmas kept out of training (1: none shared).")]
LemmaOpt = Annotated[str | None, typer.Option("--lemma-field",
                                              help="Item tag holding the lemma (default: the builder's).")]
SeedOpt = Annotated[int, seed_option("Seeds the lemma split, the builder and training.")]
StrategyOpt = Annotated[str, typer.Option(help="The suite's prompt strategy the examples are rendered with.")]


class Base:
    """The base model an adapter is made on, through the one model door (``models.door``): its spec and
    provider options checked before any training data is built, then loaded with those options.
    """

    def __init__(self, suite: str, model: str, options: list[str] | None, what: str) -> None:
        """Check ``model`` with ``options`` (``--model-option``) as a run of ``suite`` would (one line)."""
        from lingdiag.config import RunConfig
        from lingdiag.model_spec import ModelSpec
        from lingdiag.models.door import check_model

        spec = ModelSpec.parse(model)
        if spec.adapter:
            raise ConfigError(f"--model {model}: {what} the base model, not an adapted one")
        if spec.provider not in ("embedded", "hf", "gguf"):
            raise ConfigError(f"--model {model}: adapting needs the transformers backend")
        self.config = RunConfig(suite=suite, model=model, model_options=model_options(options, None))
        check_model(self.config)

    def load(self) -> HFBackend:
        """The model, loaded with its options (``models.door.load_model``)."""
        from lingdiag.models.door import load_model
        from lingdiag.models.hf import HFBackend

        backend = load_model(self.config)
        if not isinstance(backend, HFBackend):
            raise ConfigError(f"--model {self.config.model}: adapting needs the transformers backend")
        return backend


def eta_progress(label: str) -> Callable[[int, int], None]:
    """``label: done/total, rate/s, ETA h:mm:ss`` on stderr."""
    start = time.monotonic()

    def progress(done: int, total: int) -> None:
        rate = done / max(time.monotonic() - start, 1e-9)
        err.print(progress_line(label, done, total, rate), markup=False, highlight=False)

    return progress


def rich_table(heading: str, text: str) -> Table:
    """The markdown table ``text`` as a rich table; every cell plain text (model names come from runs)."""
    from lingdiag.report.markdown import Table as Markdown
    from lingdiag.report.markdown import blocks

    table = Table(title=Text(plain(heading)), title_justify="left")
    for block in blocks(text):
        if isinstance(block, Markdown):
            for name in block.header:
                table.add_column(Text(plain(name)))
            for row in block.rows:
                table.add_row(*(Text(plain(c)) for c in row))
    return table


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


def _layers(values: list[str]) -> list[int]:
    """``--layers 10,20`` (or repeated) → the layer numbers."""
    try:
        return [int(v) for v in comma_list(values)]
    except ValueError:
        raise ConfigError(f"--layers {','.join(values)}: expected layer numbers, e.g. 10,20") from None


@adapt_app.command()
def steer(
    suite: Annotated[str, typer.Argument(help="Suite whose items give the contrast pairs.")],
    model: Model,
    layers: Annotated[list[str], typer.Option("--layers",
                                              help="Decoder layers to steer, comma-separated (e.g. 10,20).")],
    out_file: Annotated[Path, out_option("Where to write the vectors (safetensors).")],
    pairs: Annotated[str, typer.Option(help="'builder' (gold vs the suite's biased answer) or a JSONL file "
                                            "of prompt/positive/negative.")] = BUILDER,
    strategy: StrategyOpt = "zero-shot",
    eval_dataset: EvalOpt = "official",
    held_out: HeldOpt = 0.5,
    lemma_field: LemmaOpt = None,
    limit: Limit = None,
    seed: SeedOpt = 0,
    model_option: ModelOption = None,
) -> None:
    """Compute steering vectors (mean activation difference, correct − biased) per layer."""
    from lingdiag.adapt.steer import save_vectors, steering_vectors

    base = Base(suite, model, model_option, "steer from")
    if pairs == BUILDER:
        builder = BUILDERS.get(suite)()
        if builder.biased is None:
            raise ConfigError(f"suite {suite!r} names no biased answer; give --pairs FILE")
        training = guarded(TrainingPlan(suite, BUILDER, eval_dataset, held_out, lemma_field, seed))
        contrast = contrast_pairs(chat_examples(suite, training.items, strategy, seed), builder.biased)
        source = f"builder:{suite}/{strategy}/seed={seed}/held_out={held_out}"
    else:
        contrast, source = read_pairs(Path(pairs)), pairs
    contrast = spread(contrast, limit)
    backend = base.load()
    vectors = steering_vectors(backend, contrast, _layers(layers), eta_progress("pairs"))
    save_vectors(out_file, vectors, {"model": backend.name, "weights_sha256": backend.identity["weights_sha256"],
                                     "pairs": str(len(contrast)), "source": source})
    split = split_file(f"steer:{out_file}@0")
    if pairs == BUILDER and split is not None:
        write_split(split, training.split)
    out.print(f"wrote {out_file} ({len(contrast)} pairs, layers {', '.join(map(str, sorted(vectors)))}); "
              f"use --model '{model}+steer:{out_file}@ALPHA'", markup=False, highlight=False)


@adapt_app.command()
def lora(
    suite: Annotated[str, typer.Argument(help="Suite whose items train the adapter.")],
    model: Model,
    out_dir: Annotated[Path, out_option("Adapter directory (resumed from its last checkpoint).")],
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
    model_option: ModelOption = None,
) -> None:
    """Train a LoRA adapter on guarded chat examples (gold label as the answer; loss on it only)."""
    from lingdiag.adapt.lora import LoraPlan, train
    from lingdiag.io.atomic import make_dir

    base = Base(suite, model, model_option, "train on")
    training = guarded(TrainingPlan(suite, train_data, eval_dataset, held_out, lemma_field, seed))
    examples = chat_examples(suite, training.items, strategy, seed)
    backend = base.load()
    make_dir(out_dir)
    plan = LoraPlan(steps, rank, 2 * rank, tuple(t for t in targets.split(",") if t), learning_rate, batch_size,
                    seed, checkpoint_every)
    start = time.monotonic()
    train(backend.loaded, examples, plan, out_dir, eta_progress("steps"))
    # After training: train() refuses a directory of another plan, whose split must stay as it was.
    write_split(out_dir / SPLIT_FILE, training.split)
    out.print(f"wrote {out_dir} ({len(examples)} examples, {steps} steps, {time.monotonic() - start:.0f} s); "
              f"use --model '{model}+lora:{out_dir}'", markup=False, highlight=False)


@adapt_app.command()
def report(
    base: Annotated[Path, typer.Argument(help="The base model's run of the suite the adapter was trained for.")],
    runs: Annotated[list[Path], typer.Argument(help="Adapted runs (BASE+lora:DIR, BASE+steer:FILE@α), and base "
                                                    "runs of other suites with their adapted runs (side effects).")],
    out_dir: Annotated[Path | None, out_option("Write adapt_report.csv, adapt_report.md and the sweep "
                                                           "figures here.")] = None,
    split: Annotated[Path | None, typer.Option(help="The lemma split file (default: the one recorded beside "
                                                    "each adapter).")] = None,
    seed: Seed = 0,
) -> None:
    """Re-diagnose: adapted against base on the same items, paired tests, split by trained and held-out lemmas."""
    from lingdiag.adapt.rediagnosis import rediagnose
    from lingdiag.adapt.rediagnosis_tables import accuracy_table, rates_table, split_line, title, write_outputs

    result = rediagnose(base, runs, split=split, seed=seed)
    for pairing, rows in zip(result.pairings, result.tables, strict=True):
        out.print(Text(title(pairing), style="bold"))
        out.print(Text(split_line(pairing)))
        acc = [r for r in rows if r.test == "McNemar"]
        rates = [r for r in rows if r.test != "McNemar"]
        for heading, table in (("Accuracy (exact McNemar; paired bootstrap 95% CI)", accuracy_table(acc) if acc
                                else ""), ("Rates and gaps (paired permutation)", rates_table(rates) if rates else "")):
            if table:
                out.print(rich_table(heading, table))
    for vector, points in result.sweep.items():
        out.print(Text(plain(f"steering sweep, vector {vector}: " + ", ".join(
            f"α={p.alpha:g} {p.condition} {result.headline} {p.headline:.3f}" for p in points))))
    if out_dir is not None:
        for path in write_outputs(out_dir, result):
            out.print(Text(plain(f"wrote {path}")))

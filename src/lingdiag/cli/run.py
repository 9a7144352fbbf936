"""``lingdiag run``: builds a ``RunConfig`` from flags (and an optional YAML file) and runs it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from lingdiag.cli.app import app, err
from lingdiag.cli.env import lock_line
from lingdiag.cli.options import RUN, Dataset, Limit, OptionalModel, json_option, out_option, seed_option
from lingdiag.cli.progress import RunProgress
from lingdiag.config import RunConfig
from lingdiag.engine.run import RunResult, plan
from lingdiag.engine.run import run as run_suite
from lingdiag.errors import ConfigError, LingdiagError, one_line
from lingdiag.flags import Dtype, ModelOption, key_values, model_options
from lingdiag.io.terminal import markup_safe, plain_lines
from lingdiag.models.openai.prices import estimate
from lingdiag.models.progress import watching
from lingdiag.records import dumps
from lingdiag.suite import SUITES


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


def axes_help(argv: Sequence[str]) -> None:
    """``lingdiag run SUITE --help`` (a suite file or a built-in suite): the suite's axes, their
    values and defaults, and the axes every suite takes (``--thinking``, ``--temperature``) with their
    meaning, below the options, since typer's help is written before the suite is read. A suite that
    cannot be read shows the axes of every suite only (the run itself will say why).
    """
    if "run" not in argv or not {"--help", "-h"} & set(argv):
        return
    from lingdiag.conditions.registry import flags

    name = next((a for a in argv[argv.index("run") + 1:] if not a.startswith("-")), None)
    try:
        suite = SUITES.get(name) if name is not None else None
    except LingdiagError:
        suite = None
    lines = []
    if suite is not None:
        lines += [f"Axes of {markup_safe(suite.name)} (values; * runs by default):"]
        lines += [f"--{markup_safe(a.name)} " + ",".join(markup_safe(v) + "*" * (v in a.default) for v in a.values)
                  + (f": {markup_safe(a.help)}" if a.help else "") for a in suite.axes]
    lines += ["Axes of every suite (none by default):"]
    lines += [f"--{markup_safe(flag)} {markup_safe(meaning)}" for flag, meaning in flags().items()]
    for info in app.registered_commands:
        if info.callback is run:
            info.epilog = "\n\n".join(lines)  # rich's help joins single line breaks


FAILED_ITEMS_EXIT = 3
"""Exit code of a run that finished with failed items (2 is a usage or input error)."""

Reader = Annotated[str | None, typer.Option(
    "--reader", metavar="rules|judge:SPEC|judge-all:SPEC",
    help="Who reads the answers: lingdiag's rules (default); judge:SPEC, then a model (any --model spec) for "
    "the answers the rules leave unparsed, its labels marked judged; judge-all:SPEC, the model on every answer, "
    "for its agreement with the rules (docs/reader.md).")]
"""``--reader`` (``RunConfig.reader``)."""


@app.command(rich_help_panel=RUN, context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    ctx: typer.Context,
    suite: Annotated[str, typer.Argument(help="Suite name (see `lingdiag list`).")],
    model: OptionalModel = None,
    dataset: Dataset = None,
    limit: Limit = None,
    out_dir: Annotated[Path | None, out_option("Run directory (resumed if it exists).")] = None,
    seed: Annotated[int | None, seed_option("Seed for shuffles (few-shot order, option order).")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", "-o", help="Suite option key=value "
                                                     "(repeatable).")] = None,
    config_file: Annotated[Path | None, typer.Option("--config", help="A RunConfig YAML; flags override it.")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.")] = False,
    batch_tokens: Annotated[int | None, typer.Option(help="Padded-token budget per batch, for generation and "
                                                          "log-likelihood alike (transformers backend; default "
                                                          "4096 and 2048).")] = None,
    trust_remote_code: Annotated[bool, typer.Option(help="Let a hub model run its own code "
                                                         "(transformers).")] = False,
    dtype: Dtype = None,
    model_option: ModelOption = None,
    as_json: Annotated[bool, json_option("Print metrics.json instead of the table.")] = False,
    shard: Annotated[str | None, typer.Option("--shard", help="Run only shard K of N of the items (e.g. 2/3), "
                                              "into its own --out; `lingdiag merge` joins the shards.")] = None,
    think_tags: Annotated[str | None, typer.Option("--think-tags", help="Tags around an inline thinking trace, "
                                                   "OPEN,CLOSE (default <think>,</think>), or none to read the raw "
                                                   "text as the answer. The thinking axis: --thinking "
                                                   "off,on,budget:N,effort:low (docs/reasoning.md).")] = None,
    after_thinking: Annotated[str | None, typer.Option("--after-thinking", metavar="RUN_DIR[:CONDITION]",
                                                       help="Also score each chat log-likelihood condition (e.g. "
                                                       "--scoring loglik) after the thinking this generation run "
                                                       "of the same model wrote per item, as "
                                                       "<condition>/after-thinking (docs/reasoning.md).")] = None,
    per_token: Annotated[bool, typer.Option("--per-token", help="Keep every log-likelihood's per-token "
                                            "log-probs in the records, for the surprisal view of `lingdiag "
                                            "view` (docs/viewer.md).")] = False,
    items_file: Annotated[Path | None, typer.Option("--items", help="Run only these items: an anchors file of "
                                                    "`lingdiag items anchors`, or one item id per line "
                                                    "(docs/items.md).")] = None,
    reader: Reader = None,
) -> None:
    """Run a suite's conditions on a model; axes are options (e.g. --strategy zero-shot,cot)."""
    config = build_config(ctx.params, list(ctx.args))
    planned = plan(config)
    lock_line()
    cost = estimate(str(config.model_spec()), planned.requests())  # the model the run loads (a shard: its server)
    if cost is not None:
        err.print(cost.summary(), markup=False, highlight=False)

    # A batch log gets plain lines, a terminal a bar; both hear from the backends within a chunk.
    with RunProgress(err, bar=err.is_terminal and not as_json) as progress, watching(progress):
        result = run_suite(config, out_dir, cache=not no_cache, progress=progress, planned=planned)
    _report(result, as_json)


def build_config(params: Mapping[str, Any], extra: list[str]) -> RunConfig:
    """The ``RunConfig`` of ``lingdiag run``'s parsed options (``params``) and axis flags (``extra``)."""
    config_file = params.get("config_file")
    # Only what the file sets: a field it leaves out takes the default below, as on the command line.
    base: dict[str, Any] = RunConfig.fields_from_yaml(config_file) if config_file else {}
    fields: dict[str, Any] = {**base, "suite": params["suite"]}
    for key in ("model", "dataset", "limit", "seed", "batch_tokens", "shard", "think_tags", "after_thinking", "reader"):
        if params.get(key) is not None:
            fields[key] = params[key]
    fields["axes"] = {**base.get("axes", {}), **_parse_extra(extra)}
    fields["options"] = {**base.get("options", {}), **key_values(params.get("option") or [])}
    fields["model_options"] = {**base.get("model_options", {}),
                               **model_options(params.get("model_option"), params.get("dtype"))}
    if params.get("trust_remote_code"):
        fields["trust_remote_code"] = True
    if params.get("per_token"):
        fields["per_token"] = True
    if params.get("items_file") is not None:
        from lingdiag.items.anchors import read_item_ids

        fields["items"] = read_item_ids(params["items_file"], [SUITES.get(params["suite"]).name])
    if "model" not in fields:
        raise ConfigError("--model is required (e.g. --model smollm2-135m)")
    if "dataset" not in fields:  # an omitted --dataset means the suite's default on every command
        fields["dataset"] = SUITES.get(params["suite"]).default_dataset
    return validated(fields)


def validated(fields: dict[str, Any]) -> RunConfig:
    """``RunConfig`` from flags; a bad value is a one-line error naming the field."""
    from pydantic import ValidationError

    try:
        return RunConfig.model_validate(fields)
    except ValidationError as e:
        raise ConfigError(one_line(e)) from None


def _report(result: RunResult, as_json: bool) -> None:
    """Print the table (or metrics), what was skipped and counted; exit 3 if items failed."""
    if as_json:
        print(dumps(result.metrics, indent=2, sort_keys=True))
    else:
        print(plain_lines(result.table))
    for name, reason in result.skipped.items():
        err.print(f"[yellow]skipped {markup_safe(name)}:[/] {markup_safe(reason)}", soft_wrap=True)
    if result.usage:
        err.print("backend: " + ", ".join(f"{k} {v:,}" for k, v in sorted(result.usage.items()) if v),
                  soft_wrap=True)
    err.print(f"run directory: {markup_safe(result.out)}", soft_wrap=True)
    failed = sum(int(m.get("n_errors", 0)) for m in result.metrics.values())
    if failed:
        total = sum(int(m.get("n", 0)) for m in result.metrics.values())
        err.print(f"[red]{failed} of {total} items failed (backend errors):[/] metrics are over the answered items; "
                  "run the same command again to retry the failed ones", soft_wrap=True)
        raise typer.Exit(FAILED_ITEMS_EXIT)

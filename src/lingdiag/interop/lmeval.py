"""lm-evaluation-harness's ``--log_samples`` output as lingdiag runs.

lm-eval writes, per model, a ``results_<time>.json`` (aggregate metrics, each task's configuration and
hash, the model and its arguments, lm-eval's version) and beside it one ``samples_<task>_<time>.jsonl``
per task (one line per document and filter: the doc, the target, the requests' arguments, the raw and
filtered responses, the metrics). lm-eval ships no reader of these files, so they are read here, each
line validated against the shape 0.4.x writes (an unknown shape or version is refused in one line).

- ``multiple_choice`` / ``loglikelihood``: the choices are the requests' continuations; lingdiag's
  answer is the likeliest choice (lm-eval's ``argmax``, first on ties), so its accuracy is lm-eval's
  ``acc``. Each choice's log-likelihood is kept (``ScoreOutput``; lm-eval logs no token count).
- ``generate_until``: the raw generation is kept and read by lingdiag's answer reader over the task's
  choices (its ``doc_to_choice`` list, else ``--choices``); lm-eval's filtered answer and metric stay
  beside it in ``detail["harness"]``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from lingdiag.errors import DatasetError
from lingdiag.interop.answers import read_answer
from lingdiag.interop.runs import HarnessRun
from lingdiag.io.limits import read_regular, regular_lines
from lingdiag.io.paths import sha256_file
from lingdiag.records import UNPARSED, ItemRecord, ScoreOutput, TextOutput
from lingdiag.suites.harness import HARNESS

VERSIONS = re.compile(r"0\.4\.\d+")
"""The lm-eval versions whose log shape this reader knows."""
CHOICE_TYPES = ("multiple_choice", "loglikelihood")
GENERATE = "generate_until"
_RESULTS = re.compile(r"results_(?P<time>.+)\.json")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Config(_Strict):
    model: str
    model_args: Any = None


class _Results(_Strict):
    """The parts of ``results_*.json`` an import reads."""

    results: dict[str, dict[str, Any]]
    configs: dict[str, dict[str, Any]]
    config: _Config
    lm_eval_version: str | None = None
    task_hashes: dict[str, str] = {}
    model_name: str = ""


class _Sample(BaseModel):
    """One line of ``samples_<task>_*.jsonl`` (its metric values are the extra keys)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    doc_id: int
    doc: Any
    target: Any
    arguments: dict[str, dict[str, Any]]
    resps: list[Any]
    filtered_resps: list[Any]
    filter: str
    metrics: list[str]


def _where(error: ValidationError) -> str:
    first = error.errors()[0]
    return ".".join(str(p) for p in first["loc"]) or "(the line)"


def _results(path: Path) -> _Results:
    try:
        data = json.loads(read_regular(path))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DatasetError(f"not lm-eval's results JSON ({e})", path=path) from None
    try:
        results = _Results.model_validate(data)
    except ValidationError as e:
        raise DatasetError(f"not the shape of lm-eval 0.4's results file: {e.errors()[0]['msg']}",
                           path=path, field=_where(e)) from None
    version = results.lm_eval_version
    if version is None or not VERSIONS.fullmatch(version.split("+")[0]):
        raise DatasetError(f"lm-eval version {version!r} is not one this reader knows (0.4.x)", path=path,
                           field="lm_eval_version")
    return results


def _samples(path: Path) -> list[tuple[int, _Sample]]:
    out = []
    for n, raw in enumerate(regular_lines(path), 1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise DatasetError(f"not a JSON line (truncated?): {e}", path=path, line=n) from None
        try:
            out.append((n, _Sample.model_validate(data)))
        except ValidationError as e:
            raise DatasetError(f"not the shape of an lm-eval 0.4 sample: {e.errors()[0]['msg']}", path=path, line=n,
                               field=_where(e)) from None
    if not out:
        raise DatasetError("no sample in the file", path=path)
    return out


def _args(s: _Sample, path: Path, n: int) -> list[list[Any]]:
    """Each request's arguments in order (``gen_args_0``: ``arg_0``, ``arg_1``...)."""
    try:
        return [[s.arguments[f"gen_args_{i}"][f"arg_{j}"] for j in range(len(s.arguments[f"gen_args_{i}"]))]
                for i in range(len(s.arguments))]
    except KeyError as e:
        raise DatasetError(f"request arguments not numbered as lm-eval 0.4 writes them ({e})", path=path, line=n,
                           field="arguments") from None


def _loglik(value: Any, path: Path, n: int, k: int) -> tuple[float, bool | None]:
    """One choice's filtered response: ``(log-likelihood, is_greedy)`` (lm-eval logs them as strings)."""
    pair = value if isinstance(value, list) else None
    if pair is None and isinstance(value, str) and value.startswith("("):  # str of a tuple, as older 0.4 wrote
        pair = [p.strip() for p in value.strip("()").split(",")]
    try:
        assert pair is not None and len(pair) >= 1
        ll = float(pair[0])
        greedy = None if len(pair) < 2 else str(pair[1]) == "True"
    except (AssertionError, ValueError, TypeError):
        raise DatasetError(f"not a log-likelihood and greedy flag: {value!r}", path=path, line=n,
                           field=f"filtered_resps.{k}") from None
    return ll, greedy


def _gold_index(target: Any, choices: Sequence[str], path: Path, n: int) -> int:
    text = str(target)
    if text.lstrip("-").isdigit() and 0 <= int(text) < len(choices):
        return int(text)
    if text in choices:
        return choices.index(text)
    raise DatasetError(f"target {text!r} is neither a choice's index nor a choice", path=path, line=n, field="target")


def _metric_values(s: _Sample) -> dict[str, Any]:
    extra = s.model_extra or {}
    return {m: extra[m] for m in s.metrics if m in extra}


def _choice_record(task: str, s: _Sample, path: Path, n: int) -> ItemRecord:
    args = _args(s, path, n)
    if not args or any(len(a) < 2 or not isinstance(a[1], str) for a in args):
        raise DatasetError("the choices cannot be recovered: no (context, continuation) requests", path=path,
                           line=n, field="arguments")
    if len({a[0] for a in args}) != 1:
        raise DatasetError("the choices cannot be recovered: the requests do not share one context", path=path,
                           line=n, field="arguments")
    choices = [a[1][1:] if a[1].startswith(" ") else a[1] for a in args]
    if len(s.filtered_resps) != len(choices):
        raise DatasetError(f"{len(s.filtered_resps)} responses for {len(choices)} choices", path=path, line=n,
                           field="filtered_resps")
    scored = [_loglik(v, path, n, k) for k, v in enumerate(s.filtered_resps)]
    lls = [ll for ll, _ in scored]
    gold = _gold_index(s.target, choices, path, n)
    best = max(range(len(lls)), key=lambda k: (lls[k], -k)) if all(map(math.isfinite, lls)) else None
    label = choices[best] if best is not None else UNPARSED
    metrics = _metric_values(s)
    harness = {"answer": label, "metrics": metrics, "filter": s.filter,
               "correct": None if "acc" not in metrics else bool(metrics["acc"])}
    return ItemRecord(
        condition=task, axes={"task": task}, item_id=str(s.doc_id), tags={},
        fields={"doc": s.doc, "prompt": args[0][0], "choices": choices, "target": str(s.target)},
        prompts=[{"context": a[0], "continuation": a[1]} for a in args],
        outputs=[ScoreOutput(ll, None, g) for ll, g in scored],
        label=label, detail={"logprobs": lls, "rule": "likeliest choice", HARNESS: harness},
        gold=choices[gold], correct=label == choices[gold])


def _generate_record(task: str, s: _Sample, choices: Sequence[str], path: Path, n: int) -> ItemRecord:
    args = _args(s, path, n)
    raw = s.resps[0][0] if s.resps and isinstance(s.resps[0], list) and s.resps[0] else None
    if not isinstance(raw, str):
        raise DatasetError("no generated text", path=path, line=n, field="resps.0.0")
    filtered = s.filtered_resps[0] if s.filtered_resps else None
    target = str(s.target)
    if target not in choices:
        raise DatasetError(f"target {target!r} is not one of the choices ({', '.join(choices)})", path=path, line=n,
                           field="target")
    label, detail = read_answer(raw, {"choices": choices})
    metrics = _metric_values(s)
    verdict = next((bool(v) for k, v in metrics.items() if isinstance(v, int | float)), None)
    harness = {"answer": filtered if isinstance(filtered, str) else json.dumps(filtered), "metrics": metrics,
               "filter": s.filter, "correct": verdict}
    return ItemRecord(
        condition=task, axes={"task": task}, item_id=str(s.doc_id), tags={},
        fields={"doc": s.doc, "prompt": args[0][0] if args and args[0] else "", "choices": list(choices),
                "target": target},
        prompts=[args[0][0] if args and args[0] else ""], outputs=[TextOutput(raw)],
        label=label, detail={**detail, HARNESS: harness}, gold=target, correct=label == target)


def _doc_choices(config: Mapping[str, Any]) -> list[str] | None:
    value = config.get("doc_to_choice")
    return [str(c) for c in value] if isinstance(value, list) and value else None


def _reported(results: Mapping[str, Any], filter_key: str) -> dict[str, float | int | None]:
    """The task's aggregate metrics for one filter (``acc,none`` → ``acc``), stderr left out."""
    out: dict[str, float | int | None] = {}
    for key, value in results.items():
        metric, _, flt = key.partition(",")
        if flt == filter_key and not metric.endswith("_stderr") and isinstance(value, int | float):
            out[metric] = value
    return out


def model_name(logged: str) -> str:
    """The model as a run names it: a hub id as logged (``org/name``), a local directory by its last part (the
    converted ``/root/.cache/.../smollm2-135m`` is ``smollm2-135m``; the full path stays in ``meta.json``).
    """
    return Path(logged).name if logged.startswith(("/", ".", "~")) else logged


def samples_files(results_file: Path) -> dict[str, Path]:
    """The ``samples_<task>_<time>.jsonl`` files beside ``results_<time>.json``, by task."""
    m = _RESULTS.fullmatch(results_file.name)
    if m is None:
        raise DatasetError("not an lm-eval results file (results_<time>.json)", path=results_file)
    suffix = f"_{m['time']}.jsonl"
    return {p.name[len("samples_"):-len(suffix)]: p for p in sorted(results_file.parent.glob(f"samples_*{suffix}"))}


def results_files(path: Path) -> list[Path]:
    """Every lm-eval results file at ``path`` (a file, or a directory searched through)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise DatasetError("no such file or directory", path=path)
    found = sorted(p for p in path.rglob("results_*.json") if p.is_file())
    if not found:
        raise DatasetError("no lm-eval results_*.json file under it (was lm-eval run with --output_path and "
                           "--log_samples?)", path=path)
    return found


def read(results_file: Path, choices: Sequence[str] | None = None) -> list[HarnessRun]:
    """The runs of one lm-eval results file: one per task and filter whose samples lie beside it.

    Args:
        results_file: lm-eval's ``results_<time>.json``.
        choices: The answers a ``generate_until`` task's generations are read over, where its
            configuration gives no ``doc_to_choice`` list.

    Raises:
        DatasetError: one line naming the file, line and field of anything not as lm-eval 0.4 writes it.
    """
    results = _results(results_file)
    files = samples_files(results_file)
    if not files:
        raise DatasetError("no samples_<task>_*.jsonl beside it (was lm-eval run with --log_samples?)",
                           path=results_file)
    model = model_name(results.model_name or str(results.config.model_args or results.config.model))
    log_sha = sha256_file(results_file)
    runs = []
    for task, path in files.items():
        config = results.configs.get(task)
        if config is None:
            raise DatasetError(f"task {task!r} has samples but no configuration", path=results_file,
                               field=f"configs.{task}")
        output_type = str(config.get("output_type", ""))
        listed = _doc_choices(config)
        by_filter = _task_records(task, path, output_type, listed or (list(choices) if choices else None),
                                  results_file)
        sha = sha256_file(path)
        for flt, records in by_filter.items():
            name = task if len(by_filter) == 1 else f"{task}/{flt}"
            records = [r if name == task else _renamed(r, name, flt) for r in records]
            harness = {"name": "lm-eval", "version": str(results.lm_eval_version), "task": task,
                       "task_hash": results.task_hashes.get(task), "log": str(results_file), "log_sha256": log_sha,
                       "model": results.config.model, "model_args": results.config.model_args,
                       "generate_config": config.get("generation_kwargs"), "output_type": output_type,
                       "filter": flt, "choices_from": ("the requests' continuations" if output_type in CHOICE_TYPES
                                                       else "doc_to_choice" if listed else "--choices"),
                       "reported": _reported(results.results.get(task, {}), flt)}
            runs.append(HarnessRun(model, name, sorted(records, key=lambda r: int(r.item_id)), path, sha, harness))
    return runs


def _task_records(task: str, path: Path, output_type: str, choices: Sequence[str] | None,
                  results_file: Path) -> dict[str, list[ItemRecord]]:
    """One task's samples file as records, by filter (one doc per filter once)."""
    by_filter: dict[str, list[ItemRecord]] = {}
    seen: dict[tuple[str, int], int] = {}
    for n, s in _samples(path):
        key = (s.filter, s.doc_id)
        if key in seen:
            raise DatasetError(f"doc_id {s.doc_id} (filter {s.filter!r}) repeats line {seen[key]}", path=path,
                               line=n, field="doc_id")
        seen[key] = n
        if s.target is None or s.target == "":
            raise DatasetError("the sample has no target", path=path, line=n, field="target")
        if output_type in CHOICE_TYPES:
            record = _choice_record(task, s, path, n)
        elif output_type == GENERATE:
            if not choices:
                raise DatasetError(f"the choices of generate_until task {task!r} cannot be recovered (its "
                                   "configuration has no doc_to_choice list); give them with --choices",
                                   path=path, line=n, field="doc_to_choice")
            record = _generate_record(task, s, choices, path, n)
        else:
            raise DatasetError(f"output_type {output_type!r} cannot be imported (multiple_choice, "
                               "loglikelihood or generate_until)", path=results_file,
                               field=f"configs.{task}.output_type")
        by_filter.setdefault(s.filter, []).append(record)
    return by_filter


def _renamed(r: ItemRecord, name: str, flt: str) -> ItemRecord:
    """``r`` under the condition of one filter of its task (a task logged under several filters)."""
    return replace(r, condition=name, axes={**r.axes, "filter": flt})

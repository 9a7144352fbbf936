"""inspect_ai's logs (``.eval`` and ``.json``) as lingdiag runs, read by inspect's own log reader
(``inspect_ai.log.read_eval_log``: the ``inspect`` extra).

One run per log (one task, one model): each sample's input, target, choices and completion; lingdiag's
reading of the completion (the option letter where the sample has choices, else one of ``--choices``);
each scorer's value and extracted answer beside it, the first scorer's as the harness's verdict (the
one inspect's headline ``accuracy`` is of). The model, its arguments and its generate config go to
``meta.json``. Only a finished log (``status: success``) of log format version 2 is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lingdiag.errors import DatasetError, MissingDependency
from lingdiag.interop.answers import read_answer
from lingdiag.interop.runs import HarnessRun
from lingdiag.io.limits import RUN_FILE_BYTES, read_regular
from lingdiag.io.paths import sha256_file
from lingdiag.records import ItemRecord, TextOutput, dumps
from lingdiag.suites.harness import HARNESS

VERSION = 2
"""The log format version this reader knows (``EvalLog.version``)."""
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _reader() -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ModuleNotFoundError:
        raise MissingDependency("lingdiag import inspect", "inspect", ["inspect-ai"]) from None
    return read_eval_log


def log_files(path: Path) -> list[Path]:
    """Every inspect log at ``path`` (a file, or a directory searched for ``*.eval`` and ``*.json``)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise DatasetError("no such file or directory", path=path)
    found = sorted(p for p in path.rglob("*") if p.suffix in (".eval", ".json") and p.is_file()
                   and not p.name.startswith(("logs", "eval-set")))  # inspect's own listing files
    if not found:
        raise DatasetError("no inspect log (*.eval, *.json) under it", path=path)
    return found


def _text(value: Any) -> str:
    """A sample's input as text: a string, or its chat messages as ``[role]`` blocks."""
    if isinstance(value, str):
        return value
    return "\n\n".join(f"[{m.role}]\n{m.text}" for m in value)


def _score_float(value: Any) -> float | None:
    from inspect_ai.scorer import value_to_float

    try:
        return float(value_to_float()(value))
    except (TypeError, ValueError):
        return None


def read(path: Path, choices: Sequence[str] | None = None) -> list[HarnessRun]:
    """The run of one inspect log.

    Args:
        path: An inspect ``.eval`` or ``.json`` log.
        choices: The answers a sample without choices is read over (inspect logs none for ``match()`` tasks).

    Raises:
        DatasetError: one line naming the file, the sample and the field of anything not as inspect writes it.
        MissingDependency: inspect_ai is not installed (the ``inspect`` extra).
    """
    reader = _reader()
    read_regular(path, RUN_FILE_BYTES)  # a regular file of bounded size before inspect opens it
    try:
        log = reader(str(path))
    except Exception as e:  # inspect's reader raises whatever its parser meets; all mean "not a log it can read"
        raise DatasetError(f"not an inspect log inspect's reader can read: {str(e).splitlines()[0] if str(e) else e!r}",
                           path=path) from None
    if log.version != VERSION:
        raise DatasetError(f"log format version {log.version} is not one this reader knows ({VERSION})", path=path,
                           field="version")
    if log.status != "success":
        raise DatasetError(f"the eval did not finish (status {log.status!r}); import a finished log", path=path,
                           field="status")
    if not log.samples:
        raise DatasetError("the log holds no samples (written with --no-log-samples?)", path=path, field="samples")
    scorer = log.results.scores[0].name if log.results and log.results.scores else None
    records: list[ItemRecord] = []
    seen: dict[str, int] = {}
    models: dict[str, int] = {}
    for k, s in enumerate(log.samples, 1):
        item_id = str(s.id) if s.epoch == 1 else f"{s.id}#{s.epoch}"
        if item_id in seen:
            raise DatasetError(f"sample {item_id!r} repeats sample {seen[item_id]}", path=path, row=k, field="id")
        seen[item_id] = k
        served = s.output.model if s.output else ""
        if served:
            models.setdefault(served, k)
            if len(models) > 1:
                first = next(iter(models))
                raise DatasetError(f"answered by {served!r}, sample {models[first]} by {first!r}: two models in one "
                                   "log", path=path, row=k, field="output.model")
        records.append(_record(s, item_id, log.eval.task, scorer, choices, path, k))
    reported = {f"{sc.name}/{m}" if sc.name != scorer else m: v.value
                for sc in (log.results.scores if log.results else []) for m, v in sc.metrics.items()}
    harness = {"name": "inspect", "version": str(log.eval.packages.get("inspect_ai", "")), "task": log.eval.task,
               "log": str(path), "log_sha256": sha256_file(path), "model": log.eval.model,
               "model_args": log.eval.model_args or None,
               "generate_config": log.eval.model_generate_config.model_dump(exclude_none=True),
               "output_type": "generate", "choices_from": "the samples' choices" if log.samples[0].choices
               else "--choices", "reported": reported}
    model = log.eval.model.split("/", 1)[-1] if "/" in log.eval.model else log.eval.model
    return [HarnessRun(model, log.eval.task, records, path, harness["log_sha256"], harness)]


def _record(s: Any, item_id: str, task: str, scorer: str | None, given: Sequence[str] | None, path: Path,
            k: int) -> ItemRecord:
    target = s.target
    if isinstance(target, list):
        if len(target) != 1:
            raise DatasetError(f"{len(target)} targets: one is needed to score against", path=path, row=k,
                               field="target")
        target = target[0]
    if not target:
        raise DatasetError("the sample has no target", path=path, row=k, field="target")
    fields: dict[str, Any] = {"input": _text(s.input)}
    if s.choices:
        options = dict(zip(LETTERS, s.choices, strict=False))
        fields |= {"options": options, "choices": list(options)}
    elif given:
        fields["choices"] = list(given)
    else:
        raise DatasetError("the choices cannot be recovered (the sample has none); give them with --choices",
                           path=path, row=k, field="choices")
    if target not in fields["choices"]:
        raise DatasetError(f"target {target!r} is not one of the choices ({', '.join(fields['choices'])})", path=path,
                           row=k, field="target")
    completion = s.output.completion if s.output else ""
    label, detail = read_answer(completion, fields)
    scores = {name: {"value": sc.value, "answer": sc.answer, "score": _score_float(sc.value)}
              for name, sc in (s.scores or {}).items()}
    first = scores.get(scorer or "", {})
    harness = {"answer": first.get("answer") or "", "scorer": scorer,
               "metrics": {name: v["score"] for name, v in scores.items()},
               "scores": scores, "correct": None if first.get("score") is None else first["score"] == 1.0}
    return ItemRecord(
        condition=task, axes={"task": task}, item_id=item_id, tags={},
        fields={**fields, "target": target, "sample_metadata": dumps(s.metadata or {}, sort_keys=True)},
        prompts=[fields["input"]], outputs=[TextOutput(completion)], label=label,
        detail={**detail, HARNESS: harness}, gold=target, correct=label == target)

"""Every Eval Ever (EEE): runs out as its aggregate and instance-level records, and back in.

EEE is the format the field shares evaluation results in, per run and per item: an aggregate
record (``schema_version``, ``evaluation_id``, ``retrieved_timestamp``, ``source_metadata``,
``model_info``, ``evaluation_results`` with each metric's ``metric_config`` and ``score_details``,
``detailed_evaluation_results`` naming the instance file and its checksum) and one instance-level
line per item (``input`` with its reference and choices, ``output``, ``answer_attribution``: who
read which answer from it and how, ``evaluation``: score and correctness).

Any finished run exports (lingdiag's own, or imported) in EEE's datastore layout, schema version 0.3.0:
one evaluation per condition, its accuracy over the items with a gold label; each record's prompts and
outputs as text, lingdiag's label as the terminal answer attribution and, for an imported run, the
harness's own extraction before it.
``read`` brings an export back in as a ``harness`` run, so an item analysis can rest on another
lab's shared results.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from lingdiag.errors import DatasetError, RunError
from lingdiag.interop.runs import HarnessRun, safe_part
from lingdiag.io.atomic import make_dir, write_atomic
from lingdiag.io.limits import read_regular, regular_lines
from lingdiag.io.paths import sha256_file
from lingdiag.records import REQUEST_SEPARATOR, UNPARSED, ItemRecord, TextOutput, as_text, dumps
from lingdiag.rundir import RunDir, read_run
from lingdiag.rundir.state import Phase
from lingdiag.suites.harness import HARNESS

SCHEMA_VERSION = "0.3.0"
"""The EEE schema version written and read (the schema files of evaleval/every_eval_ever, tests/fixtures/eee)."""
SAMPLES = "_samples.jsonl"
LIBRARIES = {"lm-eval": "lm_eval", "inspect": "inspect_ai"}
"""A harness's name as EEE's ``eval_library.name`` spells it (its examples: inspect_ai, lm_eval, helm)."""
LOCAL_BACKENDS = frozenset({"hf", "mock"})
"""Backends whose model runs on the machine that made the run (EEE's ``deployment_type: self_deployed``)."""
UNATTRIBUTED = "unattributed"
"""The datastore path's developer part for a model named without ``org/`` (EEE refuses ``unknown`` there)."""


def _accuracy(records: Sequence[ItemRecord]) -> tuple[float, int]:
    graded = [bool(r.correct) for r in records if r.correct is not None]
    return (sum(graded) / len(graded) if graded else 0.0), len(graded)


def _attribution(r: ItemRecord) -> list[dict[str, Any]]:
    out = []
    harness = r.detail.get(HARNESS)
    if isinstance(harness, Mapping) and harness.get("answer") is not None:
        out.append({"turn_idx": 0, "source": "output.raw", "extracted_value": str(harness["answer"]),
                    "extraction_method": f"the harness's own ({harness.get('filter') or 'scorer'})",
                    "is_terminal": False})
    rule = r.detail.get("rule") or (f"unparsed: {r.detail.get('unparsed')}" if r.label == UNPARSED else "")
    out.append({"turn_idx": 0, "source": "output.raw", "extracted_value": r.label,
                "extraction_method": f"lingdiag ({rule})" if rule else "lingdiag", "is_terminal": True})
    return out


def sample_hash(raw: str, reference: Sequence[str]) -> str:
    """EEE's cross-model join key for one sample: SHA-256 of ``{"raw", "reference"}`` as its docs spell it."""
    text = json.dumps({"raw": raw, "reference": list(reference)}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()


def instance(r: ItemRecord, evaluation_id: str, model_id: str) -> dict[str, Any]:
    """One record as an EEE instance-level line (its ``evaluation_result_id`` is the record's condition)."""
    prompt = r.fields.get("prompt")
    choices = r.fields.get("choices")
    raw = prompt if isinstance(prompt, str) else REQUEST_SEPARATOR.join(map(as_text, r.prompts))
    reference = [r.gold] if r.gold is not None else []
    texts = [o.text for o in r.outputs if isinstance(o, TextOutput)]
    line: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id, "model_id": model_id,
        "evaluation_name": r.condition, "evaluation_result_id": r.condition, "sample_id": r.item_id,
        "sample_hash": sample_hash(raw, reference), "interaction_type": "single_turn",
        "input": {"raw": raw, "reference": reference},
        "output": {"raw": texts or [REQUEST_SEPARATOR.join(map(as_text, r.outputs))]},
        "answer_attribution": _attribution(r),
        "evaluation": {"score": 1.0 if r.correct else 0.0, "is_correct": bool(r.correct)},
        # EEE's metadata holds strings only: the whole record as one line of lingdiag's items.jsonl.
        "metadata": {"lingdiag_record": r.to_json()},
    }
    if isinstance(choices, list):
        line["input"]["choices"] = [str(c) for c in choices]
    if r.error is not None:
        line["error"] = r.error
    return line


@dataclass(frozen=True)
class _Identity:
    """Where and under which names one run goes in EEE's layout (``data/<collection>/<developer>/<model>/``)."""

    run: RunDir
    collection: str
    timestamp: str

    @property
    def model(self) -> str:
        return self.run.meta.model

    @property
    def developer(self) -> str | None:
        return self.model.split("/", 1)[0] if "/" in self.model else None

    @property
    def evaluation_id(self) -> str:
        # EEE's eval_name/model_id/retrieved_timestamp, with the run's directory name: two runs of one suite
        # and model are two evaluations.
        return f"{self.collection}/{self.model}/{Path(self.run.path).resolve().name}/{self.timestamp}"

    @property
    def file_uuid(self) -> str:
        """A UUIDv4-shaped name (the schema's file_path pattern) drawn from the evaluation id: one run, one name."""
        digest = hashlib.sha256(self.evaluation_id.encode("utf-8", errors="replace")).digest()
        return str(uuid.UUID(bytes=digest[:16], version=4))

    @property
    def folder(self) -> PurePosixPath:
        model = self.model.split("/", 1)[1] if self.developer else self.model
        return PurePosixPath("data", safe_part(self.collection), safe_part(self.developer or UNATTRIBUTED),
                             safe_part(model.replace("/", "_")))


def _library(run: RunDir) -> dict[str, Any]:
    harness = run.meta.imported.harness if run.meta.imported is not None else None
    if harness is not None:
        return {"name": LIBRARIES.get(harness.name, harness.name), "version": harness.version,
                "additional_details": {"task": harness.task, "reread_by": "lingdiag"}}
    return {"name": "lingdiag", "version": (run.meta.versions or {}).get("lingdiag", "unknown")}


def _aggregate(who: _Identity, samples: str, sha: str, rows: int) -> dict[str, Any]:
    run = who.run
    backend = run.meta.identity.backend
    results = []
    for condition in dict.fromkeys(r.condition for r in run.records):
        rs = [r for r in run.records if r.condition == condition]
        acc, n = _accuracy(rs)
        results.append({
            "evaluation_result_id": condition, "evaluation_name": condition,
            "source_data": {"dataset_name": who.collection, "source_type": "other",
                            "additional_details": {"lingdiag_suite": run.meta.suite,
                                                   "dataset": str(run.meta.config.get("dataset", ""))}},
            "metric_config": {"evaluation_description": f"accuracy over the {n} items with a gold label "
                                                        "(an unparsed answer is wrong)",
                              "metric_id": "accuracy", "metric_name": "accuracy", "metric_kind": "accuracy",
                              "metric_unit": "proportion", "lower_is_better": False, "score_type": "continuous",
                              "min_score": 0.0, "max_score": 1.0},
            "score_details": {"score": acc, "uncertainty": {"num_samples": n}},
        })
    model_info: dict[str, Any] = {
        "name": who.model, "id": who.model, "inference_platform": backend,
        # lingdiag does not know where a model's weights may be had; it knows where the run ran it.
        "additional_details": {"deployment_type": "self_deployed" if backend in LOCAL_BACKENDS else "unknown",
                               "model_availability": "unknown"}}
    if who.developer:
        model_info["developer"] = who.developer
    return {
        "schema_version": SCHEMA_VERSION, "evaluation_id": who.evaluation_id, "retrieved_timestamp": who.timestamp,
        "source_metadata": {"source_name": "lingdiag", "source_type": "evaluation_run",
                            "source_organization_name": "lingdiag user", "evaluator_relationship": "third_party"},
        "eval_library": _library(run),
        "model_info": model_info,
        "evaluation_results": results,
        "detailed_evaluation_results": {"format": "jsonl", "file_path": samples, "hash_algorithm": "sha256",
                                        "checksum": sha, "total_rows": rows},
    }


def export(run_dirs: Sequence[Path], out: Path) -> list[Path]:
    """Write each finished run in EEE's datastore layout under ``out``: ``data/<collection>/<developer>/<model>/``
    ``<uuid>.json`` (aggregate) and ``<uuid>_samples.jsonl`` (instances), ``out`` standing for the datastore's root.

    The collection is the run's suite (an imported run's: the harness's task); ``retrieved_timestamp`` is the
    modification time of the run's records, in whole seconds (a run does not record when it finished), and the
    uuid is drawn from the evaluation id, so one run exports the same bytes under the same names every time.

    Raises:
        RunError: a run not finished (its records may still change), or two runs with one evaluation id.
    """
    make_dir(out)
    written: list[Path] = []
    seen: dict[str, Path] = {}
    for run_dir in run_dirs:
        run = read_run(run_dir)
        if run.state.phase is not Phase.FINISHED:
            raise RunError(f"{run_dir}: the run is {run.state.phase.value}, not finished; export a finished run")
        harness = run.meta.imported.harness if run.meta.imported is not None else None
        who = _Identity(run, harness.task if harness is not None else run.meta.suite,
                        str(int((Path(run_dir) / "items.jsonl").stat().st_mtime)))
        if who.file_uuid in seen:
            raise RunError(f"{run_dir}: {seen[who.file_uuid]}, given too, exports as the same evaluation "
                           f"{who.evaluation_id!r}; export them to separate --out directories")
        seen[who.file_uuid] = Path(run_dir)
        body = "".join(dumps(instance(r, who.evaluation_id, who.model), sort_keys=True, ensure_ascii=False) + "\n"
                       for r in run.records)
        samples = who.folder / f"{who.file_uuid}{SAMPLES}"
        make_dir(out / who.folder)
        write_atomic(out / samples, body)
        sha = hashlib.sha256(body.encode("utf-8", errors="replace")).hexdigest()
        aggregate = _aggregate(who, samples.as_posix(), sha, len(run.records))
        target = out / who.folder / f"{who.file_uuid}.json"
        write_atomic(target, dumps(aggregate, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        written += [target, out / samples]
    return written


class _Instance(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    schema_version: str
    model_id: str
    evaluation_name: str
    sample_id: str
    input: dict[str, Any]
    output: dict[str, Any]
    answer_attribution: list[dict[str, Any]]
    evaluation: dict[str, Any]


def read(aggregate_file: Path) -> list[HarnessRun]:
    """An EEE aggregate record and the instance file it names, as one ``harness`` run per evaluation.

    Raises:
        DatasetError: one line naming the file, line and field not as the schema has it.
    """
    try:
        agg = json.loads(read_regular(aggregate_file))
        version = agg["schema_version"]
        detail = agg["detailed_evaluation_results"]
        samples = aggregate_file.parent / Path(str(detail["file_path"])).name
        model = str(agg["model_info"]["id"])
        reported = {str(e["evaluation_name"]): e["score_details"]["score"] for e in agg["evaluation_results"]}
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DatasetError(f"not JSON ({e})", path=aggregate_file) from None
    except (KeyError, TypeError) as e:
        raise DatasetError("not an Every Eval Ever aggregate record", path=aggregate_file, field=str(e)) from None
    if version != SCHEMA_VERSION:
        raise DatasetError(f"schema_version {version!r} is not one this reader knows ({SCHEMA_VERSION})",
                           path=aggregate_file, field="schema_version")
    by_task: dict[str, list[ItemRecord]] = {}
    seen: dict[tuple[str, str], int] = {}
    for n, raw in enumerate(regular_lines(samples), 1):
        try:
            line = _Instance.model_validate(json.loads(raw))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise DatasetError(f"not a JSON line (truncated?): {e}", path=samples, line=n) from None
        except ValidationError as e:
            raise DatasetError(f"not an EEE instance: {e.errors()[0]['msg']}", path=samples, line=n,
                               field=".".join(map(str, e.errors()[0]["loc"]))) from None
        if line.model_id != model:
            raise DatasetError(f"model {line.model_id!r} is not the aggregate record's {model!r} (two models in one "
                               "file)", path=samples, line=n, field="model_id")
        key = (line.evaluation_name, line.sample_id)
        if key in seen:
            raise DatasetError(f"sample_id {line.sample_id!r} repeats line {seen[key]}", path=samples, line=n,
                               field="sample_id")
        seen[key] = n
        by_task.setdefault(line.evaluation_name, []).append(_record(line, samples, n))
    sha = sha256_file(samples)
    return [HarnessRun(model, task, records, samples, sha, {
        "name": "every-eval-ever", "version": version, "task": task, "log": str(aggregate_file),
        "log_sha256": sha256_file(aggregate_file), "model": model, "output_type": "instances",
        "choices_from": "input.choices", "reported": {"accuracy": reported.get(task)}})
        for task, records in by_task.items()]


def _record(line: _Instance, path: Path, n: int) -> ItemRecord:
    references = line.input.get("reference")
    if not isinstance(references, list) or not references or not str(references[0]):
        raise DatasetError("the sample has no reference", path=path, line=n, field="input.reference")
    reference = str(references[0])
    terminal = [a for a in line.answer_attribution if a.get("is_terminal")]
    if not terminal:
        raise DatasetError("no terminal answer attribution", path=path, line=n, field="answer_attribution")
    answer = str(terminal[-1].get("extracted_value"))
    raw = line.output.get("raw")
    if not isinstance(raw, list):
        raise DatasetError("output.raw is not a list of responses", path=path, line=n, field="output.raw")
    correct = line.evaluation.get("is_correct")
    return ItemRecord(
        condition=line.evaluation_name, axes={"task": line.evaluation_name}, item_id=line.sample_id, tags={},
        fields={"prompt": line.input.get("raw"), "choices": line.input.get("choices"), "target": reference},
        prompts=[str(line.input.get("raw", ""))], outputs=[TextOutput(str(text)) for text in raw],
        label=answer, detail={HARNESS: {"answer": answer, "correct": correct,
                                        "metrics": {"score": line.evaluation.get("score")}}},
        gold=reference, correct=bool(correct) if correct is not None else answer == reference)

"""Which parse rule took each answer of a run (``lingdiag inspect``): so a researcher can audit
a parser, per condition, with examples. Read from ``items.jsonl``, never a model.

Parsers name the rule that located a label under ``detail["rule"]`` and the reason an answer was
refused under ``detail["unparsed"]`` (counted as ``unparsed: REASON``); records of parsers that
name neither count as ``(not recorded)``, and failed items as ``(failed)``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from lingdiag.io.markdown import markdown_table
from lingdiag.reading import records_of
from lingdiag.records import FailedOutput, ItemRecord, TextOutput, unparsed_reason

EXAMPLE_CHARS = 160
"""Longest example shown; model output is untrusted and may be long."""


def _answer(record: ItemRecord) -> str:
    out = record.outputs[0] if record.outputs else None
    if isinstance(out, TextOutput):
        return out.text
    return out.error if isinstance(out, FailedOutput) else "" if out is None else json.dumps(out.to_json())


def escaped(text: str, limit: int = EXAMPLE_CHARS) -> str:
    """``text`` on one line with control characters escaped (as in JSON), cut at ``limit`` characters."""
    body = json.dumps(text, ensure_ascii=False)[1:-1]
    return body if len(body) <= limit else body[:limit] + "…"


def parse_rules(run_dir: Path, examples: int = 3) -> dict[str, dict[str, dict[str, Any]]]:
    """``{condition: {rule: {count, labels: {label: n}, examples: [text]}}}``, rules by falling
    count then name, examples the first ``examples`` answers in record order.
    """
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for r in records_of(run_dir):
        reason = unparsed_reason(r)
        rule = ("(failed)" if r.error else f"unparsed: {reason}" if reason is not None and reason != "not named"
                else str(r.detail.get("rule", "(not recorded)")))
        entry = found.setdefault(r.condition, {}).setdefault(rule, {"count": 0, "labels": Counter(), "examples": []})
        entry["count"] += 1
        entry["labels"][r.label] += 1
        if len(entry["examples"]) < examples:
            entry["examples"].append(escaped(_answer(r)))
    return {c: {k: {**v, "labels": dict(sorted(v["labels"].items()))}
                for k, v in sorted(rules.items(), key=lambda kv: (-kv[1]["count"], kv[0]))}
            for c, rules in found.items()}


def rules_markdown(rules: dict[str, dict[str, dict[str, Any]]]) -> str:
    """One markdown table per condition: rule, answers, labels, examples."""
    parts = []
    for condition, by_rule in rules.items():
        rows = [[rule, v["count"], ", ".join(f"{k} {n}" for k, n in v["labels"].items()),
                 "<br>".join(f"`{e}`" for e in v["examples"])] for rule, v in by_rule.items()]
        parts.append(f"### {condition}\n\n" + markdown_table(["Rule", "Answers", "Labels", "Examples"], rows))
    return "\n".join(parts)

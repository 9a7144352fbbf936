"""Re-parse every free-text answer of run directories with two versions of the label parser and
list each label that changes, with the rule each version applied.

    PYTHONPATH=src python scripts/reparse.py --old /tmp/base/src RUN_DIR...

Reads the ``items.jsonl`` of each RUN_DIR; a record whose detail names a label-parser ``rule``
(ImperfectiveNLI and the ``nli-label`` chat prompts) and whose output is text is re-parsed with
``lingdiag.parse.labels.parse_label`` of this checkout and of the tree at ``--old`` (a checkout's
``src``), over the run's labels (its golds and answered labels). Exit 1 when a label changed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from lingdiag.parse import labels as new


def _old(src: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("old_labels", src / "lingdiag" / "parse" / "labels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_labels"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _texts(record: dict[str, Any]) -> str | None:
    outputs = record.get("outputs") or []
    if len(outputs) != 1 or "rule" not in (record.get("detail") or {}):
        return None
    out = outputs[0]
    return out if isinstance(out, str) else out.get("text") if isinstance(out, dict) else None


def main() -> int:
    """Re-parse the runs named; 1 when a label changed."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, required=True, help="the src folder of the other checkout")
    ap.add_argument("runs", type=Path, nargs="+")
    args = ap.parse_args()
    old = _old(args.old)
    changed = seen = 0
    for run in args.runs:
        records = [json.loads(line) for line in (run / "items.jsonl").read_text(encoding="utf-8").splitlines()]
        labels = sorted({r["gold"] for r in records if r.get("gold")} | {r["label"] for r in records} - {"unparsed"})
        for r in records:
            text = _texts(r)
            if text is None:
                continue
            seen += 1
            (a, da), (b, db) = old.parse_label(text, labels), new.parse_label(text, labels)
            if a != b:
                changed += 1
                print(f"{run.name} {r['condition']} {r['item_id']}: {a} ({da['rule']}) -> {b} ({db['rule']}): {text!r}")
    print(f"{seen} answers re-parsed, {changed} labels changed", file=sys.stderr)
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())

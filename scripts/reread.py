"""Re-read the answers kept in run directories with this checkout's readers, and list every label
that changes, with the rule or reason the reader gives now.

    PYTHONPATH=src python scripts/reread.py RUN_DIR... [--json]

Each run's conditions are planned again from its recorded config (``lingdiag.engine.run.plan``);
each record whose outputs are all texts is read again by its condition's own strategy
(``Strategy.parse``), so a chat prompt's label parser, a suite file's parser and ExpliCa's letter,
cloze and rating readers each read their own answers. A run whose plan cannot be made here (its
data file gone) is read by its suite's outside-answer parser (``Suite.parse_answer``) instead, and
says so. Log-likelihood records are not answers and are skipped. Prints one line per changed
label and a table per run; ``--json`` prints the changes as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lingdiag.config import RunConfig
from lingdiag.engine.run import plan
from lingdiag.errors import LingdiagError
from lingdiag.reading import suite_of
from lingdiag.records import UNPARSED, Generation, ItemRecord, TextOutput
from lingdiag.registry import load_plugins
from lingdiag.rundir import SUITE_COPY, RunStore

Reader = Callable[[ItemRecord], tuple[str, str]]
"""A record → (its label now, the rule or reason the reader gives)."""


def _why(detail: Any) -> str:
    return str(detail.get("rule") or detail.get("unparsed") or "") if isinstance(detail, dict) else ""


def _reader(run: Path) -> tuple[Reader | None, str]:
    """How ``run``'s records are read again, and by what (``strategy``, ``parse_answer`` or why not)."""
    meta = RunStore(run).read_meta()
    config = dict(meta.config)
    if meta.suite_file and (run / SUITE_COPY).exists():  # a suite file is planned from the run's copy
        config["suite"] = str(run / SUITE_COPY)
    try:
        p = plan(RunConfig.model_validate(config))
    except (LingdiagError, ValueError, OSError) as e:
        why = " ".join(str(e).split())[:120]
        try:
            suite = suite_of(meta, run)
        except LingdiagError:
            return None, f"not re-read: {why}"
        if suite.parse_answer is None:
            return None, f"not re-read: {why}"
        parse = suite.parse_answer
        return (lambda r: (parse(_texts(r)[0]).label, _why(dict(parse(_texts(r)[0]).detail)))), \
            f"parse_answer (no plan: {why})"
    conditions = {c.name: c for c in p.conditions}
    items = {(c.name, it.id): it for c in p.conditions for it in c.items}

    def read(r: ItemRecord) -> tuple[str, str]:
        pred = conditions[r.condition].strategy.parse(items[(r.condition, r.item_id)],
                                                      [Generation(text=t) for t in _texts(r)])
        return pred.label, _why(dict(pred.detail))

    return read, "strategy"


def _texts(r: ItemRecord) -> list[str]:
    return [o.text for o in r.outputs if isinstance(o, TextOutput)]


def reread(run: Path) -> dict[str, Any]:
    """``run``'s changed labels and counts."""
    read, how = _reader(run)
    records = RunStore(run).load_records()
    changes, seen, kinds = [], 0, Counter[str]()
    for r in records:
        if read is None or r.error is not None or not r.outputs or len(_texts(r)) != len(r.outputs) \
                or r.label == "unfinished":
            continue
        try:
            label, why = read(r)
        except KeyError:  # a condition or item the plan no longer holds
            continue
        seen += 1
        if label != r.label:
            kind = ("label → unparsed" if label == UNPARSED else "unparsed → label" if r.label == UNPARSED
                    else "label → another label")
            kinds[kind] += 1
            changes.append({"condition": r.condition, "item": r.item_id, "before": r.label,
                            "before_rule": _why(dict(r.detail)), "after": label, "after_why": why, "kind": kind,
                            "answer": _texts(r)[0] if len(_texts(r)) == 1 else _texts(r)})
    return {"run": str(run), "read_by": how, "records": len(records), "answers": seen, "changed": dict(kinds),
            "changes": changes}


def main() -> int:
    """Re-read the runs named; always 0 (the changes are for people to judge)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("runs", type=Path, nargs="+")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    load_plugins()
    results = [reread(run) for run in args.runs]
    if args.json:
        print(json.dumps(results, indent=1, ensure_ascii=False))
        return 0
    for res in results:
        for c in res["changes"]:
            print(f"{res['run']} {c['condition']} {c['item']}: {c['before']} ({c['before_rule']}) -> {c['after']} "
                  f"({c['after_why']}): {json.dumps(c['answer'], ensure_ascii=False)[:200]}")
    print("\n| Run | Read by | Answers re-read | Labels changed | How |\n|---|---|---|---|---|")
    for res in results:
        how = ", ".join(f"{k} {n}" for k, n in sorted(res["changed"].items())) or "—"
        print(f"| {res['run']} | {res['read_by']} | {res['answers']} | {sum(res['changed'].values())} | {how} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

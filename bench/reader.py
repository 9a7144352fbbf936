"""What the answer reader costs: answers read per second, against the label parser it replaced.

``python bench/reader.py`` reads the label answers of the reader's corpus
(``tests/parse/corpus/answers.jsonl``) and a set of long chain-of-thought answers (the corpus's
answers repeated into ~3,000 characters, the length of a 512-token answer) with this checkout's
``parse_label`` and with the one at ``--old`` (a git revision of this repository, default the
commit the reader was built on), in one command, and prints the seconds per 1,000 answers of
each and their ratio, beside the agreement of the two on the corpus (how many labels differ).

Nothing is asserted; the figures go to stdout.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from lingdiag.parse import labels as new

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "parse" / "corpus"


def old_labels(rev: str) -> ModuleType:
    """``lingdiag/parse/labels.py`` at ``rev``, imported on its own (it needs only errors and records)."""
    text = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:src/lingdiag/parse/labels.py"],
                          capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "old_labels.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("old_labels", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_labels"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def timed(parse: Callable[..., Any], answers: list[dict[str, Any]], vocab: dict[str, Any], repeat: int) -> float:
    """Seconds per 1,000 answers, the best of ``repeat`` passes."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for a in answers:
            parse(a["text"], vocab["labels"], aliases=vocab["aliases"][a["lang"]], lang=a["_lang"](a["lang"]))
        best = min(best, time.perf_counter() - start)
    return 1000 * best / len(answers)


def main() -> int:
    """Time both parsers; print the table."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--old", default="b73589f", help="git revision of the parser to compare against")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    old = old_labels(args.old)
    vocab = json.loads((CORPUS / "vocabularies.json").read_text(encoding="utf-8"))
    answers = [json.loads(line) for line in (CORPUS / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    answers = [a for a in answers if a["vocab"] == "labels"]
    long = [{**a, "text": ("Let me think step by step. " + a["text"] + "\n") * (3000 // (len(a["text"]) + 28) + 1)}
            for a in answers[:60]]
    rows = []
    for name, batch in (("corpus labels", answers), ("~3,000-character answers", long)):
        times = {}
        for side, module in (("old", old), ("new", new)):
            for a in batch:
                a["_lang"] = module.language
            times[side] = timed(module.parse_label, batch, vocab, args.repeat)
        rows.append((name, len(batch), times["old"], times["new"]))
    differ = sum(old.parse_label(a["text"], vocab["labels"], aliases=vocab["aliases"][a["lang"]],
                                 lang=old.language(a["lang"]))[0]
                 != new.parse_label(a["text"], vocab["labels"], aliases=vocab["aliases"][a["lang"]],
                                    lang=new.language(a["lang"]))[0] for a in answers)
    print(f"old: {args.old}; best of {args.repeat}\n")
    print("| answers | n | old s / 1,000 | new s / 1,000 | new / old |\n|---|---|---|---|---|")
    for name, n, t_old, t_new in rows:
        print(f"| {name} | {n} | {t_old:.3f} | {t_new:.3f} | {t_new / t_old:.1f}× |")
    print(f"\nlabels that differ between the two on the corpus: {differ} of {len(answers)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

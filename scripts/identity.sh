#!/usr/bin/env bash
# Byte-identity check for refactors: runs a fixed set of small runs of every suite on the embedded
# SmolLM2 (plus a suite file) and prints the SHA-256 of each run's items.jsonl, metrics.json and
# table.md. Run it at two commits and diff the outputs, e.g.
#   git worktree add /tmp/before <commit>
#   PYTHONPATH=/tmp/before/src bash scripts/identity.sh /tmp/id-before > before.txt
#   bash scripts/identity.sh /tmp/id-after > after.txt && diff before.txt after.txt
# The source imported is whatever `python -m lingdiag` finds (PYTHONPATH first). No cache is
# read or written, so each run computes its answers.
set -euo pipefail
out=${1:?usage: identity.sh OUT_DIR}
PY=${PY:-$(dirname "$0")/../.venv/bin/python}
SHARED=${SHARED:-$(cd "$(dirname "$0")/../.." && pwd)/shared/datasets}
EXAMPLES=$(cd "$(dirname "$0")/../examples/suites" && pwd)
mkdir -p "$out"
ld() { "$PY" -m lingdiag "$@" --no-cache > /dev/null; }
M=(--model smollm2-135m)
ld run imperfective "${M[@]}" --dataset builtin --strategy zero-shot,dap,cot -o max_new_tokens_cot=64 --limit 12 --out "$out/imperfective"
ld run imperfective "${M[@]}" --dataset builtin --strategy zero-shot --scoring loglik --limit 12 --out "$out/imperfective-loglik"
ld run explica "${M[@]}" --dataset builtin --limit 6 --out "$out/explica"
ld run cxnli "${M[@]}" --dataset builtin --exp 1,2 --setting zero,three-cxnli --limit 8 --out "$out/cxnli"
ld run minimal-pairs "${M[@]}" --dataset "$SHARED/blimp" --limit 30 --scoring-policy lingdiag,lm-eval --out "$out/blimp"
ld run syntaxgym "${M[@]}" --dataset "$SHARED/syntaxgym" --limit 12 --out "$out/syntaxgym"
ld run "$EXAMPLES/telicity-adverbials.yaml" "${M[@]}" --limit 12 --out "$out/telicity-file"
ld run "$EXAMPLES/agreement-regions.yaml" "${M[@]}" --out "$out/regions-file"
for d in "$out"/*/; do
  for f in items.jsonl metrics.json table.md; do
    [ -f "$d$f" ] && echo "$(basename "$d")/$f $(sha256sum < "$d$f" | cut -c1-16)"
  done
done

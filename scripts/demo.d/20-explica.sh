#!/usr/bin/env bash
# ExpliCa on the embedded SmolLM2: all four tasks, 0/1-shot, greedy and constrained decoding,
# on the project's built-in pairs (illustrative ratings), limited to 12 pairs for time.
set -euo pipefail
LD=.venv/bin/lingdiag
echo "== ExpliCa: demo limit: 12 built-in pairs per condition (the full grid is: lingdiag run explica --model M --dataset official)"
$LD run explica --model smollm2-135m --dataset builtin --limit 12 \
  --task rating,cloze,mc,perplexity --shots 0,1 --decoding greedy,constrained --out runs/demo/explica-builtin

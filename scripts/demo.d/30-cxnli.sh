#!/usr/bin/env bash
# CxNLI on the embedded SmolLM2: Exp 1 and 2, zero-shot and three-shot in-context settings,
# on the project's built-in triples.
set -euo pipefail
LD=.venv/bin/lingdiag
echo "== CxNLI: demo on the built-in triples, settings zero and three-cxnli (all settings: --setting zero,one-cxnli,three-cxnli,one-snli,three-snli)"
$LD run cxnli --model smollm2-135m --dataset builtin --exp 1,2 --setting zero,three-cxnli --limit 30 --out runs/demo/cxnli-builtin

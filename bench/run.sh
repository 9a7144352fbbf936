#!/usr/bin/env bash
# `make bench`: lingdiag against lm-evaluation-harness on the same work, model and machine.
# lm-eval lives in its own venv under bench/.work (gitignored), installed from its own lock
# (bench/constraints-lm-eval.txt, `make lock`), which gives it lingdiag's torch (the CPU build)
# and transformers.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/venv.sh

VENV=bench/.work/venv
install_venv "$VENV" bench/constraints-lm-eval.txt "lm-eval[hf]"

exec .venv/bin/python bench/bench.py --lm-eval-python "$VENV/bin/python" "$@"

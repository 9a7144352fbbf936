#!/usr/bin/env bash
# `make bench`: lingdiag against lm-evaluation-harness on the same work, model and machine.
# lm-eval lives in its own venv under bench/.work (gitignored), installed from its own lock
# (bench/constraints-lm-eval.txt, `make lock`), which gives it lingdiag's torch (the CPU build)
# and transformers.
set -euo pipefail
cd "$(dirname "$0")/.."

LOCK=bench/constraints-lm-eval.txt
WORK=bench/.work
VENV=$WORK/venv
STAMP=$VENV/.installed-$(sha256sum "$LOCK" | cut -c1-16)

if [ ! -f "$STAMP" ]; then
    echo "installing lm-eval from $LOCK into $VENV" >&2
    rm -rf "$VENV"
    mkdir -p "$WORK"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q -c "$LOCK" pip
    "$VENV/bin/pip" install -q -c "$LOCK" torch==2.13.0
    "$VENV/bin/pip" install -q -c "$LOCK" "lm-eval[hf]"
    touch "$STAMP"
fi

exec .venv/bin/python bench/bench.py --lm-eval-python "$VENV/bin/python" "$@"

#!/usr/bin/env bash
# `make bench`: lingdiag against lm-evaluation-harness on the same work, model and machine.
# lm-eval lives in its own venv under bench/.work (gitignored), with torch pinned first so
# pip never pulls a CUDA build, and the same transformers version as lingdiag's venv.
set -euo pipefail
cd "$(dirname "$0")/.."

LMEVAL_VERSION=0.4.13
TORCH_VERSION=2.13.0
WORK=bench/.work
VENV=$WORK/venv
TRANSFORMERS_VERSION=$(.venv/bin/python -c "import transformers; print(transformers.__version__)")
STAMP=$VENV/.installed-lm-eval-$LMEVAL_VERSION-torch-$TORCH_VERSION-transformers-$TRANSFORMERS_VERSION

if [ ! -f "$STAMP" ]; then
    echo "installing lm-eval==$LMEVAL_VERSION into $VENV" >&2
    mkdir -p "$WORK"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q "torch==$TORCH_VERSION"
    "$VENV/bin/pip" install -q "lm-eval[hf]==$LMEVAL_VERSION" "transformers==$TRANSFORMERS_VERSION" "torch==$TORCH_VERSION"
    touch "$STAMP"
fi

exec .venv/bin/python bench/bench.py --lm-eval-python "$VENV/bin/python" "$@"

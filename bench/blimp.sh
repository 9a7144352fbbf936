#!/usr/bin/env bash
# BLiMP side by side: lingdiag against lm-eval's BLiMP task and minicons, same model, threads, machine.
# lm-eval lives in bench/run.sh's venv, installed from its lock (bench/constraints-lm-eval.txt);
# minicons in its own venv under bench/.work, constrained by lingdiag's lock (src/lingdiag/constraints.txt),
# which gives it lingdiag's torch (the CPU build) and transformers.
# `bash bench/blimp.sh --lingdiag-only` installs nothing and times lingdiag alone.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/venv.sh

PYTHON=${PYTHON:-.venv/bin/python}
MINICONS_VERSION=0.3.39

if [[ " $* " == *" --lingdiag-only "* ]]; then
    exec "$PYTHON" bench/blimp.py "$@"
fi
install_venv bench/.work/venv bench/constraints-lm-eval.txt "lm-eval[hf]"
install_venv bench/.work/venv-minicons src/lingdiag/constraints.txt "minicons==$MINICONS_VERSION" "minicons-$MINICONS_VERSION-"
exec "$PYTHON" bench/blimp.py --lm-eval-python bench/.work/venv/bin/python \
    --minicons-python bench/.work/venv-minicons/bin/python "$@"

#!/usr/bin/env bash
# BLiMP side by side: lingdiag against lm-eval's BLiMP task and minicons, same model, threads, machine.
# lm-eval lives in bench/run.sh's venv, installed from its lock (bench/constraints-lm-eval.txt);
# minicons in its own venv under bench/.work, constrained by lingdiag's lock (src/lingdiag/constraints.txt),
# which gives it lingdiag's torch (the CPU build) and transformers.
# `bash bench/blimp.sh --lingdiag-only` installs nothing and times lingdiag alone.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-.venv/bin/python}
WORK=bench/.work
MINICONS_VERSION=0.3.39

if [[ " $* " == *" --lingdiag-only "* ]]; then
    exec "$PYTHON" bench/blimp.py "$@"
fi

LOCK=bench/constraints-lm-eval.txt
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

MLOCK=src/lingdiag/constraints.txt
MVENV=$WORK/venv-minicons
MSTAMP=$MVENV/.installed-minicons-$MINICONS_VERSION-$(sha256sum "$MLOCK" | cut -c1-16)
if [ ! -f "$MSTAMP" ]; then
    echo "installing minicons==$MINICONS_VERSION (constrained by $MLOCK) into $MVENV" >&2
    rm -rf "$MVENV"
    mkdir -p "$WORK"
    python3 -m venv "$MVENV"
    "$MVENV/bin/pip" install -q -c "$MLOCK" pip
    "$MVENV/bin/pip" install -q -c "$MLOCK" torch==2.13.0
    "$MVENV/bin/pip" install -q -c "$MLOCK" "minicons==$MINICONS_VERSION"
    touch "$MSTAMP"
fi

exec "$PYTHON" bench/blimp.py --lm-eval-python "$VENV/bin/python" --minicons-python "$MVENV/bin/python" "$@"

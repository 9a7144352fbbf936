#!/usr/bin/env bash
# `make demo`: what the embedded SmolLM2-135M can tell a researcher, in under 10 minutes on 2 CPU
# cores. Each step says what it runs and how long it took (items/s for each condition are in the
# progress lines). Data come from a local mirror when there is one (../shared/datasets, laid out
# as `lingdiag data fetch --from` expects), else from their pinned public URLs.
set -euo pipefail
cd "$(dirname "$0")/.."
LD=.venv/bin/lingdiag
SHARED=../shared/datasets
OUT=runs/demo

step() { echo; echo "== $1"; STEP_START=$SECONDS; }
took() { echo "-- took $((SECONDS - STEP_START)) s"; }
fetch() {  # fetch SUITE [--only NAMES]: from the local mirror when present
  if [ -d "$SHARED" ]; then $LD data fetch "$@" --from "$SHARED"; else $LD data fetch "$@"; fi
}

step "Embedded model: SmolLM2-135M-Instruct, converted once from its GGUF (skipped when already done)"
$LD models --convert smollm2-135m
took

step "ImperfectiveNLI, main job (configs/demo-imperfective.yaml): zero-shot and dap strategies, each answered by generation and by label log-likelihood, 200 built-in items"
$LD run imperfective --config configs/demo-imperfective.yaml --dataset builtin --out $OUT/imperfective-builtin
took

step "Competence beside performance: the label the model finds likeliest against the label it writes, per item"
$LD competence $OUT/imperfective-builtin || true

step "ImperfectiveNLI, the paper's CoT and counterfactual strategies on 8 items (configs/demo-imperfective-reasoning.yaml)"
$LD run imperfective --config configs/demo-imperfective-reasoning.yaml --dataset builtin --out $OUT/imperfective-reasoning
took

step "ImperfectiveNLI on the official data (the authors' 400-item file, SHA-256 checked), main job again"
if fetch imperfective; then
  $LD run imperfective --config configs/demo-imperfective.yaml --dataset official --out $OUT/imperfective-official
else
  echo "official ImperfectiveNLI data not available (see the error above; offline: --from DIR): skipped"
fi
took

step "BLiMP minimal pairs, one paradigm (determiner-noun agreement), 200 pairs, beside human agreement and the paper's models"
if fetch blimp --only determiner_noun_agreement_2,human_validation_summary,models_summary; then
  $LD run minimal-pairs --model smollm2-135m --dataset blimp --limit 200 --out $OUT/blimp
else
  echo "BLiMP files not available (see the error above; offline: --from DIR): skipped"
fi
took

for extra in scripts/demo.d/*.sh; do
  [ -e "$extra" ] || continue
  STEP_START=$SECONDS
  bash "$extra"
  took
done

step "Report"
$LD report $OUT/*/ --html $OUT/report.html > /dev/null && echo "HTML report (every demo run): $OUT/report.html"
echo "run directories: $(ls -d $OUT/*/ | tr '\n' ' ')"
echo "demo total: $SECONDS s"

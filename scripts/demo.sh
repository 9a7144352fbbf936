#!/usr/bin/env bash
# The main job (`make demo`): ImperfectiveNLI on the embedded SmolLM2, built-in data and,
# when available, the official data; then the other suites' demo runs.
set -euo pipefail
cd "$(dirname "$0")/.."
LD=.venv/bin/lingdiag
SHARED=../shared/datasets

echo "== ImperfectiveNLI: demo caps (see configs/demo-imperfective.yaml): 100 items per strategy, CoT/counterfactual capped at 160 new tokens"
# Large batches: finished answers leave the batch, so many rows decode at once (≈3 GB RAM).
$LD run imperfective --config configs/demo-imperfective.yaml --batch-tokens 65536 --dataset builtin --out runs/demo/imperfective-builtin

# The official file is fetched from its pinned public URL; a local mirror (the reference
# copy beside this repository) is used first when present, since this machine may be offline.
if [ -d "$SHARED/imperfective_nli" ]; then
  $LD data fetch imperfective --from "$SHARED" || true
else
  $LD data fetch imperfective || true
fi
if $LD data stats imperfective --dataset official --json >/dev/null 2>&1; then
  $LD run imperfective --config configs/demo-imperfective.yaml --batch-tokens 65536 --dataset official --out runs/demo/imperfective-official
else
  echo "official ImperfectiveNLI data not available (lingdiag data fetch imperfective failed): skipped"
fi

for extra in scripts/demo.d/*.sh; do
  [ -e "$extra" ] && bash "$extra"
done

$LD report runs/demo/*/ --html runs/demo/report.html > /dev/null && echo "HTML report (every demo run): runs/demo/report.html"
echo "run directories: $(ls -d runs/demo/*/ | tr '\n' ' ')"

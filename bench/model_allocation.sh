#!/usr/bin/env bash
# The model job allocation benchmark: tune-bench-model on ResNet-50 (the task scheduler's
# gradient policy against round robin), then the median curves as an SVG plot (gnuplot) under
# bench/convergence/. Measurements are kept in out/model-table.tsv, so a rerun measures only
# new configs.
# Usage: bench/model_allocation.sh [extra tune-bench-model options]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TUNE_BUILD_DIR:-build}
unset OPENBLAS_CORETYPE
model=${TUNE_BENCH_MODEL:-resnet50}
mkdir -p out bench/convergence
"$build/bin/tune-bench-model" --model "$model" --budget 384 --seeds 3 --reference 64 \
  --report-at 24,36,48,64,96,128,192,288,384 --levels 95,90,97,98 --unmeasured default \
  --table out/model-table.tsv --curves out/model-curves.tsv "$@" | tee out/model-bench.md
gnuplot -c bench/plot_model_allocation.gp out/model-curves.tsv "$model" \
  "bench/convergence/${model}_allocation.svg"
ls bench/convergence

#!/usr/bin/env bash
# The search convergence benchmark: tune-bench-search over the GEMM bench workloads of
# gemm.cpu.blocked, then one SVG plot per workload (gnuplot) under bench/convergence/.
# Measurements are kept in out/search-table.tsv, so a rerun measures only new configs.
# Usage: bench/search_convergence.sh [extra tune-bench-search options]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TUNE_BUILD_DIR:-build}
unset OPENBLAS_CORETYPE
workloads=(gemm:M=128,N=768,K=768 gemm:M=197,N=768,K=768 gemm:M=333,N=777,K=555)
mkdir -p out bench/convergence
"$build/bin/tune-bench-search" --template gemm.cpu.blocked --workload "${workloads[@]}" \
  --trials 64 --random-trials 192 --seeds 5 --reference 192 --table out/search-table.tsv \
  --curves out/search-curves.tsv "$@" | tee out/search-bench.md
for w in "${workloads[@]}"; do
  name=$(echo "$w" | tr ':,=' '___')
  gnuplot -c bench/plot_convergence.gp out/search-curves.tsv "$w" "bench/convergence/$name.svg"
done
ls bench/convergence

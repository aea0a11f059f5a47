#!/usr/bin/env bash
# Repeatability of a job's reported best: the same job (workload, seed, trials) runs RUNS times,
# each on a fresh tuning log with one local worker, and the table compares what each reported
# as best: the finalists' re-measured figure (Job.best, on which "best" rests) and, for
# contrast, the fastest single search trial (what a job reported before finalists). Uses an
# existing build (scripts/build.sh).
#
# Usage: bench/finalists_repeatability.sh [TRIALS] [RUNS] [WORKLOAD...]
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-32}
runs=${2:-2}
shift 2 || true
workloads=("$@")
if [ ${#workloads[@]} -eq 0 ]; then
  workloads=(gemm:M=128,N=768,K=768 gemm:M=197,N=768,K=768
             conv2d:N=1,C=64,H=56,W=56,K=64,R=1,S=1,stride=1,pad=0
             conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1)
fi
unset OPENBLAS_CORETYPE
bin=${TUNE_BUILD_DIR:-build}/bin
target='llvm -mcpu=native -threads=1'
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

echo "| workload | run | re-measured best (ms) | its config | fastest search trial (ms) |"
echo "|---|---|---|---|---|"
for w in "${workloads[@]}"; do
  for run in $(seq 1 "$runs"); do
    dir=$scratch/$run-$(echo "$w" | tr ':,=' '___')
    mkdir -p "$dir"
    "$bin/tune-daemon" --listen 127.0.0.1:0 --port-file "$dir/port" --db "$dir/tuning.db" \
      --local-workers 1 --log-level error &
    daemon=$!
    for _ in $(seq 1 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
    "$bin/tune-client" --daemon "127.0.0.1:$(cat "$dir/port")" submit --workload "$w" \
      --target "$target" --trials "$trials" --seed 7 --wait >/dev/null 2>&1
    kill "$daemon"; wait "$daemon" 2>/dev/null || true
    sqlite3 -separator ' | ' "$dir/tuning.db" "
      SELECT '$w', $run, printf('%.4f', b.median_secs * 1e3), c.text,
        (SELECT printf('%.4f', MIN(median_secs) * 1e3) FROM records WHERE final = 0)
      FROM best_configs b JOIN records r ON r.id = b.record_id JOIN configs c ON c.id = r.config_id;" |
      sed 's/^/| /; s/$/ |/'
  done
done

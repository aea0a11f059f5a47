#!/usr/bin/env bash
# Service throughput: trials per second of one tuning job with 1 and with 2 local workers, and
# the per-trial overhead (wall time per trial minus the time the kernel itself ran: warm-up plus
# every timed call). Uses an existing build (scripts/build.sh) and a scratch directory.
#
# Usage: bench/service_throughput.sh [WORKLOAD] [TRIALS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
workload=${1:-gemm:M=512,N=512,K=512}
trials=${2:-32}
runs=${3:-3}
bin=${TUNE_BUILD_DIR:-build}/bin
target='llvm -mcpu=native -threads=1'
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

echo "| workers | run | trials | wall s | trials/s | kernel s per trial | overhead s per trial |"
echo "|---|---|---|---|---|---|---|"
for workers in 1 2; do
  for run in $(seq 1 "$runs"); do
    dir=$scratch/w$workers-r$run
    mkdir -p "$dir"
    "$bin/tune-daemon" --listen 127.0.0.1:0 --port-file "$dir/port" --db "$dir/tuning.db" \
      --local-workers "$workers" --log-level error &
    daemon=$!
    for _ in $(seq 1 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
    client=("$bin/tune-client" --daemon "127.0.0.1:$(cat "$dir/port")")
    for _ in $(seq 1 100); do
      [ "$("${client[@]}" --json workers | grep -o '"device_key"' | wc -l)" -ge "$workers" ] && break
      sleep 0.1
    done
    start=$(date +%s.%N)
    "${client[@]}" submit --workload "$workload" --target "$target" --trials "$trials" \
      --seed "$run" --wait >/dev/null 2>&1
    end=$(date +%s.%N)
    kill "$daemon"; wait "$daemon" 2>/dev/null || true
    # Kernel time of a trial: the warm-up call plus number x every round's mean time per call.
    kernel=$(sqlite3 "$dir/tuning.db" "SELECT AVG(k) FROM (SELECT r.number * SUM(j.value) +
      MIN(j.value) AS k FROM records r, json_each(r.round_secs) j GROUP BY r.id);")
    awk -v w="$workers" -v r="$run" -v n="$trials" -v s="$start" -v e="$end" -v k="$kernel" \
      'BEGIN { wall = e - s; printf "| %d | %d | %d | %.2f | %.2f | %.4f | %.4f |\n",
               w, r, n, wall, n / wall, k, wall * w / n - k }'
  done
done
echo
echo "overhead per trial = wall x workers / trials - kernel time per trial (per worker slot)"

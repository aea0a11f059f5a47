#!/usr/bin/env bash
# The main job: installs what running tune needs and builds only the five programs it runs (no
# test tools, no tests: scripts/build.sh --programs), then runs a local tuning session on the
# embedded defaults: tune-daemon with an SQLite tuning log and two local CPU workers on loopback
# tunes gemm 512^3 and a ResNet-50 conv2d, shows each job's progress, prints each best config with
# its GFLOPS next to OpenBLAS's and oneDNN's for the same shape (measured in the same run), and
# finally builds a kernel library from the log with tune-compile.
#
# Environment: TUNE_DEMO_DIR (default out/demo), TUNE_DEMO_TRIALS (default 32 per workload).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh --programs "tune-daemon tune-server tune-client tune-bench tune-compile"

build=${TUNE_BUILD_DIR:-build}
dir=${TUNE_DEMO_DIR:-out/demo}
trials=${TUNE_DEMO_TRIALS:-32}
target='llvm -mcpu=native -threads=1'
workloads=('gemm:M=512,N=512,K=512' 'conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1')
mkdir -p "$dir"
rm -f "$dir/port"

echo "== tune-daemon with 2 local workers, tuning log $dir/tuning.db"
"$build/bin/tune-daemon" --listen 127.0.0.1:0 --port-file "$dir/port" --db "$dir/tuning.db" \
  --local-workers 2 --log-level warn &
daemon=$!
trap 'kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  [ -s "$dir/port" ] && break
  kill -0 "$daemon" 2>/dev/null || { echo "tune-daemon exited early" >&2; exit 1; }
  sleep 0.1
done
client=("$build/bin/tune-client" --daemon "127.0.0.1:$(cat "$dir/port")")
for _ in $(seq 1 100); do
  [ "$("${client[@]}" --json workers 2>/dev/null | grep -o '"device_key"' | wc -l)" -ge 2 ] && break
  sleep 0.1
done
"${client[@]}" workers

for w in "${workloads[@]}"; do
  echo
  echo "== tuning $w ($trials trials)"
  "${client[@]}" submit --workload "$w" --target "$target" --trials "$trials" --wait
done

echo
echo "== best configs from the tuning log, next to OpenBLAS and oneDNN (1 thread), measured in one run"
"$build/bin/tune-bench" --db "$dir/tuning.db" --target "$target" --runs 3 \
  "${workloads[@]/#/--workload=}"

echo
echo "== tune-compile: a kernel library from the tuning log"
args=()
for w in "${workloads[@]}"; do args+=(--workload "$w"); done
"$build/bin/tune-compile" --db "$dir/tuning.db" --target "$target" "${args[@]}" \
  --out "$dir/libkernels.so" --header "$dir/kernels.h"
ls -l "$dir/libkernels.so" "$dir/kernels.h"
grep -E '^int ' "$dir/kernels.h"

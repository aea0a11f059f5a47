#!/usr/bin/env bash
# One device call that serves both halves of a lent GPU host at once, from one bundle
# (deploy/bundle/make-bundle.sh with TUNE_BUNDLE_CPU_LIBS=1 and the programs of both sessions:
# tune-daemon tune-server tune-client tune-bench-gpu-peak tune-bench tune-bench-cpu-peak):
#   bash scripts/device-session.sh BUNDLE.tar.xz OUT_DIR     (from the repository root)
# scripts/gpu-session.sh runs on CPUs 0 .. FIRST-1 (its daemon, builders and worker; the GPU's
# timings are device time) into OUT_DIR/gpu, and scripts/cpu-matrix-session.sh pinned from CPU
# FIRST on (TUNE_CPU_PIN=1, TUNE_CPU_FIRST=FIRST: its benches one core each) into OUT_DIR/cpu.
# The CPU benches share the L3 and memory with the GPU session's builds: say so beside their
# numbers. Each session reads its own TUNE_GPU_* or TUNE_CPU_* variables; the CPU session is
# skipped when TUNE_CPU_TEMPLATES is unset.
#
# Environment: TUNE_DEVICE_FIRST_CPU (8).
set -uo pipefail
bundle_tar=${1:?usage: device-session.sh BUNDLE.tar.xz OUT_DIR}
out=${2:?usage: device-session.sh BUNDLE.tar.xz OUT_DIR}
repo=$(cd "$(dirname "$0")/.." && pwd)
first=${TUNE_DEVICE_FIRST_CPU:-8}
mkdir -p "$out/gpu" "$out/cpu"
cpu_pid=
if [ -n "${TUNE_CPU_TEMPLATES:-}" ]; then
  TUNE_CPU_PIN=1 TUNE_CPU_FIRST=$first bash "$repo/scripts/cpu-matrix-session.sh" \
    "$bundle_tar" "$out/cpu" >"$out/cpu/driver.log" 2>&1 &
  cpu_pid=$!
fi
taskset -c "0-$((first - 1))" bash "$repo/scripts/gpu-session.sh" "$bundle_tar" "$out/gpu" \
  >"$out/gpu/driver.log" 2>&1
[ -z "$cpu_pid" ] || wait "$cpu_pid"
tail -n 30 "$out/gpu/driver.log"
[ -z "$cpu_pid" ] || tail -n 40 "$out/cpu/driver.log"

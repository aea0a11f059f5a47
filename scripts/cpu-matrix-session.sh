#!/usr/bin/env bash
# One session of the CPU's matrix engines on a lent host from a bundle (deploy/bundle/
# make-bundle.sh with TUNE_BUNDLE_CPU_LIBS=1, TUNE_BUNDLE_TEST_LABEL=slow and the programs
# tune-server tune-bench tune-bench-cpu-peak codegen_template_sweep_test, and optionally
# common_test), in a bounded time:
#   bash scripts/cpu-matrix-session.sh BUNDLE.tar.xz OUT_DIR     (from the repository root)
# 1. unpacks the bundle into /tmp; 2. OUT_DIR/machine.txt: lscpu and the kernel's AMX grant;
# 3. the matrix templates' tests (gemm.cpu.amx, conv2d.cpu.amx, gemm.cpu.dot, conv2d.cpu.dot:
# their kernels checked against the reference on this CPU; gtest XML in OUT_DIR/tests.xml), and
# where the bundle has common_test, its host CPU and typed reference tests (the AMX features this
# host's Linux grants; OUT_DIR/common-tests.txt); 4. tune-bench of each template named in
# TUNE_CPU_TEMPLATES (gemm.cpu.amx gemm.cpu.dot) on the rows of its op (gemm, conv2d) in
# TUNE_CPU_WORKLOADS (files, space-separated, default bench/cpu_matrix_smoke.txt; for the conv2d
# templates bench/cpu_conv_smoke.txt), against oneDNN's matmul or convolution of the same types
# in the same process (OUT_DIR/bench-<template>.md). A name may carry its own files after an @,
# comma-separated: "gemm.cpu.amx@bench/a.txt,bench/b.txt gemm.cpu.dot@bench/c.txt".
# Every step runs even when an earlier one failed.
#
# Environment (defaults): TUNE_CPU_TRIALS (24) trials per workload; TUNE_CPU_RUNS (5);
# TUNE_CPU_THREADS (1); TUNE_CPU_TESTS_FILTER
# (GemmCpuAmx*:Conv2dCpuAmx*:GemmCpuDot*:Conv2dCpuDot*) and
# TUNE_CPU_TESTS_S (240), the seconds the tests may take;
# TUNE_CPU_SESSION_S (480): seconds for the whole script, every step stopped at that deadline
# (keep it below the device call's limit, so that the results can still be packed).
set -uo pipefail
bundle_tar=${1:?usage: cpu-matrix-session.sh BUNDLE.tar.xz OUT_DIR}
out=${2:?usage: cpu-matrix-session.sh BUNDLE.tar.xz OUT_DIR}
repo=$(cd "$(dirname "$0")/.." && pwd)
trials=${TUNE_CPU_TRIALS:-24}
runs=${TUNE_CPU_RUNS:-5}
threads=${TUNE_CPU_THREADS:-1}
filter=${TUNE_CPU_TESTS_FILTER:-GemmCpuAmx*:Conv2dCpuAmx*:GemmCpuDot*:Conv2dCpuDot*}
tests_s=${TUNE_CPU_TESTS_S:-240}
workloads=${TUNE_CPU_WORKLOADS:-$repo/bench/cpu_matrix_smoke.txt}
templates=${TUNE_CPU_TEMPLATES:-gemm.cpu.amx gemm.cpu.dot}
mkdir -p "$out"
deadline=$((SECONDS + ${TUNE_CPU_SESSION_S:-480}))
failed=()
step() {  # step NAME COMMAND...: runs it until the deadline, notes a failure
  local name=$1 left=$((deadline - SECONDS))
  shift
  echo "== $name: $*"
  if [ "$left" -le 0 ]; then
    failed+=("$name (no time left)")
    return
  fi
  timeout "$left" "$@" || failed+=("$name")
}
root=/tmp/tune-cpu-session
rm -rf "$root" && mkdir -p "$root"
step unpack tar -C "$root" -xJf "$bundle_tar"
bundle=$root/tune-bundle
export PATH=$bundle/bin:$PATH
{
  lscpu
  grep -o 'amx[a-z0-9_]*' /proc/cpuinfo | sort -u
} >"$out/machine.txt" 2>&1
step peaks "$bundle/bin/tune-bench-cpu-peak" --threads 1 >"$out/peaks.txt" 2>&1
step tests timeout "$tests_s" "$bundle/bin/codegen_template_sweep_test" --gtest_filter="$filter" \
  --gtest_output="xml:$out/tests.xml" >"$out/tests.txt" 2>&1
if [ -x "$bundle/bin/common_test" ]; then
  step common-tests "$bundle/bin/common_test" --gtest_filter='HostCpuTest.*:TypedReferenceTest.*' \
    >"$out/common-tests.txt" 2>&1
fi
for entry in $templates; do
  tpl=${entry%%@*}
  files=$workloads
  [ "$tpl" = "$entry" ] || files=${entry#*@}
  list=()
  for file in ${files//,/ }; do
    while IFS= read -r line; do
      [ -z "$line" ] || [ "${line:0:1}" = "#" ] || [ "${line%%:*}" != "${tpl%%.*}" ] ||
        list+=("$line")
    done <"$file"
  done
  [ ${#list[@]} -gt 0 ] || continue
  step "bench-$tpl" "$bundle/bin/tune-bench" --target "llvm -mcpu=native -threads=$threads" \
    --template "$tpl" --trials "$trials" --runs "$runs" --worker-binary "$bundle/bin/tune-server" \
    --workload "${list[@]}" \
    >"$out/bench-$tpl.md" 2>"$out/bench-$tpl.log"
done
echo "failed steps: ${failed[*]:-none}"
tail -n 3 "$out/tests.txt"
[ -f "$out/common-tests.txt" ] && tail -n 3 "$out/common-tests.txt"
for entry in $templates; do
  [ -f "$out/bench-${entry%%@*}.md" ] && grep '^| `' "$out/bench-${entry%%@*}.md"
done

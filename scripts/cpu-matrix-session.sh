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
# comma-separated: "gemm.cpu.amx@bench/a.txt,bench/b.txt gemm.cpu.dot@bench/c.txt", and its own
# trials after a %: "gemm.cpu.blocked@bench/f32.txt%64". Every step runs even when an earlier one
# failed. With TUNE_CPU_PIN=1 the tests (CPUs 0-1) and the benches run at once, bench i pinned to
# CPU 2 + i (single-threaded benches on a host whose vCPUs are cores: each has its own core and
# matrix unit; they share the L3 and memory), each into OUT_DIR/bench-<i>-<template>.md.
# TUNE_CPU_FIRST (0) moves those CPUs up (tests on FIRST and FIRST + 1, bench i on FIRST + 2 + i),
# so that a GPU session can run beside the benches on the CPUs below FIRST.
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
pin=${TUNE_CPU_PIN:-0}
first=${TUNE_CPU_FIRST:-0}
tests_s=${TUNE_CPU_TESTS_S:-240}
workloads=${TUNE_CPU_WORKLOADS:-$repo/bench/cpu_matrix_smoke.txt}
templates=${TUNE_CPU_TEMPLATES:-gemm.cpu.amx gemm.cpu.dot}
mkdir -p "$out"
deadline=$((SECONDS + ${TUNE_CPU_SESSION_S:-480}))
failures=$out/failed-steps.txt
: >"$failures"
step() {  # step NAME COMMAND...: runs it until the deadline, notes a failure
  local name=$1 left=$((deadline - SECONDS))
  shift
  echo "== $name: $*"
  if [ "$left" -le 0 ]; then
    echo "$name (no time left)" >>"$failures"
    return
  fi
  timeout "$left" "$@" || echo "$name" >>"$failures"
}
on() {  # on CPUS: the words that run a command on those CPUs where TUNE_CPU_PIN=1 (none else)
  if [ "$pin" = 1 ]; then echo "taskset -c $1"; fi
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
tests() {
  if [ ! -x "$bundle/bin/codegen_template_sweep_test" ]; then
    echo "tests: the bundle has no codegen_template_sweep_test" >"$out/tests.txt"
    return
  fi
  step tests $(on $first-$((first + 1))) timeout "$tests_s" "$bundle/bin/codegen_template_sweep_test" \
    --gtest_filter="$filter" --gtest_output="xml:$out/tests.xml" >"$out/tests.txt" 2>&1
  if [ -x "$bundle/bin/common_test" ]; then
    step common-tests $(on $first-$((first + 1))) "$bundle/bin/common_test" \
      --gtest_filter='HostCpuTest.*:TypedReferenceTest.*' >"$out/common-tests.txt" 2>&1
  fi
}
if [ "$pin" = 1 ]; then tests & else tests; fi
index=0
for entry in $templates; do
  entry_trials=$trials
  if [ "${entry%\%*}" != "$entry" ]; then
    entry_trials=${entry##*%}
    entry=${entry%\%*}
  fi
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
  name=bench-$index-$tpl
  run_bench() {
    step "$name" $(on $((first + 2 + index))) "$bundle/bin/tune-bench" \
      --target "llvm -mcpu=native -threads=$threads" --template "$tpl" --trials "$entry_trials" \
      --runs "$runs" --worker-binary "$bundle/bin/tune-server" --workload "${list[@]}" \
      >"$out/$name.md" 2>"$out/$name.log"
  }
  if [ "$pin" = 1 ]; then run_bench & else run_bench; fi
  index=$((index + 1))
done
wait
echo "failed steps: $(tr '\n' ' ' <"$failures")"
tail -n 3 "$out/tests.txt"
[ -f "$out/common-tests.txt" ] && tail -n 3 "$out/common-tests.txt"
cat "$out"/bench-*.md 2>/dev/null | grep '^| `'

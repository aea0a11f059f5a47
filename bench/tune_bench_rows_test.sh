#!/usr/bin/env bash
# tune-bench over a suite with a row it cannot measure (no template of the name builds it): the
# other rows are still measured and printed, the row is named under "Not measured", and the exit
# status is 1.
#   bash bench/tune_bench_rows_test.sh TUNE_BENCH
set -uo pipefail
bench=${1:?usage: tune_bench_rows_test.sh TUNE_BENCH}
out=$("$bench" --target "llvm -mcpu=native -threads=1" --template gemm.cpu.blocked --trials 1 \
  --runs 1 --min-repeat-ms 5 --workload "gemm:M=16,N=16,K=16,dtype=bf16" "gemm:M=16,N=16,K=16" \
  2>/dev/null)
rc=$?
expect() {
  grep -qF -- "$1" <<<"$out" || { echo "missing: $1"; echo "$out"; exit 1; }
}
[ "$rc" = 1 ] || { echo "exit status $rc, want 1"; echo "$out"; exit 1; }
expect '| `gemm:M=16,N=16,K=16` |'
expect 'Not measured'
expect '- `gemm:M=16,N=16,K=16,dtype=bf16`'
if grep -qF -- '| `gemm:M=16,N=16,K=16,dtype=bf16` |' <<<"$out"; then
  echo "the row that could not be measured has a table row"; echo "$out"; exit 1
fi

#!/usr/bin/env bash
# On the GPU host: times every kernel that build.sh built, and cuBLAS on each GEMM shape, in
# ROUNDS interleaved rounds (medians of REPS reps each); with NCU=1 also profiles one call of
# each with Nsight Compute (issue rate, warp stall reasons, occupancy, bank conflicts).
#   bash bundle/probe/run.sh OUT_DIR       (ROUNDS=3 REPS=5 NCU=0)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUT_DIR}
mkdir -p "$out"
rounds=${ROUNDS:-3}
reps=${REPS:-5}
blas_dir=$(dirname "$(find / -name 'libcublas.so.1[23]' -print -quit 2>/dev/null)")
export LD_LIBRARY_PATH=$blas_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timer=$here/probe-timer
# "M N K" of a gemm workload text.
dims() { sed -E 's/^gemm:M=([0-9]+),N=([0-9]+),K=([0-9]+).*/\1 \2 \3/' <<< "$1"; }
shapes=$(while read -r _ w _; do dims "$w"; done < "$here/list.txt" | sort -u)
for round in $(seq "$rounds"); do
  while read -r name workload _; do
    "$timer" kernel "$here/$name.so" "$name" $(dims "$workload") "$reps"
  done < "$here/list.txt"
  while read -r m n k; do "$timer" cublas "$m" "$n" "$k" "$reps"; done <<< "$shapes"
done | tee "$out/times.txt"
# Median over rounds, per kernel.
awk '{t[$1" "$2] = t[$1" "$2] " " $3} END {for (k in t) print k ":" t[k]}' "$out/times.txt" |
  sort | tee "$out/summary.txt"
if [ "${NCU:-0}" = 1 ]; then
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  metrics="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,sm__warps_active.avg.per_cycle_active,launch__registers_per_thread,launch__grid_size,launch__block_size"
  while read -r name workload _; do
    timeout 120 "$ncu" --metrics "$metrics" -k "regex:$name" -c 1 \
      "$timer" kernel "$here/$name.so" "$name" $(dims "$workload") 0 > "$out/ncu_$name.txt" 2>&1
  done < "$here/list.txt"
  while read -r m n k; do
    # The first launches of a fresh cuBLAS handle can be set-up kernels: profile the third call.
    timeout 120 "$ncu" --metrics "$metrics" -s 2 -c 1 "$timer" cublas "$m" "$n" "$k" 1 \
      > "$out/ncu_cublas_${m}x${n}x${k}.txt" 2>&1
  done <<< "$shapes"
fi

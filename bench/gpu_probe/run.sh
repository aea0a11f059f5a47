#!/usr/bin/env bash
# On the GPU host: times every kernel that build.sh built, and cuBLAS on each GEMM shape, in
# ROUNDS interleaved rounds (medians of REPS reps each); with NCU=1 also profiles one call of
# each with Nsight Compute (speed of light of the SM, tensor pipes, L1, L2 and DRAM; issue rate,
# warp stall reasons, occupancy, bank conflicts).
#   bash bundle/probe/run.sh OUT_DIR       (ROUNDS=3 REPS=5 NCU=0 NCU_KERNELS=.)
# NCU_KERNELS: a regular expression (grep -E) of the kernel names to profile; cuBLAS is profiled
# on every shape.
# Workloads with dtype=bf16 and layout=NT run as bf16 products (probe_timer.c's `bf16nt`); all
# others as f32 NN.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUT_DIR}
mkdir -p "$out"
rounds=${ROUNDS:-3}
reps=${REPS:-5}
blas_dir=$(dirname "$(find / -name 'libcublas.so.1[23]' -print -quit 2>/dev/null)")
export LD_LIBRARY_PATH=$blas_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timer=$here/probe-timer
# "M N K [bf16nt]" of a gemm workload text, on one line.
dims() {
  local mode=
  if [[ $1 == *dtype=bf16* && $1 == *layout=NT* ]]; then mode=bf16nt; fi
  echo "$(sed -E 's/^gemm:M=([0-9]+),N=([0-9]+),K=([0-9]+).*/\1 \2 \3/' <<< "$1") $mode"
}
# "M N K REPS [MODE]": the timer's arguments after the kernel or "cublas".
args() {
  local d
  d=($(dims "$1"))
  echo "${d[0]} ${d[1]} ${d[2]} $2 ${d[3]:-}"
}
shapes=$(while read -r _ w _; do dims "$w"; done < "$here/list.txt" | sort -u)
for round in $(seq "$rounds"); do
  while read -r name workload _; do
    "$timer" kernel "$here/$name.so" "$name" $(args "$workload" "$reps")
  done < "$here/list.txt"
  while read -r m n k mode; do "$timer" cublas "$m" "$n" "$k" "$reps" $mode; done <<< "$shapes"
done | tee "$out/times.txt"
# Median over rounds, per kernel.
awk '{t[$1" "$2] = t[$1" "$2] " " $3} END {for (k in t) print k ":" t[k]}' "$out/times.txt" |
  sort | tee "$out/summary.txt"
if [ "${NCU:-0}" = 1 ]; then
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  # METHOD.md: leave the clocks as they are.
  profile=("$ncu" --clock-control none --section SpeedOfLight --section LaunchStats
           --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats
           --metrics "regex:sm__pipe_tensor_op_.*cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,lts__t_sectors_srcunit_tex.sum,lts__t_bytes.sum.per_second")
  while read -r name workload _; do
    grep -qE "${NCU_KERNELS:-.}" <<< "$name" || continue
    timeout 120 "${profile[@]}" -k "regex:^$name\$" -c 1 \
      "$timer" kernel "$here/$name.so" "$name" $(args "$workload" 0) > "$out/ncu_$name.txt" 2>&1
  done < "$here/list.txt"
  while read -r m n k mode; do
    # The first launches of a fresh cuBLAS handle can be set-up kernels: profile the third call.
    timeout 120 "${profile[@]}" -s 2 -c 1 "$timer" cublas "$m" "$n" "$k" 3 $mode \
      > "$out/ncu_cublas_${m}x${n}x${k}${mode:+_$mode}.txt" 2>&1
  done <<< "$shapes"
fi

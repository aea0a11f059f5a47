#!/usr/bin/env bash
# tune-bench-gpu-peak's kernels assemble with ptxas for sm_80 and sm_90 (fp8 from sm_89 only;
# the wgmma kernels, written for sm_90 alone, for sm_90a);
# skipped (exit 77) where ptxas is not installed. Run by ctest with the program's path.
set -euo pipefail
peak=${1:?usage: gpu_matrix_peak_test.sh path/to/tune-bench-gpu-peak}
ptxas=/usr/local/cuda/bin/ptxas
[ -x "$ptxas" ] || { echo "skipped: $ptxas is not installed"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for sm in 80 90; do
  mkdir -p "$dir/$sm"
  "$peak" --ptx-dir "$dir/$sm" --sm "$sm"
  for ptx in "$dir/$sm"/*.ptx; do
    arch=sm_$sm
    case $ptx in *.wgmma.ptx) arch=sm_${sm}a ;; esac
    "$ptxas" -arch=$arch -o /dev/null "$ptx" || { echo "ptxas $arch failed on $(basename "$ptx")"; exit 1; }
  done
done
[ -f "$dir/90/fp8e4m3.ptx" ] && [ ! -f "$dir/80/fp8e4m3.ptx" ] || { echo "fp8 kernel on the wrong archs"; exit 1; }
[ -f "$dir/90/bf16.wgmma.ptx" ] && [ ! -f "$dir/80/bf16.wgmma.ptx" ] || { echo "wgmma kernel on the wrong archs"; exit 1; }
echo "gpu_matrix_peak_test: OK ($(ls "$dir/90" | wc -l) kernels for sm_90, $(ls "$dir/80" | wc -l) for sm_80)"

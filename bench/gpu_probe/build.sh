#!/usr/bin/env bash
# Builds the GPU probe on this (GPU-less) machine: every kernel of LIST as a tune-compile'd
# library and the probe timer, into bundle/probe/ (git-ignored: carry it to the GPU host).
#   bash bench/gpu_probe/build.sh LIST [ARCH]      (from the repository root, after scripts/build.sh)
# LIST: one kernel per line, "NAME WORKLOAD TEMPLATE CONFIG" (CONFIG: the JSON config without
# spaces; '#' starts a comment), e.g.
#   g1000_pipe gemm:M=1000,N=1000,K=1000 gemm.gpu.tiled {"bk":8,"bm":128,"bn":64,...}
set -euo pipefail
cd "$(dirname "$0")/../.."
list=${1:?usage: build.sh LIST [ARCH]}
arch=${2:-sm_90}
out=bundle/probe
rm -rf "$out"
mkdir -p "$out"
cp build/lib/libtune_gpurt.so "$out/"
cp build/bin/tune-gpu-probe-timer "$out/probe-timer"
grep -v '^\s*\(#\|$\)' "$list" > "$out/list.txt"
while read -r name workload template config; do
  build/bin/tune-compile --target "cuda -arch=$arch" --workload "$workload" --template "$template" \
    --config "$config" --name "$name" --out "$out/$name.so" --header "$out/$name.h" \
    --log-level warn
done < "$out/list.txt"
cp bench/gpu_probe/run.sh "$out/"
echo "build.sh: $(wc -l < "$out/list.txt") kernels in $out; on the GPU host: bash $out/run.sh \$OUT"

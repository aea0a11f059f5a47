#!/usr/bin/env bash
# The shape-range bench (bench/range_dispatch.py: a range's one entry point against kernels tuned
# for each exact size) on a lent host, from a bundle (deploy/bundle/make-bundle.sh with the
# programs tune-daemon tune-server tune-client tune-compile, which bring tune-ld-lld,
# libtune_range.so and libtune_gpurt.so), in a bounded time:
#   bash scripts/range-bench-session.sh BUNDLE.tar.xz TIMING_BINARY OUT_DIR [OTHER_RUNTIME]
# (from the repository root). TIMING_BINARY is bench/range_timing.c built beforehand
# (cc -O2 -std=c11 bench/range_timing.c -ldl). OTHER_RUNTIME, a libtune_range.so of another
# version, is timed beside the bundle's (--compare-runtime). Writes OUT_DIR/machine.txt (lscpu),
# OUT_DIR/range.txt (the bench with --explain) and the range's generated header.
# Environment (defaults): TUNE_RANGE_ARGS (none): more arguments of the bench (--range,
# --trials-per-size, --samples); TUNE_RANGE_SESSION_S (520): seconds the bench may take.
set -uo pipefail
bundle_tar=${1:?usage: range-bench-session.sh BUNDLE.tar.xz TIMING_BINARY OUT_DIR [OTHER_RUNTIME]}
timing=${2:?usage: range-bench-session.sh BUNDLE.tar.xz TIMING_BINARY OUT_DIR [OTHER_RUNTIME]}
out=${3:?usage: range-bench-session.sh BUNDLE.tar.xz TIMING_BINARY OUT_DIR [OTHER_RUNTIME]}
other=${4:-}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
root=/tmp/tune-range-session
rm -rf "$root" && mkdir -p "$root"
tar -C "$root" -xJf "$bundle_tar" || exit 1
bundle=$root/tune-bundle
export PATH=$bundle/bin:$PATH # tune-compile links with the bundle's ld.lld
lscpu >"$out/machine.txt" 2>&1
compare=()
if [ -n "$other" ]; then
  compare=(--compare-runtime "$(realpath "$other")")
fi
read -r -a extra <<<"${TUNE_RANGE_ARGS:-}"
timeout "${TUNE_RANGE_SESSION_S:-520}" python3 "$repo/bench/range_dispatch.py" --build "$bundle" \
  --timing-binary "$(realpath "$timing")" --keep "$root/work" --explain "${compare[@]}" \
  "${extra[@]}" >"$out/range.txt" 2>&1
rc=$?
cp "$root/work/librange.h" "$out/" 2>/dev/null
echo "range bench: rc $rc"
exit "$rc"

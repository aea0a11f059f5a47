#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with Debian's clang-19 into ./build-fuzz and runs each
# for SECONDS (default 20) on a copy of its corpus (tests/fuzz/corpus/<name>, never grown here),
# with its dictionary (tests/fuzz/<name>.dict) when there is one. Exits non-zero when any
# fuzzer crashes (an abort, ASan, UBSan, a leak, a timeout or running out of memory), after
# printing the crashing input's path; rerun one with `build-fuzz/fuzz/<name>_fuzzer FILE`.
# Usage: scripts/fuzz.sh [SECONDS]     (TUNE_FUZZ_BUILD_DIR overrides build-fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-20}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS] (a positive number of seconds per fuzzer)" >&2
  exit 2
fi
start=$(date +%s)

# The project's dependencies and clang (libFuzzer is in clang's runtime package), which only this
# script needs.
scripts/install-deps.sh clang-19 libclang-rt-19-dev

# A build of its own: the libraries the fuzzers link are compiled with coverage and sanitizers,
# so only the fuzzers (target tune_fuzzers) are built there. -O1 and line tables keep the build
# short on two cores and the stack traces readable.
build_dir=${TUNE_FUZZ_BUILD_DIR:-build-fuzz}
flags="-O1 -gline-tables-only"
CC=clang-19 CXX=clang++-19 cmake -S . -B "$build_dir" -G Ninja \
  -DTUNE_BUILD_FUZZERS=ON -DTUNE_BUILD_TESTS=OFF -DTUNE_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld >/dev/null
cmake --build "$build_dir" --target tune_fuzzers -j "$(nproc)"
built=$(date +%s)
echo "fuzz: build took $((built - start)) s"

# Every corpus has a fuzzer and every fuzzer a corpus.
corpora=tests/fuzz/corpus
names=()
for dir in "$corpora"/*/; do
  names+=("$(basename "$dir")")
done
for bin in "$build_dir"/fuzz/*_fuzzer; do
  name=$(basename "$bin" _fuzzer)
  if [ ! -d "$corpora/$name" ]; then
    echo "fuzz: $bin has no corpus $corpora/$name" >&2
    exit 1
  fi
done

runs=$build_dir/fuzz-runs
rm -rf "$runs"
failed=()
summary=()
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
for name in "${names[@]}"; do
  bin=$build_dir/fuzz/${name}_fuzzer
  if [ ! -x "$bin" ]; then
    echo "fuzz: no fuzzer $bin for $corpora/$name" >&2
    exit 1
  fi
  work=$runs/$name
  mkdir -p "$work/artifacts"
  cp -r "$corpora/$name" "$work/corpus"
  args=(-max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1
    -artifact_prefix="$work/artifacts/")
  if [ -f "tests/fuzz/$name.dict" ]; then
    args+=(-dict="tests/fuzz/$name.dict")
  fi
  echo "fuzz: $name for ${seconds} s"
  status=0
  "$bin" "${args[@]}" "$work/corpus" >"$work/log.txt" 2>&1 || status=$?
  runs_done=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log.txt" | tail -1)
  per_sec=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log.txt" | tail -1)
  summary+=("$(printf '%-24s %10s runs %8s/s' "$name" "${runs_done:-?}" "${per_sec:-?}")")
  if [ "$status" -ne 0 ]; then
    echo "fuzz: $name FAILED (exit $status); the end of $work/log.txt:" >&2
    tail -n 40 "$work/log.txt" >&2
    for input in "$work"/artifacts/*; do
      if [ -f "$input" ]; then
        echo "fuzz: $name: crashing input $input (rerun: $bin $input)" >&2
      fi
    done
    failed+=("$name")
  fi
done

echo "fuzz: ${#names[@]} fuzzers, ${seconds} s each:"
printf '  %s\n' "${summary[@]}"
echo "fuzz: took $(($(date +%s) - start)) s (build $((built - start)) s)"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi

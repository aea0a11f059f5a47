#!/usr/bin/env bash
# Installs dependencies (Debian 12 packages) and builds tune into ./build (Release-with-debug).
# Usage: scripts/build.sh [--programs "NAME..."] [extra cmake args...]
#   (default)          every package, the test tools included (install-deps.sh), and every
#                      target, the tests included: what scripts/test.sh runs.
#   --programs "A B"   only what building and running tune need (install-deps.sh --build-only:
#                      no GoogleTest, browser, promtool, node or npm packages), configured without
#                      the tests (TUNE_BUILD_TESTS=OFF), and only the named targets and what they
#                      depend on: what scripts/demo.sh runs.
# TUNE_BUILD_DIR names another build folder. One folder serves both: each call configures the
# tests on or off as it needs, and ninja rebuilds nothing that did not change.
set -euo pipefail
cd "$(dirname "$0")/.."
programs=()
if [ "${1:-}" = --programs ]; then
  read -r -a programs <<<"${2:?usage: scripts/build.sh --programs \"NAME...\" [cmake args...]}"
  shift 2
fi
build_dir=${TUNE_BUILD_DIR:-build}
jobs=$(nproc)
if [ "${#programs[@]}" -gt 0 ]; then
  scripts/install-deps.sh --build-only
  cmake -S . -B "$build_dir" -G Ninja -DTUNE_BUILD_TESTS=OFF "$@" >/dev/null
  cmake --build "$build_dir" -j "$jobs" --target "${programs[@]}"
else
  scripts/install-deps.sh
  cmake -S . -B "$build_dir" -G Ninja -DTUNE_BUILD_TESTS=ON "$@" >/dev/null
  cmake --build "$build_dir" -j "$jobs"
fi

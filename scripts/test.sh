#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test (unit, golden, e2e, fault; gpu tests skip
# without a GPU). Usage: scripts/test.sh [ctest args...], e.g. scripts/test.sh -L unit
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
build_dir=${TUNE_BUILD_DIR:-build}
start=$(date +%s)
ctest --test-dir "$build_dir" --output-on-failure --timeout 600 -j "$(nproc)" "$@"
echo "test suite took $(( $(date +%s) - start )) s"

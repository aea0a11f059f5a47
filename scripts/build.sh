#!/usr/bin/env bash
# Installs dependencies (Debian 12 packages) and builds tune into ./build (Release-with-debug).
# Usage: scripts/build.sh [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build_dir=${TUNE_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja "$@" >/dev/null
jobs=$(nproc)
cmake --build "$build_dir" -j "$jobs"

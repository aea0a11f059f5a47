#!/usr/bin/env bash
# InstalledPackageBuildsAndRunsATunedKernel: `cmake --install` of a build into a temporary
# prefix, moved elsewhere afterwards (the installation is relocatable), then a downstream project
# (consumer/) configured against it with CMAKE_PREFIX_PATH alone: find_package(tune),
# tune_add_kernel_library run by the installed tune-compile (which finds the OpenBLAS shim in the
# installation's lib/), and its program checks the kernels' answers.
#
#   tests/install/install_test.sh BUILD_DIR
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
build=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tune-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "install_test: FAILED: $*" >&2; exit 1; }
run() {  # run LOG COMMAND...: the command's output only when it fails
  local log=$work/$1.log
  shift
  "$@" >"$log" 2>&1 || { local rc=$?; cat "$log" >&2; fail "$* (exit $rc)"; }
}

run install cmake --install "$build" --prefix "$work/stage"
mv "$work/stage" "$work/prefix"
prefix=$work/prefix

for f in bin/tune-daemon bin/tune-server bin/tune-client bin/tune-compile lib/libtune_gpurt.so \
  lib/libtune_openblas.so lib/cmake/tune/tuneConfig.cmake lib/cmake/tune/tuneConfigVersion.cmake \
  lib/cmake/tune/TuneKernels.cmake; do
  [[ -e $prefix/$f ]] || fail "the installation has no $f"
done
for program in tune-daemon tune-server tune-client tune-compile; do
  run "$program" env -u TUNE_RUNTIME_DIR "$prefix/bin/$program" --help
done

# Nothing but the prefix: no tune-compile on PATH, no runtime folder from the environment.
consumer=$work/consumer
run configure env -u TUNE_RUNTIME_DIR PATH=/usr/local/bin:/usr/bin:/bin \
  cmake -S "$here/consumer" -B "$consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix"
grep -q "^TUNE_COMPILE_EXECUTABLE:FILEPATH=$prefix/bin/tune-compile$" "$consumer/CMakeCache.txt" ||
  fail "find_package(tune) did not pick $prefix/bin/tune-compile: $(grep TUNE_COMPILE "$consumer/CMakeCache.txt")"
run build env -u TUNE_RUNTIME_DIR PATH=/usr/local/bin:/usr/bin:/bin cmake --build "$consumer"

# The kernel library links the OpenBLAS shim of the installation, found through its RUNPATH.
library=$consumer/consumer_kernels/libconsumer_kernels.so
runpath=$(readelf -d "$library" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
[[ ":$runpath:" == *":$prefix/lib:"* ]] || fail "$library: RUNPATH '$runpath' lacks $prefix/lib"
readelf -d "$library" | grep -q 'NEEDED.*\[libtune_openblas.so\]' || fail "$library does not link libtune_openblas.so"

output=$("$consumer/consumer" 2>&1) || fail "the consumer program failed: $output"
echo "$output"
echo "install_test: OK ($prefix)"

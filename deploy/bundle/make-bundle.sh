#!/usr/bin/env bash
# Builds tune in its relocatable mode (-DTUNE_LLVM_STATIC=ON, in build-bundle/) and packs a bundle
# for hosts without package access: OUT_DIR/tune-bundle/{bin,lib,share/tune} and
# OUT_DIR/tune-bundle.tar.xz (default OUT_DIR: bundle/, git-ignored).
#
#   bin/   tune-* programs, ld.lld, the programs of ctest tests labelled gpu, and the programs
#          named in deploy/bundle/gpu-tests.txt
#   lib/   tune's shared libraries and runtime shims (where tune-server --libs and tune-compile
#          output look for them: lib/ beside bin/), the test libraries of
#          deploy/bundle/gpu-test-libs.txt, and every non-system library they need
#   share/tune/gpu-tests.tsv   how to run the gpu tests (scripts/gpu-session.sh reads it)
#
# Every ELF gets RUNPATH $ORIGIN/../lib (copied libraries: $ORIGIN) and is stripped. Left to the
# host: glibc's libraries and libstdc++/libgcc_s (the host's are newer, and CUDA's libraries
# loaded later need them). Programs that need the CPU libraries of deploy/bundle/cpu-libs.txt
# (OpenBLAS, oneDNN: ~80 MB) are left out unless TUNE_BUNDLE_CPU_LIBS=1.
#
# Environment: TUNE_BUNDLE_BUILD_DIR (build-bundle), TUNE_BUNDLE_JOBS (nproc),
# TUNE_BUNDLE_TEST_LABEL (gpu), TUNE_BUNDLE_CPU_LIBS (0), XZ_OPT (-9 -T0),
# TUNE_BUNDLE_LLVM_STATIC (1). With TUNE_BUNDLE_LLVM_STATIC=0 the build is the normal one (each
# program links LLVM's static components itself; -DTUNE_BUILD_LD_LLD=ON adds only ld.lld), so
# TUNE_BUNDLE_BUILD_DIR=build packs an existing build without rebuilding it: larger programs,
# no time spent on a second build. TUNE_BUNDLE_PROGRAMS ("tune-daemon tune-server ...")
# keeps only the programs named (ld.lld is always kept): a smaller bundle for one job.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
out_dir=$(realpath -m "${1:-bundle}")
build_dir=$(realpath -m "${TUNE_BUNDLE_BUILD_DIR:-build-bundle}")
jobs=${TUNE_BUNDLE_JOBS:-$(nproc)}
label=${TUNE_BUNDLE_TEST_LABEL:-gpu}
cpu_libs=${TUNE_BUNDLE_CPU_LIBS:-0}
llvm_static=$([ "${TUNE_BUNDLE_LLVM_STATIC:-1}" = 0 ] && echo OFF || echo ON)

for tool in patchelf readelf strip python3 xz; do
  command -v "$tool" >/dev/null || { echo "make-bundle: $tool is missing (scripts/install-deps.sh)" >&2; exit 1; }
done

# --- build ------------------------------------------------------------------------------------
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build_dir" -G Ninja -DTUNE_LLVM_STATIC="$llvm_static" -DTUNE_BUILD_LD_LLD=ON \
  "${launcher[@]}" >/dev/null
ninja -C "$build_dir" -j "$jobs"
linker=$build_dir/bin/ld.lld
[ -x "$linker" ] || echo "make-bundle: warning: no ld.lld built (liblld-19-dev)" >&2

# --- collect ----------------------------------------------------------------------------------
stage=$out_dir/tune-bundle
rm -rf "$stage" "$out_dir/tune-bundle.tar.xz"
mkdir -p "$stage/bin" "$stage/lib" "$stage/share/tune"

is_elf() { [ -f "$1" ] && [ "$(head -c4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

# The gpu tests: ctest's own list (discovered gtest cases carry their labels), one line per
# binary: NAME<TAB>gtest<TAB>BINARY<TAB>FILTER or NAME<TAB>program<TAB>BINARY<TAB>ARGS...
ctest --test-dir "$build_dir" -L "^${label}\$" --show-only=json-v1 >"$stage/share/tune/ctest.json"
python3 "$here/gpu_tests_manifest.py" "$stage/share/tune/ctest.json" "$build_dir" \
  "$here/gpu-tests.txt" >"$stage/share/tune/gpu-tests.tsv"
rm "$stage/share/tune/ctest.json"

programs=()
for f in "$build_dir"/bin/tune-*; do
  is_elf "$f" && programs+=("$f")
done
while IFS=$'\t' read -r _ _ binary _; do
  [ -n "$binary" ] && programs+=("$build_dir/bin/$binary")
done <"$stage/share/tune/gpu-tests.tsv"
if [ -n "${TUNE_BUNDLE_PROGRAMS:-}" ]; then
  wanted=" $TUNE_BUNDLE_PROGRAMS "
  kept=()
  for f in "${programs[@]}"; do
    [[ $wanted == *" $(basename "$f") "* ]] && kept+=("$f")
  done
  programs=("${kept[@]}")
fi
is_elf "$linker" && programs+=("$linker")

libraries=()
for f in "$build_dir"/lib/*.so*; do
  is_elf "$f" && libraries+=("$f")
done

# Libraries the host provides (glibc, the C++ runtime, the GPU driver and vendor libraries).
host_lib() {
  case "$1" in
    libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*.so.* | \
      libresolv.so.* | libutil.so.* | libstdc++.so.* | libgcc_s.so.* | linux-vdso.so.*) return 0 ;;
    libcuda.so.* | libcublas*.so.* | libcudnn*.so.* | libamdhip64.so.* | librocblas.so.* | \
      libhipblaslt.so.* | libMIOpen.so.*) return 0 ;;
  esac
  return 1
}
mapfile -t cpu_patterns < <(grep -v '^\s*#' "$here/cpu-libs.txt" | grep -v '^\s*$')
cpu_lib() {
  for p in "${cpu_patterns[@]}"; do
    # shellcheck disable=SC2053
    [[ $1 == $p ]] && return 0
  done
  return 1
}

# The non-host libraries an ELF needs, resolved on this machine (name<TAB>path per line).
needed_libs() {
  LD_LIBRARY_PATH="$build_dir/lib" ldd "$1" 2>/dev/null |
    awk '$2 == "=>" && $3 ~ /^\// {print $1 "\t" $3} $2 == "=>" && $3 == "not" {print $1 "\tNOTFOUND"}'
}

declare -A copied=()
skipped=()
add_elf() {  # add_elf FILE DEST_DIR KIND(own|dep)
  local file=$1 dest=$2 name line lib path
  name=$(basename "$file")
  local deps=()
  while IFS=$'\t' read -r lib path; do
    host_lib "$lib" && continue
    if [ "$path" = NOTFOUND ]; then
      # A library built by the tests themselves (a tune-compile'd kernel library beside its
      # test): the bundle's RUNPATH does not reach it in the build tree, so look for it there.
      path=$(find "$build_dir" -name "$lib" -type f -print -quit)
      if [ -z "$path" ]; then
        echo "make-bundle: $name needs $lib, which is not found here" >&2
        exit 1
      fi
    fi
    if [ "$cpu_libs" != 1 ] && cpu_lib "$lib"; then
      skipped+=("$name (needs $lib)")
      return 0
    fi
    deps+=("$lib"$'\t'"$path")
  done < <(needed_libs "$file")
  cp -L "$file" "$dest/$name"
  chmod u+w "$dest/$name"
  for line in "${deps[@]}"; do
    lib=${line%%$'\t'*}
    path=${line#*$'\t'}
    if [[ $path == "$build_dir"/lib/* ]]; then
      continue  # tune's own libraries are added as such
    fi
    if [ -z "${copied[$lib]:-}" ] && [ ! -e "$stage/lib/$lib" ]; then
      copied[$lib]=$path
      cp -L "$path" "$stage/lib/$lib"
      chmod u+w "$stage/lib/$lib"
      patchelf --set-rpath '$ORIGIN' "$stage/lib/$lib"
    fi
  done
}

for f in "${libraries[@]}"; do
  [ -L "$f" ] && continue  # versioned symlinks: the file itself is copied under its own name
  add_elf "$f" "$stage/lib" own
done
for f in "${programs[@]}"; do
  add_elf "$f" "$stage/bin" own
done
# Shared objects that the gpu tests open at run time (test data, not linked: found in lib/ by
# BuiltOrBundled, tests/rpc_server/test_support.h), named in deploy/bundle/gpu-test-libs.txt.
while read -r lib; do
  path=$(find "$build_dir" -name "$lib" -type f -print -quit)
  if [ -z "$path" ]; then
    echo "make-bundle: the gpu tests open $lib (gpu-test-libs.txt), which $build_dir lacks" >&2
    exit 1
  fi
  add_elf "$path" "$stage/lib" own
done < <(grep -v '^\s*#' "$here/gpu-test-libs.txt" | grep -v '^\s*$')
# Symlinks of tune's own libraries (libfoo.so -> libfoo.so.1) stay symlinks.
for f in "$build_dir"/lib/*.so*; do
  if [ -L "$f" ] && [ -e "$stage/lib/$(basename "$(readlink -f "$f")")" ]; then
    ln -sf "$(basename "$(readlink -f "$f")")" "$stage/lib/$(basename "$f")"
  fi
done
# gpu tests whose program was left out are dropped from the manifest too.
python3 - "$stage" <<'EOF'
import os, sys
stage = sys.argv[1]
path = os.path.join(stage, "share/tune/gpu-tests.tsv")
lines = [l for l in open(path) if l.strip()]
kept = [l for l in lines if os.path.exists(os.path.join(stage, "bin", l.split("\t")[2].strip()))]
open(path, "w").writelines(kept)
EOF

# tune's own ELFs: RUNPATH $ORIGIN/../lib whatever the build set (ld.lld included).
for f in "$stage"/bin/* "$stage"/lib/*; do
  [ -L "$f" ] && continue
  is_elf "$f" || continue
  if [ -z "${copied[$(basename "$f")]:-}" ]; then
    # patchelf blanks the old RUNPATH string with X's; a symbol name the linker stored as its
    # tail (`read` in ".../openblas-pthread") would be lost with it: refuse such a program.
    symbols=$(readelf --dyn-syms -W "$f" | awk 'NF >= 8 {print $8}')
    patchelf --set-rpath '$ORIGIN/../lib' "$f"
    if [ "$symbols" != "$(readelf --dyn-syms -W "$f" | awk 'NF >= 8 {print $8}')" ]; then
      echo "make-bundle: setting the RUNPATH of $f overwrote dynamic symbol names that shared" \
        "its old RUNPATH string; link it without that RUNPATH" >&2
      exit 1
    fi
  fi
  strip --strip-unneeded "$f"
done

git_rev=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
{
  echo "tune bundle $git_rev, built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "programs: $(cd "$stage/bin" && ls | tr '\n' ' ')"
  echo "copied libraries: $(printf '%s ' "${!copied[@]}" | tr ' ' '\n' | sort | tr '\n' ' ')"
  echo "left out (CPU libraries; TUNE_BUNDLE_CPU_LIBS=1 keeps them): ${skipped[*]:-none}"
} >"$stage/share/tune/BUNDLE"
cat "$stage/share/tune/BUNDLE"

export XZ_OPT=${XZ_OPT:--9 -T0}
tar -C "$out_dir" -cJf "$out_dir/tune-bundle.tar.xz" tune-bundle
echo "make-bundle: $out_dir/tune-bundle.tar.xz: $(stat -c %s "$out_dir/tune-bundle.tar.xz") bytes" \
  "($(du -sh "$stage" | cut -f1) unpacked)"

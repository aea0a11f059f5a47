#!/usr/bin/env bash
# Checks a bundle made by make-bundle.sh: DIR is the folder holding tune-bundle.tar.xz (unpacked
# into a temporary folder first), the .tar.xz itself, or an unpacked tune-bundle/ folder.
#   - every ELF has a RUNPATH relative to $ORIGIN, and each library it needs is either in the
#     bundle (found through that RUNPATH) or one the host provides (glibc, libstdc++, libgcc_s);
#   - the dynamic loader (ldd, LD_LIBRARY_PATH unset) resolves everything, non-host libraries from
#     inside the bundle;
#   - tune-server, tune-daemon, tune-compile and tune-client --help and ld.lld --version run.
# Exit code 0 when all hold; every failure is printed.
set -uo pipefail
unset LD_LIBRARY_PATH
arg=${1:?usage: check-bundle.sh DIR|BUNDLE.tar.xz}
tmp=
cleanup() { [ -n "$tmp" ] && rm -rf "$tmp"; }
trap cleanup EXIT
if [ -f "$arg" ] || [ -f "$arg/tune-bundle.tar.xz" ]; then
  tarball=$arg
  [ -d "$arg" ] && tarball=$arg/tune-bundle.tar.xz
  tmp=$(mktemp -d)
  tar -C "$tmp" -xJf "$tarball" || { echo "check-bundle: cannot unpack $tarball"; exit 1; }
  bundle=$tmp/tune-bundle
else
  bundle=$(realpath "$arg")
fi
[ -d "$bundle/bin" ] && [ -d "$bundle/lib" ] || { echo "check-bundle: $bundle has no bin/ and lib/"; exit 1; }

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
host_lib() {
  case "$1" in
    libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*.so.* | \
      libresolv.so.* | libutil.so.* | libstdc++.so.* | libgcc_s.so.* | linux-vdso.so.*) return 0 ;;
  esac
  return 1
}
is_elf() { [ -f "$1" ] && [ "$(head -c4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

elves=0
for f in "$bundle"/bin/* "$bundle"/lib/*; do
  [ -L "$f" ] && continue
  is_elf "$f" || continue
  elves=$((elves + 1))
  rel=${f#"$bundle"/}
  dyn=$(readelf -d "$f" 2>/dev/null)
  runpath=$(sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p' <<<"$dyn")
  if [ -z "$runpath" ]; then
    fail "$rel has no RUNPATH"
  elif [[ $runpath != *'$ORIGIN'* ]]; then
    fail "$rel has RUNPATH $runpath, not relative to \$ORIGIN"
  fi
  dirs=()
  IFS=: read -ra parts <<<"$runpath"
  for d in "${parts[@]}"; do dirs+=("${d//\$ORIGIN/$(dirname "$f")}"); done
  while read -r lib; do
    [ -z "$lib" ] && continue
    if host_lib "$lib"; then
      continue
    fi
    found=0
    for d in "${dirs[@]}"; do
      [ -e "$d/$lib" ] && found=1 && break
    done
    [ $found = 1 ] || fail "$rel needs $lib, which is neither in the bundle (RUNPATH $runpath) nor a host library"
  done < <(sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' <<<"$dyn")
  while read -r line; do
    lib=$(awk '{print $1}' <<<"$line")
    path=$(awk '$2 == "=>" {print $3}' <<<"$line")
    if [[ $line == *"not found"* ]]; then
      fail "$rel: the loader does not find $lib"
    elif [ -n "$path" ] && ! host_lib "$lib" && [[ $(realpath "$path") != "$bundle"/* ]]; then
      fail "$rel: the loader takes $lib from $path, outside the bundle"
    fi
  done < <(ldd "$f" 2>&1 | grep '=>')
done
echo "check-bundle: $elves ELF files checked"

for prog in tune-server tune-daemon tune-compile tune-client; do
  if ! out=$("$bundle/bin/$prog" --help 2>&1); then
    fail "bin/$prog --help: $(tail -3 <<<"$out")"
  fi
done
if [ -e "$bundle/bin/ld.lld" ]; then
  "$bundle/bin/ld.lld" --version >/dev/null 2>&1 || fail "bin/ld.lld --version does not run"
else
  fail "bin/ld.lld is missing (tune-daemon links kernel libraries with it)"
fi
if [ "$failures" -ne 0 ]; then
  echo "check-bundle: $failures failure(s)"
  exit 1
fi
echo "check-bundle: OK ($bundle)"

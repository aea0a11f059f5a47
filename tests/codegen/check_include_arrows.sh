#!/usr/bin/env bash
# The include arrows inside codegen/ run down only (codegen/README.md, "Rooms and arrows"): each
# file's #include "codegen/..." lines may name its own room and the rooms listed for it below.
# Prints every arrow that is not allowed and exits 1 when there is one.
#   check_include_arrows.sh <codegen folder>
set -euo pipefail
root=${1:?usage: check_include_arrows.sh <codegen folder>}

# room -> the rooms it may include (besides itself). Top-level files are rooms by their stem.
declare -A allowed=(
  [ir]=""
  [passes]="ir"
  [sim]="ir"
  [llvm]="ir"
  [templates]="ir"
  [plugins]="templates ir"
  [lower]="passes ir"
  [c_header]=""
  [dtype_support]="llvm"
  [gpu_library]="llvm ir"
  [compiler]="gpu_library c_header dtype_support lower templates llvm passes ir"
  [compiler_ranges]="compiler gpu_library c_header dtype_support lower templates llvm passes ir"
  [tools]="compiler gpu_library c_header dtype_support lower plugins templates llvm passes ir"
)

room_of() {  # path relative to codegen/ -> room
  local rel=$1
  if [[ $rel == */* ]]; then
    echo "${rel%%/*}"
  else
    local stem=${rel%%.*}
    echo "${stem}"
  fi
}

status=0
while IFS= read -r file; do
  rel=${file#"$root"/}
  room=$(room_of "$rel")
  if [[ -z ${allowed[$room]+set} ]]; then
    echo "$rel: room '$room' has no row in check_include_arrows.sh (and codegen/README.md)"
    status=1
    continue
  fi
  while IFS= read -r line; do
    target=${line#*\"codegen/}
    target=${target%%\"*}
    to=$(room_of "$target")
    if [[ $to == "$room" || " ${allowed[$room]} " == *" $to "* ]]; then
      continue
    fi
    echo "$rel: includes codegen/$target ($room -> $to is not an allowed arrow)"
    status=1
  done < <(grep -h '^#include "codegen/' "$file" || true)
done < <(find "$root" -type f \( -name '*.h' -o -name '*.cc' \) | sort)
exit $status

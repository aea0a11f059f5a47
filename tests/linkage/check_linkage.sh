#!/usr/bin/env bash
# Checks what a built binary links, from its ELF dynamic section (readelf -d) and its symbols
# (nm -C), so that a module boundary of DESIGN.md cannot erode unnoticed.
#   check_linkage.sh BINARY no-needed REGEX    no DT_NEEDED entry matches REGEX
#   check_linkage.sh BINARY needed REGEX       some DT_NEEDED entry matches REGEX (a control)
#   check_linkage.sh BINARY no-symbol REGEX    no symbol (defined or undefined) matches REGEX
#   check_linkage.sh BINARY symbol REGEX       some symbol matches REGEX (a control)
set -euo pipefail
binary=$1 mode=$2 pattern=$3
needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
symbols=$(nm -C "$binary" 2>/dev/null; nm -C -D "$binary" 2>/dev/null) || true
if [ -z "$needed" ] || [ -z "$symbols" ]; then
  echo "check_linkage: cannot read the NEEDED entries or symbols of $binary" >&2
  exit 1
fi
case $mode in
  no-needed)
    if hits=$(grep -E "$pattern" <<<"$needed"); then
      echo "$binary needs $hits (must not match /$pattern/)" >&2
      exit 1
    fi ;;
  needed)
    grep -qE "$pattern" <<<"$needed" || { echo "$binary: no NEEDED entry matches /$pattern/" >&2; exit 1; } ;;
  no-symbol)
    if hits=$(grep -E "$pattern" <<<"$symbols" | head -5); then
      echo "$binary has symbols matching /$pattern/, e.g.:" >&2
      echo "$hits" >&2
      exit 1
    fi ;;
  symbol)
    grep -qE "$pattern" <<<"$symbols" || { echo "$binary: no symbol matches /$pattern/" >&2; exit 1; } ;;
  *)
    echo "check_linkage: unknown mode $mode" >&2
    exit 2 ;;
esac
echo "$binary: $mode /$pattern/: ok"

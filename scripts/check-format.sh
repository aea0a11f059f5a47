#!/usr/bin/env bash
# Fails (exit 1, listing the files) when a git-tracked *.cc, *.h or *.c file is not formatted as
# .clang-format says with clang-format-19; exits 77 (a skip for ctest) when the checkout is not a
# git work tree or clang-format-19 is missing. Fix with: clang-format-19 -i FILE...
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format-19 >/dev/null; then
  echo "check-format: clang-format-19 not installed (scripts/install-deps.sh installs it)"
  exit 77
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "check-format: $(pwd) is not a git work tree"
  exit 77
fi
mapfile -d '' files < <(git ls-files -z -- '*.cc' '*.h' '*.c')
if ! report=$(clang-format-19 --dry-run -Werror "${files[@]}" 2>&1); then
  mapfile -t bad < <(grep -o '^[^:]*:[0-9]*:[0-9]*: error' <<<"$report" | cut -d: -f1 | sort -u)
  echo "check-format: not formatted with clang-format-19: ${bad[*]}"
  echo "fix with: clang-format-19 -i ${bad[*]}"
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"

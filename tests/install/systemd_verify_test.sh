#!/usr/bin/env bash
# SystemdUnitsPassSystemdAnalyzeVerify: the units of deploy/systemd, with their programs taken
# from BIN_DIR instead of /usr/local/bin, pass `systemd-analyze verify` without a word (an
# unknown key or a bad value is only a warning there); the worker's template as an instance.
# Needs no running systemd.
#
#   tests/install/systemd_verify_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 SOURCE_DIR BIN_DIR" >&2; exit 2; }
src=$(realpath "$1")
bin=$(realpath "$2")
fail() { echo "systemd_verify_test: FAILED: $*" >&2; exit 1; }
command -v systemd-analyze >/dev/null || fail "systemd-analyze is missing (scripts/install-deps.sh installs systemd)"
work=$(mktemp -d "${TMPDIR:-/tmp}/tune-systemd-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

units=()
for unit in "$src"/deploy/systemd/*.service; do
  name=$(basename "$unit")
  sed "s#/usr/local/bin/#$bin/#g" "$unit" >"$work/$name"
  # A template is verified as an instance of itself (systemd-analyze reads the template).
  units+=("$work/${name/@./@tuner-host.}")
done
[[ ${#units[@]} -ge 2 ]] || fail "found only ${#units[@]} units in deploy/systemd"
rc=0
output=$(systemd-analyze verify --man=no --generators=no "${units[@]}" 2>&1) || rc=$?
[[ $rc -eq 0 && -z $output ]] || fail "systemd-analyze verify (exit $rc):
$output"
echo "systemd_verify_test: OK (${#units[@]} units)"

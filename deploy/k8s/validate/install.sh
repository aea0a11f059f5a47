#!/usr/bin/env bash
# Installs the validator's npm packages (package-lock.json, exact versions) into node_modules/,
# so that validate.mjs runs with no network. Needs node and npm (scripts/install-deps.sh
# installs them, then runs this). Does nothing when node_modules/ already matches the lock.
set -euo pipefail
cd "$(dirname "$0")"
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is missing (scripts/install-deps.sh)" >&2; exit 1; }
done
stamp=node_modules/.tune-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
  echo "k8s validator: npm packages present"
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
echo "$want" >"$stamp"
echo "k8s validator: npm packages installed in $(pwd)/node_modules"

#!/usr/bin/env bash
# Installs the browser test's npm packages (puppeteer-core, exactly as package-lock.json says)
# into tests/web/node_modules, unless an install newer than the lock file is there. The browser
# is Debian's chromium (scripts/install-deps.sh): puppeteer-core downloads none.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null; then
  echo "tests/web/install.sh: npm not found; the browser test needs Node.js >= 20 with npm" >&2
  exit 1
fi
# npm ci writes node_modules/.package-lock.json last.
if [ node_modules/.package-lock.json -nt package-lock.json ]; then
  echo "tests/web/install.sh: node_modules up to date"
  exit 0
fi
npm ci --no-audit --no-fund

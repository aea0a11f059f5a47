#!/usr/bin/env bash
# Installs every build and run dependency of tune from Debian 12 packages.
# Usage: scripts/install-deps.sh [MORE_PACKAGES...]   (uses sudo when not root; scripts that need
# more than the build, e.g. fuzz.sh's clang, name those packages as arguments)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  llvm-19-dev lld-19 liblld-19-dev patchelf libzstd-dev zlib1g-dev libedit-dev libxml2-dev libffi-dev libncurses-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libsqlite3-dev sqlite3 libssl-dev
  libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev
  libcli11-dev nlohmann-json3-dev libxgboost-dev
  clang-format-19
  libopenblas-dev libdnnl-dev
  gnuplot-nox
  libcpp-httplib-dev prometheus chromium  # dashboard: HTTP server; promtool, browser for its tests
  python3-grpcio python3-protobuf
  nodejs systemd openssl  # deploy tests: k8s manifests' validator (node), systemd-analyze verify, make-dev-certs.sh
  "$@"
)
# npm for the test tools installed from the npm registry (tests/web, deploy/k8s/validate):
# Debian's, unless one is there already (NodeSource's nodejs bundles npm and conflicts with
# Debian's npm package).
if ! command -v npm >/dev/null; then
  packages+=(npm)
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The npm packages of the Kubernetes manifests' validator (exact versions from its lock file).
bash "$(dirname "$0")/../deploy/k8s/validate/install.sh"
# The npm packages of the dashboard's browser test (puppeteer-core, from its lock file).
bash "$(dirname "$0")/../tests/web/install.sh"

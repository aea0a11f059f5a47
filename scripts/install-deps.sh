#!/usr/bin/env bash
# Installs every build and run dependency of tune from Debian 12 packages.
# Usage: scripts/install-deps.sh [--build-only] [MORE_PACKAGES...]   (uses sudo when not root;
# scripts that need more than the build, e.g. fuzz.sh's clang, name those packages as arguments)
#   --build-only   what building and running tune need, without the test suite's tools (GoogleTest,
#                  the browser, promtool, node and the npm packages): the container image's build.
set -euo pipefail

build_only=0
if [ "${1:-}" = --build-only ]; then
  build_only=1
  shift
fi

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  llvm-19-dev lld-19 liblld-19-dev patchelf libzstd-dev zlib1g-dev libedit-dev libxml2-dev libffi-dev libncurses-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libsqlite3-dev sqlite3 libssl-dev
  libspdlog-dev libfmt-dev
  libcli11-dev nlohmann-json3-dev libxgboost-dev
  libonnx-dev  # ONNX models (model_import/: tune-client and tune-compile --onnx)
  libopenblas-dev libdnnl-dev
  libcpp-httplib-dev  # the dashboard's HTTP server
  python3 python3-grpcio python3-protobuf  # the Python client (generated at build time)
  python3-onnx  # the Python client's ONNX reader (tune_client.onnx_model)
  openssl  # deploy/tls/make-dev-certs.sh
  "$@"
)
if [ "$build_only" = 0 ]; then
  packages+=(
    libgtest-dev libgmock-dev
    clang-format-19
    gnuplot-nox
    prometheus chromium  # the dashboard's tests: promtool, and the browser
    nodejs systemd  # deploy tests: k8s manifests' validator (node), systemd-analyze verify
    curl  # tests/install/default_command_test.sh asks the shipped daemon for its health by HTTPS
  )
  # npm for the test tools installed from the npm registry (tests/web, deploy/k8s/validate):
  # Debian's, unless one is there already (NodeSource's nodejs bundles npm and conflicts with
  # Debian's npm package).
  if ! command -v npm >/dev/null; then
    packages+=(npm)
  fi
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

if [ "$build_only" = 1 ]; then
  exit 0
fi
# The npm packages of the Kubernetes manifests' validator (exact versions from its lock file).
bash "$(dirname "$0")/../deploy/k8s/validate/install.sh"
# The npm packages of the dashboard's browser test (puppeteer-core, from its lock file).
bash "$(dirname "$0")/../tests/web/install.sh"

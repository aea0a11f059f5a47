#!/usr/bin/env bash
# ShippedDaemonCommandLinesStartAndServeHttps: the daemon's command lines as deploy/ ships them
# (the image's ENTRYPOINT and CMD, deploy/k8s's tune-daemon container) run against the built
# tune-daemon and start: the health check passes over mutual TLS and the dashboard answers over
# HTTPS with the daemon's certificate. Only what a test host needs is changed: the image's paths
# (/var/lib/tune, /etc/tune/tls) point into a scratch directory holding development
# certificates, the ports 7070 and 8080 are free ones, and --port-file is added to know when it
# serves. Every other flag, the addresses 0.0.0.0 among them, is the shipped one.
#
#   tests/install/default_command_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 SOURCE_DIR BIN_DIR" >&2; exit 2; }
src=$(realpath "$1")
bin=$(realpath "$2")
fail() { echo "default_command_test: FAILED: $*" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tune-default-command-test.XXXXXX")
daemon_pid=
stop_daemon() {
  if [[ -n $daemon_pid ]]; then
    kill -TERM "$daemon_pid" 2>/dev/null || true
    wait "$daemon_pid" 2>/dev/null || true
    daemon_pid=
  fi
}
trap 'stop_daemon; rm -rf "$work"' EXIT
joined() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1"; }  # continuation lines joined

bash "$src/deploy/tls/make-dev-certs.sh" "$work/tls" >/dev/null
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The image: ENTRYPOINT ["tini", "--", "tune-daemon"] and CMD [...], as the engine runs them.
dockerfile=$src/deploy/container/Dockerfile
entry=$(joined "$dockerfile" | sed -n 's/^ENTRYPOINT //p' | tr -d '[],"')
cmd=$(joined "$dockerfile" | sed -n 's/^CMD //p' | tr -d '[],"')
[[ ${entry##* } == tune-daemon ]] || fail "the image's entrypoint ($entry) does not end in tune-daemon"
command -v node >/dev/null || fail "node is missing (scripts/install-deps.sh installs it)"
validator=$src/deploy/k8s/validate
[[ -d $validator/node_modules/kubernetes-models ]] ||
  fail "the validator's npm packages are missing: run $validator/install.sh (scripts/install-deps.sh does)"
k8s=$(node "$validator/validate.mjs" "$src/deploy/k8s" --print-commands 2>"$work/k8s.err" |
  grep '^tune-daemon ') || { cat "$work/k8s.err" >&2; fail "deploy/k8s has no tune-daemon container"; }

# run WHERE ARGS...: the shipped arguments with the test host's paths and ports.
run() {
  local where=$1
  shift
  local grpc http
  grpc=$(free_port)
  http=$(free_port)
  local args=()
  for word in "$@"; do
    word=${word//\/var\/lib\/tune/$work/data-$where}
    word=${word//\/etc\/tune\/tls/$work/tls}
    word=${word//:7070/:$grpc}
    word=${word//:8080/:$http}
    args+=("$word")
  done
  mkdir -p "$work/data-$where"
  rm -f "$work/$where.port"
  echo "$where: tune-daemon ${args[*]}"
  "$bin/tune-daemon" "${args[@]}" --port-file "$work/$where.port" >"$work/$where.log" 2>&1 &
  daemon_pid=$!
  until [[ -s $work/$where.port ]]; do
    if ! kill -0 "$daemon_pid" 2>/dev/null; then
      local rc=0
      wait "$daemon_pid" || rc=$?
      daemon_pid=
      cat "$work/$where.log" >&2
      fail "$where: the shipped tune-daemon command line exits $rc instead of serving"
    fi
    sleep 0.05
  done
  env -u TUNE_TOKEN PATH="$bin:$PATH" TUNE_HEALTH_ADDRESS="127.0.0.1:$grpc" \
    TUNE_TLS_DIR="$work/tls" bash "$src/deploy/container/tune-healthcheck" ||
    fail "$where: the health check does not pass"
  # The dashboard over HTTPS with the daemon's certificate (dev certificates name localhost).
  local health
  health=$(curl --silent --show-error --fail --cacert "$work/tls/ca.pem" \
    "https://localhost:$http/api/health") || fail "$where: no HTTPS answer on port $http"
  [[ $health == *'"SERVING"'* ]] || fail "$where: /api/health says $health"
  if curl --silent --max-time 10 "http://localhost:$http/api/health" >/dev/null 2>&1; then
    fail "$where: port $http answers plain HTTP too"
  fi
  stop_daemon
  echo "$where: serves gRPC over mutual TLS and the dashboard over HTTPS"
}

read -ra words <<<"$cmd"
run image "${words[@]}"
read -ra words <<<"$k8s"
run k8s "${words[@]:1}"
echo "default_command_test: OK"

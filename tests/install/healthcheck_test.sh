#!/usr/bin/env bash
# ContainerHealthCheckPassesOnlyWhileTheDaemonAnswers: the image's health check
# (deploy/container/tune-healthcheck) against real daemons on 127.0.0.1: healthy while a
# plaintext daemon serves, whether it refuses the call for want of a token or not, unhealthy
# once it has stopped; with mutual TLS (certificates from
# deploy/tls/make-dev-certs.sh), healthy when it presents the daemon's certificate and unhealthy
# without one, which the daemon refuses.
#
#   tests/install/healthcheck_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 SOURCE_DIR BIN_DIR" >&2; exit 2; }
src=$(realpath "$1")
bin=$(realpath "$2")
check=$src/deploy/container/tune-healthcheck
fail() { echo "healthcheck_test: FAILED: $*" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tune-health-test.XXXXXX")
daemon_pid=
stop_daemon() {
  if [[ -n $daemon_pid ]]; then
    kill -TERM "$daemon_pid" 2>/dev/null || true
    wait "$daemon_pid" 2>/dev/null || true
    daemon_pid=
  fi
}
trap 'stop_daemon; rm -rf "$work"' EXIT

# start_daemon NAME FLAGS...: a daemon on a free loopback port; sets $port once it serves.
start_daemon() {
  local name=$1
  shift
  rm -f "$work/$name.port"
  "$bin/tune-daemon" --listen 127.0.0.1:0 --port-file "$work/$name.port" --db "$work/$name.db" \
    "$@" >"$work/$name.log" 2>&1 &
  daemon_pid=$!
  until [[ -s $work/$name.port ]]; do
    kill -0 "$daemon_pid" 2>/dev/null || { cat "$work/$name.log" >&2; fail "tune-daemon ($name) exited"; }
    sleep 0.05
  done
  port=$(<"$work/$name.port")
}
# expect_health WANT(0|1) WHAT TLS_DIR [TOKEN_FILE]: runs the check against $port.
expect_health() {
  local rc=0
  env -u TUNE_TOKEN PATH="$bin:$PATH" TUNE_HEALTH_ADDRESS="127.0.0.1:$port" TUNE_TLS_DIR="$3" \
    TUNE_TOKEN_FILE="${4:-}" bash "$check" >"$work/check.out" 2>&1 || rc=$?
  [[ $rc -eq $1 ]] || { cat "$work/check.out" >&2; fail "$2: the health check exited $rc, expected $1"; }
}

start_daemon plain
expect_health 0 "plaintext daemon serving" "$work/no-tls"
# Tokens on (the log holds one, created on the daemon's host as the first token must be): a
# refusal is an answer too; with the token, a full call.
token=$("$bin/tune-daemon" token create --db "$work/plain.db" --name health --role read 2>/dev/null)
# The daemon sees a token made beside it within a second: wait for that.
for _ in $(seq 1 600); do
  rc=0
  "$bin/tune-client" --daemon "127.0.0.1:$port" jobs >/dev/null 2>&1 || rc=$?
  [[ $rc -eq 7 ]] && break
  sleep 0.05
done
[[ $rc -eq 7 ]] || fail "with tokens on, tune-client jobs without a token exited $rc, expected 7"
expect_health 0 "tokens on, no token" "$work/no-tls"
echo "$token" >"$work/token"
expect_health 0 "tokens on, a read token" "$work/no-tls" "$work/token"
stop_daemon
expect_health 1 "plaintext daemon stopped" "$work/no-tls"
grep -q "cannot reach tune-daemon" "$work/check.out" || { cat "$work/check.out" >&2; fail "no 'cannot reach' message"; }

bash "$src/deploy/tls/make-dev-certs.sh" "$work/tls" >/dev/null
start_daemon tls --tls-cert "$work/tls/daemon.pem" --tls-key "$work/tls/daemon-key.pem" \
  --tls-ca "$work/tls/ca.pem"
expect_health 0 "mutual TLS, the daemon's certificate presented" "$work/tls"
mkdir "$work/ca-only"
cp "$work/tls/ca.pem" "$work/ca-only/"
expect_health 1 "mutual TLS, no client certificate" "$work/ca-only"
stop_daemon
echo "healthcheck_test: OK"

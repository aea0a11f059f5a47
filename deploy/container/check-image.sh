#!/usr/bin/env bash
# Builds the tune image and runs it the way deploy/README.md says, on this host's loopback:
#   1. the image is built from deploy/container/Dockerfile (skipped with --no-build);
#   2. a daemon container started with the image's own default command (no arguments: gRPC on
#      0.0.0.0:7070 with mutual TLS, the dashboard on 0.0.0.0:8080 over HTTPS, TLS from
#      deploy/tls/make-dev-certs.sh) starts, runs as the image's non-root user, and its health
#      check passes;
#   3. a worker container (entrypoint tune-server) registers with it over mutual TLS;
#   4. a client container (entrypoint tune-client) submits a small GEMM job and waits for it, and
#      `best` answers from the log; the daemon's /metrics counts the job's trials;
#   5. the daemon container is restarted: the job and its best are still in its volume.
# Exits 0 when every step passed and names the step that failed otherwise. Containers, the volume
# and the scratch directory are removed at the end; the image is kept.
#
#   deploy/container/check-image.sh [--no-build] [--image NAME]
#
# Environment: TUNE_CONTAINER_ENGINE (docker; podman works too), TUNE_ENGINE_FLAGS (global flags
# of the engine, e.g. "--storage-driver vfs --runtime runc"), TUNE_RUN_FLAGS (extra flags of
# `run` and `build`, e.g. ulimits a sandbox needs). Containers use the host's network, so nothing
# needs a bridge or published ports; the daemon listens where its default command says, so the
# host's ports 7070 and 8080 must be free.
set -euo pipefail
cd "$(dirname "$0")/../.."

image=tune:0.1.0
build=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --no-build) build=0 ;;
    --image)
      image=$2
      shift
      ;;
    *)
      echo "usage: $0 [--no-build] [--image NAME]" >&2
      exit 2
      ;;
  esac
  shift
done

read -r -a engine <<<"${TUNE_CONTAINER_ENGINE:-docker} ${TUNE_ENGINE_FLAGS:-}"
read -r -a run_flags <<<"${TUNE_RUN_FLAGS:-}"
step() { echo "== check-image: $*"; }
fail() {
  echo "check-image: FAILED: $*" >&2
  exit 1
}

if [[ $build == 1 ]]; then
  step "building $image"
  start=$(date +%s)
  build_flags=()
  # BuildKit reads Dockerfile.dockerignore beside the Dockerfile by itself; podman is told, and
  # asked for the Docker image format, the one that keeps HEALTHCHECK.
  if [[ $(basename "${engine[0]}") == podman ]]; then
    build_flags+=(--ignorefile deploy/container/Dockerfile.dockerignore --format docker)
  fi
  "${engine[@]}" build --network host "${run_flags[@]}" "${build_flags[@]}" \
    -f deploy/container/Dockerfile -t "$image" . || fail "the image did not build"
  echo "built in $(($(date +%s) - start)) s"
fi
"${engine[@]}" image inspect "$image" >/dev/null 2>&1 || fail "no image $image"
health=$("${engine[@]}" image inspect "$image" --format '{{json .Config.Healthcheck}}')
[[ $health == *tune-healthcheck* ]] || fail "the image declares no tune-healthcheck HEALTHCHECK"

scratch=$(mktemp -d)
name=tune-check-$$
cleanup() {
  "${engine[@]}" rm -f -v "$name-daemon" "$name-worker" >/dev/null 2>&1 || true
  "${engine[@]}" volume rm -f "$name-log" >/dev/null 2>&1 || true
  rm -rf "$scratch"
}
trap cleanup EXIT

# Development certificates; the container's user (uid 10001) must read its keys.
deploy/tls/make-dev-certs.sh "$scratch/tls" >/dev/null
chown -R 10001:10001 "$scratch/tls" 2>/dev/null || chmod a+r "$scratch/tls"/*.pem
# The ports of the image's default command (its CMD).
port=7070
http=8080
for p in $port $http; do
  python3 -c "import socket, sys; socket.socket().bind(('0.0.0.0', int(sys.argv[1])))" "$p" ||
    fail "port $p is taken on this host; the image's default command listens there"
done
tls=(--tls-ca /etc/tune/tls/ca.pem)
common=("${run_flags[@]}" --network host -v "$scratch/tls:/etc/tune/tls:ro")

step "daemon container with the image's default command: gRPC on :$port, HTTPS on :$http"
"${engine[@]}" volume create "$name-log" >/dev/null
"${engine[@]}" run -d --name "$name-daemon" "${common[@]}" -v "$name-log:/var/lib/tune" \
  "$image" >/dev/null
wait_healthy() {
  for _ in $(seq 1 120); do
    if "${engine[@]}" exec "$name-daemon" tune-healthcheck >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.5
  done
  "${engine[@]}" logs "$name-daemon" >&2 || true
  fail "the daemon's health check did not pass within 60 s"
}
wait_healthy
uid=$("${engine[@]}" exec "$name-daemon" id -u)
[[ $uid == 10001 ]] || fail "the daemon runs as uid $uid, not the image's user 10001"
echo "healthy, running as uid $uid"

step "worker container"
"${engine[@]}" run -d --init --name "$name-worker" "${common[@]}" --entrypoint tune-server \
  "$image" --daemon "127.0.0.1:$port" "${tls[@]}" --tls-cert /etc/tune/tls/worker.pem \
  --tls-key /etc/tune/tls/worker-key.pem >/dev/null
client() {
  "${engine[@]}" run --rm "${common[@]}" --entrypoint tune-client "$image" \
    --daemon "127.0.0.1:$port" "${tls[@]}" --tls-cert /etc/tune/tls/client.pem \
    --tls-key /etc/tune/tls/client-key.pem "$@"
}
registered=0
for _ in $(seq 1 60); do
  if client --json workers 2>/dev/null | grep -q '"device_key"'; then
    registered=1
    break
  fi
  sleep 0.5
done
[[ $registered == 1 ]] || {
  "${engine[@]}" logs "$name-worker" >&2 || true
  fail "the worker did not register"
}
client workers

workload=gemm:M=64,N=64,K=64
target="llvm -mcpu=native -threads=1"
step "client container: $workload, 8 trials"
client submit --workload "$workload" --target "$target" --trials 8 --wait ||
  fail "the job did not finish"
client best --workload "$workload" --target "$target" || fail "no best config for $workload"
recorded=$(python3 - "$http" "$scratch/tls/ca.pem" <<'EOF'
import ssl, sys, urllib.request
context = ssl.create_default_context(cafile=sys.argv[2])
text = urllib.request.urlopen(f"https://localhost:{sys.argv[1]}/metrics", timeout=10,
                              context=context).read().decode()
print(int(sum(float(l.rsplit(" ", 1)[1]) for l in text.splitlines()
              if l.startswith("tune_trials_total{"))))
EOF
) || fail "/metrics did not answer"
[[ $recorded -ge 8 ]] || fail "/metrics counts $recorded trials, expected at least 8"
echo "/metrics over HTTPS: $recorded trials"

step "daemon container restarted: the log survives in its volume"
"${engine[@]}" restart "$name-daemon" >/dev/null
wait_healthy
client jobs | grep -q "$workload" || fail "the job is gone after a restart"
client best --workload "$workload" --target "$target" >/dev/null ||
  fail "the best config is gone after a restart"

size=$("${engine[@]}" image inspect "$image" --format '{{.Size}}')
echo "check-image: OK ($image, $((size / 1000000)) MB)"

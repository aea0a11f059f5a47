#!/usr/bin/env bash
# DeployScriptsParseAndSlurmTasksDialTheDaemonOverTls: every shell script of deploy/ (and the
# Slurm batch script and the image's health check) passes `bash -n` and sets -uo pipefail (-e too, but in check-bundle.sh); the
# Slurm script, run as array task 3 with a stand-in tune-server, starts one worker on the task's
# GPU (device 0) dialing the daemon with mutual TLS, a token file and --threads from Slurm, and
# refuses to start without the TLS files or a daemon address.
#
#   tests/install/deploy_scripts_test.sh SOURCE_DIR
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 SOURCE_DIR" >&2; exit 2; }
src=$(realpath "$1")
fail() { echo "deploy_scripts_test: FAILED: $*" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tune-deploy-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

mapfile -t scripts < <(find "$src/deploy" -path '*/node_modules' -prune -o -type f \
  \( -name '*.sh' -o -name '*.sbatch' -o -name tune-healthcheck \) -print | sort)
[[ ${#scripts[@]} -ge 3 ]] || fail "found only ${#scripts[@]} scripts under deploy/"
for script in "${scripts[@]}"; do
  bash -n "$script" || fail "${script#"$src"/}: bash -n"
  # -e may be left out on purpose (check-bundle.sh reports every problem, not the first).
  grep -qE '^set -e?uo pipefail$' "$script" || fail "${script#"$src"/}: no 'set -euo pipefail' line"
done

# The Slurm script with a tune-server that prints its arguments, one per line.
sbatch_script=$src/deploy/slurm/tune-workers.sbatch
mkdir "$work/bin" "$work/tls"
printf '#!/usr/bin/env bash\nprintf "%%s\\n" "$@"\n' >"$work/bin/tune-server"
chmod +x "$work/bin/tune-server"
touch "$work/tls/ca.pem" "$work/tls/worker.pem" "$work/tls/worker-key.pem" "$work/token"
slurm_env=(SLURM_JOB_ID=1001 SLURM_ARRAY_JOB_ID=1000 SLURM_ARRAY_TASK_ID=3 SLURM_CPUS_PER_TASK=6
  TUNE_BIN="$work/bin" TUNE_TLS_DIR="$work/tls" TUNE_TOKEN_FILE="$work/token"
  TUNE_TLS_SERVER_NAME=tuner.example TUNE_CACHE_ROOT="$work/cache")
env "${slurm_env[@]}" bash "$sbatch_script" tuner-host:7070 >"$work/out" 2>&1 ||
  { cat "$work/out" >&2; fail "the Slurm script failed"; }
args=$(grep -v '^tune-workers:' "$work/out" | paste -sd' ')
host=$(hostname -s)
expected="--daemon tuner-host:7070 --device cuda:0 --name $host-1000_3"
expected+=" --cache-dir $work/cache/tune-artifacts-1000_3"
expected+=" --tls-ca $work/tls/ca.pem --tls-cert $work/tls/worker.pem --tls-key $work/tls/worker-key.pem"
expected+=" --threads 6 --tls-server-name tuner.example --token-file $work/token"
[[ $args == "$expected" ]] || fail "the Slurm script ran tune-server with
  $args
expected
  $expected"

rm "$work/tls/worker-key.pem"
rc=0
env "${slurm_env[@]}" bash "$sbatch_script" tuner-host:7070 >"$work/out" 2>&1 || rc=$?
if [[ $rc -ne 1 ]] || ! grep -q "worker-key.pem is missing" "$work/out"; then
  cat "$work/out" >&2
  fail "without worker-key.pem: exit $rc, expected 1 naming the file"
fi
rc=0
env "${slurm_env[@]}" bash "$sbatch_script" >"$work/out" 2>&1 || rc=$?
[[ $rc -eq 2 ]] || { cat "$work/out" >&2; fail "without a daemon address: exit $rc, expected 2"; }
echo "deploy_scripts_test: OK (${#scripts[@]} scripts)"

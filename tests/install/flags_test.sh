#!/usr/bin/env bash
# DeployFilesPassOnlyFlagsTheProgramsAccept: every --flag that deploy/ hands a tune program is
# one that the program's --help lists: the systemd units' ExecStart, the Kubernetes containers
# (validate.mjs --print-commands), the image's default command, the health check's tune-client
# call and the Slurm script's tune-server call (both run with stand-ins that print their
# arguments).
#
#   tests/install/flags_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 SOURCE_DIR BIN_DIR" >&2; exit 2; }
src=$(realpath "$1")
bin=$(realpath "$2")
fail() { echo "flags_test: FAILED: $*" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tune-flags-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
joined() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1"; }  # continuation lines joined

commands=()  # "WHERE<TAB>PROGRAM ARGS..."
for unit in "$src"/deploy/systemd/*.service; do
  while IFS= read -r line; do
    commands+=("${unit#"$src"/}	$line")
  done < <(joined "$unit" | sed -n 's/^ExecStart=//p')
done
command -v node >/dev/null || fail "node is missing (scripts/install-deps.sh installs it)"
node "$src/deploy/k8s/validate/validate.mjs" "$src/deploy/k8s" --print-commands >"$work/k8s" 2>"$work/k8s.err" ||
  { cat "$work/k8s.err" >&2; fail "deploy/k8s does not validate"; }
while IFS= read -r line; do
  commands+=("deploy/k8s	$line")
done <"$work/k8s"
dockerfile=$src/deploy/container/Dockerfile
entry=$(joined "$dockerfile" | sed -n 's/^ENTRYPOINT //p' | tr -d '[],"')
cmd=$(joined "$dockerfile" | sed -n 's/^CMD //p' | tr -d '[],"')
commands+=("deploy/container/Dockerfile	${entry##* } $cmd")

# The scripts, run with stand-ins for tune-server and tune-client.
mkdir "$work/bin" "$work/tls"
for program in tune-server tune-client; do
  printf '#!/usr/bin/env bash\necho "%s $*" >>"%s"\n' "$program" "$work/calls" >"$work/bin/$program"
  chmod +x "$work/bin/$program"
done
touch "$work/tls/"{ca,daemon,daemon-key,worker,worker-key}.pem "$work/token"
calls() {  # calls SCRIPT: the stand-ins' calls while SCRIPT ran
  while IFS= read -r line; do
    commands+=("$1	$line")
  done <"$work/calls"
  rm "$work/calls"
}
env SLURM_CPUS_PER_TASK=2 TUNE_BIN="$work/bin" TUNE_TLS_DIR="$work/tls" TUNE_TLS_SERVER_NAME=x \
  TUNE_TOKEN_FILE="$work/token" bash "$src/deploy/slurm/tune-workers.sbatch" host:7070 >/dev/null
calls deploy/slurm/tune-workers.sbatch
env PATH="$work/bin:$PATH" TUNE_HEALTH_ADDRESS=127.0.0.1:7070 TUNE_TLS_DIR="$work/tls" \
  TUNE_TOKEN_FILE="$work/token" bash "$src/deploy/container/tune-healthcheck"
calls deploy/container/tune-healthcheck

problems=()
checked=0
for entry in "${commands[@]}"; do
  where=${entry%%	*}
  read -ra words <<<"${entry#*	}"
  program=$(basename "${words[0]}")
  [[ -x $bin/$program ]] || fail "$where runs $program, which is not in $bin"
  [[ -f $work/$program.help ]] || "$bin/$program" --help >"$work/$program.help" 2>&1 ||
    fail "$bin/$program --help failed"
  helps=("$work/$program.help")
  if [[ $program == tune-client ]]; then  # and its subcommand's own flags
    for word in "${words[@]:1}"; do
      if [[ $word =~ ^[a-z]+$ ]]; then
        "$bin/$program" "$word" --help >"$work/$program.$word.help" 2>&1 ||
          fail "$bin/$program $word --help failed"
        helps+=("$work/$program.$word.help")
      fi
    done
  fi
  help=$work/help
  cat "${helps[@]}" >"$help"
  for word in "${words[@]:1}"; do
    [[ $word == --* ]] || continue
    flag=${word%%=*}
    checked=$((checked + 1))
    grep -qE -- "(^|[[:space:],])$flag([[:space:],=]|$)" "$help" ||
      problems+=("$where: $program has no flag $flag (see $program --help)")
  done
done
if [[ ${#problems[@]} -gt 0 ]]; then
  printf '%s\n' "${problems[@]}" | sort -u >&2
  fail "flags that the programs do not accept (above)"
fi
echo "flags_test: OK ($checked flags in ${#commands[@]} command lines)"

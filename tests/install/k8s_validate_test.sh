#!/usr/bin/env bash
# KubernetesManifestsValidateAgainstTheirSchemas: deploy/k8s passes deploy/k8s/validate
# (kustomization, the Kubernetes API schemas, unknown fields, references), offline; and a copy
# with a wrong type, a misspelt field and a mount of a missing volume fails, naming each.
#
#   tests/install/k8s_validate_test.sh SOURCE_DIR
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 SOURCE_DIR" >&2; exit 2; }
src=$(realpath "$1")
validator=$src/deploy/k8s/validate
fail() { echo "k8s_validate_test: FAILED: $*" >&2; exit 1; }
command -v node >/dev/null || fail "node is missing (scripts/install-deps.sh installs it)"
[[ -d $validator/node_modules/kubernetes-models ]] ||
  fail "the validator's npm packages are missing: run $validator/install.sh (scripts/install-deps.sh does)"
work=$(mktemp -d "${TMPDIR:-/tmp}/tune-k8s-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

node "$validator/validate.mjs" "$src/deploy/k8s" || fail "deploy/k8s does not validate (above)"

# A broken copy must fail, with each problem named.
mkdir "$work/k8s"
cp "$src"/deploy/k8s/*.yaml "$work/k8s/"
sed -i 's/^  replicas: 2$/  replicas: two/; s/^            - name: cache$/            - name: cahce/' \
  "$work/k8s/workers-cpu.yaml"
sed -i 's/^              containerPort: 8080$/              containerPrt: 8080/' "$work/k8s/daemon.yaml"
rc=0
node "$validator/validate.mjs" "$work/k8s" 2>"$work/errors" || rc=$?
[[ $rc -eq 1 ]] || { cat "$work/errors" >&2; fail "a broken copy validated (exit $rc), expected exit 1"; }
for expected in "/spec/replicas must be integer" "'\"containerPrt\"' does not exist in type" \
  "mounts volume cahce, which the pod does not have"; do
  grep -qF -- "$expected" "$work/errors" || { cat "$work/errors" >&2; fail "no error saying: $expected"; }
done
echo "k8s_validate_test: OK"
